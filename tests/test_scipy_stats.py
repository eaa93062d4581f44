"""funcgraph.scipy.stats against jax.scipy.stats: values and gradients on grids of points."""
import jax
import jax.scipy.stats as jst
import numpy as np
import pytest

import funcgraph as fg
from funcgraph.scipy import stats as fst

F32 = np.float32
LINE = np.linspace(-6, 6, 25).astype(F32)
POSITIVE = np.linspace(0.05, 12, 25).astype(F32)
UNIT = np.linspace(0.02, 0.98, 25).astype(F32)
COUNTS = np.arange(0, 12).astype(F32)

# module, function names, arguments (the first is differentiated), value rtol
CASES = [
    ("norm", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], (LINE, 0.5, 2.0), 2e-5),
    ("norm", ["ppf", "isf"], (UNIT, 0.5, 2.0), 2e-5),
    ("expon", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], (POSITIVE, 0.1, 1.5), 2e-5),
    ("expon", ["ppf"], (UNIT, 0.1, 1.5), 2e-5),
    ("uniform", ["logpdf", "pdf", "cdf"], (LINE, -1.1, 3.0), 1e-6),
    ("uniform", ["ppf"], (UNIT, -1.1, 3.0), 1e-6),
    ("laplace", ["logpdf", "pdf", "cdf"], (LINE, 0.5, 1.5), 2e-5),
    ("logistic", ["logpdf", "pdf", "cdf", "sf"], (LINE, 0.5, 1.5), 2e-5),
    ("logistic", ["ppf", "isf"], (UNIT, 0.5, 1.5), 2e-5),
    ("cauchy", ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"], (LINE, 0.5, 1.5), 2e-5),
    ("cauchy", ["ppf", "isf"], (UNIT, 0.5, 1.5), 2e-5),
    ("gamma", ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"], (POSITIVE, 2.5, 0.0, 1.5),
     5e-5),
    ("chi2", ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"], (POSITIVE, 3.0), 5e-5),
    ("beta", ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"], (UNIT, 2.0, 3.5), 5e-5),
    ("t", ["logpdf", "pdf"], (LINE, 3.0, 0.5, 1.5), 2e-5),
    ("pareto", ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"], (POSITIVE + 1, 2.5), 2e-5),
    ("pareto", ["ppf"], (UNIT, 2.5), 2e-5),
    ("vonmises", ["logpdf", "pdf"], (LINE / 2, 2.0), 2e-5),
    ("truncnorm", ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"], (LINE / 2, -1.0, 2.0),
     5e-5),
    ("poisson", ["logpmf", "pmf", "cdf"], (COUNTS, 3.5), 5e-5),
    ("bernoulli", ["logpmf", "pmf"], (np.array([0., 1.], F32), 0.3), 1e-6),
    ("bernoulli", ["cdf", "ppf"], (np.array([-0.5, 0., 0.5, 1.], F32), 0.3), 1e-6),
    ("binom", ["logpmf", "pmf"], (COUNTS, 10.0, 0.35), 5e-5),
    ("geom", ["logpmf", "pmf"], (COUNTS, 0.35), 2e-5),
]

# Gradient checks with respect to a shape parameter (the argument index given).
PARAM_GRADS = [
    ("gamma", "logpdf", (POSITIVE, 2.5), 1),
    ("gamma", "cdf", (POSITIVE, 2.5), 1),
    ("beta", "logpdf", (UNIT, 2.0, 3.5), 2),
    ("t", "logpdf", (LINE, 3.0), 1),
    ("poisson", "logpmf", (COUNTS, 3.5), 1),
    ("binom", "logpmf", (COUNTS, 10.0, 0.35), 2),
    ("vonmises", "logpdf", (LINE / 2, 2.0), 1),
]


def _cases():
    for module, names, args, rtol in CASES:
        for name in names:
            yield pytest.param(module, name, args, rtol, id=f"{module}.{name}")


def _finite(values):
    return np.where(np.isfinite(values), values, 0)


@pytest.mark.parametrize("module,name,args,rtol", list(_cases()))
def test_values_and_gradients_match_jax(module, name, args, rtol):
    ours = getattr(getattr(fst, module), name)
    theirs = getattr(getattr(jst, module), name)
    expected = np.asarray(theirs(*args))
    actual = np.asarray(ours(*args))
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=1e-7)
    if module in ("poisson", "bernoulli", "binom", "geom") and name != "ppf":
        return  # discrete in their first argument
    rest = args[1:]
    grad_ours = fg.vmap(fg.grad(lambda x: ours(x, *rest)))(args[0])
    grad_theirs = jax.vmap(jax.grad(lambda x: theirs(x, *rest)))(args[0])
    np.testing.assert_allclose(_finite(np.asarray(grad_ours)), _finite(np.asarray(grad_theirs)),
                               rtol=10 * rtol, atol=1e-5)


@pytest.mark.parametrize("module,name,args,argnum", PARAM_GRADS,
                         ids=[f"{m}.{n}" for m, n, _, _ in PARAM_GRADS])
def test_gradients_in_parameters_match_jax(module, name, args, argnum):
    def total(fn, np_):
        def f(*a):
            return np_.sum(fn(*a))
        return f
    ours = fg.grad(total(getattr(getattr(fst, module), name), fg.numpy), argnums=argnum)(*args)
    theirs = jax.grad(total(getattr(getattr(jst, module), name), jax.numpy),
                      argnums=argnum)(*args)
    np.testing.assert_allclose(ours, theirs, rtol=5e-4)


def test_multivariate_normal_matches_jax():
    cov = np.array([[2, .5, 0], [.5, 1, .2], [0, .2, 1.]], F32)
    mean = np.array([0.5, -1.0, 0.0], F32)
    x = np.random.RandomState(0).randn(5, 3).astype(F32)
    np.testing.assert_allclose(fst.multivariate_normal.logpdf(x, mean, cov),
                               jst.multivariate_normal.logpdf(x, mean, cov), rtol=1e-5)
    np.testing.assert_allclose(fst.multivariate_normal.pdf(x, mean, cov),
                               jst.multivariate_normal.pdf(x, mean, cov), rtol=1e-5)
    ours = fg.grad(lambda m: fg.numpy.sum(fst.multivariate_normal.logpdf(x, m, cov)))(mean)
    theirs = jax.grad(lambda m: jax.numpy.sum(jst.multivariate_normal.logpdf(x, m, cov)))(mean)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4)


def test_dirichlet_matches_jax():
    alpha = np.array([0.5, 2.0, 3.0], F32)
    x = np.array([[0.2, 0.5], [0.3, 0.1], [0.5, 0.4]], F32)
    np.testing.assert_allclose(fst.dirichlet.logpdf(x, alpha), jst.dirichlet.logpdf(x, alpha),
                               rtol=1e-5)
    np.testing.assert_allclose(fst.dirichlet.pdf(x[:2], alpha), jst.dirichlet.pdf(x[:2], alpha),
                               rtol=1e-5)
    ours = fg.grad(lambda a: fg.numpy.sum(fst.dirichlet.logpdf(x, a)))(alpha)
    theirs = jax.grad(lambda a: jax.numpy.sum(jst.dirichlet.logpdf(x, a)))(alpha)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4)
