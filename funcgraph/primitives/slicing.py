"""Slicing and indexing primitives: slice, dynamic_slice, dynamic_update_slice,
gather and the scatter family.

gather and scatter follow XLA's semantics with JAX's conventions: the index
vector is always the last dimension of the indices, and `mode` says what
out-of-bounds indices do (GatherScatterMode)."""
import enum
from typing import NamedTuple

import numpy as np

from funcgraph import dtypes
from funcgraph.core import ShapedArray
from funcgraph.lowering import i64_array
from funcgraph.primitives.helpers import (
    ANY, BOOL, FLOAT, INT, NUMBER, check_dtype, check_same_dtypes, compare_type, declare)


def _check_scalar_indices(name, operand, indices):
    if len(indices) != operand.ndim:
        raise TypeError(f"{name}: got {len(indices)} start indices for operand "
                        f"{operand.str_short()}; it needs one per dimension ({operand.ndim})")
    for i, idx in enumerate(indices):
        if idx.shape != () or not dtypes.is_int(idx.dtype):
            raise TypeError(f"{name}: start index {i} must be an integer scalar, got "
                            f"{idx.str_short()}")
    if len({idx.dtype for idx in indices}) > 1:
        got = ", ".join(idx.dtype.name for idx in indices)
        raise TypeError(f"{name}: start indices must share one dtype, got {got} "
                        f"(lax.{name} converts them to int32)")


def _clamped_starts(indices, shape, sizes):
    """XLA's rule: each start is clamped so that the whole window is in bounds."""
    return [min(max(int(i), 0), d - s) for i, d, s in zip(indices, shape, sizes)]


def _broadcast_scalar(ctx, value, aval):
    """A constant scalar `value` broadcast to `aval` (works for zero-size shapes too)."""
    scalar = aval.update(shape=())
    const = ctx.constant(np.asarray(value).astype(aval.dtype), scalar)
    if not aval.shape:
        return const
    return ctx.op("stablehlo.broadcast_in_dim", [const], [scalar], aval,
                  {"broadcast_dimensions": "array<i64>"})


# --- slice: static start/limit/stride per dimension --------------------------------

def _slice_shape(x, start_indices, limit_indices, strides=None):
    n = x.ndim
    if len(start_indices) != n or len(limit_indices) != n:
        raise TypeError(f"slice: start_indices {start_indices} and limit_indices "
                        f"{limit_indices} need one entry per dimension of {x.str_short()}")
    strides = (1,) * n if strides is None else strides
    if len(strides) != n or any(s < 1 for s in strides):
        raise TypeError(f"slice: strides {strides} need one positive entry per dimension of "
                        f"{x.str_short()}")
    shape = []
    for d, (start, limit, stride, size) in enumerate(zip(start_indices, limit_indices, strides,
                                                         x.shape)):
        if not 0 <= start <= limit <= size:
            raise TypeError(f"slice: dimension {d} of {x.str_short()} cannot be sliced from "
                            f"{start} to {limit}; need 0 <= start <= limit <= {size} "
                            f"(start_indices={start_indices}, limit_indices={limit_indices})")
        shape.append(-(-(limit - start) // stride))
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _slice_impl(x, start_indices, limit_indices, strides=None):
    strides = (1,) * x.ndim if strides is None else strides
    return x[tuple(slice(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))]


def _slice_lowering(ctx, avals_in, avals_out, x, start_indices, limit_indices, strides=None):
    strides = (1,) * len(start_indices) if strides is None else strides
    return ctx.op("stablehlo.slice", [x], avals_in, avals_out[0],
                  {"start_indices": i64_array(start_indices),
                   "limit_indices": i64_array(limit_indices), "strides": i64_array(strides)})


slice_p = declare("slice", _slice_shape, _slice_impl, _slice_lowering)


# --- dynamic_slice: operand, *scalar start indices (clamped into range) -------------

def _dynamic_slice_shape(x, *start_indices, slice_sizes):
    _check_scalar_indices("dynamic_slice", x, start_indices)
    if len(slice_sizes) != x.ndim or any(not 0 <= s <= d for s, d in zip(slice_sizes, x.shape)):
        raise TypeError(f"dynamic_slice: slice_sizes {slice_sizes} must have one entry per "
                        f"dimension of {x.str_short()}, each in [0, that dimension's size]")
    return ShapedArray(tuple(slice_sizes), x.dtype, x.weak_type)


def _dynamic_slice_impl(x, *start_indices, slice_sizes):
    starts = _clamped_starts(start_indices, x.shape, slice_sizes)
    return x[tuple(slice(s, s + n) for s, n in zip(starts, slice_sizes))]


dynamic_slice_p = declare(
    "dynamic_slice", _dynamic_slice_shape, _dynamic_slice_impl,
    lambda ctx, ai, ao, x, *idx, slice_sizes: ctx.op(
        "stablehlo.dynamic_slice", [x, *idx], ai, ao[0], {"slice_sizes": i64_array(slice_sizes)}))


# --- dynamic_update_slice: operand, update, *scalar start indices (clamped) ---------

def _dynamic_update_slice_shape(x, update, *start_indices):
    check_same_dtypes("dynamic_update_slice (operand and update)", [x, update])
    if update.ndim != x.ndim or any(u > d for u, d in zip(update.shape, x.shape)):
        raise TypeError(f"dynamic_update_slice: update {update.str_short()} must have the rank "
                        f"of operand {x.str_short()} and fit inside it")
    _check_scalar_indices("dynamic_update_slice", x, start_indices)
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _dynamic_update_slice_impl(x, update, *start_indices):
    starts = _clamped_starts(start_indices, x.shape, update.shape)
    out = x.copy()
    out[tuple(slice(s, s + n) for s, n in zip(starts, update.shape))] = update
    return out


dynamic_update_slice_p = declare(
    "dynamic_update_slice", _dynamic_update_slice_shape, _dynamic_update_slice_impl,
    lambda ctx, ai, ao, x, update, *idx: ctx.op(
        "stablehlo.dynamic_update_slice", [x, update, *idx], ai, ao[0]))


# --- gather / scatter: dimension numbers and modes -----------------------------------

class GatherDimensionNumbers(NamedTuple):
    """How operand, indices and result dimensions of a gather relate (as in JAX; the
    index vector dimension is always the last dimension of the indices)."""
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    """How operand, indices and updates dimensions of a scatter relate (as in JAX; the
    index vector dimension is always the last dimension of the indices)."""
    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


class GatherScatterMode(enum.Enum):
    """What out-of-bounds indices do.

    CLIP: indices are clamped so that the whole window is in bounds.
    FILL_OR_DROP: a gathered window that is partly out of bounds is all `fill_value`;
      a scattered window that is partly out of bounds is dropped.
    PROMISE_IN_BOUNDS: the caller promises indices are in bounds (XLA then clamps
      gathers and drops scatters)."""
    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()

    @staticmethod
    def from_any(s):
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s in ("fill", "drop"):
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        raise ValueError(f"unknown gather/scatter mode {s!r}; use 'clip', 'fill', 'drop', "
                         f"'promise_in_bounds' or a GatherScatterMode")


def _check_dims(name, field, dims, rank, what, sort=True):
    """dims must be distinct, in [0, rank) and (if sort) increasing."""
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name}: {field} {dims} has repeated dimensions")
    if any(not 0 <= d < rank for d in dims):
        raise TypeError(f"{name}: {field} {dims} must be dimensions of the {what}, "
                        f"i.e. in [0, {rank})")
    if sort and list(dims) != sorted(dims):
        raise TypeError(f"{name}: {field} {dims} must be sorted in increasing order")


def _check_disjoint(name, field1, dims1, field2, dims2):
    common = sorted(set(dims1) & set(dims2))
    if common:
        raise TypeError(f"{name}: {field1} {dims1} and {field2} {dims2} must not share "
                        f"dimensions, both contain {common}")


def _check_indices(name, indices):
    if not dtypes.is_int(indices.dtype):
        raise TypeError(f"{name}: indices must have an integer dtype, got {indices.str_short()}")
    if indices.ndim < 1:
        raise TypeError(f"{name}: indices must have rank >= 1 (the last dimension is the index "
                        f"vector), got {indices.str_short()}; add a trailing dimension of size 1")


def _check_batching(name, operand, indices, operand_dims, index_dims, index_field):
    """The operand/indices batching dimensions pair up and have equal sizes."""
    _check_dims(name, "operand_batching_dims", operand_dims, operand.ndim, "operand")
    _check_dims(name, index_field, index_dims, indices.ndim, "indices", sort=False)
    if indices.ndim - 1 in index_dims:
        raise TypeError(f"{name}: {index_field} {index_dims} cannot contain the index vector "
                        f"dimension {indices.ndim - 1} (the last dimension of the indices)")
    if len(operand_dims) != len(index_dims):
        raise TypeError(f"{name}: operand_batching_dims {operand_dims} and {index_field} "
                        f"{index_dims} must have the same length")
    op_sizes = tuple(operand.shape[d] for d in operand_dims)
    idx_sizes = tuple(indices.shape[d] for d in index_dims)
    if op_sizes != idx_sizes:
        raise TypeError(f"{name}: operand batching dimensions have sizes {op_sizes} but indices "
                        f"batching dimensions have sizes {idx_sizes} (operand "
                        f"{operand.str_short()}, indices {indices.str_short()})")


def _check_index_map(name, field, index_map, operand, indices, batching_dims):
    n_index = indices.shape[-1]
    if len(index_map) != n_index:
        raise TypeError(f"{name}: {field} {index_map} has {len(index_map)} entries but the index "
                        f"vectors (last dimension of indices {indices.str_short()}) have "
                        f"{n_index}; they must be equal")
    _check_dims(name, field, index_map, operand.ndim, "operand", sort=False)
    _check_disjoint(name, field, index_map, "operand_batching_dims", batching_dims)


def _gather_shape(operand, indices, *, dimension_numbers, slice_sizes, indices_are_sorted,
                  unique_indices, mode, fill_value):
    name = "gather"
    dn = dimension_numbers
    if not isinstance(dn, GatherDimensionNumbers):
        raise TypeError(f"gather: dimension_numbers must be a GatherDimensionNumbers, got {dn!r}")
    _check_indices(name, indices)
    batch_rank = indices.ndim - 1
    out_rank = batch_rank + len(dn.offset_dims)
    _check_dims(name, "offset_dims", dn.offset_dims, out_rank, f"result (rank {out_rank})")
    _check_dims(name, "collapsed_slice_dims", dn.collapsed_slice_dims, operand.ndim, "operand")
    _check_disjoint(name, "collapsed_slice_dims", dn.collapsed_slice_dims,
                    "operand_batching_dims", dn.operand_batching_dims)
    _check_batching(name, operand, indices, dn.operand_batching_dims,
                    dn.start_indices_batching_dims, "start_indices_batching_dims")
    _check_index_map(name, "start_index_map", dn.start_index_map, operand, indices,
                     dn.operand_batching_dims)
    if len(slice_sizes) != operand.ndim:
        raise TypeError(f"gather: slice_sizes {slice_sizes} must have one entry per dimension "
                        f"of operand {operand.str_short()}")
    for d, (s, size) in enumerate(zip(slice_sizes, operand.shape)):
        if not 0 <= s <= size:
            raise TypeError(f"gather: slice_sizes[{d}] = {s} is out of range for operand "
                            f"{operand.str_short()}; it must be in [0, {size}]")
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    for d in sorted(dropped):
        if slice_sizes[d] != min(1, operand.shape[d]):
            raise TypeError(f"gather: slice_sizes[{d}] = {slice_sizes[d]} but dimension {d} is "
                            f"collapsed or a batching dimension, so its slice size must be 1")
    if len(dn.offset_dims) + len(dropped) != operand.ndim:
        raise TypeError(f"gather: every operand dimension must be an offset dimension or be "
                        f"collapsed/batching; operand {operand.str_short()} has {operand.ndim} "
                        f"dimensions but offset_dims={dn.offset_dims}, collapsed_slice_dims="
                        f"{dn.collapsed_slice_dims}, operand_batching_dims="
                        f"{dn.operand_batching_dims}")
    if not isinstance(mode, GatherScatterMode):
        raise TypeError(f"gather: mode must be a GatherScatterMode, got {mode!r}")
    return ShapedArray(_gather_out_shape(indices.shape, dn, slice_sizes), operand.dtype,
                       operand.weak_type)


def _gather_out_shape(indices_shape, dn, slice_sizes):
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    offsets = iter(s for d, s in enumerate(slice_sizes) if d not in dropped)
    batch = iter(indices_shape[:-1])
    out_rank = len(indices_shape) - 1 + len(dn.offset_dims)
    return tuple(next(offsets) if r in dn.offset_dims else next(batch) for r in range(out_rank))


def _batch_positions(result_rank, window_dims):
    """Result (or updates) dimensions that are not window dimensions, in order."""
    return [r for r in range(result_rank) if r not in window_dims]


def _window_starts(operand_shape, indices, index_map, window, batching, clip):
    """Per operand dimension, the start of each window (arrays of the batch shape), and
    a mask of the windows that lie wholly in bounds."""
    idx = indices.astype(np.int64)
    batch_shape = indices.shape[:-1]
    starts = [np.zeros(batch_shape, np.int64) for _ in operand_shape]
    in_bounds = np.ones(batch_shape, bool)
    for k, d in enumerate(index_map):
        upper = operand_shape[d] - window[d]
        start = idx[..., k]
        in_bounds &= (start >= 0) & (start <= upper)
        starts[d] = np.clip(start, 0, upper) if clip else start
    for operand_dim, index_dim in batching:
        shape = [1] * len(batch_shape)
        shape[index_dim] = batch_shape[index_dim]
        starts[operand_dim] = np.broadcast_to(
            np.arange(batch_shape[index_dim]).reshape(shape), batch_shape)
    return starts, in_bounds


def _window_grids(starts, window, batch_shape):
    """Index arrays of shape batch_shape + window addressing every window element."""
    nb, n = len(batch_shape), len(window)
    grids = []
    for d, start in enumerate(starts):
        offset_shape = (1,) * nb + tuple(w if j == d else 1 for j, w in enumerate(window))
        grid = start.reshape(batch_shape + (1,) * n) + np.arange(window[d]).reshape(offset_shape)
        grids.append(np.broadcast_to(grid, batch_shape + tuple(window)))
    return grids


def _gather_impl(operand, indices, *, dimension_numbers, slice_sizes, indices_are_sorted,
                 unique_indices, mode, fill_value):
    dn = dimension_numbers
    batch_shape = indices.shape[:-1]
    batching = list(zip(dn.operand_batching_dims, dn.start_indices_batching_dims))
    starts, in_bounds = _window_starts(operand.shape, indices, dn.start_index_map, slice_sizes,
                                       batching, clip=True)
    grids = _window_grids(starts, slice_sizes, batch_shape)
    windows = operand[tuple(grids)] if grids else np.broadcast_to(operand, batch_shape)
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    offset_sizes = tuple(s for d, s in enumerate(slice_sizes) if d not in dropped)
    windows = windows.reshape(batch_shape + offset_sizes)
    if mode == GatherScatterMode.FILL_OR_DROP:
        mask = in_bounds.reshape(batch_shape + (1,) * len(offset_sizes))
        windows = np.where(mask, windows, np.asarray(fill_value).astype(operand.dtype))
    # windows is (batch dims..., offset dims...); move the offset dims to offset_dims.
    out_rank = len(batch_shape) + len(offset_sizes)
    batch_pos = iter(range(len(batch_shape)))
    perm = [len(batch_shape) + dn.offset_dims.index(r) if r in dn.offset_dims
            else next(batch_pos) for r in range(out_rank)]
    return np.transpose(windows, perm).astype(operand.dtype, copy=False)


def _dims_text(dims):
    return "[" + ", ".join(str(int(d)) for d in dims) + "]"


def _dnums_attr(kind, fields, index_vector_dim):
    """`#stablehlo.gather<...>` / `#stablehlo.scatter<...>` (empty fields are left out)."""
    parts = [f"{k} = {_dims_text(v)}" for k, v in fields if v]
    parts.append(f"index_vector_dim = {int(index_vector_dim)}")
    return f"#stablehlo.{kind}<" + ", ".join(parts) + ">"


def _upper_bounds_const(ctx, indices_aval, bounds):
    """A constant of the indices' shape holding bounds[k] along the index vector, each
    capped at the indices dtype's maximum (larger bounds never bind then)."""
    cap = int(dtypes.iinfo(indices_aval.dtype).max)
    vec_aval = indices_aval.update(shape=(len(bounds),))
    vec = ctx.constant(np.array([min(b, cap) for b in bounds]).astype(indices_aval.dtype),
                       vec_aval)
    return ctx.op("stablehlo.broadcast_in_dim", [vec], [vec_aval], indices_aval,
                  {"broadcast_dimensions": i64_array([indices_aval.ndim - 1])})


def _in_bounds_mask(ctx, indices_aval, indices, bounds):
    """bool[batch shape]: every index component k lies in [0, bounds[k]]."""
    pred_aval = indices_aval.update(dtype=dtypes.bool_)
    zero = _broadcast_scalar(ctx, 0, indices_aval)
    upper = _upper_bounds_const(ctx, indices_aval, bounds)
    cmp = compare_type(indices_aval.dtype)
    ge = ctx.op("stablehlo.compare", [indices, zero], [indices_aval] * 2, pred_aval,
                {"comparison_direction": "#stablehlo<comparison_direction GE>",
                 "compare_type": cmp})
    le = ctx.op("stablehlo.compare", [indices, upper], [indices_aval] * 2, pred_aval,
                {"comparison_direction": "#stablehlo<comparison_direction LE>",
                 "compare_type": cmp})
    both = ctx.op("stablehlo.and", [ge, le], [pred_aval] * 2, pred_aval)
    scalar = ShapedArray((), dtypes.bool_)
    init = ctx.constant(np.array(True), scalar)
    out_aval = pred_aval.update(shape=indices_aval.shape[:-1])
    return ctx.op("stablehlo.reduce", [both, init], [pred_aval, scalar], out_aval,
                  {"dimensions": i64_array([indices_aval.ndim - 1])},
                  regions=[ctx.scalar_region(dtypes.bool_, 2, "stablehlo.and")])


def _gather_lowering(ctx, avals_in, avals_out, operand, indices, *, dimension_numbers,
                     slice_sizes, indices_are_sorted, unique_indices, mode, fill_value):
    operand_aval, indices_aval = avals_in
    out_aval = avals_out[0]
    dn = dimension_numbers
    if out_aval.size == 0:
        return _broadcast_scalar(ctx, 0, out_aval)
    dnums = _dnums_attr("gather", [
        ("offset_dims", dn.offset_dims), ("collapsed_slice_dims", dn.collapsed_slice_dims),
        ("operand_batching_dims", dn.operand_batching_dims),
        ("start_indices_batching_dims", dn.start_indices_batching_dims),
        ("start_index_map", dn.start_index_map)], indices_aval.ndim - 1)
    out = ctx.op("stablehlo.gather", [operand, indices], avals_in, out_aval,
                 {"dimension_numbers": dnums, "slice_sizes": i64_array(slice_sizes),
                  "indices_are_sorted": "true" if indices_are_sorted else "false"})
    if mode != GatherScatterMode.FILL_OR_DROP or not dn.start_index_map:
        return out
    # XLA clamps the starts; windows that were out of bounds are replaced by fill_value.
    bounds = [operand_aval.shape[d] - slice_sizes[d] for d in dn.start_index_map]
    mask = _in_bounds_mask(ctx, indices_aval, indices, bounds)
    mask_aval = ShapedArray(indices_aval.shape[:-1], dtypes.bool_)
    pred_aval = out_aval.update(dtype=dtypes.bool_)
    mask = ctx.op("stablehlo.broadcast_in_dim", [mask], [mask_aval], pred_aval,
                  {"broadcast_dimensions": i64_array(_batch_positions(out_aval.ndim,
                                                                      dn.offset_dims))})
    fill = _broadcast_scalar(ctx, fill_value, out_aval)
    return ctx.op("stablehlo.select", [mask, out, fill], [pred_aval, out_aval, out_aval],
                  out_aval)


gather_p = declare("gather", _gather_shape, _gather_impl, _gather_lowering)


# --- scatter family: scatter (replace), scatter_add/mul/min/max ----------------------

def _scatter_shape_rule(name, kinds):
    def rule(operand, indices, updates, *, dimension_numbers, indices_are_sorted,
             unique_indices, mode):
        dn = dimension_numbers
        if not isinstance(dn, ScatterDimensionNumbers):
            raise TypeError(f"{name}: dimension_numbers must be a ScatterDimensionNumbers, "
                            f"got {dn!r}")
        check_dtype(name, operand, kinds)
        check_same_dtypes(f"{name} (operand and updates)", [operand, updates])
        _check_indices(name, indices)
        batch_shape = indices.shape[:-1]
        if updates.ndim != len(batch_shape) + len(dn.update_window_dims):
            raise TypeError(f"{name}: updates {updates.str_short()} must have rank "
                            f"{len(batch_shape) + len(dn.update_window_dims)} (the "
                            f"{len(batch_shape)} batch dimensions of indices "
                            f"{indices.str_short()} plus {len(dn.update_window_dims)} "
                            f"update_window_dims)")
        _check_dims(name, "update_window_dims", dn.update_window_dims, updates.ndim, "updates")
        _check_dims(name, "inserted_window_dims", dn.inserted_window_dims, operand.ndim,
                    "operand")
        _check_disjoint(name, "inserted_window_dims", dn.inserted_window_dims,
                        "operand_batching_dims", dn.operand_batching_dims)
        _check_batching(name, operand, indices, dn.operand_batching_dims,
                        dn.scatter_indices_batching_dims, "scatter_indices_batching_dims")
        _check_index_map(name, "scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims,
                         operand, indices, dn.operand_batching_dims)
        dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
        if len(dn.update_window_dims) + len(dropped) != operand.ndim:
            raise TypeError(f"{name}: every operand dimension must be an update window dimension "
                            f"or inserted/batching; operand {operand.str_short()} has "
                            f"{operand.ndim} dimensions but update_window_dims="
                            f"{dn.update_window_dims}, inserted_window_dims="
                            f"{dn.inserted_window_dims}, operand_batching_dims="
                            f"{dn.operand_batching_dims}")
        window_operand_dims = [d for d in range(operand.ndim) if d not in dropped]
        for u, d in zip(dn.update_window_dims, window_operand_dims):
            if updates.shape[u] > operand.shape[d]:
                raise TypeError(f"{name}: updates {updates.str_short()} window dimension {u} "
                                f"(size {updates.shape[u]}) is larger than operand "
                                f"{operand.str_short()} dimension {d}")
        scatter_sizes = tuple(updates.shape[u] for u in
                              _batch_positions(updates.ndim, dn.update_window_dims))
        if scatter_sizes != batch_shape:
            raise TypeError(f"{name}: the scatter dimensions of updates {updates.str_short()} "
                            f"have sizes {scatter_sizes} but the batch dimensions of indices "
                            f"{indices.str_short()} have sizes {batch_shape}; they must agree")
        if not isinstance(mode, GatherScatterMode):
            raise TypeError(f"{name}: mode must be a GatherScatterMode, got {mode!r}")
        return ShapedArray(operand.shape, operand.dtype, operand.weak_type)
    return rule


def _scatter_window(operand_shape, updates_shape, dn):
    """The window size along each operand dimension."""
    dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    sizes = iter(updates_shape[u] for u in dn.update_window_dims)
    return tuple(1 if d in dropped else next(sizes) for d in range(len(operand_shape)))


def _scatter_impl(combine):
    """combine(out, index_tuple, values) writes values into out (None: replace)."""
    def impl(operand, indices, updates, *, dimension_numbers, indices_are_sorted,
             unique_indices, mode):
        dn = dimension_numbers
        batch_shape = indices.shape[:-1]
        window = _scatter_window(operand.shape, updates.shape, dn)
        # updates as (batch dims..., window dims in operand order with size-1 inserts)
        scatter_dims = _batch_positions(updates.ndim, dn.update_window_dims)
        values = np.transpose(updates, scatter_dims + list(dn.update_window_dims))
        values = values.reshape(batch_shape + window)
        batching = list(zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims))
        starts, in_bounds = _window_starts(operand.shape, indices,
                                           dn.scatter_dims_to_operand_dims, window, batching,
                                           clip=mode == GatherScatterMode.CLIP)
        if mode != GatherScatterMode.CLIP:
            values = values[in_bounds]
        grids = _window_grids(starts, window, batch_shape)
        if mode != GatherScatterMode.CLIP:
            grids = [g[in_bounds] for g in grids]
        out = np.array(operand, copy=True)
        if operand.ndim == 0:
            # One element; view it as shape (1,) so that every window addresses index 0.
            flat = out.reshape(1)
            _combine(combine, flat, (np.zeros(values.shape, np.int64),), values)
            return flat.reshape(())
        _combine(combine, out, tuple(grids), values)
        return out
    return impl


def _combine(ufunc, out, index, values):
    if ufunc is None:
        out[index] = values
    else:
        ufunc.at(out, index, values)


def _scatter_lowering(combiner):
    def lower(ctx, avals_in, avals_out, operand, indices, updates, *, dimension_numbers,
              indices_are_sorted, unique_indices, mode):
        operand_aval, indices_aval, updates_aval = avals_in
        dn = dimension_numbers
        if operand_aval.size == 0 or updates_aval.size == 0:
            return operand
        if mode == GatherScatterMode.CLIP and dn.scatter_dims_to_operand_dims:
            window = _scatter_window(operand_aval.shape, updates_aval.shape, dn)
            bounds = [operand_aval.shape[d] - window[d] for d in dn.scatter_dims_to_operand_dims]
            zero = _broadcast_scalar(ctx, 0, indices_aval)
            upper = _upper_bounds_const(ctx, indices_aval, bounds)
            indices = ctx.op("stablehlo.clamp", [zero, indices, upper], [indices_aval] * 3,
                             indices_aval)
        if operand_aval.ndim == 0:
            return _scatter_into_scalar(ctx, lower, avals_in, avals_out, operand, indices,
                                        updates, indices_are_sorted, unique_indices, mode)
        free = [d for d in range(operand_aval.ndim) if d not in dn.operand_batching_dims]
        if not dn.scatter_dims_to_operand_dims and free:
            # XLA's CPU scatter loses updates when the index vectors are empty; an index
            # vector holding one 0 (a start in bounds) addresses the same windows.
            indices_aval = indices_aval.update(shape=indices_aval.shape[:-1] + (1,))
            indices = _broadcast_scalar(ctx, 0, indices_aval)
            dn = dn._replace(scatter_dims_to_operand_dims=(free[0],))
            avals_in = [operand_aval, indices_aval, updates_aval]
        dnums = _dnums_attr("scatter", [
            ("update_window_dims", dn.update_window_dims),
            ("inserted_window_dims", dn.inserted_window_dims),
            ("input_batching_dims", dn.operand_batching_dims),
            ("scatter_indices_batching_dims", dn.scatter_indices_batching_dims),
            ("scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims)],
            indices_aval.ndim - 1)
        scalar = ShapedArray((), operand_aval.dtype)
        if combiner is None:
            region = ctx.region([scalar, scalar], lambda c, args: ([args[1]], [scalar]))
        else:
            region = ctx.scalar_region(operand_aval.dtype, 2, combiner)
        return ctx.op("stablehlo.scatter", [operand, indices, updates], avals_in, avals_out[0],
                      {"scatter_dimension_numbers": dnums,
                       "indices_are_sorted": "true" if indices_are_sorted else "false",
                       "unique_indices": "true" if unique_indices else "false"},
                      regions=[region])
    return lower


def _scatter_into_scalar(ctx, lower, avals_in, avals_out, operand, indices, updates,
                         indices_are_sorted, unique_indices, mode):
    """XLA rejects a rank-0 scatter operand: scatter into shape (1,) instead, each
    update becoming a window of size 1."""
    operand_aval, indices_aval, updates_aval = avals_in
    vec_aval = operand_aval.update(shape=(1,))
    windows_aval = updates_aval.update(shape=updates_aval.shape + (1,))
    vec = ctx.op("stablehlo.reshape", [operand], [operand_aval], vec_aval)
    windows = ctx.op("stablehlo.reshape", [updates], [updates_aval], windows_aval)
    out = lower(ctx, [vec_aval, indices_aval, windows_aval], [vec_aval], vec, indices, windows,
                dimension_numbers=ScatterDimensionNumbers((updates_aval.ndim,), (), ()),
                indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)
    return ctx.op("stablehlo.reshape", [out], [vec_aval], avals_out[0])


def _scatter_primitive(name, ufunc, combiner, kinds):
    return declare(name, _scatter_shape_rule(name, kinds), _scatter_impl(ufunc),
                   _scatter_lowering(combiner))


scatter_p = _scatter_primitive("scatter", None, None, ANY)
scatter_add_p = _scatter_primitive("scatter_add", np.add, "stablehlo.add", NUMBER)
scatter_mul_p = _scatter_primitive("scatter_mul", np.multiply, "stablehlo.multiply", NUMBER)
scatter_min_p = _scatter_primitive("scatter_min", np.minimum, "stablehlo.minimum",
                                   (BOOL, INT, FLOAT))
scatter_max_p = _scatter_primitive("scatter_max", np.maximum, "stablehlo.maximum",
                                   (BOOL, INT, FLOAT))
