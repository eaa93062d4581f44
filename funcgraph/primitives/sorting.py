"""Sorting primitives: sort (multi-operand, stable) and top_k."""
import numpy as np

from funcgraph import core, dtypes
from funcgraph.core import ShapedArray
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.ad_util import Zero, is_zero, tangent_aval
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.lowering import i64_array
from funcgraph.primitives.batching_helpers import batch_at
from funcgraph.primitives.base import reshape_p
from funcgraph.primitives.helpers import BOOL, FLOAT, INT, check_dtype, declare, lower_compare
from funcgraph.primitives.slicing import GatherDimensionNumbers, GatherScatterMode, gather_p
from funcgraph.primitives.structural import iota_p

_PRED = ShapedArray((), dtypes.bool_)


def _logic(ctx, name, *args):
    return ctx.op(name, list(args), [_PRED] * len(args), _PRED)


# --- sort: sorts all operands along `dimension` by the first num_keys of them ----------
# Keys compare lexicographically.  Floats order as NumPy and JAX sort them: NaNs (of
# either sign) after everything and equal to each other, -0.0 equal to 0.0 (a stable
# sort keeps their order).  Complex numbers order by real part, then imaginary part.

def _sort_shape(*operands, dimension, is_stable, num_keys):
    if not operands:
        raise TypeError("sort needs at least one operand")
    shapes = {x.shape for x in operands}
    if len(shapes) > 1:
        got = ", ".join(x.str_short() for x in operands)
        raise TypeError(f"sort needs operands of one shape, got {got}")
    ndim = operands[0].ndim
    if not isinstance(dimension, int) or not 0 <= dimension < ndim:
        raise ValueError(f"sort: dimension {dimension!r} is out of bounds for operands of "
                         f"rank {ndim} ({operands[0].str_short()}); it must be in [0, {ndim})")
    if not isinstance(num_keys, int) or not 1 <= num_keys <= len(operands):
        raise ValueError(f"sort: num_keys={num_keys!r} must be between 1 and the number of "
                         f"operands, {len(operands)}")
    if not isinstance(is_stable, bool):
        raise TypeError(f"sort: is_stable must be a bool, got {is_stable!r}")
    return list(operands)


def _numpy_sort_keys(x):
    """Arrays whose lexicographic NumPy order is funcgraph's order of x."""
    if dtypes.is_complex(x.dtype):
        return [np.real(x), np.imag(x)]
    if x.dtype in (dtypes.float16, dtypes.bfloat16):
        return [x.astype(np.float32)]  # exact; NumPy's float sorts put NaNs last
    if x.dtype == dtypes.bool_:
        return [x.astype(np.uint8)]
    return [x]


def _sort_impl(*operands, dimension, is_stable, num_keys):
    keys = []
    for x in operands[:num_keys]:
        keys.extend(_numpy_sort_keys(x))
    # np.lexsort is stable and takes its primary key last.
    perm = np.lexsort(keys[::-1], axis=dimension)
    return [np.take_along_axis(x, perm, axis=dimension) for x in operands]


def _float_lt_eq(ctx, a, b, aval, need_eq):
    """(a < b, a == b or None) in the sort order: NaNs last and all equal."""
    a_nan = lower_compare(ctx, a, a, aval, "NE")
    b_nan = lower_compare(ctx, b, b, aval, "NE")
    a_num = _logic(ctx, "stablehlo.not", a_nan)
    lt = _logic(ctx, "stablehlo.or", lower_compare(ctx, a, b, aval, "LT"),
                _logic(ctx, "stablehlo.and", a_num, b_nan))
    if not need_eq:
        return lt, None
    eq = _logic(ctx, "stablehlo.or", lower_compare(ctx, a, b, aval, "EQ"),
                _logic(ctx, "stablehlo.and", a_nan, b_nan))
    return lt, eq


def _key_lt_eq(ctx, a, b, aval, need_eq):
    """(a < b, a == b or None) for one sort key; eq only when need_eq."""
    if dtypes.is_complex(aval.dtype):
        part = ShapedArray((), dtypes.float32 if aval.dtype == dtypes.complex64 else dtypes.float64)
        re_a, re_b = (ctx.op("stablehlo.real", [v], [aval], part) for v in (a, b))
        im_a, im_b = (ctx.op("stablehlo.imag", [v], [aval], part) for v in (a, b))
        re_lt, re_eq = _float_lt_eq(ctx, re_a, re_b, part, True)
        im_lt, im_eq = _float_lt_eq(ctx, im_a, im_b, part, need_eq)
        lt = _logic(ctx, "stablehlo.or", re_lt, _logic(ctx, "stablehlo.and", re_eq, im_lt))
        return lt, _logic(ctx, "stablehlo.and", re_eq, im_eq) if need_eq else None
    if dtypes.is_float(aval.dtype):
        return _float_lt_eq(ctx, a, b, aval, need_eq)
    eq = lower_compare(ctx, a, b, aval, "EQ") if need_eq else None
    return lower_compare(ctx, a, b, aval, "LT"), eq


def _sort_lowering(ctx, avals_in, avals_out, *operands, dimension, is_stable, num_keys):
    scalars = [ShapedArray((), x.dtype) for x in avals_in]

    def comparator(c, args):
        # args are (lhs_0, rhs_0, lhs_1, rhs_1, ...); build lt_0 | (eq_0 & (lt_1 | ...)).
        result = None
        for k in reversed(range(num_keys)):
            lt, eq = _key_lt_eq(c, args[2 * k], args[2 * k + 1], scalars[k], result is not None)
            if result is not None:
                lt = _logic(c, "stablehlo.or", lt, _logic(c, "stablehlo.and", eq, result))
            result = lt
        return [result], [_PRED]

    region = ctx.region([s for s in scalars for _ in range(2)], comparator)
    return ctx.op("stablehlo.sort", list(operands), avals_in, list(avals_out),
                  {"dimension": f"{dimension} : i64",
                   "is_stable": "true" if is_stable else "false"}, regions=[region])


sort_p = declare("sort", _sort_shape, _sort_impl, _sort_lowering, multiple_results=True)


def _take_along_axis(x, indices, axis):
    """out[..., i, ...] = x[..., indices[..., i, ...], ...] along axis: a gather whose
    other dimensions are batch dimensions of both x and indices."""
    shape = core.get_aval(indices).shape
    batch = tuple(d for d in range(len(shape)) if d != axis)
    dnums = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,),
                                   start_index_map=(axis,), operand_batching_dims=batch,
                                   start_indices_batching_dims=batch)
    return gather_p.bind(x, reshape_p.bind(indices, new_sizes=shape + (1,), dimensions=None),
                         dimension_numbers=dnums, slice_sizes=(1,) * len(shape),
                         indices_are_sorted=False, unique_indices=False,
                         mode=GatherScatterMode.PROMISE_IN_BOUNDS, fill_value=None)


def _sort_jvp(primals, tangents, dimension, is_stable, num_keys):
    """Sort an iota along with the operands to learn the permutation, then apply it to
    the tangents."""
    shape = core.get_aval(primals[0]).shape
    if 0 in shape:  # nothing to permute (and a gather of size-1 slices would not fit)
        return sort_p.bind(*primals, dimension=dimension, is_stable=is_stable,
                           num_keys=num_keys), list(tangents)
    index_dtype = dtypes.int32 if shape[dimension] < np.iinfo(np.int32).max else np.dtype(np.int64)
    iota = iota_p.bind(dtype=index_dtype, shape=shape, dimension=dimension)
    *outs, perm = sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable,
                              num_keys=num_keys)
    t_outs = [Zero(tangent_aval(core.get_aval(o))) if is_zero(t)
              else _take_along_axis(t, perm, dimension) for o, t in zip(outs, tangents)]
    return outs, t_outs


jvp_rules[sort_p] = _sort_jvp


def _sort_batch(axis_data, args, dims, dimension, is_stable, num_keys):
    """Sort needs operands of one shape: batched ones go to their most common batch
    axis (only those elsewhere move), unbatched ones are broadcast there."""
    batched = [d for d in dims if d is not None]
    target = max(batched, key=batched.count)  # ties: the first operand's
    operands = [batch_at(x, d, axis_data.size, target) for x, d in zip(args, dims)]
    outs = sort_p.bind(*operands, dimension=dimension + (dimension >= target),
                       is_stable=is_stable, num_keys=num_keys)
    return outs, [target] * len(outs)


batching_rules[sort_p] = _sort_batch


# --- top_k: the k largest entries along an axis, and their indices ---------------------
# Largest first, ties to the lower index.  Floats order totally, as XLA's TopK does:
# -NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN.

def _top_k_shape(x, k, axis):
    check_dtype("top_k", x, (BOOL, INT, FLOAT))
    if x.ndim == 0:
        raise ValueError(f"top_k needs an operand of rank >= 1, got {x.str_short()}")
    if not isinstance(k, int) or isinstance(k, bool):
        raise TypeError(f"top_k: k must be a Python int, got {k!r}")
    if not 0 <= axis < x.ndim:
        raise ValueError(f"top_k: axis {axis} out of range for {x.str_short()}")
    if not 0 <= k <= x.shape[axis]:
        raise ValueError(f"top_k: k={k} must be between 0 and the size {x.shape[axis]} of "
                         f"axis {axis} of the operand {x.str_short()}")
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1:]
    return [ShapedArray(shape, x.dtype, x.weak_type), ShapedArray(shape, dtypes.int32)]


def _total_order_key(x):
    """An integer array ordered as x is in the total order (floats by their bits)."""
    if x.dtype == dtypes.bool_:
        return x.astype(np.uint8)
    if not dtypes.is_float(x.dtype):
        return x
    bits = x.view(np.dtype(f"i{x.dtype.itemsize}"))
    magnitude = np.array(np.iinfo(bits.dtype).max, bits.dtype)
    # Negative floats order in reverse of their bits: flip all but the sign bit.
    return np.where(bits < 0, bits ^ magnitude, bits)


def _top_k_impl(x, k, axis):
    # ~key reverses the order of any integer type, so an ascending stable argsort of it
    # puts the largest first and keeps equal entries in index order.
    perm = np.argsort(~_total_order_key(x), axis=axis, kind="stable")
    perm = np.take(perm, np.arange(k), axis=axis)
    return [np.take_along_axis(x, perm, axis=axis), perm.astype(np.int32)]


def _top_k_lowering(ctx, avals_in, avals_out, x, k, axis):
    """XLA's TopK works on the last axis: another axis is swapped there and back."""
    last = avals_in[0].ndim - 1
    if axis == last:
        return ctx.op("chlo.top_k", [x], avals_in, list(avals_out), {"k": f"{k} : i64"})
    perm = list(range(last + 1))
    perm[axis], perm[last] = last, axis

    def swapped(aval):
        return aval.update(shape=tuple(aval.shape[p] for p in perm))
    attrs = {"permutation": i64_array(perm)}
    x_t = ctx.op("stablehlo.transpose", [x], avals_in, swapped(avals_in[0]), attrs)
    outs = ctx.op("chlo.top_k", [x_t], [swapped(avals_in[0])],
                  [swapped(a) for a in avals_out], {"k": f"{k} : i64"})
    return [ctx.op("stablehlo.transpose", [o], [swapped(a)], a, attrs)
            for o, a in zip(outs, avals_out)]


top_k_p = declare("top_k", _top_k_shape, _top_k_impl, _top_k_lowering, multiple_results=True)


def _top_k_jvp(primals, tangents, k, axis):
    """The tangents at the chosen indices; the indices have none."""
    (x,), (t,) = primals, tangents
    values, indices = top_k_p.bind(x, k=k, axis=axis)
    return [values, indices], [_take_along_axis(t, indices, axis),
                               Zero(tangent_aval(core.get_aval(indices)))]


jvp_rules[top_k_p] = _top_k_jvp


def _top_k_batch(axis_data, args, dims, k, axis):
    """The batch axis stays where it is; the operand's axis is renumbered around it."""
    (x,), (d,) = args, dims
    return top_k_p.bind(x, k=k, axis=axis + (d <= axis)), [d, d]


batching_rules[top_k_p] = _top_k_batch
