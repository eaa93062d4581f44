"""Reductions: reduce_sum/max/min/prod/and/or, argmax/argmin and cumulative ops."""
import numpy as np

from funcgraph import dtypes
from funcgraph.core import ShapedArray
from funcgraph.lowering import i64_array
from funcgraph.primitives.helpers import (
    ANY, BOOL, INT, FLOAT, NUMBER, check_dtype, compare_type, declare)


def _reduced_shape(name, x, axes, kinds):
    check_dtype(name, x, kinds)
    axes = tuple(axes)
    if len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ValueError(f"{name}: axes {axes} are invalid for an array of rank {x.ndim} "
                         f"({x.str_short()}); each must be in [0, {x.ndim}) and appear once")
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _identity(dtype, which):
    """The identity element of a monoid over `dtype` ("add", "mul", "max", "min", ...)."""
    if which in ("add", "or"):
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


def reduction(name, np_fn, monoid, hlo_op, kinds):
    """A reduction primitive over static `axes` with a monoid (identity + op)."""
    def impl(x, axes):
        if x.size == 0:
            shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
            return np.full(shape, _identity(x.dtype, monoid), x.dtype)
        return np.asarray(np_fn(x, axis=tuple(axes))).astype(x.dtype)

    def lower(ctx, avals_in, avals_out, x, axes):
        dtype = avals_in[0].dtype
        scalar = ShapedArray((), dtype)
        init = ctx.constant(_identity(dtype, monoid), scalar)
        body = ctx.scalar_region(dtype, 2, hlo_op)
        return ctx.op("stablehlo.reduce", [x, init], [avals_in[0], scalar], avals_out[0],
                      {"dimensions": i64_array(axes)}, regions=[body])

    return declare(name, lambda x, axes: _reduced_shape(name, x, axes, kinds), impl, lower)


reduce_sum_p = reduction("reduce_sum", np.sum, "add", "stablehlo.add", NUMBER)
reduce_prod_p = reduction("reduce_prod", np.prod, "mul", "stablehlo.multiply", NUMBER)
reduce_max_p = reduction("reduce_max", np.max, "max", "stablehlo.maximum", ANY)
reduce_min_p = reduction("reduce_min", np.min, "min", "stablehlo.minimum", ANY)
# Bitwise on integers (logical on bools), as XLA's and/or.
reduce_and_p = reduction("reduce_and", np.bitwise_and.reduce, "and", "stablehlo.and",
                         (BOOL, INT))
reduce_or_p = reduction("reduce_or", np.bitwise_or.reduce, "or", "stablehlo.or", (BOOL, INT))


# --- argmax / argmin: index of the first max (min) along one axis ---------------------
# A NaN counts as larger (for argmax) or smaller (for argmin) than every number, so the
# first NaN wins, as in NumPy and JAX.

def _argminmax_shape(name, x, axes, index_dtype):
    check_dtype(name, x, (BOOL, INT, FLOAT))
    axes = tuple(axes)
    if len(axes) != 1 or not 0 <= axes[0] < x.ndim:
        raise ValueError(f"{name}: axes={axes} must be one axis in [0, {x.ndim}) of the "
                         f"operand {x.str_short()}")
    axis, = axes
    if x.shape[axis] == 0:
        raise ValueError(f"{name} needs a non-empty reduced dimension, but axis {axis} of "
                         f"{x.str_short()} has size 0")
    if not isinstance(index_dtype, np.dtype) or not dtypes.is_int(index_dtype):
        raise TypeError(f"{name}: index_dtype must be an integer dtype, got {index_dtype}")
    if x.shape[axis] - 1 > dtypes.iinfo(index_dtype).max:
        raise ValueError(f"{name}: index_dtype {index_dtype.name} cannot hold the indices of "
                         f"axis {axis} of size {x.shape[axis]}; use a wider index_dtype")
    shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
    return ShapedArray(shape, index_dtype)


def _argminmax_impl(np_fn):
    def impl(x, axes, index_dtype):
        if x.dtype in (dtypes.float16, dtypes.bfloat16):
            x = x.astype(np.float32)  # exact, and NumPy's NaN-aware loops exist for it
        return np.asarray(np_fn(x, axis=axes[0])).astype(index_dtype)
    return impl


def _compare(ctx, x, y, aval, direction):
    return ctx.op("stablehlo.compare", [x, y], [aval, aval], aval.update(dtype=dtypes.bool_),
                  {"comparison_direction": f"#stablehlo<comparison_direction {direction}>",
                   "compare_type": compare_type(aval.dtype)})


def _bool_op(ctx, name, *args):
    scalar = ShapedArray((), dtypes.bool_)
    return ctx.op(name, list(args), [scalar] * len(args), scalar)


def _argminmax_lowering(direction, monoid):
    """A variadic reduce over (values, iota indices); the comparator is a total preorder
    (NaN above/below all numbers, NaNs equal) with ties going to the lower index, so it is
    associative and commutative, as reduce requires."""
    def lower(ctx, avals_in, avals_out, x, axes, index_dtype):
        aval = avals_in[0]
        idx_aval = ShapedArray(aval.shape, index_dtype)
        val = ShapedArray((), aval.dtype)
        idx = ShapedArray((), index_dtype)
        iota = ctx.op("stablehlo.iota", [], [], idx_aval, {"iota_dimension": f"{axes[0]} : i64"})
        init_val = ctx.constant(_identity(aval.dtype, monoid), val)
        init_idx = ctx.constant(np.zeros((), index_dtype), idx)

        def body(c, args):
            a, a_idx, b, b_idx = args
            better = _compare(c, b, a, val, direction)
            same = _compare(c, b, a, val, "EQ")
            if dtypes.is_float(aval.dtype):
                a_nan = _compare(c, a, a, val, "NE")
                b_nan = _compare(c, b, b, val, "NE")
                a_num = _bool_op(c, "stablehlo.not", a_nan)
                better = _bool_op(c, "stablehlo.or", better,
                                  _bool_op(c, "stablehlo.and", b_nan, a_num))
                same = _bool_op(c, "stablehlo.or", same,
                                _bool_op(c, "stablehlo.and", b_nan, a_nan))
            earlier = _compare(c, b_idx, a_idx, idx, "LT")
            pick_b = _bool_op(c, "stablehlo.or", better,
                              _bool_op(c, "stablehlo.and", same, earlier))
            pred = ShapedArray((), dtypes.bool_)
            out_val = c.op("stablehlo.select", [pick_b, b, a], [pred, val, val], val)
            out_idx = c.op("stablehlo.select", [pick_b, b_idx, a_idx], [pred, idx, idx], idx)
            return [out_val, out_idx], [val, idx]

        region = ctx.region([val, idx, val, idx], body)
        out = avals_out[0]
        results = ctx.op("stablehlo.reduce", [x, iota, init_val, init_idx],
                         [aval, idx_aval, val, idx], [out.update(dtype=aval.dtype), out],
                         {"dimensions": i64_array(axes)}, regions=[region])
        return results[1]
    return lower


def _argminmax(name, np_fn, direction, monoid):
    def shape_rule(x, axes, index_dtype):
        return _argminmax_shape(name, x, axes, index_dtype)
    return declare(name, shape_rule, _argminmax_impl(np_fn), _argminmax_lowering(direction, monoid))


argmax_p = _argminmax("argmax", np.argmax, "GT", "max")
argmin_p = _argminmax("argmin", np.argmin, "LT", "min")


# --- cumulative reductions along one axis -------------------------------------------
# Lowered as a reduce_window whose window spans the whole axis, padded with the
# identity on the low side (high side when reverse) so that output i sees inputs 0..i.

def _cumulative_shape(name, kinds):
    def rule(x, axis, reverse):
        check_dtype(name, x, kinds)
        if not isinstance(axis, int) or not 0 <= axis < x.ndim:
            raise ValueError(f"{name}: axis {axis!r} is out of bounds for the operand "
                             f"{x.str_short()} of rank {x.ndim}; it must be in [0, {x.ndim})")
        if not isinstance(reverse, bool):
            raise TypeError(f"{name}: reverse must be a bool, got {reverse!r}")
        return x
    return rule


def _cumulative_impl(accumulate):
    def impl(x, axis, reverse):
        dtype = x.dtype
        if dtype in (dtypes.float16, dtypes.bfloat16):
            x = x.astype(np.float32)
        if reverse:
            x = np.flip(x, axis)
        with np.errstate(all="ignore"):
            out = accumulate(x, axis=axis, dtype=x.dtype)
        if reverse:
            out = np.flip(out, axis)
        return np.asarray(out).astype(dtype)
    return impl


def _cumulative_lowering(monoid, region_fn):
    def lower(ctx, avals_in, avals_out, x, axis, reverse):
        aval = avals_in[0]
        if aval.size == 0:
            return x
        n = aval.shape[axis]
        window = [1] * aval.ndim
        window[axis] = n
        padding = [[0, 0] for _ in aval.shape]
        padding[axis] = [0, n - 1] if reverse else [n - 1, 0]
        scalar = ShapedArray((), aval.dtype)
        init = ctx.constant(_identity(aval.dtype, monoid), scalar)
        attrs = {"window_dimensions": i64_array(window),
                 "window_strides": i64_array([1] * aval.ndim),
                 "padding": f"dense<{padding}> : tensor<{aval.ndim}x2xi64>"}
        return ctx.op("stablehlo.reduce_window", [x, init], [aval, scalar], avals_out[0],
                      attrs, regions=[region_fn(ctx, aval.dtype)])
    return lower


def _hlo_region(op_name):
    return lambda ctx, dtype: ctx.scalar_region(dtype, 2, op_name)


def _logaddexp_region(ctx, dtype):
    """log(exp(a) + exp(b)) = max + log1p(exp(-|a - b|)); equal infinities (whose
    difference is NaN) give max itself."""
    s = ShapedArray((), dtype)

    def body(c, args):
        a, b = args
        hi = c.op("stablehlo.maximum", [a, b], [s, s], s)
        diff = c.op("stablehlo.subtract", [a, b], [s, s], s)
        neg = c.op("stablehlo.negate", [c.op("stablehlo.abs", [diff], [s], s)], [s], s)
        soft = c.op("stablehlo.log_plus_one", [c.op("stablehlo.exponential", [neg], [s], s)],
                    [s], s)
        total = c.op("stablehlo.add", [hi, soft], [s, s], s)
        same = _compare(c, a, b, s, "EQ")
        pred = ShapedArray((), dtypes.bool_)
        return [c.op("stablehlo.select", [same, hi, total], [pred, s, s], s)], [s]
    return ctx.region([s, s], body)


def _logaddexp_accumulate(x, axis, dtype):
    return np.logaddexp.accumulate(x, axis=axis, dtype=dtype)


def cumulative(name, accumulate, monoid, region_fn, kinds):
    return declare(name, _cumulative_shape(name, kinds), _cumulative_impl(accumulate),
                   _cumulative_lowering(monoid, region_fn))


cumsum_p = cumulative("cumsum", np.cumsum, "add", _hlo_region("stablehlo.add"), NUMBER)
cumprod_p = cumulative("cumprod", np.cumprod, "mul", _hlo_region("stablehlo.multiply"), NUMBER)
cummax_p = cumulative("cummax", np.maximum.accumulate, "max",
                      _hlo_region("stablehlo.maximum"), (INT, FLOAT))
cummin_p = cumulative("cummin", np.minimum.accumulate, "min",
                      _hlo_region("stablehlo.minimum"), (INT, FLOAT))
cumlogsumexp_p = cumulative("cumlogsumexp", _logaddexp_accumulate, "max", _logaddexp_region,
                            (FLOAT,))
