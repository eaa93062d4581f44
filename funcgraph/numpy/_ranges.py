"""Numerical ranges and grids: linspace, logspace, geomspace, meshgrid."""
import builtins

import numpy as np

from funcgraph import dtypes
from funcgraph.array import Array
from funcgraph.numpy._core import (
    asarray_operand, astype, aval_of, broadcast_shapes, canonical_dtype, promote_to_inexact)
from funcgraph.numpy._creation import arange
from funcgraph.numpy._joining import concatenate
from funcgraph.numpy._shapes import broadcast_to, expand_dims, moveaxis, ravel, reshape, shape
from funcgraph.numpy._ufuncs import log10, power, sign


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    num = int(num)
    dtype = canonical_dtype(dtype) or dtypes.default_float()
    start, stop = asarray_operand(start), asarray_operand(stop)
    start, stop = promote_to_inexact(start, stop)
    shape = broadcast_shapes(aval_of(start).shape, aval_of(stop).shape)
    div = (num - 1) if endpoint else num
    steps = arange(num, dtype=aval_of(start).dtype)
    steps = reshape(steps, (num,) + (1,) * len(shape))
    delta = (stop - start) / builtins.max(div, 1)
    out = start + steps * delta
    if endpoint and num > 1:
        out = concatenate([out[:-1], expand_dims(broadcast_to(stop, shape), 0)], axis=0)
    out = moveaxis(out, 0, axis) if axis != 0 else out
    out = astype(out, dtype)
    return (out, delta) if retstep else out


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
        lone = [1] * n
        lone[dim] = shape(x)[0]
        x = reshape(x, lone)
        out.append(x if sparse else broadcast_to(x, out_shape))
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
