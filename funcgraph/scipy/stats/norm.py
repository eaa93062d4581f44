"""The normal distribution (as JAX's scipy.stats.norm)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy import special
from funcgraph.scipy.stats import _util


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _util.promote(x, loc, scale)
    variance = scale * scale
    diff = x - loc
    return (fnp.log(_util.const(x, 2 * np.pi) * variance) + diff * diff / variance) / -2


pdf = _util.log_of_pdf(logpdf)


def cdf(x, loc=0, scale=1):
    x, loc, scale = _util.promote(x, loc, scale)
    return special.ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    x, loc, scale = _util.promote(x, loc, scale)
    return special.log_ndtr((x - loc) / scale)


def sf(x, loc=0, scale=1):
    x, loc, scale = _util.promote(x, loc, scale)
    return special.ndtr((loc - x) / scale)


def logsf(x, loc=0, scale=1):
    x, loc, scale = _util.promote(x, loc, scale)
    return special.log_ndtr((loc - x) / scale)


def ppf(q, loc=0, scale=1):
    q, loc, scale = _util.promote(q, loc, scale)
    return special.ndtri(q) * scale + loc


def isf(q, loc=0, scale=1):
    """ppf(1 - q), as jax computes it."""
    q = fnp.asarray(q)
    return ppf(_util.const(q, 1) - q, loc, scale)
