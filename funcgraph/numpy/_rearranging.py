"""Index and rearranging functions of jnp built from other funcgraph.numpy functions:
matrix_transpose, rollaxis, unstack, resize, diagflat, (diag_)indices, fill_diagonal, put,
put_along_axis, place, compress, extract, choose, partition, apply_along_axis, ravel_multi_index,
trim_zeros (concrete only), setxor1d and mask_indices (concrete unless a size is given)."""
import numpy as np

from funcgraph import core, dtypes, lax
from funcgraph.array import Array
from funcgraph.transforms.vmap import vmap
from funcgraph.numpy._core import asarray, astype, aval_of, check_axis, promote_dtypes
from funcgraph.numpy._creation import arange, ones, zeros
from funcgraph.numpy._diagonals import diag
from funcgraph.numpy._joining import concatenate
from funcgraph.numpy._setops import _masked_unique, isin, unique
from funcgraph.numpy._shapes import (
    broadcast_to, expand_dims, moveaxis, ravel, reshape, swapaxes)
from funcgraph.numpy._sorting import argsort, nonzero, sort, where
from funcgraph.numpy._taking import take


def matrix_transpose(x, /):
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: x must be at least 2-d, got shape {x.shape}")
    return swapaxes(x, -1, -2)


def rollaxis(a, axis, start=0):
    a = asarray(a)
    axis = check_axis(axis, a.ndim)
    if not -a.ndim <= start <= a.ndim:
        raise ValueError(f"rollaxis: start={start} out of range for {a.ndim} dimensions")
    start = start + a.ndim if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start)


def unstack(x, /, *, axis=0):
    x = asarray(x)
    if x.ndim == 0:
        raise ValueError("unstack requires an array with at least 1 dimension, got a 0-d array")
    axis = check_axis(axis, x.ndim)
    return tuple(lax.index_in_dim(x, i, axis, keepdims=False) for i in range(x.shape[axis]))


def resize(a, new_shape):
    a = ravel(asarray(a))
    new_shape = (new_shape,) if isinstance(new_shape, int) else tuple(new_shape)
    if any(d < 0 for d in new_shape):
        raise ValueError(f"resize: all elements of new_shape must be non-negative, got {new_shape}")
    total = int(np.prod(new_shape))
    if a.size == 0 or total == 0:
        return zeros(new_shape, a.dtype)
    repeats = -(-total // a.size)
    tiled = reshape(lax.broadcast_in_dim(a, (repeats, a.size), (1,)), (repeats * a.size,))
    return reshape(tiled[:total], new_shape)


def diagflat(v, k=0):
    return diag(ravel(asarray(v)), k)


def _index_array(values):
    values = np.asarray(values, dtypes.default_int())
    return Array(values, core.aval_of_numpy(values))


def diag_indices(n, ndim=2):
    n, ndim = int(n), int(ndim)
    if n < 0 or ndim < 0:
        raise ValueError(f"diag_indices: n and ndim must be non-negative, got {n}, {ndim}")
    return (_index_array(np.arange(n)),) * ndim


def diag_indices_from(arr):
    shape = aval_of(arr).shape
    if len(shape) < 2 or len(set(shape)) != 1:
        raise ValueError(f"diag_indices_from: input must be at least 2-d with equal sides, "
                         f"got shape {shape}")
    return diag_indices(shape[0], len(shape))


def indices(dimensions, dtype=None, sparse=False):
    dtype = dtypes.default_int() if dtype is None else dtype
    dimensions = tuple(dimensions)
    grids = []
    for i, d in enumerate(dimensions):
        if sparse:
            shape = [1] * len(dimensions)
            shape[i] = d
            grids.append(reshape(arange(d, dtype=dtype), shape))
        else:  # a (1, *dimensions) slice of the result
            grids.append(lax.broadcast_in_dim(arange(d, dtype=dtype), (1,) + dimensions,
                                              (i + 1,)))
    if sparse:
        return tuple(grids)
    return concatenate(grids, 0) if grids else zeros((0,), dtype)


def _require_not_inplace(name, inplace):
    if inplace:
        raise NotImplementedError(
            f"funcgraph arrays are immutable, so {name} cannot work in place: pass "
            f"inplace=False and use the returned array (as jnp.{name})")


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    _require_not_inplace("fill_diagonal", inplace)
    if wrap:
        raise NotImplementedError("fill_diagonal: wrap=True is not implemented (as in jax), "
                                  "use wrap=False")
    a = asarray(a)
    if a.ndim < 2:
        raise ValueError(f"fill_diagonal: array must be at least 2-d, got shape {a.shape}")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError(f"fill_diagonal: all dimensions must be equal, got shape {a.shape}")
    rows, cols = a.shape[0], a.shape[1]
    step = cols + 1
    end = min(rows, cols) * cols
    if a.ndim > 2:
        step = sum(a.shape[0] ** i for i in range(a.ndim))
        end = a.size
    flat_positions = np.arange(0, end, step)
    values = ravel(asarray(val, dtype=a.dtype))
    values = resize(values, (len(flat_positions),)) if values.size else values
    return reshape(ravel(a).at[_index_array(flat_positions)].set(values), a.shape)


def put(a, ind, v, mode=None, *, inplace=True):
    _require_not_inplace("put", inplace)
    a = asarray(a)
    ind = ravel(asarray(ind))
    v = ravel(asarray(v, dtype=a.dtype))
    if v.size == 0 or ind.size == 0:
        return a
    v = resize(v, (ind.size,)) if v.size != ind.size else v
    if mode in (None, "fill"):
        out = ravel(a).at[ind].set(v, mode="drop")
    elif mode == "clip":
        out = ravel(a).at[lax.clamp(0, ind, a.size - 1)].set(v)
    elif mode == "wrap":
        out = ravel(a).at[ind % a.size].set(v)
    elif mode == "raise":
        raise NotImplementedError("put: mode='raise' is not supported (as jnp)")
    else:
        raise ValueError(f"put: invalid mode {mode!r}")
    return reshape(out, a.shape)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    _require_not_inplace("put_along_axis", inplace)
    arr = asarray(arr)
    indices = asarray(indices)
    if axis is None:
        return reshape(put_along_axis(ravel(arr), ravel(indices), ravel(asarray(values)), 0,
                                      inplace=False, mode=mode), arr.shape)
    axis = check_axis(axis, arr.ndim)
    if indices.ndim != arr.ndim:
        raise ValueError(f"put_along_axis: indices must have the same number of dimensions as "
                         f"arr ({arr.ndim}), got {indices.ndim}")
    index_shape = tuple(i if n == axis else max(i, s) if i == 1 or s == 1 else i
                        for n, (i, s) in enumerate(zip(indices.shape, arr.shape, strict=True)))
    values = broadcast_to(asarray(values, dtype=arr.dtype), index_shape)
    others = tuple(n for n in range(arr.ndim) if n != axis)
    if all(index_shape[n] == arr.shape[n] for n in others):
        # the other axes pair up as scatter batch axes: one scatter, no index grid
        indices = broadcast_to(indices, index_shape)
        if not dtypes.is_unsigned(indices.dtype):  # negatives count from the end
            indices = astype(indices, dtypes.default_int())
            indices = where(indices < 0, indices + arr.shape[axis], indices)
        dnums = lax.ScatterDimensionNumbers(
            update_window_dims=(), inserted_window_dims=(axis,),
            scatter_dims_to_operand_dims=(axis,), operand_batching_dims=others,
            scatter_indices_batching_dims=others)
        return lax.scatter(arr, expand_dims(indices, -1), values, dnums,
                           mode=lax.GatherScatterMode.FILL_OR_DROP if mode is None else mode)
    grid = []
    for n in range(arr.ndim):
        if n == axis:
            grid.append(broadcast_to(indices, index_shape))
        else:  # a constant: the position along axis n
            shape = [1] * arr.ndim
            shape[n] = index_shape[n]
            positions = np.arange(index_shape[n], dtype=np.int32).reshape(shape)
            grid.append(np.broadcast_to(positions, index_shape))
    return arr.at[tuple(grid)].set(values, mode=mode)


def place(arr, mask, vals, *, inplace=True):
    _require_not_inplace("place", inplace)
    arr = asarray(arr)
    vals = ravel(asarray(vals, dtype=arr.dtype))
    if isinstance(mask, core.Tracer):
        if vals.size == 0:
            raise ValueError("place: cannot place values from an empty vals")
        # the masked positions first, then out-of-bounds ones that the scatter drops
        size = mask.size
        (positions,) = nonzero(ravel(mask), size=size, fill_value=size)
        return reshape(ravel(arr).at[positions].set(resize(vals, (size,)), mode="drop"),
                       arr.shape)
    mask = np.asarray(mask, bool)
    positions = np.flatnonzero(mask)
    if positions.size == 0:
        return arr
    if vals.size == 0:
        raise ValueError("place: cannot place values from an empty vals into a nonempty mask")
    values = resize(vals, (positions.size,))
    return reshape(ravel(arr).at[_index_array(positions)].set(values), arr.shape)


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    condition = ravel(asarray(condition))
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = check_axis(axis, a.ndim)
    if condition.ndim != 1:
        raise ValueError("compress: condition must be 1-d")
    n = min(condition.shape[0], a.shape[axis])
    extra_true = condition[n:] != 0 if condition.shape[0] > n else None
    if extra_true is not None and not isinstance(extra_true, core.Tracer) and \
            bool(extra_true.any()):
        raise ValueError("compress: condition contains True entries beyond the size of the axis")
    condition = condition[:n]
    a = lax.slice_in_dim(a, 0, n, axis=axis)
    if size is None:
        (kept,) = nonzero(condition)
        return take(a, kept, axis=axis)
    # the kept slices first, in order (a stable descending sort of the condition), the
    # others filled: past the kept ones come the fill values
    condition = astype(condition, bool)
    order = argsort(condition, stable=True, descending=True)
    shape = [1] * a.ndim
    shape[axis] = n
    a = where(reshape(condition, shape), a, astype(fill_value, a.dtype))
    if size <= n:
        return take(a, order[:size], axis=axis, mode="promise_in_bounds")
    order = concatenate([order, np.full(size - n, n, order.dtype)])
    return take(a, order, axis=axis, mode="fill", fill_value=fill_value)


def extract(condition, arr, *, size=None, fill_value=0):
    return compress(astype(ravel(asarray(condition)), bool), ravel(asarray(arr)), size=size,
                    fill_value=fill_value)


def choose(a, choices, out=None, mode="raise"):
    if out is not None:
        raise NotImplementedError("choose: the out argument is not supported")
    a = asarray(a)
    if not dtypes.is_int(a.dtype):
        raise TypeError(f"choose: a must be an integer array, got {a.dtype}")
    n = len(choices)
    if mode == "raise":
        if isinstance(a, core.Tracer):
            raise ValueError("choose: mode='raise' needs concrete indices; use mode='wrap' or "
                             "'clip' under a transformation")
        if bool(((a < 0) | (a >= n)).any()):
            raise ValueError("choose: invalid entry in the index array")
    elif mode == "wrap":
        a = a % n
    elif mode == "clip":
        a = lax.clamp(np.array(0, a.dtype), a, np.array(n - 1, a.dtype))
    else:
        raise ValueError(f"choose: invalid mode {mode!r}")
    choices = promote_dtypes(*choices)
    shape = np.broadcast_shapes(a.shape, *(c.shape for c in choices))
    a = lax.convert_element_type(a, np.int32) + zeros(shape, np.int32)
    return lax.select_n(a, *(c + zeros(shape, c.dtype) for c in choices))


def partition(a, kth, axis=-1):
    """The kth smallest in position kth, the smaller ones before it (ascending) and the
    larger ones after it (descending), as jnp.partition lays them out."""
    last, kth, axis = _partition_axis(a, kth, axis, "partition")
    unsigned = dtypes.is_unsigned(last.dtype)
    smallest = lax.top_k(_flipped(last), kth + 1)[0]
    bottom = -smallest - 1 if unsigned else -smallest
    top = lax.top_k(last, last.shape[-1] - kth - 1)[0]
    return moveaxis(concatenate([bottom, top], axis=-1), -1, axis)


def argpartition(a, kth, axis=-1):
    """The indices of the kth+1 smallest (ascending), then those of the others in increasing
    index order, as jnp.argpartition gives them."""
    last, kth, axis = _partition_axis(a, kth, axis, "argpartition")
    n = last.shape[-1]
    bottom = lax.top_k(_flipped(last), kth + 1)[1]
    # the rest: 1 where not among the bottom, so top_k takes them by increasing index
    rest = put_along_axis(ones(last.shape, np.float32), bottom, 0.0, -1, inplace=False)
    top = lax.top_k(rest, n - kth - 1)[1]
    return moveaxis(concatenate([bottom, top], axis=-1), -1, axis)


def _flipped(x):
    """x with its order reversed, for top_k to find the smallest (for unsigned integers -x
    would wrap 0 to 0; -(x + 1) keeps the order)."""
    return -(x + 1) if dtypes.is_unsigned(x.dtype) else -x


def _partition_axis(a, kth, axis, name):
    """(a with `axis` moved last, kth as a checked non-negative int, axis)."""
    a = asarray(a)
    axis = check_axis(axis, a.ndim)
    kth = int(kth)
    n = a.shape[axis]
    kth = kth + n if kth < 0 else kth
    if not 0 <= kth < n:
        raise ValueError(f"{name}: kth={kth} out of range for an axis of size {n}")
    return moveaxis(a, axis, -1), kth, axis


def sort_complex(a):
    """Sorted along the last axis, as complex numbers (as jnp.sort_complex)."""
    out = sort(asarray(a), axis=-1)
    complex_dtype = dtypes.canonicalize(np.result_type(out.dtype, np.complex64))
    return lax.convert_element_type(out, complex_dtype)


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    arr = asarray(arr)
    axis = check_axis(axis, arr.ndim)
    fn = lambda x: func1d(x, *args, **kwargs)  # noqa: E731
    for _ in range(arr.ndim - axis - 1):
        fn = vmap(fn, in_axes=-1, out_axes=-1)
    for _ in range(axis):
        fn = vmap(fn, in_axes=0, out_axes=0)
    return fn(arr)


def apply_over_axes(func, a, axes):
    a = asarray(a)
    for axis in axes:
        b = func(a, axis)
        if b.ndim == a.ndim:
            a = b
        elif b.ndim == a.ndim - 1:
            a = expand_dims(b, axis)
        else:
            raise ValueError("apply_over_axes: function is not returning an array of the "
                             "correct shape")
    return a


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    dims = tuple(int(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(multi_index)} index arrays for {len(dims)} "
                         f"dimensions")
    indices = [asarray(i) for i in multi_index]
    for i in indices:
        if not dtypes.is_int(i.dtype):
            raise TypeError(f"ravel_multi_index: only integer indices are allowed, got {i.dtype}")
    if mode == "raise":
        for i, d in zip(indices, dims, strict=True):
            if isinstance(i, core.Tracer):
                raise ValueError("ravel_multi_index: mode='raise' needs concrete indices; use "
                                 "mode='wrap' or 'clip' under a transformation")
            if bool(((i < 0) | (i >= d)).any()):
                raise ValueError("ravel_multi_index: invalid entry in coordinates array")
    elif mode == "wrap":
        indices = [i % d for i, d in zip(indices, dims, strict=True)]
    elif mode == "clip":
        indices = [lax.clamp(np.array(0, i.dtype), i, np.array(d - 1, i.dtype))
                   for i, d in zip(indices, dims, strict=True)]
    else:
        raise ValueError(f"ravel_multi_index: invalid mode {mode!r}")
    if order == "F":
        indices, dims = indices[::-1], dims[::-1]
    elif order != "C":
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}")
    strides = np.cumprod((1,) + dims[:0:-1])[::-1]
    out = zeros((), dtypes.default_int())
    for i, s in zip(indices, strides, strict=True):
        out = out + i * int(s)
    return out


def _concrete(x, name):
    if isinstance(x, core.Tracer):
        raise core.ConcretizationTypeError(
            f"{name} needs a concrete array (its output size depends on the values)")
    return np.asarray(x)


def trim_zeros(filt, trim="fb"):
    values = _concrete(filt, "trim_zeros")
    if values.ndim != 1:
        raise ValueError(f"trim_zeros: filt must be 1-d, got shape {values.shape}")
    nonzeros = np.flatnonzero(values)
    start = nonzeros[0] if nonzeros.size and "f" in trim.lower() else 0
    stop = nonzeros[-1] + 1 if nonzeros.size and "b" in trim.lower() else len(values)
    if nonzeros.size == 0:
        start = stop = len(values) if "f" in trim.lower() else 0
    return asarray(filt)[start:stop]


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted values in exactly one of ar1 and ar2 (concrete inputs unless size is given)."""
    ar1, ar2 = ravel(asarray(ar1)), ravel(asarray(ar2))
    if size is not None and not assume_unique:
        # the values in one of the arrays only, unique (padded with the smallest, as jax)
        values = concatenate([ar1, ar2])
        keep = isin(values, ar1) != isin(values, ar2)
        return _masked_unique(values, keep, size, fill_value, "setxor1d")
    if not assume_unique:
        ar1, ar2 = unique(ar1), unique(ar2)
    aux = sort(concatenate([ar1, ar2]))
    if aux.size == 0:
        return aux
    edges = concatenate([ones(1, bool), aux[1:] != aux[:-1], ones(1, bool)])
    keep = edges[1:] & edges[:-1]
    if size is None:
        return aux[np.asarray(_concrete(keep, "setxor1d without size"))]
    (kept,) = nonzero(keep, size=size, fill_value=aux.size)
    fill = aux.max() if fill_value is None else fill_value
    return where(kept < aux.size, take(aux, kept, mode="fill", fill_value=0), fill)


def mask_indices(n, mask_func, k=0, *, size=None):
    mask = mask_func(ones((n, n), np.int32), k)
    if size is not None:  # as jax: a static size traces (the mask need not be concrete)
        return nonzero(mask, size=size)
    rows, cols = np.nonzero(_concrete(mask, "mask_indices") != 0)
    return _index_array(rows), _index_array(cols)


def _check_bitorder(bitorder):
    if bitorder not in ("big", "little"):
        raise ValueError(f"bitorder must be 'big' or 'little', got {bitorder!r}")


def _bit_shifts(bitorder):
    """The place of each of 8 bits in a uint8, most significant first when big."""
    _check_bitorder(bitorder)
    shifts = np.arange(8, dtype=np.uint8)
    return shifts[::-1].copy() if bitorder == "big" else shifts


def packbits(a, axis=None, bitorder="big"):
    """Elements (nonzero: 1) packed 8 to a uint8 along axis (flattened when None)."""
    a = asarray(a)
    if not (dtypes.is_int(a.dtype) or a.dtype == np.bool_):
        raise TypeError(f"packbits: expected an integer or boolean array, got {a.dtype}")
    if axis is None:
        a, axis = ravel(a), 0
    axis = check_axis(axis, a.ndim)
    bits = lax.convert_element_type(a != 0, np.uint8)
    bits = moveaxis(bits, axis, -1)
    n = bits.shape[-1]
    padded = -(-n // 8) * 8
    if padded != n:
        bits = lax.pad(bits, np.uint8(0), [(0, 0, 0)] * (bits.ndim - 1) + [(0, padded - n, 0)])
    bits = reshape(bits, (*bits.shape[:-1], padded // 8, 8))
    # each bit shifted to its place; the sum of distinct powers of two is their `or`
    shifts = lax.broadcast_in_dim(_bit_shifts(bitorder), bits.shape, (bits.ndim - 1,))
    packed = lax.reduce_sum(lax.shift_left(bits, shifts), (bits.ndim - 1,))
    return moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of each uint8 along axis (flattened when None), optionally cut to count."""
    a = asarray(a)
    if a.dtype != np.uint8:
        raise TypeError(f"unpackbits: expected a uint8 array, got {a.dtype}")
    if axis is None:
        a, axis = ravel(a), 0
    axis = check_axis(axis, a.ndim)
    masks = np.left_shift(np.uint8(1), _bit_shifts(bitorder))  # each bit's place value
    last = moveaxis(a, axis, -1)
    wide = (*last.shape, 8)
    bits = lax.bitwise_and(lax.broadcast_in_dim(last, wide, tuple(range(last.ndim))),
                           lax.broadcast_in_dim(masks, wide, (last.ndim,)))
    bits = astype(bits > 0, np.uint8)
    bits = reshape(bits, (*last.shape[:-1], last.shape[-1] * 8))
    if count is not None:
        bits = bits[..., :count] if count <= bits.shape[-1] else concatenate(
            [bits, zeros((*bits.shape[:-1], count - bits.shape[-1]), np.uint8)], axis=-1)
    return moveaxis(bits, -1, axis)
