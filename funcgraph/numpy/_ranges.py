"""Numerical ranges and grids: linspace, logspace, geomspace, meshgrid."""
import builtins

import numpy as np

from funcgraph import core, dtypes, lax
from funcgraph.array import Array
from funcgraph.numpy._compiled import compiled_when_eager
from funcgraph.numpy._core import (
    asarray_operand, astype, aval_of, broadcast_shapes, canonical_dtype, promote_to_inexact)
from funcgraph.numpy._creation import arange
from funcgraph.numpy._joining import concatenate
from funcgraph.numpy._shapes import broadcast_to, expand_dims, moveaxis, ravel, reshape, shape
from funcgraph.numpy._ufuncs import log10, power, sign


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    num = int(num)
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    return _linspace(start, stop, num, endpoint, retstep, dtype, axis)


@compiled_when_eager(static_argnames=("num", "endpoint", "retstep", "dtype", "axis"))
def _linspace(start, stop, num, endpoint, retstep, dtype, axis):
    """jax's arrangement: start * (1 - t) + stop * t for t = i / div, computed in the
    inexact counterpart of dtype (integer results are floored)."""
    dtype = canonical_dtype(dtype) or dtypes.default_float()
    computation = dtypes.to_inexact(dtype)
    start, stop = promote_to_inexact(asarray_operand(start), asarray_operand(stop))
    start, stop = astype(start, computation), astype(stop, computation)
    bounds = list(broadcast_shapes(aval_of(start).shape, aval_of(stop).shape))
    start, stop = broadcast_to(start, tuple(bounds)), broadcast_to(stop, tuple(bounds))
    axis = len(bounds) + axis + 1 if axis < 0 else axis
    shape_with_axis = bounds[:axis] + [1] + bounds[axis:]
    div = (num - 1) if endpoint else num
    if num > 1:
        real = dtypes.real_dtype(computation)
        delta = (stop - start) / _constant(div, computation)
        out_shape = tuple(bounds[:axis] + [div] + bounds[axis:])
        others = tuple(i for i in range(len(out_shape)) if i != axis)
        t = astype(lax.iota(real, div) / _constant(div, real), computation)
        if len(out_shape) > 1:
            t = lax.broadcast_in_dim(t, out_shape, (axis,))
        out = (lax.broadcast_in_dim(start, out_shape, others) * (1 - t)
               + lax.broadcast_in_dim(stop, out_shape, others) * t)
        if endpoint:
            out = concatenate([out, expand_dims(stop, axis)], axis=axis)
    elif num == 1:
        delta = (astype(_constant(np.nan, computation), computation) if endpoint
                 else stop - start)
        out = reshape(start, tuple(shape_with_axis))
    else:
        delta = _constant(np.nan, computation)
        out = reshape(start, tuple(shape_with_axis))[tuple(
            slice(0, 0) if i == axis else slice(None) for i in range(len(shape_with_axis)))]
    if dtypes.is_int(dtype):
        out = lax.floor(out)
    out = astype(out, dtype)
    return (out, delta) if retstep else out


def _constant(value, dtype):
    v = np.asarray(value, dtype)
    return Array(v, core.aval_of_numpy(v))


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xi = [ravel(x) for x in xi]
    n = len(xi)
    out_shape = [shape(x)[0] for x in xi]
    if indexing == "xy" and n >= 2:
        out_shape[0], out_shape[1] = out_shape[1], out_shape[0]
    out = []
    for i, x in enumerate(xi):
        dim = i
        if indexing == "xy" and n >= 2 and i < 2:
            dim = 1 - i
        if sparse:
            lone = [1] * n
            lone[dim] = shape(x)[0]
            out.append(reshape(x, lone))
        else:
            out.append(lax.broadcast_in_dim(x, tuple(out_shape), (dim,)))
    return out


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    start, stop = promote_to_inexact(start, stop)
    lin = linspace(start, stop, num, endpoint=endpoint, axis=axis, dtype=aval_of(start).dtype)
    if not isinstance(base, (int, float)):
        base = astype(base, aval_of(lin).dtype)
    out = power(base, lin)
    return out if dtype is None else astype(out, dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    start, stop = promote_to_inexact(start, stop)
    if type(start) is Array and type(stop) is Array:
        if np.any(np.asarray(start) == 0) or np.any(np.asarray(stop) == 0):
            raise ValueError("geomspace: start and stop may not be zero")
    start_sign = sign(start)
    out = logspace(log10(start / start_sign), log10(stop / start_sign), num, endpoint=endpoint,
                   base=10.0, axis=axis)
    lead = expand_dims(start_sign, 0) if aval_of(start_sign).ndim else start_sign
    out = moveaxis(out, axis, 0) * lead if aval_of(start_sign).ndim else out * start_sign
    if aval_of(start_sign).ndim:
        out = moveaxis(out, 0, axis)
    return out if dtype is None else astype(out, dtype)
