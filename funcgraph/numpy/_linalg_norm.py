"""funcgraph.numpy.linalg.norm: vector and matrix norms from reductions (linalg.py
imports it; the spectral norms ord=2/-2/'nuc' need an SVD and are not here)."""
import operator

import numpy as np

from funcgraph.numpy._core import asarray_operand, aval_of, check_axis, promote_to_inexact
from funcgraph.numpy._reductions import max, min, sum
from funcgraph.numpy._shapes import reshape
from funcgraph.numpy._ufuncs import abs, not_equal, power, sqrt


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
        return _keep(sqrt(_sum_sq(x, None)), x, tuple(range(nd)), keepdims)
    axes = _axes(axis, nd)
    if len(axes) == 1:
        out = _vector_norm(x, ord, axes[0])
    elif len(axes) == 2:
        out = _matrix_norm(x, ord, axes)
    else:
        raise ValueError(f"norm: improper number of dimensions to norm: axis={axis!r} "
                         f"names {len(axes)} axes of an array of dimension {nd}")
    return _keep(out, x, axes, keepdims)


def _keep(out, x, axes, keepdims):
    if not keepdims:
        return out
    shape = tuple(1 if i in axes else d for i, d in enumerate(aval_of(x).shape))
    return reshape(out, shape)


def _sum_sq(x, axis):
    a = abs(x)
    return sum(a * a, axis=axis)


def _vector_norm(x, ord, axis):
    if isinstance(ord, str):
        raise ValueError(f"norm: invalid norm order {ord!r} for vectors")
    if ord is None or ord == 2:
        return sqrt(_sum_sq(x, axis))
    a = abs(x)
    if ord == np.inf:
        return max(a, axis=axis)
    if ord == -np.inf:
        return min(a, axis=axis)
    if ord == 0:
        return sum(not_equal(x, 0), axis=axis).astype(aval_of(a).dtype)
    if ord == 1:
        return sum(a, axis=axis)
    p = float(ord)
    return power(sum(power(a, p), axis=axis), 1.0 / p)


def _matrix_norm(x, ord, axes):
    row, col = axes
    if ord is None or ord == "fro":
        return sqrt(_sum_sq(x, axes))
    a = abs(x)
    if ord in (1, -1):
        # column sums (over rows), then the extreme over columns
        pick = max if ord == 1 else min
        return pick(sum(a, axis=row), axis=col - (col > row))
    if ord in (np.inf, -np.inf):
        pick = max if ord == np.inf else min
        return pick(sum(a, axis=col), axis=row - (row > col))
    if ord in (2, -2, "nuc"):
        raise NotImplementedError(f"norm: matrix ord={ord!r} needs a singular value "
                                  f"decomposition, which funcgraph does not have yet")
    raise ValueError(f"norm: invalid norm order {ord!r} for matrices")
