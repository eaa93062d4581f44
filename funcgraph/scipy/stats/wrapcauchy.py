"""The wrapped Cauchy distribution on [0, 2 pi] (as JAX's scipy.stats.wrapcauchy)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy.stats._util import const, log_of_pdf, promote


def logpdf(x, c):
    x, c = promote(x, c)
    value = fnp.log(1 - c * c) - const(x, np.log(2 * np.pi)) \
        - fnp.log(1 + c * c - 2 * c * fnp.cos(x))
    value = fnp.where((x >= 0) & (x <= 2 * np.pi), value, const(x, -np.inf))
    return fnp.where((c > 0) & (c < 1), value, const(x, np.nan))


pdf = log_of_pdf(logpdf)

__all__ = ["logpdf", "pdf"]
