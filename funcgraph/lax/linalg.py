"""funcgraph.lax.linalg: JAX's lax.linalg names, signatures and return conventions.

cholesky, triangular_solve, lu, eigh, qr, svd, eig and schur are funcgraph primitives
(most defined beside funcgraph.numpy's linear algebra, so this module sits above
funcgraph.numpy in the layers, unlike the rest of funcgraph.lax); the
small compositions (lu_pivots_to_permutation, symmetric_product, cholesky_update,
householder_product, ormqr, tridiagonal_solve) are written here with funcgraph.numpy."""

import funcgraph.numpy as fnp
from funcgraph import lax
from funcgraph.numpy import linalg as _np_linalg
from funcgraph.numpy._lu import lu_p
from funcgraph.numpy._lu import permutation_from_pivots as _permutation_from_pivots
from funcgraph.numpy.linalg import eig_p, eigh_p, qr_p, schur_p, svd_p
from funcgraph.primitives import linalg as _prims
from funcgraph.primitives.linalg import cholesky_p, triangular_solve_p  # noqa: F401

triangular_solve = _prims.triangular_solve


def _mH(x):
    return fnp.conj(fnp.swapaxes(x, -1, -2))


def _symmetrized(x):
    return (x + _mH(x)) / 2


def _only_default(name, **options):
    for option, value in options.items():
        if value is not None:
            raise NotImplementedError(f"lax.linalg.{name}: {option}={value!r} is not supported "
                                      f"by funcgraph (only the default, None)")


def cholesky(x, *, symmetrize_input=True):
    """The lower Cholesky factor of the Hermitian positive-definite x (..., n, n); NaNs
    where x is not positive definite.  symmetrize_input uses (x + x^H) / 2."""
    x = fnp.asarray(x)
    return _prims.cholesky(_symmetrized(x) if symmetrize_input else x)


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True, subset_by_index=None,
         implementation=None):
    """(v, w): eigenvectors (columns) and ascending eigenvalues of the Hermitian x, reading
    its lower (or upper) triangle."""
    _only_default("eigh", subset_by_index=subset_by_index, implementation=implementation)
    if not sort_eigenvalues:
        raise NotImplementedError("lax.linalg.eigh: sort_eigenvalues=False is not supported "
                                  "by funcgraph (eigenvalues always come sorted)")
    w, v = _np_linalg.eigh(x, UPLO="L" if lower else "U", symmetrize_input=symmetrize_input)
    return v, w


def lu(x):
    """(lu, pivots, permutation) of x (..., m, n): lu packs L (unit lower, below the
    diagonal) and U; pivots (..., min(m, n)) are LAPACK's row swaps and permutation
    (..., m) the rows they give, both int32, with x[permutation] = L @ U."""
    return tuple(lu_p.bind(fnp.asarray(x)))


def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation of range(permutation_size) that the row swaps pivots (..., k) make:
    for i in order, swap entries i and pivots[..., i]."""
    pivots = fnp.asarray(pivots)
    k = pivots.shape[-1]
    if permutation_size < k:
        raise ValueError(f"Output permutation size {permutation_size} has to exceed the "
                         f"trailing dimension of the pivots. Got pivots size {k}")
    return _permutation_from_pivots(pivots, permutation_size)


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
    """(q, r) with x = q r: q (..., m, m) and r (..., m, n) when full_matrices, else
    q (..., m, k) and r (..., k, n) with k = min(m, n)."""
    if pivoting:
        raise NotImplementedError("lax.linalg.qr: pivoting=True is not supported by funcgraph")
    return tuple(_np_linalg.qr(x, mode="complete" if full_matrices else "reduced"))


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """Singular values s (descending), or (u, s, vh) with x = u diag(s) vh when
    compute_uv."""
    _only_default("svd", subset_by_index=subset_by_index, algorithm=algorithm)
    if not compute_uv:
        return _np_linalg.svd(x, compute_uv=False)
    return tuple(_np_linalg.svd(x, full_matrices=full_matrices))


def schur(x, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None):
    """[t] or [t, vs]: the Schur form t of x (real quasi-triangular for real x) and the
    Schur vectors vs with x = vs t vs^H."""
    if sort_eig_vals or select_callable is not None:
        raise NotImplementedError("lax.linalg.schur: sorting the eigenvalues is not supported "
                                  "by funcgraph")
    return schur_p.bind(fnp.asarray(x), compute_schur_vectors=bool(compute_schur_vectors))


def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
        enable_eigvec_derivs=False, implementation=None, use_magma=None):
    """[w] + [vl] + [vr]: the eigenvalues of the square x (complex) and its left and right
    eigenvectors (unit columns), as those asked for."""
    _only_default("eig", implementation=implementation)
    return eig_p.bind(fnp.asarray(x), compute_left_eigenvectors=bool(compute_left_eigenvectors),
                      compute_right_eigenvectors=bool(compute_right_eigenvectors))


def symmetric_product(a_matrix, c_matrix, *, alpha=1.0, beta=0.0, symmetrize_output=False):
    """alpha a a^T + beta c; with symmetrize_output, the lower triangle mirrored."""
    a, c = fnp.asarray(a_matrix), fnp.asarray(c_matrix)
    out = alpha * fnp.matmul(a, fnp.swapaxes(a, -1, -2)) + beta * c
    out = out.astype(c.dtype)
    if symmetrize_output:
        lower = fnp.tril(out)
        out = lower + fnp.swapaxes(fnp.tril(out, -1), -1, -2)
    return out


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of r^T r + w w^T, given the upper factor r of r^T r."""
    r, w = fnp.asarray(r_matrix), fnp.asarray(w_vector)
    updated = fnp.matmul(_mH(r), r) + fnp.outer(w, fnp.conj(w))
    return _mH(_prims.cholesky(updated))


def householder_product(a, taus):
    """The (..., m, n) matrix of the first n columns of H_0 H_1 ... H_{k-1}, with
    H_i = I - taus[i] v_i v_i^H and v_i = (0, ..., 0, 1, a[i+1:, i]) (LAPACK's orgqr)."""
    a, taus = fnp.asarray(a), fnp.asarray(taus)
    m, n = a.shape[-2:]
    k = taus.shape[-1]
    if m < n:
        raise ValueError(f"householder_product requires m >= n, got a of shape {a.shape}")
    if k > n:
        raise ValueError(f"householder_product requires len(taus) <= n, got {k} > {n}")
    rows = fnp.arange(m)[:, None]
    q = fnp.broadcast_to(fnp.eye(m, n, dtype=a.dtype), a.shape)
    for i in reversed(range(k)):
        v = fnp.where(rows > i, a[..., :, i:i + 1], fnp.where(rows == i, 1, 0).astype(a.dtype))
        tau = taus[..., i, None, None]
        q = q - tau * v * fnp.matmul(_mH(v), q)
    return q


def _geqrf(a):
    """LAPACK's packed QR: (h, taus), R in h's upper triangle and the Householder
    reflectors below its diagonal (numpy.linalg.qr's mode "raw", h untransposed)."""
    h, taus = _np_linalg.qr(a, mode="raw")
    return fnp.swapaxes(h, -1, -2), taus


def ormqr(a, taus, c, *, left=True, transpose=False):
    """Q @ c (left) or c @ Q (right; Q^H for transpose) for Q = H_0 ... H_{k-1} of
    geqrf's reflectors, applied one by one without forming Q."""
    a, taus, c = fnp.asarray(a), fnp.asarray(taus), fnp.asarray(c)
    m, k = a.shape[-2], taus.shape[-1]
    rows = fnp.arange(m)[:, None]
    # Q @ c applies H_{k-1} first; Q^H @ c, c @ Q apply H_0 first; c @ Q^H H_{k-1} first.
    order = range(k) if left == transpose else reversed(range(k))
    for i in order:
        v = fnp.where(rows > i, a[..., :, i:i + 1],
                      fnp.where(rows == i, 1, 0).astype(a.dtype))     # (..., m, 1)
        tau = taus[..., i, None, None]
        tau = fnp.conj(tau) if transpose else tau
        if left:   # H c = c - tau v (v^H c)
            c = c - tau * v * fnp.matmul(_mH(v), c)
        else:      # c H = c - tau (c v) v^H
            c = c - tau * fnp.matmul(c, v) * _mH(v)
    return c


def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
    """x with T x = b for the tridiagonal T of sub-diagonal dl (dl[0] unused), diagonal d
    and super-diagonal du (du[-1] unused), each (..., m); b (..., m, n).  The Thomas
    algorithm (no pivoting), run by lax.scan down and back up the rows."""
    if perturb_singular:
        raise NotImplementedError("lax.linalg.tridiagonal_solve: perturb_singular=True is "
                                  "not supported by funcgraph")
    dl, d, du, b = (fnp.asarray(v) for v in (dl, d, du, b))
    if dl.shape != d.shape or du.shape != d.shape or b.shape[:-1] != d.shape:
        raise ValueError(f"tridiagonal_solve expects dl, d, du of one shape (..., m) and b of "
                         f"shape (..., m, n), got {dl.shape}, {d.shape}, {du.shape} and "
                         f"{b.shape}")
    dtype = fnp.result_type(dl, d, du, b)
    rows = [fnp.moveaxis(v.astype(dtype), -1, 0) for v in (dl, d, du)]
    rhs = fnp.moveaxis(b.astype(dtype), -2, 0)

    def forward(carry, row):
        c_prev, y_prev = carry
        lower, diag, upper, r = row
        denom = diag - lower * c_prev
        c = upper / denom
        y = (r - lower[..., None] * y_prev) / denom[..., None]
        return (c, y), (c, y)

    zero_c, zero_y = fnp.zeros_like(rows[1][0]), fnp.zeros_like(rhs[0])
    _, (c, y) = lax.scan(forward, (zero_c, zero_y), (*rows, rhs))

    def backward(x_next, row):
        c_i, y_i = row
        x = y_i - c_i[..., None] * x_next
        return x, x

    _, x = lax.scan(backward, zero_y, (c, y), reverse=True)
    return fnp.moveaxis(x, 0, -2)
