"""The binomial distribution (as JAX's scipy.stats.binom)."""
import numpy as np

from funcgraph import lax
from funcgraph import numpy as fnp
from funcgraph.scipy import special
from funcgraph.scipy.stats import _util


def logpmf(k, n, p, loc=0):
    k, n, p, loc = _util.promote(k, n, p, loc)
    y = k - loc
    # jax's grouping of the terms (for its bits), and its exact 0 where the linear term
    # is 0 or y = n = 0
    log_comb = lax.lgamma(n + 1) - (lax.lgamma(y + 1) + lax.lgamma(n - y + 1))
    linear = special.xlogy(y, p) + special.xlog1py(n - y, -p)
    zero = _util.const(y, 0)
    value = fnp.where(((y == zero) & (n == zero)) | (linear == zero), zero, log_comb + linear)
    return fnp.where((k >= loc) & (k < loc + n + 1), value, _util.const(y, -np.inf))


def pmf(k, n, p, loc=0):
    return fnp.exp(logpmf(k, n, p, loc))
