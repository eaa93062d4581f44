"""The incomplete gamma and beta functions with NumPy's promotion and broadcasting, shared
by funcgraph.random (the gamma sampler's reparameterization gradient) and funcgraph.scipy
(gammainc, betainc and the CDFs).  The kernels are lax primitives (funcgraph.lax._special);
these wrappers only bring the arguments to one inexact dtype and one shape."""
from funcgraph import dtypes, lax
import funcgraph.numpy as fnp


def _float_operands(*args):
    """Args promoted to one inexact dtype and broadcast to one shape."""
    dtype = fnp.result_type(*args)
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.default_float()
    return fnp.broadcast_arrays(*(fnp.asarray(a).astype(dtype) for a in args))


def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    return lax.igamma(*_float_operands(a, x))


def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return lax.igammac(*_float_operands(a, x))


def igamma_grad_a(a, x):
    """dP(a, x)/da for the regularized lower incomplete gamma function P."""
    return lax.igamma_grad_a(*_float_operands(a, x))


def random_gamma_grad(a, sample):
    """d sample / d a for a Gamma(a, 1) sample."""
    return lax.random_gamma_grad(*_float_operands(a, sample))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    return lax.betainc(*_float_operands(a, b, x))


__all__ = ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad", "betainc"]
