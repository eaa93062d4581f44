"""lax convenience functions: full/full_like, dtype, broadcast_shapes/broadcast_to_rank,
collapse, tile, split, stack/unstack, complex, reduce_xor, scatter_sub, scatter_apply,
approx_max_k/approx_min_k and conv_general_dilated_patches.  Most are built from other lax
functions; tile, split, stack, unstack and reduce_xor bind a primitive of their own, as
jax's do, and scatter_apply is its own primitive here (jax's scatter with an update
jaxpr)."""
import math

import numpy as np

from funcgraph import core, dtypes
from funcgraph.interpreters.ad_util import instantiate
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import eval_jaxpr
from funcgraph.interpreters.jvp import jvp_flat, jvp_rules
from funcgraph.interpreters.staging import trace_flat
from funcgraph.lax._control_flow import while_loop
from funcgraph.lax._convolution import conv_dimension_numbers, conv_general_dilated
from funcgraph.lax._elementwise import add, convert_element_type, gt, lt, neg, select, sub
from funcgraph.lax._operands import as_operand
from funcgraph.lax._reductions import reduce_max, top_k
from funcgraph.lax._contractions import dot_general
from funcgraph.lax._shapes import broadcast_in_dim, reshape, transpose
from funcgraph.lax._slicing import scatter_add
from funcgraph.lowering import lower_closed_body
from funcgraph.primitives.batching_helpers import vmap_flat
from funcgraph.primitives.elementwise import complex_p
from funcgraph.primitives.reductions import reduce_xor_p
from funcgraph.primitives.helpers import ANY, declare
from funcgraph.primitives.slicing import (
    GatherScatterMode, ScatterDimensionNumbers, scatter_add_p, scatter_batch_rule,
    scatter_lowering, scatter_shape_rule)
from funcgraph.primitives.structural import split_p, stack_p, tile_p, unstack_p


def dtype(x):
    """The dtype funcgraph gives the value or type x (Python scalars take the default
    32-bit dtypes unless x64 is on)."""
    if isinstance(x, type) or isinstance(x, (np.dtype, str)):
        return dtypes.canonicalize(np.dtype(x))
    if hasattr(x, "aval"):
        return x.aval.dtype
    return as_operand(x).aval.dtype


def full(shape, fill_value, dtype=None, *, sharding=None):
    shape = tuple(shape) if not isinstance(shape, int) else (shape,)
    fill = as_operand(fill_value)
    if fill.aval.ndim != 0:
        raise TypeError(f"full must be called with a scalar fill_value, got shape "
                        f"{fill.aval.shape}")
    if dtype is not None:
        fill = _converted(fill, dtype)
    return broadcast_in_dim(fill, shape, ())


def _converted(fill, dtype):
    """fill in dtype: a known value is converted now, as a constant; a traced one by a
    convert_element_type equation."""
    if isinstance(fill, core.Tracer):
        return convert_element_type(fill, dtype, weak_type=False)
    dtype = dtypes.canonicalize(dtype)
    return as_operand(np.asarray(fill).astype(dtype))


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    aval = as_operand(x).aval if not hasattr(x, "aval") else x.aval
    fill = _converted(as_operand(fill_value), aval.dtype if dtype is None else dtype)
    return full(aval.shape if shape is None else shape, fill)


def empty(shape, dtype, *, out_sharding=None):
    """An array of the shape and dtype whose values must not be relied on (zeros here)."""
    return full(shape, np.array(0, dtypes.canonicalize(dtype)))


def broadcast_shapes(*shapes):
    """The NumPy broadcast of the shapes, as a tuple; shapes that do not broadcast are
    jax's ValueError naming them."""
    shapes = [tuple(s) for s in shapes]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}") from None


def broadcast_to_rank(x, rank):
    x = as_operand(x)
    ndim = x.aval.ndim
    if ndim > rank:
        raise ValueError(f"broadcast_to_rank: x of rank {ndim} is already above rank {rank}")
    return broadcast_in_dim(x, (1,) * (rank - ndim) + x.aval.shape,
                            tuple(range(rank - ndim, rank)))


def collapse(operand, start_dimension, stop_dimension=None):
    """Merges dimensions start_dimension .. stop_dimension - 1 into one."""
    x = as_operand(operand)
    shape = x.aval.shape
    start = start_dimension % len(shape) if shape else 0
    stop = len(shape) if stop_dimension is None else stop_dimension
    stop = stop + len(shape) if stop < 0 else stop
    if not 0 <= start <= stop <= len(shape):
        raise ValueError(f"collapse: invalid dimensions [{start_dimension}, {stop_dimension}) "
                         f"for shape {shape}")
    merged = math.prod(shape[start:stop])
    return reshape(x, shape[:start] + (merged,) + shape[stop:])


def tile(operand, reps):
    x = as_operand(operand)
    reps = tuple(int(r) for r in reps)
    shape = x.aval.shape
    if len(reps) != len(shape):
        raise ValueError(f"tile: reps {reps} must have one entry per dimension of {shape}")
    return tile_p.bind(x, reps=reps)


def split(operand, sizes, axis=0):
    x = as_operand(operand)
    axis = axis + x.aval.ndim if axis < 0 else axis
    sizes = [int(s) for s in sizes]
    if sum(sizes) != x.aval.shape[axis] or any(s < 0 for s in sizes):
        raise ValueError(f"split: sizes {sizes} must be non-negative and sum to the size "
                         f"{x.aval.shape[axis]} of axis {axis}")
    return list(split_p.bind(x, sizes=tuple(sizes), axis=axis))


def stack(operands, axis=0):
    operands = [as_operand(o) for o in operands]
    if not operands:
        raise ValueError("stack needs at least one operand")
    ndim = operands[0].aval.ndim + 1
    axis = axis + ndim if axis < 0 else axis
    return stack_p.bind(*operands, axis=axis)


def unstack(x, axis=0):
    x = as_operand(x)
    axis = axis + x.aval.ndim if axis < 0 else axis
    return tuple(unstack_p.bind(x, axis=axis))


def complex(x, y):
    """x + i y, for float32 (complex64) or float64 (complex128) x and y of one dtype."""
    x, y = as_operand(x), as_operand(y)
    if x.aval.dtype != y.aval.dtype:
        raise TypeError(f"complex requires arguments of one dtype, got {x.aval.dtype} and "
                        f"{y.aval.dtype}")
    return complex_p.bind(x, y)


def reduce_xor(operand, axes):
    return reduce_xor_p.bind(as_operand(operand), axes=tuple(axes))


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """Updates subtracted from the operand windows (scatter_add of the negated updates)."""
    return scatter_add(operand, scatter_indices, neg(as_operand(updates)), dimension_numbers,
                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                       mode=mode)


def _order_reversed(x):
    """An order-reversing map of x onto its own dtype (its own inverse)."""
    if dtypes.is_unsigned(x.aval.dtype):
        return sub(np.array(np.iinfo(x.aval.dtype).max, x.aval.dtype), x)
    return neg(x)


def _approx_k(operand, k, reduction_dimension, largest):
    x = as_operand(operand)
    ndim = x.aval.ndim
    axis = reduction_dimension + ndim if reduction_dimension < 0 else reduction_dimension
    if not 0 <= axis < ndim:
        raise ValueError(f"reduction_dimension {reduction_dimension} out of range for rank {ndim}")
    if largest:
        return list(top_k(x, k, axis=axis))
    values, indices = top_k(_order_reversed(x), k, axis=axis)
    return [_order_reversed(values), indices]


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The k largest along reduction_dimension and their indices. funcgraph returns the exact
    top k (as XLA does on the CPU), a result every recall_target allows."""
    return _approx_k(operand, k, reduction_dimension, largest=True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The k smallest along reduction_dimension and their indices (exact, see approx_max_k)."""
    return _approx_k(operand, k, reduction_dimension, largest=False)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches a convolution with a filter_shape window sees, as output features ordered
    (input feature, window position): a convolution with a one-hot kernel."""
    x = as_operand(lhs)
    filter_shape = tuple(int(d) for d in filter_shape)
    ndim = x.aval.ndim
    if len(filter_shape) != ndim - 2:
        raise ValueError(f"conv_general_dilated_patches: filter_shape {filter_shape} needs "
                         f"{ndim - 2} spatial dimensions for an lhs of rank {ndim}")
    dnums = conv_dimension_numbers(x.aval.shape, (1,) * ndim, dimension_numbers)
    channels = x.aval.shape[dnums.lhs_spec[1]]
    window = math.prod(filter_shape)
    one_hot = np.eye(channels * window, dtype=x.aval.dtype).reshape(
        (channels * window, channels) + filter_shape)
    kernel = np.transpose(one_hot, np.argsort(dnums.rhs_spec))
    return conv_general_dilated(x, kernel, window_strides, padding, lhs_dilation, rhs_dilation,
                                dnums, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                               precision=None):
    """An unshared convolution (a locally connected layer): a separate kernel at each
    output position.  rhs's spatial dimensions are the output positions and its I
    dimension the patch (input feature, window position), as conv_general_dilated_patches
    lays it out; each output position is a dot of its patch with its kernel."""
    x = as_operand(lhs)
    lhs_precision = precision[0] if isinstance(precision, (tuple, list)) else precision
    patches = conv_general_dilated_patches(x, filter_shape, window_strides, padding,
                                           lhs_dilation, rhs_dilation, dimension_numbers,
                                           precision=lhs_precision)
    dnums = conv_dimension_numbers(x.aval.shape, (1, 1) + tuple(filter_shape),
                                   dimension_numbers)
    out_spec, rhs_spec = dnums.out_spec, dnums.rhs_spec
    # batch over the output positions (in the patches' dimension order), contract the patch
    order = sorted(range(len(out_spec) - 2), key=lambda k: out_spec[2 + k])
    lhs_batch = tuple(out_spec[2 + k] for k in order)
    rhs_batch = tuple(rhs_spec[2 + k] for k in order)
    out = dot_general(patches, rhs, (((out_spec[1],), (rhs_spec[1],)), (lhs_batch, rhs_batch)),
                      precision=precision)
    # out is (positions..., N, O): move N and O to where out_spec puts them
    ndim = len(out_spec)
    perm = [None] * ndim
    perm[out_spec[0]], perm[out_spec[1]] = ndim - 2, ndim - 1
    rest = iter(range(ndim - 2))
    perm = [p if p is not None else next(rest) for p in perm]
    return transpose(out, tuple(perm))


# --- scatter_apply: XLA's scatter whose combiner is a function of the old value --------
# jax binds its scatter primitive with an update_jaxpr; funcgraph keeps that form as a
# primitive of its own, scatter_apply (the program XLA gets is the same: one scatter whose
# region applies the function).  It runs compiled eagerly; its derivative applies the
# function as many times as each element is addressed, round by round (jax has none).

def _apply_region(ctx, scalar, params):
    closed = params["update_jaxpr"]
    return ctx.region([scalar, scalar],
                      lambda c, args: (lower_closed_body(c, closed, [args[0]]), [scalar]))


scatter_apply_p = declare("scatter_apply", scatter_shape_rule("scatter_apply", ANY), None,
                          scatter_lowering(_apply_region))
batching_rules[scatter_apply_p] = scatter_batch_rule(scatter_apply_p)


def _apply_by_rounds(x, indices, updates, closed, **params):
    """The same result as rounds of the function over every element, each round kept
    where the element's hit count (a scatter_add of ones) is still higher."""
    aval = core.get_aval(x)
    ones = np.ones(core.get_aval(updates).shape, np.int32)
    counts = scatter_add_p.bind(np.zeros(aval.shape, np.int32), indices, ones, **params)
    size = math.prod(aval.shape)

    def apply_everywhere(v):
        flat = reshape(v, (size,))
        out = vmap_flat(lambda e: eval_jaxpr(closed.jaxpr, closed.consts, e), [flat], [0],
                        size)[0]
        return reshape(out, aval.shape)

    def more_rounds(carry):
        round_, _ = carry
        return lt(round_, reduce_max(counts, tuple(range(aval.ndim))))

    def one_round(carry):
        round_, v = carry
        return add(round_, np.int32(1)), select(gt(counts, round_), apply_everywhere(v), v)

    if size == 0:
        return x
    return while_loop(more_rounds, one_round, (np.int32(0), x))[1]


def _scatter_apply_jvp(primals, tangents, *, update_jaxpr, **params):
    x, indices, updates = primals
    out, t_out = jvp_flat(
        lambda v: [_apply_by_rounds(v, indices, updates, update_jaxpr, **params)],
        [x], [instantiate(tangents[0])])
    return scatter_apply_p.bind(x, indices, updates, update_jaxpr=update_jaxpr,
                                **params), t_out[0]


jvp_rules[scatter_apply_p] = _scatter_apply_jvp


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with func (a function of one scalar) applied to each element that the
    scatter addresses, once per time it is addressed (duplicate indices apply it again)."""
    x = as_operand(operand)
    aval = x.aval
    scalar = aval.update(shape=(), weak_type=False)
    closed = trace_flat(lambda v: [convert_element_type(func(v), aval.dtype)], [scalar])
    unused = broadcast_in_dim(np.zeros((), aval.dtype), tuple(update_shape), ())
    return scatter_apply_p.bind(
        x, as_operand(scatter_indices), unused,
        dimension_numbers=dimension_numbers if isinstance(
            dimension_numbers, ScatterDimensionNumbers) else ScatterDimensionNumbers(
                *dimension_numbers),
        indices_are_sorted=bool(indices_are_sorted), unique_indices=bool(unique_indices),
        mode=GatherScatterMode.from_any(mode), update_jaxpr=closed)
