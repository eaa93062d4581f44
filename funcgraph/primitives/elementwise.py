"""Elementwise primitives: unary math, binary arithmetic, comparisons, logic,
shifts, select_n, clamp and the dtype conversions.

Each block holds the primitive's rules; most use the family helpers
`unary`/`binary`.  Differentiation and batching rules join these blocks in
their interpreters' registries (see funcgraph.interpreters)."""
import numpy as np

from funcgraph import dtypes
from funcgraph.core import ShapedArray
from funcgraph.primitives.helpers import (
    ANY, BOOL, COMPLEX, FLOAT, INEXACT, INT, INTEGRAL, NUMBER, binary, broadcast_scalar_operands,
    check_dtype, check_same_dtypes, check_same_shapes, compare_type, declare, silence_numpy,
    unary)

quiet = silence_numpy


def _real_dtype(dtype):
    return {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}.get(dtype, dtype)


def _splat(ctx, value, aval):
    """A constant array of aval's type filled with value."""
    scalar = aval.update(shape=(), weak_type=False)
    c = ctx.constant(np.array(value, aval.dtype), scalar)
    return ctx.op("stablehlo.broadcast_in_dim", [c], [scalar], aval,
                  {"broadcast_dimensions": "array<i64>"})


def _compare(ctx, x, y, aval, direction):
    """x <direction> y for two operands of type aval; a boolean array."""
    return ctx.op("stablehlo.compare", [x, y], [aval, aval], aval.update(dtype=dtypes.bool_),
                  {"comparison_direction": f"#stablehlo<comparison_direction {direction}>",
                   "compare_type": compare_type(aval.dtype)})


# --- unary: sign and rounding ---------------------------------------------------
neg_p = unary("neg", np.negative, "stablehlo.negate", NUMBER)


def _sign_lowering(ctx, avals_in, avals_out, x):
    aval = avals_in[0]
    if not dtypes.is_unsigned(aval.dtype):
        return ctx.op("stablehlo.sign", [x], avals_in, avals_out[0])
    # stablehlo.sign takes no unsigned integers: sign(x) = (x != 0).
    nonzero = _compare(ctx, x, _splat(ctx, 0, aval), aval, "NE")
    return ctx.op("stablehlo.convert", [nonzero], [aval.update(dtype=dtypes.bool_)], aval)


def _sign_impl(x):
    if dtypes.is_float(x.dtype):
        return np.where(x == 0, x, np.sign(x))  # XLA keeps -0.0; np.sign gives +0.0
    return np.sign(x)


sign_p = unary("sign", _sign_impl, "stablehlo.sign", NUMBER, lowering=_sign_lowering)
floor_p = unary("floor", np.floor, "stablehlo.floor", (FLOAT,))
ceil_p = unary("ceil", np.ceil, "stablehlo.ceil", (FLOAT,))


@silence_numpy
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
sin_p = unary("sin", quiet(np.sin), "stablehlo.sine", INEXACT)
cos_p = unary("cos", quiet(np.cos), "stablehlo.cosine", INEXACT)
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


def _abs_shape(x):
    if dtypes.is_unsigned(x.dtype):
        raise TypeError(f"abs does not accept operand of dtype {x.dtype.name} (type "
                        f"{x.str_short()}); it accepts signed int, float and complex dtypes "
                        f"(an unsigned value is its own absolute value)")
    check_dtype("abs", x, NUMBER)
    return ShapedArray(x.shape, _real_dtype(x.dtype), x.weak_type)


abs_p = declare("abs", _abs_shape, np.abs,
                lambda ctx, ai, ao, x: ctx.op("stablehlo.abs", [x], ai, ao[0]))

# --- unary: special functions (no NumPy version: eager calls run compiled) ----------
erf_p = unary("erf", None, "chlo.erf", (FLOAT,))
erf_inv_p = unary("erf_inv", None, "chlo.erf_inv", (FLOAT,))
lgamma_p = unary("lgamma", None, "chlo.lgamma", (FLOAT,))
digamma_p = unary("digamma", None, "chlo.digamma", (FLOAT,))

# --- unary: complex parts -----------------------------------------------------------
real_p = unary("real", np.real, "stablehlo.real", (COMPLEX,), out_dtype=_real_dtype)
imag_p = unary("imag", np.imag, "stablehlo.imag", (COMPLEX,), out_dtype=_real_dtype)
_COMPLEX_OF = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128,
               dtypes.complex64: dtypes.complex64, dtypes.complex128: dtypes.complex128}


def _conj_shape(x):
    if x.dtype not in _COMPLEX_OF:
        raise TypeError(f"conj does not accept operand of dtype {x.dtype.name} (type "
                        f"{x.str_short()}); it accepts float32, float64 and complex dtypes")
    return ShapedArray(x.shape, _COMPLEX_OF[x.dtype], x.weak_type)


def _conj_impl(x):
    return np.conj(x).astype(_COMPLEX_OF[x.dtype])


def _conj_lowering(ctx, avals_in, avals_out, x):
    aval, out = avals_in[0], avals_out[0]
    part = out.update(dtype=_real_dtype(out.dtype))
    if dtypes.is_complex(aval.dtype):
        re = ctx.op("stablehlo.real", [x], [aval], part)
        im = ctx.op("stablehlo.imag", [x], [aval], part)
        im = ctx.op("stablehlo.negate", [im], [part], part)
    else:
        # A real x becomes x + 0i, as in JAX.
        re, im = x, _splat(ctx, 0.0, part)
    return ctx.op("stablehlo.complex", [re, im], [part, part], out)


conj_p = declare("conj", _conj_shape, _conj_impl, _conj_lowering)


# --- unary: logic -------------------------------------------------------------
not_p = unary("not", np.invert, "stablehlo.not", INTEGRAL)


# --- integer_pow: x ** y for a static integer y --------------------------------------

def _integer_pow_shape(x, y):
    check_dtype("integer_pow", x, NUMBER)
    if not isinstance(y, int):
        raise TypeError(f"integer_pow needs a static Python int exponent, got {y!r}")
    if y < 0 and dtypes.is_int(x.dtype):
        raise TypeError(f"integer_pow of an integer array ({x.str_short()}) needs a "
                        f"non-negative exponent, got {y}")
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
add_p = binary("add", quiet(np.add), "stablehlo.add", NUMBER)
sub_p = binary("sub", quiet(np.subtract), "stablehlo.subtract", NUMBER)
mul_p = binary("mul", quiet(np.multiply), "stablehlo.multiply", NUMBER)


def _div_impl(x, y):
    with np.errstate(all="ignore"):
        if dtypes.is_int(x.dtype):
            # XLA's integer division rounds toward zero; x / 0 is -1 (all ones) and
            # INT_MIN / -1 wraps to INT_MIN.
            zero = y == 0
            wraps = (y == -1) if x.dtype.kind == "i" else np.zeros_like(zero)
            safe_y = np.where(zero | wraps, 1, y).astype(x.dtype)
            # x - fmod(x, y) is an exact multiple of y, so floor division truncates.
            q = (x - np.fmod(x, safe_y)) // safe_y
            q = np.where(wraps, -x, q)
            return np.where(zero, np.array(-1).astype(x.dtype), q).astype(x.dtype)
        return np.divide(x, y)


def _rem_impl(x, y):
    with np.errstate(all="ignore"):
        if dtypes.is_int(x.dtype):
            safe_y = np.where(y == 0, 1, y)
            return np.where(y == 0, x, np.fmod(x, safe_y)).astype(x.dtype)
        return np.fmod(x, y)


div_p = binary("div", _div_impl, "stablehlo.divide", NUMBER)
rem_p = binary("rem", _rem_impl, "stablehlo.remainder", (INT, FLOAT))


def _minmax_impl(np_fn, pick_x):
    @silence_numpy
    def impl(x, y):
        if not dtypes.is_complex(x.dtype):
            return np_fn(x, y)
        x, y = np.broadcast_arrays(x, y)
        return np.where(_lexicographic(x, y, pick_x), x, y)
    return impl


def _lexicographic(x, y, cmp):
    """cmp(x, y) on (real, imag) pairs; any NaN comparison is false (picks y)."""
    return np.where(x.real == y.real, cmp(x.imag, y.imag), cmp(x.real, y.real))


def _minmax_lowering(hlo_name, direction):
    def lower(ctx, avals_in, avals_out, x, y):
        out = avals_out[0]
        avals_in, (x, y) = broadcast_scalar_operands(ctx, avals_in, [x, y], out.shape)
        if not dtypes.is_complex(out.dtype):
            return ctx.op(hlo_name, [x, y], avals_in, out)
        # XLA orders complex values by their real parts only; the spec (and JAX)
        # compare (real, imag) pairs.
        part = out.update(dtype=_real_dtype(out.dtype))
        rx, ry = (ctx.op("stablehlo.real", [v], [out], part) for v in (x, y))
        ix, iy = (ctx.op("stablehlo.imag", [v], [out], part) for v in (x, y))
        real_eq = _compare(ctx, rx, ry, part, "EQ")
        real_cmp = _compare(ctx, rx, ry, part, direction)
        imag_cmp = _compare(ctx, ix, iy, part, direction)
        flag = part.update(dtype=dtypes.bool_)
        pick_x = ctx.op("stablehlo.select", [real_eq, imag_cmp, real_cmp], [flag] * 3, flag)
        return ctx.op("stablehlo.select", [pick_x, x, y], [flag, out, out], out)
    return lower


max_p = binary("max", _minmax_impl(np.maximum, np.greater), None, ANY,
               lowering=_minmax_lowering("stablehlo.maximum", "GT"))
min_p = binary("min", _minmax_impl(np.minimum, np.less), None, ANY,
               lowering=_minmax_lowering("stablehlo.minimum", "LT"))


# pow(x, y): x float or complex; y of x's dtype or of any integer dtype (as in JAX).
def _pow_shape(x, y):
    check_dtype("pow", x, INEXACT, "base")
    if y.dtype != x.dtype and not dtypes.is_int(y.dtype):
        raise TypeError(f"pow needs an exponent of the base's dtype or of an integer dtype, "
                        f"got base {x.str_short()} and exponent {y.str_short()}; convert them "
                        f"with lax.convert_element_type")
    check_same_shapes("pow", [x, y], allow_scalars=True)
    return ShapedArray(x.shape or y.shape, x.dtype, x.weak_type and y.weak_type)


@silence_numpy
def _pow_impl(x, y):
    y = y.astype(x.dtype)
    out = np.power(x, y)
    if dtypes.is_complex(x.dtype):
        # XLA: 0 ** y is 1 for y == 0, 0 for real y > 0, and nan + nan*j otherwise
        # (NumPy gives 0 for any y with a positive real part).
        nan = complex(np.nan, np.nan)
        zero_pow = np.where(y == 0, 1, np.where((y.imag == 0) & (y.real > 0), 0, nan))
        out = np.where(x == 0, zero_pow, out)
    return out.astype(x.dtype)


def _pow_lowering(ctx, avals_in, avals_out, x, y):
    x_aval, y_aval = avals_in
    if y_aval.dtype != x_aval.dtype:
        converted = y_aval.update(dtype=x_aval.dtype)
        y = ctx.op("stablehlo.convert", [y], [y_aval], converted)
        y_aval = converted
    avals, args = broadcast_scalar_operands(ctx, [x_aval, y_aval], [x, y], avals_out[0].shape)
    return ctx.op("stablehlo.power", args, avals, avals_out[0])


pow_p = declare("pow", _pow_shape, _pow_impl, _pow_lowering)


def _atan2_impl(x, y):
    if not dtypes.is_complex(x.dtype):
        return np.arctan2(x, y)
    # atan(x / y) = -i log((y + i x) / sqrt(x^2 + y^2)), which XLA also computes.
    wide_x, wide_y = x.astype(np.complex128), y.astype(np.complex128)
    with np.errstate(all="ignore"):
        out = -1j * np.log((wide_y + 1j * wide_x) / np.sqrt(wide_x * wide_x + wide_y * wide_y))
    return out.astype(x.dtype)


atan2_p = binary("atan2", _atan2_impl, "stablehlo.atan2", INEXACT)
nextafter_p = binary("nextafter", quiet(np.nextafter), "chlo.next_after", (FLOAT,))


# --- comparisons ---------------------------------------------------------------------

def _comparison(name, np_fn, direction, kinds=ANY):
    def lower(ctx, avals_in, avals_out, x, y):
        attrs = {"comparison_direction": f"#stablehlo<comparison_direction {direction}>",
                 "compare_type": compare_type(avals_in[0].dtype)}
        avals_in, args = broadcast_scalar_operands(ctx, avals_in, [x, y], avals_out[0].shape)
        return ctx.op("stablehlo.compare", args, avals_in, avals_out[0], attrs)
    return binary(name, quiet(np_fn), None, kinds, out_dtype=dtypes.bool_, lowering=lower)


eq_p = _comparison("eq", np.equal, "EQ")
ne_p = _comparison("ne", np.not_equal, "NE")
ORDERED = (BOOL, INT, FLOAT)
lt_p = _comparison("lt", np.less, "LT", ORDERED)
le_p = _comparison("le", np.less_equal, "LE", ORDERED)
gt_p = _comparison("gt", np.greater, "GT", ORDERED)
ge_p = _comparison("ge", np.greater_equal, "GE", ORDERED)

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


_signed_right = _shift_impl(np.right_shift, lambda x: np.where(x < 0, -1, 0))


def _arithmetic_right(x, y):
    """Copies the top bit in, for unsigned integers too (their bits read as signed)."""
    signed = np.dtype(f"i{x.dtype.itemsize}")
    return _signed_right(x.view(signed), y.view(signed)).view(x.dtype)


shift_left_p = binary("shift_left", _shift_impl(np.left_shift, np.zeros_like),
                      "stablehlo.shift_left", (INT,))
shift_right_arithmetic_p = binary("shift_right_arithmetic", _arithmetic_right,
                                  "stablehlo.shift_right_arithmetic", (INT,))
shift_right_logical_p = binary("shift_right_logical",
                               _shift_impl(_logical_right, np.zeros_like),
                               "stablehlo.shift_right_logical", (INT,))



def _population_count_impl(x):
    # np.bitwise_count counts the bits of |x|; XLA counts those of x's two's complement.
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    return np.bitwise_count(x.view(unsigned)).astype(x.dtype)


population_count_p = unary("population_count", _population_count_impl, "stablehlo.popcnt",
                           (INT,))


# --- select_n: pick among cases by a boolean or integer predicate -----------------

def _select_n_shape(which, *cases):
    if not cases:
        raise ValueError("select_n needs at least one case")
    check_same_dtypes("select_n cases", cases)
    check_same_shapes("select_n cases", cases)
    if which.shape and which.shape != cases[0].shape:
        raise TypeError(f"select_n predicate shape {which.shape} must be () or the cases' "
                        f"shape {cases[0].shape}")
    if which.dtype == dtypes.bool_:
        if len(cases) > 2:
            raise TypeError("select_n with a boolean predicate takes at most two cases")
    elif not dtypes.is_int(which.dtype):
        raise TypeError(f"select_n predicate must be bool or an integer, got "
                        f"{which.dtype.name} (type {which.str_short()})")
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
    is_low = _compare(ctx, which, _splat(ctx, offset + mid, pred_aval), pred_aval, "LT")
    bool_aval = pred_aval.update(dtype=dtypes.bool_)
    return ctx.op("stablehlo.select", [is_low, low, high], [bool_aval, out, out], out)


select_n_p = declare("select_n", _select_n_shape, _select_n_impl, _select_n_lowering)


# --- clamp(lo, x, hi): lo and hi are scalars or x's shape ----------------------------

def _clamp_shape(lo, x, hi):
    # Complex operands are refused: XLA clamps them by real part alone, unlike the
    # StableHLO spec's (real, imag) order.
    check_dtype("clamp", x, (BOOL, INT, FLOAT))
    check_same_dtypes("clamp", [lo, x, hi])
    for name, bound in (("min", lo), ("max", hi)):
        if bound.shape and bound.shape != x.shape:
            raise TypeError(f"clamp {name} must be a scalar or of the operand's shape "
                            f"{x.shape}, got shape {bound.shape}")
    return x


@silence_numpy
def _clamp_impl(lo, x, hi):
    return np.minimum(np.maximum(x, lo), hi)


clamp_p = declare("clamp", _clamp_shape, _clamp_impl,
                  lambda ctx, ai, ao, lo, x, hi: ctx.op("stablehlo.clamp", [lo, x, hi], ai, ao[0]))


# --- convert_element_type ----------------------------------------------------------------

def _convert_shape(x, new_dtype, weak_type=False):
    if new_dtype not in dtypes.SUPPORTED:
        raise TypeError(f"convert_element_type: unsupported dtype {new_dtype}")
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_impl(x, new_dtype, weak_type=False):
    with np.errstate(all="ignore"):
        if dtypes.is_complex(x.dtype) and not dtypes.is_complex(new_dtype):
            x = np.real(x)  # as JAX: the imaginary part is dropped, for bool too
        if new_dtype == np.bool_:
            return np.asarray(x != 0)
        if dtypes.is_float(x.dtype) and dtypes.is_int(new_dtype):
            return _float_to_int(x, new_dtype)
        return np.asarray(x).astype(new_dtype)


def _float_to_int(x, dtype):
    """XLA's float -> int conversion: truncate toward zero, saturate values out of the
    range, NaN -> 0 (StableHLO leaves the last two implementation-defined)."""
    info = np.iinfo(dtype)
    wide = np.asarray(x, np.float64)
    # float(info.max) + 1 is exactly 2**bits (or 2**(bits-1)): compare with exact bounds.
    too_big = wide >= float(info.max) + 1
    too_small = wide < float(info.min)
    fits = ~(too_big | too_small | np.isnan(wide))
    out = np.where(fits, wide, 0).astype(dtype)
    out = np.where(too_big, np.array(info.max, dtype), out)
    return np.where(too_small, np.array(info.min, dtype), out)


def _convert_lowering(ctx, avals_in, avals_out, x, new_dtype, weak_type=False):
    src, dst = avals_in[0], avals_out[0]
    if src.dtype == dst.dtype:
        return x
    if dtypes.is_complex(src.dtype) and not dtypes.is_complex(dst.dtype):
        real = src.update(dtype=_real_dtype(src.dtype))
        x = ctx.op("stablehlo.real", [x], [src], real)
        src = real
    if dst.dtype == dtypes.bool_:
        return _compare(ctx, x, _splat(ctx, 0, src), src, "NE")
    return ctx.op("stablehlo.convert", [x], [src], dst)


convert_element_type_p = declare("convert_element_type", _convert_shape, _convert_impl,
                                 _convert_lowering)


# --- bitcast_convert_type ------------------------------------------------------------

def _bitcast_shape(x, new_dtype):
    for dtype in (x.dtype, new_dtype):
        if x.dtype != new_dtype and (dtype == dtypes.bool_ or dtypes.is_complex(dtype)):
            raise TypeError(f"bitcast_convert_type does not accept dtype {dtype.name} (from "
                            f"{x.str_short()} to {new_dtype.name}); it takes integer and "
                            f"float dtypes")
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
    x = np.asarray(x, order="C")  # (np.ascontiguousarray would make a 0-d array 1-d)
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
