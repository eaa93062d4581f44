"""Reductions: reduce_sum/max/min/prod/and/or, argmax/argmin and cumulative ops."""
import numpy as np

from funcgraph import dtypes
from funcgraph.core import ShapedArray
from funcgraph.lowering import i64_array
from funcgraph.primitives.helpers import ANY, BOOL, INT, FLOAT, NUMBER, check_dtype, declare


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
    if which in ("mul", "and"):
        return np.ones((), dtype)
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
reduce_and_p = reduction("reduce_and", np.all, "and", "stablehlo.and", (BOOL, INT))
reduce_or_p = reduction("reduce_or", np.any, "or", "stablehlo.or", (BOOL, INT))
