"""Shared pieces of the distributions: argument promotion and the loc/scale standardization."""
import numpy as np

from funcgraph import dtypes
from funcgraph import numpy as fnp


def promote(*args):
    """Args as arrays of one inexact dtype, broadcast together."""
    arrays = [fnp.asarray(a) for a in args]
    dtype = fnp.result_type(*arrays)
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.default_float()
    return fnp.broadcast_arrays(*(a.astype(dtype) for a in arrays))


def const(x, value):
    return np.array(value, x.dtype)


def log_of_pdf(logpdf):
    """pdf(...) = exp(logpdf(...)), with logpdf's signature and a docstring naming it."""
    def pdf(*args, **kwargs):
        return fnp.exp(logpdf(*args, **kwargs))
    pdf.__doc__ = "exp(logpdf) with the same arguments."
    return pdf
