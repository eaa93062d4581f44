"""take, take_along_axis and repeat (gathers through funcgraph.numpy's indexing)."""
import builtins

import numpy as np

from funcgraph import core, dtypes, lax
from funcgraph.numpy._core import (
    asarray, asarray_operand, astype, aval_of, broadcast_shapes, check_axis)
from funcgraph.numpy._creation import arange, zeros
from funcgraph.numpy._indexing import getitem
from funcgraph.numpy._shapes import broadcast_to, ndim, ravel, reshape, shape
from funcgraph.numpy._sorting import axis_or_flat, cumsum
from funcgraph.numpy._ufuncs import clip, remainder, where_values


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    a, axis = axis_or_flat(a, axis)
    indices = asarray_operand(indices)
    if not dtypes.is_int(aval_of(indices).dtype):
        raise ValueError(f"take: indices must be integers, got {aval_of(indices).str_short()}")
    mode = "fill" if mode is None else mode
    if mode == "raise":
        raise NotImplementedError("take: mode='raise' is not supported (indices are not "
                                  "checked at run time); use 'fill', 'clip' or 'wrap'")
    if mode == "wrap":
        indices, mode = remainder(indices, shape(a)[axis]), "promise_in_bounds"
    elif mode == "clip":
        # take's clip does not count negative indices from the end (unlike x[idx])
        if shape(a)[axis]:
            return _gather_along(a, indices, axis, "clip", None, unique_indices,
                                 indices_are_sorted)  # the gather clamps them itself
        indices = clip(indices, 0, builtins.max(shape(a)[axis] - 1, 0))
    if mode not in ("fill", "clip", "promise_in_bounds"):
        raise ValueError(f"take: invalid mode {mode!r}; use 'fill', 'clip' or 'wrap'")
    index = (slice(None),) * axis + (indices,)
    return getitem(a, index, mode=mode, fill_value=fill_value, unique_indices=unique_indices,
                   indices_are_sorted=indices_are_sorted)


def take_along_axis(arr, indices, axis, mode=None, fill_value=None):
    arr = asarray_operand(arr)
    indices = asarray_operand(indices)
    if axis is None:
        return take(ravel(arr), ravel(indices), mode=mode, fill_value=fill_value)
    nd = ndim(arr)
    axis = check_axis(axis, nd)
    if ndim(indices) != nd:
        raise ValueError(f"take_along_axis: indices must have the same number of dimensions "
                         f"as arr ({nd}), got shape {shape(indices)}")
    mode = "fill" if mode is None else mode
    size = shape(arr)[axis]
    if size == 0:  # only an empty selection is in bounds: indexing handles it
        index = []
        for d in range(nd):
            if d == axis:
                index.append(indices)
            else:
                iota_shape = [1] * nd
                iota_shape[d] = shape(arr)[d]
                index.append(reshape(arange(shape(arr)[d]), iota_shape))
        return getitem(arr, tuple(index), mode=mode, fill_value=fill_value)
    # the other axes broadcast against each other, then pair up as gather batch axes
    out = broadcast_shapes(*(tuple(1 if d == axis else n for d, n in enumerate(shape(x)))
                             for x in (arr, indices)))
    out = out[:axis] + (shape(indices)[axis],) + out[axis + 1:]
    arr = lax.broadcast_in_dim(arr, out[:axis] + (size,) + out[axis + 1:], tuple(range(nd)))
    indices = lax.broadcast_in_dim(indices, out, tuple(range(nd)))
    if not dtypes.is_unsigned(aval_of(indices).dtype):  # negatives count from the end
        indices = astype(indices, dtypes.default_int())
        indices = where_values(indices < 0, indices + size, indices)
    return _gather_along(arr, indices, axis, mode, fill_value, False, False,
                         batched=[d for d in range(nd) if d != axis])


def _gather_along(a, indices, axis, mode, fill_value, unique_indices, indices_are_sorted,
                  batched=()):
    """a's elements at `indices` along `axis` (indices taken as they are), one gather;
    `batched` names the axes a and indices share (take_along_axis), the other axes of a
    come whole (take)."""
    nd, batch = ndim(a), ndim(indices)
    if batched:
        offset_dims = ()
    else:
        offset_dims = tuple(range(axis)) + tuple(range(axis + batch, nd - 1 + batch))
    dnums = lax.GatherDimensionNumbers(
        offset_dims=offset_dims, collapsed_slice_dims=(axis,), start_index_map=(axis,),
        operand_batching_dims=tuple(batched), start_indices_batching_dims=tuple(batched))
    slice_sizes = tuple(1 if d == axis or d in batched else n for d, n in enumerate(shape(a)))
    return lax.gather(a, lax.expand_dims(indices, (batch,)), dnums, slice_sizes,
                      unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                      mode=mode, fill_value=fill_value)


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    a, axis = axis_or_flat(a, axis)
    size = shape(a)[axis]
    if isinstance(repeats, core.Tracer):
        if total_repeat_length is None:
            raise core.ConcretizationTypeError(
                f"repeat: traced repeats {aval_of(repeats).str_short()} need a static "
                f"total_repeat_length=... (the result's length along the axis)")
        return _repeat_traced(a, repeats, axis, int(total_repeat_length))
    counts = np.asarray(repeats)
    if counts.ndim == 0 or counts.shape == (1,):
        r = int(counts.reshape(()))
        if total_repeat_length is not None and r * size != total_repeat_length:
            return _repeat_traced(a, broadcast_to(asarray(counts.reshape(())), (size,)), axis,
                                  int(total_repeat_length))
        return _repeat_scalar(a, r, axis)
    if counts.shape != (size,):
        raise ValueError(f"repeat: repeats must be a scalar or have length {size} (the size "
                         f"of axis {axis}), got shape {counts.shape}")
    if total_repeat_length is not None:
        return _repeat_traced(a, asarray(counts), axis, int(total_repeat_length))
    positions = np.repeat(np.arange(size), counts).astype(dtypes.default_int())
    return take(a, positions, axis=axis, mode="promise_in_bounds")


def _repeat_scalar(a, r, axis):
    if r < 0:
        raise ValueError(f"repeat: repeats may not be negative, got {r}")
    s = shape(a)
    widened = lax.broadcast_in_dim(a, s[:axis + 1] + (r,) + s[axis + 1:],
                                   tuple(d if d <= axis else d + 1 for d in range(len(s))))
    return reshape(widened, s[:axis] + (s[axis] * r,) + s[axis + 1:])


def _repeat_traced(a, repeats, axis, total):
    """Repeat with run-time counts: mark where each block starts, then a cumulative sum
    of the marks gives every output position the index of its source element."""
    ends = cumsum(repeats)
    marks = zeros((total,), dtypes.default_int()).at[ends[:-1]].add(1, mode="drop")
    positions = cumsum(marks)  # at most len(repeats) - 1: one mark per inner block end
    return take(a, positions, axis=axis, mode="promise_in_bounds")
