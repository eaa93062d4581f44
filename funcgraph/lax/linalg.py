"""funcgraph.lax.linalg: JAX's lax.linalg names, signatures and return conventions.

cholesky, triangular_solve, lu, eigh, qr, svd, eig, schur, householder_product, ormqr,
hessenberg, tridiagonal and tridiagonal_solve are funcgraph primitives (most defined beside
funcgraph.numpy's linear algebra, so this module sits above funcgraph.numpy in the layers,
unlike the rest of funcgraph.lax); the small compositions (lu_pivots_to_permutation,
symmetric_product, cholesky_update) are written here with funcgraph.numpy."""

import funcgraph.numpy as fnp
from funcgraph.numpy import linalg as _np_linalg
# the primitives are public names of this module too
from funcgraph.numpy._householder import (  # noqa: F401
    hessenberg_p, householder_product_p, ormqr_p, tridiagonal_p)
from funcgraph.numpy._lu import lu_p
from funcgraph.numpy._qdwh import qdwh  # noqa: F401  (a public name of lax.linalg)
from funcgraph.numpy._lu import permutation_from_pivots as _permutation_from_pivots
from funcgraph.numpy._tridiagonal import tridiagonal_solve_p
from funcgraph.numpy.linalg import eig_p, eigh_p, qr_p, schur_p, svd_p  # noqa: F401
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
    return householder_product_p.bind(fnp.asarray(a), fnp.asarray(taus))


def hessenberg(a):
    """(h, taus): the upper Hessenberg form of the square a (..., n, n) in h's upper
    triangle and first subdiagonal, and below it the Householder reflectors whose product
    Q (householder_product of h[..., 1:, :-1] and taus) gives a = Q H Q^H (LAPACK's
    gehrd)."""
    return tuple(hessenberg_p.bind(fnp.asarray(a)))


def tridiagonal(a, *, lower=True):
    """(a, d, e, taus): the Hermitian a (..., n, n), read from its lower (or upper)
    triangle, reduced to the real symmetric tridiagonal matrix of diagonal d and
    off-diagonal e by Householder reflectors packed in a's other entries with their taus
    (LAPACK's sytrd / hetrd)."""
    return tuple(tridiagonal_p.bind(fnp.asarray(a), lower=bool(lower)))


def ormqr(a, taus, c, *, left=True, transpose=False):
    """Q @ c (left) or c @ Q (right), Q^H in place of Q with transpose, for
    Q = H_0 ... H_{k-1} of geqrf's reflectors in a (numpy.linalg.qr's mode "raw" gives
    them transposed), without forming Q (LAPACK's ormqr)."""
    return ormqr_p.bind(fnp.asarray(a), fnp.asarray(taus), fnp.asarray(c), left=bool(left),
                        transpose=bool(transpose))


def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
    """x with T x = b for the tridiagonal T of sub-diagonal dl (dl[0] unused), diagonal d
    and super-diagonal du (du[-1] unused), each (..., m); b (..., m, n) (LAPACK's gtsv)."""
    dl, d, du, b = (fnp.asarray(v) for v in (dl, d, du, b))
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=bool(perturb_singular))
