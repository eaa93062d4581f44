"""The Cauchy distribution (as JAX's scipy.stats.cauchy)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy.stats._util import const, log_of_pdf, promote


def _z(x, loc, scale):
    x, loc, scale = promote(x, loc, scale)
    return (x - loc) / scale, scale


def logpdf(x, loc=0, scale=1):
    z, scale = _z(x, loc, scale)
    return -fnp.log1p(z * z) - fnp.log(const(z, np.pi) * scale)


pdf = log_of_pdf(logpdf)


def cdf(x, loc=0, scale=1):
    z, _ = _z(x, loc, scale)
    return const(z, 0.5) + fnp.arctan2(z, const(z, 1)) / const(z, np.pi)


def logcdf(x, loc=0, scale=1):
    return fnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    z, _ = _z(x, loc, scale)
    return const(z, 0.5) - fnp.arctan2(z, const(z, 1)) / const(z, np.pi)


def logsf(x, loc=0, scale=1):
    return fnp.log(sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote(q, loc, scale)
    return loc + scale * fnp.tan(const(q, np.pi) * (q - const(q, 0.5)))


def isf(q, loc=0, scale=1):
    q, loc, scale = promote(q, loc, scale)
    return loc - scale * fnp.tan(const(q, np.pi) * (q - const(q, 0.5)))
