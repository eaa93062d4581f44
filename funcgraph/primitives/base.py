"""The primitives that every family's rules bind: broadcast_in_dim, reshape, transpose
and reduce_sum, each with all of its rules, and the helpers made of them alone
(move_batch_dim, the reduction family, the zeros hook of the differentiation
interpreters).  They bind only one another: broadcast_in_dim transposes to reduce_sum
and back, and reshape batches through transpose."""
import math

import numpy as np

from funcgraph import core, dtypes
from funcgraph.array import scalar_array
from funcgraph.core import ShapedArray
from funcgraph.interpreters.ad_util import ad_ops
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import NoHostImpl
from funcgraph.ir import simplify_rules
from funcgraph.lowering import i64_array
from funcgraph.primitives.helpers import (
    NUMBER, accumulation_dtype, between, check_dtype, declare, deflinear_unary,
    lower_accumulating, shape_tuple, shift_dims, unchanged_operand)


# --- broadcast_in_dim: operand dim i goes to result dim broadcast_dimensions[i] ---

def _broadcast_in_dim_shape(x, shape, broadcast_dimensions):
    shape = shape_tuple("broadcast_in_dim", shape)
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
core.symbolic_dims_supported.add(broadcast_in_dim_p)  # stablehlo.op makes it dynamic


def _broadcast_in_dim_transpose(ct, aval, shape, broadcast_dimensions):
    """Sum over the result dimensions the operand was broadcast along: new ones and
    size-1 operand dimensions that were stretched (put back with a reshape)."""
    kept = [d for i, d in enumerate(broadcast_dimensions) if aval.shape[i] == shape[d]]
    summed = tuple(d for d in range(len(shape)) if d not in kept)
    out = reduce_sum_p.bind(ct, axes=summed) if summed else ct
    if len(kept) != aval.ndim:
        out = reshape_p.bind(out, new_sizes=aval.shape, dimensions=None)
    return out


deflinear_unary(broadcast_in_dim_p, _broadcast_in_dim_transpose)


def _broadcast_in_dim_batch(axis_data, args, dims, shape, broadcast_dimensions):
    """The batch axis stays an operand axis, placed in the result between the result
    axes of its operand neighbours (so broadcast_dimensions stay increasing)."""
    (x,), (d,) = args, dims
    out_dim = between(broadcast_dimensions, d, len(shape), d)
    new_shape = shape[:out_dim] + (axis_data.size,) + shape[out_dim:]
    shifted = shift_dims(broadcast_dimensions, out_dim)
    new_dims = shifted[:d] + (out_dim,) + shifted[d:]
    return broadcast_in_dim_p.bind(x, shape=new_shape, broadcast_dimensions=new_dims), out_dim


batching_rules[broadcast_in_dim_p] = _broadcast_in_dim_batch
simplify_rules[broadcast_in_dim_p] = unchanged_operand


def _zeros(aval):
    """A zero array of type aval: how the differentiation interpreters materialize zeros."""
    zero = scalar_array(0, aval.dtype, aval.weak_type)
    if aval.shape:
        zero = broadcast_in_dim_p.bind(zero, shape=aval.shape, broadcast_dimensions=())
    return core.vary_along(zero, aval.vma) if aval.vma else zero


ad_ops["zeros"] = _zeros


# --- reshape -------------------------------------------------------------------------

def _reshape_shape(x, new_sizes, dimensions=None):
    new_sizes = shape_tuple("reshape", new_sizes)
    if math.prod(new_sizes) != x.size:
        raise TypeError(f"reshape: cannot reshape {x.str_short()} ({x.size} elements) into "
                        f"shape {new_sizes} ({math.prod(new_sizes)} elements)")
    if dimensions is not None:
        raise NotImplementedError("reshape with dimensions= (use transpose first)")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


reshape_p = declare(
    "reshape", _reshape_shape, lambda x, new_sizes, dimensions=None: np.reshape(x, new_sizes),
    lambda ctx, ai, ao, x, new_sizes, dimensions=None: ctx.op("stablehlo.reshape", [x], ai, ao[0]))
core.symbolic_dims_supported.add(reshape_p)  # when the sizes' products are equal polynomials
deflinear_unary(reshape_p, lambda ct, aval, new_sizes, dimensions=None: reshape_p.bind(
    ct, new_sizes=aval.shape, dimensions=None))


def _reshape_batch(axis_data, args, dims, new_sizes, dimensions=None):
    """A reshape mixes dimensions in row-major order, so the batch axis must lead."""
    x = move_batch_dim(args[0], dims[0], 0)
    return reshape_p.bind(x, new_sizes=(axis_data.size,) + tuple(new_sizes),
                          dimensions=dimensions), 0


batching_rules[reshape_p] = _reshape_batch
simplify_rules[reshape_p] = unchanged_operand


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
core.symbolic_dims_supported.add(transpose_p)
deflinear_unary(transpose_p, lambda ct, aval, permutation: transpose_p.bind(
    ct, permutation=tuple(int(i) for i in np.argsort(permutation))))


def _transpose_batch(axis_data, args, dims, permutation):
    """The batch axis keeps its position; the permutation moves the other axes around it."""
    (x,), (d,) = args, dims
    perm = list(shift_dims(permutation, d))
    perm.insert(d, d)
    return transpose_p.bind(x, permutation=tuple(perm)), d


def _transpose_simplify(invars, params, outvar, producers):
    """The identity permutation changes nothing."""
    if tuple(params["permutation"]) != tuple(range(outvar.aval.ndim)):
        return None
    return unchanged_operand(invars, params, outvar, producers)


batching_rules[transpose_p] = _transpose_batch
simplify_rules[transpose_p] = _transpose_simplify


def move_batch_dim(x, src, dst):
    """x with its axis `src` moved to position `dst`."""
    if src == dst:
        return x
    ndim = core.get_aval(x).ndim
    perm = list(range(ndim))
    perm.pop(src)
    perm.insert(dst, src)
    return transpose_p.bind(x, permutation=tuple(perm))


# --- the reduction family: reduce_sum here (broadcast_in_dim's transpose binds it),
# the others in reductions.py --------------------------------------------------------

def kept_dims(ndim, axes):
    """The dimensions of a rank-ndim array that a reduction over `axes` keeps."""
    return tuple(d for d in range(ndim) if d not in axes)


def _reduced_shape(name, x, axes, kinds):
    check_dtype(name, x, kinds)
    axes = tuple(axes)
    if len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ValueError(f"{name}: axes {axes} are invalid for an array of rank {x.ndim} "
                         f"({x.str_short()}); each must be in [0, {x.ndim}) and appear once")
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return ShapedArray(shape, x.dtype, x.weak_type)


def identity(dtype, which):
    """The identity element of a monoid over `dtype` ("add", "mul", "max", "min", ...)."""
    if which in ("add", "or", "xor"):
        return np.zeros((), dtype)
    if which == "mul":
        return np.ones((), dtype)
    if which == "and":  # all bits set: True, or -1 / the max of an unsigned type
        return np.invert(np.zeros((), dtype))
    if dtype == dtypes.bool_:
        return np.array(which == "min")
    if dtypes.is_int(dtype):
        info = np.iinfo(dtype)
        return np.array(info.min if which == "max" else info.max, dtype)
    return np.array(-np.inf if which == "max" else np.inf, dtype)


def _reduced_axes_last(x, axes):
    """(x with the reduced axes moved last and merged into one contiguous axis, that
    axis).  NumPy sums floats pairwise only along a contiguous last axis; along others
    it adds in sequence, which loses digits over many elements (the mean over axis 0 of
    a million float32 0.1s was 1% off), where XLA's sums stay within a few ulp."""
    kept = [i for i in range(x.ndim) if i not in axes]
    if x.flags.c_contiguous and all(i < len(kept) for i in kept):  # already so
        return x, axes
    moved = np.ascontiguousarray(np.transpose(x, kept + sorted(axes)))
    return moved.reshape([x.shape[i] for i in kept] + [-1]), (len(kept),)


# The dtypes whose sums, products and contractions run compiled eagerly: XLA's CPU code
# adds float32 and wider values in its own order (vectorized partial sums, blocked
# products), which rounds otherwise than NumPy's pairwise sums (16 of 20 row sums of a
# 20x30 float32 array) and einsum (a third of a 16x64 by 64x16 product); narrow floats
# accumulate in float32 and round once, to the same bits.
XLA_ORDERED = frozenset(map(np.dtype, ("float32", "float64", "complex64", "complex128")))


def reduction(name, np_fn, monoid, hlo_op, kinds):
    """A reduction primitive over static `axes` with a monoid (identity + op)."""
    accumulates = monoid in ("add", "mul")  # max, min, and, or are exact in any dtype

    def impl(x, axes):
        if x.size == 0:
            shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
            return np.full(shape, identity(x.dtype, monoid), x.dtype)
        if accumulates and x.dtype in XLA_ORDERED:
            raise NoHostImpl
        wide = x.astype(accumulation_dtype(x.dtype)) if accumulates else x
        if accumulates and x.dtype.kind in "fcV":
            wide, axes = _reduced_axes_last(wide, axes)
        return np.asarray(np_fn(wide, axis=tuple(axes))).astype(x.dtype)

    def lower_reduce(ctx, x, aval_in, aval_out, axes):
        scalar = ShapedArray((), aval_in.dtype)
        init = ctx.constant(identity(aval_in.dtype, monoid), scalar)
        body = ctx.scalar_region(aval_in.dtype, 2, hlo_op)
        return ctx.op("stablehlo.reduce", [x, init], [aval_in, scalar], aval_out,
                      {"dimensions": i64_array(axes)}, regions=[body])

    def lower(ctx, avals_in, avals_out, x, axes):
        if not accumulates:
            return lower_reduce(ctx, x, avals_in[0], avals_out[0], axes)
        return lower_accumulating(ctx, avals_in[0], avals_out[0], x,
                                  lambda v, a_in, a_out: lower_reduce(ctx, v, a_in, a_out, axes))

    prim = declare(name, lambda x, axes: _reduced_shape(name, x, axes, kinds), impl, lower)
    batching_rules[prim] = reduce_axes_batch(prim)
    core.symbolic_dims_supported.add(prim)
    return prim


def reduce_axes_batch(prim):
    """Batching rule of a primitive reducing `axes` (and any other params): the axes are
    renumbered around the batch axis, which stays where it is, so nothing moves."""
    def rule(axis_data, args, dims, axes, **params):
        (x,), (d,) = args, dims
        axes = shift_dims(axes, d)
        out_dim = d - sum(a < d for a in axes)
        return prim.bind(x, axes=axes, **params), out_dim
    return rule


def _reduce_sum_transpose(ct, aval, axes):
    # Every element of a reduced group fed the same output: broadcast ct back over the group.
    return broadcast_in_dim_p.bind(ct, shape=aval.shape,
                                   broadcast_dimensions=kept_dims(aval.ndim, axes))


reduce_sum_p = reduction("reduce_sum", np.sum, "add", "stablehlo.add", NUMBER)
deflinear_unary(reduce_sum_p, _reduce_sum_transpose)
