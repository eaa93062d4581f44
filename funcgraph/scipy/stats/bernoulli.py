"""The Bernoulli distribution (as JAX's scipy.stats.bernoulli)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy import special
from funcgraph.scipy.stats import _util


def logpmf(k, p, loc=0):
    k, p, loc = _util.promote(k, p, loc)
    x = k - loc
    value = special.xlogy(x, p) + special.xlog1py(1 - x, -p)
    return fnp.where((x < 0) | (x > 1), _util.const(x, -np.inf), value)


def pmf(k, p, loc=0):
    return fnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    k, p = _util.promote(k, p)
    return fnp.where(k < 0, _util.const(k, 0), fnp.where(k >= 1, _util.const(k, 1), 1 - p))


def ppf(q, p):
    q, p = _util.promote(q, p)
    return fnp.where((q < 0) | (q > 1), _util.const(q, np.nan),
                     fnp.where(q <= 1 - p, _util.const(q, 0), _util.const(q, 1)))
