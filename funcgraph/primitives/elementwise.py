"""Elementwise primitives: unary math, binary arithmetic, comparisons, logic,
shifts, select_n, clamp and the dtype conversions.

Each block holds the primitive's rules; most use the family helpers `unary` and
`binary` below, which register the shape rule, NumPy impl, lowering and batching,
and the differentiation helpers `defjvp_unary`, `_defjvp` and `_transpose_binary`."""
import numpy as np

from funcgraph import core, dtypes
from funcgraph.array import scalar_array
from funcgraph.core import ShapedArray
from funcgraph.interpreters.ad_util import (
    Zero, ad_ops, instantiate, is_zero, tangent_aval, zeros_of)
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import NoHostImpl
from funcgraph.native import libm as _libm  # None where not built
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.transpose import is_undefined, transpose_rules
from funcgraph.ir import Literal, simplify_rules
from funcgraph.primitives.base import broadcast_in_dim_p, move_batch_dim, reduce_sum_p, reshape_p
from funcgraph.primitives.batching_helpers import batch_elementwise
from funcgraph.primitives.helpers import (
    ANY, BOOL, COMPLEX, FLOAT, INEXACT, INT, INTEGRAL, KIND, NUMBER, broadcast_scalar_operands,
    broadcast_shape, check_dtype, check_same_dtypes, check_same_shapes, compare_type, declare,
    deflinear_unary, defjvp_zero, lower_compare, unchanged_operand)
from funcgraph.primitives.host_math import libm_binary, libm_unary


def _splat(ctx, value, aval):
    """A constant array of aval's type filled with value."""
    scalar = aval.update(shape=(), weak_type=False)
    c = ctx.constant(np.array(value, aval.dtype), scalar)
    return ctx.op("stablehlo.broadcast_in_dim", [c], [scalar], aval,
                  {"broadcast_dimensions": "array<i64>"})


# --- the families: unary and binary elementwise primitives --------------------------

def _unary_shape_rule(name, kinds, out_dtype):
    def rule(x):
        check_dtype(name, x, kinds)
        if out_dtype is None:
            return x
        return ShapedArray(x.shape, out_dtype(x.dtype), x.weak_type)
    return rule


def _hlo_op_lowering(hlo_name):
    def lower(ctx, avals_in, avals_out, *args):
        return ctx.op(hlo_name, list(args), avals_in, avals_out[0])
    return lower


def unary(name, np_fn, hlo_name, kinds, out_dtype=None, lowering=None):
    """An elementwise unary primitive: same shape; dtype kept unless out_dtype maps it.

    np_fn may be None when NumPy lacks the function: eager calls then run compiled.
    Batching is elementwise (the batch dimension stays where it is)."""
    prim = declare(name, _unary_shape_rule(name, kinds, out_dtype), np_fn,
                   lowering or _hlo_op_lowering(hlo_name))
    batching_rules[prim] = batch_elementwise(prim)
    core.symbolic_dims_supported.add(prim)
    return prim


def _binary_shape_rule(name, kinds, out_dtype):
    def rule(x, y):
        if x.dtype != y.dtype:
            check_same_dtypes(name, [x, y])
        if KIND[x.dtype] not in kinds:
            check_dtype(name, x, kinds, "arguments")
        xs, ys = x.shape, y.shape
        if xs == ys or not ys:  # the common cases first (the eager hot path)
            shape = xs
        elif not xs:
            shape = ys
        else:
            shape = broadcast_shape(name, [x, y])
        weak = x.weak_type and y.weak_type
        if out_dtype is None and x.shape == shape and x.weak_type == weak:
            return x
        dtype = x.dtype if out_dtype is None else out_dtype
        return ShapedArray(shape, dtype, weak)
    return rule


def _hlo_binary_lowering(hlo_name):
    def lower(ctx, avals_in, avals_out, *args):
        avals_in, args = broadcast_scalar_operands(ctx, avals_in, args, avals_out[0].shape)
        return ctx.op(hlo_name, args, avals_in, avals_out[0])
    return lower


def _broadcasting_impl(np_fn):
    """np_fn given operands of one shape where shaped ones meet along size-1 dimensions."""
    if np_fn is None:
        return None
    if isinstance(np_fn, np.ufunc) or (_libm is not None and isinstance(np_fn, _libm.RealImpl)):
        return np_fn  # broadcasts by itself (and is called without a Python frame)

    def impl(x, y, **params):
        if x.shape != y.shape and x.ndim and y.ndim:
            x, y = np.broadcast_arrays(x, y)
        return np_fn(x, y, **params)
    return impl


def binary(name, np_fn, hlo_name, kinds, out_dtype=None, lowering=None):
    """An elementwise binary primitive: operands of one dtype and one shape, except
    that a rank-0 operand may meet a shaped one and operands of one rank may meet along
    their size-1 dimensions (they are broadcast, as in JAX's IR).  Batching is
    elementwise."""
    prim = declare(name, _binary_shape_rule(name, kinds, out_dtype), _broadcasting_impl(np_fn),
                   lowering or _hlo_binary_lowering(hlo_name))
    batching_rules[prim] = batch_elementwise(prim)
    core.symbolic_dims_supported.add(prim)
    return prim


# --- differentiation helpers ------------------------------------------------------
# Rules bind the primitives directly; these short names keep the formulas readable.
# They run only after the module is loaded, so they may name primitives defined below.

def _const(x, value):
    """value as a rank-0, weakly typed constant of x's dtype (it mixes with any shape)."""
    return scalar_array(value, core.get_aval(x).dtype, True)


def _add(x, y):
    return add_p.bind(x, y)


def _sub(x, y):
    return sub_p.bind(x, y)


def _mul(x, y):
    return mul_p.bind(x, y)


def _div(x, y):
    return div_p.bind(x, y)


def _neg(x):
    return neg_p.bind(x)


def _square(x):
    return square_p.bind(x)


def _as_dtype(x, like):
    """x (a boolean or number) converted to like's dtype."""
    dtype = core.get_aval(like).dtype
    if core.get_aval(x).dtype == dtype:
        return x
    return convert_element_type_p.bind(x, new_dtype=dtype, weak_type=False)


def _to_shape(x, shape):
    """x broadcast to shape: a rank-0 x, or one of shape's rank with size-1 dimensions
    (x is returned if it already has the shape)."""
    aval = core.get_aval(x)
    if aval.shape == shape:
        return x
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=tuple(range(aval.ndim)))


def _select(pred, on_true, on_false):
    """on_true where pred, else on_false; rank-0 operands meet shaped ones, and shaped
    ones meet along their size-1 dimensions."""
    shape = broadcast_shape("select", [core.get_aval(v) for v in (pred, on_true, on_false)])
    if core.get_aval(pred).shape:
        pred = _to_shape(pred, shape)
    return select_n_p.bind(pred, _to_shape(on_false, shape), _to_shape(on_true, shape))


def _zeros_like(x):
    return zeros_of(core.get_aval(x).update(weak_type=False))


def _defjvp(prim, *terms):
    """JVP of an elementwise primitive as a sum over the operands with a nonzero tangent
    t of term(t, *primals, out, **params); a term given as None means the output does
    not depend on that operand.  Terms may be rank 0 where the output is not."""
    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        out_aval = core.get_aval(out)
        if not dtypes.is_inexact(out_aval.dtype):
            return out, Zero(tangent_aval(out_aval))
        parts = [term(t, *primals, out, **params)
                 for term, t in core.safe_zip(terms, tangents)
                 if term is not None and not is_zero(t)]
        if not parts:
            return out, Zero(tangent_aval(out_aval))
        total = parts[0]
        for part in parts[1:]:
            total = _add(total, part)
        return out, _to_shape(total, out_aval.shape)
    jvp_rules[prim] = rule


def defjvp_unary(prim, derivative):
    """JVP of an elementwise unary primitive: t_out = t * derivative(x, out, **params)."""
    _defjvp(prim, lambda t, x, out, **params: _mul(t, derivative(x, out, **params)))


def _unbroadcast(ct, aval):
    """The cotangent of an operand that was broadcast to the result's shape: summed over
    the whole shape for a rank-0 operand, else over its size-1 dimensions."""
    ct_aval = core.get_aval(ct)
    if ct_aval.shape == aval.shape:
        return ct
    if not aval.shape:
        return reduce_sum_p.bind(ct, axes=tuple(range(ct_aval.ndim)))
    axes = tuple(i for i, (a, c) in enumerate(zip(aval.shape, ct_aval.shape)) if a != c)
    summed = reduce_sum_p.bind(ct, axes=axes)
    return reshape_p.bind(summed, new_sizes=aval.shape, dimensions=None)


def _transpose_binary(prim, ct_x, ct_y, jointly_linear=False):
    """Transpose rule of a binary primitive: ct_x(ct, y) and ct_y(ct, x) give the
    cotangents (None: not linear in that operand), summed back to rank 0 where a rank-0
    operand met a shaped one.  Unless jointly_linear (add, sub), only one operand may
    be linear: the other is a residual value (mul, div)."""
    def rule(ct, x, y, **params):
        out = [None, None]
        for i, (operand, other, ct_of) in enumerate(((x, y, ct_x), (y, x, ct_y))):
            if not is_undefined(operand) or is_zero(ct):
                continue
            if ct_of is None or (is_undefined(other) and not jointly_linear):
                raise ValueError(f"{prim.name} is not linear in its operand {i}, so it cannot "
                                 f"be transposed with respect to it")
            out[i] = _unbroadcast(ct_of(ct, other), operand.aval)
        return out
    transpose_rules[prim] = rule


# --- simplification helpers: rewrites exact for every value (NaN, inf, -0.0) ---------

def _if_same_type(atom, outvar):
    """atom, when it is not None and has the output's type (a rewrite keeps types)."""
    return atom if atom is not None and atom.aval == outvar.aval else None


def _is_literal(x, value):
    """x is a rank-0 literal equal to value."""
    if type(x) is not Literal:
        return False
    v = np.asarray(x.val)
    return not v.shape and bool(v == value)


def _is_signed_zero(x, negative):
    """x is a literal zero of the given sign; integer zeros have no sign, so any will do.
    (x + -0.0 and x - +0.0 are x for every x, -0.0 included; x + +0.0 is not.)"""
    if not _is_literal(x, 0):
        return False
    v = np.asarray(x.val)
    return v.dtype.kind in "iub" or bool(np.signbit(v.real)) == negative


# --- unary: sign and rounding ---------------------------------------------------
neg_p = unary("neg", np.negative, "stablehlo.negate", NUMBER)
deflinear_unary(neg_p, lambda ct, aval: _neg(ct))


def _neg_simplify(invars, params, outvar, producers):
    """neg(neg(x)) is x."""
    inner = producers.get(invars[0])
    return _if_same_type(inner[1], outvar) if inner is not None and inner[0] == "neg" else None


simplify_rules[neg_p] = _neg_simplify


def _sign_lowering(ctx, avals_in, avals_out, x):
    aval = avals_in[0]
    if not dtypes.is_unsigned(aval.dtype):
        return ctx.op("stablehlo.sign", [x], avals_in, avals_out[0])
    # stablehlo.sign takes no unsigned integers: sign(x) = (x != 0).
    nonzero = lower_compare(ctx, x, _splat(ctx, 0, aval), aval, "NE")
    return ctx.op("stablehlo.convert", [nonzero], [aval.update(dtype=dtypes.bool_)], aval)


def _sign_impl(x):
    if dtypes.is_float(x.dtype):
        # XLA keeps -0.0 (np.sign gives +0.0) and flushes a subnormal to a signed zero
        return np.where(x == 0, np.copysign(np.zeros((), x.dtype), x), np.sign(x))
    if dtypes.is_complex(x.dtype):
        raise NoHostImpl  # XLA's x / |x| differs from NumPy's at infinities: compiled
    return np.sign(x)


sign_p = unary("sign", _sign_impl, "stablehlo.sign", NUMBER, lowering=_sign_lowering)
defjvp_zero(sign_p)
floor_p = unary("floor", np.floor, "stablehlo.floor", (FLOAT,))
defjvp_zero(floor_p)
ceil_p = unary("ceil", np.ceil, "stablehlo.ceil", (FLOAT,))
defjvp_zero(ceil_p)


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
core.symbolic_dims_supported.add(round_p)
defjvp_zero(round_p)
batching_rules[round_p] = batch_elementwise(round_p)

is_finite_p = unary("is_finite", np.isfinite, "stablehlo.is_finite", (FLOAT,),
                    out_dtype=lambda d: dtypes.bool_)
defjvp_zero(is_finite_p)

# --- unary: exponentials and logarithms ---------------------------------------------
# Transcendental functions have no NumPy implementation on purpose: NumPy's algorithms
# round differently from XLA's in a few ulps of many results, which finite-difference
# checks amplify into visibly different numbers.  Eagerly they run compiled, so eager,
# jit and jax agree bit for bit; NumPy serves only the ops where it is exact
# (tests/test_reliability.py checks every NumPy impl against the compiled op).
exp_p = unary("exp", None, "stablehlo.exponential", INEXACT)
defjvp_unary(exp_p, lambda x, out: out)
log_p = unary("log", None, "stablehlo.log", INEXACT)
_defjvp(log_p, lambda t, x, out: _div(t, x))
log1p_p = unary("log1p", None, "stablehlo.log_plus_one", INEXACT)
_defjvp(log1p_p, lambda t, x, out: _div(t, _add(x, _const(x, 1))))
expm1_p = unary("expm1", None, "stablehlo.exponential_minus_one", INEXACT)
defjvp_unary(expm1_p, lambda x, out: _add(out, _const(out, 1)))
tanh_p = unary("tanh", None, "stablehlo.tanh", INEXACT)
# (t + t out)(1 - out), jax's grouping (t (1 - out^2) rounds otherwise)
_defjvp(tanh_p, lambda t, x, out: _mul(_add(t, _mul(t, out)), _sub(_const(x, 1), out)))


def _exp2_lowering(ctx, avals_in, avals_out, x):
    ln2 = ctx.constant(np.log(2.0), avals_in[0].update(shape=()))
    ln2 = ctx.op("stablehlo.broadcast_in_dim", [ln2], [avals_in[0].update(shape=())],
                 avals_in[0], {"broadcast_dimensions": "array<i64>"})
    scaled = ctx.op("stablehlo.multiply", [x, ln2], avals_in * 2, avals_in[0])
    return ctx.op("stablehlo.exponential", [scaled], avals_in, avals_out[0])


exp2_p = unary("exp2", None, None, INEXACT, lowering=_exp2_lowering)
_defjvp(exp2_p, lambda t, x, out: _mul(_const(out, np.log(2.0)), _mul(t, out)))  # as jax


def _logistic_lowering(ctx, avals_in, avals_out, x):
    """1 / (1 + exp(-x)), op by op as jax lowers it: XLA's own logistic of a 16-bit float
    rounds once, where jax's rounds after each op."""
    aval = avals_in[0]
    denominator = ctx.op("stablehlo.add", [_splat(ctx, 1, aval), ctx.op(
        "stablehlo.exponential", [ctx.op("stablehlo.negate", [x], [aval], aval)],
        [aval], aval)], [aval, aval], aval)
    return ctx.op("stablehlo.divide", [_splat(ctx, 1, aval), denominator], [aval, aval],
                  avals_out[0])


logistic_p = unary("logistic", None, None, INEXACT, lowering=_logistic_lowering)
defjvp_unary(logistic_p, lambda x, out: _mul(out, _sub(_const(out, 1), out)))

# --- unary: trigonometry ------------------------------------------------------------
# sin, cos, tan, atan (and atan2, cbrt below) run eagerly by the C math library that
# XLA's CPU code calls (host_math.py): NumPy's versions round differently.
def _complex_trig_lowering(hlo_name, is_sin):
    """sin or cos, with a complex operand a + bi written with real functions as JAX does
    (XLA's complex sine and cosine round differently):
        sin = sin a cosh b + i cos a sinh b,   cos = cos a cosh b - i sin a sinh b,
    sinh b and cosh b from expm1(b) and expm1(-b) (accurate for small b), and the real
    part of sin (the imaginary part of cos) exactly 0 where a is 0."""
    def lower(ctx, avals_in, avals_out, z):
        (aval,) = avals_in
        if not dtypes.is_complex(aval.dtype):
            return ctx.op(hlo_name, [z], avals_in, avals_out[0])
        part = aval.update(dtype=dtypes.real_dtype(aval.dtype))

        def op(name, *args):
            return ctx.op(f"stablehlo.{name}", list(args), [part] * len(args), part)
        a = ctx.op("stablehlo.real", [z], [aval], part)
        b = ctx.op("stablehlo.imag", [z], [aval], part)
        sin_a, cos_a = op("sine", a), op("cosine", a)
        up, down = op("exponential_minus_one", b), op("exponential_minus_one", op("negate", b))
        two = _splat(ctx, 2, part)
        sinh_b = op("divide", op("subtract", up, down), two)
        cosh_b = op("divide", op("add", op("add", up, down), two), two)
        if is_sin:
            re, im = op("multiply", sin_a, cosh_b), op("multiply", cos_a, sinh_b)
            exact = (_splat(ctx, 0, part), im)
        else:
            re, im = op("multiply", cos_a, cosh_b), op("multiply", op("negate", sin_a), sinh_b)
            exact = (re, _splat(ctx, 0, part))
        a_is_zero = lower_compare(ctx, a, _splat(ctx, 0, part), part, "EQ")
        general = ctx.op("stablehlo.complex", [re, im], [part, part], aval)
        at_zero = ctx.op("stablehlo.complex", list(exact), [part, part], aval)
        return ctx.op("stablehlo.select", [a_is_zero, at_zero, general],
                      [part.update(dtype=dtypes.bool_), aval, aval], aval)
    return lower


sin_p = unary("sin", libm_unary("sin", lambda: sin_p), None, INEXACT,
              lowering=_complex_trig_lowering("stablehlo.sine", True))
defjvp_unary(sin_p, lambda x, out: cos_p.bind(x))
cos_p = unary("cos", libm_unary("cos", lambda: cos_p), None, INEXACT,
              lowering=_complex_trig_lowering("stablehlo.cosine", False))
defjvp_unary(cos_p, lambda x, out: _neg(sin_p.bind(x)))
tan_p = unary("tan", libm_unary("tan", lambda: tan_p), "stablehlo.tan", INEXACT)
defjvp_unary(tan_p, lambda x, out: _add(_const(out, 1), _square(out)))


def _one_minus_square(x):
    return _sub(_const(x, 1), _square(x))


asin_p = unary("asin", None, "chlo.asin", INEXACT)
defjvp_unary(asin_p, lambda x, out: rsqrt_p.bind(_one_minus_square(x)))
acos_p = unary("acos", None, "chlo.acos", INEXACT)
defjvp_unary(acos_p, lambda x, out: _neg(rsqrt_p.bind(_one_minus_square(x))))
# No host impl: XLA's CPU atan is the library's atan2(x, 1) only for some array lengths
# (for 2 to about 64 elements it rounds otherwise).
atan_p = unary("atan", None, "chlo.atan", INEXACT)
_defjvp(atan_p, lambda t, x, out: _div(t, _add(_const(x, 1), _square(x))))
sinh_p = unary("sinh", None, "chlo.sinh", INEXACT)
defjvp_unary(sinh_p, lambda x, out: cosh_p.bind(x))
cosh_p = unary("cosh", None, "chlo.cosh", INEXACT)
defjvp_unary(cosh_p, lambda x, out: sinh_p.bind(x))
asinh_p = unary("asinh", None, "chlo.asinh", INEXACT)
defjvp_unary(asinh_p, lambda x, out: rsqrt_p.bind(_add(_square(x), _const(x, 1))))
acosh_p = unary("acosh", None, "chlo.acosh", INEXACT)
# 1 / sqrt(x^2 - 1), as jax ((x - 1)(x + 1) would be more accurate near 1, and differ).
defjvp_unary(acosh_p, lambda x, out: rsqrt_p.bind(_sub(_square(x), _const(x, 1))))
atanh_p = unary("atanh", None, "chlo.atanh", INEXACT)
_defjvp(atanh_p, lambda t, x, out: _mul(  # 1 / (1 + x) * (t / (1 - x)), as jax
    integer_pow_p.bind(_add(_const(x, 1), x), y=-1), _div(t, _sub(_const(x, 1), x))))

# --- unary: roots and absolute value --------------------------------------------
def _sqrt_impl(x):
    if x.dtype.kind == "c":
        raise NoHostImpl  # XLA's complex square root rounds otherwise than NumPy's: compiled
    return np.sqrt(x)


sqrt_p = unary("sqrt", _sqrt_impl, "stablehlo.sqrt", INEXACT)
_defjvp(sqrt_p, lambda t, x, out: _mul(t, _div(_const(x, 0.5), out)))  # as jax
rsqrt_p = unary("rsqrt", None, "stablehlo.rsqrt", INEXACT)
defjvp_unary(rsqrt_p, lambda x, out: _mul(_div(out, x), _const(x, -0.5)))
cbrt_p = unary("cbrt", libm_unary("cbrt", lambda: cbrt_p), "stablehlo.cbrt", (FLOAT,))
defjvp_unary(cbrt_p, lambda x, out: _mul(integer_pow_p.bind(out, y=-2), _const(x, 1 / 3)))


def _abs_shape(x):
    if dtypes.is_unsigned(x.dtype):
        raise TypeError(f"abs does not accept operand of dtype {x.dtype.name} (type "
                        f"{x.str_short()}); it accepts signed int, float and complex dtypes "
                        f"(an unsigned value is its own absolute value)")
    check_dtype("abs", x, NUMBER)
    return ShapedArray(x.shape, dtypes.real_dtype(x.dtype), x.weak_type)


def _abs_impl(x):
    out = np.abs(x)
    if dtypes.is_complex(x.dtype):
        # a NaN part makes XLA's |x| NaN, even beside an infinite one (C's hypot: inf)
        out = np.where(np.isnan(x), np.asarray(np.nan, out.dtype), out)
    return out


abs_p = declare("abs", _abs_shape, _abs_impl,
                lambda ctx, ai, ao, x: ctx.op("stablehlo.abs", [x], ai, ao[0]))
core.symbolic_dims_supported.add(abs_p)


def _abs_tangent(t, x, out):
    if not dtypes.is_complex(core.get_aval(x).dtype):
        return _select(ge_p.bind(x, _const(x, 0)), t, _neg(t))  # slope 1 at 0, as JAX
    # d|x| = re(t conj(x) / |x|), with |x| = 0 replaced by 1 (slope 0 there).
    magnitude = _as_dtype(out, x)
    magnitude = _select(eq_p.bind(magnitude, _const(magnitude, 0)), _const(magnitude, 1),
                        magnitude)
    return real_p.bind(_mul(t, _div(conj_p.bind(x), magnitude)))


_defjvp(abs_p, _abs_tangent)
batching_rules[abs_p] = batch_elementwise(abs_p)

# --- unary: special functions (no NumPy version: eager calls run compiled) ----------
erf_p = unary("erf", None, "chlo.erf", (FLOAT,))
# c (t exp(-x^2)): jax's grouping, here and for erfc and erf_inv
_defjvp(erf_p, lambda t, x, out: _mul(_const(x, 2 / np.sqrt(np.pi)),
                                      _mul(t, exp_p.bind(_neg(_square(x))))))
erf_inv_p = unary("erf_inv", None, "chlo.erf_inv", (FLOAT,))
_defjvp(erf_inv_p, lambda t, x, out: _mul(_const(x, np.sqrt(np.pi) / 2),
                                          _mul(t, exp_p.bind(_square(out)))))
lgamma_p = unary("lgamma", None, "chlo.lgamma", (FLOAT,))
defjvp_unary(lgamma_p, lambda x, out: digamma_p.bind(x))
digamma_p = unary("digamma", None, "chlo.digamma", (FLOAT,))
defjvp_unary(digamma_p, lambda x, out: polygamma_p.bind(_const(x, 1), x))

erfc_p = unary("erfc", None, "chlo.erfc", (FLOAT,))
_defjvp(erfc_p, lambda t, x, out: _mul(_const(x, -2 / np.sqrt(np.pi)),
                                       _mul(t, exp_p.bind(_neg(_square(x))))))
# The Hurwitz zeta function zeta(x, q); as in JAX it has no derivative rule.
zeta_p = binary("zeta", None, "chlo.zeta", (FLOAT,))

# polygamma(m, x): the m-th derivative of digamma, for a whole-number float m
# (other m give NaN).  It exists for digamma's derivatives; m is not differentiable.
polygamma_p = binary("polygamma", None, "chlo.polygamma", (FLOAT,))


def _polygamma_m_tangent(t, m, x, out):
    raise ValueError("polygamma is not differentiable with respect to m (the order of the "
                     "derivative); pass m through lax.stop_gradient")


_defjvp(polygamma_p, _polygamma_m_tangent,
        lambda t, m, x, out: _mul(t, polygamma_p.bind(_add(m, _const(m, 1)), x)))



# --- reduce_precision: round to a float format of exponent_bits and mantissa_bits -----
# No NumPy impl: eager calls run XLA's rounding, so eager, jit and jax agree bit for bit.
def _reduce_precision_shape(x, exponent_bits, mantissa_bits):
    check_dtype("reduce_precision", x, (FLOAT,))
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(
            f"reduce_precision: mantissa_bits must be non-negative; got {mantissa_bits}")
    return x


def _reduce_precision_lowering(ctx, avals_in, avals_out, x, exponent_bits, mantissa_bits):
    return ctx.op("stablehlo.reduce_precision", [x], avals_in, avals_out[0],
                  {"exponent_bits": f"{exponent_bits} : i32",
                   "mantissa_bits": f"{mantissa_bits} : i32"})


reduce_precision_p = declare("reduce_precision", _reduce_precision_shape, None,
                             _reduce_precision_lowering)
# Linear, as in JAX: tangents and cotangents are rounded the same way.
deflinear_unary(reduce_precision_p,
                lambda ct, aval, **params: reduce_precision_p.bind(ct, **params))
batching_rules[reduce_precision_p] = batch_elementwise(reduce_precision_p)

# --- unary: complex parts -----------------------------------------------------------
real_p = unary("real", np.real, "stablehlo.real", (COMPLEX,), out_dtype=dtypes.real_dtype)
imag_p = unary("imag", np.imag, "stablehlo.imag", (COMPLEX,), out_dtype=dtypes.real_dtype)
# Transposes of the complex parts (as JAX's): real's is ct + 0i (conj of a real value
# is that value as a complex one), imag's is -i ct.
deflinear_unary(real_p, lambda ct, aval: conj_p.bind(ct))
deflinear_unary(imag_p, lambda ct, aval: _mul(conj_p.bind(ct), scalar_array(-1j, aval.dtype, True)))
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
    part = out.update(dtype=dtypes.real_dtype(out.dtype))
    if dtypes.is_complex(aval.dtype):
        re = ctx.op("stablehlo.real", [x], [aval], part)
        im = ctx.op("stablehlo.imag", [x], [aval], part)
        im = ctx.op("stablehlo.negate", [im], [part], part)
    else:
        # A real x becomes x + 0i, as in JAX.
        re, im = x, _splat(ctx, 0.0, part)
    return ctx.op("stablehlo.complex", [re, im], [part, part], out)


conj_p = declare("conj", _conj_shape, _conj_impl, _conj_lowering)
core.symbolic_dims_supported.add(conj_p)
# A real operand became x + 0i: its cotangent is the real part of ct.
deflinear_unary(conj_p, lambda ct, aval: conj_p.bind(ct) if dtypes.is_complex(aval.dtype)
                else real_p.bind(ct))
batching_rules[conj_p] = batch_elementwise(conj_p)

# --- binary: a complex number of its parts (lax.complex) -----------------------------
_parts_shape = _binary_shape_rule("complex", (FLOAT,), None)


def _complex_shape(x, y):
    parts = _parts_shape(x, y)
    if parts.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"complex requires float32 or float64 arguments, got "
                        f"{parts.dtype.name}")
    return ShapedArray(parts.shape, _COMPLEX_OF[parts.dtype], parts.weak_type)


def _complex_impl(x, y):
    x, y = np.broadcast_arrays(x, y)
    out = np.empty(x.shape, _COMPLEX_OF[x.dtype])
    out.real, out.imag = x, y  # each part as it is (x + 1j * y would make inf * 0 = NaN)
    return out


complex_p = declare("complex", _complex_shape, _complex_impl,
                    _hlo_binary_lowering("stablehlo.complex"))
batching_rules[complex_p] = batch_elementwise(complex_p)
core.symbolic_dims_supported.add(complex_p)
_defjvp(complex_p, lambda t, x, y, out: complex_p.bind(t, _const(t, 0)),
        lambda t, x, y, out: complex_p.bind(_const(t, 0), t))
# As JAX's: the real part's cotangent is real(ct), the imaginary part's -imag(ct).
_transpose_binary(complex_p, lambda ct, y: real_p.bind(ct),
                  lambda ct, x: neg_p.bind(imag_p.bind(ct)), jointly_linear=True)


# --- unary: logic -------------------------------------------------------------
not_p = unary("not", np.invert, "stablehlo.not", INTEGRAL)
defjvp_zero(not_p)


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
        if x.dtype.kind in "iub":
            return np.power(x, y).astype(x.dtype)
        if x.dtype.kind == "c":
            # XLA's complex products and quotients round otherwise: run compiled
            raise NoHostImpl
        # floats: the lowering's square-and-multiply, each product rounded as XLA's
        # (NumPy's power rounds x ** 3 once); products of one dtype keep it
        acc, base, n = None, x, abs(y)
        while n:
            if n & 1:
                acc = base if acc is None else acc * base
            n >>= 1
            if n:
                base = base * base
        if acc is None:
            acc = np.ones_like(x)
        return np.asarray(1 / acc if y < 0 else acc, x.dtype)


def _integer_pow_lowering(ctx, avals_in, avals_out, x, y):
    """Square-and-multiply, as jax's expansion does; x ** 3 is (x * x) * x, jax's own case
    (complex products are not commutative bit for bit)."""
    aval = avals_in[0]
    if y == 3:
        square = ctx.op("stablehlo.multiply", [x, x], [aval] * 2, aval)
        return ctx.op("stablehlo.multiply", [square, x], [aval] * 2, aval)
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
core.symbolic_dims_supported.add(integer_pow_p)


def _integer_pow_derivative(x, out, y):
    if y == 0:
        return _const(x, 0)
    return _mul(_const(x, y), integer_pow_p.bind(x, y=y - 1))


defjvp_unary(integer_pow_p, _integer_pow_derivative)
batching_rules[integer_pow_p] = batch_elementwise(integer_pow_p)


# --- square: x * x, a primitive of its own as in jax (lax.square binds it) -----------

def _square_lowering(ctx, avals_in, avals_out, x):
    """x * x; complex squares as jax's chlo.square (its own formula, not a product's)."""
    if dtypes.is_complex(avals_in[0].dtype):
        return ctx.op("chlo.square", [x], avals_in, avals_out[0])
    return ctx.op("stablehlo.multiply", [x, x], avals_in * 2, avals_out[0])


square_p = unary("square", lambda x: _integer_pow_impl(x, 2), None, NUMBER,
                 lowering=_square_lowering)
defjvp_unary(square_p, lambda x, out: _mul(_const(x, 2), x))


# --- binary arithmetic ------------------------------------------------------------------
add_p = binary("add", np.add, "stablehlo.add", NUMBER)
_defjvp(add_p, lambda t, x, y, out: t, lambda t, x, y, out: t)
_transpose_binary(add_p, lambda ct, y: ct, lambda ct, x: ct, jointly_linear=True)
ad_ops["add"] = add_p.bind  # how the differentiation interpreters add tangents


def _add_simplify(invars, params, outvar, producers):
    """x + -0 and -0 + x are x."""
    a, b = invars
    candidate = a if _is_signed_zero(b, True) else b if _is_signed_zero(a, True) else None
    return _if_same_type(candidate, outvar)


simplify_rules[add_p] = _add_simplify

sub_p = binary("sub", np.subtract, "stablehlo.subtract", NUMBER)
_defjvp(sub_p, lambda t, x, y, out: t, lambda t, x, y, out: _neg(t))
_transpose_binary(sub_p, lambda ct, y: ct, lambda ct, x: _neg(ct), jointly_linear=True)


def _sub_simplify(invars, params, outvar, producers):
    """x - +0 is x."""
    x, y = invars
    return _if_same_type(x if _is_signed_zero(y, False) else None, outvar)


simplify_rules[sub_p] = _sub_simplify

def _complex_mul_impl(x, y):
    if x.dtype.kind == "c":
        raise NoHostImpl  # XLA's complex product contracts into fused multiply-adds: compiled
    return np.multiply(x, y)


# NumPy's product for real operands, checked in C (a Python impl's frame would cost every
# eager multiply); complex operands run compiled.
_COMPLEX = (np.dtype(np.complex64), np.dtype(np.complex128))
mul_p = binary("mul", _complex_mul_impl if _libm is None else
               _libm.RealImpl(np.multiply, _COMPLEX, _complex_mul_impl),
               "stablehlo.multiply", NUMBER)
_defjvp(mul_p, lambda t, x, y, out: _mul(t, y), lambda t, x, y, out: _mul(x, t))
# Linear in one operand; the other is a residual value.
_transpose_binary(mul_p, _mul, lambda ct, x: _mul(x, ct))


def _mul_simplify(invars, params, outvar, producers):
    """x * 1 and 1 * x are x."""
    a, b = invars
    candidate = a if _is_literal(b, 1) else b if _is_literal(a, 1) else None
    return _if_same_type(candidate, outvar)


simplify_rules[mul_p] = _mul_simplify


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
        if x.dtype.kind == "c":
            raise NoHostImpl  # XLA's complex quotient rounds otherwise than NumPy's: compiled
        if x.dtype in RECIPROCAL_DIVIDED and y.shape != x.shape and y.size == 1:
            # XLA's simplifier turns A / broadcast(B) into A * broadcast(1 / B): jax's
            # quotient by a scalar, eager or jitted, is that product (1 ulp off the
            # rounded quotient in a third of float32 elements).
            return np.multiply(x, np.divide(np.ones((), y.dtype), y))
        return np.divide(x, y)


# The float dtypes whose division by a broadcast divisor XLA's simplifier rewrites as a
# multiplication by the broadcast reciprocal (A / broadcast(B) -> A * broadcast(1 / B));
# bfloat16 (computed in float32) and complex keep the division.
RECIPROCAL_DIVIDED = frozenset(map(np.dtype, ("float16", "float32", "float64")))


def _rem_impl(x, y):
    with np.errstate(all="ignore"):
        if dtypes.is_int(x.dtype):
            safe_y = np.where(y == 0, 1, y)
            return np.where(y == 0, x, np.fmod(x, safe_y)).astype(x.dtype)
        return np.fmod(x, y)


div_p = binary("div", _div_impl, "stablehlo.divide", NUMBER)
_defjvp(div_p, lambda t, x, y, out: _div(t, y),
        lambda t, x, y, out: _neg(_mul(_mul(t, x), integer_pow_p.bind(y, y=-2))))
# Linear in the numerator only.
_transpose_binary(div_p, _div, None)


def _div_simplify(invars, params, outvar, producers):
    """x / 1 is x."""
    x, y = invars
    return _if_same_type(x if _is_literal(y, 1) else None, outvar)


simplify_rules[div_p] = _div_simplify

rem_p = binary("rem", _rem_impl, "stablehlo.remainder", (INT, FLOAT))


def _rem_y_tangent(t, x, y, out):
    # rem(x, y) = x - y * trunc(x / y), with trunc piecewise constant.
    q = _div(x, y)
    return _neg(_mul(t, _mul(sign_p.bind(q), floor_p.bind(abs_p.bind(q)))))


_defjvp(rem_p, lambda t, x, y, out: t, _rem_y_tangent)


def _minmax_impl(np_fn, pick_x):
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
        part = out.update(dtype=dtypes.real_dtype(out.dtype))
        rx, ry = (ctx.op("stablehlo.real", [v], [out], part) for v in (x, y))
        ix, iy = (ctx.op("stablehlo.imag", [v], [out], part) for v in (x, y))
        real_eq = lower_compare(ctx, rx, ry, part, "EQ")
        real_cmp = lower_compare(ctx, rx, ry, part, direction)
        imag_cmp = lower_compare(ctx, ix, iy, part, direction)
        flag = part.update(dtype=dtypes.bool_)
        pick_x = ctx.op("stablehlo.select", [real_eq, imag_cmp, real_cmp], [flag] * 3, flag)
        return ctx.op("stablehlo.select", [pick_x, x, y], [flag, out, out], out)
    return lower


max_p = binary("max", _minmax_impl(np.maximum, np.greater), None, ANY,
               lowering=_minmax_lowering("stablehlo.maximum", "GT"))
min_p = binary("min", _minmax_impl(np.minimum, np.less), None, ANY,
               lowering=_minmax_lowering("stablehlo.minimum", "LT"))


def balanced_share(mine, other, out):
    """The share of an operand's tangent in out = max/min(mine, other): 1 where it alone
    is the result, 1/2 where both operands are (as JAX does), else 0."""
    won = _select(eq_p.bind(mine, out), _const(out, 1), _const(out, 0))
    tie = _select(eq_p.bind(other, out), _const(out, 2), _const(out, 1))
    return _div(won, tie)


for _prim in (max_p, min_p):
    _defjvp(_prim, lambda t, x, y, out: _mul(t, balanced_share(x, y, out)),
            lambda t, x, y, out: _mul(t, balanced_share(y, x, out)))


# pow(x, y): x float or complex; y of x's dtype or of any integer dtype (as in JAX).
def _pow_shape(x, y):
    check_dtype("pow", x, INEXACT, "base")
    if y.dtype != x.dtype and not dtypes.is_int(y.dtype):
        raise TypeError(f"pow needs an exponent of the base's dtype or of an integer dtype, "
                        f"got base {x.str_short()} and exponent {y.str_short()}; convert them "
                        f"with lax.convert_element_type")
    return ShapedArray(broadcast_shape("pow", [x, y]), x.dtype, x.weak_type and y.weak_type)


def _pow_lowering(ctx, avals_in, avals_out, x, y):
    x_aval, y_aval = avals_in
    if y_aval.dtype != x_aval.dtype:
        converted = y_aval.update(dtype=x_aval.dtype)
        y = ctx.op("stablehlo.convert", [y], [y_aval], converted)
        y_aval = converted
    avals, args = broadcast_scalar_operands(ctx, [x_aval, y_aval], [x, y], avals_out[0].shape)
    return ctx.op("stablehlo.power", args, avals, avals_out[0])


pow_p = declare("pow", _pow_shape, None, _pow_lowering)
core.symbolic_dims_supported.add(pow_p)


def _pow_x_tangent(t, x, y, out):
    if not dtypes.is_int(core.get_aval(y).dtype):
        return _mul(t, _mul(y, pow_p.bind(x, _sub(y, _const(y, 1)))))
    # An integer exponent: y x^(y-1), except 0 where y == 0 (x^-1 may be inf there).
    slope = _mul(_as_dtype(y, x), pow_p.bind(x, _sub(y, _const(y, 1))))
    return _mul(t, _select(eq_p.bind(y, _const(y, 0)), _const(x, 0), slope))


def _pow_y_tangent(t, x, y, out):
    # x^y log(x), taken as 0 where x == 0 (as JAX does).
    safe_x = _select(eq_p.bind(x, _const(x, 0)), _const(x, 1), x)
    return _mul(t, _mul(log_p.bind(safe_x), out))


_defjvp(pow_p, _pow_x_tangent, _pow_y_tangent)
batching_rules[pow_p] = batch_elementwise(pow_p)


atan2_p = binary("atan2", libm_binary("atan2", lambda: atan2_p), "stablehlo.atan2", INEXACT)


def _sum_of_squares(x, y):
    return _add(_square(x), _square(y))


_defjvp(atan2_p, lambda t, x, y, out: _mul(t, _div(y, _sum_of_squares(x, y))),
        lambda t, x, y, out: _mul(t, _div(_neg(x), _sum_of_squares(x, y))))
def _nextafter(x, y):
    out = np.nextafter(x, y)
    if out.dtype == np.float16:
        # XLA gives y where x == y (so the sign of a zero is y's), as C's nextafter does;
        # NumPy's float16 version gives x.
        out = np.where(x == y, y, out).astype(out.dtype)
    return out


nextafter_p = binary("nextafter", _nextafter, "chlo.next_after", (FLOAT,))
defjvp_zero(nextafter_p)


# --- comparisons ---------------------------------------------------------------------

def _comparison(name, np_fn, direction, kinds=ANY, total=False):
    """A comparison primitive; `total`: floats compare in total order (below)."""
    def lower(ctx, avals_in, avals_out, x, y):
        kind = compare_type(avals_in[0].dtype)
        if total and dtypes.is_inexact(avals_in[0].dtype):  # complex: XLA refuses, as jax's
            kind = "#stablehlo<comparison_type TOTALORDER>"
        attrs = {"comparison_direction": f"#stablehlo<comparison_direction {direction}>",
                 "compare_type": kind}
        avals_in, args = broadcast_scalar_operands(ctx, avals_in, [x, y], avals_out[0].shape)
        return ctx.op("stablehlo.compare", args, avals_in, avals_out[0], attrs)
    prim = binary(name, np_fn, None, kinds, out_dtype=dtypes.bool_, lowering=lower)
    defjvp_zero(prim)
    return prim


eq_p = _comparison("eq", np.equal, "EQ")
ne_p = _comparison("ne", np.not_equal, "NE")
ORDERED = (BOOL, INT, FLOAT)
lt_p = _comparison("lt", np.less, "LT", ORDERED)
le_p = _comparison("le", np.less_equal, "LE", ORDERED)
gt_p = _comparison("gt", np.greater, "GT", ORDERED)
ge_p = _comparison("ge", np.greater_equal, "GE", ORDERED)


# jax's comparisons in total order: -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN for
# floats (NaNs ordered by their bits), the usual order otherwise; XLA's TOTALORDER.
def _total_order_key(x):
    """Signed integers that order as the floats x do in total order: a negative float's
    bits with all but the sign flipped."""
    bits = x.view(np.dtype(f"i{x.dtype.itemsize}"))
    return np.where(bits < 0, bits ^ np.array(np.iinfo(bits.dtype).max, bits.dtype), bits)


def _in_total_order(np_fn):
    def impl(x, y):
        x, y = np.asarray(x), np.asarray(y)
        if dtypes.is_complex(x.dtype):
            raise NoHostImpl  # XLA has no total order of complex numbers: its error
        if dtypes.is_float(x.dtype):
            x, y = _total_order_key(x), _total_order_key(y)
        return np_fn(x, y)
    return impl


# eq_to takes complex operands as jax's does (XLA then refuses to compile it)
eq_to_p = _comparison("eq_to", _in_total_order(np.equal), "EQ", ANY, total=True)
lt_to_p = _comparison("lt_to", _in_total_order(np.less), "LT", ORDERED, total=True)
le_to_p = _comparison("le_to", _in_total_order(np.less_equal), "LE", ORDERED, total=True)

# --- logic and bits ---------------------------------------------------------------------
and_p = binary("and", np.bitwise_and, "stablehlo.and", INTEGRAL)
or_p = binary("or", np.bitwise_or, "stablehlo.or", INTEGRAL)
xor_p = binary("xor", np.bitwise_xor, "stablehlo.xor", INTEGRAL)
for _prim in (and_p, or_p, xor_p):
    defjvp_zero(_prim)


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
for _prim in (shift_left_p, shift_right_arithmetic_p, shift_right_logical_p):
    defjvp_zero(_prim)



def _population_count_impl(x):
    # np.bitwise_count counts the bits of |x|; XLA counts those of x's two's complement.
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    return np.bitwise_count(x.view(unsigned)).astype(x.dtype)


population_count_p = unary("population_count", _population_count_impl, "stablehlo.popcnt",
                           (INT,))
defjvp_zero(population_count_p)


def _clz_impl(x):
    """The leading zero bits of x's two's complement: its width less its bit length."""
    bits = np.asarray(x).view(np.dtype(f"u{x.dtype.itemsize}")).copy()
    length = np.zeros(bits.shape, x.dtype)
    while bits.any():
        length += (bits != 0).astype(x.dtype)
        bits >>= 1
    return (np.array(8 * x.dtype.itemsize, x.dtype) - length).astype(x.dtype)


clz_p = unary("clz", _clz_impl, "stablehlo.count_leading_zeros", (INT,))
defjvp_zero(clz_p)


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
    """Binary tree of selects: case i is chosen where which == i (stablehlo.select takes
    a rank-0 predicate as it is)."""
    pred_aval, out = avals_in[0], avals_out[0]
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
    is_low = lower_compare(ctx, which, _splat(ctx, offset + mid, pred_aval), pred_aval, "LT")
    bool_aval = pred_aval.update(dtype=dtypes.bool_)
    return ctx.op("stablehlo.select", [is_low, low, high], [bool_aval, out, out], out)


select_n_p = declare("select_n", _select_n_shape, _select_n_impl, _select_n_lowering)
core.symbolic_dims_supported.add(select_n_p)


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    case_tangents = [instantiate(t) for t in tangents[1:]]
    return select_n_p.bind(which, *cases), select_n_p.bind(which, *case_tangents)


def _select_n_transpose(ct, which, *cases):
    """Linear in the cases: each linear case gets ct where it was chosen, 0 elsewhere."""
    if is_undefined(which):
        raise ValueError("select_n is not linear in its predicate, so it cannot be "
                         "transposed with respect to it")
    if is_zero(ct):
        return [None] * (1 + len(cases))
    zeros = _zeros_like(ct)
    cts = [None]
    for i, case in enumerate(cases):
        if not is_undefined(case):
            cts.append(None)
            continue
        picks = [ct if j == i else zeros for j in range(len(cases))]
        cts.append(select_n_p.bind(which, *picks))
    return cts


jvp_rules[select_n_p] = _select_n_jvp
transpose_rules[select_n_p] = _select_n_transpose
# The cases always share one shape; only the predicate may stay rank 0.
batching_rules[select_n_p] = batch_elementwise(select_n_p, scalar_ok=(0,))


def _select_n_simplify(invars, params, outvar, producers):
    """select_n of one case is that case."""
    return _if_same_type(invars[1] if len(invars) == 2 else None, outvar)


simplify_rules[select_n_p] = _select_n_simplify


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


def _clamp_impl(lo, x, hi):
    return np.minimum(np.maximum(x, lo), hi)


clamp_p = declare("clamp", _clamp_shape, _clamp_impl,
                  lambda ctx, ai, ao, lo, x, hi: ctx.op("stablehlo.clamp", [lo, x, hi], ai, ao[0]))
core.symbolic_dims_supported.add(clamp_p)


def _where_else_zero(pred, t):
    return _select(pred, t, _const(t, 0))


# As JAX: each operand's tangent flows where that operand is the result.
_defjvp(clamp_p,
        lambda t, lo, x, hi, out: _where_else_zero(
            and_p.bind(gt_p.bind(lo, x), lt_p.bind(lo, hi)), t),
        lambda t, lo, x, hi, out: _where_else_zero(
            and_p.bind(gt_p.bind(x, lo), lt_p.bind(x, hi)), t),
        lambda t, lo, x, hi, out: _where_else_zero(lt_p.bind(hi, x), t))
batching_rules[clamp_p] = batch_elementwise(clamp_p, scalar_ok=(0, 2))


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
    info = dtypes.iinfo(dtype)  # ml_dtypes knows int4 too
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
        real = src.update(dtype=dtypes.real_dtype(src.dtype))
        x = ctx.op("stablehlo.real", [x], [src], real)
        src = real
    if dst.dtype == dtypes.bool_:
        return lower_compare(ctx, x, _splat(ctx, 0, src), src, "NE")
    return ctx.op("stablehlo.convert", [x], [src], dst)


convert_element_type_p = declare("convert_element_type", _convert_shape, _convert_impl,
                                 _convert_lowering)
core.symbolic_dims_supported.add(convert_element_type_p)


def _convert_jvp(primals, tangents, new_dtype, weak_type=False):
    """Linear between inexact dtypes (complex -> real keeps the real part); a
    conversion to an integer or boolean dtype has no tangent."""
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if not dtypes.is_inexact(new_dtype):
        return out, Zero(tangent_aval(core.get_aval(out)))
    return out, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type)


def _convert_transpose(ct, x, new_dtype, weak_type=False):
    if is_zero(ct):
        return [None]
    if not dtypes.is_inexact(x.aval.dtype):
        return [Zero(tangent_aval(x.aval))]
    return [convert_element_type_p.bind(ct, new_dtype=x.aval.dtype, weak_type=x.aval.weak_type)]


jvp_rules[convert_element_type_p] = _convert_jvp
transpose_rules[convert_element_type_p] = _convert_transpose
batching_rules[convert_element_type_p] = batch_elementwise(convert_element_type_p)
simplify_rules[convert_element_type_p] = unchanged_operand


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
defjvp_zero(bitcast_convert_type_p)


def _bitcast_batch(axis_data, args, dims, new_dtype):
    """The batch axis stays put, unless it is the trailing axis that a bitcast to a
    wider dtype consumes: then it moves to the front first."""
    (x,), (d,) = args, dims
    aval = core.get_aval(x)
    if new_dtype.itemsize > aval.dtype.itemsize and d == aval.ndim - 1:
        x, d = move_batch_dim(x, d, 0), 0
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), d


batching_rules[bitcast_convert_type_p] = _bitcast_batch


# --- copy ------------------------------------------------------------------------
copy_p = declare("copy", lambda x: x, np.copy, lambda ctx, ai, ao, x: x)
core.symbolic_dims_supported.add(copy_p)
deflinear_unary(copy_p, lambda ct, aval: copy_p.bind(ct))
batching_rules[copy_p] = batch_elementwise(copy_p)
simplify_rules[copy_p] = unchanged_operand
