"""The von Mises distribution (as JAX's scipy.stats.vonmises)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy import special
from funcgraph.scipy.stats import _util


def logpdf(x, kappa):
    x, kappa = _util.promote(x, kappa)
    value = kappa * (fnp.cos(x) - 1) - fnp.log(2 * _util.const(x, np.pi) * special.i0e(kappa))
    return fnp.where(kappa > 0, value, _util.const(x, np.nan))


def pdf(x, kappa):
    return fnp.exp(logpdf(x, kappa))
