"""The normal distribution (as JAX's scipy.stats.norm)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy import special
from funcgraph.scipy.stats._util import const, log_of_pdf, promote


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote(x, loc, scale)
    z = (x - loc) / scale
    return -z * z / 2 - fnp.log(scale) - const(x, 0.5 * np.log(2 * np.pi))


pdf = log_of_pdf(logpdf)


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote(x, loc, scale)
    return special.ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    x, loc, scale = promote(x, loc, scale)
    return special.log_ndtr((x - loc) / scale)


def sf(x, loc=0, scale=1):
    x, loc, scale = promote(x, loc, scale)
    return special.ndtr((loc - x) / scale)


def logsf(x, loc=0, scale=1):
    x, loc, scale = promote(x, loc, scale)
    return special.log_ndtr((loc - x) / scale)


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote(q, loc, scale)
    return special.ndtri(q) * scale + loc


def isf(q, loc=0, scale=1):
    q, loc, scale = promote(q, loc, scale)
    return -special.ndtri(q) * scale + loc
