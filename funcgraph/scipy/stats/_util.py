"""Shared pieces of the distributions: argument promotion and the loc/scale standardization."""
import numpy as np

from funcgraph import dtypes, lax
from funcgraph import numpy as fnp


def promote(*args):
    """Args as arrays of one inexact dtype (the elementwise math broadcasts them)."""
    arrays = [fnp.asarray(a) for a in args]
    dtype = fnp.result_type(*arrays)
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.default_float()
    return [a.astype(dtype) for a in arrays]


def const(x, value):
    return np.array(value, x.dtype)


def clamp(low, x, high):
    """x clamped to [low, high] (one clamp, as jax's distributions)."""
    return lax.clamp(const(x, low), x, const(x, high))


def log_of_pdf(logpdf):
    """pdf(...) = exp(logpdf(...)), with logpdf's signature and a docstring naming it."""
    def pdf(*args, **kwargs):
        return fnp.exp(logpdf(*args, **kwargs))
    pdf.__doc__ = "exp(logpdf) with the same arguments."
    return pdf
