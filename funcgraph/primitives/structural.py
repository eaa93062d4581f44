"""Shape-changing primitives: broadcast_in_dim, reshape, squeeze, expand_dims,
transpose, rev, pad, concatenate, iota."""
import numpy as np

from funcgraph import core, dtypes
from funcgraph.core import ShapedArray
from funcgraph.interpreters.batching import batching_rules
from funcgraph.array import scalar_array
from funcgraph.interpreters.ad_util import ad_ops, instantiate, is_zero
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.transpose import is_undefined, transpose_rules
from funcgraph.lowering import i64_array
from funcgraph.primitives.batching_helpers import batch_at, move_batch_dim
from funcgraph.primitives.helpers import check_same_dtypes, declare, deflinear_unary

# Differentiation rules bind reduce_sum, sub and slice, whose modules may import this
# one (it is the most basic), so those are imported inside the rules.


def _sum_all(x):
    from funcgraph.primitives.reductions import reduce_sum_p
    return reduce_sum_p.bind(x, axes=tuple(range(core.get_aval(x).ndim)))


def _shift_dims(dims, inserted):
    """Dimension indices after a new dimension is inserted at position `inserted`."""
    return tuple(d + (d >= inserted) for d in dims)


def _aval_of(x):
    """The type of a transpose-rule argument, linear (UndefinedPrimal) or not."""
    return x.aval if is_undefined(x) else core.get_aval(x)


def _shape_tuple(name, shape):
    try:
        shape = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a tuple of Python ints, got {shape!r} "
                        f"(shapes must be static; use static_argnums for shapes passed to jit)")
    if any(d < 0 for d in shape):
        raise ValueError(f"{name}: negative dimension in shape {shape}")
    return shape


# --- broadcast_in_dim: operand dim i goes to result dim broadcast_dimensions[i] ---

def _broadcast_in_dim_shape(x, shape, broadcast_dimensions):
    shape = _shape_tuple("broadcast_in_dim", shape)
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError(f"broadcast_in_dim: broadcast_dimensions {broadcast_dimensions} must "
                        f"have one entry per operand dimension (operand {x.str_short()})")
    for i, d in enumerate(broadcast_dimensions):
        if not 0 <= d < len(shape) or x.shape[i] not in (1, shape[d]):
            raise TypeError(f"broadcast_in_dim: operand {x.str_short()} cannot broadcast to "
                            f"{shape} with broadcast_dimensions={broadcast_dimensions}")
    if list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise TypeError(f"broadcast_in_dim: broadcast_dimensions {broadcast_dimensions} must "
                        f"be strictly increasing")
    return ShapedArray(shape, x.dtype, x.weak_type)


def _broadcast_in_dim_impl(x, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(np.reshape(x, expanded), shape)


def _broadcast_in_dim_lowering(ctx, avals_in, avals_out, x, shape, broadcast_dimensions):
    return ctx.op("stablehlo.broadcast_in_dim", [x], avals_in, avals_out[0],
                  {"broadcast_dimensions": i64_array(broadcast_dimensions)})


broadcast_in_dim_p = declare("broadcast_in_dim", _broadcast_in_dim_shape, _broadcast_in_dim_impl,
                             _broadcast_in_dim_lowering)


def _broadcast_in_dim_transpose(ct, aval, shape, broadcast_dimensions):
    """Sum over the result dimensions the operand was broadcast along: new ones and
    size-1 operand dimensions that were stretched (put back with a reshape)."""
    from funcgraph.primitives.reductions import reduce_sum_p
    kept = [d for i, d in enumerate(broadcast_dimensions) if aval.shape[i] == shape[d]]
    summed = tuple(d for d in range(len(shape)) if d not in kept)
    out = reduce_sum_p.bind(ct, axes=summed) if summed else ct
    if len(kept) != aval.ndim:
        out = reshape_p.bind(out, new_sizes=aval.shape, dimensions=None)
    return out


deflinear_unary(broadcast_in_dim_p, _broadcast_in_dim_transpose)


def _zeros(aval):
    """A zero array of type aval: how the differentiation interpreters materialize zeros."""
    zero = scalar_array(0, aval.dtype, aval.weak_type)
    return broadcast_in_dim_p.bind(zero, shape=aval.shape, broadcast_dimensions=()) \
        if aval.shape else zero


ad_ops["zeros"] = _zeros


def _between(dims, k, rank, prefer):
    """A position for a new dimension that comes after dims[k - 1] and before dims[k]
    once inserted (dims sorted, among `rank` dimensions), as near to `prefer` as possible."""
    lo = dims[k - 1] + 1 if k > 0 else 0
    hi = dims[k] if k < len(dims) else rank
    return min(max(prefer, lo), hi)


def _broadcast_in_dim_batch(axis_data, args, dims, shape, broadcast_dimensions):
    """The batch axis stays an operand axis, placed in the result between the result
    axes of its operand neighbours (so broadcast_dimensions stay increasing)."""
    (x,), (d,) = args, dims
    out_dim = _between(broadcast_dimensions, d, len(shape), d)
    new_shape = shape[:out_dim] + (axis_data.size,) + shape[out_dim:]
    shifted = _shift_dims(broadcast_dimensions, out_dim)
    new_dims = shifted[:d] + (out_dim,) + shifted[d:]
    return broadcast_in_dim_p.bind(x, shape=new_shape, broadcast_dimensions=new_dims), out_dim


batching_rules[broadcast_in_dim_p] = _broadcast_in_dim_batch


# --- reshape -------------------------------------------------------------------------

def _reshape_shape(x, new_sizes, dimensions=None):
    new_sizes = _shape_tuple("reshape", new_sizes)
    if int(np.prod(new_sizes)) != x.size:
        raise TypeError(f"reshape: cannot reshape {x.str_short()} ({x.size} elements) into "
                        f"shape {new_sizes} ({int(np.prod(new_sizes))} elements)")
    if dimensions is not None:
        raise NotImplementedError("reshape with dimensions= (use transpose first)")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


reshape_p = declare(
    "reshape", _reshape_shape, lambda x, new_sizes, dimensions=None: np.reshape(x, new_sizes),
    lambda ctx, ai, ao, x, new_sizes, dimensions=None: ctx.op("stablehlo.reshape", [x], ai, ao[0]))
deflinear_unary(reshape_p, lambda ct, aval, new_sizes, dimensions=None: reshape_p.bind(
    ct, new_sizes=aval.shape, dimensions=None))


def _reshape_batch(axis_data, args, dims, new_sizes, dimensions=None):
    """A reshape mixes dimensions in row-major order, so the batch axis must lead."""
    x = move_batch_dim(args[0], dims[0], 0)
    return reshape_p.bind(x, new_sizes=(axis_data.size,) + tuple(new_sizes),
                          dimensions=dimensions), 0


batching_rules[reshape_p] = _reshape_batch


# --- transpose ------------------------------------------------------------------------

def _transpose_shape(x, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(f"transpose: permutation {permutation} is not a permutation of the "
                        f"{x.ndim} dimensions of {x.str_short()}")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


transpose_p = declare(
    "transpose", _transpose_shape, lambda x, permutation: np.transpose(x, permutation),
    lambda ctx, ai, ao, x, permutation: ctx.op("stablehlo.transpose", [x], ai, ao[0],
                                               {"permutation": i64_array(permutation)}))
deflinear_unary(transpose_p, lambda ct, aval, permutation: transpose_p.bind(
    ct, permutation=tuple(int(i) for i in np.argsort(permutation))))


def _transpose_batch(axis_data, args, dims, permutation):
    """The batch axis keeps its position; the permutation moves the other axes around it."""
    (x,), (d,) = args, dims
    perm = list(_shift_dims(permutation, d))
    perm.insert(d, d)
    return transpose_p.bind(x, permutation=tuple(perm)), d


batching_rules[transpose_p] = _transpose_batch


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


def _squeeze_batch(axis_data, args, dims, dimensions):
    (x,), (d,) = args, dims
    out_dim = d - sum(1 for k in dimensions if k < d)
    return squeeze_p.bind(x, dimensions=_shift_dims(dimensions, d)), out_dim


batching_rules[squeeze_p] = _squeeze_batch


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
deflinear_unary(squeeze_p, lambda ct, aval, dimensions: expand_dims_p.bind(
    ct, dimensions=tuple(sorted(dimensions))))
deflinear_unary(expand_dims_p, lambda ct, aval, dimensions: squeeze_p.bind(
    ct, dimensions=tuple(sorted(dimensions))))


def _expand_dims_batch(axis_data, args, dims, dimensions):
    """The batch axis stays between the result axes of its operand neighbours."""
    (x,), (d,) = args, dims
    out_ndim = core.get_aval(x).ndim - 1 + len(dimensions)
    kept = [i for i in range(out_ndim) if i not in dimensions]
    out_dim = _between(kept, d, out_ndim, d)
    return expand_dims_p.bind(x, dimensions=_shift_dims(dimensions, out_dim)), out_dim


batching_rules[expand_dims_p] = _expand_dims_batch


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
    return rev_p.bind(x, dimensions=_shift_dims(dimensions, d)), d


batching_rules[rev_p] = _rev_batch


# --- pad: (low, high, interior) padding per dimension; low/high may be negative ----

def _padded_size(size, low, high, interior):
    return low + high + size + max(size - 1, 0) * interior


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
    return ctx.op("stablehlo.pad", [x, padding_value], avals_in, avals_out[0],
                  {"edge_padding_low": i64_array(lows), "edge_padding_high": i64_array(highs),
                   "interior_padding": i64_array(interiors)})


pad_p = declare("pad", _pad_shape, _pad_impl, _pad_lowering)


def _pad_jvp(primals, tangents, padding_config):
    # pad is linear in (operand, padding_value) jointly.
    t_x, t_value = (instantiate(t) for t in tangents)
    return (pad_p.bind(*primals, padding_config=padding_config),
            pad_p.bind(t_x, t_value, padding_config=padding_config))


def _pad_transpose(ct, x, padding_value, padding_config):
    """Operand: undo the edge padding (negative edges become zeros), then take every
    (interior + 1)-th element.  Padding value: whatever of ct the operand did not get."""
    from funcgraph.primitives.elementwise import sub_p
    from funcgraph.primitives.slicing import slice_p
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
    from funcgraph.primitives.elementwise import select_n_p
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


def _concatenate_jvp(primals, tangents, dimension):
    return (concatenate_p.bind(*primals, dimension=dimension),
            concatenate_p.bind(*(instantiate(t) for t in tangents), dimension=dimension))


def _concatenate_transpose(ct, *operands, dimension):
    """Each linear operand's cotangent is its slice of ct along `dimension`."""
    from funcgraph.primitives.slicing import slice_p
    if is_zero(ct):
        return [None] * len(operands)
    shape = core.get_aval(ct).shape
    cts, start = [], 0
    for x in operands:
        size = _aval_of(x).shape[dimension]
        if is_undefined(x):
            starts = tuple(start if d == dimension else 0 for d in range(len(shape)))
            limits = tuple(start + size if d == dimension else n for d, n in enumerate(shape))
            cts.append(slice_p.bind(ct, start_indices=starts, limit_indices=limits,
                                    strides=None))
        else:
            cts.append(None)
        start += size
    return cts


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


# --- iota: 0, 1, 2, ... along one dimension, broadcast along the others -------------

def _iota_shape(*, dtype, shape, dimension):
    shape = _shape_tuple("iota", shape)
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
