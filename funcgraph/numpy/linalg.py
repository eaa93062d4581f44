"""funcgraph.numpy.linalg: JAX's numpy.linalg API over funcgraph primitives.

The decompositions are primitives that run LAPACK on the CPU as jax does: cholesky and
triangular solves (potrf, trsm: primitives/linalg.py), LU with partial pivoting (getrf:
_lu.py), the Householder family (geqrf, orgqr, ormqr, gehrd, sytrd: _householder.py) and,
here, qr (geqrf with orgqr / ungqr), eigh (syevd / heevd), svd (gesdd), eig (geev) and
schur (gees).  Compiled they are jaxlib's custom calls, eagerly SciPy's routines, so
values, signs and phases are jax's bit for bit; elsewhere they are XLA's expansions or
loops of plain ops (cyclic Jacobi for eigh and svd, Householder reflections for qr).
Leading axes are batch axes.  Derivatives are analytic (primitive JVP rules or
custom_jvp), not traced through loops."""
import operator
from collections import namedtuple as _namedtuple

import numpy as np

from funcgraph.util import scipy_linalg as _scipy_linalg
from funcgraph import dtypes, lax
# The public names of numpy.linalg are its own: what it uses from funcgraph.numpy comes in
# under private names.
from funcgraph.errors import sequence_operand_error as _sequence_operand_error
from funcgraph.numpy._core import (
    asarray as _to_array, promote_to_inexact as _promote_to_inexact)
from funcgraph.numpy._creation import (
    arange as _arange, eye as _eye, ones as _ones, zeros as _zeros, zeros_like as _zeros_like)
from funcgraph.numpy._diagonals import diagonal as _diagonal, tril as _tril, triu as _triu
from funcgraph.numpy._joining import concatenate as _concatenate
from funcgraph.numpy._einsum import einsum as _einsum
from funcgraph.numpy._householder import geqrf_p as _geqrf_p
from funcgraph.numpy._lu import lu_p as _lu_p
from funcgraph.numpy._math import count_nonzero as _count_nonzero
from funcgraph.numpy._linalg_norm import (
    norm as _norm_by_reductions, vector_norm as _vector_norm)
from funcgraph.numpy._products import matmul as _matmul
from funcgraph.numpy._reductions import (
    any as _any, max as _max, min as _min, prod as _prod, sum as _sum)
from funcgraph.numpy._shapes import broadcast_to as _broadcast_to, swapaxes as _swapaxes
from funcgraph.numpy._sorting import argsort as _argsort, cumprod as _cumprod
from funcgraph.numpy._taking import take_along_axis as _take_along_axis
from funcgraph.numpy._ufuncs import (
    abs as _abs, conj as _conj, exp as _exp, imag as _imag, isfinite as _isfinite,
    isnan as _isnan, log as _log, real as _real, sqrt as _sqrt,
    where_values as _where)
from funcgraph.callback import pure_callback as _pure_callback
from funcgraph.numpy._compiled import compiled_when_eager as _compiled_when_eager
from funcgraph.numpy._manipulation import cross as _np_cross
from funcgraph.numpy._products import tensordot as _np_tensordot, vecdot as _np_vecdot
from funcgraph.numpy._types import result_type as _result_type
from funcgraph.primitives import linalg as _prims
from funcgraph.core import ShapedArray as _ShapedArray
from funcgraph.interpreters.ad_util import (
    Zero as _Zero, is_zero as _is_zero, tangent_aval as _tangent_aval)
from funcgraph.interpreters.batching import batching_rules as _batching_rules
from funcgraph.interpreters.eval import NoHostImpl as _NoHostImpl
from funcgraph.interpreters.jvp import jvp_rules as _jvp_rules
from funcgraph.interpreters.staging import trace_flat as _trace_flat
from funcgraph.lowering import lower_closed_body as _lower_closed_body
from funcgraph.primitives.helpers import (
    INEXACT as _INEXACT, check_dtype as _check_dtype, declare as _declare)
from funcgraph.transforms.custom_derivatives import custom_jvp
from funcgraph.transforms.jit import ShapeDtypeStruct as _ShapeDtypeStruct, jit as _jit
from funcgraph.transforms.vmap import vmap as _vmap


def _asarray(a):
    """An array argument; lists and tuples are jax's TypeError (JAX's numpy.linalg takes
    arrays only)."""
    if isinstance(a, (list, tuple)):
        raise _sequence_operand_error(a, "funcgraph.numpy.linalg", "jnp.linalg.")
    return _to_array(a)


EighResult = _namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
SVDResult = _namedtuple("SVDResult", ["U", "S", "Vh"])
SlogdetResult = _namedtuple("SlogdetResult", ["sign", "logabsdet"])
QRResult = _namedtuple("QRResult", ["Q", "R"])

_MAX_SWEEPS = 30


# --- helpers -------------------------------------------------------------------------

def _square(name, a):
    (a,) = _promote_to_inexact(_asarray(a))
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"funcgraph.numpy.linalg.{name} needs a (batch of) square matrices "
                         f"(..., n, n), got shape {a.shape}")
    return a


def _matrix(name, a):
    (a,) = _promote_to_inexact(_asarray(a))
    if a.ndim < 2:
        raise ValueError(f"funcgraph.numpy.linalg.{name} needs a (batch of) matrices "
                         f"(..., m, n), got shape {a.shape}")
    return a


def _mT(x):
    return _swapaxes(x, -1, -2)


def _const(value, dtype):
    return _asarray(np.asarray(value).astype(dtype))


def _onehot(idx, n, dtype):
    """(..., k) integer indices -> (..., k, n) one-hot rows."""
    # ranks made equal: no rank promotion (which jax_numpy_rank_promotion may forbid)
    row = _arange(n, dtype=idx.dtype).reshape((1,) * idx.ndim + (n,))
    return (idx[..., None] == row).astype(dtype)


def _diag(x):
    return _diagonal(x, axis1=-2, axis2=-1)


def _eye_like(x):
    return _broadcast_to(_eye(x.shape[-1], dtype=x.dtype), x.shape)


def _trace(x):
    return _sum(_diag(x), axis=-1)


def _exact_dot(x, y):
    """x @ y at full precision (what jax's linear algebra asks of its products)."""
    return _matmul(x, y, precision=lax.Precision.HIGHEST)


def _eps(dtype):
    return float(np.finfo(dtype).eps)


def _on_host(dtype):
    """Whether svd and qr call LAPACK on the host (JAX's CPU routines) through a
    host callback: for complex dtypes, which the Jacobi and Householder loops here do not
    handle.  Real inputs stay in the compiled program, so that it can be exported and
    partitioned over devices (a host callback can be neither); their singular
    vectors may differ from jax's in sign."""
    return dtypes.is_complex(dtype)


def _real_dtype(dtype):
    return np.dtype(np.float64 if np.dtype(dtype) in (np.float64, np.complex128)
                    else np.float32)


# --- LU with partial pivoting ------------------------------------------------------------

def _lu_factor(a):
    """P a = L U for a (..., m, n), packed: returns (lu, perm (..., m) int32, pivots
    (..., min(m, n)) int32) where a[perm] = L U with L (m, min(m, n)) unit lower
    triangular, and pivots LAPACK's row swaps."""
    lu, pivots, perm = _lu_p.bind(a)
    return lu, perm, pivots


def _lu_solve(lu, perm, b):
    """Solve a x = b from a's packed LU; b (..., n, k) with lu's batch shape.  Linear in b
    through ops with transpose rules (a gather of b's permuted rows, triangular solves)."""
    pb = _take_along_axis(b, _broadcast_to(perm[..., :, None], b.shape), axis=-2,
                          mode="promise_in_bounds")
    y = _prims.triangular_solve(lu, pb, left_side=True, lower=True, unit_diagonal=True)
    return _prims.triangular_solve(lu, y, left_side=True, lower=False)


def _broadcast_batch(a, b):
    """a (..., n, n) and b (..., n, k) broadcast to one batch shape."""
    batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    return _broadcast_to(a, batch + a.shape[-2:]), _broadcast_to(b, batch + b.shape[-2:])


def _lu_solve_vector(lu, perm, b, transposed):
    """a x = b (a^T x = b when transposed) for vectors b (..., n) from a's packed LU."""
    column = b[..., None]
    if not transposed:
        return _lu_solve(lu, perm, column)[..., 0]
    y = _prims.triangular_solve(lu, column, left_side=True, lower=False, transpose_a=True)
    y = _prims.triangular_solve(lu, y, left_side=True, lower=True, transpose_a=True,
                                unit_diagonal=True)
    inverse = _argsort(perm, axis=-1)
    return _take_along_axis(y, inverse[..., :, None], axis=-2,
                            mode="promise_in_bounds")[..., 0]


def _matvec(a, x):
    """a (..., n, n) times the vectors x (..., n), in full precision."""
    batch = tuple(range(a.ndim - 2))
    return lax.dot_general(a, x, (((a.ndim - 1,), (x.ndim - 1,)), (batch, batch)),
                           precision=lax.Precision.HIGHEST)


def _solve(a, b):
    """a x = b for vectors b (...,n) with a's batch shape, as jax solves: a
    custom_linear_solve over a's LU (so derivatives reuse the factorization)."""
    lu, _, perm = _lu_p.bind(lax.stop_gradient(a))
    return lax.custom_linear_solve(
        lambda x: _matvec(a, x), b,
        solve=lambda _, x: _lu_solve_vector(lu, perm, x, False),
        transpose_solve=lambda _, x: _lu_solve_vector(lu, perm, x, True))


def solve(a, b):
    """Solve a x = b.  b is a vector (n,) when 1-D (solved against each matrix of a), else
    a (batch of) (n, k) matrices."""
    a = _inexact_square("solve", a)
    b = _asarray(b)
    dtype = _result_type(a, b)
    a, b = a.astype(dtype), b.astype(dtype)
    if b.ndim == 1:
        if b.shape[0] != a.shape[-1]:
            raise ValueError(f"inconsistent size for core dimension 'm': {b.shape[0]} vs "
                             f"{a.shape[-1]} on vectorized function with "
                             f"excluded=frozenset() and signature='(m,m),(m)->(m)'")
        return _solve(a, _broadcast_to(b, a.shape[:-1]))
    if b.shape[-2] != a.shape[-1]:
        raise ValueError(f"Invalid shapes for solve: {a.shape}, {b.shape}. Prior to JAX "
                         f"v0.5.0, this would have been treated as a batched 1-dimensional "
                         f"solve. To recover this behavior, use solve(a, b[..., None])"
                         f".squeeze(-1).")
    a, b = _broadcast_batch(a, b)
    return _vmap(_solve, in_axes=(None, b.ndim - 1), out_axes=b.ndim - 1)(a, b)


def _inv(a):
    return solve(a, _broadcast_to(_eye(a.shape[-1], dtype=a.dtype), a.shape))


def inv(a):
    return _inv(_inexact_square("inv", a))


def _row_swaps(pivots):
    """How many rows LAPACK's pivots (..., k) swap (int32)."""
    return _count_nonzero(pivots != _arange(pivots.shape[-1], dtype=pivots.dtype), axis=-1)


def _slogdet_from_lu(lu, pivots):
    """(sign, log|det|) from a's packed LU as jax computes them: the sign by the parity of
    the row swaps and the negative pivots (complex: times the pivots' phases), the log by
    the sum of the pivots' logs; 0 and -inf for a zero pivot."""
    d = _diag(lu)
    singular = _any(d == 0, axis=-1)
    swaps = _row_swaps(pivots)
    if dtypes.is_complex(lu.dtype):
        phase = _prod(d / _abs(d).astype(lu.dtype), axis=-1)
    else:
        phase = None
        swaps = swaps + _count_nonzero(d < 0, axis=-1)
    sign = (-2 * (swaps % 2) + 1).astype(lu.dtype)
    sign = sign if phase is None else phase * sign
    sign = _where(singular, 0, sign)
    return sign, _where(singular, -np.inf, _sum(_log(_abs(d)), axis=-1))


@custom_jvp
def _slogdet(a):
    lu, pivots, _ = _lu_p.bind(a)
    return _slogdet_from_lu(lu, pivots)


@_slogdet.defjvp
def _slogdet_jvp(primals, tangents):
    """d log|det a| = Re tr(a^-1 da), with a's LU reused; the sign's tangent is zero (real)
    or its phase times i Im tr(a^-1 da) (complex)."""
    (a,), (da,) = primals, tangents
    lu, pivots, perm = _lu_p.bind(a)
    sign, logabs = _slogdet_from_lu(lu, pivots)
    t = _trace(_lu_solve(lu, perm, da))
    if not dtypes.is_complex(a.dtype):
        return (sign, logabs), (_zeros_like(sign), t)
    return (sign, logabs), (sign * (1j * _imag(t)), _real(t))


def slogdet(a):
    return SlogdetResult(*_slogdet(_square("slogdet", a)))


@custom_jvp
def _det(a):
    """sign * exp(log|det|), as jax computes a determinant larger than 3 x 3 (not the
    product of the pivots, which rounds otherwise)."""
    sign, logdet = _slogdet(a)
    return sign * _exp(logdet).astype(sign.dtype)


def _cofactor_solve(a, b):
    """(det a, adj(a) b) for a (..., n, n), well defined for a singular a too.  With
    P a = L U: adj(a) b = det(a) U^-1 L^-1 P b.  When U's last pivot is zero (rank n - 1)
    the last row of U^-1 (L^-1 P b) scaled by det(a) is the finite limit x_n times the
    product of the other pivots: setting U's last pivot to the inverse of that partial
    product and scaling only the other rows by det(a) gives it.  A rank below n - 1 makes
    even that solve infinite: adj(a) = 0 there."""
    n = a.shape[-1]
    if n == 1:
        return a[..., 0, 0], b
    lu, pivots, perm = _lu_p.bind(a)
    sign = (-2 * (_row_swaps(pivots) % 2) + 1).astype(a.dtype)
    partial = _cumprod(_diag(lu), axis=-1) * sign[..., None]
    corner = (_arange(n) == n - 1)[:, None] & (_arange(n) == n - 1)[None, :]
    lu = _where(corner, (1 / partial[..., -2])[..., None, None], lu)
    probe = _prims.triangular_solve(lu, _ones(a.shape[:-1] + (1,), a.dtype), left_side=True,
                                    lower=False)
    degenerate = _any(~_isfinite(probe), axis=(-2, -1))[..., None, None]
    x = _where(degenerate, 0, b)
    x = _take_along_axis(x, _broadcast_to(perm[..., :, None], x.shape), axis=-2,
                         mode="promise_in_bounds")
    x = _prims.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    x = _concatenate([x[..., :-1, :] * partial[..., -1, None, None], x[..., -1:, :]], axis=-2)
    x = _prims.triangular_solve(lu, x, left_side=True, lower=False)
    return partial[..., -1], _where(degenerate, 0, x)


@_det.defjvp
def _det_jvp(primals, tangents):
    """d det a = tr(adj(a) da), through the cofactor solve (finite for a singular a, as
    jax's; its det is the product of the pivots, jax's value under differentiation)."""
    (a,), (da,) = primals, tangents
    det_a, adj_da = _cofactor_solve(a, da)
    return det_a, _trace(adj_da)


def _det_2x2(a):
    return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]


def _det_3x3(a):
    """The rule of Sarrus (jax's closed form for 3 x 3, six products)."""
    e = [[a[..., i, j] for j in range(3)] for i in range(3)]
    return (e[0][0] * e[1][1] * e[2][2] + e[0][1] * e[1][2] * e[2][0]
            + e[0][2] * e[1][0] * e[2][1] - e[0][2] * e[1][1] * e[2][0]
            - e[0][0] * e[1][2] * e[2][1] - e[0][1] * e[1][0] * e[2][2])


@_compiled_when_eager()
def det(a):
    """The determinant: a closed form for 2 x 2 and 3 x 3 matrices, else from LU (one
    compiled program when eager, as jax's)."""
    a = _square("det", a)
    if a.shape[-1] == 2:
        return _det_2x2(a)
    if a.shape[-1] == 3:
        return _det_3x3(a)
    return _det(a)


# --- Cholesky ------------------------------------------------------------------------

def _symmetrize(a):
    return (a + _mT(a)) / 2


def _inexact_square(name, a):
    """a as a (batch of) square matrices of a real or complex floating dtype."""
    (a,) = _promote_to_inexact(_asarray(a))
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"funcgraph.numpy.linalg.{name} needs a (batch of) square matrices "
                         f"(..., n, n), got shape {a.shape}")
    return a


def _mH(x):
    return _conj(_mT(x))


def cholesky(a, *, upper=False, symmetrize_input=True):
    """Lower (or upper) Cholesky factor of a Hermitian positive-definite matrix (real or
    complex); NaN where a is not positive definite."""
    a = _inexact_square("cholesky", a)
    if symmetrize_input:
        a = (a + _mH(a)) / 2
    L = _prims.cholesky(a)
    return _mH(L) if upper else L


# --- Householder QR ------------------------------------------------------------------------

def _householder_impl(a):
    """Householder QR with LAPACK's conventions (R[k, k] = -sign(x_k) |x|, no reflection
    when the column below the diagonal is already zero): (q (..., m, m), r (..., m, n))."""
    m, n = a.shape[-2:]
    dt = a.dtype
    rows = _arange(m, dtype=np.int32)
    cols = _arange(n, dtype=np.int32)
    q0 = _broadcast_to(_eye(m, dtype=dt), a.shape[:-2] + (m, m))

    def step(k, carry):
        q, r = carry
        x = _sum(_where(cols == k, r, 0), axis=-1)       # column k
        x = _where(rows >= k, x, 0)
        alpha = _sum(_where(rows == k, x, 0), axis=-1)
        sigma2 = _sum(_where(rows > k, x * x, 0), axis=-1)
        length = _sqrt(alpha * alpha + sigma2)
        beta = _where(alpha >= 0, -length, length)
        v = x - _where(rows == k, beta[..., None], 0)
        vtv = _sum(v * v, axis=-1)
        skip = sigma2 == 0
        scale = _where(skip, 0, 2 / _where(skip, 1, vtv))
        r = r - (scale[..., None] * v)[..., :, None] * _matmul(v[..., None, :], r)
        q = q - _matmul(q, v[..., :, None]) * (scale[..., None] * v)[..., None, :]
        return q, r

    return lax.fori_loop(0, min(m, n), step, (q0, a))


_householder = _jit(_householder_impl)


# --- the qr primitive (jax's qr_p): LAPACK's geqrf and orgqr / ungqr on the CPU ----------

def _qr_shape(x, full_matrices):
    if x.ndim < 2:
        raise ValueError(f"Argument to QR decomposition must have ndims >= 2, got shape "
                         f"{x.shape}")
    _check_dtype("qr", x, _INEXACT)
    *batch, m, n = x.shape
    k = m if full_matrices else min(m, n)
    return [_ShapedArray((*batch, m, k), x.dtype), _ShapedArray((*batch, k, n), x.dtype)]


def _host_qr(a, full_matrices):
    """[q, r] by LAPACK's geqrf and orgqr / ungqr through SciPy (jax's CPU routines)."""
    a = np.asarray(a)
    *batch, m, n = a.shape
    k = m if full_matrices else min(m, n)
    flat = a.reshape((int(np.prod(batch)), m, n))
    q = np.zeros((flat.shape[0], m, k), a.dtype)
    r = np.zeros((flat.shape[0], k, n), a.dtype)
    if a.size:
        mode = "full" if full_matrices else "economic"
        for i, x in enumerate(flat):
            q[i], r[i] = _scipy_linalg().qr(x, mode=mode, check_finite=False)
    elif m and k:
        q[:] = np.eye(m, k, dtype=a.dtype)
    return [q.reshape((*batch, m, k)), r.reshape((*batch, k, n))]


def _qr_impl(x, full_matrices):
    if np.dtype(x.dtype) not in _prims.LAPACK_PREFIX:
        raise _NoHostImpl
    return _host_qr(x, full_matrices)


def _portable_qr(full_matrices):
    """Off the CPU: Householder reflections for real dtypes, SciPy on the host for complex
    ones."""
    def run(a):
        *batch, m, n = a.shape
        k = m if full_matrices else min(m, n)
        if dtypes.is_complex(a.dtype):
            shapes = (_ShapeDtypeStruct((*batch, m, k), a.dtype),
                      _ShapeDtypeStruct((*batch, k, n), a.dtype))
            return list(_pure_callback(lambda x: _host_qr(x, full_matrices), shapes, a,
                                       vmap_method="expand_dims"))
        q, r = _householder(a)
        return [q[..., :, :k], _triu(r[..., :k, :])]
    return run


def _qr_lowering(ctx, avals_in, avals_out, x, full_matrices):
    aval = avals_in[0].update(weak_type=False)
    if not _prims.uses_lapack(ctx, aval):
        return _lower_closed_body(ctx, _trace_flat(_portable_qr(full_matrices), [aval]), [x])
    *batch, m, n = aval.shape
    k = min(m, n)
    taus = _ShapedArray((*batch, k), aval.dtype)
    factors, tau = _prims.lapack_call(ctx, "geqrf", [x], [aval], [aval, taus])
    q_in = _ShapedArray((*batch, m, m if full_matrices or m < n else n), aval.dtype)
    reflectors = _lower_closed_body(
        ctx, _trace_flat(lambda f: [_reflector_block(f, q_in.shape[-1])], [aval]), [factors])
    routine = "ungqr" if dtypes.is_complex(aval.dtype) else "orgqr"
    q = _prims.lapack_call(ctx, routine, [reflectors[0], tau], [q_in, taus], [q_in])
    rows = m if full_matrices else k
    r = _lower_closed_body(ctx, _trace_flat(lambda f: [_triu(f[..., :rows, :])], [aval]),
                           [factors])
    return [q, r[0]]


def _reflector_block(factors, width):
    """geqrf's factors as the (..., m, width) input orgqr expands: cut to width columns,
    or padded with zero columns up to it."""
    n = factors.shape[-1]
    if width <= n:
        return factors[..., :, :width]
    widths = [(0, 0, 0)] * (factors.ndim - 1) + [(0, width - n, 0)]
    return lax.pad(factors, np.zeros((), factors.dtype), widths)


qr_p = _declare("qr", _qr_shape, _qr_impl, _qr_lowering, multiple_results=True)


def _qr_jvp(primals, tangents, full_matrices):
    """dA = dQ R + Q dR with Q^H dQ skew-Hermitian and dR upper: with C = Q^H dA R^-1,
    Q^H dQ = tril(C, -1) - tril(C, -1)^H + i Im(diag C) (dR's diagonal stays real),
    dR = (C - Q^H dQ) R, dQ = dA R^-1 - Q (C - Q^H dQ)."""
    (a,), (da,) = primals, tangents
    q, r = qr_p.bind(a, full_matrices=full_matrices)
    if _is_zero(da):
        return [q, r], [_Zero(_tangent_aval(q.aval)), _Zero(_tangent_aval(r.aval))]
    m, n = a.shape[-2:]
    if m < n:
        raise NotImplementedError("funcgraph.numpy.linalg.qr: derivative for m < n (wide "
                                  "matrices) is not implemented")
    if full_matrices and m != n:
        raise NotImplementedError("funcgraph.numpy.linalg.qr: derivative of mode='complete' "
                                  "is implemented for square matrices only")
    da_rinv = _prims.triangular_solve(r, da, left_side=False, lower=False)
    c = _matmul(_mH(q), da_rinv)
    low = _tril(c, -1)
    omega = low - _mH(low)
    if dtypes.is_complex(a.dtype):
        omega = omega + _where(_eye(n, dtype=bool), 1j * _imag(c), 0).astype(a.dtype)
    return [q, r], [da_rinv - _matmul(q, c - omega), _matmul(c - omega, r)]


_jvp_rules[qr_p] = _qr_jvp
_batching_rules[qr_p] = _prims.batch_leading(qr_p)


def _qr_reduced(a):
    return tuple(qr_p.bind(a, full_matrices=False))


def _qr_complete(a):
    return tuple(qr_p.bind(a, full_matrices=True))


def qr(a, mode="reduced"):
    a = _matrix("qr", a)
    if mode == "reduced":
        return QRResult(*_qr_reduced(a))
    if mode == "complete":
        return QRResult(*_qr_complete(a))
    if mode == "r":
        return _qr_reduced(a)[1]
    if mode == "raw":  # LAPACK's arrays, h transposed as NumPy gives them
        h, taus = _geqrf_p.bind(a)
        return QRResult(_mT(h), taus)
    raise ValueError(f"funcgraph.numpy.linalg.qr: mode must be 'reduced', 'complete', "
                     f"'r' or 'raw', got {mode!r}")


# --- Jacobi rotations (eigh and svd) --------------------------------------------------------

def _round_robin(m):
    """Pairings of 0..m-1 (m even) into m-1 rounds of m/2 disjoint pairs, each pair once."""
    players = list(range(m))
    tops, bots = [], []
    for _ in range(m - 1):
        tops.append(players[:m // 2])
        bots.append(players[m // 2:][::-1])
        players = [players[0], players[-1]] + players[1:-1]
    return np.array(tops), np.array(bots)


def _rotation_tables(m, dtype):
    """One-hot (rounds, m/2, m) tables selecting each round's p and q indices."""
    tops, bots = _round_robin(m)
    eye = np.eye(m, dtype=dtype)
    return _const(eye[tops], dtype), _const(eye[bots], dtype)


def _jacobi_rotation(g, pm, qm):
    """The rotation J (..., m, m) that zeroes g[p, q] of the symmetric g in J^T g J, for
    the disjoint pairs (p, q) one-hot in pm, qm (m/2, m) (Golub & Van Loan, sym.schur2)."""
    gp = _matmul(pm, g)
    app = _sum(gp * pm, axis=-1)
    apq = _sum(gp * qm, axis=-1)
    aqq = _sum(_matmul(qm, g) * qm, axis=-1)
    zero = apq == 0
    tau = (aqq - app) / (2 * _where(zero, 1, apq))
    t = _where(tau >= 0, 1, -1) / (_abs(tau) + _sqrt(1 + tau * tau))
    t = _where(zero, 0, t)
    c = 1 / _sqrt(1 + t * t)
    s = t * c
    pT, qT = _mT(pm), _mT(qm)
    return (_eye_like(g)
            + _matmul(pT * (c - 1)[..., None, :], pm) + _matmul(qT * (c - 1)[..., None, :], qm)
            + _matmul(pT * s[..., None, :], qm) - _matmul(qT * s[..., None, :], pm))


def _pad_even(x, axes):
    """Pad the given trailing axes of x with one zero row/column if their size is odd."""
    size = x.shape[axes[0]]
    if size % 2 == 0:
        return x
    widths = [(0, 0)] * x.ndim
    for ax in axes:
        widths[ax % x.ndim] = (0, 1)
    return lax.pad(x, np.zeros((), x.dtype), [(lo, hi, 0) for lo, hi in widths])


def _off_norm(g):
    off = g - _where(_eye(g.shape[-1], dtype=bool), g, 0)
    return _sqrt(_sum(off * off, axis=(-2, -1)))


def _eigh_jacobi_impl(a):
    """Cyclic Jacobi on a symmetric (..., n, n): (w unsorted (..., n), v (..., n, n))."""
    n = a.shape[-1]
    g = _pad_even(a, (-2, -1))
    m = g.shape[-1]
    pms, qms = _rotation_tables(m, a.dtype)
    tol = _eps(a.dtype) * n
    scale = _sqrt(_sum(a * a, axis=(-2, -1)))

    def sweep(carry):
        g, v, it = carry

        def one_round(state, pq):
            g, v = state
            j = _jacobi_rotation(g, *pq)
            g = _matmul(_mT(j), _matmul(g, j))
            return (_symmetrize(g), _matmul(v, j)), None
        (g, v), _ = lax.scan(one_round, (g, v), (pms, qms))
        return g, v, it + 1

    def not_done(carry):
        g, _, it = carry
        return (it < _MAX_SWEEPS) & _any(_off_norm(g) > tol * scale)

    g, v, _ = lax.while_loop(not_done, sweep, (g, _eye_like(g), np.int32(0)))
    return _diag(g)[..., :n], v[..., :n, :n]


_eigh_jacobi = _jit(_eigh_jacobi_impl)


def _sort_permutation(w, descending=False):
    """The permutation matrix P sorting w: (w P)[j] = w[order[j]], P[i, j] = (order[j] == i)."""
    order = _argsort(-w if descending else w, axis=-1).astype(np.int32)
    return _mT(_onehot(order, w.shape[-1], w.dtype))


def _sort_columns(w, v, descending=False):
    """Sort w along its last axis, and v's columns with it (an exact one-hot matmul)."""
    perm = _sort_permutation(w, descending)
    return _sum(w[..., :, None] * perm, axis=-2), _matmul(v, perm)


# --- the eigh primitive (jax's eigh_p): LAPACK's syevd / heevd on the CPU ------------------

def _eigh_shape(x, lower):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"Argument to symmetric eigendecomposition must have shape "
                         f"[..., n, n], got shape {x.shape}")
    _check_dtype("eigh", x, _INEXACT)
    return [_ShapedArray(x.shape, x.dtype), _ShapedArray(x.shape[:-1], _real_dtype(x.dtype))]


def _host_eigh(a, lower):
    """Eigenvectors and ascending eigenvalues by LAPACK's syevd / heevd (SciPy's: jax's
    CPU routines, so values, signs and phases are jax's), reading one triangle; NaN where
    LAPACK fails, as jax's."""
    a = np.asarray(a)
    flat = a.reshape((int(np.prod(a.shape[:-2])),) + a.shape[-2:])
    w = np.empty(flat.shape[:-1], _real_dtype(a.dtype))
    v = np.empty(flat.shape, a.dtype)
    for i, m in enumerate(flat):
        try:
            w[i], v[i] = _scipy_linalg().eigh(m, lower=lower, driver="evd", check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            w[i], v[i] = np.nan, np.nan
    return [v.reshape(a.shape), w.reshape(a.shape[:-1])]


def _eigh_impl(x, lower):
    if np.dtype(x.dtype) not in _prims.LAPACK_PREFIX:
        raise _NoHostImpl
    return _host_eigh(x, lower)


def _after_evd(v, w, info):
    ok = info == 0
    return [_where(ok[..., None, None], v, np.nan).astype(v.dtype),
            _where(ok[..., None], w, np.nan).astype(w.dtype)]


def _portable_eigh(lower):
    """Off the CPU: cyclic Jacobi for real dtypes, SciPy on the host for complex ones."""
    def run(a):
        if dtypes.is_complex(a.dtype):
            shapes = (_ShapeDtypeStruct(a.shape, a.dtype),
                      _ShapeDtypeStruct(a.shape[:-1], _real_dtype(a.dtype)))
            return list(_pure_callback(lambda x: _host_eigh(x, lower), shapes, a,
                                       vmap_method="expand_dims"))
        w, v = _sort_columns(*_eigh_jacobi_impl(a))
        return [v, w]
    return run


def _eigh_lowering(ctx, avals_in, avals_out, x, lower):
    aval = avals_in[0].update(weak_type=False)
    if _prims.uses_lapack(ctx, aval):
        routine = "heevd" if dtypes.is_complex(aval.dtype) else "syevd"
        info = _ShapedArray(aval.shape[:-2], np.dtype(np.int32))
        raw_avals = [aval, avals_out[1], info]
        config = (f"mode = {_prims.lapack_char('V')}, "
                  f"uplo = {_prims.lapack_char('L' if lower else 'U')}")
        raw = _prims.lapack_call(ctx, routine, [x], [aval], raw_avals, config)
        return _lower_closed_body(ctx, _trace_flat(_after_evd, raw_avals), raw)
    return _lower_closed_body(ctx, _trace_flat(_portable_eigh(lower), [aval]), [x])


eigh_p = _declare("eigh", _eigh_shape, _eigh_impl, _eigh_lowering, multiple_results=True)


def _eigh_jvp(primals, tangents, lower):
    """dw = Re diag(V^H dA V); dV = V (F * V^H dA V) with F[i, j] = 1 / (w[j] - w[i]),
    i != j (the phase of each eigenvector is left as the factorization fixes it)."""
    (a,), (da,) = primals, tangents
    v, w = eigh_p.bind(a, lower=lower)
    if _is_zero(da):
        return [v, w], [_Zero(_tangent_aval(v.aval)), _Zero(_tangent_aval(w.aval))]
    vdv = _matmul(_mH(v), _matmul(da, v))
    eye = _eye(a.shape[-1], dtype=bool)
    diff = w[..., None, :] - w[..., :, None]
    f = _where(eye, 0, 1 / _where(eye, 1, diff)).astype(a.dtype)
    return [v, w], [_matmul(v, f * vdv), _real(_diag(vdv))]


_jvp_rules[eigh_p] = _eigh_jvp
_batching_rules[eigh_p] = _prims.batch_leading(eigh_p)


def _eigh(a, lower=True):
    """(w, v) of the Hermitian a; LAPACK reads its lower (or upper) triangle, as jax's."""
    v, w = eigh_p.bind(a, lower=bool(lower))
    return w, v


def eigh(a, UPLO=None, symmetrize_input=True):
    """Eigenvalues (ascending) and eigenvectors (columns) of a symmetric matrix."""
    a = _square("eigh", a)
    lower = UPLO is None or UPLO == "L"
    if symmetrize_input:
        a = (a + _mH(a)) / 2
    else:
        tri = _tril(a) if lower else _triu(a)
        a = tri + _mH(_tril(tri, -1) if lower else _triu(tri, 1))
    return EighResult(*_eigh(a, lower))


def eigvalsh(a, UPLO="L", symmetrize_input=True):
    return eigh(a, UPLO, symmetrize_input).eigenvalues


# --- SVD: one-sided Jacobi ---------------------------------------------------------------

def _svd_tall_impl(a):
    """One-sided Jacobi on a (..., m, n), m >= n: (u (..., m, m) with sign fixes,
    s (..., n) descending, v (..., n, n)) with a = u[:, :n] diag(s) v^T."""
    n = a.shape[-1]
    x = _pad_even(a, (-1,))
    k = x.shape[-1]
    pms, qms = _rotation_tables(k, a.dtype)
    tol = _eps(a.dtype) * a.shape[-2]
    v0 = _broadcast_to(_eye(k, dtype=a.dtype), a.shape[:-2] + (k, k))

    def sweep(carry):
        x, v, it = carry

        def one_round(state, pq):
            x, v = state
            j = _jacobi_rotation(_matmul(_mT(x), x), *pq)
            return (_matmul(x, j), _matmul(v, j)), None
        (x, v), _ = lax.scan(one_round, (x, v), (pms, qms))
        return x, v, it + 1

    def not_done(carry):
        x, _, it = carry
        g = _matmul(_mT(x), x)
        d = _sqrt(_diag(g))
        denom = d[..., :, None] * d[..., None, :]
        off = _where(_eye(k, dtype=bool) | (denom == 0), 0,
                     _abs(g) / _where(denom == 0, 1, denom))
        return (it < _MAX_SWEEPS) & _any(off > tol)

    x, v, _ = lax.while_loop(not_done, sweep, (x, v0, np.int32(0)))
    x, v = x[..., :, :n], v[..., :n, :n]
    s = _sqrt(_sum(x * x, axis=-2))
    perm = _sort_permutation(s, descending=True)
    s = _sum(s[..., :, None] * perm, axis=-2)
    x, v = _matmul(x, perm), _matmul(v, perm)
    u = x / _where(s == 0, 1, s)[..., None, :]
    # Householder QR of u gives an orthonormal completion (and columns for zero s).
    q, r = _householder(u)
    signs = _where(_diag(r) < 0, -1, 1).astype(a.dtype)
    q = _concatenate([q[..., :, :n] * signs[..., None, :], q[..., :, n:]], axis=-1)
    return q, s, v


_svd_tall = _jit(_svd_tall_impl)


def _svd_full(a):
    """(u (..., m, m), s (..., k), v (..., n, n)) with a = u[:, :k] diag(s) v[:, :k]^T."""
    m, n = a.shape[-2:]
    if m >= n:
        return _svd_tall(a)
    u, s, v = _svd_tall(_mT(a))
    return v, s, u


# --- the svd primitive (jax's svd_p): LAPACK's gesdd on the CPU --------------------------

def _svd_shapes(shape, dtype, full_matrices, compute_uv):
    """The types of [s, u, vt] (of [s] without compute_uv)."""
    *batch, m, n = shape
    k = min(m, n)
    s = _ShapedArray((*batch, k), _real_dtype(dtype))
    if not compute_uv:
        return [s]
    ku, kv = (m, n) if full_matrices else (k, k)
    return [s, _ShapedArray((*batch, m, ku), dtype), _ShapedArray((*batch, kv, n), dtype)]


def _svd_shape(x, full_matrices, compute_uv):
    if x.ndim < 2:
        raise ValueError(f"Argument to singular value decomposition must have ndims >= 2, "
                         f"got shape {x.shape}")
    _check_dtype("svd", x, _INEXACT)
    return _svd_shapes(x.shape, x.dtype, full_matrices, compute_uv)


def _host_svd(a, full_matrices, compute_uv):
    """[s, u, vt] (or [s]) by LAPACK's gesdd through SciPy (jax's CPU routine, so
    singular-vector phases agree); NaN where LAPACK fails."""
    a = np.asarray(a)
    types = _svd_shapes(a.shape, a.dtype, full_matrices, compute_uv)
    batch = a.shape[:-2]
    count = int(np.prod(batch))
    outs = [np.zeros((count,) + t.shape[len(batch):], t.dtype) for t in types]
    flat = a.reshape((count,) + a.shape[-2:])
    for i, x in enumerate(flat if a.size else ()):
        try:
            found = _scipy_linalg().svd(x, full_matrices=full_matrices, compute_uv=compute_uv,
                                        check_finite=False, lapack_driver="gesdd")
        except (np.linalg.LinAlgError, ValueError):
            found = (np.nan, np.nan, np.nan) if compute_uv else np.nan
        if compute_uv:
            u, sv, vt = found
            outs[0][i], outs[1][i], outs[2][i] = sv, u, vt
        else:
            outs[0][i] = found
    if not a.size and compute_uv:  # the identity's vectors, as LAPACK leaves them
        for out in outs[1:]:
            out[:] = np.eye(*out.shape[-2:], dtype=out.dtype)
    return [o.reshape(t.shape) for o, t in zip(outs, types, strict=True)]


def _svd_impl(x, full_matrices, compute_uv):
    if np.dtype(x.dtype) not in _prims.LAPACK_PREFIX:
        raise _NoHostImpl
    return _host_svd(x, full_matrices, compute_uv)


def _after_gesdd(compute_uv):
    def run(_, s, u, vt, info):
        ok = info == 0
        s = _where(ok[..., None], s, np.nan).astype(s.dtype)
        if not compute_uv:
            return [s]
        return [s, _where(ok[..., None, None], u, np.nan).astype(u.dtype),
                _where(ok[..., None, None], vt, np.nan).astype(vt.dtype)]
    return run


def _portable_svd(full_matrices, compute_uv):
    """Off the CPU: one-sided Jacobi for real dtypes, SciPy on the host for complex ones."""
    def run(a):
        types = _svd_shapes(a.shape, a.dtype, full_matrices, compute_uv)
        if 0 in a.shape[-2:]:  # no singular values; the vectors of the identity
            return [_zeros(types[0].shape, types[0].dtype)] + [
                _broadcast_to(_eye(*t.shape[-2:], dtype=t.dtype), t.shape) for t in types[1:]]
        if dtypes.is_complex(a.dtype):
            shapes = tuple(_ShapeDtypeStruct(t.shape, t.dtype) for t in types)
            return list(_pure_callback(lambda x: _host_svd(x, full_matrices, compute_uv),
                                       shapes, a, vmap_method="expand_dims"))
        u, s, v = _svd_full(a)
        if not compute_uv:
            return [s]
        if full_matrices:
            return [s, u, _mT(v)]
        k = s.shape[-1]
        return [s, u[..., :, :k], _mT(v[..., :, :k])]
    return run


def _svd_lowering(ctx, avals_in, avals_out, x, full_matrices, compute_uv):
    aval = avals_in[0].update(weak_type=False)
    if not _prims.uses_lapack(ctx, aval):
        closed = _trace_flat(_portable_svd(full_matrices, compute_uv), [aval])
        return _lower_closed_body(ctx, closed, [x])
    s, u, vt = _svd_shapes(aval.shape, aval.dtype, full_matrices and compute_uv, True)
    info = _ShapedArray(aval.shape[:-2], np.dtype(np.int32))
    raw_avals = [aval, s, u, vt, info]
    mode = ("A" if full_matrices else "S") if compute_uv else "N"
    raw = _prims.lapack_call(ctx, "gesdd", [x], [aval], raw_avals,
                             config=f"mode = {_prims.lapack_char(mode)}")
    return _lower_closed_body(ctx, _trace_flat(_after_gesdd(compute_uv), raw_avals), raw)


svd_p = _declare("svd", _svd_shape, _svd_impl, _svd_lowering, multiple_results=True)


def _svd_uv_jvp(a, da, u, s, vh):
    """With dS = U^H dA V and F[i, j] = 1 / (s[j]^2 - s[i]^2) (i != j): ds = Re diag(dS),
    dU = U (F * (dS S + S dS^H) + i Im(diag dS) / s) + (I - U U^H) dA V / s,
    dV = V (F * (S dS + dS^H S)) + (I - V V^H) dA^H U / s (the phase freedom of each
    singular pair is put on U, as the imaginary diagonal term does); for the reduced
    factors of a, or the full ones of a square a."""
    v = _mH(vh)
    ds_mat = _matmul(_mH(u), _matmul(da, v))
    k = s.shape[-1]
    eye = _eye(k, dtype=bool)
    s2 = s * s
    diff = s2[..., None, :] - s2[..., :, None]
    f = _where(eye, 0, 1 / _where(eye, 1, diff)).astype(a.dtype)
    sc = s.astype(a.dtype)
    dss = ds_mat * sc[..., None, :]
    sds = sc[..., :, None] * ds_mat
    inner_u = f * (dss + _mH(dss))
    s_inv = _where(s == 0, 0, 1 / _where(s == 0, 1, s)).astype(a.dtype)
    if dtypes.is_complex(a.dtype):
        inner_u = inner_u + _where(eye, 1j * _imag(ds_mat), 0) * s_inv[..., None, :]
    du = _matmul(u, inner_u)
    dv = _matmul(v, f * (sds + _mH(sds)))
    m, n = a.shape[-2:]
    if m > k:
        proj = _matmul(da, v) - _matmul(u, ds_mat)
        du = du + proj * s_inv[..., None, :]
    if n > k:
        proj = _matmul(_mH(da), u) - _matmul(v, _mH(ds_mat))
        dv = dv + proj * s_inv[..., None, :]
    return [_real(_diag(ds_mat)), du, _mH(dv)]


def _svd_jvp(primals, tangents, full_matrices, compute_uv):
    (a,), (da,) = primals, tangents
    outs = svd_p.bind(a, full_matrices=full_matrices, compute_uv=compute_uv)
    if _is_zero(da):
        return outs, [_Zero(_tangent_aval(o.aval)) for o in outs]
    if not compute_uv:
        s, u, vh = svd_p.bind(a, full_matrices=False, compute_uv=True)
        return outs, [_real(_diag(_matmul(_mH(u), _matmul(da, _mH(vh)))))]
    if full_matrices and a.shape[-2] != a.shape[-1]:
        raise NotImplementedError("funcgraph.numpy.linalg.svd: the derivative with "
                                  "full_matrices=True needs a square matrix; use "
                                  "full_matrices=False")
    s, u, vh = outs
    return outs, _svd_uv_jvp(a, da, u, s, vh)


_jvp_rules[svd_p] = _svd_jvp
_batching_rules[svd_p] = _prims.batch_leading(svd_p)


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """a = U diag(S) Vh, S descending (as JAX's numpy.linalg.svd)."""
    del hermitian  # the general algorithm is used either way
    a = _matrix("svd", a)
    if not compute_uv:
        return svd_p.bind(a, full_matrices=bool(full_matrices), compute_uv=False)[0]
    s, u, vh = svd_p.bind(a, full_matrices=bool(full_matrices), compute_uv=True)
    return SVDResult(u, s, vh)


def svdvals(x):
    return svd(x, compute_uv=False)


def matrix_rank(M, rtol=None, *, tol=None):
    M = _matrix("matrix_rank", M)
    s = svd(M, compute_uv=False)
    if tol is None:
        rtol = max(M.shape[-2:]) * _eps(M.dtype) if rtol is None else rtol
        tol = _max(s, axis=-1, keepdims=True) * rtol
    return _sum(s > tol, axis=-1)


@_compiled_when_eager()
def pinv(a, rtol=None):
    a = _matrix("pinv", a)
    u, s, vh = svd(a, full_matrices=False)
    rtol = max(a.shape[-2:]) * 10 * _eps(a.dtype) if rtol is None else rtol
    cutoff = rtol * s[..., :1]  # (s descends)
    kept = _where(s > cutoff, s, np.inf).astype(a.dtype)  # 1 / inf: the dropped ones
    return _matmul(_mH(vh), _mH(u) / kept[..., :, None], precision=lax.Precision.HIGHEST)


# --- The rest of JAX's numpy.linalg -------------------------------------------------------

def matrix_transpose(x, /):
    x = _asarray(x)
    if x.ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={x.ndim}")
    return _mT(x)


def diagonal(x, /, *, offset=0):
    return _diagonal(_asarray(x), offset=offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
    return _sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def outer(x1, x2, /):
    x1, x2 = _asarray(x1), _asarray(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={x1.ndim} and x2.ndim={x2.ndim}")
    shape = (x1.shape[0], x2.shape[0])
    return lax.broadcast_in_dim(x1, shape, (0,)) * lax.broadcast_in_dim(x2, shape, (1,))


@_compiled_when_eager(static_argnames=("axis",))
def cross(x1, x2, /, *, axis=-1):
    x1, x2 = _asarray(x1), _asarray(x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they have shape[axis] of {x1.shape[axis]} and {x2.shape[axis]}")
    return _np_cross(x1, x2, axis=axis)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    return _np_vecdot(x1, x2, axis=axis, precision=precision,
                      preferred_element_type=preferred_element_type)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    return _matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    del preferred_element_type  # not passed through (funcgraph's tensordot has no such argument)
    return _np_tensordot(x1, x2, axes=axes, precision=precision)


def norm(x, ord=None, axis=None, keepdims=False):
    """JAX's numpy.linalg.norm; the matrix norms ord=2, -2 and 'nuc' from singular values.
    One compiled program when eager (as jax's, which is jitted)."""
    x = _asarray(x)
    if isinstance(axis, list):  # static arguments must be hashable
        axis = tuple(axis)
    return _norm(x, ord=ord, axis=axis, keepdims=keepdims)


@_compiled_when_eager(static_argnames=("ord", "axis", "keepdims"))
def _norm(x, ord, axis, keepdims):
    x = _asarray(x)
    matrix_axes = (axis is None and x.ndim == 2) or \
        (isinstance(axis, (tuple, list)) and len(axis) == 2)
    if not (matrix_axes and ord in (2, -2, "nuc")):
        return _norm_by_reductions(x, ord=ord, axis=axis, keepdims=keepdims)
    (x,) = _promote_to_inexact(x)
    row, col = (a % x.ndim for a in (axis or (0, 1)))
    if row == col:
        raise ValueError(f"norm: duplicate axes given: {axis!r}")
    rest = [i for i in range(x.ndim) if i not in (row, col)]
    s = svd(x.transpose(rest + [row, col]), compute_uv=False)
    out = _sum(s, axis=-1) if ord == "nuc" else _max(s, axis=-1, initial=0) if ord == 2 \
        else _min(s, axis=-1)
    if keepdims:
        out = out.reshape(tuple(1 if i in (row, col) else d for i, d in enumerate(x.shape)))
    return out


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The ord-norm of x over axis (an int, a tuple of ints, or None: all axes)."""
    return _vector_norm(_asarray(x), ord, axis, keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The matrix ord-norm over the last two axes ('nuc', 2 and -2 from singular values)."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


@_compiled_when_eager(static_argnames=("n",))
def matrix_power(a, n):
    """a to the integer power n by repeated squaring (n < 0 inverts a first); one
    compiled program when eager, as jax's.  The products in jax's order: (a a) a for
    n = 3, else result times the next square."""
    a = _asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise TypeError(f"matrix_power requires a square matrix, got shape {a.shape}")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        return _broadcast_to(_eye(a.shape[-1], dtype=a.dtype), a.shape)
    if n < 0:
        a, n = inv(a), -n
    if n == 3:
        return _matmul(_matmul(a, a), a)
    result = None
    power = a
    while n:
        if n & 1:
            result = power if result is None else _matmul(result, power)
        n >>= 1
        if n:
            power = _matmul(power, power)
    return result


def multi_dot(arrays, *, precision=None):
    """The chained product of arrays (the first may be a row vector, the last a column)."""
    arrays = [_asarray(a) for a in arrays]
    if len(arrays) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrays)}")
    if arrays[0].ndim not in (1, 2) or arrays[-1].ndim not in (1, 2) or \
            any(a.ndim != 2 for a in arrays[1:-1]):
        raise ValueError("multi_dot: the first and last arrays must be 1D or 2D, the others 2D")
    # einsum picks the cheapest order of the products (as jax's multi_dot)
    letters = [chr(ord("a") + i) if i < 26 else chr(ord("A") + i - 26)
               for i in range(len(arrays) + 1)]
    terms = [letters[i] + letters[i + 1] for i in range(len(arrays))]
    if arrays[0].ndim == 1:
        terms[0] = terms[0][1:]
    if arrays[-1].ndim == 1:
        terms[-1] = terms[-1][:1]
    out = (terms[0][:1] if arrays[0].ndim == 2 else "") + \
        (terms[-1][-1:] if arrays[-1].ndim == 2 else "")
    return _einsum(",".join(terms) + "->" + out, *arrays, precision=precision)


def cond(x, p=None):
    """The condition number of x in the p-norm (2 when None); inf for singular x (NaN for
    a zero matrix in the 2-norm, as jax's)."""
    x = _asarray(x)
    if x.ndim < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got x.ndim={x.ndim}")
    if p in (None, 2):  # (as jax: 0 / 0, for a zero matrix, stays NaN)
        s = svd(x, compute_uv=False)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svd(x, compute_uv=False)
        r = s[..., -1] / s[..., 0]
    else:
        if x.shape[-1] != x.shape[-2]:
            raise ValueError(f"jnp.linalg.cond: for p={p}, x must be square; got "
                             f"x.shape={x.shape}")
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    # A singular matrix gives NaN in the formulas above: its condition number is infinite.
    singular = _isnan(r) & ~_any(_isnan(x), axis=(-2, -1))
    return _where(singular, np.inf, r)


def tensorinv(a, ind=2):
    """The inverse of a with respect to tensordot over its first ind axes."""
    a = _asarray(a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind}")
    contracting, batch = a.shape[:ind], a.shape[ind:]
    flat = int(np.prod(contracting))
    if int(np.prod(batch)) != flat:
        raise ValueError(f"tensorinv: a.shape[:ind] must equal a.shape[ind:] in size; got "
                         f"a.shape={a.shape}, ind={ind}")
    return inv(a.reshape(flat, -1)).reshape(batch + contracting)


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) == b."""
    a, b = _asarray(a), _asarray(b)
    if axes is not None:
        order = [i for i in range(a.ndim) if i not in axes] + list(axes)
        a = a.transpose(order)
    out_shape = a.shape[b.ndim:]
    size = int(np.prod(out_shape))
    return solve(a.reshape(-1, size), b.reshape(-1)).reshape(out_shape)


@_compiled_when_eager(static_argnames=("numpy_resid",))
def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """Least-squares solution of a x = b by the SVD: (x, residuals, rank, s).  Residuals
    are always the squared column norms of b - a x (as JAX under jit)."""
    a, b = _asarray(a), _asarray(b)
    dtype = _result_type(a, b, 1.0)
    a, b = a.astype(dtype), b.astype(dtype)
    if a.shape[0] != b.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    vector = b.ndim == 1
    if vector:
        b = b[:, None]
    if a.ndim != 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim != 2:
        raise TypeError(f"{b.ndim}-dimensional array given. Array must be one or "
                        f"two-dimensional")
    m, n = a.shape
    eps = float(np.finfo(dtype).eps)
    rcond = eps * max(m, n) if rcond is None else _where(rcond < 0, eps, rcond)
    u, s, vt = svd(a, full_matrices=False)
    mask = s >= rcond * s[0]
    rank = _sum(mask)
    s_inv = _where(mask, 1 / _where(mask, s, 1), 0).astype(dtype)[:, None]
    x = _matmul(_mH(vt), s_inv * _matmul(_mH(u), b))
    resid = _vector_norm(b - _matmul(a, x), 2, 0, False) ** 2
    del numpy_resid  # NumPy's empty residuals need a concrete rank: full residuals always
    return (x[:, 0] if vector else x), resid, rank, s


# --- eig: general (non-symmetric) eigendecomposition on the host ---------------------------
# XLA has no general eigensolver; as JAX on CPU (LAPACK geev) the decomposition runs on the
# host, here through SciPy's geev in a pure_callback.  eigvals has an analytic derivative;
# eigenvectors of non-symmetric matrices have none (as in JAX).

EigResult = _namedtuple("EigResult", ["eigenvalues", "eigenvectors"])


def _complex_dtype(dtype):
    return np.dtype(np.complex128 if np.dtype(dtype) in (np.float64, np.complex128)
                    else np.complex64)


# --- the eig primitive (jax's eig_p): LAPACK's geev on the CPU ---------------------------

def _eig_shape(x, compute_left_eigenvectors, compute_right_eigenvectors):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"Argument to nonsymmetric eigendecomposition must have shape "
                         f"[..., n, n], got shape {x.shape}")
    _check_dtype("eig", x, _INEXACT)
    complex_dtype = _complex_dtype(x.dtype)
    vectors = _ShapedArray(x.shape, complex_dtype)
    return ([_ShapedArray(x.shape[:-1], complex_dtype)]
            + [vectors] * (compute_left_eigenvectors + compute_right_eigenvectors))


def _host_eig(a, left, right):
    """[w] + [vl] + [vr] by LAPACK's geev through SciPy (the routine jax's CPU eig calls,
    so eigenvector phases agree with jax's); NaN where LAPACK fails."""
    a = np.asarray(a)
    complex_dtype = _complex_dtype(a.dtype)
    flat = a.reshape((int(np.prod(a.shape[:-2])),) + a.shape[-2:])
    outs = [np.empty(flat.shape[:-1], complex_dtype)] + [
        np.empty(flat.shape, complex_dtype) for _ in range(left + right)]
    for i, m in enumerate(flat):
        try:
            found = _scipy_linalg().eig(m, left=left, right=right, check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            found = [np.nan] * len(outs)
        for out, value in zip(outs, found if left or right else [found], strict=True):
            out[i] = value
    return [o.reshape(a.shape[:-2] + o.shape[1:]) for o in outs]


def _eig_impl(x, compute_left_eigenvectors, compute_right_eigenvectors):
    if np.dtype(x.dtype) not in _prims.LAPACK_PREFIX:
        raise _NoHostImpl
    return _host_eig(x, compute_left_eigenvectors, compute_right_eigenvectors)


def _after_geev(left, right, real):
    def run(*raw):
        w, vl, vr, info = (lax.complex(raw[0], raw[1]),) + raw[2:] if real else raw
        ok = info == 0
        outs = [_where(ok[..., None], w, np.nan).astype(w.dtype)]
        for wanted, v in ((left, vl), (right, vr)):
            if wanted:
                outs.append(_where(ok[..., None, None], v, np.nan).astype(v.dtype))
        return outs
    return run


def _eig_lowering(ctx, avals_in, avals_out, x, compute_left_eigenvectors,
                  compute_right_eigenvectors):
    aval = avals_in[0].update(weak_type=False)
    left, right = compute_left_eigenvectors, compute_right_eigenvectors
    if not _prims.uses_lapack(ctx, aval):
        def on_host(a):
            shapes = tuple(_ShapeDtypeStruct(t.shape, t.dtype) for t in avals_out)
            return list(_pure_callback(lambda v: _host_eig(v, left, right), shapes, a,
                                       vmap_method="expand_dims"))
        return _lower_closed_body(ctx, _trace_flat(on_host, [aval]), [x])
    real = not dtypes.is_complex(aval.dtype)
    complex_dtype = _complex_dtype(aval.dtype)
    vectors = _ShapedArray(aval.shape, complex_dtype)
    info = _ShapedArray(aval.shape[:-2], np.dtype(np.int32))
    if real:
        parts = _ShapedArray(aval.shape[:-1], aval.dtype)
        raw_avals = [parts, parts, vectors, vectors, info]
    else:
        raw_avals = [_ShapedArray(aval.shape[:-1], complex_dtype), vectors, vectors, info]
    config = (f"compute_left = {_prims.lapack_char('V' if left else 'N')}, "
              f"compute_right = {_prims.lapack_char('V' if right else 'N')}")
    raw = _prims.lapack_call(ctx, "geev", [x], [aval], raw_avals, config, aliased=())
    closed = _trace_flat(_after_geev(left, right, real), raw_avals)
    return _lower_closed_body(ctx, closed, raw)


eig_p = _declare("eig", _eig_shape, _eig_impl, _eig_lowering, multiple_results=True)


def _eig_jvp(primals, tangents, compute_left_eigenvectors, compute_right_eigenvectors):
    """The eigenvalues' tangent, dw = diag(V^-1 dA V); eigenvectors have none (as jax)."""
    if compute_left_eigenvectors or compute_right_eigenvectors:
        raise NotImplementedError(
            "Derivatives of non-symmetric eigenvectors are only valid under assumptions on "
            "the input that cannot be checked (as in JAX, see jax-ml/jax#2748); "
            "differentiate eigvals instead, or eigh for a symmetric matrix")
    (a,), (da,) = primals, tangents
    w, v = eig_p.bind(a, compute_left_eigenvectors=False, compute_right_eigenvectors=True)
    if _is_zero(da):
        return [w], [_Zero(_tangent_aval(w.aval))]
    return [w], [_diag(_solve_linear(v, _matmul(da.astype(v.dtype), v)))]


_jvp_rules[eig_p] = _eig_jvp
_batching_rules[eig_p] = _prims.batch_leading(eig_p)


# --- the schur primitive (jax's schur_p, for scipy.linalg.schur): LAPACK's gees ---------

def _schur_shape(x, compute_schur_vectors):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"Argument to Schur decomposition must have shape [..., n, n], got "
                         f"shape {x.shape}")
    _check_dtype("schur", x, _INEXACT)
    return [_ShapedArray(x.shape, x.dtype)] * (1 + bool(compute_schur_vectors))


def _host_schur(a, compute_schur_vectors):
    """[t] + [vs] by LAPACK's gees through SciPy (jax's CPU routine), unsorted."""
    a = np.asarray(a)
    flat = a.reshape((int(np.prod(a.shape[:-2])),) + a.shape[-2:])
    t, vs = np.empty_like(flat), np.empty_like(flat)
    output = "complex" if dtypes.is_complex(a.dtype) else "real"
    for i, m in enumerate(flat):
        t[i], vs[i] = _scipy_linalg().schur(m, output=output, check_finite=False)
    return [t.reshape(a.shape), vs.reshape(a.shape)][:1 + bool(compute_schur_vectors)]


def _schur_impl(x, compute_schur_vectors):
    if np.dtype(x.dtype) not in _prims.LAPACK_PREFIX:
        raise _NoHostImpl
    return _host_schur(x, compute_schur_vectors)


def _after_gees(compute_schur_vectors):
    def run(t, vs, *rest):
        ok = (rest[-1] == 0)[..., None, None]
        outs = [t, vs][:1 + bool(compute_schur_vectors)]
        return [_where(ok, o, np.nan).astype(o.dtype) for o in outs]
    return run


def _schur_lowering(ctx, avals_in, avals_out, x, compute_schur_vectors):
    aval = avals_in[0].update(weak_type=False)
    if not _prims.uses_lapack(ctx, aval):
        def on_host(a):
            shapes = tuple(_ShapeDtypeStruct(t.shape, t.dtype) for t in avals_out)
            return list(_pure_callback(lambda v: _host_schur(v, compute_schur_vectors),
                                       shapes, a, vmap_method="expand_dims"))
        return _lower_closed_body(ctx, _trace_flat(on_host, [aval]), [x])
    eigenvalues = ([_ShapedArray(aval.shape[:-1], aval.dtype)]
                   * (1 if dtypes.is_complex(aval.dtype) else 2))  # (w) or (wr, wi)
    count = _ShapedArray(aval.shape[:-2], np.dtype(np.int32))
    raw_avals = [aval, aval] + eigenvalues + [count, count]  # ..., sdim, info
    config = (f"mode = {_prims.lapack_char('V' if compute_schur_vectors else 'N')}, "
              f"sort = {_prims.lapack_char('N')}")
    raw = _prims.lapack_call(ctx, "gees", [x], [aval], raw_avals, config)
    closed = _trace_flat(_after_gees(compute_schur_vectors), raw_avals)
    return _lower_closed_body(ctx, closed, raw)


schur_p = _declare("schur", _schur_shape, _schur_impl, _schur_lowering,
                   multiple_results=True)


_batching_rules[schur_p] = _prims.batch_leading(schur_p)


def _solve_linear(a, b):
    """a^-1 b through a's LU factors: linear in b with transposable operations, for use
    inside JVP rules."""
    lu, perm, _ = _lu_factor(a)
    return _lu_solve(lu, perm, b)


def _eig(a):
    return eig_p.bind(a, compute_left_eigenvectors=False, compute_right_eigenvectors=True)


def _eigvals(a):
    return eig_p.bind(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


def eig(a):
    """Eigenvalues and right eigenvectors (unit columns) of a general square matrix,
    complex-valued; computed on the host."""
    return EigResult(*_eig(_inexact_square("eig", a)))


def eigvals(a):
    return _eigvals(_inexact_square("eigvals", a))
