"""The research examples (examples/vae.py, examples/bayesian_model.py) run with funcgraph
and, through their `build` functions, as the very same program with jax: with the same keys
the loss trajectories, the gradients and the trained parameters must agree."""
import importlib.util
import pathlib

import jax
import jax.numpy as jnp
import jax.scipy.special
import jax.scipy.stats
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
import funcgraph.scipy.special
import funcgraph.scipy.stats
from funcgraph import scipy as fsp

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


vae = _load("vae")
bayesian_model = _load("bayesian_model")


def _assert_trees_close(ours, theirs, rtol, atol):
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs),
                    strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def _numpy_tree(tree):
    return jax.tree_util.tree_map(np.asarray, tree)


# ----------------------------------------------------------------------------- VAE

def _vae_data():
    return np.asarray(vae.binary_data(fg.random.PRNGKey(1), n=32))


def test_vae_negative_elbo_and_gradient_match_jax():
    x = _vae_data()
    ours, theirs = vae.build(fg, fnp), vae.build(jax, jnp)
    params = _numpy_tree(theirs["init"](jax.random.PRNGKey(2)))
    _assert_trees_close(ours["init"](fg.random.PRNGKey(2)), params, 1e-6, 1e-7)
    key_ours, key_theirs = fg.random.PRNGKey(3), jax.random.PRNGKey(3)
    value, grads = fg.value_and_grad(ours["negative_elbo"])(params, key_ours, x)
    expected, expected_grads = jax.value_and_grad(theirs["negative_elbo"])(
        params, key_theirs, x)
    np.testing.assert_allclose(float(value), float(expected), rtol=1e-5)
    _assert_trees_close(grads, expected_grads, 1e-4, 1e-5)


def test_vae_training_matches_jax():
    x = _vae_data()
    params, losses = vae.build(fg, fnp)["train"](fg.random.PRNGKey(0), x, steps=15)
    expected_params, expected = vae.build(jax, jnp)["train"](jax.random.PRNGKey(0), x,
                                                            steps=15)
    np.testing.assert_allclose(losses, expected, rtol=1e-4, atol=1e-5)
    _assert_trees_close(params, expected_params, 1e-3, 1e-4)
    assert np.mean(losses[-5:]) < np.mean(losses[:5])


# ----------------------------------------------------------------------------- Bayesian model

def _counts():
    # The example's own data size: its main() (test_bayesian_example_main_runs) then
    # reuses the programs compiled here.
    return np.asarray(bayesian_model.synthetic_counts(fg.random.PRNGKey(4), n=200))


def _models():
    return (bayesian_model.build(fg, fnp, fsp),
            bayesian_model.build(jax, jnp, jax.scipy))


def test_bayesian_log_joint_matches_jax():
    y = _counts()
    ours, theirs = _models()
    pi, w, lam = np.float32(0.3), np.array([0.7, 0.3], np.float32), \
        np.array([1.5, 8.0], np.float32)
    for name in ("log_likelihood", "log_prior"):
        args = (y, pi, w, lam) if name == "log_likelihood" else (pi, w, lam)
        np.testing.assert_allclose(float(fg.jit(ours[name])(*args)),
                                   float(jax.jit(theirs[name])(*args)), rtol=1e-5)


def test_bayesian_rate_gradient_through_implicit_reparameterization_matches_jax():
    """The expected log-likelihood under q(lam) = Gamma(shape, rate): its gradient with
    respect to the shape exists only through the gamma sampler's implicit
    reparameterization."""
    y = _counts()
    pi, w = np.float32(0.2), np.array([0.6, 0.4], np.float32)
    shape, rate = np.array([2.0, 9.0], np.float32), np.array([1.0, 1.0], np.float32)

    def objective(fgm, model):
        def f(shape, rate, key):
            lam = fgm.random.gamma(key, shape, (4, 2)) / rate
            return fgm.numpy.mean(fgm.vmap(lambda l: model["log_likelihood"](y, pi, w, l))(lam))
        return fgm.jit(fgm.value_and_grad(f, argnums=(0, 1)))

    ours, theirs = _models()
    value, grads = objective(fg, ours)(shape, rate, fg.random.PRNGKey(7))
    expected, expected_grads = objective(jax, theirs)(shape, rate, jax.random.PRNGKey(7))
    np.testing.assert_allclose(float(value), float(expected), rtol=1e-5)
    _assert_trees_close(grads, expected_grads, 1e-4, 1e-4)
    assert np.all(np.abs(np.asarray(grads[0])) > 0)


@pytest.mark.slow
def test_bayesian_fit_matches_jax():
    y = _counts()
    ours, theirs = _models()
    params, losses = ours["fit"](fg.random.PRNGKey(6), y, steps=12)
    expected_params, expected = theirs["fit"](jax.random.PRNGKey(6), y, steps=12)
    # Each step is a jitted ELBO gradient: the same trajectory means the same gradients,
    # those of the shapes coming only through the implicit reparameterization of gamma.
    np.testing.assert_allclose(losses, expected, rtol=1e-4)
    _assert_trees_close(params, expected_params, 1e-4, 1e-4)
    start = _numpy_tree(theirs["init_params"]())
    assert not np.allclose(np.asarray(params["lam_shape"]), np.asarray(start["lam_shape"]))
    assert float(params["pi_a"]) != float(start["pi_a"])
    means = ours["posterior_means"](params)
    _assert_trees_close(means, theirs["posterior_means"](expected_params), 1e-4, 1e-4)


def test_bayesian_example_main_runs(capsys):
    """The example as a script: 150 Adam steps and its own asserts on the fit (run here
    rather than in a process of its own, where it would compile its programs again)."""
    bayesian_model.main()
    assert "posterior means:" in capsys.readouterr().out
