"""Shape-changing primitives: squeeze, expand_dims, rev, pad, slice, concatenate and
iota.  broadcast_in_dim, reshape and transpose, which every family's rules bind, are
in base.py (and importable from here too)."""
import numpy as np

from funcgraph import core, dtypes, shape_poly
from funcgraph.array import scalar_array
from funcgraph.core import ShapedArray
from funcgraph.interpreters.ad_util import Zero, instantiate, is_zero, tangent_aval
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import direct_impls
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.transpose import is_undefined, transpose_rules
from funcgraph.ir import simplify_rules
from funcgraph.lowering import i64_array
from funcgraph.primitives.base import (  # noqa: F401 (re-exported)
    broadcast_in_dim_p, reduce_sum_p, reshape_p, transpose_p)
from funcgraph.primitives.batching_helpers import batch_at
from funcgraph.primitives.elementwise import select_n_p, sub_p
from funcgraph.primitives.helpers import (
    aval_of, between, check_same_dtypes, declare, deflinear_unary, inserted, shape_tuple,
    shift_dims, unchanged_operand)


def _sum_all(x):
    return reduce_sum_p.bind(x, axes=tuple(range(core.get_aval(x).ndim)))


# --- squeeze / expand_dims: remove or insert dimensions of size 1 ---------------

def _squeeze_shape(x, dimensions):
    for d in dimensions:
        if not 0 <= d < x.ndim or x.shape[d] != 1:
            raise TypeError(f"squeeze: dimension {d} of {x.str_short()} is not of size 1")
    shape = tuple(s for i, s in enumerate(x.shape) if i not in dimensions)
    return ShapedArray(shape, x.dtype, x.weak_type)


squeeze_p = declare(
    "squeeze", _squeeze_shape, lambda x, dimensions: np.squeeze(x, tuple(dimensions)),
    lambda ctx, ai, ao, x, dimensions: ctx.op("stablehlo.reshape", [x], ai, ao[0]))
# The transposes of squeeze and expand_dims are each other (defined once both exist).
core.symbolic_dims_supported.add(squeeze_p)


def _squeeze_batch(axis_data, args, dims, dimensions):
    (x,), (d,) = args, dims
    out_dim = d - sum(1 for k in dimensions if k < d)
    return squeeze_p.bind(x, dimensions=shift_dims(dimensions, d)), out_dim


batching_rules[squeeze_p] = _squeeze_batch
simplify_rules[squeeze_p] = unchanged_operand


def _expand_dims_shape(x, dimensions):
    ndim = x.ndim + len(dimensions)
    if any(not 0 <= d < ndim for d in dimensions) or len(set(dimensions)) != len(dimensions):
        raise TypeError(f"expand_dims: dimensions {dimensions} invalid for a result of rank {ndim}")
    shape, it = [], iter(x.shape)
    for i in range(ndim):
        shape.append(1 if i in dimensions else next(it))
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


expand_dims_p = declare(
    "expand_dims", _expand_dims_shape, lambda x, dimensions: np.expand_dims(x, tuple(dimensions)),
    lambda ctx, ai, ao, x, dimensions: ctx.op("stablehlo.reshape", [x], ai, ao[0]))
core.symbolic_dims_supported.add(expand_dims_p)
deflinear_unary(squeeze_p, lambda ct, aval, dimensions: expand_dims_p.bind(
    ct, dimensions=tuple(sorted(dimensions))))
deflinear_unary(expand_dims_p, lambda ct, aval, dimensions: squeeze_p.bind(
    ct, dimensions=tuple(sorted(dimensions))))


def _expand_dims_batch(axis_data, args, dims, dimensions):
    """The batch axis stays between the result axes of its operand neighbours."""
    (x,), (d,) = args, dims
    out_ndim = core.get_aval(x).ndim - 1 + len(dimensions)
    kept = [i for i in range(out_ndim) if i not in dimensions]
    out_dim = between(kept, d, out_ndim, d)
    return expand_dims_p.bind(x, dimensions=shift_dims(dimensions, out_dim)), out_dim


batching_rules[expand_dims_p] = _expand_dims_batch
simplify_rules[expand_dims_p] = unchanged_operand


# --- rev: reverse the order of elements along some dimensions -------------------

def _rev_shape(x, dimensions):
    dims = tuple(dimensions)
    if len(set(dims)) != len(dims) or any(not 0 <= d < x.ndim for d in dims):
        raise TypeError(f"rev: dimensions {dims} are invalid for operand {x.str_short()}; each "
                        f"must be in [0, {x.ndim}) and appear once")
    return x


rev_p = declare(
    "rev", _rev_shape, lambda x, dimensions: np.flip(x, tuple(dimensions)),
    lambda ctx, ai, ao, x, dimensions: ctx.op("stablehlo.reverse", [x], ai, ao[0],
                                              {"dimensions": i64_array(dimensions)}))
deflinear_unary(rev_p, lambda ct, aval, dimensions: rev_p.bind(ct, dimensions=dimensions))


def _rev_batch(axis_data, args, dims, dimensions):
    (x,), (d,) = args, dims
    return rev_p.bind(x, dimensions=shift_dims(dimensions, d)), d


def _rev_simplify(invars, params, outvar, producers):
    """Reversing dimensions of size 0 or 1 changes nothing."""
    if any(outvar.aval.shape[d] > 1 for d in params["dimensions"]):
        return None
    return unchanged_operand(invars, params, outvar, producers)


batching_rules[rev_p] = _rev_batch
simplify_rules[rev_p] = _rev_simplify


# --- pad: (low, high, interior) padding per dimension; low/high may be negative ----

def _padded_size(size, low, high, interior):
    # (No interior term without interior padding: max() of a symbolic size is undecided.)
    return low + high + size + (max(size - 1, 0) * interior if interior else 0)


def _pad_shape(x, padding_value, padding_config):
    check_same_dtypes("pad (operand and padding_value)", [x, padding_value])
    if padding_value.shape != ():
        raise TypeError(f"pad: padding_value must be a scalar, got {padding_value.str_short()}")
    if len(padding_config) != x.ndim:
        raise TypeError(f"pad: padding_config {padding_config} needs one (low, high, interior) "
                        f"triple per dimension of operand {x.str_short()}")
    shape = []
    for size, triple in zip(x.shape, padding_config):
        if len(triple) != 3:
            raise TypeError(f"pad: each entry of padding_config must be (low, high, interior), "
                            f"got {triple!r}")
        low, high, interior = triple
        if type(interior) is not int:
            raise NotImplementedError(f"pad: interior padding must be constant, got "
                                      f"padding_config {padding_config}")
        if interior < 0:
            raise ValueError(f"pad: interior padding must be >= 0, got padding_config "
                             f"{padding_config}")
        out = _padded_size(size, low, high, interior)
        if out < 0:
            raise ValueError(f"pad: padding_config {padding_config} gives a negative dimension "
                             f"size {out} for operand {x.str_short()}")
        shape.append(out)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _pad_impl(x, padding_value, padding_config):
    # Pad with the non-negative parts of low/high (and interior), then crop the negative parts.
    full_shape, place, crop = [], [], []
    for size, (low, high, interior) in zip(x.shape, padding_config):
        lo, hi = max(low, 0), max(high, 0)
        full = _padded_size(size, lo, hi, interior)
        full_shape.append(full)
        place.append(slice(lo, lo + _padded_size(size, 0, 0, interior), interior + 1))
        crop.append(slice(lo - low, full - (hi - high)))
    out = np.full(full_shape, padding_value, dtype=x.dtype)
    out[tuple(place)] = x
    return out[tuple(crop)]


def _pad_lowering(ctx, avals_in, avals_out, x, padding_value, padding_config):
    lows, highs, interiors = zip(*padding_config) if padding_config else ((), (), ())
    if not (shape_poly.is_constant_shape(avals_out[0].shape)
            and shape_poly.is_constant_shape(lows + highs)):  # symbolic shapes
        configs = [ctx.shape_tensor(v) for v in (lows, highs, interiors)]
        return ctx.op("stablehlo.dynamic_pad", [x, padding_value] + [t for t, _ in configs],
                      avals_in + [a for _, a in configs], avals_out[0])
    return ctx.op("stablehlo.pad", [x, padding_value], avals_in, avals_out[0],
                  {"edge_padding_low": i64_array(lows), "edge_padding_high": i64_array(highs),
                   "interior_padding": i64_array(interiors)})


pad_p = declare("pad", _pad_shape, _pad_impl, _pad_lowering)
core.symbolic_dims_supported.add(pad_p)


def _pad_jvp(primals, tangents, padding_config):
    # pad is linear in (operand, padding_value) jointly.
    t_x, t_value = (instantiate(t) for t in tangents)
    return (pad_p.bind(*primals, padding_config=padding_config),
            pad_p.bind(t_x, t_value, padding_config=padding_config))


def _pad_transpose(ct, x, padding_value, padding_config):
    """Operand: undo the edge padding (negative edges become zeros), then take every
    (interior + 1)-th element.  Padding value: whatever of ct the operand did not get."""
    if is_zero(ct):
        return [None, None]
    ct_aval = core.get_aval(ct)
    unpad = tuple((-low, -high, 0) for low, high, _ in padding_config)
    unpadded = pad_p.bind(ct, scalar_array(0, ct_aval.dtype), padding_config=unpad)
    shape = core.get_aval(unpadded).shape
    ct_x = slice_p.bind(unpadded, start_indices=(0,) * len(shape), limit_indices=shape,
                        strides=tuple(interior + 1 for _, _, interior in padding_config))
    ct_value = sub_p.bind(_sum_all(ct), _sum_all(ct_x)) if is_undefined(padding_value) else None
    return [ct_x if is_undefined(x) else None, ct_value]


jvp_rules[pad_p] = _pad_jvp
transpose_rules[pad_p] = _pad_transpose


def _pad_batch(axis_data, args, dims, padding_config):
    """No padding along the batch axis.  A batched padding value cannot be a pad
    operand (it must be a scalar): pad with zeros, then select each lane's value
    where a padded mask says the element is padding."""
    x, value = args
    xd, vd = dims
    out_dim = 0 if xd is None else xd
    config = padding_config[:out_dim] + ((0, 0, 0),) + padding_config[out_dim:]
    if vd is None:
        return pad_p.bind(x, value, padding_config=config), out_dim
    x = batch_at(x, xd, axis_data.size, out_dim)
    aval = core.get_aval(x)
    padded = pad_p.bind(x, scalar_array(0, aval.dtype), padding_config=config)
    ones = broadcast_in_dim_p.bind(scalar_array(True, dtypes.bool_), shape=aval.shape,
                                   broadcast_dimensions=())
    is_operand = pad_p.bind(ones, scalar_array(False, dtypes.bool_), padding_config=config)
    out_shape = core.get_aval(padded).shape
    values = broadcast_in_dim_p.bind(value, shape=out_shape, broadcast_dimensions=(out_dim,))
    return select_n_p.bind(is_operand, values, padded), out_dim


batching_rules[pad_p] = _pad_batch


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
        symbolic = any(type(v) is not int for v in (size, start, limit))
        if symbolic and stride != 1:
            raise NotImplementedError(
                f"slice: dimension {d} of {x.str_short()} is symbolic; funcgraph slices "
                f"symbolic dimensions only with stride 1 (start_indices={start_indices}, "
                f"limit_indices={limit_indices}, strides={strides})")
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
    if not (shape_poly.is_constant_shape(start_indices)
            and shape_poly.is_constant_shape(limit_indices)):  # symbolic bounds
        operands = [ctx.shape_tensor(v) for v in (start_indices, limit_indices, strides)]
        return ctx.op("stablehlo.real_dynamic_slice", [x] + [t for t, _ in operands],
                      avals_in + [a for _, a in operands], avals_out[0])
    return ctx.op("stablehlo.slice", [x], avals_in, avals_out[0],
                  {"start_indices": i64_array(start_indices),
                   "limit_indices": i64_array(limit_indices), "strides": i64_array(strides)})


slice_p = declare("slice", _slice_shape, _slice_impl, _slice_lowering)
core.symbolic_dims_supported.add(slice_p)  # slices of constant dimensions


def _slice_transpose(ct, aval, start_indices, limit_indices, strides=None):
    """Pad ct with zeros back to the operand: edges before and after the slice, and
    stride - 1 zeros between consecutive elements."""
    strides = (1,) * aval.ndim if strides is None else strides
    config = []
    for start, stride, n, size in zip(start_indices, strides, core.get_aval(ct).shape,
                                      aval.shape):
        end = start + (n - 1) * stride + 1 if n else start
        config.append((start, size - end, stride - 1))
    return pad_p.bind(ct, scalar_array(0, aval.dtype), padding_config=tuple(config))


deflinear_unary(slice_p, _slice_transpose)


def _slice_batch(axis_data, args, dims, start_indices, limit_indices, strides=None):
    """The whole batch axis is kept: a full range is inserted for it."""
    (x,), (d,) = args, dims
    strides = None if strides is None else inserted(strides, d, 1)
    return slice_p.bind(x, start_indices=inserted(start_indices, d, 0),
                        limit_indices=inserted(limit_indices, d, axis_data.size),
                        strides=strides), d


batching_rules[slice_p] = _slice_batch


# --- concatenate: join operands along one dimension ------------------------------

def _concatenate_shape(*operands, dimension):
    if not operands:
        raise TypeError("concatenate needs at least one operand")
    check_same_dtypes("concatenate", operands)
    first = operands[0]
    if not 0 <= dimension < first.ndim:
        raise TypeError(f"concatenate: dimension {dimension} is out of bounds for operands of "
                        f"rank {first.ndim} ({first.str_short()}); scalars cannot be "
                        f"concatenated (reshape them to rank 1 first)")
    for other in operands[1:]:
        if other.ndim != first.ndim or any(
                a != b for i, (a, b) in enumerate(zip(first.shape, other.shape)) if i != dimension):
            raise TypeError(f"concatenate along dimension {dimension} needs operands whose shapes "
                            f"agree except along that dimension, got {first.str_short()} and "
                            f"{other.str_short()}")
    shape = list(first.shape)
    shape[dimension] = sum(o.shape[dimension] for o in operands)
    return ShapedArray(tuple(shape), first.dtype, all(o.weak_type for o in operands))


concatenate_p = declare(
    "concatenate", _concatenate_shape,
    lambda *xs, dimension: np.concatenate(xs, axis=dimension),
    lambda ctx, ai, ao, *xs, dimension: ctx.op("stablehlo.concatenate", list(xs), ai, ao[0],
                                               {"dimension": f"{int(dimension)} : i64"}))


core.symbolic_dims_supported.add(concatenate_p)


def _concatenate_jvp(primals, tangents, dimension):
    return (concatenate_p.bind(*primals, dimension=dimension),
            concatenate_p.bind(*(instantiate(t) for t in tangents), dimension=dimension))


def _concatenate_transpose(ct, *operands, dimension):
    """Each linear operand's cotangent is its piece of ct along `dimension` (one split,
    as JAX's)."""
    if is_zero(ct):
        return [None] * len(operands)
    sizes = tuple(aval_of(x).shape[dimension] for x in operands)
    pieces = split_p.bind(ct, sizes=sizes, axis=dimension) if len(operands) > 1 else [ct]
    return [p if is_undefined(x) else None for p, x in zip(pieces, operands)]


jvp_rules[concatenate_p] = _concatenate_jvp
transpose_rules[concatenate_p] = _concatenate_transpose


def _concatenate_batch(axis_data, args, dims, dimension):
    """Batched operands meet at their most common batch axis (only the others move);
    unbatched operands are broadcast there."""
    batched = [d for d in dims if d is not None]
    target = max(batched, key=batched.count)
    operands = [batch_at(x, d, axis_data.size, target) for x, d in zip(args, dims)]
    new_dim = dimension + (dimension >= target)
    return concatenate_p.bind(*operands, dimension=new_dim), target


batching_rules[concatenate_p] = _concatenate_batch


# --- split: the pieces of an operand along one axis (concatenate's inverse) ----------

def _split_shape(x, *, sizes, axis):
    if not 0 <= axis < x.ndim:
        raise TypeError(f"split: axis {axis} is out of bounds for {x.str_short()}")
    constant = shape_poly.is_constant_shape(sizes)
    if (constant and any(s < 0 for s in sizes)) or sum(sizes) != x.shape[axis]:
        raise TypeError(f"split: sizes {sizes} must be nonnegative and sum to the size "
                        f"{x.shape[axis]} of axis {axis} of {x.str_short()}")
    return [x.update(shape=x.shape[:axis] + (s,) + x.shape[axis + 1:]) for s in sizes]


def _split_impl(x, *, sizes, axis):
    return [np.array(p) for p in np.split(x, np.cumsum(sizes)[:-1], axis=axis)]


def _split_lowering(ctx, avals_in, avals_out, x, *, sizes, axis):
    """One slice per piece."""
    shape, outs, start = avals_in[0].shape, [], 0
    for size, aval in zip(sizes, avals_out):
        starts = tuple(start if d == axis else 0 for d in range(len(shape)))
        limits = tuple(start + size if d == axis else n for d, n in enumerate(shape))
        outs.append(_slice_lowering(ctx, avals_in, [aval], x, starts, limits))
        start += size
    return outs


split_p = declare("split", _split_shape, _split_impl, _split_lowering, multiple_results=True)
core.symbolic_dims_supported.add(split_p)


def _split_jvp(primals, tangents, sizes, axis):
    (x,), (t,) = primals, tangents
    return (split_p.bind(x, sizes=sizes, axis=axis),
            split_p.bind(instantiate(t), sizes=sizes, axis=axis))


def _split_transpose(cts, x, *, sizes, axis):
    if all(is_zero(c) for c in cts):
        return [None]
    return [concatenate_p.bind(*(instantiate(c) for c in cts), dimension=axis)]


def _split_batch(axis_data, args, dims, sizes, axis):
    (x,), (d,) = args, dims
    return split_p.bind(x, sizes=sizes, axis=axis + (axis >= d)), [d] * len(sizes)


jvp_rules[split_p] = _split_jvp
transpose_rules[split_p] = _split_transpose
batching_rules[split_p] = _split_batch


# --- stack / unstack: operands of one shape joined along a new axis, and back --------

def _stack_shape(*operands, axis):
    if not operands:
        raise TypeError("stack needs at least one operand")
    check_same_dtypes("stack", operands)
    first = operands[0]
    if any(o.shape != first.shape for o in operands[1:]):
        raise TypeError(f"stack needs operands of one shape, got "
                        f"{', '.join(o.str_short() for o in operands)}")
    if not 0 <= axis <= first.ndim:
        raise TypeError(f"stack: axis {axis} is out of bounds for operands {first.str_short()}")
    shape = first.shape[:axis] + (len(operands),) + first.shape[axis:]
    return ShapedArray(shape, first.dtype, all(o.weak_type for o in operands))


def _stack_lowering(ctx, avals_in, avals_out, *xs, axis):
    """Each operand given a size-1 axis, then all concatenated along it."""
    one = avals_in[0].update(shape=avals_in[0].shape[:axis] + (1,) + avals_in[0].shape[axis:])
    rows = [ctx.op("stablehlo.reshape", [x], [a], one) for x, a in zip(xs, avals_in)]
    return ctx.op("stablehlo.concatenate", rows, [one] * len(rows), avals_out[0],
                  {"dimension": f"{axis} : i64"})


stack_p = declare("stack", _stack_shape, lambda *xs, axis: np.stack(xs, axis=axis),
                  _stack_lowering)


def _stack_jvp(primals, tangents, axis):
    return (stack_p.bind(*primals, axis=axis),
            stack_p.bind(*(instantiate(t) for t in tangents), axis=axis))


def _stack_transpose(ct, *operands, axis):
    if is_zero(ct):
        return [None] * len(operands)
    rows = unstack_p.bind(ct, axis=axis)
    return [r if is_undefined(x) else None for r, x in zip(rows, operands)]


def _stack_batch(axis_data, args, dims, axis):
    """The operands meet at their most common batch axis (only the others move)."""
    batched = [d for d in dims if d is not None]
    target = max(batched, key=batched.count)
    operands = [batch_at(x, d, axis_data.size, target) for x, d in zip(args, dims)]
    if axis <= target:
        return stack_p.bind(*operands, axis=axis), target + 1
    return stack_p.bind(*operands, axis=axis + 1), target


jvp_rules[stack_p] = _stack_jvp
transpose_rules[stack_p] = _stack_transpose
batching_rules[stack_p] = _stack_batch


def _unstack_shape(x, *, axis):
    if not 0 <= axis < x.ndim:
        raise TypeError(f"unstack: axis {axis} is out of bounds for {x.str_short()}")
    return [x.update(shape=x.shape[:axis] + x.shape[axis + 1:])] * x.shape[axis]


def _unstack_lowering(ctx, avals_in, avals_out, x, *, axis):
    """One size-1 slice per row, reshaped to drop the axis."""
    shape, outs = avals_in[0].shape, []
    for i, aval in enumerate(avals_out):
        starts = tuple(i if d == axis else 0 for d in range(len(shape)))
        limits = tuple(i + 1 if d == axis else n for d, n in enumerate(shape))
        row = avals_in[0].update(shape=shape[:axis] + (1,) + shape[axis + 1:])
        piece = _slice_lowering(ctx, avals_in, [row], x, starts, limits)
        outs.append(ctx.op("stablehlo.reshape", [piece], [row], aval))
    return outs


unstack_p = declare("unstack", _unstack_shape,
                    lambda x, *, axis: [np.array(r) for r in np.moveaxis(x, axis, 0)],
                    _unstack_lowering, multiple_results=True)


def _unstack_jvp(primals, tangents, axis):
    (x,), (t,) = primals, tangents
    return unstack_p.bind(x, axis=axis), unstack_p.bind(instantiate(t), axis=axis)


def _unstack_transpose(cts, x, *, axis):
    if all(is_zero(c) for c in cts):
        return [None]
    return [stack_p.bind(*(instantiate(c) for c in cts), axis=axis)]


def _unstack_batch(axis_data, args, dims, axis):
    (x,), (d,) = args, dims
    rows = unstack_p.bind(x, axis=axis + (axis >= d))
    return rows, [d - (axis < d)] * len(rows)


jvp_rules[unstack_p] = _unstack_jvp
transpose_rules[unstack_p] = _unstack_transpose
batching_rules[unstack_p] = _unstack_batch


# --- tile: the operand repeated reps[i] times along each dimension i ------------------

def _tile_shape(x, *, reps):
    if len(reps) != x.ndim or any(r < 0 for r in reps):
        raise TypeError(f"tile: reps {reps} must have one nonnegative entry per dimension "
                        f"of {x.str_short()}")
    return x.update(shape=tuple(r * d for r, d in zip(reps, x.shape)))


def _interleaved(reps, shape):
    """(reps[0], shape[0], reps[1], shape[1], ...): the shape tile spreads the operand to."""
    return tuple(n for pair in zip(reps, shape) for n in pair)


def _tile_lowering(ctx, avals_in, avals_out, x, *, reps):
    """A broadcast into the interleaved (rep, dimension) shape, then merged."""
    aval = avals_in[0]
    spread = aval.update(shape=_interleaved(reps, aval.shape))
    x = ctx.op("stablehlo.broadcast_in_dim", [x], avals_in, spread,
               {"broadcast_dimensions": i64_array(range(1, 2 * aval.ndim, 2))})
    return ctx.op("stablehlo.reshape", [x], [spread], avals_out[0])


tile_p = declare("tile", _tile_shape, lambda x, *, reps: np.tile(x, reps), _tile_lowering)


def _tile_transpose(ct, x, *, reps):
    """Each element's cotangent sums its copies: ct split into (rep, dimension) pairs
    and summed over the reps."""
    if is_zero(ct):
        return [None]
    shape = aval_of(x).shape
    spread = reshape_p.bind(ct, new_sizes=_interleaved(reps, shape), dimensions=None)
    return [reduce_sum_p.bind(spread, axes=tuple(range(0, 2 * len(shape), 2)))]


def _tile_batch(axis_data, args, dims, reps):
    (x,), (d,) = args, dims
    return tile_p.bind(x, reps=reps[:d] + (1,) + reps[d:]), d


def _tile_jvp(primals, tangents, reps):
    (x,), (t,) = primals, tangents
    return tile_p.bind(x, reps=reps), tile_p.bind(instantiate(t), reps=reps)


jvp_rules[tile_p] = _tile_jvp
transpose_rules[tile_p] = _tile_transpose
batching_rules[tile_p] = _tile_batch


# --- iota: 0, 1, 2, ... along one dimension, broadcast along the others -------------

def _iota_shape(*, dtype, shape, dimension):
    shape = shape_tuple("iota", shape)
    if dtype == dtypes.bool_ or dtype not in dtypes.SUPPORTED:
        raise TypeError(f"iota does not accept dtype {np.dtype(dtype).name}; it accepts integer, "
                        f"floating and complex dtypes")
    if not 0 <= dimension < len(shape):
        raise TypeError(f"iota: dimension {dimension} is out of bounds for shape {shape}")
    return ShapedArray(shape, dtype)


def _iota_impl(*, dtype, shape, dimension):
    line = np.arange(shape[dimension]).astype(dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(line.reshape(expanded), shape)


iota_p = declare(
    "iota", _iota_shape, _iota_impl,
    lambda ctx, ai, ao, *, dtype, shape, dimension: ctx.op(
        "stablehlo.iota", [], [], ao[0], {"iota_dimension": f"{int(dimension)} : i64"}))
# iota has no operands, so it is never differentiated.
core.symbolic_dims_supported.add(iota_p)  # stablehlo.iota becomes dynamic_iota


# --- dimension_value: a symbolic dimension used as a value (x / x.shape[0]) ---------

def _dimension_value_impl(*, dim):
    raise NotImplementedError(f"the symbolic dimension {dim} has no value outside "
                              f"funcgraph.export (it is known only when the exported "
                              f"function runs)")


dimension_value_p = declare(
    "dimension_value",
    lambda *, dim: core.aval_of_python_scalar(1),
    _dimension_value_impl,
    lambda ctx, ai, ao, *, dim: _convert_dim(ctx, ctx.dim_value(dim), ao[0]))
core.symbolic_dims_supported.add(dimension_value_p)
# Its value exists only inside an export: eagerly it raises on every platform (compiled,
# it would fail in the lowering instead, where no dimension variable is known).
direct_impls[dimension_value_p] = _dimension_value_impl
shape_poly.as_array_hook = lambda dim: dimension_value_p.bind(dim=dim)


def _convert_dim(ctx, value, aval):
    scalar = ShapedArray((), dtypes.int32)
    return value if aval.dtype == dtypes.int32 else ctx.op("stablehlo.convert", [value],
                                                           [scalar], aval)


def _dimension_value_jvp(primals, tangents, *, dim):
    out = dimension_value_p.bind(dim=dim)
    return out, Zero(tangent_aval(core.get_aval(out)))


jvp_rules[dimension_value_p] = _dimension_value_jvp
