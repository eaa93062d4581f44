"""The Cauchy distribution (as JAX's scipy.stats.cauchy)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy.stats import _util


def _z(x, loc, scale):
    x, loc, scale = _util.promote(x, loc, scale)
    return (x - loc) / scale, scale


def logpdf(x, loc=0, scale=1):
    z, scale = _z(x, loc, scale)
    return -fnp.log1p(z * z) - fnp.log(_util.const(z, np.pi) * scale)


pdf = _util.log_of_pdf(logpdf)


def cdf(x, loc=0, scale=1):
    z, _ = _z(x, loc, scale)
    return _util.const(z, 0.5) + fnp.arctan(z) / _util.const(z, np.pi)


def logcdf(x, loc=0, scale=1):
    return fnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    z, _ = _z(x, loc, scale)
    return _util.const(z, 0.5) - fnp.arctan(z) / _util.const(z, np.pi)


def logsf(x, loc=0, scale=1):
    return fnp.log(sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    q, loc, scale = _util.promote(q, loc, scale)
    # tan(pi q - pi/2) scale + loc, as jax computes it (for its bits)
    return fnp.tan(_util.const(q, np.pi) * q - _util.const(q, np.pi / 2)) * scale + loc


def isf(q, loc=0, scale=1):
    q, loc, scale = _util.promote(q, loc, scale)
    return fnp.tan(_util.const(q, np.pi / 2) - _util.const(q, np.pi) * q) * scale + loc
