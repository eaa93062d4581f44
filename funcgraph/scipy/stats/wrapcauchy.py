"""The wrapped Cauchy distribution on [0, 2 pi] (as JAX's scipy.stats.wrapcauchy)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy.stats import _util


def logpdf(x, c):
    x, c = _util.promote(x, c)
    value = fnp.log(1 - c * c) - _util.const(x, np.log(2 * np.pi)) \
        - fnp.log(1 + c * c - 2 * c * fnp.cos(x))
    value = fnp.where((x >= 0) & (x <= 2 * np.pi), value, _util.const(x, -np.inf))
    return fnp.where((c > 0) & (c < 1), value, _util.const(x, np.nan))


pdf = _util.log_of_pdf(logpdf)

__all__ = ["logpdf", "pdf"]
