"""The Pareto distribution (as JAX's scipy.stats.pareto)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy.stats import _util


def logpdf(x, b, loc=0, scale=1):
    x, b, loc, scale = _util.promote(x, b, loc, scale)
    z = (x - loc) / scale
    value = fnp.log(b) - fnp.log(scale) - (b + 1) * fnp.log(z)
    return fnp.where(z < 1, _util.const(z, -np.inf), value)


pdf = _util.log_of_pdf(logpdf)


def cdf(x, b, loc=0, scale=1):
    x, b, loc, scale = _util.promote(x, b, loc, scale)
    z = (x - loc) / scale
    return fnp.where(z < 1, _util.const(z, 0), 1 - fnp.power(z, -b))


def sf(x, b, loc=0, scale=1):
    return fnp.exp(logsf(x, b, loc, scale))


def logcdf(x, b, loc=0, scale=1):
    x, b, loc, scale = _util.promote(x, b, loc, scale)
    z = (x - loc) / scale
    return fnp.where(z < 1, _util.const(z, -np.inf), fnp.log1p(-fnp.power(z, -b)))


def logsf(x, b, loc=0, scale=1):
    x, b, loc, scale = _util.promote(x, b, loc, scale)
    z = (x - loc) / scale
    return fnp.where(z < 1, _util.const(z, 0), -b * fnp.log(z))


def ppf(q, b, loc=0, scale=1):
    q, b, loc, scale = _util.promote(q, b, loc, scale)
    return fnp.power(1 - q, -1 / b) * scale + loc
