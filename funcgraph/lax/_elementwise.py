"""Elementwise operations, one per primitive, plus select, clamp, conversions and
stop_gradient."""
import operator

import numpy as np

from funcgraph import core, dtypes, tree_util
from funcgraph.lax._operands import as_operand, match_scalars
from funcgraph.lax._shapes import broadcast_in_dim
from funcgraph.primitives import elementwise as ew
from funcgraph.primitives.custom_ad import stop_gradient_p


def _unary(prim):
    def fn(x):
        return prim.bind(as_operand(x))
    core.named_function(fn, prim.name)
    fn.__doc__ = f"Elementwise {prim.name} (the `{prim.name}` primitive)."
    return fn


def _binary(prim):
    def fn(x, y):
        return prim.bind(*match_scalars([x, y]))
    core.named_function(fn, prim.name)
    fn.__doc__ = f"Elementwise {prim.name} (the `{prim.name}` primitive)."
    return fn


neg = _unary(ew.neg_p)
sign = _unary(ew.sign_p)
floor = _unary(ew.floor_p)
ceil = _unary(ew.ceil_p)
is_finite = _unary(ew.is_finite_p)
exp = _unary(ew.exp_p)
exp2 = _unary(ew.exp2_p)
log = _unary(ew.log_p)
log1p = _unary(ew.log1p_p)
expm1 = _unary(ew.expm1_p)
tanh = _unary(ew.tanh_p)
logistic = _unary(ew.logistic_p)
sin = _unary(ew.sin_p)
cos = _unary(ew.cos_p)
tan = _unary(ew.tan_p)
asin = _unary(ew.asin_p)
acos = _unary(ew.acos_p)
atan = _unary(ew.atan_p)
sinh = _unary(ew.sinh_p)
cosh = _unary(ew.cosh_p)
asinh = _unary(ew.asinh_p)
acosh = _unary(ew.acosh_p)
atanh = _unary(ew.atanh_p)
sqrt = _unary(ew.sqrt_p)
rsqrt = _unary(ew.rsqrt_p)
cbrt = _unary(ew.cbrt_p)
abs = _unary(ew.abs_p)
erf = _unary(ew.erf_p)
erf_inv = _unary(ew.erf_inv_p)
erfc = _unary(ew.erfc_p)
lgamma = _unary(ew.lgamma_p)
digamma = _unary(ew.digamma_p)
real = _unary(ew.real_p)
imag = _unary(ew.imag_p)
conj = _unary(ew.conj_p)
bitwise_not = _unary(ew.not_p)
population_count = _unary(ew.population_count_p)
clz = _unary(ew.clz_p)

add = _binary(ew.add_p)
sub = _binary(ew.sub_p)
mul = _binary(ew.mul_p)
div = _binary(ew.div_p)
rem = _binary(ew.rem_p)
max = _binary(ew.max_p)
min = _binary(ew.min_p)
pow = _binary(ew.pow_p)
atan2 = _binary(ew.atan2_p)
nextafter = _binary(ew.nextafter_p)
polygamma = _binary(ew.polygamma_p)
zeta = _binary(ew.zeta_p)
eq = _binary(ew.eq_p)
ne = _binary(ew.ne_p)
lt = _binary(ew.lt_p)
le = _binary(ew.le_p)
gt = _binary(ew.gt_p)
ge = _binary(ew.ge_p)
bitwise_and = _binary(ew.and_p)
bitwise_or = _binary(ew.or_p)
bitwise_xor = _binary(ew.xor_p)
shift_left = _binary(ew.shift_left_p)
shift_right_arithmetic = _binary(ew.shift_right_arithmetic_p)
shift_right_logical = _binary(ew.shift_right_logical_p)


class RoundingMethod:
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    return ew.round_p.bind(as_operand(x), rounding_method=int(rounding_method))


def integer_pow(x, y):
    if isinstance(y, bool) or not isinstance(y, (int, np.integer)):
        raise TypeError(f"lax.integer_pow needs a static integer exponent, got {y!r}")
    return ew.integer_pow_p.bind(as_operand(x), y=int(y))


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """operand rounded to the nearest value of a float format with exponent_bits exponent
    and mantissa_bits mantissa bits (overflowing to inf), kept in operand's dtype."""
    exponent_bits = _static_int(exponent_bits, "exponent_bits argument of lax.reduce_precision")
    mantissa_bits = _static_int(mantissa_bits, "mantissa_bits argument of lax.reduce_precision")
    return ew.reduce_precision_p.bind(as_operand(operand), exponent_bits=exponent_bits,
                                      mantissa_bits=mantissa_bits)


def _static_int(value, what):
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be a static integer, got {value!r}") from None


square = _unary(ew.square_p)


def reciprocal(x):
    return integer_pow(x, -1)


def select_n(which, *cases):
    if not cases:
        raise ValueError("select_n needs at least one case")
    cases = match_scalars(cases)
    shapes = [c.aval.shape for c in cases if c.aval.shape]
    if shapes:
        cases = [c if c.aval.shape else broadcast_in_dim(c, shapes[0], ()) for c in cases]
    return ew.select_n_p.bind(as_operand(which), *cases)


def select(pred, on_true, on_false):
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):
    return ew.clamp_p.bind(*match_scalars([min, x, max]))


def convert_element_type(x, new_dtype, weak_type=False):
    new_dtype = dtypes.canonicalize(new_dtype)
    x = as_operand(x)
    if x.aval.dtype == new_dtype and x.aval.weak_type == weak_type:
        return x
    return ew.convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)


def bitcast_convert_type(x, new_dtype):
    return ew.bitcast_convert_type_p.bind(as_operand(x), new_dtype=dtypes.canonicalize(new_dtype))


def copy_p_bind(x):
    return ew.copy_p.bind(as_operand(x))


def stop_gradient(x):
    """x, with no derivative flowing through it (applied to every leaf of a pytree)."""
    def stop(leaf):
        leaf = as_operand(leaf)
        if not dtypes.is_inexact(leaf.aval.dtype):
            return leaf
        return stop_gradient_p.bind(leaf)
    return tree_util.tree_map(stop, x)
