"""The negative binomial distribution (as JAX's scipy.stats.nbinom): the number of failures
before the n-th success."""
import numpy as np

from funcgraph import lax
from funcgraph import numpy as fnp
from funcgraph.scipy import special
from funcgraph.scipy.stats import _util


def logpmf(k, n, p, loc=0):
    k, n, p, loc = _util.promote(k, n, p, loc)
    y = k - loc
    log_comb = lax.lgamma(y + n) - lax.lgamma(n) - lax.lgamma(y + 1)
    value = log_comb + special.xlogy(n, p) + special.xlogy(y, 1 - p)
    return fnp.where(k < loc, _util.const(y, -np.inf), value)


def pmf(k, n, p, loc=0):
    return fnp.exp(logpmf(k, n, p, loc))

__all__ = ["logpmf", "pmf"]
