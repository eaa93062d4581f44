"""The uniform distribution on [loc, loc + scale] (as JAX's scipy.stats.uniform)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy.stats import _util


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _util.promote(x, loc, scale)
    outside = (x < loc) | (x > loc + scale)
    return fnp.where(outside, _util.const(x, -np.inf), -fnp.log(scale))


pdf = _util.log_of_pdf(logpdf)


def cdf(x, loc=0, scale=1):
    x, loc, scale = _util.promote(x, loc, scale)
    return fnp.clip((x - loc) / scale, 0, 1)


def ppf(q, loc=0, scale=1):
    q, loc, scale = _util.promote(q, loc, scale)
    return fnp.where((q < 0) | (q > 1), _util.const(q, np.nan), loc + q * scale)
