"""Elementwise primitives: unary math, binary arithmetic, comparisons, logic,
shifts, select_n, clamp and the dtype conversions.

Each block holds the primitive's rules; most use the family helpers
`unary`/`binary`.  Differentiation and batching rules join these blocks in
their interpreters' registries (see funcgraph.interpreters)."""
import numpy as np

from funcgraph import dtypes
from funcgraph.core import ShapedArray
from funcgraph.primitives.helpers import (
    ANY, COMPLEX, FLOAT, INEXACT, INT, INTEGRAL, NUMBER, binary, broadcast_scalar_operands,
    check_dtype, check_same_dtypes, check_same_shapes, compare_type, declare, silence_numpy,
    unary)

quiet = silence_numpy


def _real_dtype(dtype):
    return {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}.get(dtype, dtype)


# --- unary: sign and rounding ---------------------------------------------------
neg_p = unary("neg", np.negative, "stablehlo.negate", NUMBER)
sign_p = unary("sign", np.sign, "stablehlo.sign", NUMBER)
floor_p = unary("floor", np.floor, "stablehlo.floor", (FLOAT,))
ceil_p = unary("ceil", np.ceil, "stablehlo.ceil", (FLOAT,))


def _round_impl(x, rounding_method=0):
    if rounding_method == 1:
        return np.round(x)
    trunc = np.trunc(x)
    return np.where(np.abs(x - trunc) >= 0.5, trunc + np.sign(x), trunc).astype(x.dtype)


def _round_lowering(ctx, avals_in, avals_out, x, rounding_method=0):
    name = "stablehlo.round_nearest_even" if rounding_method == 1 else "stablehlo.round_nearest_afz"
    return ctx.op(name, [x], avals_in, avals_out[0])


round_p = declare("round", lambda x, rounding_method=0: (check_dtype("round", x, (FLOAT,)), x)[1],
                  _round_impl, _round_lowering)

is_finite_p = unary("is_finite", np.isfinite, "stablehlo.is_finite", (FLOAT,),
                    out_dtype=lambda d: dtypes.bool_)

# --- unary: exponentials and logarithms ---------------------------------------------
exp_p = unary("exp", quiet(np.exp), "stablehlo.exponential", INEXACT)
log_p = unary("log", quiet(np.log), "stablehlo.log", INEXACT)
log1p_p = unary("log1p", quiet(np.log1p), "stablehlo.log_plus_one", INEXACT)
expm1_p = unary("expm1", quiet(np.expm1), "stablehlo.exponential_minus_one", INEXACT)
tanh_p = unary("tanh", np.tanh, "stablehlo.tanh", INEXACT)


def _exp2_lowering(ctx, avals_in, avals_out, x):
    ln2 = ctx.constant(np.log(2.0), avals_in[0].update(shape=()))
    ln2 = ctx.op("stablehlo.broadcast_in_dim", [ln2], [avals_in[0].update(shape=())],
                 avals_in[0], {"broadcast_dimensions": "array<i64>"})
    scaled = ctx.op("stablehlo.multiply", [x, ln2], avals_in * 2, avals_in[0])
    return ctx.op("stablehlo.exponential", [scaled], avals_in, avals_out[0])


exp2_p = unary("exp2", quiet(np.exp2), None, INEXACT, lowering=_exp2_lowering)


def _logistic_impl(x):
    with np.errstate(over="ignore"):
        return (1 / (1 + np.exp(-x))).astype(x.dtype)


logistic_p = unary("logistic", _logistic_impl, "stablehlo.logistic", INEXACT)

# --- unary: trigonometry ------------------------------------------------------------
sin_p = unary("sin", np.sin, "stablehlo.sine", INEXACT)
cos_p = unary("cos", np.cos, "stablehlo.cosine", INEXACT)
tan_p = unary("tan", quiet(np.tan), "stablehlo.tan", INEXACT)
asin_p = unary("asin", quiet(np.arcsin), "chlo.asin", INEXACT)
acos_p = unary("acos", quiet(np.arccos), "chlo.acos", INEXACT)
atan_p = unary("atan", np.arctan, "chlo.atan", INEXACT)
sinh_p = unary("sinh", quiet(np.sinh), "chlo.sinh", INEXACT)
cosh_p = unary("cosh", quiet(np.cosh), "chlo.cosh", INEXACT)
asinh_p = unary("asinh", np.arcsinh, "chlo.asinh", INEXACT)
acosh_p = unary("acosh", quiet(np.arccosh), "chlo.acosh", INEXACT)
atanh_p = unary("atanh", quiet(np.arctanh), "chlo.atanh", INEXACT)

# --- unary: roots and absolute value --------------------------------------------
sqrt_p = unary("sqrt", quiet(np.sqrt), "stablehlo.sqrt", INEXACT)
rsqrt_p = unary("rsqrt", quiet(lambda x: (1 / np.sqrt(x)).astype(x.dtype)), "stablehlo.rsqrt",
                INEXACT)
cbrt_p = unary("cbrt", np.cbrt, "stablehlo.cbrt", (FLOAT,))
abs_p = unary("abs", np.abs, "stablehlo.abs", NUMBER, out_dtype=_real_dtype)

# --- unary: special functions (no NumPy version: eager calls run compiled) ----------
erf_p = unary("erf", None, "chlo.erf", (FLOAT,))
erf_inv_p = unary("erf_inv", None, "chlo.erf_inv", (FLOAT,))
lgamma_p = unary("lgamma", None, "chlo.lgamma", (FLOAT,))
digamma_p = unary("digamma", None, "chlo.digamma", (FLOAT,))

# --- unary: complex parts -----------------------------------------------------------
real_p = unary("real", np.real, "stablehlo.real", (COMPLEX,), out_dtype=_real_dtype)
imag_p = unary("imag", np.imag, "stablehlo.imag", (COMPLEX,), out_dtype=_real_dtype)
conj_p = unary("conj", np.conj, None, (COMPLEX,),
               lowering=lambda ctx, ai, ao, x: _conj_lowering(ctx, ai[0], x))


def _conj_lowering(ctx, aval, x):
    part = aval.update(dtype=_real_dtype(aval.dtype))
    re = ctx.op("stablehlo.real", [x], [aval], part)
    im = ctx.op("stablehlo.imag", [x], [aval], part)
    neg_im = ctx.op("stablehlo.negate", [im], [part], part)
    return ctx.op("stablehlo.complex", [re, neg_im], [part, part], aval)


# --- unary: logic -------------------------------------------------------------
not_p = unary("not", np.invert, "stablehlo.not", INTEGRAL)


# --- integer_pow: x ** y for a static integer y --------------------------------------

def _integer_pow_shape(x, y):
    check_dtype("integer_pow", x, NUMBER)
    if not isinstance(y, int):
        raise TypeError(f"integer_pow needs a static Python int exponent, got {y!r}")
    if y < 0 and dtypes.is_int(x.dtype):
        raise ValueError(f"integer_pow of an integer array needs a non-negative exponent, got {y}")
    return x


def _integer_pow_impl(x, y):
    with np.errstate(all="ignore"):
        if y < 0:
            return (1 / np.power(x, -y)).astype(x.dtype)
        return np.power(x, y).astype(x.dtype)


def _integer_pow_lowering(ctx, avals_in, avals_out, x, y):
    """Square-and-multiply, as XLA's own expansion does."""
    aval = avals_in[0]
    acc, base, n = None, x, abs(y)
    while n:
        if n & 1:
            acc = base if acc is None else ctx.op("stablehlo.multiply", [acc, base], [aval] * 2, aval)
        n >>= 1
        if n:
            base = ctx.op("stablehlo.multiply", [base, base], [aval] * 2, aval)
    if acc is None:
        one = ctx.constant(np.ones((), aval.dtype), aval.update(shape=()))
        acc = ctx.op("stablehlo.broadcast_in_dim", [one], [aval.update(shape=())], aval,
                     {"broadcast_dimensions": "array<i64>"})
    if y < 0:
        one = ctx.constant(np.ones((), aval.dtype), aval.update(shape=()))
        one = ctx.op("stablehlo.broadcast_in_dim", [one], [aval.update(shape=())], aval,
                     {"broadcast_dimensions": "array<i64>"})
        acc = ctx.op("stablehlo.divide", [one, acc], [aval] * 2, aval)
    return acc


integer_pow_p = declare("integer_pow", _integer_pow_shape, _integer_pow_impl,
                        _integer_pow_lowering)


# --- binary arithmetic ------------------------------------------------------------------
add_p = binary("add", np.add, "stablehlo.add", NUMBER)
sub_p = binary("sub", np.subtract, "stablehlo.subtract", NUMBER)
mul_p = binary("mul", np.multiply, "stablehlo.multiply", NUMBER)


def _div_impl(x, y):
    with np.errstate(all="ignore"):
        if dtypes.is_int(x.dtype):
            # C semantics (round toward zero), as XLA; x / 0 gives -1 (all ones).
            safe_y = np.where(y == 0, 1, y)
            q = np.abs(x) // np.abs(safe_y)
            q = np.where((x < 0) != (safe_y < 0), -q, q) if x.dtype.kind == "i" else q
            return np.where(y == 0, np.array(-1).astype(x.dtype), q).astype(x.dtype)
        return np.divide(x, y)


def _rem_impl(x, y):
    with np.errstate(all="ignore"):
        if dtypes.is_int(x.dtype):
            safe_y = np.where(y == 0, 1, y)
            return np.where(y == 0, x, np.fmod(x, safe_y)).astype(x.dtype)
        return np.fmod(x, y)


div_p = binary("div", _div_impl, "stablehlo.divide", NUMBER)
rem_p = binary("rem", _rem_impl, "stablehlo.remainder", (INT, FLOAT))
max_p = binary("max", np.maximum, "stablehlo.maximum", ANY)
min_p = binary("min", np.minimum, "stablehlo.minimum", ANY)
pow_p = binary("pow", quiet(np.power), "stablehlo.power", INEXACT)
atan2_p = binary("atan2", np.arctan2, "stablehlo.atan2", (FLOAT,))
nextafter_p = binary("nextafter", np.nextafter, "chlo.next_after", (FLOAT,))


# --- comparisons ---------------------------------------------------------------------

def _comparison(name, np_fn, direction):
    def lower(ctx, avals_in, avals_out, x, y):
        attrs = {"comparison_direction": f"#stablehlo<comparison_direction {direction}>",
                 "compare_type": compare_type(avals_in[0].dtype)}
        avals_in, args = broadcast_scalar_operands(ctx, avals_in, [x, y], avals_out[0].shape)
        return ctx.op("stablehlo.compare", args, avals_in, avals_out[0], attrs)
    return binary(name, np_fn, None, ANY, out_dtype=dtypes.bool_, lowering=lower)


eq_p = _comparison("eq", np.equal, "EQ")
ne_p = _comparison("ne", np.not_equal, "NE")
lt_p = _comparison("lt", np.less, "LT")
le_p = _comparison("le", np.less_equal, "LE")
gt_p = _comparison("gt", np.greater, "GT")
ge_p = _comparison("ge", np.greater_equal, "GE")

# --- logic and bits ---------------------------------------------------------------------
and_p = binary("and", np.bitwise_and, "stablehlo.and", INTEGRAL)
or_p = binary("or", np.bitwise_or, "stablehlo.or", INTEGRAL)
xor_p = binary("xor", np.bitwise_xor, "stablehlo.xor", INTEGRAL)


def _shift_impl(np_fn, overflow):
    def impl(x, y):
        bits = x.dtype.itemsize * 8
        unsigned_y = y.astype(np.dtype(f"u{y.dtype.itemsize}"))
        in_range = unsigned_y < bits
        shifted = np_fn(x, np.where(in_range, y, 0).astype(x.dtype))
        return np.where(in_range, shifted, overflow(x)).astype(x.dtype)
    return impl


def _logical_right(x, y):
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    return np.right_shift(x.view(unsigned), y.astype(unsigned)).view(x.dtype)


shift_left_p = binary("shift_left", _shift_impl(np.left_shift, np.zeros_like),
                      "stablehlo.shift_left", (INT,))
shift_right_arithmetic_p = binary(
    "shift_right_arithmetic",
    _shift_impl(np.right_shift, lambda x: np.where(x < 0, -1, 0)),
    "stablehlo.shift_right_arithmetic", (INT,))
shift_right_logical_p = binary("shift_right_logical",
                               _shift_impl(_logical_right, np.zeros_like),
                               "stablehlo.shift_right_logical", (INT,))

population_count_p = unary("population_count",
                           lambda x: np.bitwise_count(x).astype(x.dtype),
                           "stablehlo.popcnt", (INT,))


# --- select_n: pick among cases by a boolean or integer predicate -----------------

def _select_n_shape(which, *cases):
    if not cases:
        raise TypeError("select_n needs at least one case")
    check_same_dtypes("select_n cases", cases)
    check_same_shapes("select_n cases", cases)
    if which.shape and which.shape != cases[0].shape:
        raise TypeError(f"select_n predicate shape {which.shape} must be () or the cases' "
                        f"shape {cases[0].shape}")
    if which.dtype == dtypes.bool_:
        if len(cases) > 2:
            raise TypeError("select_n with a boolean predicate takes at most two cases")
    elif which.dtype != dtypes.int32:
        raise TypeError(f"select_n predicate must be bool or int32, got {which.dtype.name}")
    return ShapedArray(cases[0].shape, cases[0].dtype, all(c.weak_type for c in cases))


def _select_n_impl(which, *cases):
    if len(cases) == 1:
        return cases[0]
    if which.dtype == np.bool_:
        return np.where(which, cases[1], cases[0])
    return np.choose(np.clip(which, 0, len(cases) - 1), cases)


def _select_n_lowering(ctx, avals_in, avals_out, which, *cases):
    """Binary tree of selects: case i is chosen where which == i."""
    pred_aval, out = avals_in[0], avals_out[0]
    if pred_aval.shape != out.shape:
        target = pred_aval.update(shape=out.shape)
        which = ctx.op("stablehlo.broadcast_in_dim", [which], [pred_aval], target,
                       {"broadcast_dimensions": "array<i64>"})
        pred_aval = target
    if len(cases) == 1:
        return cases[0]
    if pred_aval.dtype == dtypes.bool_:
        return ctx.op("stablehlo.select", [which, cases[1], cases[0]],
                      [pred_aval, out, out], out)
    return _select_tree(ctx, which, pred_aval, list(cases), 0, out)


def _select_tree(ctx, which, pred_aval, cases, offset, out):
    if len(cases) == 1:
        return cases[0]
    mid = len(cases) // 2
    low = _select_tree(ctx, which, pred_aval, cases[:mid], offset, out)
    high = _select_tree(ctx, which, pred_aval, cases[mid:], offset + mid, out)
    scalar = pred_aval.update(shape=())
    bound = ctx.constant(np.int32(offset + mid), scalar)
    bound = ctx.op("stablehlo.broadcast_in_dim", [bound], [scalar], pred_aval,
                   {"broadcast_dimensions": "array<i64>"})
    bool_aval = pred_aval.update(dtype=dtypes.bool_)
    is_low = ctx.op("stablehlo.compare", [which, bound], [pred_aval] * 2, bool_aval,
                    {"comparison_direction": "#stablehlo<comparison_direction LT>",
                     "compare_type": "#stablehlo<comparison_type SIGNED>"})
    return ctx.op("stablehlo.select", [is_low, low, high], [bool_aval, out, out], out)


select_n_p = declare("select_n", _select_n_shape, _select_n_impl, _select_n_lowering)


# --- clamp(lo, x, hi): lo and hi are scalars or x's shape ----------------------------

def _clamp_shape(lo, x, hi):
    check_dtype("clamp", x, (INT, FLOAT))
    check_same_dtypes("clamp", [lo, x, hi])
    for name, bound in (("min", lo), ("max", hi)):
        if bound.shape and bound.shape != x.shape:
            raise TypeError(f"clamp {name} must be a scalar or of the operand's shape "
                            f"{x.shape}, got shape {bound.shape}")
    return x


clamp_p = declare("clamp", _clamp_shape, lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi),
                  lambda ctx, ai, ao, lo, x, hi: ctx.op("stablehlo.clamp", [lo, x, hi], ai, ao[0]))


# --- convert_element_type ----------------------------------------------------------------

def _convert_shape(x, new_dtype, weak_type=False):
    if new_dtype not in dtypes.SUPPORTED:
        raise TypeError(f"convert_element_type: unsupported dtype {new_dtype}")
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_impl(x, new_dtype, weak_type=False):
    with np.errstate(all="ignore"):
        if new_dtype == np.bool_:
            return x != 0
        if dtypes.is_complex(x.dtype) and not dtypes.is_complex(new_dtype):
            x = np.real(x)
        if dtypes.is_inexact(x.dtype) and dtypes.is_int(new_dtype):
            info = np.iinfo(new_dtype)
            x = np.nan_to_num(np.clip(x, info.min, info.max), nan=0)
        return np.asarray(x).astype(new_dtype)


def _convert_lowering(ctx, avals_in, avals_out, x, new_dtype, weak_type=False):
    src, dst = avals_in[0], avals_out[0]
    if src.dtype == dst.dtype:
        return x
    if dst.dtype == dtypes.bool_:
        zero = ctx.constant(np.zeros((), src.dtype), src.update(shape=()))
        zero = ctx.op("stablehlo.broadcast_in_dim", [zero], [src.update(shape=())], src,
                      {"broadcast_dimensions": "array<i64>"})
        return ctx.op("stablehlo.compare", [x, zero], [src, src], dst,
                      {"comparison_direction": "#stablehlo<comparison_direction NE>",
                       "compare_type": compare_type(src.dtype)})
    if dtypes.is_complex(src.dtype) and not dtypes.is_complex(dst.dtype):
        real = src.update(dtype=_real_dtype(src.dtype))
        x = ctx.op("stablehlo.real", [x], [src], real)
        src = real
    return ctx.op("stablehlo.convert", [x], [src], dst)


convert_element_type_p = declare("convert_element_type", _convert_shape, _convert_impl,
                                 _convert_lowering)


# --- bitcast_convert_type ------------------------------------------------------------

def _bitcast_shape(x, new_dtype):
    old, new = x.dtype.itemsize, new_dtype.itemsize
    if old == new:
        shape = x.shape
    elif old > new:
        shape = x.shape + (old // new,)
    else:
        if not x.shape or x.shape[-1] != new // old:
            raise TypeError(f"bitcast_convert_type from {x.dtype.name} to {new_dtype.name} "
                            f"needs a last dimension of {new // old}, got shape {x.shape}")
        shape = x.shape[:-1]
    return ShapedArray(shape, new_dtype)


def _bitcast_impl(x, new_dtype):
    x = np.ascontiguousarray(x)
    old, new = x.dtype.itemsize, new_dtype.itemsize
    out = x.view(new_dtype)
    if old > new:
        return out.reshape(x.shape + (old // new,))
    if old < new:
        return out.reshape(x.shape[:-1])
    return out


bitcast_convert_type_p = declare(
    "bitcast_convert_type", _bitcast_shape, _bitcast_impl,
    lambda ctx, ai, ao, x, new_dtype: ctx.op("stablehlo.bitcast_convert", [x], ai, ao[0]))


# --- copy ------------------------------------------------------------------------
copy_p = declare("copy", lambda x: x, np.copy, lambda ctx, ai, ao, x: x)
