"""How structural primitives lower on key arrays (arrays of an extended dtype).

A key array lowers to its physical array: the key data are trailing dimensions (a
key<fry>[3] is a uint32[3, 2]).  lowering.py lowers most primitives on key arrays with
the physical avals as they are (reshape, concatenate, squeeze, calls, control flow);
the rules here are for the primitives whose parameters name dimensions or sizes: each
extends them over the trailing physical dimensions and calls the primitive's own rule.
"""
import numpy as np

from funcgraph import core, dtypes, lowering
from funcgraph.lowering import extended_lowerings, lowering_rules


def _prim(name):
    for prim in lowering_rules:
        if prim.name == name:
            return prim
    raise LookupError(name)


def _trailing(avals_out, logical_ndim):
    """The physical dimensions past the logical ones (the key data's)."""
    return avals_out[0].shape[logical_ndim:]


def _transpose(rule, ctx, avals_in, avals_out, x, permutation):
    n = len(permutation)
    extra = tuple(range(n, avals_in[0].ndim))
    return rule(ctx, avals_in, avals_out, x, permutation=tuple(permutation) + extra)


def _broadcast_in_dim(rule, ctx, avals_in, avals_out, x, shape, broadcast_dimensions):
    n = len(shape)
    extra = _trailing(avals_out, n)
    return rule(ctx, avals_in, avals_out, x, shape=tuple(shape) + extra,
                broadcast_dimensions=tuple(broadcast_dimensions)
                + tuple(range(n, n + len(extra))))


def _slice(rule, ctx, avals_in, avals_out, x, start_indices, limit_indices, strides=None):
    extra = _trailing(avals_out, len(start_indices))
    strides = (1,) * len(start_indices) if strides is None else tuple(strides)
    return rule(ctx, avals_in, avals_out, x, start_indices=tuple(start_indices)
                + (0,) * len(extra), limit_indices=tuple(limit_indices) + extra,
                strides=strides + (1,) * len(extra))


def _zero_indices(ctx, like_aval, count):
    scalar = core.ShapedArray((), like_aval.dtype)
    return [ctx.constant(np.zeros((), like_aval.dtype), scalar)] * count, [scalar] * count


def _dynamic_slice(rule, ctx, avals_in, avals_out, x, *idx, slice_sizes):
    extra = _trailing(avals_out, len(slice_sizes))
    zeros, zero_avals = _zero_indices(ctx, avals_in[1] if idx else
                                      core.ShapedArray((), dtypes.int32), len(extra))
    return rule(ctx, list(avals_in) + zero_avals, avals_out, x, *idx, *zeros,
                slice_sizes=tuple(slice_sizes) + extra)


def _dynamic_update_slice(rule, ctx, avals_in, avals_out, x, update, *idx):
    extra = avals_out[0].ndim - len(idx)
    zeros, zero_avals = _zero_indices(ctx, avals_in[2] if idx else
                                      core.ShapedArray((), dtypes.int32), extra)
    return rule(ctx, list(avals_in) + zero_avals, avals_out, x, update, *idx, *zeros)


def _select_n(rule, ctx, avals_in, avals_out, which, *cases):
    """The predicate (of the logical shape, or a scalar) broadcast over the key data."""
    pred, out = avals_in[0], avals_out[0]
    if pred.shape and pred.shape != out.shape:
        target = pred.update(shape=out.shape)
        which = ctx.op("stablehlo.broadcast_in_dim", [which], [pred], target,
                       {"broadcast_dimensions": lowering.i64_array(range(pred.ndim))})
        avals_in = [target] + list(avals_in[1:])
    return rule(ctx, avals_in, avals_out, which, *cases)


def _gather(rule, ctx, avals_in, avals_out, operand, indices, *, dimension_numbers,
            slice_sizes, **params):
    """The key data are offset dimensions of the result, taken whole."""
    operand_aval = avals_in[0]
    n = len(slice_sizes)
    extra = operand_aval.shape[n:]
    out_ndim = avals_out[0].ndim - len(extra)
    dn = dimension_numbers._replace(
        offset_dims=tuple(dimension_numbers.offset_dims)
        + tuple(range(out_ndim, out_ndim + len(extra))))
    return rule(ctx, avals_in, avals_out, operand, indices, dimension_numbers=dn,
                slice_sizes=tuple(slice_sizes) + tuple(extra), **params)


def _scatter(rule, ctx, avals_in, avals_out, operand, indices, updates, *,
             dimension_numbers, **params):
    """The key data are trailing window dimensions of the updates, written whole."""
    dn = dimension_numbers
    logical_operand_ndim = (len(dn.update_window_dims) + len(dn.inserted_window_dims)
                            + len(dn.operand_batching_dims))
    extra = avals_in[0].ndim - logical_operand_ndim
    logical = avals_in[2].ndim - extra
    dn = dimension_numbers._replace(
        update_window_dims=tuple(dimension_numbers.update_window_dims)
        + tuple(range(logical, logical + extra)))
    return rule(ctx, avals_in, avals_out, operand, indices, updates, dimension_numbers=dn,
                **params)


for _name, _rule in [("transpose", _transpose), ("broadcast_in_dim", _broadcast_in_dim),
                     ("slice", _slice), ("dynamic_slice", _dynamic_slice),
                     ("dynamic_update_slice", _dynamic_update_slice),
                     ("select_n", _select_n), ("gather", _gather), ("scatter", _scatter)]:
    extended_lowerings[_prim(_name)] = _rule
