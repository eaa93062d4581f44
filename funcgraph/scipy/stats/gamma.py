"""The gamma distribution (as JAX's scipy.stats.gamma)."""
import numpy as np

from funcgraph import lax
from funcgraph import numpy as fnp
from funcgraph.scipy import special
from funcgraph.scipy.stats import _util


def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = _util.promote(x, a, loc, scale)
    # jax's grouping, (xlogy(a - 1, y) - y) - (lgamma(a) + log(scale)), for its bits
    ok = x >= loc
    y = fnp.where(ok, (x - loc) / scale, _util.const(x, 1))
    value = (special.xlogy(a - 1, y) - y) - (lax.lgamma(a) + fnp.log(scale))
    return fnp.where(ok, value, _util.const(y, -np.inf))


pdf = _util.log_of_pdf(logpdf)


def cdf(x, a, loc=0, scale=1):
    x, a, loc, scale = _util.promote(x, a, loc, scale)
    return special.gammainc(a, _util.clamp(0, (x - loc) / scale, np.inf))


def logcdf(x, a, loc=0, scale=1):
    return fnp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    x, a, loc, scale = _util.promote(x, a, loc, scale)
    return special.gammaincc(a, fnp.maximum((x - loc) / scale, 0))


def logsf(x, a, loc=0, scale=1):
    return fnp.log(sf(x, a, loc, scale))
