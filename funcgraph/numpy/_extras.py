"""Index helpers and small numerical routines: triu/tril_indices, polyval, lexsort,
trapezoid, block."""
import numpy as np

from funcgraph import core, lax
from funcgraph.array import Array
from funcgraph.numpy._compiled import compiled_when_eager
from funcgraph.numpy._core import (
    asarray, asarray_operand, broadcast_shapes, promote_dtypes, promote_to_inexact)
from funcgraph.numpy._creation import zeros_like
from funcgraph.numpy._joining import concatenate
from funcgraph.numpy._manipulation import diff
from funcgraph.numpy._reductions import sum
from funcgraph.numpy._shapes import moveaxis, ndim, reshape


def _index_array(values):
    values = np.asarray(values, np.int32)
    return Array(values, core.aval_of_numpy(values))


def triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle of an (n, m) array (static sizes)."""
    rows, cols = np.triu_indices(int(n), int(k), None if m is None else int(m))
    return _index_array(rows), _index_array(cols)


def tril_indices(n, k=0, m=None):
    rows, cols = np.tril_indices(int(n), int(k), None if m is None else int(m))
    return _index_array(rows), _index_array(cols)


def triu_indices_from(arr, k=0):
    shape = core.get_aval(arr).shape
    if len(shape) != 2:
        raise ValueError(f"triu_indices_from: arr must be 2-d, got shape {shape}")
    return triu_indices(shape[0], k, shape[1])


def tril_indices_from(arr, k=0):
    shape = core.get_aval(arr).shape
    if len(shape) != 2:
        raise ValueError(f"tril_indices_from: arr must be 2-d, got shape {shape}")
    return tril_indices(shape[0], k, shape[1])


def polyval(p, x, *, unroll=16):
    """p[0] * x**(M-1) + ... + p[M-1], by Horner's rule as a scan over p's first axis
    (p may have more axes: they broadcast with x's, as in jax)."""
    p, x = asarray_operand(p), asarray_operand(x)  # lists: jax's TypeError
    if p.ndim == 0:
        raise ValueError("polyval: p must have at least one axis, got a scalar")
    p, x = promote_dtypes(p, x)
    y = lax.full_like(x, 0, shape=broadcast_shapes(p.shape[1:], x.shape))
    y, _ = lax.scan(lambda y, c: (y * x + c, None), y, p, unroll=unroll)
    return y


def lexsort(keys, axis=-1):
    """Indices that sort by the last key first, then the one before it, ... (stable)."""
    keys = [asarray(k) for k in keys]
    if not keys:
        raise TypeError("lexsort: need at least one key")
    shape = keys[0].shape
    axis = axis % len(shape) if shape else 0
    iota = lax.broadcasted_iota(np.int32, shape, axis)
    ordered = lax.sort(tuple(reversed(keys)) + (iota,), dimension=axis, is_stable=True,
                       num_keys=len(keys))
    return ordered[-1]


@compiled_when_eager(static_argnames=("axis",))
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of y by the trapezoidal rule along axis (samples at x, or spaced dx), in
    jax's arrangement: with one spacing, dx * (the sum less half the end values)."""
    if x is None:
        (y,) = promote_to_inexact(asarray(y))
        dx = asarray(dx)
        if dx.ndim > 0:
            dx = moveaxis(reshape(dx, (1,) * (y.ndim - dx.ndim) + dx.shape), axis, -1)
    else:
        y, x = promote_to_inexact(asarray(y), asarray(x))
        dx = diff(x) if x.ndim == 1 else moveaxis(diff(x, axis=axis), axis, -1)
    y = moveaxis(y, axis, -1)
    if dx.ndim == 0 or dx.shape[-1] == 1:
        step = dx if dx.ndim == 0 else dx[..., 0]
        return step * (sum(y, axis=-1) - 0.5 * (y[..., 0] + y[..., -1]))
    return 0.5 * sum(dx * (y[..., 1:] + y[..., :-1]), axis=-1)


def block(arrays):
    """An array assembled from nested lists of blocks, as numpy.block: the innermost lists
    join along the last axis, the next ones along the one before, and so on."""

    def depth(x):
        if isinstance(x, tuple):
            raise TypeError("block: use lists, not tuples, to nest the blocks")
        return 1 + depth(x[0]) if isinstance(x, list) and x else (0 if not isinstance(x, list)
                                                                    else 1)
    d = depth(arrays)

    def leaves(x):
        return [y for item in x for y in leaves(item)] if isinstance(x, list) else [x]
    rank = max([d] + [ndim(x) for x in leaves(arrays)])

    def build(x, level):
        if not isinstance(x, list):
            x = asarray(x)
            return reshape(x, (1,) * (rank - x.ndim) + x.shape)
        if not x:
            raise ValueError("block: lists must not be empty")
        return concatenate([build(item, level + 1) for item in x], axis=rank - d + level)
    return build(arrays, 0)
