"""The multinomial distribution over the last axis (as JAX's scipy.stats.multinomial)."""
import numpy as np

from funcgraph import lax
from funcgraph import numpy as fnp
from funcgraph.scipy import special
from funcgraph.scipy.stats import _util


def logpmf(x, n, p):
    """log n! prod_i p_i^x_i / x_i!; -inf unless the counts sum to n."""
    p = _util.promote(p)[0]
    x, n = fnp.asarray(x), fnp.asarray(n)
    common = fnp.result_type(x, n)
    if not fnp.issubdtype(common, np.integer):
        raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, "
                         f"n.dtype={n.dtype}")
    x, n = x.astype(p.dtype), n.astype(p.dtype)
    value = lax.lgamma(n + 1) + fnp.sum(special.xlogy(x, p) - lax.lgamma(x + 1), axis=-1)
    # As jax: the total over all counts (every axis) is compared with n.
    return fnp.where(fnp.sum(x) == n, value, _util.const(value, -np.inf))


def pmf(x, n, p):
    return fnp.exp(logpmf(x, n, p))

__all__ = ["logpmf", "pmf"]
