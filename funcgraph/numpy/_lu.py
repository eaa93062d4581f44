"""The lu primitive (jax's lax.linalg.lu_p): P a = L U with partial pivoting, for a
(..., m, n) of a float or complex dtype; leading axes are batch axes.  Its results are
jax's: `lu` packs L (unit lower triangular, below the diagonal) and U; `pivots` (...,
min(m, n)) int32 are the row swaps (row i with row pivots[i], in order); `permutation`
(..., m) int32 the rows they make, with a[permutation] = L U.

On the CPU it is LAPACK's getrf, as jax runs it: compiled, jaxlib's custom call into
SciPy's LAPACK; eagerly, SciPy's getrf itself (the same routine, so the same bits).
Elsewhere (other platforms, exports for several, float16) it lowers to a loop of ordinary
ops, column by column.  It sits in the numpy layer because that loop is written with
funcgraph.numpy's ops."""
import numpy as np

from funcgraph import core, lax
from funcgraph.core import ShapedArray
from funcgraph.interpreters.ad_util import Zero, is_zero, tangent_aval
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import NoHostImpl
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.staging import trace_flat
from funcgraph.lowering import lower_closed_body
from funcgraph.numpy._creation import arange, eye, zeros
from funcgraph.numpy._diagonals import tril, triu
from funcgraph.numpy._products import matmul
from funcgraph.numpy._reductions import sum as _sum
from funcgraph.numpy._shapes import broadcast_to
from funcgraph.numpy._sorting import argmax
from funcgraph.numpy._taking import take_along_axis
from funcgraph.numpy._ufuncs import abs as _abs, where_values as where
from funcgraph.primitives import linalg as _prims
from funcgraph.primitives.helpers import declare
from funcgraph.util import scipy_linalg

_I32 = np.dtype(np.int32)


def _lu_shape(x):
    _prims.check_operands("lu", [x], [2])
    *batch, m, n = x.shape
    return [ShapedArray(x.shape, x.dtype), ShapedArray((*batch, min(m, n)), _I32),
            ShapedArray((*batch, m), _I32)]


def _permutation_of(pivots, m):
    """NumPy: the rows (..., m) that the row swaps pivots (..., k) make."""
    perm = np.broadcast_to(np.arange(m, dtype=np.int32), pivots.shape[:-1] + (m,)).copy()
    count = int(np.prod(pivots.shape[:-1]))
    flat, flat_pivots = perm.reshape(count, m), pivots.reshape(count, pivots.shape[-1])
    for rows, swaps in zip(flat, flat_pivots, strict=True):
        for i, p in enumerate(swaps):
            rows[i], rows[p] = rows[p], rows[i]
    return perm


def _lu_impl(x):
    """SciPy's getrf, matrix by matrix (dtypes LAPACK has no routine for run compiled)."""
    x = np.asarray(x)
    if x.dtype not in _prims.LAPACK_PREFIX:
        raise NoHostImpl
    *batch, m, n = x.shape
    k = min(m, n)
    flat = x.reshape((int(np.prod(batch)), m, n))
    lu = flat.copy()
    pivots = np.zeros((flat.shape[0], k), np.int32)
    if k:
        getrf = scipy_linalg().get_lapack_funcs("getrf", dtype=x.dtype)
        for i, a in enumerate(flat):
            lu[i], piv, _ = getrf(a)
            pivots[i] = piv[:k]
    pivots = pivots.reshape((*batch, k))
    return [lu.reshape(x.shape), pivots, _permutation_of(pivots, m)]


# --- lowering ------------------------------------------------------------------------

def _lu_loop(a):
    """The portable factorization: for each column k, the row of the largest magnitude at
    or below k is swapped up, then eliminated below the pivot (a zero pivot leaves its
    column as it is: no NaN)."""
    m, n = a.shape[-2:]
    k_max = min(m, n)
    rows = arange(m, dtype=np.int32)
    cols = arange(n, dtype=np.int32)

    def step(k, carry):
        a, pivots, perm = carry
        col_k, row_k_mask = cols == k, rows == k
        col = _sum(where(col_k, a, 0), axis=-1)
        p = argmax(where(rows >= k, _abs(col), -1), axis=-1).astype(np.int32)
        ep = rows == p[..., None]
        row_k = _sum(where(row_k_mask[:, None], a, 0), axis=-2)
        row_p = _sum(where(ep[..., :, None], a, 0), axis=-2)
        a = where(row_k_mask[:, None], row_p[..., None, :],
                  where(ep[..., :, None], row_k[..., None, :], a))
        # (sums of int32 widen to the default int under x64: keep the carry int32)
        perm_k = _sum(where(row_k_mask, perm, 0), axis=-1).astype(np.int32)
        perm_p = _sum(where(ep, perm, 0), axis=-1).astype(np.int32)
        perm = where(row_k_mask, perm_p[..., None], where(ep, perm_k[..., None], perm))
        pivots = where(arange(k_max, dtype=np.int32) == k, p[..., None], pivots)
        pivot = _sum(where(col_k, row_p, 0), axis=-1)
        pivot = where(pivot == 0, 1, pivot)
        col = _sum(where(col_k, a, 0), axis=-1)
        below = rows > k
        l = where(below, col / pivot[..., None], 0)
        u = where(cols > k, row_p, 0)
        a = a - l[..., :, None] * u[..., None, :]
        a = where(below[:, None] & col_k[None, :], l[..., :, None], a)
        return a, pivots, perm

    batch = a.shape[:-2]
    carry = (a, zeros(batch + (k_max,), np.int32), broadcast_to(rows, batch + (m,)))
    if k_max == 0:
        return list(carry)
    return list(lax.fori_loop(0, k_max, step, carry))


def permutation_from_pivots(pivots, size=None):
    """The permutation of range(size) (default: pivots' length) that LAPACK's row swaps
    pivots (..., k) make: for i in order, swap entries i and pivots[i]."""
    k = pivots.shape[-1]
    size = k if size is None else size
    rows = arange(size, dtype=pivots.dtype)
    swaps = arange(k, dtype=pivots.dtype)

    def swap(i, perm):
        p = _sum(where(swaps == i, pivots, 0), axis=-1).astype(pivots.dtype)[..., None]
        at_i = _sum(where(rows == i, perm, 0), axis=-1).astype(pivots.dtype)[..., None]
        at_p = _sum(where(rows == p, perm, 0), axis=-1).astype(pivots.dtype)[..., None]
        return where(rows == i, at_p, where(rows == p, at_i, perm))
    return lax.fori_loop(0, k, swap, broadcast_to(rows, pivots.shape[:-1] + (size,)))


def _after_getrf(lu, pivots, info):
    """jax's results from getrf's: 0-based pivots, the permutation they make, and NaN
    where LAPACK rejected an argument (info < 0; a singular matrix, info > 0, keeps its
    factors)."""
    pivots = pivots - 1
    lu = where((info < 0)[..., None, None], np.nan, lu).astype(lu.dtype)
    return [lu, pivots, permutation_from_pivots(pivots, lu.shape[-2])]


def _lu_lowering(ctx, avals_in, avals_out, x):
    aval = avals_in[0].update(weak_type=False)
    if not _prims.uses_lapack(ctx, aval):
        return lower_closed_body(ctx, trace_flat(_lu_loop, [aval]), [x])
    # getrf: each matrix factored in place, 1-based pivots, info per matrix
    raw_avals = [aval, avals_out[1], ShapedArray(aval.shape[:-2], _I32)]
    raw = _prims.lapack_call(ctx, "getrf", [x], [aval], raw_avals)
    return lower_closed_body(ctx, trace_flat(_after_getrf, raw_avals), raw)


lu_p = declare("lu", _lu_shape, _lu_impl, _lu_lowering, multiple_results=True)


def _lu_jvp(primals, tangents):
    """With P a = L U and dA = P da: L^-1 dA U^-1 = L^-1 dL + dU U^-1, strictly lower plus
    upper, so dL = L tril(X, -1) and dU = triu(X) U for X = L^-1 dA U^-1.  L (m, m) and U
    (n, n) are the factors completed with identity blocks where m != n."""
    (a,), (da,) = primals, tangents
    lu, pivots, perm = lu_p.bind(a)
    no_tangents = [Zero(tangent_aval(core.get_aval(v))) for v in (pivots, perm)]
    if is_zero(da):
        return [lu, pivots, perm], [Zero(tangent_aval(core.get_aval(lu)))] + no_tangents
    *batch, m, n = core.get_aval(a).shape
    k = min(m, n)
    dtype = core.get_aval(a).dtype
    permuted = _take_rows(da, perm)
    l = tril(lu[..., :, :k], -1)
    l = lax.pad(l, np.zeros((), dtype), [(0, 0, 0)] * len(batch) + [(0, 0, 0), (0, m - k, 0)])
    l = l + eye(m, dtype=dtype)
    u = lax.pad(triu(lu[..., :k, :]), np.zeros((), dtype),
                [(0, 0, 0)] * len(batch) + [(0, n - k, 0), (0, 0, 0)])
    u = u + lax.pad(eye(n - k, dtype=dtype), np.zeros((), dtype), [(k, 0, 0), (k, 0, 0)])
    la = _prims.triangular_solve(l, permuted, left_side=True, lower=True, unit_diagonal=True)
    x = _prims.triangular_solve(u, la, left_side=False, lower=False)
    highest = lax.Precision.HIGHEST
    dlu = matmul(l, tril(x, -1), precision=highest) + matmul(triu(x), u, precision=highest)
    return [lu, pivots, perm], [dlu] + no_tangents


def _take_rows(x, perm):
    """x[..., perm, :], matrix by matrix."""
    return take_along_axis(x, perm[..., :, None], axis=-2)


jvp_rules[lu_p] = _lu_jvp


batching_rules[lu_p] = _prims.batch_leading(lu_p)
