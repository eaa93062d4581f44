"""funcgraph.lax.linalg: JAX's lax.linalg names, signatures and return conventions.

cholesky, triangular_solve, lu, eigh, qr, svd, eig, schur, householder_product, ormqr,
hessenberg, tridiagonal and tridiagonal_solve are funcgraph primitives (most defined beside
funcgraph.numpy's linear algebra, so this module sits above funcgraph.numpy in the layers,
unlike the rest of funcgraph.lax); the small compositions (lu_pivots_to_permutation,
symmetric_product, cholesky_update) are written here with funcgraph.numpy."""

import functools

import numpy as np

import funcgraph.numpy as fnp
from funcgraph import lax
from funcgraph.numpy import linalg as _np_linalg
# the primitives are public names, as in jax.lax.linalg
from funcgraph.numpy._householder import (  # noqa: F401
    hessenberg_p, householder_product_p, ormqr_p, tridiagonal_p)
from funcgraph.numpy._lu import lu_p
from funcgraph.numpy._lu import permutation_from_pivots as _permutation_from_pivots
from funcgraph.numpy._tridiagonal import tridiagonal_solve_p
from funcgraph.numpy.linalg import eig_p, eigh_p, qr_p, schur_p, svd_p  # noqa: F401
from funcgraph.primitives import linalg as _prims
from funcgraph.primitives.linalg import cholesky_p, triangular_solve_p  # noqa: F401
from funcgraph.transforms.jit import jit as _jit

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


# --- QDWH: the polar decomposition by dynamically weighted Halley iterations ---------------
# Nakatsukasa, Bai and Gygi (2010), as jax runs it: u_{k+1} = e u + (a - e) u (I + c u^H u)^-1
# with weights (a, b, c) from a lower bound l on u's smallest singular value, computed ahead
# in Python; the first iterations (c > 100) by a QR of [sqrt(c) u; I], the later ones by a
# Cholesky factor of I + c u^H u, then Halley's fixed weights (3, 1, 3) until u settles.

_CHOLESKY_CUTOFF = 100


def _within(x, sizes, other=0):
    """x where each index is below its size in sizes (None: no bound), else other."""
    mask = None
    for axis, size in enumerate(sizes):
        if size is not None:
            inside = lax.broadcasted_iota(np.int32, x.shape, axis) < size
            mask = inside if mask is None else mask & inside
    return x if mask is None else fnp.where(mask, x, other)


def _stack_at(a, b, rows):
    """[a[:rows]; b]: b written below a's first `rows` rows (a padded to make room)."""
    if rows is None:
        return fnp.concatenate([a, b], axis=0)
    padding = [(0, b.shape[0], 0)] + [(0, 0, 0)] * (a.ndim - 1)
    padded = lax.pad(a, fnp.array(0, a.dtype), padding)
    return lax.dynamic_update_slice_in_dim(padded, b, rows, 0)


def _halley_by_qr(u, m, n, weights):
    scaled_gap, root_c, e = weights
    rows, cols = u.shape
    y = _stack_at(root_c * u, fnp.eye(cols, dtype=u.dtype), m)
    q, _ = qr(y, full_matrices=False)
    q1 = _within(lax.slice(q, (0, 0), (rows, cols)), (m, n))
    q2 = _within(lax.dynamic_slice_in_dim(q, m, cols, axis=0), (n, n)).T.conj()
    return e * u + scaled_gap * _exact_dot(q1, q2)


def _halley_by_cholesky(u, m, n, weights):
    gap, c, e = weights
    cols = u.shape[1]
    x = c * _exact_dot(u.T.conj(), u) + fnp.eye(cols, dtype=u.dtype)
    x = _within(x, (n, n), fnp.eye(cols, dtype=x.dtype))
    y = cholesky(x, symmetrize_input=False)
    z = triangular_solve(y, u.T, left_side=True, lower=True, conjugate_a=True).conj()
    z = triangular_solve(y, z, left_side=True, lower=True, transpose_a=True,
                         conjugate_a=True).T.conj()
    return e * u + gap * z


def _exact_dot(x, y):
    return fnp.matmul(x, y, precision=lax.Precision.HIGHEST)


def _halley_weights(eps, max_iterations):
    """The QR-step and Cholesky-step weights, in Python floats: each iteration's (a, b, c)
    from the bound l, which it then raises, until l is within 5 eps of 1."""
    qr_steps, cholesky_steps = [], []
    bound, tolerance, k = eps, 10.0 * eps / 2.0, 0
    while bound + tolerance < 1 and k < max_iterations:
        k += 1
        l2 = bound * bound
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** (1 / 2)
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** (1 / 2)
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        bound = bound * (a + b * l2) / (1 + c * l2)
        e = b / c
        if c > _CHOLESKY_CUTOFF:
            qr_steps.append(((a - e) / c ** (1 / 2), c ** (1 / 2), e))
        else:
            cholesky_steps.append((a - e, c, e))
    return qr_steps, cholesky_steps


def _qdwh(x, m, n, max_iterations, eps):
    eps = float(np.finfo(x.dtype).eps) if eps is None else eps
    one_norm, inf_norm = fnp.linalg.norm(x, ord=1), fnp.linalg.norm(x, ord=np.inf)
    scale = lax.rsqrt(one_norm) * lax.rsqrt(inf_norm)
    scale = fnp.where(one_norm == 0, 1, scale)
    u = x * scale.astype(x.dtype)
    tol_norm = fnp.cbrt(10.0 * eps / 2.0)
    qr_steps, cholesky_steps = _halley_weights(eps, max_iterations)

    def step(k, u, update, weights, test):
        if weights is None:
            params = (3 - 1 / 3, 3, 1 / 3)     # Halley's fixed weights (a, b, c) = (3, 1, 3)
        else:
            params = lax.dynamic_index_in_dim(weights, k, keepdims=False)
        new = update(u, m, n, params)
        moving = fnp.linalg.norm(new - u) > tol_norm if test else True
        return new, moving

    def run(u, steps, update, test):
        if not steps:
            return u, True
        weights = fnp.array(steps).astype(x.dtype)
        return lax.fori_loop(0, len(steps),
                             lambda k, state: step(k, state[0], update, weights, test),
                             (u, True))
    u, _ = run(u, qr_steps, _halley_by_qr, False)
    u, moving = run(u, cholesky_steps, _halley_by_cholesky, True)

    def more(state):
        k, _, moving = state
        return fnp.logical_and(moving, k < max_iterations)

    def halley(state):
        k, u, _ = state
        u, moving = step(k, u, _halley_by_cholesky, None, True)
        return k + 1, u, moving
    iterations, u, moving = lax.while_loop(
        more, halley, (len(qr_steps) + len(cholesky_steps), u, moving))
    u = 1.5 * u - 0.5 * _exact_dot(u, _exact_dot(u.T.conj(), u))
    h = _exact_dot(u.T.conj(), x)
    h = (h + h.T.conj()) / 2
    return u, h, iterations, fnp.logical_not(moving)


@functools.partial(_jit, static_argnames=("is_hermitian", "max_iterations", "eps"))
def qdwh(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
    """(u, h, iterations, converged): the polar decomposition x = u h of x (M, N), M >= N,
    u with orthonormal columns and h Hermitian positive semidefinite, by QDWH;
    dynamic_shape (m, n) treats x as its top-left m x n block (zero padded)."""
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    rows, cols = x.shape
    if rows < cols:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    if dynamic_shape is not None:
        m, n = dynamic_shape
        x = _within(x, (m, n))
    else:
        m, n = rows, cols
    return _qdwh(x, m, n, max_iterations, eps)
