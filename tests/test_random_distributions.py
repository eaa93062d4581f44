"""funcgraph.random's distributions against jax.random: the same samples for the same key
(bit for bit where jax's computation is followed step by step, within a few ulps where a
factorization or contraction order may differ), jax's shapes and dtypes, the implicit
reparameterization gradient of gamma, jit and vmap, and the moments and (slow) KS
statistics of the distributions."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import random, special_math

F32 = np.float32
ALPHAS = np.array([0.3, 1.0, 2.5, 10.0], F32)
COV = np.array([[2, .5, 0], [.5, 1, .2], [0, .2, 1.]], F32)



def _slow(*case):
    """A case whose compile takes seconds (a gamma draw inside): run with the slow tests."""
    return pytest.param(*case, marks=pytest.mark.slow)


# name, positional parameters, keyword arguments
EXACT = [
    ("cauchy", (), {"shape": (5,)}),
    ("laplace", (), {"shape": (5,)}),
    ("logistic", (), {"shape": (2, 3)}),
    ("maxwell", (), {"shape": (5,)}),
    ("rademacher", (), {"shape": (7,)}),
    ("rademacher", (), {"shape": (4,), "dtype": np.float32}),
    ("pareto", (F32(2.0),), {"shape": (5,)}),
    ("weibull_min", (2.0, 1.5), {"shape": (4,)}),
    ("rayleigh", (1.5,), {"shape": (4,)}),
    ("wald", (np.array([0.5, 1.5], F32),), {}),
    ("geometric", (0.3,), {"shape": (6,)}),
    ("triangular", (0., 0.3, 1.), {"shape": (6,)}),
    ("lognormal", (0.5,), {"shape": (6,)}),
    ("gamma", (ALPHAS,), {}),
    _slow("gamma", (2.0,), {"shape": (3,)}),
    ("loggamma", (ALPHAS,), {}),
    ("beta", (2.0, np.array([0.5, 3.0], F32)), {}),
    ("dirichlet", (np.array([1., 2., .5], F32),), {"shape": (2,)}),
    _slow("chisquare", (3.0,), {"shape": (5,)}),
    _slow("f", (3.0, 4.0), {"shape": (5,)}),
    _slow("t", (3.0,), {"shape": (5,)}),
    _slow("generalized_normal", (1.5,), {"shape": (5,)}),
    _slow("ball", (3,), {"shape": (2,)}),
    ("poisson", (np.array([0.0, 0.5, 3., 20., 100.], F32),), {}),
    ("binomial", (np.array([5., 30., 100., 1000.], F32), np.array([.3, .5, .7, .2], F32)), {}),
    _slow("multinomial", (20., np.array([0.2, 0.3, 0.5], F32)), {}),
]

# Cholesky / QR / norm orders may differ from jax's by an ulp.
CLOSE = [
    ("double_sided_maxwell", (0.5, 2.0), {"shape": (4,)}),
    ("multivariate_normal", (np.zeros(3, F32), COV), {"shape": (4,)}),
    ("orthogonal", (3,), {"shape": (2,)}),
]


def _draw(module, name, key, args, kwargs):
    return np.asarray(getattr(module, name)(key, *args, **kwargs))


def _ids(cases):
    return [f"{(case.values if hasattr(case, 'values') else case)[0]}-{i}"
            for i, case in enumerate(cases)]


@pytest.mark.parametrize("name,args,kwargs", EXACT, ids=_ids(EXACT))
def test_same_samples_as_jax(name, args, kwargs):
    ours = _draw(random, name, random.PRNGKey(7), args, kwargs)
    theirs = _draw(jax.random, name, jax.random.PRNGKey(7), args, kwargs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("name,args,kwargs", CLOSE, ids=_ids(CLOSE))
def test_samples_within_ulps_of_jax(name, args, kwargs):
    ours = _draw(random, name, random.PRNGKey(3), args, kwargs)
    theirs = _draw(jax.random, name, jax.random.PRNGKey(3), args, kwargs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=2e-6)


def test_orthogonal_is_orthogonal():
    q = np.asarray(random.orthogonal(random.PRNGKey(0), 4, m=6))
    assert q.shape == (4, 6)
    np.testing.assert_allclose(q @ q.T, np.eye(4), atol=1e-5)


def test_key_helpers():
    key = random.PRNGKey(5)
    assert random.key_impl(key) == jax.random.key_impl(jax.random.PRNGKey(5))
    np.testing.assert_array_equal(random.clone(key), key)


@pytest.mark.parametrize("sampler", ["gamma", pytest.param("loggamma", marks=pytest.mark.slow)])
def test_gamma_gradient_matches_jax(sampler):
    def expectation(module, np_):
        return lambda a: np_.sum(getattr(module.random, sampler)(module.random.PRNGKey(1), a,
                                                                 (8, 4)))
    ours = fg.grad(expectation(fg, fnp))(ALPHAS)
    theirs = jax.grad(expectation(jax, jnp))(ALPHAS)
    np.testing.assert_allclose(ours, theirs, rtol=2e-4)


@pytest.mark.slow
def test_beta_and_dirichlet_gradients_match_jax():
    ours = fg.grad(lambda a: fnp.sum(random.beta(random.PRNGKey(2), a, 2.0)))(ALPHAS)
    theirs = jax.grad(lambda a: jnp.sum(jax.random.beta(jax.random.PRNGKey(2), a, 2.0)))(ALPHAS)
    np.testing.assert_allclose(ours, theirs, rtol=2e-4)
    alpha = np.array([0.5, 1.5, 3.0], F32)
    weights = np.array([1.0, -2.0, 0.5], F32)
    ours = fg.grad(lambda a: fnp.sum(random.dirichlet(random.PRNGKey(4), a) * weights))(alpha)
    theirs = jax.grad(lambda a: jnp.sum(jax.random.dirichlet(jax.random.PRNGKey(4), a)
                                        * weights))(alpha)
    np.testing.assert_allclose(ours, theirs, rtol=2e-4, atol=1e-6)


def test_random_gamma_grad_matches_jax_on_a_grid():
    a = np.repeat(np.array([0.05, 0.3, 1.0, 2.5, 10.0, 80.0], F32), 12)
    x = np.tile(np.geomspace(1e-3, 100, 12).astype(F32), 6)
    # jax's float32 kernel loses digits far below the mode of a large-a gamma; those
    # points are checked against float64 finite differences below.
    keep = (a < 50) | (x > a / 4)
    ours = np.asarray(special_math.random_gamma_grad(a[keep], x[keep]))
    theirs = np.asarray(jax.lax.random_gamma_grad(a[keep], x[keep]))
    np.testing.assert_allclose(ours, theirs, rtol=5e-4, atol=1e-30)


def test_random_gamma_grad_in_the_far_tail():
    special = pytest.importorskip("scipy.special")
    a, x, h = 80.0, np.array([1.519911, 4.328761, 12.0]), 1e-5
    dp_da = (special.gammainc(a + h, x) - special.gammainc(a - h, x)) / (2 * h)
    density = np.exp((a - 1) * np.log(x) - x - special.gammaln(a))
    ours = special_math.random_gamma_grad(np.full(3, a, F32), x.astype(F32))
    np.testing.assert_allclose(ours, -dp_da / density, rtol=2e-5)


@pytest.mark.slow
def test_gamma_gradient_is_the_analytic_one_in_expectation():
    # E[x] = a, so the reparameterized d E[x] / da is 1 (up to Monte Carlo error).
    grads = fg.grad(lambda a: fnp.mean(random.gamma(random.PRNGKey(0), a, (4000,))))(F32(2.5))
    assert abs(float(grads) - 1.0) < 0.05


def test_samplers_under_jit_and_vmap_match_jax():
    keys, jkeys = random.split(random.PRNGKey(3), 3), jax.random.split(jax.random.PRNGKey(3), 3)
    np.testing.assert_array_equal(
        fg.vmap(lambda k, a: random.gamma(k, a, (2,)))(keys, ALPHAS[:3, None]),
        jax.vmap(lambda k, a: jax.random.gamma(k, a, (2,)))(jkeys, ALPHAS[:3, None]))
    np.testing.assert_array_equal(
        fg.vmap(lambda k: random.poisson(k, 5.0, (3,)))(keys),
        jax.vmap(lambda k: jax.random.poisson(k, 5.0, (3,)))(jkeys))
    np.testing.assert_array_equal(
        fg.jit(lambda k, a: random.gamma(k, a))(random.PRNGKey(2), ALPHAS),
        jax.random.gamma(jax.random.PRNGKey(2), ALPHAS))
    np.testing.assert_array_equal(
        fg.jit(lambda k: random.laplace(k, (3,)))(random.PRNGKey(2)),
        jax.random.laplace(jax.random.PRNGKey(2), (3,)))


def test_bad_arguments():
    key = random.PRNGKey(0)
    with pytest.raises(ValueError, match="broadcast"):
        random.gamma(key, np.ones(3, F32), shape=(2,))
    with pytest.raises(ValueError, match="alpha.ndim"):
        random.dirichlet(key, 1.0)
    with pytest.raises(ValueError, match="method"):
        random.multivariate_normal(key, np.zeros(2), np.eye(2), method="lu")
    with pytest.raises(ValueError, match="cov.shape"):
        random.multivariate_normal(key, np.zeros(2), np.eye(3))
    with pytest.raises(ValueError, match="int dtype"):
        random.geometric(key, 0.5, dtype=np.float32)


# name, parameters, mean, variance (theory)
MOMENTS = [
    _slow("gamma", (F32(2.5),), 2.5, 2.5),
    _slow("beta", (F32(2.0), F32(3.0)), 0.4, 0.04),
    ("poisson", (F32(4.0),), 4.0, 4.0),
    ("poisson", (F32(30.0),), 30.0, 30.0),
    ("binomial", (F32(20.0), F32(0.3)), 6.0, 4.2),
    ("binomial", (F32(200.0), F32(0.4)), 80.0, 48.0),
    _slow("chisquare", (F32(3.0),), 3.0, 6.0),
    ("geometric", (F32(0.25),), 4.0, 12.0),
    ("laplace", (), 0.0, 2.0),
    ("logistic", (), 0.0, np.pi ** 2 / 3),
    ("rayleigh", (F32(1.5),), 1.5 * np.sqrt(np.pi / 2), (4 - np.pi) / 2 * 2.25),
    ("wald", (F32(2.0),), 2.0, 8.0),
    ("triangular", (F32(0.), F32(0.3), F32(1.)), 1.3 / 3, (1 + 0.09 - 0.3) / 18),
    ("maxwell", (), 2 * np.sqrt(2 / np.pi), 3 - 8 / np.pi),
]


@pytest.mark.parametrize("name,args,mean,var", MOMENTS, ids=_ids(MOMENTS))
def test_moments(name, args, mean, var):
    n = 20000
    x = np.asarray(getattr(random, name)(random.PRNGKey(11), *args, shape=(n,)), np.float64)
    # Five standard errors of the mean and (roughly) of the variance.
    assert abs(x.mean() - mean) < 5 * np.sqrt(var / n)
    assert abs(x.var() - var) < 5 * var * np.sqrt(2.0 / n) * 3


def test_multinomial_counts_sum_to_n_with_multinomial_means():
    p = np.array([0.1, 0.6, 0.3], F32)
    counts = np.asarray(random.multinomial(random.PRNGKey(0), 50., p, shape=(2000, 3)))
    np.testing.assert_array_equal(counts.sum(-1), 50.)
    np.testing.assert_allclose(counts.mean(0), 50 * p, atol=0.3)


# name, parameters, scipy.stats distribution
KS = [
    ("gamma", (F32(0.4),), ("gamma", (0.4,))),
    ("gamma", (F32(7.0),), ("gamma", (7.0,))),
    ("beta", (F32(0.5), F32(2.0)), ("beta", (0.5, 2.0))),
    ("t", (F32(4.0),), ("t", (4.0,))),
    ("f", (F32(5.0), F32(7.0)), ("f", (5.0, 7.0))),
    ("cauchy", (), ("cauchy", ())),
    ("pareto", (F32(3.0),), ("pareto", (3.0,))),
    ("lognormal", (F32(0.7),), ("lognorm", (0.7,))),
    ("weibull_min", (F32(1.0), F32(2.0)), ("weibull_min", (2.0,))),
    ("generalized_normal", (F32(3.0),), ("gennorm", (3.0,))),
]


@pytest.mark.slow
@pytest.mark.parametrize("name,args,reference", KS, ids=[k[0] for k in KS])
def test_kolmogorov_smirnov(name, args, reference):
    stats = pytest.importorskip("scipy.stats")
    x = np.asarray(getattr(random, name)(random.PRNGKey(5), *args, shape=(5000,)), np.float64)
    dist_name, dist_args = reference
    assert stats.kstest(x, dist_name, dist_args).pvalue > 1e-3
