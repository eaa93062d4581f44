"""The Pareto distribution (as JAX's scipy.stats.pareto)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy.stats._util import const, log_of_pdf, promote


def logpdf(x, b, loc=0, scale=1):
    x, b, loc, scale = promote(x, b, loc, scale)
    z = (x - loc) / scale
    value = fnp.log(b) - fnp.log(scale) - (b + 1) * fnp.log(fnp.maximum(z, 1))
    return fnp.where(z < 1, const(z, -np.inf), value)


pdf = log_of_pdf(logpdf)


def cdf(x, b, loc=0, scale=1):
    x, b, loc, scale = promote(x, b, loc, scale)
    z = (x - loc) / scale
    return fnp.where(z < 1, const(z, 0), 1 - fnp.power(fnp.maximum(z, 1), -b))


def sf(x, b, loc=0, scale=1):
    x, b, loc, scale = promote(x, b, loc, scale)
    z = (x - loc) / scale
    return fnp.where(z < 1, const(z, 1), fnp.power(fnp.maximum(z, 1), -b))


def logcdf(x, b, loc=0, scale=1):
    return fnp.log(cdf(x, b, loc, scale))


def logsf(x, b, loc=0, scale=1):
    return fnp.log(sf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    q, b, loc, scale = promote(q, b, loc, scale)
    return fnp.power(1 - q, -1 / b) * scale + loc
