"""The logistic distribution (as JAX's scipy.stats.logistic)."""
from funcgraph import nn
from funcgraph import numpy as fnp
from funcgraph.scipy.stats._util import log_of_pdf, promote


def _z(x, loc, scale):
    x, loc, scale = promote(x, loc, scale)
    return (x - loc) / scale, scale


def logpdf(x, loc=0, scale=1):
    z, scale = _z(x, loc, scale)
    return -z - 2 * nn.softplus(-z) - fnp.log(scale)


pdf = log_of_pdf(logpdf)


def cdf(x, loc=0, scale=1):
    return nn.sigmoid(_z(x, loc, scale)[0])


def sf(x, loc=0, scale=1):
    return nn.sigmoid(-_z(x, loc, scale)[0])


def ppf(x, loc=0, scale=1):
    x, loc, scale = promote(x, loc, scale)
    return (fnp.log(x) - fnp.log1p(-x)) * scale + loc


def isf(x, loc=0, scale=1):
    x, loc, scale = promote(x, loc, scale)
    return -(fnp.log(x) - fnp.log1p(-x)) * scale + loc
