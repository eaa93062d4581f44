"""The exponential distribution (as JAX's scipy.stats.expon)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy.stats import _util


def _z(x, loc, scale):
    x, loc, scale = _util.promote(x, loc, scale)
    return (x - loc) / scale, scale


def _minus_z(x, loc, scale):
    """Whether x is below the support, and -(x - loc) / scale (the sign folded into the
    subtraction)."""
    x, loc, scale = _util.promote(x, loc, scale)
    return x < loc, (loc - x) / scale


def logpdf(x, loc=0, scale=1):
    z, scale = _z(x, loc, scale)
    return fnp.where(z < 0, _util.const(z, -np.inf), -z - fnp.log(scale))


pdf = _util.log_of_pdf(logpdf)


def cdf(x, loc=0, scale=1):
    below, minus_z = _minus_z(x, loc, scale)
    return fnp.where(below, _util.const(minus_z, 0), -fnp.expm1(minus_z))


def logcdf(x, loc=0, scale=1):
    below, minus_z = _minus_z(x, loc, scale)
    return fnp.log1p(-fnp.exp(fnp.where(below, _util.const(minus_z, 0), minus_z)))


def sf(x, loc=0, scale=1):
    return fnp.exp(logsf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    below, minus_z = _minus_z(x, loc, scale)
    return fnp.where(below, _util.const(minus_z, 0), minus_z)


def ppf(q, loc=0, scale=1):
    q, loc, scale = _util.promote(q, loc, scale)
    out = loc - fnp.log1p(-q) * scale
    return fnp.where((q < 0) | (q > 1), _util.const(q, np.nan), out)
