"""funcgraph.scipy.sparse.linalg: matrix-free iterative solvers cg, gmres and bicgstab
with JAX's signatures and numerics.  b and x may be pytrees; A and the preconditioner
M are functions or square matrices.  Each solver runs inside lax.custom_linear_solve,
so derivatives come from another solve (implicit differentiation), not from the
iterations."""
import functools
import operator

import numpy as np

import funcgraph.numpy as fnp
from funcgraph import dtypes, lax, tree_util
from funcgraph.array import Array
from funcgraph.scipy import linalg as _sp_linalg



def _dot(a, b):
    return fnp.dot(a, b)


def _vdot_real_part(x, y):
    """Real part of vdot(x, y) without the cross terms: a real scalar."""
    result = fnp.vdot(fnp.real(x), fnp.real(y))
    if dtypes.is_complex(fnp.result_type(x)) or dtypes.is_complex(fnp.result_type(y)):
        result = result + fnp.vdot(fnp.imag(x), fnp.imag(y))
    return result


def _vdot_real_tree(x, y):
    return sum(tree_util.tree_leaves(tree_util.tree_map(_vdot_real_part, x, y)))


def _vdot_tree(x, y):
    return sum(tree_util.tree_leaves(tree_util.tree_map(fnp.vdot, x, y)))


def _norm(x):
    leaves = tree_util.tree_leaves(x)
    return fnp.sqrt(sum(_vdot_real_part(v, v) for v in leaves))


def _mul(scalar, tree):
    return tree_util.tree_map(lambda v: scalar * v, tree)


def _add(a, b):
    return tree_util.tree_map(operator.add, a, b)


def _sub(a, b):
    return tree_util.tree_map(operator.sub, a, b)


def _identity(x):
    return x


def _tree_dtype(tree):
    return fnp.result_type(*tree_util.tree_leaves(tree))


def _normalize_matvec(f):
    """A as a function x -> A x."""
    if callable(f):
        return f
    if isinstance(f, (np.ndarray, Array)):
        if f.ndim != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: "
                             f"{f.shape}")
        return functools.partial(_dot, f)
    if hasattr(f, "__matmul__"):
        if hasattr(f, "shape") and (len(f.shape) != 2 or f.shape[0] != f.shape[1]):
            raise ValueError(f"linear operator must be a square matrix, but has shape: "
                             f"{f.shape}")
        return functools.partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _shapes(tree):
    return [np.shape(v) for v in tree_util.tree_leaves(tree)]


def _check_x0(x0, b):
    if tree_util.tree_structure(x0) != tree_util.tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: "
                         f"{tree_util.tree_structure(x0)} vs {tree_util.tree_structure(b)}")
    if _shapes(x0) != _shapes(b):
        raise ValueError(f"arrays in x0 and b must have matching shapes: "
                         f"{_shapes(x0)} vs {_shapes(b)}")


def _tolerance2(b, tol, atol):
    """The squared residual norm at which cg and bicgstab stop."""
    return fnp.maximum(tol * tol * _vdot_real_tree(b, b), atol * atol)


# --- conjugate gradients -----------------------------------------------------------------

def _cg_solve(A, b, x0, *, maxiter, tol, atol, M):
    atol2 = _tolerance2(b, tol, atol)
    r0 = _sub(b, A(x0))
    p0 = z0 = M(r0)
    dtype = _tree_dtype(p0)
    gamma0 = _vdot_real_tree(r0, z0).astype(dtype)

    def cond_fun(value):
        _, r, gamma, _, k = value
        rs = fnp.real(gamma) if M is _identity else _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter)

    def body_fun(value):
        x, r, gamma, p, k = value
        Ap = A(p)
        alpha = gamma / _vdot_real_tree(p, Ap).astype(dtype)
        x = _add(x, _mul(alpha, p))
        r = _sub(r, _mul(alpha, Ap))
        z = M(r)
        gamma_new = _vdot_real_tree(r, z).astype(dtype)
        p = _add(z, _mul(gamma_new / gamma, p))
        return x, r, gamma_new, p, k + 1

    return lax.while_loop(cond_fun, body_fun, (x0, r0, gamma0, p0, 0))[0]


# --- BiCGSTAB ------------------------------------------------------------------------

def _bicgstab_solve(A, b, x0, *, maxiter, tol, atol, M):
    atol2 = _tolerance2(b, tol, atol)

    def cond_fun(value):
        r, k = value[1], value[-1]
        return (_vdot_real_tree(r, r) > atol2) & (k < maxiter) & (k >= 0)

    def body_fun(value):
        x, r, rhat, alpha, omega, rho, p, q, k = value
        rho_new = _vdot_tree(rhat, r)
        beta = rho_new / rho * alpha / omega
        p = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
        phat = M(p)
        q = A(phat)
        alpha = rho_new / _vdot_tree(rhat, q)
        s = _sub(r, _mul(alpha, q))
        exit_early = _vdot_real_tree(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega = _vdot_tree(t, s) / _vdot_tree(t, t)
        x_short = _add(x, _mul(alpha, phat))
        x_full = _add(x, _add(_mul(alpha, phat), _mul(omega, shat)))
        x = tree_util.tree_map(functools.partial(fnp.where, exit_early), x_short, x_full)
        r = tree_util.tree_map(functools.partial(fnp.where, exit_early), s,
                               _sub(s, _mul(omega, t)))
        k = fnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = fnp.where(rho_new == 0, -10, k)
        return x, r, rhat, alpha, omega, rho_new, p, q, k

    r0 = _sub(b, A(x0))
    one = lax.convert_element_type(1, _tree_dtype(b))
    init = (x0, r0, r0, one, one, one, r0, r0, 0)
    return lax.while_loop(cond_fun, body_fun, init)[0]


def _isolve(solver, A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None,
            check_symmetric=False):
    if x0 is None:
        x0 = tree_util.tree_map(fnp.zeros_like, b)
    b = tree_util.tree_map(fnp.asarray, b)
    x0 = tree_util.tree_map(fnp.asarray, x0)
    if maxiter is None:
        maxiter = 10 * sum(v.size for v in tree_util.tree_leaves(b))  # SciPy's default
    M = _identity if M is None else _normalize_matvec(M)
    A = _normalize_matvec(A)
    _check_x0(x0, b)
    solve = functools.partial(solver, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    # A real positive-definite operator is symmetric.
    symmetric = check_symmetric and not any(
        dtypes.is_complex(v.dtype) for v in tree_util.tree_leaves(b))
    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve,
                                symmetric=symmetric)
    return x, None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve A x = b for a Hermitian positive-definite A with conjugate gradients;
    returns (x, None).  Stops when norm(residual) <= max(tol * norm(b), atol)."""
    return _isolve(_cg_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M,
                   check_symmetric=True)


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve A x = b with the stabilized biconjugate gradient method; returns (x, None)."""
    return _isolve(_bicgstab_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M)


# --- GMRES -------------------------------------------------------------------------------

def _safe_normalize(x, thresh=None):
    """(x / norm(x), norm(x)), or zeros and 0 when the norm is below thresh (default: the
    dtype's epsilon)."""
    norm = _norm(x)
    dtype = _tree_dtype(x)
    if thresh is None:
        thresh = dtypes.finfo(norm.dtype).eps
    thresh = fnp.real(fnp.asarray(thresh).astype(dtype))
    use_norm = norm > thresh
    norm_cast = norm.astype(dtype)
    normalized = tree_util.tree_map(lambda y: fnp.where(use_norm, y / norm_cast, 0.0), x)
    return normalized, fnp.where(use_norm, norm, 0.0)


def _project_on_columns(Q, v):
    """Q^H v, summed over the pytree's leaves."""
    projected = tree_util.tree_map(lambda X, y: fnp.einsum("...n,...->n", fnp.conj(X), y), Q, v)
    return functools.reduce(operator.add, tree_util.tree_leaves(projected))


def _gram_schmidt(Q, x, xnorm, max_iterations=2):
    """Orthogonalize x against Q's orthonormal columns, repeating classical Gram-Schmidt
    (at most max_iterations times) while the result lost more than 1/sqrt(2) of x's norm:
    (q, overlaps r)."""
    Q0 = tree_util.tree_leaves(Q)[0]
    r = fnp.zeros(Q0.shape[-1], dtype=Q0.dtype)

    def body(carry):
        k, q, r, qnorm_scaled = carry
        h = _project_on_columns(Q, q)
        q = _sub(q, tree_util.tree_map(lambda X: _dot(X, h), Q))
        r = _add(r, h)

        def qnorm_cond(c):
            k, not_done, _, _ = c
            return fnp.logical_and(not_done, k < (max_iterations - 1))

        def qnorm(c):
            k, _, q, _ = c
            _, qnorm = _safe_normalize(q)
            return k, False, q, qnorm / fnp.sqrt(2.0)

        _, _, q, qnorm_scaled = lax.while_loop(qnorm_cond, qnorm, (k, True, q, qnorm_scaled))
        return k + 1, q, r, qnorm_scaled

    def cond(carry):
        k, _, r, qnorm_scaled = carry
        _, rnorm = _safe_normalize(r)
        return fnp.logical_and(k < (max_iterations - 1), rnorm < qnorm_scaled)

    carry = body((0, x, r, xnorm / fnp.sqrt(2.0)))
    _, q, r, _ = lax.while_loop(cond, body, carry)
    return q, r


def _arnoldi_step(k, A, M, V, H):
    """Add the k-th Krylov vector M(A(V[:, k])), orthonormalized, as V[:, k + 1] and its
    overlaps as H[k, :]; breakdown when it vanishes (an invariant subspace)."""
    dtype = _tree_dtype(V)
    eps = dtypes.finfo(dtype).eps
    v = M(A(tree_util.tree_map(lambda X: X[..., k], V)))
    _, v_norm_0 = _safe_normalize(v)
    v, h = _gram_schmidt(V, v, v_norm_0, max_iterations=2)
    unit_v, v_norm_1 = _safe_normalize(v, thresh=eps * v_norm_0)
    V = tree_util.tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit_v)
    h = h.at[k + 1].set(v_norm_1.astype(dtype))
    return V, H.at[k, :].set(h), v_norm_1 == 0.0


def _rotate(H, i, cs, sn):
    x1, y1 = H[i], H[i + 1]
    H = H.at[i].set(fnp.conj(cs) * x1 - fnp.conj(sn) * y1)
    return H.at[i + 1].set(sn * x1 + cs * y1)


def _givens(a, b):
    b_zero = abs(b) == 0
    a_lt_b = abs(a) < abs(b)
    t = -fnp.where(a_lt_b, a, b) / fnp.where(a_lt_b, b, a)
    r = lax.rsqrt(1 + abs(t) ** 2).astype(t.dtype)
    cs = fnp.where(b_zero, 1, fnp.where(a_lt_b, r * t, r))
    sn = fnp.where(b_zero, 0, fnp.where(a_lt_b, r, r * t))
    return cs, sn


def _apply_givens(H_row, givens, k):
    R_row = lax.fori_loop(0, k, lambda i, row: _rotate(row, i, *givens[i, :]), H_row)
    factors = _givens(R_row[k], R_row[k + 1])
    givens = givens.at[k, :].set(fnp.stack(factors))
    return _rotate(R_row, k, *factors), givens


def _krylov_basis(unit_residual, restart):
    return tree_util.tree_map(
        lambda x: lax.pad(x[..., None], np.zeros((), x.dtype),
                          ((0, 0, 0),) * x.ndim + ((0, restart, 0),)), unit_residual)


def _finish_cycle(A, M, b, x0, V, y):
    x = _add(x0, tree_util.tree_map(lambda X: _dot(X[..., :-1], y), V))
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x))))
    return x, unit_residual, residual_norm


def _gmres_incremental(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart cycle, solving the small least-squares problem as it grows (Givens
    rotations), stopping early once its residual is below ptol."""
    V = _krylov_basis(unit_residual, restart)
    dtype = _tree_dtype(b)
    R = fnp.eye(restart, restart + 1, dtype=dtype)
    givens = fnp.zeros((restart, 2), dtype=dtype)
    beta_vec = fnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))

    def loop_cond(carry):
        k, err = carry[0], carry[1]
        return fnp.logical_and(k < restart, err > ptol)

    def step(carry):
        k, _, V, R, beta_vec, givens = carry
        V, H, _ = _arnoldi_step(k, A, M, V, R)
        R_row, givens = _apply_givens(H[k, :], givens, k)
        R = R.at[k, :].set(R_row)
        beta_vec = _rotate(beta_vec, k, *givens[k, :])
        return k + 1, abs(beta_vec[k + 1]), V, R, beta_vec, givens

    carry = lax.while_loop(loop_cond, step, (0, residual_norm, V, R, beta_vec, givens))
    _, _, V, R, beta_vec, _ = carry
    y = _sp_linalg.solve_triangular(R[:, :-1].T, beta_vec[:-1])
    return _finish_cycle(A, M, b, x0, V, y)


def _lstsq_normal(a, b):
    a2 = _dot(fnp.conj(a.T), a)
    b2 = _dot(fnp.conj(a.T), b)
    return _sp_linalg.cho_solve(_sp_linalg.cho_factor(a2, lower=True), b2)


def _gmres_batched(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart cycle: the whole Arnoldi process, then one least-squares solve."""
    V = _krylov_basis(unit_residual, restart)
    dtype = _tree_dtype(b)
    H = fnp.eye(restart, restart + 1, dtype=dtype)

    def loop_cond(carry):
        _, _, breakdown, k = carry
        return fnp.logical_and(k < restart, fnp.logical_not(breakdown))

    def step(carry):
        V, H, _, k = carry
        V, H, breakdown = _arnoldi_step(k, A, M, V, H)
        return V, H, breakdown, k + 1

    V, H, _, _ = lax.while_loop(loop_cond, step, (V, H, False, 0))
    beta_vec = fnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))
    y = _lstsq_normal(H.T, beta_vec)
    return _finish_cycle(A, M, b, x0, V, y)


def _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, cycle):
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x0))))

    def cond_fun(value):
        _, k, _, residual_norm = value
        return fnp.logical_and(k < maxiter, residual_norm > atol)

    def body_fun(value):
        x, k, unit_residual, residual_norm = value
        x, unit_residual, residual_norm = cycle(A, b, x, unit_residual, residual_norm, ptol,
                                                restart, M)
        return x, k + 1, unit_residual, residual_norm

    return lax.while_loop(cond_fun, body_fun, (x0, 0, unit_residual, residual_norm))[0]


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
    """Solve A x = b with restarted GMRES; returns (x, info) with info -1 where x is NaN.
    solve_method 'batched' solves each cycle's least-squares problem once at its end,
    'incremental' as it grows (stopping a cycle early on convergence)."""
    if x0 is None:
        x0 = tree_util.tree_map(fnp.zeros_like, b)
    M = _identity if M is None else _normalize_matvec(M)
    A = _normalize_matvec(A)
    b = tree_util.tree_map(fnp.asarray, b)
    x0 = tree_util.tree_map(fnp.asarray, x0)
    size = sum(v.size for v in tree_util.tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size  # SciPy's default
    restart = min(restart, size)
    if tree_util.tree_structure(x0) != tree_util.tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: "
                         f"{tree_util.tree_structure(x0)} vs {tree_util.tree_structure(b)}")
    b_norm = _norm(b)
    atol = fnp.maximum(tol * b_norm, atol)
    ptol = _norm(M(b)) * fnp.minimum(1.0, atol / b_norm)
    cycles = {"incremental": _gmres_incremental, "batched": _gmres_batched}
    if solve_method not in cycles:
        raise ValueError(f"invalid solve_method {solve_method}, must be either "
                         f"'incremental' or 'batched'")

    def solve(A, b):
        return _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, cycles[solve_method])

    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
    info = fnp.where(fnp.isnan(_norm(x)), -1, 0)
    return x, info




__all__ = ["bicgstab", "cg", "gmres"]
