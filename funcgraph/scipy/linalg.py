"""funcgraph.scipy.linalg: JAX's scipy.linalg API: triangular, Cholesky and LU solves, the
decompositions, expm with its Frechet derivative, polar, the Schur forms and what is built
on them (sqrtm, rsf2csf, funm, solve_sylvester), Hessenberg, and the special matrices
(_special_matrices).  Each computes as jax's does, so its numbers are jax's."""
import functools

import numpy as np

import funcgraph.numpy as fnp
from funcgraph import dtypes, lax
from funcgraph.numpy import linalg as _la
from funcgraph.numpy._householder import (
    geqrf_p as _geqrf_p, hessenberg_p as _hessenberg_p,
    householder_product_p as _householder_product_p, ormqr_p as _ormqr_p)
from funcgraph.numpy._lu import lu_p as _lu_p
from funcgraph.numpy._qdwh import qdwh as _qdwh
from funcgraph.numpy._lu import permutation_from_pivots as _permutation_from_pivots
from funcgraph.primitives import linalg as _prims
from funcgraph.scipy._special_matrices import (  # noqa: F401  (public names)
    circulant, companion, convolution_matrix, dft, fiedler, fiedler_companion, hadamard, hankel,
    helmert, hilbert, invhilbert, invpascal, leslie, pascal)
from funcgraph.transforms.ad import jvp as _jvp
from funcgraph.transforms.custom_derivatives import custom_jvp
from funcgraph.transforms.jit import jit as _jit


def _as_matrix_rhs(b):
    """b as (..., n, k) and whether it was a vector (n,)."""
    return (b[:, None], True) if b.ndim == 1 else (b, False)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):
    """Solve op(a) x = b with a triangular; trans 0/'N', 1/'T' or 2/'C' (conjugate
    transpose)."""
    del overwrite_b, debug, check_finite
    transpose = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}.get(trans)
    if transpose is None:
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    a, b = fnp.asarray(a), fnp.asarray(b)
    dtype = fnp.result_type(a, b, 1.0)
    a, b = a.astype(dtype), b.astype(dtype)
    b, vector = _as_matrix_rhs(b)
    a, b = _la._broadcast_batch(a, b)
    x = _prims.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=transpose,
                                conjugate_a=trans in (2, "C"), unit_diagonal=unit_diagonal)
    return x[..., 0] if vector else x


def _mH(x):
    return fnp.conj(fnp.swapaxes(x, -1, -2))


def _cholesky(a, lower):
    """The lower (or upper) Cholesky factor of a read from that triangle alone, as SciPy's
    (no symmetrization: the other triangle has no effect, nor a derivative)."""
    a = _square_inexact("cholesky", a)
    if lower:
        return _prims.cholesky(a)
    return _mH(_prims.cholesky(_mH(a)))


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    return _cholesky(a, lower)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    return _cholesky(a, lower), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """Solve a x = b from cho_factor's (c, lower)."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    y = solve_triangular(c, b, trans=0 if lower else 2, lower=lower)
    return solve_triangular(c, y, trans=2 if lower else 0, lower=lower)




# --- LU ----------------------------------------------------------------------------------

def _square_inexact(name, a):
    return _la._inexact_square(name, a)


def lu_factor(a, overwrite_a=False, check_finite=True):
    """(lu, piv): packed L (unit lower) and U of a with LAPACK's pivot indices."""
    del overwrite_a, check_finite
    lu, pivots, _ = _lu_p.bind(_square_inexact("lu_factor", a))
    return lu, pivots


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """Solve a x = b (trans 0), a^T x = b (1) or a^H x = b (2) from lu_factor's output."""
    del overwrite_b, check_finite
    lu, piv = lu_and_piv
    perm = _permutation_from_pivots(piv)
    b = fnp.asarray(b).astype(lu.dtype)
    b, vector = _as_matrix_rhs(b)
    n = lu.shape[-1]
    cols = fnp.arange(n, dtype=perm.dtype).reshape((1,) * perm.ndim + (n,))  # same rank
    p = (perm[..., :, None] == cols).astype(lu.dtype)
    solve = functools.partial(_prims.triangular_solve, lu, left_side=True)
    if trans == 0:
        x = solve(solve(fnp.matmul(p, b), lower=True, unit_diagonal=True), lower=False)
    elif trans in (1, 2):
        y = solve(b, lower=False, transpose_a=True, conjugate_a=trans == 2)
        y = solve(y, lower=True, unit_diagonal=True, transpose_a=True, conjugate_a=trans == 2)
        x = fnp.matmul(fnp.swapaxes(p, -1, -2), y)
    else:
        raise ValueError(f"Invalid 'trans' value {trans}; expected 0, 1 or 2")
    return x[..., 0] if vector else x


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """(p, l, u) with a = p @ l @ u, or (p @ l, u) when permute_l; for a (..., m, n):
    p (m, m), l (m, k) and u (k, n) with k = min(m, n)."""
    del overwrite_a, check_finite
    a = fnp.asarray(a)
    a = a.astype(fnp.result_type(a, 1.0))
    m, n = a.shape[-2:]
    k = min(m, n)
    lu_packed, perm, _ = _la._lu_factor(a)
    l = fnp.tril(lu_packed[..., :, :k], -1) + fnp.eye(m, k, dtype=a.dtype)
    u = fnp.triu(lu_packed[..., :k, :])
    # p[i, j] = 1 where row j of l u is row i of a: p @ l @ u = a
    p = (perm[..., None, :] == fnp.arange(m, dtype=perm.dtype)[:, None]).astype(a.dtype)
    if permute_l:
        return fnp.matmul(p, l, precision=lax.Precision.HIGHEST), u
    return p, l, u


# --- solve, inv, det and the decompositions numpy.linalg has --------------------------------

@functools.partial(custom_jvp, nondiff_argnums=(2,))
def _solve_pos(a, b, lower):
    return cho_solve(cho_factor(a, lower=lower), b)


@_solve_pos.defjvp
def _solve_pos_jvp(lower, primals, tangents):
    """a dx = db - da x with the whole da (a is taken as the Hermitian matrix its triangle
    names, as jax's), solved with a's Cholesky factor."""
    (a, b), (da, db) = primals, tangents
    factor = cho_factor(a, lower=lower)
    x = cho_solve(factor, b)
    return x, cho_solve(factor, db - fnp.matmul(da, x))


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False,
          check_finite=True, assume_a="gen"):
    """Solve a x = b; assume_a 'pos' uses a Cholesky factorization of the triangle lower
    names, 'gen' (and 'sym', 'her') an LU factorization."""
    del overwrite_a, overwrite_b, debug, check_finite
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"Expected assume_a to be one of {{'gen', 'sym', 'her', 'pos'}}; "
                         f"got {assume_a!r}")
    if assume_a == "pos":
        a = _square_inexact("solve", a)
        b = fnp.asarray(b)
        return _solve_pos(a, b.astype(fnp.result_type(a, b)), lower)
    return _la.solve(a, b)


def inv(a, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    return _la.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    return _la.det(a)


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         type=1, check_finite=True, subset_by_index=None):
    del overwrite_a, overwrite_b, check_finite
    if b is not None or type != 1 or subset_by_index is not None:
        raise NotImplementedError("funcgraph.scipy.linalg.eigh: only the standard problem "
                                  "(b=None, type=1, all eigenvalues) is supported")
    w, v = _la.eigh(a, UPLO="L" if lower else "U", symmetrize_input=True)
    return w if eigvals_only else (w, v)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    del overwrite_a, check_finite, lapack_driver
    return _la.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    del overwrite_a, lwork, check_finite
    if pivoting:
        raise NotImplementedError("funcgraph.scipy.linalg.qr: pivoting is not supported")
    if mode in ("full", "economic"):
        return tuple(_la.qr(a, mode="complete" if mode == "full" else "reduced"))
    if mode == "r":
        return (_la.qr(a, mode="complete")[1],)
    raise ValueError(f"Unsupported QR decomposition mode '{mode}'")


def _polar_matrix(a, side, method, eps, max_iterations):
    m, n = a.shape
    if method == "qdwh":
        if m >= n and side == "right":
            unitary, posdef, _, _ = _qdwh(a, is_hermitian=False, eps=eps)
        elif m < n and side == "left":
            unitary, posdef, _, _ = _qdwh(a.T.conj(), is_hermitian=False, eps=eps)
            unitary, posdef = unitary.T.conj(), posdef.T.conj()
        else:
            raise NotImplementedError(f"method='qdwh' only supports mxn matrices where m < n "
                                      f"where side='right' and m >= n side='left', got "
                                      f"{a.shape} with side={side!r}")
    elif method == "svd":
        u, s, vh = _la.svd(a, full_matrices=False)
        s = s.astype(u.dtype)
        unitary = u @ vh
        if side == "right":
            posdef = (vh.T.conj() * s[None, :]) @ vh
        else:
            posdef = (u * s[None, :]) @ u.T.conj()
    else:
        raise ValueError(f"Unknown polar decomposition method {method}.")
    return unitary, posdef


@functools.partial(_jit, static_argnames=("side", "method"))
def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """(u, p) with a = u p (side 'right') or p u ('left'), u with orthonormal columns (or
    rows) and p Hermitian positive semidefinite: by QDWH iterations (lax.linalg.qdwh), or
    from the SVD with method='svd'."""
    a = fnp.asarray(a)
    if a.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ("right", "left"):
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    signature = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    return fnp.vectorize(functools.partial(_polar_matrix, side=side, method=method, eps=eps,
                                           max_iterations=max_iterations),
                         signature=signature)(a)


# --- expm and its Frechet derivative ----------------------------------------------------------
# Scaling and squaring with a Pade approximant (Higham 2005), as jax runs it: the degree is
# chosen by A's 1-norm among those accurate for the precision, A is scaled by a power of
# two below the top degree's bound, and the approximant is squared back up to
# max_squarings times (NaN beyond).  The Frechet derivative is expm's JVP.

# Pade coefficients b_0 ... b_m of exp's approximant of degree m.
_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}
# Per precision: the top degree's norm bound, the norm thresholds between degrees and the
# degrees (Higham's theta_m for single and double precision).
_EXPM_SINGLE = (3.925724783138660, (4.258730016922831e-001, 1.880152677804762e+000), (3, 5, 7))
_EXPM_DOUBLE = (5.371920351148152,
                (1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001,
                 2.097847961257068e+000), (3, 5, 7, 9, 13))


def _pade(degree):
    """a -> (u, v) with exp(a) ~ (v - u)^-1 (v + u): u the odd part, v the even part of the
    approximant of this degree, in even powers of a."""
    b = _PADE[degree]

    def uv(a):
        eye = fnp.eye(*a.shape, dtype=a.dtype)
        a2 = _la._exact_dot(a, a)
        if degree == 13:
            a4 = _la._exact_dot(a2, a2)
            a6 = _la._exact_dot(a4, a2)
            u = _la._exact_dot(a, _la._exact_dot(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
                           + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
            v = (_la._exact_dot(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4
                 + b[2] * a2 + b[0] * eye)
            return u, v
        powers = [eye, a2]                       # a^0, a^2, a^4, ...
        while len(powers) <= degree // 2:
            powers.append(_la._exact_dot(powers[-1], a2))
        odd = even = None
        for k in reversed(range(len(powers))):   # highest power first, as jax sums
            odd_term, even_term = b[2 * k + 1] * powers[k], b[2 * k] * powers[k]
            odd = odd_term if odd is None else odd + odd_term
            even = even_term if even is None else even + even_term
        return _la._exact_dot(a, odd), even
    return uv


@_jit
def _pade_parts(a):
    """(p, q, squarings): the approximant's numerator and denominator for a scaled by
    2^-squarings (one program, as jax's: its sums of products round as XLA fuses them)."""
    if a.dtype in (np.float64, np.complex128):
        bound, thresholds, degrees = _EXPM_DOUBLE
    elif a.dtype in (np.float32, np.complex64):
        bound, thresholds, degrees = _EXPM_SINGLE
    else:
        raise TypeError(f"A.dtype={a.dtype} is not supported.")
    norm1 = _la.norm(a, 1)
    squarings = fnp.maximum(0, fnp.floor(fnp.log2(norm1 / bound)))
    a = a / 2 ** squarings.astype(a.dtype)
    index = fnp.digitize(norm1, fnp.array(thresholds, dtype=norm1.dtype))
    u, v = lax.switch(index, [_pade(d) for d in degrees], a)
    return u + v, -u + v, squarings


@functools.partial(_jit, static_argnums=2)
def _squared(r, squarings, max_squarings):
    """r squared `squarings` times (a scan of max_squarings conditional squarings)."""
    def step(x, i):
        return lax.cond(i < squarings, lambda y: _la._exact_dot(y, y), lambda y: y, x), None
    out, _ = lax.scan(step, r, fnp.arange(max_squarings, dtype=squarings.dtype))
    return out


def expm(A, *, upper_triangular=False, max_squarings=16):
    """The matrix exponential of A (..., n, n); NaN where A's norm needs more than
    max_squarings squarings."""
    A = fnp.asarray(A)
    A = A.astype(fnp.result_type(A, 1.0))
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={A.shape}.")
    if A.ndim > 2:
        return fnp.vectorize(
            functools.partial(expm, upper_triangular=upper_triangular,
                              max_squarings=max_squarings), signature="(n,n)->(n,n)")(A)
    p, q, squarings = _pade_parts(A)

    def compute(args):
        _, p, q = args
        r = (solve_triangular(q, p) if upper_triangular else _la.solve(q, p))
        return _squared(r, squarings, max_squarings)
    return lax.cond(squarings > max_squarings, lambda args: fnp.full_like(args[0], np.nan),
                    compute, (A, p, q))


def expm_frechet(A, E, *, method=None, compute_expm=True):
    """The Frechet derivative of expm at A along E (expm's JVP): (expm(A), L) or L."""
    del method
    A, E = fnp.asarray(A), fnp.asarray(E)
    if A.ndim < 2 or A.shape[-2] != A.shape[-1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={A.shape}")
    if E.ndim < 2 or E.shape[-2] != E.shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={E.shape}")
    if A.shape != E.shape:
        raise ValueError(f"expected A and E to be the same shape, got A.shape={A.shape} "
                         f"E.shape={E.shape}")
    expm_a, frechet = _jvp(functools.partial(expm, upper_triangular=False, max_squarings=16),
                           (A,), (E,))
    return (expm_a, frechet) if compute_expm else frechet


# --- Schur forms and what is built on them: sqrtm, rsf2csf, funm, solve_sylvester ---------

def schur(a, output="real"):
    """(t, z) with a = z t z^H, t (quasi-)upper triangular (LAPACK's gees on the CPU)."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected output='real' or output='complex'; got {output!r}")
    a = _square_inexact("schur", a)
    if output == "complex":
        a = a.astype(np.complex128 if a.dtype in (np.float64, np.complex128) else np.complex64)
    return tuple(_la.schur_p.bind(a, compute_schur_vectors=True))


@_jit
def _triangular_sqrt(t):
    """The upper triangular square root u of the upper triangular t (Bjorck and
    Hammarling 1983): u_ii = sqrt(t_ii), then each column from the diagonal up,
    u_ij = (t_ij - sum_{i<k<j} u_ik u_kj) / (u_ii + u_jj), 0 where the sum is t_ij."""
    d = fnp.sqrt(fnp.diag(t))
    n = d.size

    def entry(l, carry):
        j, u = carry
        i = j - 1 - l
        zero = fnp.zeros((), t.dtype)
        s = lax.fori_loop(i + 1, j, lambda k, acc: acc + u[i, k] * u[k, j], zero)
        value = fnp.where(t[i, j] == s, 0.0, (t[i, j] - s) / (d[i] + d[j]))
        return j, u.at[i, j].set(value)

    def column(j, u):
        return lax.fori_loop(0, j, entry, (j, u))[1]
    return lax.fori_loop(0, n, column, fnp.diag(d))


@_jit
def _sqrtm(a):
    t, z = schur(a, output="complex")
    root = _triangular_sqrt(t)
    return _la._exact_dot(_la._exact_dot(z, root), fnp.conj(z.T))


def sqrtm(A, blocksize=1):
    """The principal square root of A, complex (as jax's): the complex Schur form's
    triangular root, transformed back."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    return _sqrtm(A)


def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """The upper Hessenberg form h = q^H a q (and q when calc_q): LAPACK's gehrd (the
    hessenberg primitive), q the product of its reflectors (orgqr)."""
    del overwrite_a, check_finite
    a = _square_inexact("hessenberg", a)
    packed, taus = _hessenberg_p.bind(a)
    h = fnp.triu(packed, -1)
    if not calc_q:
        return h
    # q is 1 (+) the product of the reflectors packed below h's first subdiagonal.
    q = _householder_product_p.bind(packed[..., 1:, :-1], taus)
    n = a.shape[-1]
    batch = a.shape[:-2]
    one = fnp.ones(batch + (1, 1), a.dtype)
    top = fnp.concatenate([one, fnp.zeros(batch + (1, n - 1), a.dtype)], axis=-1)
    rest = fnp.concatenate([fnp.zeros(batch + (n - 1, 1), a.dtype), q], axis=-1)
    return h, fnp.concatenate([top, rest], axis=-2)


def _rotate_block(m, t, z):
    """The Givens rotation that makes t's 2 x 2 diagonal block at rows m - 1, m upper
    triangular (its first column sent to the eigenvalue shift), applied to t's two rows
    (the columns from m - 1 on), t's two columns (the rows above m + 1) and z's columns."""
    n = t.shape[0]
    shift = _la.eigvals(lax.dynamic_slice(t, (m - 1, m - 1), (2, 2))) - t[m, m]
    r = _la.norm(fnp.array([shift[0], t[m, m - 1]])).astype(t.dtype)
    c, s = shift[0] / r, t[m, m - 1] / r
    g = fnp.array([[c.conj(), s], [-s, c]], dtype=t.dtype)
    g_h = g.conj().T
    rows = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=0)
    right = fnp.arange(n) >= m - 1
    rows = fnp.where(~right, rows, g @ fnp.where(right, rows, 0))
    t = lax.dynamic_update_slice_in_dim(t, rows, m - 1, axis=0)
    columns = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=1)
    above = fnp.arange(n)[:, None] < m + 1
    columns = fnp.where(~above, columns, fnp.where(above, columns, 0) @ g_h)
    t = lax.dynamic_update_slice_in_dim(t, columns, m - 1, axis=1)
    z_columns = lax.dynamic_slice_in_dim(z, m - 1, 2, axis=1)
    return t, lax.dynamic_update_slice_in_dim(z, z_columns @ g_h, m - 1, axis=1)


def _rsf2csf_matrix(t, z):
    """One real Schur form to the complex one, from the bottom up: each subdiagonal entry
    that is not negligible against its neighbours on the diagonal is rotated away."""
    dtype = fnp.result_type(t, z, 1j)
    t, z = t.astype(dtype), z.astype(dtype)
    eps = float(np.finfo(dtype).eps)
    n = t.shape[0]
    if n == 1:
        return t, z

    def step(i, carry):
        t, z = carry
        m = n - i
        big = fnp.abs(t[m, m - 1]) > eps * (fnp.abs(t[m - 1, m - 1]) + fnp.abs(t[m, m]))
        t, z = lax.cond(big, _rotate_block, lambda m, t, z: (t, z), m, t, z)
        return t.at[m, m - 1].set(0.0), z
    return lax.fori_loop(1, n, step, (t, z))


@_jit
def rsf2csf(T, Z, check_finite=True):
    """The complex Schur form (t, z) from the real one (T, Z): Givens rotations split each
    2 x 2 diagonal block (batch axes broadcast)."""
    del check_finite
    T, Z = fnp.asarray(T), fnp.asarray(Z)
    if T.ndim < 2 or T.shape[-1] != T.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if Z.ndim < 2 or Z.shape[-1] != Z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if T.shape[-1] != Z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {Z.shape} vs. T: {T.shape}")
    return fnp.vectorize(_rsf2csf_matrix, signature="(n,n),(n,n)->(n,n),(n,n)")(T, Z)


@_jit
def _parlett(f, t):
    """The upper triangular F = func(T) from its diagonal by Parlett's recurrence (Golub and
    Van Loan, Algorithm 11.1.1), superdiagonal by superdiagonal; also the smallest
    |T[j, j] - T[i, i]| it divided by."""
    n = t.shape[0]
    cols = fnp.arange(n)

    def entry(i, carry):
        p, f, minden = carry
        j = i + p
        s = t[i - 1, j - 1] * (f[j - 1, j - 1] - f[i - 1, i - 1])
        between = (cols >= i) & (cols < j - 1)
        s = s + (fnp.where(between, t[i - 1], 0) @ fnp.where(between, f[:, j - 1], 0)
                 - fnp.where(between, f[i - 1], 0) @ fnp.where(between, t[:, j - 1], 0))
        den = t[j - 1, j - 1] - t[i - 1, i - 1]
        s = fnp.where(den != 0, s / den, s)
        return p, f.at[i - 1, j - 1].set(s), fnp.minimum(minden, fnp.abs(den))

    def superdiagonal(p, carry):
        _, f, minden = lax.fori_loop(1, n - p + 1, entry, (p, *carry))
        return f, minden
    return lax.fori_loop(1, n, superdiagonal, (f, fnp.abs(t[0, 0])))


def funm(A, func, disp=True):
    """func(A) for a square A through its complex Schur form (complex-valued, as jax's);
    with disp=False also an estimate of the relative error."""
    A = fnp.asarray(A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError("expected square array_like input")
    t, z = rsf2csf(*schur(A))
    f = fnp.diag(func(fnp.diag(t))).astype(t.dtype)
    f, minden = _parlett(f, t)
    f = z @ f @ z.conj().T
    if disp:
        return f
    tol = float(np.finfo(np.float32 if f.dtype == np.complex64 else np.float64).eps)
    minden = fnp.where(minden == 0.0, tol, minden)
    err = fnp.where(fnp.any(fnp.isinf(f)), np.inf, fnp.minimum(
        1, fnp.maximum(tol, (tol / minden) * _la.norm(fnp.triu(t, 1), 1))))
    return f, err


def _sylvester_triangular(r, s, f):
    """Y with R Y + Y S = F for upper triangular R (m, m) and lower triangular S (n, n),
    entry by entry from the bottom right, in one scan."""
    m, n = f.shape

    def solve_entry(y_flat, index):
        i, j = index // n, index % n
        y = y_flat.reshape((m, n))
        below = fnp.sum(fnp.where(fnp.arange(m) > i, r[i, :] * y[:, j], 0.0))
        right = fnp.sum(fnp.where(fnp.arange(n) > j, y[i, :] * s[:, j], 0.0))
        rhs = f[i, j] - (below + right)
        return y_flat.at[i * n + j].set(rhs / (r[i, i] + s[j, j])), None
    y, _ = lax.scan(solve_entry, fnp.zeros((m * n,), dtype=f.dtype),
                    fnp.arange(m * n - 1, -1, -1))
    return y.reshape((m, n))


@functools.partial(_jit, static_argnames=("method",))
def _solve_sylvester_matrix(a, b, c, *, method, tol):
    m, n = c.shape[-2:]
    if method == "schur":
        r, u = schur(a, output="complex")
        s, v = schur(b.conj().T, output="complex")
        f = u.conj().T @ c.astype(r.dtype) @ v
        x = u @ _sylvester_triangular(r, s.conj().T, f) @ v.conj().T
    elif method == "eigen":
        ra, ua = _la.eig(a)
        rb, ub = _la.eig(b)
        f = solve(ua, c.astype(ra.dtype) @ ub)
        y = f / (ra[:, None] + rb[None, :])
        x = ua[:m, :m] @ y[:m, :n] @ inv(ub)[:n, :n]
    else:
        raise ValueError(f"Unrecognized method {method}. The two valid methods are either "
                         f"\"schur\" or \"eigen\".")
    if not np.issubdtype(c.dtype, np.complexfloating):
        x = x.real
    singular = fnp.any(fnp.abs(_la.eigvals(a)[:, None] + _la.eigvals(b)[None, :]) < tol)
    return lax.cond(singular, lambda: fnp.zeros_like(x) * np.nan, lambda: x)


def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """X with A X + X B = C (Bartels-Stewart over complex Schur forms, or through the
    eigendecompositions with method='eigen'); NaN when A and -B share an eigenvalue."""
    A, B, C = (fnp.asarray(x) for x in (A, B, C))
    dtype = fnp.result_type(A, B, C, 1.0)
    A, B, C = (x.astype(dtype) for x in (A, B, C))
    m, n = C.shape[-2:]
    if A.shape[-2:] != (m, m) or B.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {A.shape}\n"
                         f"B: {B.shape}\nC: {C.shape}")
    return fnp.vectorize(functools.partial(_solve_sylvester_matrix, method=method, tol=tol),
                         signature="(m,m),(n,n),(m,n)->(m,n)")(A, B, C)


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False,
                overwrite_c=False):
    """(c @ Q, R) ('right') or (Q @ c, R) ('left') with a = Q R the economic QR of a, Q
    applied from geqrf's reflectors without forming it (LAPACK's ormqr); conjugate uses
    conj(Q)."""
    del overwrite_a, overwrite_c
    if pivoting:
        raise NotImplementedError("Pivoting is not implemented.")
    a, c = fnp.asarray(a), fnp.asarray(c)
    dtype = fnp.result_type(a, c, 1.0)
    a, c = a.astype(dtype), c.astype(dtype)
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    vector = c.ndim == 1
    if vector:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left" and c.shape[-2] != k:
        raise ValueError(f"Array shapes are not compatible for Q @ c operation: a has shape "
                         f"{tuple(a.shape)} so Q has {k} columns, but c has {c.shape[-2]} "
                         f"rows (expected {k}).")
    if mode == "right" and c.shape[-1] != m:
        raise ValueError(f"Array shapes are not compatible for c @ Q operation: a has shape "
                         f"{tuple(a.shape)} so Q has {m} rows, but c has {c.shape[-1]} "
                         f"columns (expected {m}).")
    batch = np.broadcast_shapes(a.shape[:-2], c.shape[:-2])
    a = fnp.broadcast_to(a, batch + a.shape[-2:])
    c = fnp.broadcast_to(c, batch + c.shape[-2:])
    packed, taus = _geqrf_p.bind(a)
    if mode == "left" and m > n:   # Q (m, k) @ c is the full Q (m, m) @ c padded with zeros
        c = fnp.concatenate([c, fnp.zeros(batch + (m - k, c.shape[-1]), c.dtype)], axis=-2)
    # c conj(Q) = (Q^H c^T)^T: Q^H from the other side of the transposed c.
    if conjugate:
        c = fnp.swapaxes(c, -1, -2)
    out = _ormqr_p.bind(packed, taus, c, left=(mode == "left") != conjugate,
                        transpose=bool(conjugate))
    if conjugate:
        out = fnp.swapaxes(out, -1, -2)
    if mode == "right":
        out = out[..., :k]
    if vector:
        out = out.ravel()
    return out, fnp.triu(packed[..., :k, :])


def _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, x):
    """How many eigenvalues of the tridiagonal T lie below each x: the negative pivots of
    T - x I's LDL^T (Sturm's sequence), a pivot at most pivmin taken as -pivmin."""
    n = alpha.shape[0]
    zeros, ones = fnp.zeros(x.shape, dtype=np.int32), fnp.ones(x.shape, dtype=np.int32)
    q = alpha[0] - x
    count = fnp.where(q < 0, ones, zeros)
    q = fnp.where(alpha[0] == x, alpha0_perturbation, q)

    def step(i, q, count):
        q = alpha[i] - beta_sq[i - 1] / q - x
        count = fnp.where(q <= pivmin, count + 1, count)
        return fnp.where(q <= pivmin, fnp.minimum(q, -pivmin), q), count

    def steps(count_of_steps):
        def run(state):
            start, q, count = state
            for j in range(count_of_steps):
                q, count = step(start + j, q, count)
            return start + count_of_steps, q, count
        return run
    # (n - 1) % 16 steps first, then the rest 16 at a time in a loop.
    block = 16
    i, q, count = steps((n - 1) % block)((1, q, count))
    _, _, count = lax.while_loop(lambda state: fnp.less(state[0], n), steps(block),
                                 (i, q, count))
    return count


@functools.partial(_jit, static_argnames=("select", "select_range"))
def _tridiagonal_eigenvalues(alpha, beta, tol, select, select_range):
    """The eigenvalues (ascending) of the Hermitian tridiagonal matrix, each found by
    bisection on the Sturm counts from a slightly widened Gershgorin interval, all at
    once, until the widest interval is within tolerance (as jax)."""
    n = alpha.shape[0]
    if dtypes.is_complex(alpha.dtype):
        alpha = fnp.real(alpha)
        beta_sq = fnp.real(beta * fnp.conj(beta))
        beta_abs = fnp.sqrt(beta_sq)
    else:
        beta_abs = fnp.abs(beta)
        beta_sq = fnp.square(beta)
    row_sums = fnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]],
                               axis=0)
    highest = fnp.amax(alpha + row_sums)
    lowest = fnp.amin(alpha - row_sums)
    t_norm = fnp.maximum(fnp.abs(lowest), fnp.abs(highest))
    finfo = np.finfo(alpha.dtype)
    one = np.ones([], dtype=alpha.dtype)
    safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * fnp.maximum(1, fnp.amax(beta_sq))
    alpha0_perturbation = fnp.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm
    if tol is not None:
        abs_tol = fnp.maximum(tol, abs_tol)
    max_steps = finfo.nmant + 1          # one per bit of the mantissa, and one more
    if select == "a":
        targets = fnp.arange(n, dtype=np.int32)
    else:
        targets = fnp.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
    fudge = 2.1
    slack = fnp.array(n, alpha.dtype) * fudge * finfo.eps * t_norm
    lower = lowest - slack - 2 * fudge * pivmin
    upper = highest + slack + fudge * pivmin
    shape = np.shape(targets)
    lower, upper = fnp.broadcast_to(lower, shape), fnp.broadcast_to(upper, shape)
    mid = 0.5 * (upper + lower)
    pivmin = fnp.broadcast_to(pivmin, shape)
    alpha0_perturbation = fnp.broadcast_to(alpha0_perturbation, shape)

    def unsettled(state):
        i, lower, _, upper = state
        return fnp.logical_and(fnp.less(i, max_steps), fnp.less(abs_tol, fnp.amax(upper - lower)))

    def halve(state):
        i, lower, mid, upper = state
        counts = _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, mid)
        lower = fnp.where(counts <= targets, mid, lower)
        upper = fnp.where(counts > targets, mid, upper)
        return i + 1, lower, 0.5 * (lower + upper), upper
    return lax.while_loop(unsettled, halve, (0, lower, mid, upper))[2]


def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None,
                     key=None):
    """Eigenvalues (and eigenvectors) of the Hermitian tridiagonal matrix with diagonal d
    and off-diagonal e; select 'a' (all), 'i' (indices select_range inclusive) or 'v'
    (values in the half-open select_range, which needs concrete d and e).  The
    eigenvalues are jax's (bisection on Sturm counts); the eigenvectors come from the
    dense Hermitian eigendecomposition (jax runs inverse iteration from random vectors)."""
    del key
    alpha, beta = fnp.asarray(d), fnp.asarray(e)
    supported = (np.float32, np.float64, np.complex64, np.complex128)
    if alpha.dtype != beta.dtype:
        raise TypeError(f"diagonal and off-diagonal values must have same dtype, got "
                        f"{alpha.dtype} and {beta.dtype}")
    if alpha.dtype not in supported:
        raise TypeError(f"Only float32 and float64 inputs are supported as inputs to "
                        f"funcgraph.scipy.linalg.eigh_tridiagonal, got {alpha.dtype} and "
                        f"{beta.dtype}")
    n = alpha.shape[0]
    if beta.shape[-1] != max(n - 1, 0):
        raise ValueError(f"e must have one element fewer than d, got {beta.shape} and "
                         f"{alpha.shape}")
    if select not in ("a", "i", "v"):
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")
    if select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
    if n <= 1:
        values = fnp.real(alpha)
        return values if eigvals_only else (values, fnp.eye(n, dtype=alpha.dtype))
    indices = tuple(int(i) for i in select_range) if select == "i" else None
    w = _tridiagonal_eigenvalues(alpha, beta, tol, "i" if indices else "a", indices)
    if select == "v":
        lo, hi = select_range
        keep = np.nonzero((np.asarray(w) > lo) & (np.asarray(w) <= hi))[0]
        w = w[keep]
    if eigvals_only:
        return w
    mat = fnp.diag(alpha) + fnp.diag(beta, 1) + fnp.diag(fnp.conj(beta), -1)
    _, v = _la.eigh(mat)
    if select == "i":
        v = v[:, indices[0]:indices[1] + 1]
    elif select == "v":
        v = v[:, keep]
    return w, v


# --- special matrices -----------------------------------------------------------------------

def block_diag(*arrs):
    """The block-diagonal matrix of arrs (each at most 2-D)."""
    if not arrs:
        return fnp.zeros((1, 0))
    mats = [fnp.atleast_2d(fnp.asarray(a)) for a in arrs]
    dtype = fnp.result_type(*mats)
    cols = sum(m.shape[1] for m in mats)
    zero = np.zeros((), dtype)
    rows, offset = [], 0
    for m in mats:
        width = m.shape[1]
        rows.append(lax.pad(m.astype(dtype), zero,
                            [(0, 0, 0), (offset, cols - offset - width, 0)]))
        offset += width
    return fnp.concatenate(rows, axis=0)


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column c and first row r (r = conj(c) when None);
    leading axes of c and r are batch axes."""
    c = fnp.atleast_1d(fnp.asarray(c))
    r = fnp.conj(c) if r is None else fnp.atleast_1d(fnp.asarray(r))
    dtype = fnp.result_type(c, r)
    batch = np.broadcast_shapes(c.shape[:-1], r.shape[:-1])
    c = fnp.broadcast_to(c.astype(dtype), batch + c.shape[-1:])
    r = fnp.broadcast_to(r.astype(dtype), batch + r.shape[-1:])
    m, n = c.shape[-1], r.shape[-1]
    # t[i, j] = w[m - 1 - i + j]: row i is w[m - 1 - i:][:n].
    w = fnp.concatenate([c[..., ::-1], r[..., 1:]], axis=-1)
    if m == 1:
        return w[..., None, :]
    # In m copies of w laid end to end, row i starts at (m - 1) + i (len(w) - 1): a
    # reshape to rows of len(w) - 1 (>= n) lines the rows up, without a gather.
    size = w.shape[-1]
    dims = tuple(range(len(batch))) + (len(batch) + 1,)
    tiled = lax.broadcast_in_dim(w, batch + (m, size), dims).reshape(batch + (m * size,))
    rows = tiled[..., m - 1:m - 1 + m * (size - 1)].reshape(batch + (m, size - 1))
    return rows[..., :n]

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion",
           "convolution_matrix", "det", "dft", "eigh", "eigh_tridiagonal", "expm",
           "expm_frechet", "fiedler", "fiedler_companion", "funm", "hadamard", "hankel",
           "helmert", "hessenberg", "hilbert", "inv", "invhilbert", "invpascal", "leslie", "lu",
           "lu_factor", "lu_solve", "pascal", "polar", "qr", "qr_multiply", "rsf2csf", "schur",
           "solve", "solve_sylvester", "solve_triangular", "sqrtm", "svd", "toeplitz"]
