"""Diagonals and triangles: diagonal, trace, diag, tri, tril, triu."""
import builtins

import numpy as np

from funcgraph import dtypes, lax
from funcgraph.numpy._core import asarray_operand, astype, aval_of, canonical_dtype, check_axis
from funcgraph.numpy._creation import zeros, zeros_like
from funcgraph.numpy._joining import slice_axis
from funcgraph.numpy._reductions import sum
from funcgraph.numpy._shapes import expand_dims, moveaxis, ndim, reshape, shape
from funcgraph.numpy._ufuncs import equal, greater_equal, where_values


def diagonal(a, offset=0, axis1=0, axis2=1):
    a = asarray_operand(a)
    nd = ndim(a)
    if nd < 2:
        raise ValueError(f"diagonal requires an array of at least two dimensions, got shape "
                         f"{shape(a)}")
    i, j = check_axis(axis1, nd, "axis1"), check_axis(axis2, nd, "axis2")
    if i == j:
        raise ValueError("diagonal: axis1 and axis2 cannot be the same")
    a = moveaxis(a, (i, j), (-2, -1))
    *lead, n, m = shape(a)
    offset = int(offset)
    row0, col0 = (0, offset) if offset >= 0 else (-offset, 0)
    length = builtins.max(0, builtins.min(n - row0, m - col0))
    if not length:
        row0 = col0 = 0
    # the diagonal of the rows [row0, row0 + length) is every (m + 1)-th element of them,
    # flattened, from col0 on: one reshape and one strided slice
    rows = slice_axis(a, row0, row0 + length, len(lead))
    flat = reshape(rows, tuple(lead) + (length * m,))
    stop = col0 + (length - 1) * (m + 1) + 1 if length else 0
    starts = [0] * len(lead) + [col0]
    return lax.slice(flat, starts, tuple(lead) + (stop,), (1,) * len(lead) + (m + 1,))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def _tri_mask(n, m, k):
    rows = lax.broadcasted_iota(dtypes.default_int(), (n, m), 0)
    cols = lax.broadcasted_iota(dtypes.default_int(), (n, m), 1)
    return greater_equal(rows + k, cols)


def tri(N, M=None, k=0, dtype=None):
    dtype = canonical_dtype(dtype) or dtypes.default_float()
    M = N if M is None else M
    return astype(_tri_mask(int(N), int(M), int(k)), dtype)


def tril(m, k=0):
    m = asarray_operand(m)
    if ndim(m) < 2:
        raise ValueError(f"tril requires an array of at least two dimensions, got shape {shape(m)}")
    *_, n, cols = shape(m)
    return where_values(_tri_mask(n, cols, int(k)), m, zeros_like(m))


def triu(m, k=0):
    m = asarray_operand(m)
    if ndim(m) < 2:
        raise ValueError(f"triu requires an array of at least two dimensions, got shape {shape(m)}")
    *_, n, cols = shape(m)
    return where_values(_tri_mask(n, cols, int(k) - 1), zeros_like(m), m)


def diag(v, k=0):
    v = asarray_operand(v)
    k = int(k)
    if ndim(v) == 2:
        return diagonal(v, k)
    if ndim(v) != 1:
        raise ValueError(f"diag: input must be 1-d or 2-d, got shape {shape(v)}")
    n = shape(v)[0] + builtins.abs(k)
    line = lax.pad(v, np.zeros((), aval_of(v).dtype), [(0, builtins.abs(k), 0)]) if k else v
    rows = lax.broadcasted_iota(dtypes.default_int(), (n, n), 0)
    cols = lax.broadcasted_iota(dtypes.default_int(), (n, n), 1)
    on_diagonal = equal(cols, rows + k)
    values = expand_dims(line, 1) if k >= 0 else expand_dims(line, 0)
    return where_values(on_diagonal, values, zeros((), aval_of(v).dtype))
