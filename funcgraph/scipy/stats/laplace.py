"""The Laplace distribution (as JAX's scipy.stats.laplace)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy.stats import _util


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _util.promote(x, loc, scale)
    return -fnp.abs(x - loc) / scale - fnp.log(2 * scale)


pdf = _util.log_of_pdf(logpdf)


def cdf(x, loc=0, scale=1):
    x, loc, scale = _util.promote(x, loc, scale)
    z = (x - loc) / scale
    return fnp.where(z <= 0, fnp.exp(z) / 2, 1 - fnp.exp(-z) / 2)
