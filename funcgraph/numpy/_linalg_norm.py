"""funcgraph.numpy.linalg.norm: vector and matrix norms from reductions (linalg.py
imports it; the spectral norms ord=2/-2/'nuc' need an SVD and are not here).  The sums
of squares are real(x * conj(x)): a multiply for real x, no abs."""
import operator

import numpy as np

from funcgraph.numpy._core import asarray_operand, aval_of, check_axis, promote_to_inexact
from funcgraph.numpy._reductions import max, min, sum
from funcgraph.numpy._ufuncs import abs, conj, not_equal, power, real, sqrt


def _axes(axis, nd):
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, (tuple, list)):
        axes = tuple(check_axis(operator.index(a), nd) for a in axis)
    else:
        axes = (check_axis(operator.index(axis), nd),)
    if len(set(axes)) != len(axes):
        raise ValueError(f"norm: duplicate axes given: {axis!r}")
    return axes


def norm(x, ord=None, axis=None, keepdims=False):
    x = asarray_operand(x)
    (x,) = promote_to_inexact(x)
    nd = aval_of(x).ndim
    if axis is None and ord is None:
        return sqrt(sum(_abs2(x), keepdims=keepdims))
    axes = _axes(axis, nd)
    if len(axes) == 1:
        return vector_norm(x, 2 if ord is None else ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise ValueError(f"norm: improper number of dimensions to norm: axis={axis!r} "
                     f"names {len(axes)} axes of an array of dimension {nd}")


def _abs2(x):
    return real(x * conj(x))


def vector_norm(x, ord, axis, keepdims):
    """The ord-norm of x over axis (an int, a tuple of ints or None: all axes); integer x
    keeps its dtype for ord 1 and +-inf (as jax's)."""
    if isinstance(ord, str):
        raise ValueError(f"norm: invalid norm order {ord!r} for vectors")
    if ord is None or ord == 2:
        return sqrt(sum(_abs2(x), axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return max(abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return min(abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        dtype = aval_of(promote_to_inexact(real(x))[0]).dtype
        return sum(not_equal(x, 0), axis=axis, keepdims=keepdims, dtype=dtype)
    if ord == 1:
        return sum(abs(x), axis=axis, keepdims=keepdims)
    p = float(ord)
    return power(sum(power(abs(x), p), axis=axis, keepdims=keepdims), 1.0 / p)


def _matrix_norm(x, ord, axes, keepdims):
    row, col = axes
    if ord is None or ord in ("f", "fro"):
        return sqrt(sum(_abs2(x), axis=axes, keepdims=keepdims))
    if ord in (1, -1):
        # column sums (over rows), then the extreme over columns
        col -= 0 if keepdims else col > row
        sums = sum(abs(x), axis=row, keepdims=keepdims)
        if ord == 1:
            return max(sums, axis=col, keepdims=keepdims, initial=0)
        return min(sums, axis=col, keepdims=keepdims)
    if ord in (np.inf, -np.inf):
        row -= 0 if keepdims else row > col
        sums = sum(abs(x), axis=col, keepdims=keepdims)
        if ord == np.inf:
            return max(sums, axis=row, keepdims=keepdims, initial=0)
        return min(sums, axis=row, keepdims=keepdims)
    if ord in (2, -2, "nuc"):
        raise NotImplementedError(f"norm: matrix ord={ord!r} needs a singular value "
                                  f"decomposition (funcgraph.numpy.linalg.norm has it)")
    raise ValueError(f"norm: invalid norm order {ord!r} for matrices")
