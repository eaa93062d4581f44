"""The gamma distribution (as JAX's scipy.stats.gamma)."""
import numpy as np

from funcgraph import lax
from funcgraph import numpy as fnp
from funcgraph.scipy import special
from funcgraph.scipy.stats._util import const, log_of_pdf, promote


def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote(x, a, loc, scale)
    y = (x - loc) / scale
    safe = fnp.where(y > 0, y, fnp.ones_like(y))
    value = special.xlogy(a - 1, safe) - safe - lax.lgamma(a) - fnp.log(scale)
    return fnp.where(y < 0, const(y, -np.inf), fnp.where(y == 0, special.xlogy(a - 1, y)
                                                         - lax.lgamma(a) - fnp.log(scale),
                                                         value))


pdf = log_of_pdf(logpdf)


def cdf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote(x, a, loc, scale)
    return special.gammainc(a, fnp.maximum((x - loc) / scale, 0))


def logcdf(x, a, loc=0, scale=1):
    return fnp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote(x, a, loc, scale)
    return special.gammaincc(a, fnp.maximum((x - loc) / scale, 0))


def logsf(x, a, loc=0, scale=1):
    return fnp.log(sf(x, a, loc, scale))
