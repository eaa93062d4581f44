"""The tridiagonal_solve primitive (jax's lax.linalg.tridiagonal_solve_p): x with T x = b
for the tridiagonal T of sub-diagonal dl (dl[0] unused), diagonal d and super-diagonal du
(du[-1] unused), each (..., m), and b (..., m, n); leading axes are batch axes.

On the CPU it is LAPACK's gtsv (Gaussian elimination with partial pivoting), as jax runs
it: compiled, jaxlib's custom call; eagerly, SciPy's gtsv (the same routine, so the same
bits); a singular T gives NaN.  Elsewhere it is the Thomas algorithm (no pivoting) in two
scans.  It is linear in b: the JVP solves again, the transpose solves with T^T."""
import numpy as np

from funcgraph import core, lax
from funcgraph.core import ShapedArray
from funcgraph.interpreters.ad_util import Zero, is_zero
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import NoHostImpl
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.staging import trace_flat
from funcgraph.interpreters.transpose import is_undefined, transpose_rules
from funcgraph.lowering import lower_closed_body
from funcgraph.numpy._creation import zeros, zeros_like
from funcgraph.numpy._joining import concatenate
from funcgraph.numpy._shapes import moveaxis
from funcgraph.numpy._ufuncs import where_values as where
from funcgraph.primitives import linalg as _prims
from funcgraph.primitives.batching_helpers import batch_at
from funcgraph.primitives.helpers import declare
from funcgraph.util import scipy_linalg

_I32 = np.dtype(np.int32)
_NAME = "tridiagonal_solve"


def _shape(dl, d, du, b, perturb_singular):
    _prims.check_operands(_NAME, [dl, d, du, b], [1, 1, 1, 2])
    if dl.shape != d.shape or du.shape != d.shape:
        raise TypeError("tridiagonal_solve requires that all diagonal arguments have the "
                        "same shape.")
    if b.shape[:-1] != d.shape:
        raise TypeError("tridiagonal_solve requires that the leading ndim-1 dimensions of b "
                        "equal the dimensions of the diagonal arguments.")
    if perturb_singular:
        raise NotImplementedError("lax.linalg.tridiagonal_solve: perturb_singular=True is "
                                  "not supported by funcgraph")
    return ShapedArray(b.shape, b.dtype)


def _impl(dl, d, du, b, perturb_singular):
    """SciPy's gtsv, system by system; NaN where T is singular."""
    dl, d, du, b = (np.asarray(v) for v in (dl, d, du, b))
    if b.dtype not in _prims.LAPACK_PREFIX:
        raise NoHostImpl
    x = b.copy()
    if b.size:
        gtsv = scipy_linalg().get_lapack_funcs("gtsv", dtype=b.dtype)
        for i in np.ndindex(*b.shape[:-2]):
            x[i] = _gtsv(gtsv, dl[i], d[i], du[i], b[i])
    return x


def _gtsv(gtsv, dl, d, du, b):
    """One system by SciPy's gtsv.  SciPy's wrapper refuses one row (its dl and du would
    be empty): that system gets a second, decoupled row (d = 1, b = 0) so LAPACK still
    divides (Fortran's complex division, not NumPy's, which rounds otherwise; only an
    infinite b differs: NaN where jax gives inf)."""
    m = d.shape[0]
    if m == 1:
        zero = np.zeros(2, d.dtype)
        x = _gtsv(gtsv, zero, np.concatenate([d, np.ones(1, d.dtype)]), zero,
                  np.concatenate([b, np.zeros_like(b)]))
        return x[:1]
    *_, x, info = gtsv(dl[1:], d, du[:-1], b)
    return np.full_like(b, np.nan) if info else x


def _thomas(dl, d, du, b):
    """The portable solve: elimination down the rows (no pivoting), then substitution
    back up, each a scan over the rows."""
    rows = [moveaxis(v, -1, 0) for v in (dl, d, du)]
    rhs = moveaxis(b, -2, 0)

    def down(carry, row):
        c_prev, y_prev = carry
        lower, diag, upper, r = row
        denom = diag - lower * c_prev
        c = upper / denom
        y = (r - lower[..., None] * y_prev) / denom[..., None]
        return (c, y), (c, y)

    zero_c = zeros(rows[1].shape[1:], rows[1].dtype)
    zero_y = zeros(rhs.shape[1:], rhs.dtype)
    _, (c, y) = lax.scan(down, (zero_c, zero_y), (*rows, rhs))

    def up(x_next, row):
        c_i, y_i = row
        x = y_i - c_i[..., None] * x_next
        return x, x

    _, x = lax.scan(up, zero_y, (c, y), reverse=True)
    return [moveaxis(x, 0, -2)]


def _lowering(ctx, avals_in, avals_out, dl, d, du, b, perturb_singular):
    avals = [v.update(weak_type=False) for v in avals_in]
    b_aval = avals[3]
    if not _prims.uses_lapack(ctx, b_aval):
        return lower_closed_body(ctx, trace_flat(_thomas, avals), [dl, d, du, b])[0]
    batch = b_aval.shape[:-2]
    raw_avals = avals + [ShapedArray(batch, _I32)]
    raw = _prims.lapack_call(ctx, "gtsv", [dl, d, du, b], avals, raw_avals,
                             aliased=((0, 0), (1, 1), (2, 2), (3, 3)), batch=len(batch))

    def nan_unless_solved(x, info):
        return [where((info == 0)[..., None, None], x, np.nan).astype(x.dtype)]
    return lower_closed_body(ctx, trace_flat(nan_unless_solved, raw_avals[3:]), raw[3:])[0]


tridiagonal_solve_p = declare(_NAME, _shape, _impl, _lowering)


def tridiagonal_solve(dl, d, du, b, perturb_singular=False):
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=perturb_singular)


def _product(dl, d, du, x):
    """T x for the tridiagonal T."""
    y = d[..., None] * x
    below = dl[..., 1:, None] * x[..., :-1, :]
    above = du[..., :-1, None] * x[..., 1:, :]
    zero_row = zeros_like(x[..., :1, :])
    return (y + concatenate([zero_row, below], axis=-2)
            + concatenate([above, zero_row], axis=-2))


def _jvp(primals, tangents, perturb_singular):
    """T x = b gives T dx = db - dT x."""
    dl, d, du, b = primals
    x = tridiagonal_solve(dl, d, du, b)
    *diag_dots, db = tangents
    rhs = None if is_zero(db) else db
    if not all(is_zero(t) for t in diag_dots):
        dl_dot, d_dot, du_dot = (zeros_like(p) if is_zero(t) else t
                                 for p, t in zip((dl, d, du), diag_dots, strict=True))
        term = -_product(dl_dot, d_dot, du_dot, x)
        rhs = term if rhs is None else rhs + term
    if rhs is None:
        return x, Zero(core.get_aval(x))
    return x, tridiagonal_solve(dl, d, du, rhs)


def _transpose(ct, dl, d, du, b, perturb_singular):
    """Linear in b alone: b's cotangent solves with T^T, whose sub-diagonal is du shifted
    down a row and whose super-diagonal is dl shifted up."""
    if any(is_undefined(v) for v in (dl, d, du)) or not is_undefined(b):
        raise NotImplementedError("tridiagonal_solve is linear in b alone")
    if is_zero(ct):
        return [None, None, None, Zero(b.aval)]
    zero = zeros_like(du[..., :1])
    dl_t = concatenate([zero, du[..., :-1]], axis=-1)
    du_t = concatenate([dl[..., 1:], zero], axis=-1)
    return [None, None, None, tridiagonal_solve(dl_t, d, du_t, ct)]


def _batch(axis_data, args, dims, perturb_singular):
    """With only b batched, the batch becomes more right-hand sides: one solve of
    (..., m, size * n); otherwise every operand gets the batch axis first."""
    dl, d, du, b = args
    if all(dim is None for dim in dims[:3]):
        b = moveaxis(b, dims[3], -2)                       # (..., m, size, n)
        columns = b.reshape(b.shape[:-2] + (b.shape[-2] * b.shape[-1],))
        x = tridiagonal_solve(dl, d, du, columns)
        return x.reshape(b.shape), b.ndim - 2
    args = [batch_at(v, dim, axis_data.size, 0) for v, dim in zip(args, dims, strict=True)]
    return tridiagonal_solve(*args), 0


jvp_rules[tridiagonal_solve_p] = _jvp
transpose_rules[tridiagonal_solve_p] = _transpose
batching_rules[tridiagonal_solve_p] = _batch
