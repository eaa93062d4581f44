"""The binomial distribution (as JAX's scipy.stats.binom)."""
import numpy as np

from funcgraph import lax
from funcgraph import numpy as fnp
from funcgraph.scipy import special
from funcgraph.scipy.stats._util import const, promote


def logpmf(k, n, p, loc=0):
    k, n, p, loc = promote(k, n, p, loc)
    y = k - loc
    log_comb = lax.lgamma(n + 1) - lax.lgamma(y + 1) - lax.lgamma(n - y + 1)
    value = log_comb + special.xlogy(y, p) + special.xlog1py(n - y, -p)
    return fnp.where((y < 0) | (y > n), const(y, -np.inf), value)


def pmf(k, n, p, loc=0):
    return fnp.exp(logpmf(k, n, p, loc))
