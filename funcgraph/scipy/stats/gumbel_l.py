"""The left-skewed Gumbel distribution (as JAX's scipy.stats.gumbel_l): CDF 1 - exp(-exp(z))."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy.stats import _util


def _z(x, loc, scale):
    x, loc, scale = _util.promote(x, loc, scale)
    return (x - loc) / scale, scale


def _valid(scale, value):
    return fnp.where(scale > 0, value, _util.const(value, np.nan))


def logpdf(x, loc=0, scale=1):
    z, scale = _z(x, loc, scale)
    return _valid(scale, z - fnp.exp(z) - fnp.log(scale))


pdf = _util.log_of_pdf(logpdf)


def logcdf(x, loc=0, scale=1):
    z, scale = _z(x, loc, scale)
    return _valid(scale, fnp.log(-fnp.expm1(-fnp.exp(z))))


def cdf(x, loc=0, scale=1):
    z, scale = _z(x, loc, scale)
    return _valid(scale, -fnp.expm1(-fnp.exp(z)))


def logsf(x, loc=0, scale=1):
    z, scale = _z(x, loc, scale)
    return _valid(scale, -fnp.exp(z))


def sf(x, loc=0, scale=1):
    return fnp.exp(logsf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    p, loc, scale = _util.promote(p, loc, scale)
    quantile = loc + scale * fnp.log(-fnp.log1p(-p))
    return fnp.where((p > 0) & (p < 1), quantile, _util.const(p, np.nan))

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
