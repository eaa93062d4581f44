"""lax.linalg.qdwh: the polar decomposition by QDWH iterations, as jax runs it (it sits in
the numpy layer, below funcgraph.scipy.linalg's polar and funcgraph.lax.linalg, which both
use it)."""
import functools

import numpy as np

from funcgraph import lax
from funcgraph import numpy as fnp
from funcgraph.numpy import linalg as _np_linalg
from funcgraph.primitives import linalg as _prims
from funcgraph.transforms.jit import jit as _jit


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
    q, _ = _np_linalg.qr(y, mode="reduced")
    q1 = _within(lax.slice(q, (0, 0), (rows, cols)), (m, n))
    q2 = _within(lax.dynamic_slice_in_dim(q, m, cols, axis=0), (n, n)).T.conj()
    return e * u + scaled_gap * _np_linalg._exact_dot(q1, q2)


def _halley_by_cholesky(u, m, n, weights):
    gap, c, e = weights
    cols = u.shape[1]
    x = c * _np_linalg._exact_dot(u.T.conj(), u) + fnp.eye(cols, dtype=u.dtype)
    x = _within(x, (n, n), fnp.eye(cols, dtype=x.dtype))
    y = _prims.cholesky(x)
    z = _prims.triangular_solve(y, u.T, left_side=True, lower=True, conjugate_a=True).conj()
    z = _prims.triangular_solve(y, z, left_side=True, lower=True, transpose_a=True,
                                conjugate_a=True).T.conj()
    return e * u + gap * z


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
    one_norm, inf_norm = _np_linalg.norm(x, ord=1), _np_linalg.norm(x, ord=np.inf)
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
        moving = _np_linalg.norm(new - u) > tol_norm if test else True
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
    u = 1.5 * u - 0.5 * _np_linalg._exact_dot(u, _np_linalg._exact_dot(u.T.conj(), u))
    h = _np_linalg._exact_dot(u.T.conj(), x)
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
