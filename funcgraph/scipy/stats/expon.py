"""The exponential distribution (as JAX's scipy.stats.expon)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy.stats._util import const, log_of_pdf, promote


def _z(x, loc, scale):
    x, loc, scale = promote(x, loc, scale)
    return (x - loc) / scale, scale


def logpdf(x, loc=0, scale=1):
    z, scale = _z(x, loc, scale)
    return fnp.where(z < 0, const(z, -np.inf), -z - fnp.log(scale))


pdf = log_of_pdf(logpdf)


def cdf(x, loc=0, scale=1):
    z, _ = _z(x, loc, scale)
    return fnp.where(z < 0, const(z, 0), -fnp.expm1(-z))


def logcdf(x, loc=0, scale=1):
    z, _ = _z(x, loc, scale)
    return fnp.where(z < 0, const(z, -np.inf), fnp.log(-fnp.expm1(-fnp.maximum(z, 0))))


def sf(x, loc=0, scale=1):
    z, _ = _z(x, loc, scale)
    return fnp.where(z < 0, const(z, 1), fnp.exp(-z))


def logsf(x, loc=0, scale=1):
    z, _ = _z(x, loc, scale)
    return fnp.where(z < 0, const(z, 0), -z)


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote(q, loc, scale)
    out = -fnp.log1p(-q) * scale + loc
    return fnp.where((q < 0) | (q > 1), const(q, np.nan), out)
