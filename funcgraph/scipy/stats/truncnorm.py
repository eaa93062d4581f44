"""The normal distribution truncated to [a, b] in standard units (as
JAX's scipy.stats.truncnorm)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy import special
from funcgraph.scipy.stats import norm
from funcgraph.scipy.stats import _util


def _log_mass(a, b):
    """log(ndtr(b) - ndtr(a)), computed in the tail where it is accurate."""
    right = a > 0
    upper = fnp.where(right, -a, b)
    lower = fnp.where(right, -b, a)
    log_upper, log_lower = special.log_ndtr(upper), special.log_ndtr(lower)
    return log_upper + fnp.log1p(-fnp.exp(log_lower - log_upper))


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _util.promote(x, a, b, loc, scale)
    z = (x - loc) / scale
    value = norm.logpdf(z) - _log_mass(a, b) - fnp.log(scale)
    return fnp.where((z < a) | (z > b), _util.const(z, -np.inf), value)


def pdf(x, a, b, loc=0, scale=1):
    return fnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _util.promote(x, a, b, loc, scale)
    z = fnp.clip((x - loc) / scale, a, b)
    value = _log_mass(a, z) - _log_mass(a, b)
    value = fnp.where(z <= a, _util.const(z, -np.inf), value)
    return fnp.where(z >= b, _util.const(z, 0), value)


def cdf(x, a, b, loc=0, scale=1):
    return fnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _util.promote(x, a, b, loc, scale)
    z = fnp.clip((x - loc) / scale, a, b)
    value = _log_mass(z, b) - _log_mass(a, b)
    value = fnp.where(z >= b, _util.const(z, -np.inf), value)
    return fnp.where(z <= a, _util.const(z, 0), value)


def sf(x, a, b, loc=0, scale=1):
    return fnp.exp(logsf(x, a, b, loc, scale))
