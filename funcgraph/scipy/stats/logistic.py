"""The logistic distribution (as JAX's scipy.stats.logistic)."""
from funcgraph import nn
from funcgraph import numpy as fnp
from funcgraph.scipy.stats import _util


def _z(x, loc, scale):
    x, loc, scale = _util.promote(x, loc, scale)
    return (x - loc) / scale, scale


def logpdf(x, loc=0, scale=1):
    z, scale = _z(x, loc, scale)
    # -2 logaddexp(z/2, -z/2) - log(scale): jax's formula, for its bits
    half = z / _util.const(z, 2)
    return _util.const(z, -2) * fnp.logaddexp(half, -half) - fnp.log(scale)


pdf = _util.log_of_pdf(logpdf)


def cdf(x, loc=0, scale=1):
    return nn.sigmoid(_z(x, loc, scale)[0])


def sf(x, loc=0, scale=1):
    return nn.sigmoid(-_z(x, loc, scale)[0])


def ppf(x, loc=0, scale=1):
    x, loc, scale = _util.promote(x, loc, scale)
    return fnp.log(x / (1 - x)) * scale + loc


def isf(x, loc=0, scale=1):
    x, loc, scale = _util.promote(x, loc, scale)
    return -fnp.log(x / (1 - x)) * scale + loc
