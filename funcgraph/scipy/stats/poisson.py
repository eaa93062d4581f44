"""The Poisson distribution (as jax.scipy.stats.poisson)."""
import numpy as np

from funcgraph import lax
from funcgraph import numpy as fnp
from funcgraph.scipy import special
from funcgraph.scipy.stats._util import const, promote


def logpmf(k, mu, loc=0):
    k, mu, loc = promote(k, mu, loc)
    x = k - loc
    value = special.xlogy(x, mu) - lax.lgamma(x + 1) - mu
    return fnp.where((x < 0) | (x != fnp.round(x)), const(x, -np.inf), value)


def pmf(k, mu, loc=0):
    return fnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    k, mu, loc = promote(k, mu, loc)
    x = fnp.floor(k - loc)
    return fnp.where(x < 0, const(x, 0), special.gammaincc(fnp.maximum(x, 0) + 1, mu))
