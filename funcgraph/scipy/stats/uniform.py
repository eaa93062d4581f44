"""The uniform distribution on [loc, loc + scale] (as JAX's scipy.stats.uniform)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy.stats._util import const, log_of_pdf, promote


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote(x, loc, scale)
    inside = (x >= loc) & (x <= loc + scale)
    return fnp.where(inside, -fnp.log(scale), const(x, -np.inf))


pdf = log_of_pdf(logpdf)


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote(x, loc, scale)
    return fnp.clip((x - loc) / scale, 0, 1)


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote(q, loc, scale)
    return fnp.where((q < 0) | (q > 1), const(q, np.nan), loc + q * scale)
