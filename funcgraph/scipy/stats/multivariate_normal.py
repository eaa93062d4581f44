"""The multivariate normal distribution (as JAX's scipy.stats.multivariate_normal)."""
import numpy as np

from funcgraph import numpy as fnp
from funcgraph.numpy import linalg as fla
from funcgraph.scipy import linalg as fsla
from funcgraph.scipy.stats import _util


def logpdf(x, mean, cov, allow_singular=None):
    """log N(x; mean, cov) over the last axis, through a Cholesky factor of cov."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = (fnp.asarray(v) for v in (x, mean, cov))
    dtype = fnp.result_type(x, mean, cov)
    if not fnp.issubdtype(dtype, np.inexact):
        dtype = fnp.float32
    x, mean, cov = x.astype(dtype), mean.astype(dtype), cov.astype(dtype)
    if mean.ndim == 0 or cov.ndim == 0:
        return (-((x - mean) ** 2) / cov - fnp.log(2 * _util.const(x, np.pi) * cov)) / 2
    n = mean.shape[-1]
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal.logpdf got incompatible shapes: mean "
                         f"{mean.shape}, cov {cov.shape}")
    factor = fla.cholesky(cov)
    diff = x - mean
    batch = np.broadcast_shapes(diff.shape[:-1], factor.shape[:-2])
    factor = fnp.broadcast_to(factor, batch + (n, n))
    diff = fnp.broadcast_to(diff, batch + (n,))
    y = fsla.solve_triangular(factor, diff[..., None], lower=True)[..., 0]
    log_det = fnp.sum(fnp.log(fnp.diagonal(factor, axis1=-2, axis2=-1)), -1)
    return -fnp.sum(y * y, -1) / 2 - log_det - _util.const(x, n / 2 * np.log(2 * np.pi))


def pdf(x, mean, cov):
    return fnp.exp(logpdf(x, mean, cov))
