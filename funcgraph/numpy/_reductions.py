"""Reductions: sum, prod, max, min, all, any, mean, var, std."""
import builtins
import math

import numpy as np

from funcgraph import core, dtypes
from funcgraph.array import Array
from funcgraph import lax
from funcgraph.numpy._core import asarray_operand, astype, aval_of, canonical_axes
from funcgraph.numpy._compiled import compiled_when_eager
from funcgraph.numpy._shapes import broadcast_to, reshape
from funcgraph.numpy._types import bool_
from funcgraph.numpy._ufuncs import conjugate, maximum, minimum, real, sqrt, where_values
from funcgraph.primitives import reductions as red


def _reduce(prim, x, axis, keepdims, dtype=None, initial=None, where_=None, identity=None):
    x = asarray_operand(x)
    if dtype is not None:
        x = astype(x, dtype)
    aval = aval_of(x)
    axes = canonical_axes(axis, aval.ndim)
    if where_ is not None:
        x = where_values(where_, x, identity)
    out = prim.bind(x, axes=axes)
    if initial is not None:
        out = _initial_combine(prim, out, initial)
    if keepdims:
        out = reshape(out, tuple(1 if i in axes else d for i, d in enumerate(aval.shape)))
    return out


def _initial_combine(prim, out, initial):
    if prim is red.reduce_sum_p:
        return out + initial
    if prim is red.reduce_prod_p:
        return out * initial
    if prim is red.reduce_max_p:
        return maximum(out, initial)
    return minimum(out, initial)


def _sum_dtype(x, dtype):
    if dtype is not None:
        return dtype
    aval = aval_of(x)
    narrow = aval.dtype.itemsize < dtypes.default_int().itemsize
    if aval.dtype == dtypes.bool_ or (dtypes.is_int(aval.dtype) and narrow):
        return dtypes.default_uint() if dtypes.is_unsigned(aval.dtype) else dtypes.default_int()
    return None


_NARROW_FLOATS = (dtypes.float16, dtypes.bfloat16)


def _computed_wide(fn, a, dtype, *args, **kwargs):
    """fn(a, ...) computed in float32 and rounded once when a is float16/bfloat16 and no
    dtype was asked for (as JAX does: narrow floats do not accumulate narrow)."""
    a = asarray_operand(a)
    narrow = aval_of(a).dtype
    if dtype is not None or narrow not in _NARROW_FLOATS:
        return fn(a, dtype, *args, **kwargs)
    return astype(fn(astype(a, dtypes.float32), None, *args, **kwargs), narrow)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    return _computed_wide(
        lambda a, dtype: _reduce(red.reduce_sum_p, a, axis, keepdims, _sum_dtype(a, dtype),
                                 initial, where, 0), a, dtype)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    return _computed_wide(
        lambda a, dtype: _reduce(red.reduce_prod_p, a, axis, keepdims, _sum_dtype(a, dtype),
                                 initial, where, 1), a, dtype)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _check_nonempty(a, axis, initial, "max")
    return _reduce(red.reduce_max_p, a, axis, keepdims, None, initial, where,
                   _lowest(aval_of(a).dtype))


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _check_nonempty(a, axis, initial, "min")
    return _reduce(red.reduce_min_p, a, axis, keepdims, None, initial, where,
                   _highest(aval_of(a).dtype))


amax, amin = max, min


def _lowest(dtype):
    if dtypes.is_float(dtype):
        return -np.inf
    return np.iinfo(dtype).min if dtype.kind in "iu" else False


def _highest(dtype):
    if dtypes.is_float(dtype):
        return np.inf
    return np.iinfo(dtype).max if dtype.kind in "iu" else True


def _check_nonempty(a, axis, initial, name):
    aval = aval_of(a)
    axes = canonical_axes(axis, aval.ndim)
    if initial is None and builtins.any(aval.shape[ax] == 0 for ax in axes):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")


def all(a, axis=None, out=None, keepdims=False, where=None):
    return _reduce(red.reduce_and_p, astype(a, bool_), axis, keepdims, where_=where,
                   identity=True)


def any(a, axis=None, out=None, keepdims=False, where=None):
    return _reduce(red.reduce_or_p, astype(a, bool_), axis, keepdims, where_=where,
                   identity=False)


@compiled_when_eager(static_argnames=("axis", "dtype", "keepdims"))
def mean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    return _computed_wide(_mean, a, dtype, axis, keepdims, where)


def _mean(a, dtype, axis, keepdims, where):
    aval = aval_of(a)
    axes = canonical_axes(axis, aval.ndim)
    if dtype is None:
        dtype = dtypes.to_inexact(aval.dtype, aval.weak_type)
    if where is None:
        count = math.prod(aval.shape[i] for i in axes)
    else:  # counted in the result's dtype, as jax does
        count = sum(broadcast_to(where, aval.shape), axis=axis, dtype=dtype, keepdims=keepdims)
    total = sum(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    if where is not None or type(count) is not int:  # a symbolic count is a traced value
        return total / count
    return total / _scalar(count, dtype)


def _scalar(value, dtype, weak_type=True):
    return Array(np.array(value, dtype), core.ShapedArray((), np.dtype(dtype), weak_type))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    # ddof passed on, so traced (a weak scalar) in the compiled program, as in jax's
    return _var_program(a, axis, dtype, ddof, keepdims, where)


@compiled_when_eager(static_argnames=("axis", "dtype", "keepdims"))
def _var_program(a, axis, dtype, ddof, keepdims, where):
    return _computed_wide(_var, a, dtype, axis, ddof, keepdims, where)


def _var(a, dtype, axis, ddof, keepdims, where):
    aval = aval_of(a)
    if dtype is None:
        dtype = dtypes.to_inexact(aval.dtype, aval.weak_type)
    a = astype(a, dtype)
    centered = a - mean(a, axis, keepdims=True, where=where)
    sq = (real(centered * conjugate(centered)) if dtypes.is_complex(dtype)
          else lax.square(centered))
    axes = canonical_axes(axis, aval.ndim)
    if where is None:
        count = _scalar(int(np.prod([aval.shape[i] for i in axes])), aval_of(sq).dtype,
                        weak_type=False)
    else:
        count = sum(broadcast_to(where, aval.shape), axis=axis, dtype=aval_of(sq).dtype,
                    keepdims=keepdims)
    # ddof may be traced (jax traces it): the normalizer is computed, NaN where not positive
    normalizer = count - ddof
    out = sum(sq, axis, keepdims=keepdims, where=where) / normalizer
    return where_values(normalizer > 0, out, np.nan)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    return _std_program(a, axis, dtype, ddof, keepdims, where)


@compiled_when_eager(static_argnames=("axis", "dtype", "keepdims"))
def _std_program(a, axis, dtype, ddof, keepdims, where):
    return sqrt(_computed_wide(_var, a, dtype, axis, ddof, keepdims, where))
