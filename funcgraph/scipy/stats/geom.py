"""The geometric distribution on {1, 2, ...} (as JAX's scipy.stats.geom)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy import special
from funcgraph.scipy.stats import _util


def logpmf(k, p, loc=0):
    k, p, loc = _util.promote(k, p, loc)
    x = k - loc
    value = special.xlog1py(x - 1, -p) + fnp.log(p)
    return fnp.where(x <= 0, _util.const(x, -np.inf), value)


def pmf(k, p, loc=0):
    return fnp.exp(logpmf(k, p, loc))
