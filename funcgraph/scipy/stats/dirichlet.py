"""The Dirichlet distribution (as JAX's scipy.stats.dirichlet)."""
import numpy as np

from funcgraph import lax
from funcgraph import numpy as fnp
from funcgraph.scipy import special
from funcgraph.scipy.stats import _util


def logpdf(x, alpha):
    """log Dirichlet(x; alpha) for x on the simplex along axis 0 of x (as jax); -inf off it."""
    x, alpha = fnp.asarray(x), fnp.asarray(alpha)
    dtype = fnp.result_type(x, alpha)
    if not fnp.issubdtype(dtype, np.inexact):
        dtype = fnp.float32
    x, alpha = x.astype(dtype), alpha.astype(dtype)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError(f"`x` must have either the same number of entries as `alpha` or one "
                         f"entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    if x.shape[0] != alpha.shape[0]:
        x = fnp.concatenate([x, (1 - fnp.sum(x, 0))[None]], axis=0)
    alpha = fnp.reshape(alpha, alpha.shape + (1,) * (x.ndim - 1))
    normalizer = fnp.sum(lax.lgamma(alpha), 0) - lax.lgamma(fnp.sum(alpha, 0))
    value = fnp.sum(special.xlogy(alpha - 1, x), 0) - normalizer
    on_simplex = fnp.all(x >= 0, 0) & (fnp.abs(fnp.sum(x, 0) - 1)
                                        < _util.const(x, 100 * np.finfo(dtype).eps))
    return fnp.where(on_simplex, value, _util.const(value, -np.inf))


def pdf(x, alpha):
    return fnp.exp(logpdf(x, alpha))
