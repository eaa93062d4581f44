"""Elementwise functions (NumPy's ufuncs and their kin): math, arithmetic, comparisons,
bitwise and logical operations, with JAX's promotion and NumPy's broadcasting."""
import operator

import numpy as np

from funcgraph import core, dtypes, lax
from funcgraph.config import config
from funcgraph.array import Array
from funcgraph.numpy._core import (
    asarray_operand, astype, aval_of, broadcast_shapes, broadcast_to_shape,
    check_rank_promotion, promote_and_broadcast, promote_dtypes, promote_to_inexact)
from funcgraph.interpreters.eval import is_eager
from funcgraph.numpy._compiled import compiled_when_eager
from funcgraph.numpy._creation import full, ones_like, zeros_like
from funcgraph.numpy._types import bool_, float32, float64
from funcgraph.primitives import elementwise as ew


_INEXACT = frozenset([dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64,
                      dtypes.complex64, dtypes.complex128])


def _inexact_unary(prim):
    def fn(x, /):
        if not ((type(x) is Array or isinstance(x, core.Tracer)) and x.aval.dtype in _INEXACT):
            (x,) = promote_to_inexact(x)
        return prim.bind(x)
    core.named_function(fn, prim.name)
    return fn


def _binary(prim, inexact=False):
    def fn(x1, x2, /):
        if inexact:
            x1, x2 = promote_to_inexact(x1, x2)
        return prim.bind(*promote_and_broadcast(x1, x2, name=prim.name))
    core.named_function(fn, prim.name)
    return fn


sin = _inexact_unary(ew.sin_p)
cos = _inexact_unary(ew.cos_p)
tan = _inexact_unary(ew.tan_p)
arcsin = _inexact_unary(ew.asin_p)
arccos = _inexact_unary(ew.acos_p)
arctan = _inexact_unary(ew.atan_p)
sinh = _inexact_unary(ew.sinh_p)
cosh = _inexact_unary(ew.cosh_p)
tanh = _inexact_unary(ew.tanh_p)
arcsinh = _inexact_unary(ew.asinh_p)
arccosh = _inexact_unary(ew.acosh_p)
arctanh = _inexact_unary(ew.atanh_p)
exp = _inexact_unary(ew.exp_p)
exp2 = _inexact_unary(ew.exp2_p)
expm1 = _inexact_unary(ew.expm1_p)
log = _inexact_unary(ew.log_p)
log1p = _inexact_unary(ew.log1p_p)
sqrt = _inexact_unary(ew.sqrt_p)
cbrt = _inexact_unary(ew.cbrt_p)
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh


def log2(x, /):
    """log(x) / log(2), as jax computes it (complex: each part divided)."""
    (x,) = promote_to_inexact(x)
    return _scale_log(x, lambda part: ew.div_p.bind(part, _scalar_of(np.log(2), part)))


def log10(x, /):
    """log(x) * (1 / log(10)), as jax computes it (complex: each part multiplied)."""
    (x,) = promote_to_inexact(x)
    return _scale_log(x, lambda part: ew.mul_p.bind(
        part, _scalar_of(0.4342944819032518, part)))  # 1 / log(10)


def _scale_log(x, scale):
    out = ew.log_p.bind(x)
    if not dtypes.is_complex(aval_of(x).dtype):
        return scale(out)
    return lax.complex(scale(ew.real_p.bind(out)), scale(ew.imag_p.bind(out)))


def _scalar_of(value, x):
    """`value` as a rank-0 constant of x's dtype: elementwise primitives take it as it is."""
    aval = aval_of(x)
    return Array(np.array(value, aval.dtype), core.ShapedArray((), aval.dtype, aval.weak_type))


def _scalar_like(value, x):
    return broadcast_to_shape(_scalar_of(value, x), aval_of(x).shape)


def negative(x, /):
    return ew.neg_p.bind(asarray_operand(x))


def positive(x, /):
    return asarray_operand(x)


def sign(x, /):
    return ew.sign_p.bind(asarray_operand(x))


def absolute(x, /):
    x = asarray_operand(x)
    if aval_of(x).dtype == dtypes.bool_ or dtypes.is_unsigned(aval_of(x).dtype):
        return x
    return ew.abs_p.bind(x)


abs = absolute
fabs = absolute


def floor(x, /):
    x = asarray_operand(x)
    return x if not dtypes.is_float(aval_of(x).dtype) else ew.floor_p.bind(x)


def ceil(x, /):
    x = asarray_operand(x)
    return x if not dtypes.is_float(aval_of(x).dtype) else ew.ceil_p.bind(x)


def trunc(x, /):
    x = asarray_operand(x)
    if not dtypes.is_float(aval_of(x).dtype):
        return x
    return where_values(x < 0, ceil(x), floor(x))


def rint(x, /):
    (x,) = promote_to_inexact(x)
    return ew.round_p.bind(x, rounding_method=1)


def round(a, decimals=0, out=None):
    """To `decimals` digits, halves to even: x * 10^d rounded, divided by 10^d, as jax
    computes it (float16 through float32, complex numbers part by part)."""
    a = asarray_operand(a)
    decimals = operator.index(decimals)
    dtype = aval_of(a).dtype
    if not dtypes.is_inexact(dtype):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return a
    if decimals > np.log10(dtypes.finfo(dtype).max):
        return a  # beyond the type's precision: nothing to round

    def round_real(x):
        if decimals == 0:
            return ew.round_p.bind(x, rounding_method=1)
        wide = astype(x, np.float32) if dtype == np.float16 else x
        part = aval_of(wide).dtype
        factor = np.asarray(10 ** decimals, part)
        scaled = ew.round_p.bind(ew.mul_p.bind(wide, _scalar_of(factor, wide)),
                                 rounding_method=1)
        if part == dtypes.bfloat16:  # divided in float32 and rounded, by jax's XLA too
            out = ew.div_p.bind(scaled, _scalar_of(factor, wide))
        else:
            # jax divides by the constant factor inside a jit, which XLA turns into a
            # product with its rounded reciprocal: written so, eager results are jax's too
            out = ew.mul_p.bind(scaled, _scalar_of(np.asarray(1, part) / factor, wide))
        return astype(out, dtype) if dtype == np.float16 else out
    if dtypes.is_complex(dtype):
        return lax.complex(round_real(ew.real_p.bind(a)), round_real(ew.imag_p.bind(a)))
    return round_real(a)


around = round


def square(x, /):
    x = asarray_operand(x)
    if aval_of(x).dtype == np.bool_:  # as jax: booleans square as integers
        x = astype(x, dtypes.default_int())
    return ew.square_p.bind(x)


def reciprocal(x, /):
    (x,) = promote_to_inexact(x)
    return ew.integer_pow_p.bind(x, y=-1)


def isfinite(x, /):
    x = asarray_operand(x)
    if not dtypes.is_float(aval_of(x).dtype):
        return full(aval_of(x).shape, True, bool_)
    return ew.is_finite_p.bind(x)


def isnan(x, /):
    x = asarray_operand(x)
    if dtypes.is_extended(aval_of(x).dtype):
        return not_equal(x, x)  # jax's lax.ne(x, x): PRNG keys compare by their data
    return ew.ne_p.bind(x, x)


def isinf(x, /):
    x = asarray_operand(x)
    if not dtypes.is_float(aval_of(x).dtype):
        return full(aval_of(x).shape, False, bool_)
    return equal(absolute(x), np.inf)


subtract = _binary(ew.sub_p)


def add(x1, x2, /):
    x1, x2 = promote_and_broadcast(x1, x2, name="add")
    if aval_of(x1).dtype == dtypes.bool_:
        return ew.or_p.bind(x1, x2)  # as NumPy and JAX: boolean addition is `or`
    return ew.add_p.bind(x1, x2)


def _is_bool(x):
    t = type(x)
    if t is float or t is int:
        return False
    dtype = getattr(x, "dtype", None)
    return t is bool if dtype is None else dtype == dtypes.bool_


def multiply(x1, x2, /):
    operands = x1, x2
    bools = _is_bool(x1), _is_bool(x2)
    x1, x2 = promote_and_broadcast(x1, x2, name="mul")
    if bools[0] and bools[1]:  # promotion keeps bool only where both are
        return ew.and_p.bind(x1, x2)
    if bools[0] != bools[1]:
        # jax multiplies inside a jit, where XLA turns x * convert(b) for a boolean b into
        # select(b, x, 0): False times inf or nan is 0 there (libraries rely on it, e.g.
        # numpyro's `jnp.inf * mask`).  Written so, eager results are jax's too.
        shape = broadcast_shapes(aval_of(x1).shape, aval_of(x2).shape)
        other = broadcast_to_shape(x2 if bools[0] else x1, shape)
        mask = broadcast_to_shape(asarray_operand(operands[0 if bools[0] else 1]), shape)
        zero = _scalar_like(np.zeros((), aval_of(other).dtype), other)
        return ew.select_n_p.bind(mask, zero, other)
    return ew.mul_p.bind(x1, x2)


maximum = _binary(ew.max_p)
minimum = _binary(ew.min_p)
arctan2 = _binary(ew.atan2_p, inexact=True)
atan2 = arctan2
nextafter = _binary(ew.nextafter_p, inexact=True)
def _key_comparison(fn, combine):
    """equal/not_equal that also compare key arrays, by their key data (as jax)."""
    def compare(x1, x2, /):
        k1, k2 = (getattr(getattr(x, "aval", None), "dtype", None) for x in (x1, x2))
        if not (isinstance(k1, dtypes.ExtendedDType) or isinstance(k2, dtypes.ExtendedDType)):
            return fn(x1, x2)
        from funcgraph.random import key_data
        from funcgraph.numpy import all as all_, any as any_
        if k1 != k2:
            raise TypeError(f"{fn.__name__}: cannot compare {k1} with {k2}")
        same = fn(key_data(x1), key_data(x2))
        return (all_ if combine == "all" else any_)(same, axis=-1)
    core.named_function(compare, fn.__name__)
    return compare


equal = _key_comparison(_binary(ew.eq_p), "all")
not_equal = _key_comparison(_binary(ew.ne_p), "any")
def _ordered_comparison(prim):
    """less, greater, ...: complex operands compare lexicographically (real parts, then
    imaginary parts where the real parts are equal), as jax's and NumPy's."""
    def fn(x1, x2, /):
        x1, x2 = promote_and_broadcast(x1, x2, name=prim.name)
        if not dtypes.is_complex(aval_of(x1).dtype):
            return prim.bind(x1, x2)
        re1, re2 = ew.real_p.bind(x1), ew.real_p.bind(x2)
        return ew.select_n_p.bind(ew.eq_p.bind(re1, re2), prim.bind(re1, re2),
                                  prim.bind(ew.imag_p.bind(x1), ew.imag_p.bind(x2)))
    core.named_function(fn, prim.name)
    return fn


less = _ordered_comparison(ew.lt_p)
less_equal = _ordered_comparison(ew.le_p)
greater = _ordered_comparison(ew.gt_p)
greater_equal = _ordered_comparison(ew.ge_p)
bitwise_and = _binary(ew.and_p)
bitwise_or = _binary(ew.or_p)
bitwise_xor = _binary(ew.xor_p)
left_shift = _binary(ew.shift_left_p)


def right_shift(x1, x2, /):
    x1, x2 = promote_and_broadcast(x1, x2)
    if dtypes.is_unsigned(aval_of(x1).dtype):
        return ew.shift_right_logical_p.bind(x1, x2)
    return ew.shift_right_arithmetic_p.bind(x1, x2)


def invert(x, /):
    return ew.not_p.bind(asarray_operand(x))


bitwise_not = invert


def logical_and(x1, x2, /):
    return ew.and_p.bind(*promote_and_broadcast(astype(x1, bool_), astype(x2, bool_)))


def logical_or(x1, x2, /):
    return ew.or_p.bind(*promote_and_broadcast(astype(x1, bool_), astype(x2, bool_)))


def logical_xor(x1, x2, /):
    return ew.xor_p.bind(*promote_and_broadcast(astype(x1, bool_), astype(x2, bool_)))


def logical_not(x, /):
    return ew.not_p.bind(astype(x, bool_))


def true_divide(x1, x2, /):
    x1, x2 = promote_to_inexact(x1, x2)
    if is_eager() and _divisor_broadcast(x1, x2):
        # jax's eager and jitted quotients are XLA's: 1/x2 once, then a multiplication
        # (up to 1 ulp from the rounded quotient); a jitted funcgraph program gets XLA's
        # rewrite itself, the eager path computes the same.
        x1, x2 = promote_dtypes(x1, x2)
        return multiply(x1, ew.div_p.bind(ones_like(x2), x2))
    return ew.div_p.bind(*promote_and_broadcast(x1, x2, name="div"))


def _divisor_broadcast(x1, x2):
    a1, a2 = aval_of(x1), aval_of(x2)
    if a1.shape == a2.shape:  # the common case, decided before any promotion
        return False
    try:
        if np.broadcast_shapes(a1.shape, a2.shape) == a2.shape:
            return False
    except ValueError:
        return False  # the division reports the shapes
    dtype = dtypes.promote_weak((a1.dtype, a1.weak_type), (a2.dtype, a2.weak_type))[0]
    return np.dtype(dtype) in ew.RECIPROCAL_DIVIDED


divide = true_divide


def floor_divide(x1, x2, /):
    x1, x2 = promote_and_broadcast(x1, x2)
    dtype = aval_of(x1).dtype
    if dtype == dtypes.bool_:
        raise TypeError("floor_divide is not defined for booleans")
    if not dtypes.is_int(dtype):
        return _float_floor_divide(x1, x2)
    quotient = ew.div_p.bind(x1, x2)  # rounds toward zero; x // 0 is -1 (all bits set)
    if dtype.kind == "u":
        return quotient
    # Round down where the exact quotient is negative and not whole (as jax, also for 0).
    adjust = logical_and(not_equal(sign(x1), sign(x2)), not_equal(ew.rem_p.bind(x1, x2), 0))
    return where_values(adjust, quotient - 1, quotient)


def _float_floor_divide(x1, x2):
    return float_divmod(x1, x2)[0]


def float_divmod(x1, x2):
    """Python's float divmod of broadcast operands: the quotient (x1 - fmod(x1, x2)) / x2
    and the remainder fmod(x1, x2), moved by one divisor where the remainder and the
    divisor differ in sign. Unlike floor(x1 / x2) it gives +0.0 for (-0.0) // 2 and exact
    quotients near integers, as jax does."""
    mod = ew.rem_p.bind(x1, x2)
    quotient = ew.div_p.bind(where_values(equal(x2, 0), x1, x1 - mod), x2)
    fix = logical_and(not_equal(mod, 0), not_equal(sign(x2), sign(mod)))
    mod = where_values(fix, mod + x2, mod)
    quotient = where_values(fix, quotient - 1, quotient)
    return ew.round_p.bind(quotient, rounding_method=0), mod  # half away from zero


def _nonzero_divisor(x2):
    """Integer divisors with 0 replaced by 1, so that x % 0 is 0, as in jax."""
    return where_values(equal(x2, 0), ones_like(x2), x2)


def remainder(x1, x2, /):
    x1, x2 = promote_and_broadcast(x1, x2)
    if dtypes.is_int(aval_of(x1).dtype):
        x2 = _nonzero_divisor(x2)
    rem = ew.rem_p.bind(x1, x2)
    if dtypes.is_unsigned(aval_of(x1).dtype):
        return rem
    adjust = logical_and(not_equal(rem, 0), not_equal(less(rem, 0), less(x2, 0)))
    return where_values(adjust, rem + x2, rem)


mod = remainder


def fmod(x1, x2, /):
    x1, x2 = promote_and_broadcast(x1, x2)
    if dtypes.is_int(aval_of(x1).dtype):
        x2 = _nonzero_divisor(x2)
    return ew.rem_p.bind(x1, x2)


def power(x1, x2, /):
    if isinstance(x2, int) and not isinstance(x2, bool):
        if x2 < 0 and not dtypes.is_inexact(aval_of(x1).dtype):
            raise TypeError(f"Integers cannot be raised to negative powers, got "
                            f"integer_pow({aval_of(x1).str_short()}, {x2})")
        return ew.integer_pow_p.bind(asarray_operand(x1), y=x2)
    x1, x2 = promote_dtypes(x1, x2)
    dtype = aval_of(x1).dtype
    if dtypes.is_int(dtype) or dtype == dtypes.bool_:
        return _integer_power(x1, x2)
    return ew.pow_p.bind(*promote_and_broadcast(x1, x2, name="pow"))


def _integer_power(x, y):
    """x ** y for integer arrays by square-and-multiply over the low 6 bits of y (any
    larger exponent overflows unless |x| <= 1), with 0 ** y = 0 for y != 0: jax's
    results, including for negative y."""
    shapes = [aval_of(x).shape, aval_of(y).shape]
    if len(shapes[0]) != len(shapes[1]) and config.jax_numpy_rank_promotion != "allow":
        check_rank_promotion("power", shapes)
    shape = broadcast_shapes(*shapes, names="power")
    x, y = broadcast_to_shape(x, shape), broadcast_to_shape(y, shape)  # once, full size
    acc = where_values(logical_and(equal(x, 0), not_equal(y, 0)), zeros_like(x), ones_like(x))
    for _ in range(6):
        acc = where_values(bitwise_and(y, 1) == 1, acc * x, acc)
        x = x * x
        y = ew.shift_right_logical_p.bind(y, ones_like(y))
    return acc


pow = power


def float_power(x1, x2, /):
    dtype = float64 if dtypes.canonicalize(np.dtype(np.float64)) == np.float64 else float32
    return power(astype(x1, dtype), astype(x2, dtype))


@compiled_when_eager()
def hypot(x1, x2, /):
    """sqrt(x1**2 + x2**2) without overflow or underflow: big * sqrt(1 + (small/big)**2)."""
    x1, x2 = promote_and_broadcast(*promote_to_inexact(x1, x2))
    a, b = absolute(x1), absolute(x2)
    infinite = logical_or(equal(a, np.inf), equal(b, np.inf))
    big, small = maximum(a, b), minimum(a, b)
    at_zero = equal(big, 0)
    ratio = small / where_values(at_zero, ones_like(big), big)
    out = where_values(at_zero, big, big * sqrt(1 + ew.square_p.bind(ratio)))
    return where_values(infinite, _scalar_of(np.inf, out), out)


def copysign(x1, x2, /):
    x1, x2 = promote_and_broadcast(*promote_to_inexact(x1, x2))
    return where_values(signbit(x2), -absolute(x1), absolute(x1))


def signbit(x, /):
    x = asarray_operand(x)
    dtype = aval_of(x).dtype
    if not dtypes.is_float(dtype):
        return less(x, 0)
    # the sign bit shifted over the whole word: -1 where set, 0 where not
    bits = lax.bitcast_convert_type(x, np.dtype(f"i{dtype.itemsize}"))
    shift = _scalar_of(8 * dtype.itemsize - 1, bits)
    return astype(ew.shift_right_arithmetic_p.bind(bits, shift), bool_)


def conjugate(x, /):
    x = asarray_operand(x)
    return ew.conj_p.bind(x) if dtypes.is_complex(aval_of(x).dtype) else x


conj = conjugate


def real(x, /):
    x = asarray_operand(x)
    return ew.real_p.bind(x) if dtypes.is_complex(aval_of(x).dtype) else x


def imag(x, /):
    x = asarray_operand(x)
    return ew.imag_p.bind(x) if dtypes.is_complex(aval_of(x).dtype) else zeros_like(x)


def where_values(condition, x, y):
    """x where condition holds, else y (the three-argument where)."""
    cond_aval = aval_of(condition)
    # A weakly typed bool (a comparison of Python scalars' tracers) is used as it is.
    condition = (asarray_operand(condition) if cond_aval.dtype == bool_
                 else astype(condition, bool_))
    x, y = promote_dtypes(x, y)
    shape = broadcast_shapes(aval_of(condition).shape, aval_of(x).shape, aval_of(y).shape)
    condition, x, y = (broadcast_to_shape(a, shape) for a in (condition, x, y))
    return ew.select_n_p.bind(condition, y, x)


def clip(arr=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):
    arr = a if arr is None else arr
    lo = a_min if min is None else min
    hi = a_max if max is None else max
    arr = asarray_operand(arr)
    if lo is not None:
        arr = maximum(arr, lo)
    if hi is not None:
        arr = minimum(arr, hi)
    return arr
