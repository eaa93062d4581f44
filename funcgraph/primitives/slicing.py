"""Slicing and indexing primitives: dynamic_slice, dynamic_update_slice, gather and
the scatter family (the static slice, pad's inverse, is in structural.py and
importable from here too).

gather and scatter follow XLA's semantics with JAX's conventions: the index
vector is always the last dimension of the indices, and `mode` says what
out-of-bounds indices do (GatherScatterMode)."""
import enum
from typing import NamedTuple

import numpy as np

from funcgraph import core, dtypes
from funcgraph.array import scalar_array
from funcgraph.core import ShapedArray
from funcgraph.interpreters.ad_util import Zero, instantiate, is_zero, tangent_aval, zeros_of
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.transpose import is_undefined, transpose_rules
from funcgraph.lowering import i64_array
from funcgraph.primitives.base import broadcast_in_dim_p, move_batch_dim, reshape_p
from funcgraph.primitives.batching_helpers import batch_at, broadcast_batched
from funcgraph.primitives.elementwise import add_p, div_p, eq_p, mul_p, select_n_p, sub_p
from funcgraph.primitives.helpers import (
    ANY, BOOL, FLOAT, INT, NUMBER, aval_of, check_dtype, check_same_dtypes, compare_type,
    declare, inserted, shift_dims)
from funcgraph.primitives.structural import (  # noqa: F401 (slice_p is re-exported)
    concatenate_p, iota_p, slice_p)


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


def _full(value, aval):
    """A value of type aval filled with `value` (bound, so it is traced like any op)."""
    scalar = scalar_array(value, aval.dtype)
    if not aval.shape:
        return scalar
    return broadcast_in_dim_p.bind(scalar, shape=aval.shape, broadcast_dimensions=())


def _select(pred, on_false, on_true):
    return select_n_p.bind(pred, on_false, on_true)


def _broadcast_scalar(ctx, value, aval):
    """A constant scalar `value` broadcast to `aval` (works for zero-size shapes too)."""
    scalar = aval.update(shape=())
    const = ctx.constant(np.asarray(value).astype(aval.dtype), scalar)
    if not aval.shape:
        return const
    return ctx.op("stablehlo.broadcast_in_dim", [const], [scalar], aval,
                  {"broadcast_dimensions": "array<i64>"})


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


def _zero_tangent_of(out):
    return Zero(tangent_aval(core.get_aval(out)))


def _dynamic_slice_jvp(primals, tangents, slice_sizes):
    # The start indices are integers: only the operand has a tangent.
    x, *indices = primals
    out = dynamic_slice_p.bind(x, *indices, slice_sizes=slice_sizes)
    if is_zero(tangents[0]):
        return out, _zero_tangent_of(out)
    return out, dynamic_slice_p.bind(tangents[0], *indices, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct, x, *indices, slice_sizes):
    if is_zero(ct) or not is_undefined(x):
        return [None] * (1 + len(indices))
    ct_x = dynamic_update_slice_p.bind(zeros_of(x.aval), ct, *indices)
    return [ct_x] + [None] * len(indices)


jvp_rules[dynamic_slice_p] = _dynamic_slice_jvp
transpose_rules[dynamic_slice_p] = _dynamic_slice_transpose


def _zero_index(indices):
    """A start index 0 for an inserted batch axis, of the other start indices' dtype."""
    dtype = core.get_aval(indices[0]).dtype if indices else dtypes.int32
    return scalar_array(0, dtype)


def _stacked_indices(indices, dims, size):
    """Scalar start indices (some batched, as shape (size,)) as one int array of shape
    (size, len(indices)): the index vectors of a gather or scatter, batch axis 0."""
    columns = []
    for i, d in core.safe_zip(indices, dims):
        bdims = () if d is None else (0,)
        columns.append(broadcast_in_dim_p.bind(i, shape=(size, 1), broadcast_dimensions=bdims))
    if len(columns) == 1:
        return columns[0]
    return concatenate_p.bind(*columns, dimension=1)


def _dynamic_slice_batch(axis_data, args, dims, slice_sizes):
    """Unbatched starts: a dynamic_slice taking the whole batch axis.  Batched starts:
    a gather of one window per lane (starts clamped like dynamic_slice's)."""
    x, *indices = args
    xd, *index_dims = dims
    if all(d is None for d in index_dims):
        indices = inserted(indices, xd, _zero_index(indices))
        return dynamic_slice_p.bind(x, *indices, slice_sizes=inserted(slice_sizes, xd,
                                                                      axis_data.size)), xd
    vectors = _stacked_indices(indices, index_dims, axis_data.size)
    every = tuple(range(len(indices)))
    dn = GatherDimensionNumbers(offset_dims=every, collapsed_slice_dims=(),
                                start_index_map=every)
    return _gather_batch(axis_data, [x, vectors], [xd, 0], dimension_numbers=dn,
                         slice_sizes=tuple(slice_sizes), indices_are_sorted=True,
                         unique_indices=True, mode=GatherScatterMode.CLIP, fill_value=None)


batching_rules[dynamic_slice_p] = _dynamic_slice_batch


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


def _dynamic_update_slice_jvp(primals, tangents):
    x, update, *indices = primals
    out = dynamic_update_slice_p.bind(x, update, *indices)
    t_x, t_update = tangents[:2]
    if is_zero(t_x) and is_zero(t_update):
        return out, _zero_tangent_of(out)
    return out, dynamic_update_slice_p.bind(instantiate(t_x), instantiate(t_update), *indices)


def _dynamic_update_slice_transpose(ct, x, update, *indices):
    """Operand: ct with the updated window zeroed; update: that window of ct."""
    if is_zero(ct):
        return [None] * (2 + len(indices))
    update_aval = aval_of(update)
    ct_x = ct_update = None
    if is_undefined(x):
        ct_x = dynamic_update_slice_p.bind(ct, zeros_of(update_aval), *indices)
    if is_undefined(update):
        ct_update = dynamic_slice_p.bind(ct, *indices, slice_sizes=update_aval.shape)
    return [ct_x, ct_update] + [None] * len(indices)


jvp_rules[dynamic_update_slice_p] = _dynamic_update_slice_jvp
transpose_rules[dynamic_update_slice_p] = _dynamic_update_slice_transpose


def _dynamic_update_slice_batch(axis_data, args, dims):
    """Unbatched starts: one dynamic_update_slice over the whole batch axis (operand
    and update both need it).  Batched starts: a scatter of one window per lane."""
    x, update, *indices = args
    xd, ud, *index_dims = dims
    if all(d is None for d in index_dims):
        target = ud if xd is None else xd
        x = batch_at(x, xd, axis_data.size, target)
        update = batch_at(update, ud, axis_data.size, target)
        indices = inserted(indices, target, _zero_index(indices))
        return dynamic_update_slice_p.bind(x, update, *indices), target
    vectors = _stacked_indices(indices, index_dims, axis_data.size)
    every = tuple(range(len(indices)))
    dn = ScatterDimensionNumbers(update_window_dims=every, inserted_window_dims=(),
                                 scatter_dims_to_operand_dims=every)
    rule = batching_rules[scatter_p]
    return rule(axis_data, [x, vectors, update], [xd, 0, ud], dimension_numbers=dn,
                indices_are_sorted=True, unique_indices=True, mode=GatherScatterMode.CLIP)


batching_rules[dynamic_update_slice_p] = _dynamic_update_slice_batch


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


def _gather_jvp(primals, tangents, *, mode, fill_value, **params):
    x, indices = primals
    out = gather_p.bind(x, indices, mode=mode, fill_value=fill_value, **params)
    if is_zero(tangents[0]):
        return out, _zero_tangent_of(out)
    # Out-of-bounds windows hold a constant fill: their tangent is 0.
    t_fill = 0 if mode == GatherScatterMode.FILL_OR_DROP else None
    return out, gather_p.bind(tangents[0], indices, mode=mode, fill_value=t_fill, **params)


def _gather_transpose(ct, x, indices, *, dimension_numbers, slice_sizes, indices_are_sorted,
                      unique_indices, mode, fill_value):
    """Add each gathered window of ct back where it came from (a scatter_add into
    zeros; windows that were filled are dropped)."""
    if is_zero(ct) or not is_undefined(x):
        return [None, None]
    dn = dimension_numbers
    scatter_dn = ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims, inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims)
    ct_x = scatter_add_p.bind(zeros_of(x.aval), indices, ct, dimension_numbers=scatter_dn,
                              indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode=mode)
    return [ct_x, None]


jvp_rules[gather_p] = _gather_jvp
transpose_rules[gather_p] = _gather_transpose


def _indices_batch_off_vector(indices, d):
    """Batched indices whose batch axis is not the last one (the index vector's)."""
    ndim = core.get_aval(indices).ndim
    if d == ndim - 1:
        return move_batch_dim(indices, d, ndim - 2), ndim - 2
    return indices, d


def _new_position(rank, dims, k, prefer):
    """Where a new dimension goes among `rank` dimensions so that it comes k-th among
    the (sorted) `dims` of its kind: as near to `prefer` as that allows."""
    lo = dims[k - 1] + 1 if k > 0 else 0
    hi = dims[k] if k < len(dims) else rank
    return min(max(prefer, lo), hi)


def _pair_batching(operand_dims, index_dims, od, idd):
    """Batching dimension lists with the pair (od, idd) added (operand dims stay sorted)."""
    operand_dims, index_dims = shift_dims(operand_dims, od), shift_dims(index_dims, idd)
    pos = sum(1 for b in operand_dims if b < od)
    return inserted(operand_dims, pos, od), inserted(index_dims, pos, idd)


def _gather_batch(axis_data, args, dims, *, dimension_numbers, slice_sizes, indices_are_sorted,
                  unique_indices, mode, fill_value):
    """Operand batched only: its batch axis is one more offset (window) axis, taken
    whole.  Indices batched only: one more batch axis of the indices.  Both: a pair of
    operand/indices batching dimensions.  Indices move only when their batch axis is
    the last one (the index vector's place)."""
    operand, indices = args
    od, idd = dims
    dn = dimension_numbers
    params = dict(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                  mode=mode, fill_value=fill_value)
    if idd is None:
        dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
        k = sum(1 for j in range(od) if j not in dropped)
        lane_rank = core.get_aval(indices).ndim - 1 + len(dn.offset_dims)
        out_dim = _new_position(lane_rank, dn.offset_dims, k, od)
        new_dn = dn._replace(
            offset_dims=inserted(shift_dims(dn.offset_dims, out_dim), k, out_dim),
            collapsed_slice_dims=shift_dims(dn.collapsed_slice_dims, od),
            start_index_map=shift_dims(dn.start_index_map, od),
            operand_batching_dims=shift_dims(dn.operand_batching_dims, od))
        sizes = inserted(slice_sizes, od, axis_data.size)
        return gather_p.bind(operand, indices, dimension_numbers=new_dn, slice_sizes=sizes,
                             **params), out_dim
    indices, idd = _indices_batch_off_vector(indices, idd)
    lane_rank = core.get_aval(indices).ndim - 2 + len(dn.offset_dims)
    out_dim = _new_position(lane_rank, _batch_positions(lane_rank, dn.offset_dims), idd,
                            idd if od is None else od)
    offset_dims = shift_dims(dn.offset_dims, out_dim)
    if od is None:
        # Lanes may share indices: the whole index set is neither sorted nor unique.
        params.update(indices_are_sorted=False, unique_indices=False)
        new_dn = dn._replace(offset_dims=offset_dims, start_indices_batching_dims=shift_dims(
            dn.start_indices_batching_dims, idd))
        return gather_p.bind(operand, indices, dimension_numbers=new_dn,
                             slice_sizes=tuple(slice_sizes), **params), out_dim
    operand_bdims, index_bdims = _pair_batching(dn.operand_batching_dims,
                                                dn.start_indices_batching_dims, od, idd)
    new_dn = GatherDimensionNumbers(
        offset_dims=offset_dims, collapsed_slice_dims=shift_dims(dn.collapsed_slice_dims, od),
        start_index_map=shift_dims(dn.start_index_map, od), operand_batching_dims=operand_bdims,
        start_indices_batching_dims=index_bdims)
    sizes = inserted(slice_sizes, od, min(1, axis_data.size))
    return gather_p.bind(operand, indices, dimension_numbers=new_dn, slice_sizes=sizes,
                         **params), out_dim


batching_rules[gather_p] = _gather_batch


# --- scatter family: scatter (replace), scatter_add/mul/min/max ----------------------

def scatter_shape_rule(name, kinds):
    """The shape rule of a scatter-family primitive (further parameters, such as
    scatter_apply's update_jaxpr, do not change the type)."""
    def rule(operand, indices, updates, *, dimension_numbers, indices_are_sorted,
             unique_indices, mode, **_):
        dn = dimension_numbers
        if not isinstance(dn, ScatterDimensionNumbers):
            raise TypeError(f"{name}: dimension_numbers must be a ScatterDimensionNumbers, "
                            f"got {dn!r}")
        if not (kinds is ANY and isinstance(operand.dtype, dtypes.ExtendedDType)):
            check_dtype(name, operand, kinds)  # scatter (replace) also writes key arrays
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


def scatter_lowering(combiner):
    """The lowering of a scatter-family primitive: combiner is the HLO op that merges an
    update into an element, None for replacing it, or a function (ctx, scalar aval,
    params) -> region for a combination of the primitive's own (scatter_apply)."""
    def lower(ctx, avals_in, avals_out, operand, indices, updates, *, dimension_numbers,
              indices_are_sorted, unique_indices, mode, **region_params):
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
                                        updates, indices_are_sorted, unique_indices, mode,
                                        region_params)
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
        elif callable(combiner):
            region = combiner(ctx, scalar, region_params)
        else:
            region = ctx.scalar_region(operand_aval.dtype, 2, combiner)
        return ctx.op("stablehlo.scatter", [operand, indices, updates], avals_in, avals_out[0],
                      {"scatter_dimension_numbers": dnums,
                       "indices_are_sorted": "true" if indices_are_sorted else "false",
                       "unique_indices": "true" if unique_indices else "false"},
                      regions=[region])
    return lower


def _scatter_into_scalar(ctx, lower, avals_in, avals_out, operand, indices, updates,
                         indices_are_sorted, unique_indices, mode, region_params):
    """XLA rejects a rank-0 scatter operand: scatter into shape (1,) instead, each
    update becoming a window of size 1."""
    operand_aval, indices_aval, updates_aval = avals_in
    vec_aval = operand_aval.update(shape=(1,))
    windows_aval = updates_aval.update(shape=updates_aval.shape + (1,))
    vec = ctx.op("stablehlo.reshape", [operand], [operand_aval], vec_aval)
    windows = ctx.op("stablehlo.reshape", [updates], [updates_aval], windows_aval)
    out = lower(ctx, [vec_aval, indices_aval, windows_aval], [vec_aval], vec, indices, windows,
                dimension_numbers=ScatterDimensionNumbers((updates_aval.ndim,), (), ()),
                indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode,
                **region_params)
    return ctx.op("stablehlo.reshape", [out], [vec_aval], avals_out[0])


def _scatter_primitive(name, ufunc, combiner, kinds):
    return declare(name, scatter_shape_rule(name, kinds), _scatter_impl(ufunc),
                   scatter_lowering(combiner))


def scatter_batch_rule(prim):
    """Batching rule of a scatter-family primitive.  The result is batched, so the
    operand is (broadcast if it was not).  Indices unbatched: the batch axis is one more
    window axis of operand and updates (updates broadcast if unbatched).  Indices
    batched: a pair of operand/indices batching dimensions, the updates' batch axis a
    scatter axis.  Only the indices or updates move, and only when their batch axis is
    where the dimension numbers cannot put it."""
    def rule(axis_data, args, dims, *, dimension_numbers, indices_are_sorted, unique_indices,
             mode, **rest):
        operand, indices, updates = args
        od, idd, ud = dims
        size, dn = axis_data.size, dimension_numbers
        if od is None:
            operand, od = broadcast_batched(operand, size, 0), 0
        lane_updates_rank = core.get_aval(updates).ndim - (ud is not None)
        window = dn.update_window_dims
        if idd is None:
            dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
            k = sum(1 for j in range(od) if j not in dropped)
            target = _new_position(lane_updates_rank, window, k, od if ud is None else ud)
            updates = batch_at(updates, ud, size, target)
            new_dn = dn._replace(
                update_window_dims=inserted(shift_dims(window, target), k, target),
                inserted_window_dims=shift_dims(dn.inserted_window_dims, od),
                scatter_dims_to_operand_dims=shift_dims(dn.scatter_dims_to_operand_dims, od),
                operand_batching_dims=shift_dims(dn.operand_batching_dims, od))
        else:
            scatter_positions = _batch_positions(lane_updates_rank, window)
            if ud is None:
                indices, idd = _indices_batch_off_vector(indices, idd)
                ud = _new_position(lane_updates_rank, scatter_positions, idd, idd)
                updates = broadcast_batched(updates, size, ud)
            else:
                # The indices' batch axis must be the updates' among the scatter axes.
                rank = sum(1 for u in scatter_positions if u < ud)
                indices, idd = move_batch_dim(indices, idd, rank), rank
            operand_bdims, index_bdims = _pair_batching(
                dn.operand_batching_dims, dn.scatter_indices_batching_dims, od, idd)
            new_dn = ScatterDimensionNumbers(
                update_window_dims=shift_dims(window, ud),
                inserted_window_dims=shift_dims(dn.inserted_window_dims, od),
                scatter_dims_to_operand_dims=shift_dims(dn.scatter_dims_to_operand_dims, od),
                operand_batching_dims=operand_bdims, scatter_indices_batching_dims=index_bdims)
        return prim.bind(operand, indices, updates, dimension_numbers=new_dn,
                         indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                         mode=mode, **rest), od
    return rule


# Differentiation helpers shared by the scatter family.

def _gather_windows(x, indices, updates_shape, dn, mode, fill_value=0,
                    indices_are_sorted=False, unique_indices=False):
    """The inverse of a scatter: from x (of the operand's shape), the window each
    update addresses, shaped like the updates.  Dropped (out-of-bounds) windows read
    `fill_value` in FILL_OR_DROP mode."""
    window = _scatter_window(core.get_aval(x).shape, updates_shape, dn)
    gather_dn = GatherDimensionNumbers(
        offset_dims=dn.update_window_dims, collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims)
    fill = fill_value if mode == GatherScatterMode.FILL_OR_DROP else None
    return gather_p.bind(x, indices, dimension_numbers=gather_dn, slice_sizes=window,
                         indices_are_sorted=indices_are_sorted,
                         unique_indices=unique_indices, mode=mode, fill_value=fill)


def _scatter_winners(operand_aval, indices, updates_aval, dn, mode):
    """Which elements survive a scatter (replace) with possibly repeated indices:
    (operand_kept, update_won), boolean masks of the operand's and the updates' shapes.

    Each update window gets an id (1, 2, ...); the ids are scattered like the updates,
    and gathered back: an update element won where it reads back its own id, and an
    operand element was kept where no id landed.  This follows whichever update the
    scatter implementation lets win (as JAX's rule does)."""
    ids_shape = tuple(1 if d in dn.update_window_dims else n
                      for d, n in enumerate(updates_aval.shape))
    count = int(np.prod(ids_shape, dtype=np.int64))
    id_dtype = dtypes.int32 if count < 2 ** 31 - 1 else np.dtype(np.int64)
    ids = iota_p.bind(dtype=id_dtype, shape=(count,), dimension=0)
    ids = add_p.bind(reshape_p.bind(ids, new_sizes=ids_shape, dimensions=None),
                     scalar_array(1, id_dtype))
    ids = broadcast_in_dim_p.bind(ids, shape=updates_aval.shape,
                                  broadcast_dimensions=tuple(range(updates_aval.ndim)))
    zero_ids = _full(0, operand_aval.update(dtype=id_dtype, weak_type=False))
    scattered = scatter_p.bind(zero_ids, indices, ids, dimension_numbers=dn,
                               indices_are_sorted=False, unique_indices=False, mode=mode)
    # Dropped windows read id 0, which no update has.
    read_back = _gather_windows(scattered, indices, updates_aval.shape, dn, mode, fill_value=0)
    return eq_p.bind(scattered, zero_ids), eq_p.bind(read_back, ids)


scatter_p = _scatter_primitive("scatter", None, None, ANY)


def _scatter_jvp(primals, tangents, **params):
    """With unique indices scatter is linear in (operand, updates) jointly.  Otherwise
    (JAX's scheme) the winning elements are found with ids, and both the primal and the
    tangent are scatter_adds of the masked values, so they agree on which update won."""
    x, indices, updates = primals
    t_x, _, t_updates = tangents
    if params["unique_indices"]:
        out = scatter_p.bind(x, indices, updates, **params)
        if is_zero(t_x) and is_zero(t_updates):
            return out, _zero_tangent_of(out)
        return out, scatter_p.bind(instantiate(t_x), indices, instantiate(t_updates), **params)
    x_aval, u_aval = core.get_aval(x), core.get_aval(updates)
    kept, won = _scatter_winners(x_aval, indices, u_aval, params["dimension_numbers"],
                                 params["mode"])

    def masked(mask, value, aval):
        return zeros_of(aval) if is_zero(value) else _select(mask, zeros_of(aval), value)
    out = scatter_add_p.bind(masked(kept, x, x_aval), indices, masked(won, updates, u_aval),
                             **params)
    if is_zero(t_x) and is_zero(t_updates):
        return out, _zero_tangent_of(out)
    t_out = scatter_add_p.bind(masked(kept, t_x, tangent_aval(x_aval)), indices,
                               masked(won, t_updates, tangent_aval(u_aval)), **params)
    return out, t_out


def _scatter_transpose(ct, x, indices, updates, **params):
    """Operand: ct with the scattered windows zeroed.  Updates: their windows of ct,
    each element going only to the update that won it (all of them, when indices are
    unique)."""
    if is_zero(ct):
        return [None, None, None]
    u_aval = aval_of(updates)
    ct_aval = core.get_aval(ct)
    ct_x = ct_updates = None
    if is_undefined(x):
        ct_x = scatter_p.bind(ct, indices, zeros_of(u_aval.update(dtype=ct_aval.dtype)),
                              **params)
    if is_undefined(updates):
        dn, mode = params["dimension_numbers"], params["mode"]
        ct_updates = _gather_windows(ct, indices, u_aval.shape, dn, mode,
                                     indices_are_sorted=params["indices_are_sorted"],
                                     unique_indices=params["unique_indices"])
        if not params["unique_indices"]:
            _, won = _scatter_winners(aval_of(x), indices, u_aval, dn, mode)
            ct_updates = _select(won, zeros_of(core.get_aval(ct_updates)), ct_updates)
    return [ct_x, None, ct_updates]


jvp_rules[scatter_p] = _scatter_jvp
transpose_rules[scatter_p] = _scatter_transpose
batching_rules[scatter_p] = scatter_batch_rule(scatter_p)

scatter_add_p = _scatter_primitive("scatter_add", np.add, "stablehlo.add", NUMBER)


def _scatter_add_jvp(primals, tangents, **params):
    x, indices, updates = primals
    t_x, _, t_updates = tangents
    out = scatter_add_p.bind(x, indices, updates, **params)
    if is_zero(t_updates):
        return out, t_x
    return out, scatter_add_p.bind(instantiate(t_x), indices, t_updates, **params)


def _scatter_add_transpose(ct, x, indices, updates, **params):
    """Operand: ct itself; updates: the windows of ct they were added to (dropped
    updates get 0)."""
    if is_zero(ct):
        return [None, None, None]
    ct_updates = None
    if is_undefined(updates):
        ct_updates = _gather_windows(ct, indices, updates.aval.shape,
                                     params["dimension_numbers"], params["mode"],
                                     indices_are_sorted=params["indices_are_sorted"],
                                     unique_indices=params["unique_indices"])
    return [ct if is_undefined(x) else None, None, ct_updates]


jvp_rules[scatter_add_p] = _scatter_add_jvp
transpose_rules[scatter_add_p] = _scatter_add_transpose
batching_rules[scatter_add_p] = scatter_batch_rule(scatter_add_p)

scatter_mul_p = _scatter_primitive("scatter_mul", np.multiply, "stablehlo.multiply", NUMBER)

_SCATTER_MUL_UNIQUE = ("scatter_mul: derivatives with respect to the updates are only "
                       "implemented when unique_indices=True (as in JAX); with repeated "
                       "indices the product of several updates has no rule here. Pass "
                       "unique_indices=True if the indices are unique, or differentiate "
                       "only with respect to the operand")


def _scatter_mul_jvp(primals, tangents, **params):
    """d out = scatter_mul(d x, i, u) + x * scatter_add(0, i, d u) (the second term
    assumes each operand element is multiplied by at most one update)."""
    x, indices, updates = primals
    t_x, _, t_updates = tangents
    out = scatter_mul_p.bind(x, indices, updates, **params)
    terms = []
    if not is_zero(t_x):
        terms.append(scatter_mul_p.bind(t_x, indices, updates, **params))
    if not is_zero(t_updates):
        if not params["unique_indices"]:
            raise NotImplementedError(_SCATTER_MUL_UNIQUE)
        added = scatter_add_p.bind(zeros_of(tangent_aval(core.get_aval(x))), indices,
                                   t_updates, **params)
        terms.append(mul_p.bind(x, added))
    return out, terms[0] if len(terms) == 1 else add_p.bind(*terms)


def _scatter_mul_transpose(ct, x, indices, updates, **params):
    """Linear in the operand (the updates are a residual); in the updates only for
    unique indices, with the operand the residual."""
    if is_zero(ct):
        return [None, None, None]
    ct_x = ct_updates = None
    if is_undefined(x):
        ct_x = scatter_mul_p.bind(ct, indices, updates, **params)
    if is_undefined(updates):
        if not params["unique_indices"]:
            raise NotImplementedError(_SCATTER_MUL_UNIQUE)
        ct_updates = _gather_windows(mul_p.bind(ct, x), indices, updates.aval.shape,
                                     params["dimension_numbers"], params["mode"])
    return [ct_x, None, ct_updates]


jvp_rules[scatter_mul_p] = _scatter_mul_jvp
transpose_rules[scatter_mul_p] = _scatter_mul_transpose
batching_rules[scatter_mul_p] = scatter_batch_rule(scatter_mul_p)


def _scatter_extremal_jvp(prim, primals, tangents, **params):
    """scatter_min/max (JAX's rule): where several values tie for the result (updates
    equal to it, and the operand if it was kept), the tangent is their average."""
    x, indices, updates = primals
    t_x, _, t_updates = tangents
    out = prim.bind(x, indices, updates, **params)
    dn, mode = params["dimension_numbers"], params["mode"]
    x_aval, u_aval = core.get_aval(x), core.get_aval(updates)

    def windows(v, fill):
        return _gather_windows(v, indices, u_aval.shape, dn, mode, fill_value=fill)

    def per_window_count(values):
        # How many of `values` (one per update element) landed on each element, read
        # back per update; dropped updates read 1 so no division by zero appears.
        return windows(scatter_add_p.bind(zeros_of(x_aval), indices, values, **params), 1)

    target = windows(out, np.nan)          # dropped updates never match NaN
    won = eq_p.bind(updates, target)
    kept = eq_p.bind(windows(x, np.nan), target)
    ones, zeros = _full(1, u_aval), zeros_of(u_aval)
    num_won = per_window_count(_select(won, zeros, ones))
    num_refs = per_window_count(ones)
    share_kept = div_p.bind(ones, add_p.bind(num_won, ones))
    updates_coef = _select(won, zeros, _select(kept, div_p.bind(ones, num_won), share_kept))
    # Each of the num_refs windows over an element removes 1/num_refs of the operand's
    # tangent and gives back its share, so the operand keeps exactly its share.
    operand_coef = div_p.bind(sub_p.bind(_select(kept, zeros, share_kept), ones), num_refs)
    terms = []
    if not is_zero(t_x):
        terms.append(mul_p.bind(windows(t_x, 0), operand_coef))
    if not is_zero(t_updates):
        terms.append(mul_p.bind(t_updates, updates_coef))
    if not terms:
        return out, _zero_tangent_of(out)
    t_windows = terms[0] if len(terms) == 1 else add_p.bind(*terms)
    return out, scatter_add_p.bind(instantiate(t_x), indices, t_windows, **params)


scatter_min_p = _scatter_primitive("scatter_min", np.minimum, "stablehlo.minimum",
                                   (BOOL, INT, FLOAT))
jvp_rules[scatter_min_p] = lambda primals, tangents, **params: _scatter_extremal_jvp(
    scatter_min_p, primals, tangents, **params)
batching_rules[scatter_min_p] = scatter_batch_rule(scatter_min_p)

scatter_max_p = _scatter_primitive("scatter_max", np.maximum, "stablehlo.maximum",
                                   (BOOL, INT, FLOAT))
jvp_rules[scatter_max_p] = lambda primals, tangents, **params: _scatter_extremal_jvp(
    scatter_max_p, primals, tangents, **params)
batching_rules[scatter_max_p] = scatter_batch_rule(scatter_max_p)
