"""Linear-algebra primitives: cholesky and triangular_solve, for real and complex dtypes.
Both act on the last two axes; leading axes are batch axes.  On the CPU they are LAPACK's
potrf and BLAS's trsm, as jax runs them: compiled, jaxlib's custom calls into SciPy's
LAPACK; eagerly, SciPy's routines themselves (the same code, so the same bits).  Elsewhere
XLA expands stablehlo.cholesky and stablehlo.triangular_solve.  The helpers for LAPACK's
custom calls (lapack_call) serve the lu primitive too (funcgraph/numpy/_lu.py)."""
import numpy as np

from funcgraph import core, dtypes
from funcgraph.array import Array
from funcgraph.core import ShapedArray
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.ad_util import Zero, is_zero
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.transpose import is_undefined, transpose_rules
from funcgraph.primitives.base import broadcast_in_dim_p, transpose_p
from funcgraph.primitives.batching_helpers import batch_at
from funcgraph.primitives.contractions import dot_general_p
from funcgraph.primitives.elementwise import add_p, conj_p, mul_p, neg_p
from funcgraph.primitives.helpers import INEXACT, check_dtype, check_same_dtypes, declare
from funcgraph.lowering import i64_array
from funcgraph.primitives.precision import Precision
from funcgraph.util import scipy_linalg


# --- LAPACK on the CPU -----------------------------------------------------------------

LAPACK_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
                 np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}


def uses_lapack(ctx, aval):
    """Whether a matrix of type aval is factored by LAPACK in this module: on the CPU, for
    the dtypes LAPACK has routines for, and matrices with elements."""
    return (ctx.module.platforms == ("cpu",) and aval.dtype in LAPACK_PREFIX
            and 0 not in aval.shape[-2:])


def _layout(order):
    return f"dense<[{', '.join(map(str, order))}]> : tensor<{len(order)}xindex>"


def lapack_call(ctx, routine, operands, avals_in, avals_out, config="", aliased=((0, 0),),
                batch=None):
    """jaxlib's custom call `lapack_<s|d|c|z><routine>_ffi`: matrices (operands and
    results with batch + 2 axes; batch defaults to the first operand's leading axes)
    column-major with the batch axes outermost, the others (pivots, taus, info, a
    tridiagonal's diagonals) row-major; config: its attributes (`uplo = 76 : ui8`);
    aliased: the (result, operand) pairs that share a buffer."""
    batch = avals_in[0].ndim - 2 if batch is None else batch

    def layout(aval):
        nd = aval.ndim
        if nd == batch + 2:
            return _layout((nd - 2, nd - 1) + tuple(range(nd - 3, -1, -1)))
        return _layout(range(nd - 1, -1, -1))
    attrs = {
        "call_target_name": f'"lapack_{LAPACK_PREFIX[avals_in[0].dtype]}{routine}_ffi"',
        "api_version": "4 : i32", "backend_config": f"{{{config}}}",
        "operand_layouts": f"[{', '.join(layout(a) for a in avals_in)}]",
        "result_layouts": f"[{', '.join(layout(a) for a in avals_out)}]",
        "sdy.sharding_rule": _batch_sharding_rule(batch, avals_in, avals_out)}
    if aliased:
        attrs["output_operand_aliases"] = "[" + ", ".join(
            f"#stablehlo.output_operand_alias<output_tuple_indices = "
            f"[{'' if len(avals_out) == 1 else result}], operand_index = {operand}, "
            f"operand_tuple_indices = []>" for result, operand in aliased) + "]"
    if len(avals_out) == 1:
        return ctx.op("stablehlo.custom_call", operands, avals_in, avals_out[0], attrs)
    return ctx.op("stablehlo.custom_call", operands, avals_in, list(avals_out), attrs)


def _factor(index):
    """Shardy's name of factor `index`: i, j, ..., z, then z_1, z_2, ..."""
    return chr(ord("i") + index) if index < 18 else f"z_{index - 17}"


def _batch_sharding_rule(batch, avals_in, avals_out):
    """Shardy's rule for a call that works matrix by matrix: the `batch` leading axes are
    one factor each on every operand and result (so a program sharded over them stays so),
    the other axes factors of their own."""
    sizes = [avals_in[0].shape[axis] for axis in range(batch)]

    def factors(aval):
        names = []
        for axis, size in enumerate(aval.shape):
            if axis < batch:
                names.append(_factor(axis))
            else:
                names.append(_factor(len(sizes)))
                sizes.append(size)
        return f"[{', '.join(names)}]"
    ins = ", ".join(factors(a) for a in avals_in)
    outs = ", ".join(factors(a) for a in avals_out)
    listed = ", ".join(f"{_factor(i)}={size}" for i, size in enumerate(sizes))
    return f"#sdy.op_sharding_rule<({ins})->({outs}) {{{listed}}}, custom>"


def lapack_char(letter):
    """A LAPACK option letter as the custom calls' attribute: its code, a ui8."""
    return f"{ord(letter)} : ui8"


def check_operands(name, avals, ranks):
    """jax's checks on a linear-algebra primitive's operands: each of at least its rank
    (its core axes) and of one float or complex dtype, all with the same leading (batch)
    axes, which are returned."""
    for i, (aval, rank) in enumerate(zip(avals, ranks, strict=True)):
        if aval.ndim < rank:
            raise TypeError(f"Input {i} to {name} must have rank at least {rank}, but got "
                            f"shape={aval.shape}")
        check_dtype(name, aval, INEXACT)
    check_same_dtypes(name, avals)
    batches = {a.shape[:a.ndim - rank] for a, rank in zip(avals, ranks, strict=True)}
    if len(batches) > 1:
        shapes = ", ".join(str(a.shape) for a in avals)
        raise ValueError(f"{name} requires its operands to have the same batch (leading) "
                         f"axes, got shapes {shapes}")
    return avals[0].shape[:avals[0].ndim - ranks[0]]


def batch_leading(prim):
    """The batching rule of a primitive that works matrix by matrix over leading batch
    axes: every operand gets the batch axis first, and so do the results."""
    def rule(axis_data, args, dims, **params):
        args = [batch_at(x, d, axis_data.size, 0) for x, d in zip(args, dims, strict=True)]
        out = prim.bind(*args, **params)
        return out, ([0] * len(out) if prim.multiple_results else 0)
    return rule


def _check_square(name, aval, arg="operand"):
    if aval.ndim < 2 or aval.shape[-1] != aval.shape[-2]:
        raise TypeError(f"{name} requires {arg} to be a (batch of) square matrices with shape "
                        f"(..., n, n), got {aval.str_short()}")


def _tri_mask(n, lower, unit_diagonal=False):
    k = -1 if unit_diagonal else 0
    return np.tril(np.ones((n, n), bool), k) if lower else np.triu(np.ones((n, n), bool), -k)


def _mask_matrix(x, mask):
    """x (..., n, n) times a constant 0/1 mask on its last two axes (linear in x)."""
    aval = core.get_aval(x)
    m = mask.astype(aval.dtype)
    m = Array(m, ShapedArray(m.shape, aval.dtype))
    nd = aval.ndim
    m = broadcast_in_dim_p.bind(m, shape=aval.shape, broadcast_dimensions=(nd - 2, nd - 1))
    return mul_p.bind(x, m)


def _batch_dims(nd):
    return tuple(range(nd - 2))


def _matmul(a, b):
    """a @ b over the last two axes, with equal leading batch axes, in full precision (as
    jax's derivatives of cholesky and triangular_solve: a GPU's default TF32 products
    would cost them three digits)."""
    nd = core.get_aval(a).ndim
    bd = _batch_dims(nd)
    return dot_general_p.bind(a, b, dimension_numbers=(((nd - 1,), (nd - 2,)), (bd, bd)),
                              precision=(Precision.HIGHEST, Precision.HIGHEST),
                              preferred_element_type=None)


def _mT(x):
    nd = core.get_aval(x).ndim
    perm = tuple(range(nd - 2)) + (nd - 1, nd - 2)
    return transpose_p.bind(x, permutation=perm)


# --- cholesky ----------------------------------------------------------------------

def _cholesky_shape(x):
    check_dtype("cholesky", x, INEXACT)
    _check_square("cholesky", x)
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _matrices(x):
    """x (..., m, n) as a (count, m, n) array."""
    return x.reshape((int(np.prod(x.shape[:-2])),) + x.shape[-2:])


def _cholesky_impl(x):
    """Lower Cholesky factor by LAPACK's potrf (SciPy's); where a matrix is not positive
    definite, NaN in its lower triangle (as jax's)."""
    x = np.asarray(x)
    if x.dtype not in LAPACK_PREFIX:  # float16, bfloat16: in float64
        return _cholesky_impl(x.astype(np.float64)).astype(x.dtype)
    flat = _matrices(x)
    out = np.empty_like(flat)
    if flat.size:
        potrf = scipy_linalg().get_lapack_funcs("potrf", dtype=x.dtype)
        for i, m in enumerate(flat):
            factor, info = potrf(m, lower=True, clean=True)
            out[i] = factor if info == 0 else np.tril(np.full_like(factor, np.nan))
    return out.reshape(x.shape)


def _select_lower(ctx, aval, x, other):
    """x's lower triangle (with the diagonal), `other`'s values above it."""
    n = aval.shape[-1]
    mask_aval = ShapedArray((n, n), np.dtype(bool))
    mask = ctx.constant(_tri_mask(n, True), mask_aval)
    pred_aval = ShapedArray(aval.shape, np.dtype(bool))
    nd = aval.ndim
    mask = ctx.op("stablehlo.broadcast_in_dim", [mask], [mask_aval], pred_aval,
                  {"broadcast_dimensions": f"array<i64: {nd - 2}, {nd - 1}>"})
    return ctx.op("stablehlo.select", [mask, x, other], [pred_aval, aval, aval], aval)


def _fill(ctx, aval, value):
    scalar = ShapedArray((), aval.dtype)
    c = ctx.constant(np.array(value, aval.dtype), scalar)
    return ctx.op("stablehlo.broadcast_in_dim", [c], [scalar], aval,
                  {"broadcast_dimensions": "array<i64>"})


def _potrf_lowering(ctx, aval, x):
    """LAPACK's potrf; a matrix whose info is not 0 (not positive definite) becomes NaN."""
    info_aval = ShapedArray(aval.shape[:-2], np.dtype(np.int32))
    factor, info = lapack_call(ctx, "potrf", [x], [aval], [aval, info_aval],
                               config=f"uplo = {lapack_char('L')}")
    ok_aval = ShapedArray(info_aval.shape, np.dtype(bool))
    zero = _fill(ctx, info_aval, 0)
    ok = ctx.op("stablehlo.compare", [info, zero], [info_aval, info_aval], ok_aval,
                {"comparison_direction": "#stablehlo<comparison_direction EQ>",
                 "compare_type": "#stablehlo<comparison_type SIGNED>"})
    pred_aval = ShapedArray(aval.shape, np.dtype(bool))
    nd = aval.ndim
    ok = ctx.op("stablehlo.broadcast_in_dim", [ok], [ok_aval], pred_aval,
                {"broadcast_dimensions": i64_array(range(nd - 2))})
    factor = ctx.op("stablehlo.select", [ok, factor, _fill(ctx, aval, np.nan)],
                    [pred_aval, aval, aval], aval)
    return _select_lower(ctx, aval, factor, _fill(ctx, aval, 0))


def _cholesky_lowering(ctx, avals_in, avals_out, x):
    aval = avals_in[0]
    if uses_lapack(ctx, aval):
        return _potrf_lowering(ctx, aval, x)
    raw = ctx.op("stablehlo.cholesky", [x], [aval], aval, {"lower": "true"})
    # The strict upper triangle of stablehlo.cholesky's result is unspecified: zero it.
    return _select_lower(ctx, aval, raw, _fill(ctx, aval, 0))


cholesky_p = declare("cholesky", _cholesky_shape, _cholesky_impl, _cholesky_lowering)


def _cholesky_jvp(primals, tangents):
    """A = L L^H, so L^-1 dA L^-H = L^-1 dL + (L^-1 dL)^H with L^-1 dL lower triangular:
    dL = L phi(L^-1 dA L^-H), phi taking the lower triangle with the diagonal halved.
    dA is taken as given (symmetrize it first; funcgraph.numpy.linalg.cholesky does)."""
    (x,), (dx,) = primals, tangents
    L = cholesky_p.bind(x)
    n = core.get_aval(x).shape[-1]
    tmp = triangular_solve_p.bind(L, dx, left_side=True, lower=True, transpose_a=False,
                                  conjugate_a=False, unit_diagonal=False)
    tmp = triangular_solve_p.bind(L, tmp, left_side=False, lower=True, transpose_a=True,
                                  conjugate_a=True, unit_diagonal=False)
    phi = np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n)
    return L, _matmul(L, _mask_matrix(tmp, phi))


jvp_rules[cholesky_p] = _cholesky_jvp


batching_rules[cholesky_p] = batch_leading(cholesky_p)


# --- triangular_solve --------------------------------------------------------------

def _triangular_solve_shape(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    name = "triangular_solve"
    check_dtype(name, a, INEXACT, "a")
    if a.dtype != b.dtype:
        raise TypeError(f"{name} requires a and b of one dtype, got {a.str_short()} and "
                        f"{b.str_short()}")
    _check_square(name, a, "a")
    if b.ndim != a.ndim:
        raise TypeError(f"{name} requires a and b of the same rank (batch axes first, "
                        f"then the matrix axes), got {a.str_short()} and {b.str_short()}")
    if a.shape[:-2] != b.shape[:-2]:
        raise TypeError(f"{name} requires equal batch dimensions, got {a.str_short()} and "
                        f"{b.str_short()}; broadcast them first")
    n = a.shape[-1]
    k = b.shape[-2] if left_side else b.shape[-1]
    if k != n:
        side = "rows" if left_side else "columns"
        raise TypeError(f"{name} with left_side={left_side} needs b with {n} {side} to match "
                        f"a {a.str_short()}, got b {b.str_short()}")
    return ShapedArray(b.shape, b.dtype, a.weak_type and b.weak_type)


def _trsm_impl(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """BLAS's trsm (SciPy's), matrix by matrix."""
    if conjugate_a and not transpose_a:
        a = np.conj(a)
    trans = (2 if conjugate_a else 1) if transpose_a else 0
    trsm = scipy_linalg().blas.get_blas_funcs("trsm", dtype=a.dtype)
    flat_a, flat_b = _matrices(a), _matrices(b)
    out = np.empty_like(flat_b)
    for i, (m, rhs) in enumerate(zip(flat_a, flat_b, strict=True)):
        out[i] = trsm(1.0, m, rhs, side=0 if left_side else 1, lower=int(lower),
                      trans_a=trans, diag=int(unit_diagonal))
    return out.reshape(b.shape)


def _triangular_solve_impl(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype in LAPACK_PREFIX and a.size and b.size:
        return _trsm_impl(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal)
    n = a.shape[-1]
    wide = np.complex128 if dtypes.is_complex(a.dtype) else np.float64
    t = np.where(_tri_mask(n, lower, unit_diagonal), a, 0).astype(wide)
    if unit_diagonal:
        t = t + np.eye(n)
    if transpose_a:
        t = np.swapaxes(t, -1, -2)
    if conjugate_a:
        t = np.conj(t)
    b64 = np.asarray(b, wide)
    if left_side:
        x = np.linalg.solve(t, b64)
    else:  # x t = b  <=>  t^T x^T = b^T
        x = np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b64, -1, -2)), -1, -2)
    return x.astype(b.dtype)


def mlir_bool(v):
    return "true" if v else "false"


def _conj_lowering(ctx, aval, x):
    part = ShapedArray(aval.shape, np.dtype(np.float32 if aval.dtype == np.complex64
                                            else np.float64))
    re = ctx.op("stablehlo.real", [x], [aval], part)
    im = ctx.op("stablehlo.imag", [x], [aval], part)
    neg_im = ctx.op("stablehlo.negate", [im], [part], part)
    return ctx.op("stablehlo.complex", [re, neg_im], [part, part], aval)


def _triangular_solve_lowering(ctx, avals_in, avals_out, a, b, left_side, lower, transpose_a,
                               conjugate_a, unit_diagonal):
    conjugate_a = conjugate_a and dtypes.is_complex(avals_in[0].dtype)
    if conjugate_a and not transpose_a:
        a = _conj_lowering(ctx, avals_in[0], a)
    if uses_lapack(ctx, avals_in[0]) and 0 not in avals_in[1].shape[-2:]:
        trans = ("C" if conjugate_a else "T") if transpose_a else "N"
        config = (f"diag = {lapack_char('U' if unit_diagonal else 'N')}, "
                  f"side = {lapack_char('L' if left_side else 'R')}, "
                  f"trans_x = {lapack_char(trans)}, uplo = {lapack_char('L' if lower else 'U')}")
        return lapack_call(ctx, "trsm", [a, b], avals_in, avals_out, config,
                           aliased=((0, 1),))
    transpose = ("ADJOINT" if conjugate_a else "TRANSPOSE") if transpose_a else "NO_TRANSPOSE"
    attrs = {"left_side": mlir_bool(left_side), "lower": mlir_bool(lower),
             "unit_diagonal": mlir_bool(unit_diagonal),
             "transpose_a": f"#stablehlo<transpose {transpose}>"}
    return ctx.op("stablehlo.triangular_solve", [a, b], avals_in, avals_out[0], attrs)


triangular_solve_p = declare("triangular_solve", _triangular_solve_shape,
                             _triangular_solve_impl, _triangular_solve_lowering)


def _triangular_solve_jvp(primals, tangents, left_side, lower, transpose_a, conjugate_a,
                          unit_diagonal):
    """Left: op(a) x = b, so op(a) dx = db - op(da) x.  Right: x op(a) = b, so
    dx op(a) = db - x op(da).  Only the triangle of a the solve reads has a tangent."""
    a, b = primals
    da, db = tangents
    params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                  conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    x = triangular_solve_p.bind(a, b, **params)
    rhs = None if is_zero(db) else db
    if not is_zero(da):
        n = core.get_aval(a).shape[-1]
        op_da = _mask_matrix(da, _tri_mask(n, lower, unit_diagonal))
        if transpose_a:
            op_da = _mT(op_da)
        if conjugate_a and dtypes.is_complex(core.get_aval(a).dtype):
            op_da = conj_p.bind(op_da)
        term = neg_p.bind(_matmul(op_da, x) if left_side else _matmul(x, op_da))
        rhs = term if rhs is None else add_p.bind(rhs, term)
    return x, triangular_solve_p.bind(a, rhs, **params)


def _triangular_solve_transpose(ct, a, b, left_side, lower, transpose_a, conjugate_a,
                                unit_diagonal):
    if is_undefined(a):
        raise ValueError("triangular_solve is linear in b only; its transpose needs a known a")
    if is_zero(ct):
        return [None, Zero(b.aval)]
    ct_b = triangular_solve_p.bind(a, ct, left_side=left_side, lower=lower,
                                   transpose_a=not transpose_a, conjugate_a=conjugate_a,
                                   unit_diagonal=unit_diagonal)
    return [None, ct_b]


jvp_rules[triangular_solve_p] = _triangular_solve_jvp
transpose_rules[triangular_solve_p] = _triangular_solve_transpose


def _triangular_solve_batch(axis_data, args, dims, **params):
    a = batch_at(args[0], dims[0], axis_data.size, 0)
    b = batch_at(args[1], dims[1], axis_data.size, 0)
    return triangular_solve_p.bind(a, b, **params), 0


batching_rules[triangular_solve_p] = _triangular_solve_batch


def cholesky(x):
    """Lower Cholesky factor of x (..., n, n) (lax.linalg.cholesky; x is assumed Hermitian)."""
    return cholesky_p.bind(x)


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
    """JAX's lax.linalg.triangular_solve: left_side solves op(a) x = b, else x op(a) = b."""
    return triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                   transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
                                   unit_diagonal=bool(unit_diagonal))
