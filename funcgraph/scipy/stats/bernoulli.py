"""The Bernoulli distribution (as JAX's scipy.stats.bernoulli)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy import special
from funcgraph.scipy.stats._util import const, promote


def logpmf(k, p, loc=0):
    k, p, loc = promote(k, p, loc)
    x = k - loc
    value = special.xlogy(x, p) + special.xlog1py(1 - x, -p)
    return fnp.where((x < 0) | (x > 1), const(x, -np.inf), value)


def pmf(k, p, loc=0):
    return fnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    k, p = promote(k, p)
    return fnp.where(k < 0, const(k, 0), fnp.where(k >= 1, const(k, 1), 1 - p))


def ppf(q, p):
    q, p = promote(q, p)
    return fnp.where((q < 0) | (q > 1), const(q, np.nan),
                     fnp.where(q <= 1 - p, const(q, 0), const(q, 1)))
