"""funcgraph.numpy: the NumPy API over funcgraph arrays (JAX's numpy semantics).

Functions promote dtypes with JAX's lattice, broadcast like NumPy and bind
funcgraph primitives, so they work eagerly and under every transformation."""
import builtins

import numpy as np

from funcgraph import core, dtypes as _dtypes
from funcgraph import lax
from funcgraph.array import Array as ndarray
from funcgraph.numpy._core import (
    asarray_operand, aval_of, broadcast_shapes, broadcast_to_shape, canonical_axes,
    check_axis, convert, promote_and_broadcast, promote_dtypes, promote_to_inexact)
from funcgraph.numpy import _core
from funcgraph.primitives import elementwise as ew
from funcgraph.primitives import reductions as red

# dtypes, as JAX's numpy module exports them
bool_ = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64
bfloat16 = _dtypes.bfloat16.type
complex64, complex128 = np.complex64, np.complex128
dtype = np.dtype
inf, nan, pi, e, euler_gamma = np.inf, np.nan, np.pi, np.e, np.euler_gamma
newaxis = None
integer, floating, complexfloating, inexact, number, signedinteger, unsignedinteger = (
    np.integer, np.floating, np.complexfloating, np.inexact, np.number, np.signedinteger,
    np.unsignedinteger)
iinfo = _dtypes.iinfo
finfo = _dtypes.finfo


def issubdtype(arg1, arg2):
    return np.issubdtype(arg1, arg2)


def result_type(*args):
    pairs = []
    for a in args:
        if isinstance(a, (type, np.dtype, str)) and not core.is_python_scalar(a):
            pairs.append((_dtypes.canonicalize(np.dtype(a)), False))
        else:
            aval = aval_of(a)
            pairs.append((aval.dtype, aval.weak_type))
    return _dtypes.result_type(*pairs)[0]


def promote_types(a, b):
    return _dtypes.result_type((_dtypes.canonicalize(np.dtype(a)), False),
                               (_dtypes.canonicalize(np.dtype(b)), False))[0]


def can_cast(from_, to, casting="safe"):
    return np.can_cast(from_, to, casting)


# --- creation ------------------------------------------------------------------------

def _canonical_dtype(dtype):
    return None if dtype is None else _dtypes.canonicalize(np.dtype(dtype))


def array(object, dtype=None, copy=True, ndmin=0):
    if isinstance(object, (ndarray, core.Tracer)):
        out = object if dtype is None else astype(object, dtype)
    elif isinstance(object, (list, tuple)) and _contains_traced(object):
        out = _stack_nested(object)
        out = astype(out, aval_of(out).dtype if dtype is None else dtype)
    else:
        if core.is_python_scalar(object) and dtype is None:
            aval = core.aval_of_python_scalar(object)
            value = np.array(object, aval.dtype)
            out = ndarray(value, core.ShapedArray((), aval.dtype, False))
        else:
            value = np.array(object, dtype=_canonical_dtype(dtype))
            if value.dtype == object_dtype:
                raise TypeError(f"funcgraph.numpy.array: cannot make an array of objects "
                                f"from {object!r}")
            if dtype is None and value.dtype == np.float64 and not _all_numpy(object):
                value = value.astype(_dtypes.default_float())
            value = core.canonical_numpy(value)
            out = ndarray(value, core.aval_of_numpy(value))
    for _ in range(ndmin - ndim(out)):
        out = expand_dims(out, 0)
    return out


object_dtype = np.dtype(object)


def _all_numpy(x):
    return isinstance(x, (np.ndarray, np.generic))


def _stack_nested(seq):
    """Nested sequences holding traced values, stacked; Python scalars stay weakly typed
    (so [x_f16, 1.0] is float16, as in JAX)."""
    return stack([_stack_nested(o) if isinstance(o, (list, tuple)) else asarray_operand(o)
                  for o in seq])


def _contains_traced(seq):
    for o in seq:
        if isinstance(o, (ndarray, core.Tracer)):
            return True
        if isinstance(o, (list, tuple)) and _contains_traced(o):
            return True
    return False


def asarray(a, dtype=None, order=None, copy=None):
    if isinstance(a, (ndarray, core.Tracer)) and dtype is None:
        return a
    return array(a, dtype=dtype)


def _full(shape, fill_value, dtype):
    shape = _shape_arg(shape)
    if dtype is None:
        fill = asarray_operand(fill_value)
        if aval_of(fill).weak_type:
            fill = convert(fill, aval_of(fill).dtype, False)
    else:
        fill = convert(fill_value, _dtypes.canonicalize(np.dtype(dtype)))
    return broadcast_to(fill, shape)


def _shape_arg(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"shape must be an int or a tuple of ints (static values), got "
                        f"{shape!r}; under jit, pass shapes with static_argnums") from None


def zeros(shape, dtype=None):
    dtype = _canonical_dtype(dtype) or _dtypes.default_float()
    shape = _shape_arg(shape)
    return ndarray(np.zeros(shape, dtype), core.ShapedArray(shape, dtype))


def ones(shape, dtype=None):
    dtype = _canonical_dtype(dtype) or _dtypes.default_float()
    shape = _shape_arg(shape)
    return ndarray(np.ones(shape, dtype), core.ShapedArray(shape, dtype))


def full(shape, fill_value, dtype=None):
    return _full(shape, fill_value, dtype)


def empty(shape, dtype=None):
    return zeros(shape, dtype)


def _like(a, dtype, shape):
    aval = aval_of(a)
    return (aval.shape if shape is None else _shape_arg(shape)), (dtype or aval.dtype)


def zeros_like(a, dtype=None, shape=None):
    shape, dtype = _like(a, dtype, shape)
    return full(shape, 0, dtype)


def ones_like(a, dtype=None, shape=None):
    shape, dtype = _like(a, dtype, shape)
    return full(shape, 1, dtype)


def full_like(a, fill_value, dtype=None, shape=None):
    shape, dtype = _like(a, dtype, shape)
    return full(shape, fill_value, dtype)


def empty_like(a, dtype=None, shape=None):
    return zeros_like(a, dtype, shape)


def _static_number(x, name):
    if isinstance(x, core.Tracer):
        raise core.ConcretizationTypeError(
            f"{name} must be a concrete value, got a traced {x.aval.str_short()}; under jit "
            f"pass it with static_argnums")
    return x.item() if isinstance(x, ndarray) else x


def arange(start, stop=None, step=None, dtype=None):
    start = _static_number(start, "arange start")
    stop = None if stop is None else _static_number(stop, "arange stop")
    step = None if step is None else _static_number(step, "arange step")
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    value = np.arange(start, stop, step)
    if dtype is None:
        dtype = _dtypes.default_int() if value.dtype.kind in "iu" else _dtypes.default_float()
    value = value.astype(_dtypes.canonicalize(np.dtype(dtype)))
    return ndarray(value, core.aval_of_numpy(value))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    num = int(num)
    dtype = _canonical_dtype(dtype) or _dtypes.default_float()
    start, stop = asarray_operand(start), asarray_operand(stop)
    start, stop = promote_to_inexact(start, stop)
    shape = broadcast_shapes(aval_of(start).shape, aval_of(stop).shape)
    div = (num - 1) if endpoint else num
    steps = arange(num, dtype=aval_of(start).dtype)
    steps = reshape(steps, (num,) + (1,) * len(shape))
    delta = (stop - start) / builtins.max(div, 1)
    out = start + steps * delta
    if endpoint and num > 1:
        out = concatenate([out[:-1], expand_dims(broadcast_to(stop, shape), 0)], axis=0)
    out = moveaxis(out, 0, axis) if axis != 0 else out
    out = astype(out, dtype)
    return (out, delta) if retstep else out


def eye(N, M=None, k=0, dtype=None):
    dtype = _canonical_dtype(dtype) or _dtypes.default_float()
    value = np.eye(N, M, k, dtype=dtype)
    return ndarray(value, core.aval_of_numpy(value))


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


# --- elementwise math --------------------------------------------------------------

_INEXACT = frozenset([_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64,
                      _dtypes.complex64, _dtypes.complex128])


def _inexact_unary(prim):
    def fn(x, /):
        if not ((type(x) is ndarray or isinstance(x, core.Tracer)) and x.aval.dtype in _INEXACT):
            (x,) = promote_to_inexact(x)
        return prim.bind(x)
    fn.__name__ = prim.name
    return fn


def _number_unary(prim):
    def fn(x, /):
        return prim.bind(asarray_operand(x))
    fn.__name__ = prim.name
    return fn


def _binary(prim, inexact=False):
    def fn(x1, x2, /):
        if inexact:
            x1, x2 = promote_to_inexact(x1, x2)
        return prim.bind(*promote_and_broadcast(x1, x2, name=prim.name))
    fn.__name__ = prim.name
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
    (x,) = promote_to_inexact(x)
    return ew.div_p.bind(ew.log_p.bind(x), _scalar_like(np.log(2), x))


def log10(x, /):
    (x,) = promote_to_inexact(x)
    return ew.div_p.bind(ew.log_p.bind(x), _scalar_like(np.log(10), x))


def _scalar_like(value, x):
    aval = aval_of(x)
    return broadcast_to_shape(ndarray(np.array(value, aval.dtype),
                                      core.ShapedArray((), aval.dtype, aval.weak_type)),
                              aval.shape)


def negative(x, /):
    return ew.neg_p.bind(asarray_operand(x))


def positive(x, /):
    return asarray_operand(x)


def sign(x, /):
    return ew.sign_p.bind(asarray_operand(x))


def absolute(x, /):
    x = asarray_operand(x)
    if aval_of(x).dtype == _dtypes.bool_ or _dtypes.is_unsigned(aval_of(x).dtype):
        return x
    return ew.abs_p.bind(x)


abs = absolute
fabs = absolute


def floor(x, /):
    x = asarray_operand(x)
    return x if not _dtypes.is_float(aval_of(x).dtype) else ew.floor_p.bind(x)


def ceil(x, /):
    x = asarray_operand(x)
    return x if not _dtypes.is_float(aval_of(x).dtype) else ew.ceil_p.bind(x)


def trunc(x, /):
    x = asarray_operand(x)
    if not _dtypes.is_float(aval_of(x).dtype):
        return x
    return where(x < 0, ceil(x), floor(x))


def rint(x, /):
    (x,) = promote_to_inexact(x)
    return ew.round_p.bind(x, rounding_method=1)


def round(a, decimals=0, out=None):
    a = asarray_operand(a)
    if not _dtypes.is_float(aval_of(a).dtype):
        return a
    if decimals == 0:
        return ew.round_p.bind(a, rounding_method=1)
    factor = 10.0 ** decimals
    return ew.round_p.bind(a * factor, rounding_method=1) / factor


around = round


def square(x, /):
    return ew.integer_pow_p.bind(asarray_operand(x), y=2)


def reciprocal(x, /):
    (x,) = promote_to_inexact(x)
    return ew.integer_pow_p.bind(x, y=-1)


def isfinite(x, /):
    x = asarray_operand(x)
    if not _dtypes.is_float(aval_of(x).dtype):
        return full(aval_of(x).shape, True, bool_)
    return ew.is_finite_p.bind(x)


def isnan(x, /):
    x = asarray_operand(x)
    return ew.ne_p.bind(x, x)


def isinf(x, /):
    x = asarray_operand(x)
    if not _dtypes.is_float(aval_of(x).dtype):
        return full(aval_of(x).shape, False, bool_)
    return equal(absolute(x), np.inf)


subtract = _binary(ew.sub_p)


def add(x1, x2, /):
    x1, x2 = promote_and_broadcast(x1, x2)
    if aval_of(x1).dtype == _dtypes.bool_:
        return ew.or_p.bind(x1, x2)  # as NumPy and JAX: boolean addition is `or`
    return ew.add_p.bind(x1, x2)


def multiply(x1, x2, /):
    x1, x2 = promote_and_broadcast(x1, x2)
    if aval_of(x1).dtype == _dtypes.bool_:
        return ew.and_p.bind(x1, x2)
    return ew.mul_p.bind(x1, x2)
maximum = _binary(ew.max_p)
minimum = _binary(ew.min_p)
arctan2 = _binary(ew.atan2_p, inexact=True)
atan2 = arctan2
nextafter = _binary(ew.nextafter_p, inexact=True)
equal = _binary(ew.eq_p)
not_equal = _binary(ew.ne_p)
less = _binary(ew.lt_p)
less_equal = _binary(ew.le_p)
greater = _binary(ew.gt_p)
greater_equal = _binary(ew.ge_p)
bitwise_and = _binary(ew.and_p)
bitwise_or = _binary(ew.or_p)
bitwise_xor = _binary(ew.xor_p)
left_shift = _binary(ew.shift_left_p)


def right_shift(x1, x2, /):
    x1, x2 = promote_and_broadcast(x1, x2)
    if _dtypes.is_unsigned(aval_of(x1).dtype):
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
    return ew.div_p.bind(*promote_and_broadcast(*promote_to_inexact(x1, x2)))


divide = true_divide


def floor_divide(x1, x2, /):
    x1, x2 = promote_and_broadcast(x1, x2)
    dtype = aval_of(x1).dtype
    if _dtypes.is_int(dtype):
        quotient = ew.div_p.bind(x1, x2)
        remainder = ew.rem_p.bind(x1, x2)
        adjust = logical_and(not_equal(remainder, 0), not_equal(less(remainder, 0), less(x2, 0)))
        return where(adjust, quotient - 1, quotient) if dtype.kind == "i" else quotient
    if dtype == _dtypes.bool_:
        raise TypeError("floor_divide is not defined for booleans")
    return floor(ew.div_p.bind(x1, x2))


def remainder(x1, x2, /):
    x1, x2 = promote_and_broadcast(x1, x2)
    rem = ew.rem_p.bind(x1, x2)
    if _dtypes.is_unsigned(aval_of(x1).dtype):
        return rem
    adjust = logical_and(not_equal(rem, 0), not_equal(less(rem, 0), less(x2, 0)))
    return where(adjust, rem + x2, rem)


mod = remainder


def fmod(x1, x2, /):
    return ew.rem_p.bind(*promote_and_broadcast(x1, x2))


def power(x1, x2, /):
    if isinstance(x2, int) and not isinstance(x2, bool) and x2 >= 0 or (
            isinstance(x2, int) and x2 < 0 and _dtypes.is_inexact(aval_of(x1).dtype)):
        return ew.integer_pow_p.bind(asarray_operand(x1), y=x2)
    x1, x2 = promote_and_broadcast(x1, x2)
    dtype = aval_of(x1).dtype
    if _dtypes.is_int(dtype) or dtype == _dtypes.bool_:
        return _integer_power(x1, x2)
    return ew.pow_p.bind(x1, x2)


def _integer_power(x, y):
    """x ** y for integer arrays by square-and-multiply over the bits of y."""
    acc = ones_like(x)
    base = x
    bits = aval_of(y).dtype.itemsize * 8
    for _ in range(bits):
        acc = where(bitwise_and(y, 1) == 1, acc * base, acc)
        base = base * base
        y = right_shift(y, 1)
    return acc


pow = power


def float_power(x1, x2, /):
    dtype = float64 if _dtypes.canonicalize(np.dtype(np.float64)) == np.float64 else float32
    return power(astype(x1, dtype), astype(x2, dtype))


def hypot(x1, x2, /):
    x1, x2 = promote_and_broadcast(*promote_to_inexact(x1, x2))
    return sqrt(x1 * x1 + x2 * x2)


def copysign(x1, x2, /):
    x1, x2 = promote_and_broadcast(*promote_to_inexact(x1, x2))
    return where(signbit(x2), -absolute(x1), absolute(x1))


def signbit(x, /):
    x = asarray_operand(x)
    dtype = aval_of(x).dtype
    if not _dtypes.is_float(dtype):
        return less(x, 0)
    bits = lax.bitcast_convert_type(x, np.dtype(f"i{dtype.itemsize}"))
    return less(bits, 0)


def conjugate(x, /):
    x = asarray_operand(x)
    return ew.conj_p.bind(x) if _dtypes.is_complex(aval_of(x).dtype) else x


conj = conjugate


def real(x, /):
    x = asarray_operand(x)
    return ew.real_p.bind(x) if _dtypes.is_complex(aval_of(x).dtype) else x


def imag(x, /):
    x = asarray_operand(x)
    return ew.imag_p.bind(x) if _dtypes.is_complex(aval_of(x).dtype) else zeros_like(x)


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("where takes one or three positional arguments")
    condition = astype(condition, bool_)
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


# --- dtype conversion --------------------------------------------------------------------

def astype(x, dtype, /, copy=False):
    dtype = _dtypes.canonicalize(np.dtype(dtype))
    return convert(x, dtype, False)


# --- reductions ----------------------------------------------------------------------------

def _reduce(prim, x, axis, keepdims, dtype=None, initial=None, where_=None, identity=None):
    x = asarray_operand(x)
    if dtype is not None:
        x = astype(x, dtype)
    aval = aval_of(x)
    axes = canonical_axes(axis, aval.ndim)
    if where_ is not None:
        x = where(where_, x, identity)
    out = prim.bind(x, axes=axes)
    if initial is not None:
        out = _initial_combine(prim, out, initial)
    if keepdims:
        out = reshape(out, tuple(1 if i in axes else d for i, d in enumerate(aval.shape)))
    return out


def _initial_combine(prim, out, initial):
    if prim is red.reduce_sum_p:
        return out + initial
    if prim is red.reduce_prod_p:
        return out * initial
    if prim is red.reduce_max_p:
        return maximum(out, initial)
    return minimum(out, initial)


def _sum_dtype(x, dtype):
    if dtype is not None:
        return dtype
    aval = aval_of(x)
    if aval.dtype == _dtypes.bool_ or (_dtypes.is_int(aval.dtype) and aval.dtype.itemsize < 4):
        return _dtypes.default_uint() if _dtypes.is_unsigned(aval.dtype) else _dtypes.default_int()
    return None


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    return _reduce(red.reduce_sum_p, a, axis, keepdims, _sum_dtype(a, dtype), initial, where, 0)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    return _reduce(red.reduce_prod_p, a, axis, keepdims, _sum_dtype(a, dtype), initial, where, 1)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _check_nonempty(a, axis, initial, "max")
    return _reduce(red.reduce_max_p, a, axis, keepdims, None, initial, where,
                   _lowest(aval_of(a).dtype))


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _check_nonempty(a, axis, initial, "min")
    return _reduce(red.reduce_min_p, a, axis, keepdims, None, initial, where,
                   _highest(aval_of(a).dtype))


amax, amin = max, min


def _lowest(dtype):
    return -np.inf if _dtypes.is_float(dtype) else (np.iinfo(dtype).min if dtype.kind in "iu" else False)


def _highest(dtype):
    return np.inf if _dtypes.is_float(dtype) else (np.iinfo(dtype).max if dtype.kind in "iu" else True)


def _check_nonempty(a, axis, initial, name):
    aval = aval_of(a)
    if initial is None and builtins.any(aval.shape[ax] == 0 for ax in canonical_axes(axis, aval.ndim)):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")


def all(a, axis=None, out=None, keepdims=False, where=None):
    return _reduce(red.reduce_and_p, astype(a, bool_), axis, keepdims, where_=where,
                   identity=True)


def any(a, axis=None, out=None, keepdims=False, where=None):
    return _reduce(red.reduce_or_p, astype(a, bool_), axis, keepdims, where_=where,
                   identity=False)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    a = asarray_operand(a)
    aval = aval_of(a)
    axes = canonical_axes(axis, aval.ndim)
    if where is None:
        count = int(np.prod([aval.shape[i] for i in axes]))
    else:
        count = sum(broadcast_to(where, aval.shape), axis=axis, keepdims=keepdims)
    if dtype is None:
        dtype = aval.dtype if _dtypes.is_inexact(aval.dtype) else _dtypes.default_float()
    total = sum(astype(a, dtype), axis=axis, keepdims=keepdims, where=where)
    return total / count if where is not None else total / _scalar(count, dtype)


def _scalar(value, dtype):
    return ndarray(np.array(value, dtype), core.ShapedArray((), np.dtype(dtype), True))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    a = asarray_operand(a)
    aval = aval_of(a)
    if dtype is None:
        dtype = aval.dtype if _dtypes.is_inexact(aval.dtype) else _dtypes.default_float()
    a = astype(a, dtype)
    centered = a - mean(a, axis, keepdims=True, where=where)
    sq = real(centered * conjugate(centered)) if _dtypes.is_complex(dtype) else centered * centered
    axes = canonical_axes(axis, aval.ndim)
    if where is None:
        count = int(np.prod([aval.shape[i] for i in axes]))
        return sum(sq, axis, keepdims=keepdims) / _scalar(builtins.max(count - ddof, 0), aval_of(sq).dtype)
    count = sum(broadcast_to(where, aval.shape), axis=axis, keepdims=keepdims)
    return sum(sq, axis, keepdims=keepdims, where=where) / (count - ddof)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    return sqrt(var(a, axis, dtype, ddof=ddof, keepdims=keepdims, where=where))


# --- shapes ------------------------------------------------------------------------------

def shape(a):
    return aval_of(a).shape


def ndim(a):
    return aval_of(a).ndim


def size(a, axis=None):
    aval = aval_of(a)
    return aval.size if axis is None else aval.shape[axis]


def reshape(a, shape=None, order="C", *, newshape=None):
    shape = newshape if shape is None else shape
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is supported")
    a = asarray_operand(a)
    shape = _shape_arg(shape)
    total = aval_of(a).size
    if shape.count(-1) > 1:
        raise ValueError(f"reshape: can only specify one unknown dimension, got {shape}")
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1]))
        if known == 0 or total % known:
            raise ValueError(f"cannot reshape array of size {total} into shape {shape}")
        shape = tuple(total // known if d == -1 else d for d in shape)
    if int(np.prod(shape)) != total:
        raise ValueError(f"cannot reshape array of shape {aval_of(a).shape} (size {total}) "
                         f"into shape {shape}")
    return _core.reshape(a, shape)


def ravel(a, order="C"):
    return reshape(a, (-1,))


def transpose(a, axes=None):
    a = asarray_operand(a)
    nd = aval_of(a).ndim
    axes = tuple(reversed(range(nd))) if axes is None else tuple(check_axis(x, nd) for x in axes)
    if sorted(axes) != list(range(nd)):
        raise ValueError(f"transpose: axes {axes} don't match an array of dimension {nd}")
    return lax.transpose(a, axes)


def permute_dims(a, axes):
    return transpose(a, axes)


def swapaxes(a, axis1, axis2):
    nd = ndim(a)
    perm = list(range(nd))
    i, j = check_axis(axis1, nd, "axis1"), check_axis(axis2, nd, "axis2")
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a, source, destination):
    nd = ndim(a)
    src = [check_axis(s, nd, "source") for s in ((source,) if isinstance(source, int) else source)]
    dst = [check_axis(d, nd, "destination")
           for d in ((destination,) if isinstance(destination, int) else destination)]
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of axes")
    order = [n for n in range(nd) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def squeeze(a, axis=None):
    a = asarray_operand(a)
    aval = aval_of(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(aval.shape) if d == 1)
    else:
        axes = canonical_axes(axis, aval.ndim)
        for ax in axes:
            if aval.shape[ax] != 1:
                raise ValueError(f"cannot select an axis to squeeze out which has size not "
                                 f"equal to one (axis {ax} of shape {aval.shape})")
    return lax.squeeze(a, axes)


def expand_dims(a, axis):
    a = asarray_operand(a)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out_ndim = aval_of(a).ndim + len(axes)
    axes = tuple(sorted(check_axis(ax, out_ndim) for ax in axes))
    return lax.expand_dims(a, axes)


def broadcast_to(array, shape):
    return broadcast_to_shape(asarray_operand(array), _shape_arg(shape))


def broadcast_arrays(*args):
    shape = broadcast_shapes(*(aval_of(a).shape for a in args))
    return [broadcast_to_shape(asarray_operand(a), shape) for a in args]


def atleast_1d(*arys):
    out = [reshape(a, (1,)) if ndim(a) == 0 else asarray_operand(a) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    out = []
    for a in arys:
        a = asarray_operand(a)
        out.append(reshape(a, (1,) * (2 - ndim(a)) + shape(a)) if ndim(a) < 2 else a)
    return out[0] if len(out) == 1 else out


# --- products ---------------------------------------------------------------------------

def dot(a, b, precision=None, preferred_element_type=None):
    a, b = promote_dtypes(a, b)
    na, nb = ndim(a), ndim(b)
    if na == 0 or nb == 0:
        return multiply(a, b)
    contract_b = 0 if nb == 1 else nb - 2
    return lax.dot_general(a, b, (((na - 1,), (contract_b,)), ((), ())),
                           preferred_element_type=preferred_element_type)


def matmul(a, b, precision=None, preferred_element_type=None):
    a, b = promote_dtypes(a, b)
    na, nb = ndim(a), ndim(b)
    if na == 0 or nb == 0:
        raise ValueError(f"matmul: operands must have at least one dimension, got shapes "
                         f"{shape(a)} and {shape(b)}")
    a2 = expand_dims(a, 0) if na == 1 else a
    b2 = expand_dims(b, -1) if nb == 1 else b
    sa, sb = shape(a2), shape(b2)
    if sa[-1] != sb[-2]:
        raise ValueError(f"matmul: contracting dimensions differ: shapes {shape(a)} and "
                         f"{shape(b)} ({sa[-1]} vs {sb[-2]})")
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    a2 = broadcast_to(a2, batch + sa[-2:])
    b2 = broadcast_to(b2, batch + sb[-2:])
    nbatch = len(batch)
    out = lax.dot_general(a2, b2, (((nbatch + 1,), (nbatch,)),
                                   (tuple(range(nbatch)), tuple(range(nbatch)))),
                          preferred_element_type=preferred_element_type)
    if na == 1:
        out = squeeze(out, -2)
    if nb == 1:
        out = squeeze(out, -1)
    return out


def vdot(a, b, precision=None):
    a = ravel(a)
    if _dtypes.is_complex(aval_of(a).dtype):
        a = conjugate(a)
    return dot(a, ravel(b))


def vecdot(x1, x2, axis=-1):
    return sum(conjugate(x1) * x2, axis=axis)


def inner(a, b):
    if ndim(a) == 0 or ndim(b) == 0:
        return multiply(a, b)
    return tensordot(a, b, ((ndim(a) - 1,), (ndim(b) - 1,)))


def outer(a, b):
    a, b = ravel(a), ravel(b)
    return multiply(expand_dims(a, 1), expand_dims(b, 0))


def tensordot(a, b, axes=2, precision=None):
    a, b = promote_dtypes(a, b)
    na, nb = ndim(a), ndim(b)
    if isinstance(axes, int):
        if axes > builtins.min(na, nb) or axes < 0:
            raise ValueError(f"tensordot: axes={axes} is invalid for operands of rank {na} and {nb}")
        ca, cb = tuple(range(na - axes, na)), tuple(range(axes))
    else:
        ca, cb = axes
        ca = (ca,) if isinstance(ca, int) else tuple(ca)
        cb = (cb,) if isinstance(cb, int) else tuple(cb)
        ca = tuple(check_axis(x, na) for x in ca)
        cb = tuple(check_axis(x, nb) for x in cb)
    return lax.dot_general(a, b, ((ca, cb), ((), ())))


def einsum(subscripts, *operands, optimize="auto", precision=None,
           preferred_element_type=None):
    from funcgraph.numpy._einsum import einsum as _einsum
    return _einsum(subscripts, *operands, optimize=optimize,
                   preferred_element_type=preferred_element_type)


# --- joining and splitting ----------------------------------------------------------------

def _as_sequence(arrays, name):
    """A list of operands from a sequence, or the rows of one array."""
    if isinstance(arrays, (ndarray, core.Tracer, np.ndarray)):
        arrays = asarray_operand(arrays)
        if ndim(arrays) == 0:
            raise ValueError(f"{name}: need a sequence of arrays, got a 0-d array")
        return [arrays[i] for i in range(shape(arrays)[0])]
    arrays = [asarray_operand(a) for a in arrays]
    if not arrays:
        raise ValueError(f"{name}: need at least one array to {name.split('.')[-1]}")
    return arrays


def concatenate(arrays, axis=0, dtype=None):
    arrays = _as_sequence(arrays, "concatenate")
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    if dtype is not None:
        arrays = [astype(a, dtype) for a in arrays]
    arrays = promote_dtypes(*arrays)
    first = aval_of(arrays[0])
    if first.ndim == 0:
        raise ValueError("concatenate: zero-dimensional arrays cannot be concatenated "
                         "(use stack, or reshape them to rank 1)")
    axis = check_axis(axis, first.ndim)
    for i, a in enumerate(arrays[1:], 1):
        other = aval_of(a)
        if other.ndim != first.ndim:
            raise ValueError(f"concatenate: all arrays must have the same number of dimensions, "
                             f"but arrays[0] has shape {first.shape} and arrays[{i}] has shape "
                             f"{other.shape}")
        if builtins.any(d0 != d1 for j, (d0, d1) in enumerate(zip(first.shape, other.shape))
                        if j != axis):
            raise ValueError(f"concatenate: array shapes must match except along axis {axis}, "
                             f"but arrays[0] has shape {first.shape} and arrays[{i}] has shape "
                             f"{other.shape}")
    if len(arrays) == 1:
        return arrays[0]
    return lax.concatenate(arrays, axis)


concat = concatenate


def stack(arrays, axis=0, out=None, dtype=None):
    arrays = _as_sequence(arrays, "stack")
    first = aval_of(arrays[0]).shape
    for i, a in enumerate(arrays[1:], 1):
        if aval_of(a).shape != first:
            raise ValueError(f"stack: all input arrays must have the same shape, but arrays[0] "
                             f"has shape {first} and arrays[{i}] has shape {aval_of(a).shape}")
    axis = check_axis(axis, len(first) + 1)
    return concatenate([expand_dims(a, axis) for a in arrays], axis, dtype=dtype)


def hstack(tup, dtype=None):
    arrays = [atleast_1d(a) for a in _as_sequence(tup, "hstack")]
    return concatenate(arrays, 0 if ndim(arrays[0]) == 1 else 1, dtype=dtype)


def vstack(tup, dtype=None):
    return concatenate([atleast_2d(a) for a in _as_sequence(tup, "vstack")], 0, dtype=dtype)


row_stack = vstack


def dstack(tup, dtype=None):
    return concatenate([atleast_3d(a) for a in _as_sequence(tup, "dstack")], 2, dtype=dtype)


def column_stack(tup):
    arrays = []
    for a in _as_sequence(tup, "column_stack"):
        arrays.append(reshape(a, (-1, 1)) if ndim(a) < 2 else a)
    return concatenate(arrays, 1)


def atleast_3d(*arys):
    out = []
    for a in arys:
        a = asarray_operand(a)
        if ndim(a) == 0:
            a = reshape(a, (1, 1, 1))
        elif ndim(a) == 1:
            a = reshape(a, (1, -1, 1))
        elif ndim(a) == 2:
            a = expand_dims(a, -1)
        out.append(a)
    return out[0] if len(out) == 1 else out


def _slice_axis(a, start, stop, axis):
    aval = aval_of(a)
    if start == 0 and stop == aval.shape[axis]:
        return a
    starts = [0] * aval.ndim
    limits = list(aval.shape)
    starts[axis], limits[axis] = start, stop
    return lax.slice(a, starts, limits)


def _split_points(indices_or_sections, size, equal, name):
    if isinstance(indices_or_sections, core.Tracer):
        raise core.ConcretizationTypeError(
            f"{name}: indices_or_sections must be static (a traced value was given); pass it "
            f"with static_argnums under jit")
    sections = np.asarray(indices_or_sections)
    if sections.ndim == 0:
        n = int(sections)
        if n <= 0:
            raise ValueError(f"{name}: number of sections must be larger than 0, got {n}")
        if equal and size % n:
            raise ValueError(f"{name}: array split does not result in an equal division "
                             f"({size} elements into {n} sections); use array_split")
        base, extra = builtins.divmod(size, n)
        sizes = [base + 1] * extra + [base] * (n - extra)
        return [0] + [int(s) for s in np.cumsum(sizes)[:-1]]
    return [0] + [int(i) for i in sections]


def _split(ary, indices_or_sections, axis, equal, name):
    ary = asarray_operand(ary)
    axis = check_axis(axis, ndim(ary))
    size = shape(ary)[axis]
    starts = _split_points(indices_or_sections, size, equal, name)
    stops = starts[1:] + [size]
    out = []
    for start, stop in zip(starts, stops):
        start = builtins.min(builtins.max(start + size if start < 0 else start, 0), size)
        stop = builtins.min(builtins.max(stop + size if stop < 0 else stop, start), size)
        out.append(_slice_axis(ary, start, stop, axis))
    return out


def split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, True, "split")


def array_split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, False, "array_split")


def hsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 0 if ndim(ary) == 1 else 1)


def vsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 2)


def flip(m, axis=None):
    m = asarray_operand(m)
    axes = canonical_axes(axis, ndim(m))
    return lax.rev(m, axes) if axes else m


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


# --- sorting, searching and cumulative ops ------------------------------------------------

def _axis_or_flat(a, axis):
    """(array, axis): axis=None flattens the array and works along its only axis."""
    a = asarray_operand(a)
    if axis is None:
        return ravel(a), 0
    return a, check_axis(axis, ndim(a))


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    if order is not None:
        raise NotImplementedError("sort: order= (structured arrays) is not supported")
    a, axis = _axis_or_flat(a, axis)
    out = lax.sort(a, dimension=axis, is_stable=stable)
    return lax.rev(out, (axis,)) if descending else out


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
    if order is not None:
        raise NotImplementedError("argsort: order= (structured arrays) is not supported")
    a, axis = _axis_or_flat(a, axis)
    index_dtype = _canonical_dtype(dtype) or _dtypes.default_int()
    iota = lax.broadcasted_iota(index_dtype, shape(a), axis)
    if descending and stable:
        # reversing first keeps equal keys in their original order once reversed back
        a, iota = lax.rev(a, (axis,)), lax.rev(iota, (axis,))
    _, indices = lax.sort_key_val(a, iota, dimension=axis, is_stable=stable)
    return lax.rev(indices, (axis,)) if descending else indices


def _cumulative(lax_fn, a, axis, dtype):
    a, axis = _axis_or_flat(a, axis)
    if dtype is not None:
        a = astype(a, dtype)
    elif aval_of(a).dtype == _dtypes.bool_:
        a = astype(a, _dtypes.default_int())
    return lax_fn(a, axis=axis)


def cumsum(a, axis=None, dtype=None, out=None):
    return _cumulative(lax.cumsum, a, axis, dtype)


def cumprod(a, axis=None, dtype=None, out=None):
    return _cumulative(lax.cumprod, a, axis, dtype)


def _argminmax(lax_fn, a, axis, keepdims, name):
    a = asarray_operand(a)
    nd = ndim(a)
    flat, ax = _axis_or_flat(a, axis)
    if shape(flat)[ax] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    out = lax_fn(flat, ax, _dtypes.default_int())
    if keepdims:
        kept = (1,) * nd if axis is None else tuple(
            1 if i == ax else d for i, d in enumerate(shape(a)))
        out = reshape(out, kept)
    return out


def argmax(a, axis=None, out=None, keepdims=None):
    return _argminmax(lax.argmax, a, axis, keepdims, "argmax")


def argmin(a, axis=None, out=None, keepdims=None):
    return _argminmax(lax.argmin, a, axis, keepdims, "argmin")


def ptp(a, axis=None, out=None, keepdims=False):
    return subtract(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


def _is_concrete(x):
    return not isinstance(x, core.Tracer)


def nonzero(a, *, size=None, fill_value=None):
    a = asarray_operand(a)
    if ndim(a) == 0:
        raise ValueError("nonzero of a 0-d array is not allowed; use "
                         "fnp.atleast_1d(x).nonzero() instead")
    index_dtype = _dtypes.default_int()
    if _is_concrete(a) and size is None:
        return tuple(array(i.astype(index_dtype)) for i in np.nonzero(np.asarray(a)))
    if size is None:
        raise core.ConcretizationTypeError(
            f"nonzero (also where(condition) and argwhere) of a traced array "
            f"{aval_of(a).str_short()}: the number of results is not known while tracing; "
            f"pass a static size=... (and optionally fill_value=...)")
    size = int(size)
    mask = ravel(not_equal(a, 0) if aval_of(a).dtype != _dtypes.bool_ else a)
    n = shape(mask)[0]
    # stable argsort of ~mask puts the positions of the nonzeros first, in order
    order = argsort(logical_not(mask)) if n else zeros((0,), index_dtype)
    if size > n:
        order = concatenate([order, zeros((size - n,), index_dtype)])
    flat = _slice_axis(order, 0, size, 0)
    valid = less(arange(size, dtype=index_dtype), sum(mask, dtype=index_dtype))
    fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * ndim(a)
    if len(fills) != ndim(a):
        raise ValueError(f"nonzero: fill_value must be a scalar or a tuple of length "
                         f"{ndim(a)}, got {fill_value!r}")
    out = []
    for coord, fill in core.safe_zip(unravel_index(flat, shape(a)), fills):
        out.append(where(valid, coord, 0 if fill is None else fill).astype(index_dtype))
    return tuple(out)


def flatnonzero(a, *, size=None, fill_value=None):
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    a = atleast_1d(a)
    result = nonzero(a, size=size, fill_value=fill_value)
    return stack(result, axis=1) if result else zeros((0, 0), _dtypes.default_int())


def unravel_index(indices, shape):
    """Coordinates of flat indices; as in JAX, negative indices count from the end and
    out-of-bounds ones are clipped into range."""
    indices = asarray_operand(indices)
    shape = _shape_arg(shape)
    total = int(np.prod(shape))
    if total:
        indices = clip(indices, -total, total - 1)
        indices = where(less(indices, 0), indices + total, indices)
    out = []
    for d in reversed(shape):
        out.append(remainder(indices, d) if d else zeros_like(indices))
        indices = floor_divide(indices, d) if d else indices
    return tuple(reversed(out))


# --- taking and repeating ----------------------------------------------------------------

def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    from funcgraph.numpy import _indexing
    a, axis = _axis_or_flat(a, axis)
    indices = asarray_operand(indices)
    if not _dtypes.is_int(aval_of(indices).dtype):
        raise TypeError(f"take: indices must be integers, got {aval_of(indices).str_short()}")
    mode = "fill" if mode is None else mode
    if mode == "raise":
        raise NotImplementedError("take: mode='raise' is not supported (indices are not "
                                  "checked at run time); use 'fill', 'clip' or 'wrap'")
    if mode == "wrap":
        indices, mode = remainder(indices, shape(a)[axis]), "promise_in_bounds"
    elif mode == "clip":
        # take's clip does not count negative indices from the end (unlike x[idx])
        indices = clip(indices, 0, builtins.max(shape(a)[axis] - 1, 0))
    if mode not in ("fill", "clip", "promise_in_bounds"):
        raise ValueError(f"take: invalid mode {mode!r}; use 'fill', 'clip' or 'wrap'")
    index = (slice(None),) * axis + (indices,)
    return _indexing.getitem(a, index, mode=mode, fill_value=fill_value,
                             unique_indices=unique_indices,
                             indices_are_sorted=indices_are_sorted)


def take_along_axis(arr, indices, axis, mode=None, fill_value=None):
    arr = asarray_operand(arr)
    indices = asarray_operand(indices)
    if axis is None:
        return take(ravel(arr), ravel(indices), mode=mode, fill_value=fill_value)
    nd = ndim(arr)
    axis = check_axis(axis, nd)
    if ndim(indices) != nd:
        raise ValueError(f"take_along_axis: indices must have the same number of dimensions "
                         f"as arr ({nd}), got shape {shape(indices)}")
    index = []
    for d in range(nd):
        if d == axis:
            index.append(indices)
        else:
            iota_shape = [1] * nd
            iota_shape[d] = shape(arr)[d]
            index.append(reshape(arange(shape(arr)[d]), iota_shape))
    from funcgraph.numpy import _indexing
    return _indexing.getitem(arr, tuple(index), mode="fill" if mode is None else mode,
                             fill_value=fill_value)


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    a, axis = _axis_or_flat(a, axis)
    size = shape(a)[axis]
    if isinstance(repeats, core.Tracer):
        if total_repeat_length is None:
            raise core.ConcretizationTypeError(
                f"repeat: traced repeats {aval_of(repeats).str_short()} need a static "
                f"total_repeat_length=... (the result's length along the axis)")
        return _repeat_traced(a, repeats, axis, int(total_repeat_length))
    counts = np.asarray(repeats)
    if counts.ndim == 0 or counts.shape == (1,):
        r = int(counts.reshape(()))
        if total_repeat_length is not None and r * size != total_repeat_length:
            return _repeat_traced(a, broadcast_to(asarray(counts.reshape(())), (size,)), axis,
                                  int(total_repeat_length))
        return _repeat_scalar(a, r, axis)
    if counts.shape != (size,):
        raise ValueError(f"repeat: repeats must be a scalar or have length {size} (the size "
                         f"of axis {axis}), got shape {counts.shape}")
    if total_repeat_length is not None:
        return _repeat_traced(a, asarray(counts), axis, int(total_repeat_length))
    positions = np.repeat(np.arange(size), counts).astype(_dtypes.default_int())
    return take(a, positions, axis=axis, mode="promise_in_bounds")


def _repeat_scalar(a, r, axis):
    if r < 0:
        raise ValueError(f"repeat: repeats may not be negative, got {r}")
    s = shape(a)
    widened = broadcast_to(expand_dims(a, axis + 1), s[:axis + 1] + (r,) + s[axis + 1:])
    return reshape(widened, s[:axis] + (s[axis] * r,) + s[axis + 1:])


def _repeat_traced(a, repeats, axis, total):
    """Repeat with run-time counts: mark where each block starts, then a cumulative sum
    of the marks gives every output position the index of its source element."""
    ends = cumsum(repeats)
    marks = zeros((total,), _dtypes.default_int()).at[ends[:-1]].add(1, mode="drop")
    positions = cumsum(marks)
    return take(a, positions, axis=axis, mode="clip")


def diagonal(a, offset=0, axis1=0, axis2=1):
    a = asarray_operand(a)
    nd = ndim(a)
    if nd < 2:
        raise ValueError(f"diagonal requires an array of at least two dimensions, got shape "
                         f"{shape(a)}")
    i, j = check_axis(axis1, nd, "axis1"), check_axis(axis2, nd, "axis2")
    if i == j:
        raise ValueError("diagonal: axis1 and axis2 cannot be the same")
    a = moveaxis(a, (i, j), (-2, -1))
    *lead, n, m = shape(a)
    offset = int(offset)
    row0, col0 = (0, offset) if offset >= 0 else (-offset, 0)
    length = builtins.max(0, builtins.min(n - row0, m - col0))
    if not length:
        row0 = col0 = 0
    # the diagonal of the rows [row0, row0 + length) is every (m + 1)-th element of them,
    # flattened, from col0 on: one reshape and one strided slice
    rows = _slice_axis(a, row0, row0 + length, len(lead))
    flat = reshape(rows, tuple(lead) + (length * m,))
    stop = col0 + (length - 1) * (m + 1) + 1 if length else 0
    starts = [0] * len(lead) + [col0]
    return lax.slice(flat, starts, tuple(lead) + (stop,), (1,) * len(lead) + (m + 1,))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


# --- triangles and diagonals ------------------------------------------------------------

def _tri_mask(n, m, k):
    rows = lax.broadcasted_iota(_dtypes.default_int(), (n, m), 0)
    cols = lax.broadcasted_iota(_dtypes.default_int(), (n, m), 1)
    return greater_equal(rows + k, cols)


def tri(N, M=None, k=0, dtype=None):
    dtype = _canonical_dtype(dtype) or _dtypes.default_float()
    M = N if M is None else M
    return astype(_tri_mask(int(N), int(M), int(k)), dtype)


def tril(m, k=0):
    m = asarray_operand(m)
    if ndim(m) < 2:
        raise ValueError(f"tril requires an array of at least two dimensions, got shape {shape(m)}")
    *_, n, cols = shape(m)
    return where(_tri_mask(n, cols, int(k)), m, zeros_like(m))


def triu(m, k=0):
    m = asarray_operand(m)
    if ndim(m) < 2:
        raise ValueError(f"triu requires an array of at least two dimensions, got shape {shape(m)}")
    *_, n, cols = shape(m)
    return where(_tri_mask(n, cols, int(k) - 1), zeros_like(m), m)


def diag(v, k=0):
    v = asarray_operand(v)
    k = int(k)
    if ndim(v) == 2:
        return diagonal(v, k)
    if ndim(v) != 1:
        raise ValueError(f"diag: input must be 1-d or 2-d, got shape {shape(v)}")
    n = shape(v)[0] + builtins.abs(k)
    padding = zeros((builtins.abs(k),), aval_of(v).dtype)
    line = concatenate([v, padding]) if k else v
    rows = lax.broadcasted_iota(_dtypes.default_int(), (n, n), 0)
    cols = lax.broadcasted_iota(_dtypes.default_int(), (n, n), 1)
    on_diagonal = equal(cols - rows, k)
    values = expand_dims(line, 1) if k >= 0 else expand_dims(line, 0)
    return where(on_diagonal, values, zeros((), aval_of(v).dtype))


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xi = [ravel(x) for x in xi]
    n = len(xi)
    out_shape = [shape(x)[0] for x in xi]
    if indexing == "xy" and n >= 2:
        out_shape[0], out_shape[1] = out_shape[1], out_shape[0]
    out = []
    for i, x in enumerate(xi):
        dim = i
        if indexing == "xy" and n >= 2 and i < 2:
            dim = 1 - i
        lone = [1] * n
        lone[dim] = shape(x)[0]
        x = reshape(x, lone)
        out.append(x if sparse else broadcast_to(x, out_shape))
    return out


# --- operators and methods shared by Array and tracers ---------------------------------
from funcgraph.numpy._methods import install_methods  # noqa: E402

install_methods()

# --- breadth: functions composed from the ones above -------------------------------------
from funcgraph.numpy._math import (  # noqa: E402
    allclose, array_equal, array_equiv, count_nonzero, deg2rad, degrees, divmod, fix, fmax, fmin,
    geomspace, heaviside, interp, isclose, isneginf, isposinf, logaddexp, logaddexp2,
    logspace, modf, nan_to_num, rad2deg, radians, select, sinc, vander)
from funcgraph.numpy._stats import (  # noqa: E402
    average, bincount, convolve, correlate, digitize, histogram, histogram_bin_edges,
    median, nanargmax, nanargmin, nancumprod, nancumsum, nanmax, nanmean, nanmedian, nanmin,
    nanpercentile, nanprod, nanquantile, nanstd, nansum, nanvar, percentile, quantile)
from funcgraph.numpy._manipulation import (  # noqa: E402
    append, cross, delete, diff, ediff1d, insert, kron, pad, roll, rot90, tile)
from funcgraph.numpy._setops import (  # noqa: E402
    intersect1d, isin, searchsorted, setdiff1d, union1d, unique, unique_all,
    unique_counts, unique_inverse, unique_values)
from funcgraph.numpy import linalg  # noqa: E402,F401
from funcgraph.numpy._extras import (  # noqa: E402,F401
    block, lexsort, polyval, trapezoid, tril_indices, tril_indices_from, triu_indices,
    triu_indices_from)
