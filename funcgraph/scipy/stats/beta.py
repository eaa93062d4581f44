"""The beta distribution (as JAX's scipy.stats.beta)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy import special
from funcgraph.scipy.stats import _util


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _util.promote(x, a, b, loc, scale)
    y = (x - loc) / scale
    value = (special.xlogy(a - 1, y) + special.xlog1py(b - 1, -y) - special.betaln(a, b)
             - fnp.log(scale))
    return fnp.where((y < 0) | (y > 1), _util.const(y, -np.inf), value)


pdf = _util.log_of_pdf(logpdf)


def cdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _util.promote(x, a, b, loc, scale)
    return special.betainc(a, b, _util.clamp(0, (x - loc) / scale, 1))


def logcdf(x, a, b, loc=0, scale=1):
    return fnp.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _util.promote(x, a, b, loc, scale)
    return special.betainc(b, a, 1 - _util.clamp(0, (x - loc) / scale, 1))


def logsf(x, a, b, loc=0, scale=1):
    return fnp.log(sf(x, a, b, loc, scale))
