"""The Poisson distribution (as JAX's scipy.stats.poisson)."""
import numpy as np

from funcgraph import lax
from funcgraph import numpy as fnp
from funcgraph.scipy import special
from funcgraph.scipy.stats import _util


def logpmf(k, mu, loc=0):
    k, mu, loc = _util.promote(k, mu, loc)
    x = k - loc
    value = special.xlogy(x, mu) - lax.lgamma(x + 1) - mu
    return fnp.where((x < 0) | (x != fnp.round(x)), _util.const(x, -np.inf), value)


def pmf(k, mu, loc=0):
    return fnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    k, mu, loc = _util.promote(k, mu, loc)
    x = fnp.floor(k - loc)
    return fnp.where(x < 0, _util.const(x, 0), special.gammaincc(x + 1, mu))


_ENTROPY_SUM_TERMS = 256


def entropy(mu, loc=0):
    """The Shannon entropy -sum_k p(k) log p(k): summed over k < 256 for mu < 100 (the
    mass beyond is negligible there), the Stirling series above; NaN for mu < 0, 0 at 0."""
    mu, loc = fnp.broadcast_arrays(*_util.promote(mu, loc))  # loc only shapes the result
    k = fnp.arange(_ENTROPY_SUM_TERMS, dtype=mu.dtype).reshape((-1,) + (1,) * mu.ndim)
    small = fnp.minimum(mu, _util.const(mu, 100))
    summed = fnp.sum(special.entr(pmf(k, fnp.where(mu > 0, small, _util.const(mu, 1)))), axis=0)
    large = fnp.maximum(mu, _util.const(mu, 100))
    stirling = (fnp.log(2 * np.pi * np.e * large) / 2 - 1 / (12 * large)
                - 1 / (24 * large ** 2) - 19 / (360 * large ** 3))
    value = fnp.where(mu < 100, summed, stirling)
    value = fnp.where(mu == 0, _util.const(mu, 0), value)
    return fnp.where(mu < 0, _util.const(mu, np.nan), value)
