"""Sorting, searching and cumulative ops: sort, argsort, cumsum, argmax, nonzero, where,
unravel_index."""
import builtins

import numpy as np

from funcgraph import core, dtypes, lax
from funcgraph.numpy._core import (
    array, asarray_operand, astype, aval_of, canonical_dtype, check_axis, shape_arg)
from funcgraph.numpy._creation import arange, zeros, zeros_like
from funcgraph.numpy._joining import stack
from funcgraph.numpy._reductions import max, min, sum
from funcgraph.numpy._shapes import atleast_1d, ndim, ravel, reshape, shape
from funcgraph.numpy._ufuncs import (
    clip, floor_divide, less, not_equal, remainder, subtract, where_values)


def axis_or_flat(a, axis):
    """(array, axis): axis=None flattens the array and works along its only axis."""
    a = asarray_operand(a)
    if axis is None:
        return ravel(a), 0
    return a, check_axis(axis, ndim(a))


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    if order is not None:
        raise NotImplementedError("sort: order= (structured arrays) is not supported")
    a, axis = axis_or_flat(a, axis)
    out = lax.sort(a, dimension=axis, is_stable=stable)
    return lax.rev(out, (axis,)) if descending else out


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
    if order is not None:
        raise NotImplementedError("argsort: order= (structured arrays) is not supported")
    a, axis = axis_or_flat(a, axis)
    index_dtype = canonical_dtype(dtype) or dtypes.default_int()
    iota = lax.broadcasted_iota(index_dtype, shape(a), axis)
    if descending and stable:
        # reversing first keeps equal keys in their original order once reversed back
        a, iota = lax.rev(a, (axis,)), lax.rev(iota, (axis,))
    _, indices = lax.sort_key_val(a, iota, dimension=axis, is_stable=stable)
    return lax.rev(indices, (axis,)) if descending else indices


def _cumulative(lax_fn, a, axis, dtype):
    a, axis = axis_or_flat(a, axis)
    if dtype is not None:
        a = astype(a, dtype)
    elif aval_of(a).dtype == dtypes.bool_:
        a = astype(a, dtypes.default_int())
    return lax_fn(a, axis=axis)


def cumsum(a, axis=None, dtype=None, out=None):
    return _cumulative(lax.cumsum, a, axis, dtype)


def cumprod(a, axis=None, dtype=None, out=None):
    return _cumulative(lax.cumprod, a, axis, dtype)


def _argminmax(lax_fn, a, axis, keepdims, name):
    a = asarray_operand(a)
    nd = ndim(a)
    flat, ax = axis_or_flat(a, axis)
    if shape(flat)[ax] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    out = lax_fn(flat, ax, dtypes.default_int())
    if keepdims:
        kept = (1,) * nd if axis is None else tuple(
            1 if i == ax else d for i, d in enumerate(shape(a)))
        out = reshape(out, kept)
    return out


def argmax(a, axis=None, out=None, keepdims=None):
    return _argminmax(lax.argmax, a, axis, keepdims, "argmax")


def argmin(a, axis=None, out=None, keepdims=None):
    return _argminmax(lax.argmin, a, axis, keepdims, "argmin")


def ptp(a, axis=None, out=None, keepdims=False):
    return subtract(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


def _is_concrete(x):
    return not isinstance(x, core.Tracer)


def nonzero(a, *, size=None, fill_value=None):
    a = asarray_operand(a)
    if ndim(a) == 0:
        raise ValueError("nonzero of a 0-d array is not allowed; use "
                         "fnp.atleast_1d(x).nonzero() instead")
    index_dtype = dtypes.default_int()
    if _is_concrete(a) and size is None:
        return tuple(array(i.astype(index_dtype)) for i in np.nonzero(np.asarray(a)))
    if size is None:
        raise core.ConcretizationTypeError(
            f"nonzero (also where(condition) and argwhere) of a traced array "
            f"{aval_of(a).str_short()}: the number of results is not known while tracing; "
            f"pass a static size=... (and optionally fill_value=...)")
    size = int(size)
    mask = ravel(not_equal(a, 0) if aval_of(a).dtype != dtypes.bool_ else a)
    fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * ndim(a)
    if len(fills) != ndim(a):
        raise ValueError(f"nonzero: fill_value must be a scalar or a tuple of length "
                         f"{ndim(a)}, got {fill_value!r}")
    if size == 0 or shape(mask)[0] == 0:
        return tuple(zeros((size,), index_dtype) for _ in range(ndim(a)))
    # seen[i]: the nonzeros up to position i; the k-th nonzero is at the number of
    # positions that have seen at most k of them (all positions, n, past the last one)
    seen = lax.cumsum(astype(mask, index_dtype), axis=0)
    per_count = zeros((size,), index_dtype).at[seen].add(1, mode="drop")
    flat = lax.cumsum(per_count, axis=0)
    out = []
    stride = int(np.prod(shape(a)))
    for d in shape(a):  # flat is never negative: C division and remainder floor it
        stride //= d
        coord = flat if stride == 1 else lax.div(flat, np.asarray(stride, index_dtype))
        out.append(lax.rem(coord, np.asarray(d, index_dtype)))  # n, past the end: 0
    if builtins.all(fill is None for fill in fills):
        return tuple(out)
    missing = arange(size, dtype=index_dtype) >= sum(mask, dtype=index_dtype)
    return tuple(coord if fill is None else where_values(missing, fill, coord).astype(index_dtype)
                 for coord, fill in zip(out, fills))


def flatnonzero(a, *, size=None, fill_value=None):
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    a = atleast_1d(a)
    result = nonzero(a, size=size, fill_value=fill_value)
    return stack(result, axis=1) if result else zeros((0, 0), dtypes.default_int())


def unravel_index(indices, shape):
    """Coordinates of flat indices; as in JAX, negative indices count from the end and
    out-of-bounds ones are clipped into range."""
    indices = asarray_operand(indices)
    shape = shape_arg(shape)
    total = int(np.prod(shape))
    if total:
        indices = clip(indices, -total, total - 1)
        indices = where(less(indices, 0), indices + total, indices)
    out = []
    for d in reversed(shape):
        out.append(remainder(indices, d) if d else zeros_like(indices))
        indices = floor_divide(indices, d) if d else indices
    return tuple(reversed(out))


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("where takes one or three positional arguments")
    return where_values(condition, x, y)
