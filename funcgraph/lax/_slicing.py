"""lax wrappers for the structural and slicing primitives (JAX's lax signatures)."""
import operator

import numpy as np

from funcgraph import core, dtypes, shape_poly
from funcgraph.array import Array
from funcgraph.lax._elementwise import add, clamp, convert_element_type, lt, select
from funcgraph.lax._operands import as_operand
from funcgraph.lax._shapes import expand_dims, reshape, squeeze
from funcgraph.primitives import slicing as _sl
from funcgraph.primitives import structural as _st
from funcgraph.primitives.slicing import (
    GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers)


def _ints(name, values):
    try:
        return tuple(operator.index(v) for v in values)
    except shape_poly.InconclusiveDimensionOperation:
        return shape_poly.dims_tuple(values)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of Python ints (static values), got "
                        f"{values!r}") from None


def _axis(name, axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an operand of rank {ndim}")
    return axis % ndim


def _matching_scalar(value, dtype):
    """A weakly typed scalar (a Python number) adopts `dtype`; anything else is kept."""
    value = as_operand(value)
    if value.aval.weak_type and value.aval.dtype != dtype:
        return convert_element_type(value, dtype)
    return value


# --- structural ------------------------------------------------------------------

def rev(operand, dimensions):
    """Reverse `operand` along each of `dimensions`."""
    return _st.rev_p.bind(as_operand(operand), dimensions=_ints("rev dimensions", dimensions))


def pad(operand, padding_value, padding_config):
    """Pad with `padding_value`: padding_config is one (low, high, interior) per dimension;
    negative low/high remove elements."""
    x = as_operand(operand)
    config = tuple(_ints("pad padding_config entries", triple) for triple in padding_config)
    return _st.pad_p.bind(x, _matching_scalar(padding_value, x.aval.dtype),
                          padding_config=config)


def concatenate(operands, dimension):
    """Join `operands` (same dtype; shapes equal except along `dimension`)."""
    operands = [as_operand(x) for x in operands]
    if not operands:
        raise ValueError("concatenate needs a non-empty sequence of arrays")
    if len(operands) == 1:
        return operands[0]
    return _st.concatenate_p.bind(*operands, dimension=operator.index(dimension))


def broadcasted_iota(dtype, shape, dimension, sharding=None):
    """An array of `shape` counting 0, 1, ... along `dimension`."""
    if sharding is not None:
        raise NotImplementedError("broadcasted_iota: sharding is not supported")
    return _st.iota_p.bind(dtype=dtypes.canonicalize(dtype), shape=_ints("iota shape", shape),
                           dimension=operator.index(dimension))


def iota(dtype, size, sharding=None):
    """0, 1, ..., size - 1 as a 1-D array of `dtype`."""
    return broadcasted_iota(dtype, (size,), 0, sharding)


# --- static slices -----------------------------------------------------------------

def slice(operand, start_indices, limit_indices, strides=None):
    """operand[start:limit:stride] in every dimension (all static)."""
    return _sl.slice_p.bind(
        as_operand(operand), start_indices=_ints("slice start_indices", start_indices),
        limit_indices=_ints("slice limit_indices", limit_indices),
        strides=None if strides is None else _ints("slice strides", strides))


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """operand[..., start_index:limit_index:stride] along `axis` (negative indices count
    from the end; None means the start or the end)."""
    x = as_operand(operand)
    axis = operator.index(axis)
    size = x.aval.shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = size if limit_index is None else operator.index(limit_index)
    start = start + size if start < 0 else start
    limit = limit + size if limit < 0 else limit
    starts, limits = [0] * x.aval.ndim, list(x.aval.shape)
    strides = [1] * x.aval.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return slice(x, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """operand[..., index] along `axis` (static index; negative counts from the end)."""
    x = as_operand(operand)
    index, axis = operator.index(index), operator.index(axis)
    size = x.aval.shape[axis]
    wrapped = index + size if index < 0 else index
    if not 0 <= wrapped < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    out = slice_in_dim(x, wrapped, wrapped + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


# --- dynamic slices ----------------------------------------------------------------

def _split_indices(start_indices):
    """start_indices as a list: a sequence, or a 1-D array split into scalars."""
    if isinstance(start_indices, (Array, core.Tracer)):
        if start_indices.aval.ndim != 1:
            raise ValueError(f"start indices must be a 1-D sequence, got "
                             f"{start_indices.aval.str_short()}")
        return [reshape(slice(start_indices, (k,), (k + 1,)), ())
                for k in range(start_indices.aval.shape[0])]
    if isinstance(start_indices, np.ndarray):
        if start_indices.ndim != 1:
            raise ValueError(f"start indices must be a 1-D sequence, got shape "
                             f"{start_indices.shape}")
        return list(start_indices)
    return list(start_indices)


def _start_index(name, i, size, allow_negative, dtype):
    """One start index as a scalar of dtype (the traced indices' own wide dtype, else
    int32), negative values counted from the end when allowed (as lax.dynamic_slice
    does); the primitive then clamps it."""
    if isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)):
        i = int(i)
        if i < 0:
            if not allow_negative:
                raise ValueError(f"{name}: index {i} is out of bounds for dimension of size "
                                 f"{size} with allow_negative_indices=False")
            i += size
        # Any start outside [0, size] clamps like size or 0 does; that range fits dtype.
        return as_operand(np.array(min(max(i, 0), size), dtype))
    i = as_operand(i)
    aval = i.aval
    if aval.shape != () or not dtypes.is_int(aval.dtype):
        raise TypeError(f"{name}: start indices must be integer scalars, got {aval.str_short()}")
    signed = not dtypes.is_unsigned(aval.dtype)
    if aval.dtype != dtype:
        if aval.dtype.itemsize >= 4:
            # Bring wide indices into [-size, size] first, so converting to int32 is exact
            # and the result (after wrapping negatives and clamping) is unchanged.
            lo = -size if signed else 0
            i = clamp(np.array(lo, aval.dtype), i, np.array(size, aval.dtype))
        i = convert_element_type(i, dtype)
    if signed and allow_negative:
        i = select(lt(i, np.array(0, dtype)), add(i, np.array(size, dtype)), i)
    return i


def _index_dtype(indices):
    """The dtype of the start indices: the traced ones' dtype when they share one of
    32 bits or more (kept, as jax does), else int32."""
    traced = {as_operand(i).aval.dtype for i in indices
              if not isinstance(i, (int, np.integer)) or isinstance(i, (bool, np.bool_))}
    if len(traced) == 1:
        dtype = traced.pop()
        if dtypes.is_int(dtype) and dtype.itemsize >= 4:
            return dtype
    return dtypes.int32


def _dynamic_indices(name, operand, start_indices, allow_negative_indices):
    indices = _split_indices(start_indices)
    shape = operand.aval.shape
    if len(indices) != len(shape):
        raise ValueError(f"{name}: got {len(indices)} start indices for an operand of shape "
                         f"{shape}; it needs one per dimension")
    allow = allow_negative_indices
    allow = [bool(allow)] * len(shape) if isinstance(allow, (bool, np.bool_)) else list(allow)
    dtype = _index_dtype(indices)
    return [_start_index(name, i, d, a, dtype)
            for i, d, a in core.safe_zip(indices, shape, allow)]


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """The slice of `slice_sizes` starting at the (possibly traced) start_indices; starts
    are clamped so the slice stays in bounds."""
    x = as_operand(operand)
    indices = _dynamic_indices("dynamic_slice", x, start_indices, allow_negative_indices)
    return _sl.dynamic_slice_p.bind(x, *indices,
                                    slice_sizes=_ints("dynamic_slice slice_sizes", slice_sizes))


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """operand with `update` written at start_indices (clamped so it fits)."""
    x = as_operand(operand)
    update = _matching_scalar(update, x.aval.dtype)
    indices = _dynamic_indices("dynamic_update_slice", x, start_indices, allow_negative_indices)
    return _sl.dynamic_update_slice_p.bind(x, update, *indices)


def _axis_only(ndim, axis, value, default):
    items = [default] * ndim
    items[axis] = value
    return items


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
    """operand[..., start_index:start_index + slice_size] along `axis` (clamped)."""
    x = as_operand(operand)
    axis = operator.index(axis)
    ndim = x.aval.ndim
    sizes = list(x.aval.shape)
    sizes[axis] = operator.index(slice_size)
    return dynamic_slice(x, _axis_only(ndim, axis, start_index, 0), sizes,
                         allow_negative_indices=_axis_only(ndim, axis, allow_negative_indices,
                                                           False))


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *, allow_negative_indices=True):
    """operand[..., index] along `axis` for a possibly traced index (clamped)."""
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
    """operand with `update` written at start_index along `axis` (0 elsewhere)."""
    x = as_operand(operand)
    axis = operator.index(axis)
    ndim = x.aval.ndim
    return dynamic_update_slice(x, update, _axis_only(ndim, axis, start_index, 0),
                                allow_negative_indices=_axis_only(
                                    ndim, axis, allow_negative_indices, False))


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """operand with `update` written at `index` along `axis`; update may lack that axis."""
    x = as_operand(operand)
    update = as_operand(update)
    axis = operator.index(axis)
    if update.aval.ndim == x.aval.ndim - 1:
        update = expand_dims(update, (axis,))
    elif update.aval.ndim != x.aval.ndim:
        raise TypeError(f"dynamic_update_index_in_dim: update {update.aval.str_short()} must "
                        f"have the rank of operand {x.aval.str_short()} or one less")
    return dynamic_update_slice_in_dim(x, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


# --- gather and scatter ----------------------------------------------------------------

def _dnums(cls, dimension_numbers):
    """dimension_numbers as `cls` with tuple-of-int fields (hashable)."""
    if isinstance(dimension_numbers, dict):
        dimension_numbers = cls(**dimension_numbers)
    try:
        fields = [_ints(f"{cls.__name__}.{name}", value)
                  for name, value in zip(cls._fields, dimension_numbers)]
        return cls(*fields)
    except TypeError as e:
        raise TypeError(f"dimension_numbers must be a {cls.__name__}: {e}") from None


def _default_fill(dtype):
    """JAX's fill for out-of-bounds gathers: NaN, the signed minimum, the unsigned
    maximum, or True."""
    if dtypes.is_inexact(dtype):
        return np.nan
    if dtype == dtypes.bool_:
        return True
    return int(dtypes.iinfo(dtype).min if not dtypes.is_unsigned(dtype)
               else dtypes.iinfo(dtype).max)


def _fill_param(fill_value, dtype):
    """A hashable Python scalar; every NaN becomes the one np.nan so equal params hash equal."""
    if fill_value is None:
        return _default_fill(dtype)
    value = np.asarray(fill_value)
    if value.shape != ():
        raise TypeError(f"gather: fill_value must be a scalar, got shape {value.shape}")
    value = value.item()
    if isinstance(value, float) and np.isnan(value):
        return np.nan
    return value


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """XLA's gather: slices of `slice_sizes` from operand at start_indices (see
    GatherDimensionNumbers). mode None means PROMISE_IN_BOUNDS, as in JAX."""
    x = as_operand(operand)
    indices = as_operand(start_indices)
    mode = GatherScatterMode.from_any(
        GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else mode)
    fill = _fill_param(fill_value, x.aval.dtype) if mode == GatherScatterMode.FILL_OR_DROP \
        else None
    return _sl.gather_p.bind(
        x, indices, dimension_numbers=_dnums(GatherDimensionNumbers, dimension_numbers),
        slice_sizes=_ints("gather slice_sizes", slice_sizes),
        indices_are_sorted=bool(indices_are_sorted), unique_indices=bool(unique_indices),
        mode=mode, fill_value=fill)


def _scatter(prim):
    def fn(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
           unique_indices=False, mode=None):
        x = as_operand(operand)
        return prim.bind(
            x, as_operand(scatter_indices), _matching_scalar(updates, x.aval.dtype),
            dimension_numbers=_dnums(ScatterDimensionNumbers, dimension_numbers),
            indices_are_sorted=bool(indices_are_sorted), unique_indices=bool(unique_indices),
            mode=GatherScatterMode.from_any(mode))
    core.named_function(fn, prim.name)
    return fn


scatter = _scatter(_sl.scatter_p)
scatter.__doc__ = ("XLA's scatter: updates replace operand windows at scatter_indices "
                   "(out-of-bounds windows are dropped unless mode='clip').")
scatter_add = _scatter(_sl.scatter_add_p)
scatter_add.__doc__ = "XLA's scatter with addition: updates are added into operand windows."
scatter_mul = _scatter(_sl.scatter_mul_p)
scatter_mul.__doc__ = "XLA's scatter with multiplication into operand windows."
scatter_min = _scatter(_sl.scatter_min_p)
scatter_min.__doc__ = "XLA's scatter with minimum into operand windows."
scatter_max = _scatter(_sl.scatter_max_p)
scatter_max.__doc__ = "XLA's scatter with maximum into operand windows."
