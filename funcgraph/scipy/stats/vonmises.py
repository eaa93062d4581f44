"""The von Mises distribution (as JAX's scipy.stats.vonmises)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy import special
from funcgraph.scipy.stats._util import const, promote


def logpdf(x, kappa):
    x, kappa = promote(x, kappa)
    value = kappa * (fnp.cos(x) - 1) - fnp.log(2 * const(x, np.pi) * special.i0e(kappa))
    return fnp.where(kappa > 0, value, const(x, np.nan))


def pdf(x, kappa):
    return fnp.exp(logpdf(x, kappa))
