"""Shape-changing primitives: broadcast_in_dim, reshape, squeeze, expand_dims,
transpose, rev, pad, concatenate, iota."""
import numpy as np

from funcgraph import dtypes
from funcgraph.core import ShapedArray
from funcgraph.lowering import i64_array
from funcgraph.primitives.helpers import check_same_dtypes, declare


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
