"""The beta-binomial distribution (as JAX's scipy.stats.betabinom)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.scipy import special
from funcgraph.scipy.stats import _util


def logpmf(k, n, a, b, loc=0):
    """log C(n, y) B(y + a, n - y + b) / B(a, b) for y = floor(k) - loc."""
    k, n, a, b, loc = _util.promote(k, n, a, b, loc)
    y = fnp.floor(k) - loc
    log_comb = -(fnp.log1p(n) + special.betaln(n - y + 1, y + 1))
    value = log_comb + (special.betaln(y + a, n - y + b) - special.betaln(a, b))
    value = fnp.where((y == 0) & (n == 0), _util.const(y, 0), value)
    outside = (y < -loc) | (y > n) | (y + a <= 0)
    value = fnp.where(outside, _util.const(y, -np.inf), value)
    return fnp.where((n < 0) | (a <= 0) | (b <= 0), _util.const(y, np.nan), value)


def pmf(k, n, a, b, loc=0):
    return fnp.exp(logpmf(k, n, a, b, loc))

__all__ = ["logpmf", "pmf"]
