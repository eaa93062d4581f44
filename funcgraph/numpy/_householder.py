"""Householder reflections as jax's primitives: geqrf (a = Q R with Q kept as reflectors
below R), householder_product (Q formed from them), ormqr (Q or Q^H applied to a matrix
without forming Q), hessenberg (a = Q H Q^H with Q kept as reflectors below H's first
subdiagonal) and tridiagonal (the same for a Hermitian a, whose H is tridiagonal).
Reflector i is H_i = I - taus[i] v_i v_i^H, v_i zero above its leading one and the packed
column below it; Q = H_0 H_1 ... H_{k-1}.  Leading axes are batch axes.

On the CPU each is its LAPACK routine, as jax runs it (geqrf, orgqr / ungqr, ormqr /
unmqr, gehrd, sytrd / hetrd): compiled, jaxlib's custom calls; eagerly, SciPy's routines
(the same code, so the same bits).  Elsewhere geqrf, householder_product and ormqr are
loops of plain ops; hessenberg and tridiagonal run SciPy's routines on the host.  As in
jax none has a derivative rule (qr's derivatives belong to the qr primitive).  They sit in
the numpy layer because their loops are written with funcgraph.numpy's ops."""
import numpy as np

from funcgraph import dtypes, lax
from funcgraph.callback import pure_callback
from funcgraph.core import ShapedArray
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import NoHostImpl
from funcgraph.interpreters.staging import trace_flat
from funcgraph.lowering import lower_closed_body
from funcgraph.numpy._creation import arange, eye, zeros
from funcgraph.numpy._reductions import sum as _sum
from funcgraph.numpy._shapes import broadcast_to
from funcgraph.numpy._ufuncs import conj, imag, real, sqrt, where_values as where
from funcgraph.primitives import linalg as _prims
from funcgraph.primitives.helpers import declare
from funcgraph.transforms.jit import ShapeDtypeStruct
from funcgraph.util import scipy_linalg

_I32 = np.dtype(np.int32)


# --- shared pieces -----------------------------------------------------------------------

def _routine(name, dtype):
    """SciPy's LAPACK routine `name` for dtype; dtypes LAPACK has none for run compiled."""
    if np.dtype(dtype) not in _prims.LAPACK_PREFIX:
        raise NoHostImpl
    return scipy_linalg().get_lapack_funcs(name, dtype=dtype)


def _orthogonal(dtype, name):
    """The orthogonal routine or-name (orgqr, ormqr) or, for complex dtypes, its unitary
    twin un-name (ungqr, unmqr)."""
    return ("un" if dtypes.is_complex(dtype) else "or") + name


def _workspace(work):
    """The size a LAPACK workspace query (lwork = -1) answered: what its blocked code asks
    for.  jaxlib's kernels query it too (the blocked and unblocked codes round
    differently)."""
    return max(1, int(np.real(np.ravel(work)[0])))


def _vector(h, i, rows):
    """Reflector i of the packed (..., m, n) h: zero above row i, one there, h's column i
    below."""
    column = _sum(where(arange(h.shape[-1], dtype=_I32) == i, h, 0), axis=-1)
    return where(rows == i, 1, where(rows > i, column, 0)).astype(h.dtype)


def _tau(taus, i):
    return _sum(where(arange(taus.shape[-1], dtype=_I32) == i, taus, 0), axis=-1)


# --- geqrf ------------------------------------------------------------------------------

def _geqrf_shape(a):
    batch = _prims.check_operands("geqrf", [a], [2])
    m, n = a.shape[-2:]
    return [ShapedArray(a.shape, a.dtype), ShapedArray((*batch, min(m, n)), a.dtype)]


def _geqrf_impl(a):
    a = np.asarray(a)
    geqrf = _routine("geqrf", a.dtype)
    *batch, m, n = a.shape
    h, taus = a.copy(), np.zeros((*batch, min(m, n)), a.dtype)
    if min(m, n):
        for i in np.ndindex(*batch):
            lwork = _workspace(geqrf(a[i], lwork=-1)[-2])
            h[i], taus[i], _, _ = geqrf(a[i], lwork=lwork)
    return [h, taus]


def _geqrf_loop(a):
    """The portable factorization: column by column, the reflector that zeros the column
    below the diagonal (LAPACK's larfg: none when it is already zero and the diagonal
    real), applied to the columns after it as H^H."""
    m, n = a.shape[-2:]
    rows = arange(m, dtype=_I32)
    cols = arange(n, dtype=_I32)
    k = min(m, n)
    slots = arange(k, dtype=_I32)

    def step(i, carry):
        h, taus = carry
        x = _sum(where(cols == i, h, 0), axis=-1)         # column i
        below = rows > i
        alpha = _sum(where(rows == i, x, 0), axis=-1)
        xnorm2 = _sum(where(below, real(x * conj(x)), 0), axis=-1)
        skip = (xnorm2 == 0) & (imag(alpha) == 0)
        norm = sqrt(real(alpha * conj(alpha)) + xnorm2)
        beta = where(skip, alpha, where(real(alpha) >= 0, -norm, norm).astype(a.dtype))
        tau = where(skip, 0, (beta - alpha) / where(skip, 1, beta))
        scale = where(skip, 0, 1 / where(skip, 1, alpha - beta))
        v = where(rows == i, 1, where(below, x * scale[..., None], 0)).astype(a.dtype)
        w = _sum(conj(v)[..., :, None] * h, axis=-2)
        updated = h - (conj(tau)[..., None, None] * v[..., :, None]) * w[..., None, :]
        h = where(cols > i, updated, h)
        column = where(rows == i, beta[..., None], where(below, v, x))
        h = where(cols == i, column[..., :, None], h)
        return h, where(slots == i, tau[..., None], taus)

    return list(lax.fori_loop(0, k, step, (a, zeros(a.shape[:-2] + (k,), a.dtype))))


def _geqrf_lowering(ctx, avals_in, avals_out, a):
    aval = avals_in[0].update(weak_type=False)
    if not _prims.uses_lapack(ctx, aval):
        return lower_closed_body(ctx, trace_flat(_geqrf_loop, [aval]), [a])
    return _prims.lapack_call(ctx, "geqrf", [a], [aval], _geqrf_shape(aval))


geqrf_p = declare("geqrf", _geqrf_shape, _geqrf_impl, _geqrf_lowering, multiple_results=True)
batching_rules[geqrf_p] = _prims.batch_leading(geqrf_p)


# --- householder_product ----------------------------------------------------------------

def _householder_product_shape(a, taus):
    _prims.check_operands("householder_product", [a, taus], [2, 1])
    m, n = a.shape[-2:]
    if m < n:
        raise ValueError(f"The first argument to householder_product must have at least as "
                         f"many rows as columns, got shape {a.shape[-2:]}")
    if taus.shape[-1] > min(m, n):
        raise ValueError("The second argument to householder_product must not have more "
                         "rows than the minimum of the first argument's rows and columns.")
    return ShapedArray(a.shape, a.dtype)


def _householder_product_impl(a, taus):
    a, taus = np.asarray(a), np.asarray(taus)
    orgqr = _routine(_orthogonal(a.dtype, "gqr"), a.dtype)
    *batch, m, n = a.shape
    q = np.broadcast_to(np.eye(m, n, dtype=a.dtype), a.shape).copy()
    if taus.shape[-1] and n:
        for i in np.ndindex(*batch):
            lwork = _workspace(orgqr(a[i], taus[i], lwork=-1)[-2])
            q[i] = orgqr(a[i], taus[i], lwork=lwork)[0]
    return q


def _householder_product_loop(a, taus):
    """The first n columns of H_0 ... H_{k-1}: the reflectors applied to the identity's
    columns, the last one first."""
    m, n = a.shape[-2:]
    k = taus.shape[-1]
    rows = arange(m, dtype=_I32)

    def step(j, q):
        i = k - 1 - j
        v = _vector(a, i, rows)[..., :, None]
        tau = _tau(taus, i)[..., None, None]
        return q - tau * v * _sum(conj(v) * q, axis=-2, keepdims=True)
    q0 = broadcast_to(eye(m, n, dtype=a.dtype), a.shape)
    return [lax.fori_loop(0, k, step, q0)]


def _householder_product_lowering(ctx, avals_in, avals_out, a, taus):
    aval, taus_aval = (v.update(weak_type=False) for v in avals_in)
    if not (_prims.uses_lapack(ctx, aval) and taus_aval.shape[-1]):
        return lower_closed_body(ctx, trace_flat(_householder_product_loop, [aval, taus_aval]),
                                 [a, taus])[0]
    routine = _orthogonal(aval.dtype, "gqr")
    return _prims.lapack_call(ctx, routine, [a, taus], [aval, taus_aval], [aval])


householder_product_p = declare("householder_product", _householder_product_shape,
                                _householder_product_impl, _householder_product_lowering)
batching_rules[householder_product_p] = _prims.batch_leading(householder_product_p)


# --- ormqr ------------------------------------------------------------------------------

def _ormqr_shape(a, taus, c, left, transpose):
    _prims.check_operands("ormqr", [a, taus, c], [2, 1, 2])
    m = a.shape[-2]
    if left and c.shape[-2] != m:
        raise ValueError(f"ormqr with left=True expects c to have the same number of rows as "
                         f"the Householder matrix a. Got a shape {a.shape[-2:]} and c shape "
                         f"{c.shape[-2:]}.")
    if not left and c.shape[-1] != m:
        raise ValueError(f"ormqr with left=False expects c to have the same number of columns "
                         f"as the Householder matrix a has rows. Got a shape {a.shape[-2:]} "
                         f"and c shape {c.shape[-2:]}.")
    if taus.shape[-1] > min(a.shape[-2:]):
        raise ValueError("ormqr: taus must not have more entries than the minimum of a's "
                         "rows and columns.")
    return ShapedArray(c.shape, c.dtype)


def _ormqr_impl(a, taus, c, left, transpose):
    a, taus, c = np.asarray(a), np.asarray(taus), np.asarray(c)
    ormqr = _routine(_orthogonal(a.dtype, "mqr"), a.dtype)
    side = "L" if left else "R"
    trans = ("C" if dtypes.is_complex(a.dtype) else "T") if transpose else "N"
    out = c.copy()
    k = taus.shape[-1]
    if k and c.size:
        for i in np.ndindex(*c.shape[:-2]):
            reflectors = a[i][:, :k]
            lwork = _workspace(ormqr(side, trans, reflectors, taus[i], c[i], -1)[-2])
            out[i] = ormqr(side, trans, reflectors, taus[i], c[i], lwork)[0]
    return out


def _ormqr_loop(left, transpose):
    """The portable product: the reflectors applied to c one by one, without forming Q.
    Q c and c Q^H take the last reflector first; Q^H c and c Q the first."""
    def run(a, taus, c):
        k = taus.shape[-1]
        rows = arange(a.shape[-2], dtype=_I32)
        last_first = left != transpose

        def step(j, c):
            i = k - 1 - j if last_first else j
            v = _vector(a, i, rows)
            tau = _tau(taus, i)
            tau = (conj(tau) if transpose else tau)[..., None, None]
            if left:    # H c = c - tau v (v^H c)
                return c - tau * v[..., :, None] * _sum(conj(v)[..., :, None] * c, axis=-2,
                                                        keepdims=True)
            # c H = c - tau (c v) v^H
            return c - tau * _sum(c * v[..., None, :], axis=-1, keepdims=True) * conj(v)[
                ..., None, :]
        return [lax.fori_loop(0, k, step, c)]
    return run


def _ormqr_lowering(ctx, avals_in, avals_out, a, taus, c, left, transpose):
    avals = [v.update(weak_type=False) for v in avals_in]
    if not (_prims.uses_lapack(ctx, avals[0]) and _prims.uses_lapack(ctx, avals[2])
            and avals[1].shape[-1]):
        return lower_closed_body(ctx, trace_flat(_ormqr_loop(left, transpose), avals),
                                 [a, taus, c])[0]
    routine = _orthogonal(avals[0].dtype, "mqr")
    config = f"left = {_prims.mlir_bool(left)}, transpose = {_prims.mlir_bool(transpose)}"
    return _prims.lapack_call(ctx, routine, [a, taus, c], avals, [avals[2]], config,
                              aliased=((0, 2),))


ormqr_p = declare("ormqr", _ormqr_shape, _ormqr_impl, _ormqr_lowering)
batching_rules[ormqr_p] = _prims.batch_leading(ormqr_p)


# --- hessenberg -------------------------------------------------------------------------

def _hessenberg_shape(a):
    batch = _prims.check_operands("hessenberg", [a], [2])
    n = a.shape[-1]
    if a.shape[-2] != n:
        raise ValueError(f"Argument to Hessenberg reduction must have shape [..., n, n], got "
                         f"shape {a.shape}")
    if n == 0:
        raise ValueError(f"hessenberg requires a non-empty matrix (n >= 1), got shape "
                         f"{a.shape}")
    return [ShapedArray(a.shape, a.dtype), ShapedArray((*batch, n - 1), a.dtype)]


def _hessenberg_impl(a):
    a = np.asarray(a)
    gehrd = _routine("gehrd", a.dtype)
    gehrd_lwork = _routine("gehrd_lwork", a.dtype)
    *batch, n, _ = a.shape
    h, taus = a.copy(), np.zeros((*batch, n - 1), a.dtype)
    lwork = _workspace(gehrd_lwork(n, lo=0, hi=n - 1)[0])
    for i in np.ndindex(*batch):
        h[i], taus[i], info = gehrd(a[i], lo=0, hi=n - 1, lwork=lwork)
        if info:
            h[i], taus[i] = np.nan, np.nan
    return [h, taus]


def _hessenberg_on_host(a):
    """Off the CPU (and for dtypes LAPACK has no routine for, in float32): SciPy's gehrd
    through a host callback (jax lowers hessenberg on the CPU only)."""
    dtype = a.dtype if a.dtype in _prims.LAPACK_PREFIX else np.dtype(np.float32)
    shapes = tuple(ShapeDtypeStruct(v.shape, dtype)
                   for v in _hessenberg_shape(ShapedArray(a.shape, dtype)))
    h, taus = pure_callback(_hessenberg_impl, shapes, a.astype(dtype), vmap_method="expand_dims")
    return [h.astype(a.dtype), taus.astype(a.dtype)]


def _nan_unless_ok(info, *results):
    """jax's results from a LAPACK call: NaN in every matrix whose info is not 0."""
    ok = info == 0
    return [where(ok.reshape(ok.shape + (1,) * (r.ndim - ok.ndim)), r, np.nan).astype(r.dtype)
            for r in results]


def _hessenberg_lowering(ctx, avals_in, avals_out, a):
    aval = avals_in[0].update(weak_type=False)
    if not _prims.uses_lapack(ctx, aval):
        return lower_closed_body(ctx, trace_flat(_hessenberg_on_host, [aval]), [a])
    n = aval.shape[-1]
    raw_avals = [*_hessenberg_shape(aval), ShapedArray(aval.shape[:-2], _I32)]
    raw = _prims.lapack_call(ctx, "gehrd", [a], [aval], raw_avals,
                             f"high = {n} : i32, low = 1 : i32")
    return lower_closed_body(
        ctx, trace_flat(lambda h, taus, info: _nan_unless_ok(info, h, taus), raw_avals), raw)


hessenberg_p = declare("hessenberg", _hessenberg_shape, _hessenberg_impl, _hessenberg_lowering,
                       multiple_results=True)
batching_rules[hessenberg_p] = _prims.batch_leading(hessenberg_p)


# --- tridiagonal ------------------------------------------------------------------------

def _tridiagonal_shape(a, lower):
    batch = _prims.check_operands("tridiagonal", [a], [2])
    n = a.shape[-1]
    if a.shape[-2] != n or n == 0:
        raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape "
                         f"{a.shape[-2:]}.")
    real = dtypes.real_dtype(a.dtype)
    return [ShapedArray(a.shape, a.dtype), ShapedArray((*batch, n), real),
            ShapedArray((*batch, n - 1), real), ShapedArray((*batch, n - 1), a.dtype)]


def _tridiagonal_impl(a, lower):
    a = np.asarray(a)
    name = "hetrd" if dtypes.is_complex(a.dtype) else "sytrd"
    sytrd, sytrd_lwork = _routine(name, a.dtype), _routine(name + "_lwork", a.dtype)
    packed, d, e, taus = (np.zeros(v.shape, v.dtype)
                          for v in _tridiagonal_shape(ShapedArray(a.shape, a.dtype), lower))
    n = a.shape[-1]
    lwork = _workspace(sytrd_lwork(n, lower=int(lower))[0])
    for i in np.ndindex(*a.shape[:-2]):
        packed[i], d[i], e[i], taus[i], info = sytrd(a[i], lower=int(lower), lwork=lwork)
        if info:
            packed[i], d[i], e[i], taus[i] = np.nan, np.nan, np.nan, np.nan
    return [packed, d, e, taus]


def _tridiagonal_on_host(lower):
    """Off the CPU (and for dtypes LAPACK has no routine for, in float32): SciPy's sytrd /
    hetrd through a host callback (jax lowers tridiagonal on the CPU and GPUs only)."""
    def run(a):
        dtype = a.dtype if a.dtype in _prims.LAPACK_PREFIX else np.dtype(np.float32)
        avals = _tridiagonal_shape(ShapedArray(a.shape, dtype), lower)
        outs = pure_callback(lambda x: _tridiagonal_impl(x, lower),
                             tuple(ShapeDtypeStruct(v.shape, v.dtype) for v in avals),
                             a.astype(dtype), vmap_method="expand_dims")
        wanted = _tridiagonal_shape(ShapedArray(a.shape, a.dtype), lower)
        return [out.astype(v.dtype) for out, v in zip(outs, wanted, strict=True)]
    return run


def _tridiagonal_lowering(ctx, avals_in, avals_out, a, lower):
    aval = avals_in[0].update(weak_type=False)
    if not _prims.uses_lapack(ctx, aval):
        return lower_closed_body(ctx, trace_flat(_tridiagonal_on_host(lower), [aval]), [a])
    raw_avals = [*_tridiagonal_shape(aval, lower), ShapedArray(aval.shape[:-2], _I32)]
    routine = "hetrd" if dtypes.is_complex(aval.dtype) else "sytrd"
    uplo = _prims.lapack_char("L" if lower else "U")
    raw = _prims.lapack_call(ctx, routine, [a], [aval], raw_avals, f"uplo = {uplo}")
    return lower_closed_body(
        ctx, trace_flat(lambda *outs: _nan_unless_ok(outs[-1], *outs[:-1]), raw_avals), raw)


tridiagonal_p = declare("tridiagonal", _tridiagonal_shape, _tridiagonal_impl,
                        _tridiagonal_lowering, multiple_results=True)
batching_rules[tridiagonal_p] = _prims.batch_leading(tridiagonal_p)
