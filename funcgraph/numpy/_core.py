"""The machinery of funcgraph.numpy: operands (and arrays made from Python objects),
dtype conversion, promotion and broadcasting."""
import math
import operator
import warnings

import numpy as np

from funcgraph import core, dtypes, lax, shape_poly
from funcgraph.config import config
from funcgraph.array import Array
from funcgraph.core import Tracer
from funcgraph.errors import calling_function, invalid_operand_error, sequence_operand_error
from funcgraph.interpreters.eval import impl_rules
from funcgraph.primitives import elementwise as ew
from funcgraph.primitives import structural as st


def aval_of(x):
    t = type(x)
    if t is Array:
        return x.aval
    if isinstance(x, Tracer):
        return x.aval
    if t in core.PYTHON_SCALARS:
        return core.aval_of_python_scalar(x)
    if t is shape_poly.DimExpr:  # a symbolic dimension is a (weakly typed) int value
        return core.aval_of_python_scalar(1)
    if hasattr(type(x), "__jax_array__"):  # an array-like object (flax's Variable, ...)
        return aval_of(x.__jax_array__())
    try:
        return core.aval_of_numpy(np.asarray(x))
    except (TypeError, ValueError):
        raise invalid_operand_error(x, "funcgraph.numpy") from None


def asarray_operand(x):
    """Arrays and tracers pass; Python scalars and NumPy values become Arrays; lists and
    tuples are jax's TypeError (funcgraph.numpy takes them where JAX's numpy does, in
    array(), asarray() and the like, which call array())."""
    t = type(x)
    if t is Array or isinstance(x, Tracer):
        return x
    if t in core.PYTHON_SCALARS:
        aval = core.aval_of_python_scalar(x)
        return Array(np.array(x, aval.dtype), aval)
    if isinstance(x, (list, tuple)):
        raise sequence_operand_error(x, "funcgraph.numpy")  # as jax: use asarray first
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in NUMERIC_KINDS:
        x = core.canonical_numpy(x)
        return Array(x, core.aval_of_numpy(x))
    if hasattr(x, "__jax_array__"):
        return asarray_operand(x.__jax_array__())
    raise invalid_operand_error(x, "funcgraph.numpy")


def convert(x, dtype, weak_type=False):
    """x as an operand of `dtype` (no-op when it already is)."""
    if hasattr(type(x), "__jax_array__") and type(x) is not shape_poly.DimExpr:
        x = x.__jax_array__()
    aval = aval_of(x)
    if aval.dtype == dtype and aval.weak_type == weak_type:
        return asarray_operand(x)
    t = type(x)
    if t in core.PYTHON_SCALARS:
        return python_scalar_array(x, dtype, weak_type)
    if t is shape_poly.DimExpr:
        x = asarray_operand(x)
    if t is Array and not aval.shape:
        # A concrete scalar converts now, so the IR shows a typed literal, not an equation.
        value = impl_rules[ew.convert_element_type_p](x._value, new_dtype=dtype)
        return Array(np.asarray(value), core.scalar_aval(dtype, weak_type))
    return ew.convert_element_type_p.bind(x, new_dtype=dtype, weak_type=weak_type)


_scalar_arrays = {}


def _zero_signs(x):
    """-0.0 == 0.0 and both hash alike: the signs of zeros keep their cache entries apart."""
    if type(x) is float:
        return math.copysign(1.0, x)
    if type(x) is complex:
        return (math.copysign(1.0, x.real), math.copysign(1.0, x.imag))
    return None


def python_scalar_array(x, dtype, weak_type):
    """A rank-0 Array for a Python scalar; shared, since arrays are immutable and code
    like `x * 0.5` meets the same constants again and again."""
    key = (type(x), x, _zero_signs(x), dtype, weak_type)
    arr = _scalar_arrays.get(key)
    if arr is None:
        if len(_scalar_arrays) > 4096:
            _scalar_arrays.clear()
        arr = _scalar_arrays[key] = Array(_python_scalar_value(x, dtype),
                                          core.scalar_aval(dtype, weak_type))
    return arr


def _python_scalar_value(x, dtype):
    """x as a NumPy value of dtype.  As in JAX, a Python int is first a value of the
    default int type (an OverflowError where it does not fit), then converted, wrapping:
    uint8 * 300 multiplies by 44."""
    if type(x) is int and dtypes.is_int(dtype):
        return np.array(x, dtypes.python_scalar_dtype(x)).astype(dtype)
    return np.array(x, dtype)


def broadcast_shapes(*shapes, names=None):
    """NumPy broadcasting of shapes; jax's errors: a ValueError naming the shapes, or,
    for an operation (`names`) on operands of one rank, its TypeError (jax's arrays of
    one rank meet in the lax operation, which raises it)."""
    ndim = max((len(s) for s in shapes), default=0)
    result = []
    for i in range(ndim):
        size = 1
        for s in shapes:
            d = s[i - ndim + len(s)] if i - ndim + len(s) >= 0 else 1
            if d != 1:
                if size != 1 and d != size:
                    if names and len({len(s) for s in shapes}) == 1:
                        shown = ", ".join(str(tuple(s)) for s in shapes)
                        raise TypeError(f"{names} got incompatible shapes for broadcasting: "
                                        f"{shown}.")
                    raise ValueError(f"Incompatible shapes for broadcasting: shapes="
                                     f"{[tuple(s) for s in shapes]}")
                size = d
        result.append(size)
    return tuple(result)


def broadcast_to_shape(x, shape):
    aval = aval_of(x)
    if aval.shape == shape:
        return x
    x = asarray_operand(x)
    lead = len(shape) - aval.ndim
    if lead < 0:
        raise ValueError(f"cannot broadcast an array of shape {aval.shape} to shape {shape}")
    for i, d in enumerate(aval.shape):
        if d != 1 and d != shape[lead + i]:
            raise ValueError(f"cannot broadcast an array of shape {aval.shape} to shape {shape}")
    # broadcast_in_dim stretches size-1 dimensions itself
    return st.broadcast_in_dim_p.bind(x, shape=shape,
                                      broadcast_dimensions=tuple(range(lead, len(shape))))


def _to_rank(x, shape, rank):
    """x with leading size-1 dimensions up to `rank`."""
    lead = rank - len(shape)
    if not lead:
        return x
    return st.broadcast_in_dim_p.bind(x, shape=(1,) * lead + tuple(shape),
                                      broadcast_dimensions=tuple(range(lead, rank)))


def promote_dtypes(*args):
    """Convert operands to their common dtype (JAX's lattice, weak types included)."""
    avals = [aval_of(a) for a in args]
    first = avals[0]
    if all(a.dtype == first.dtype and a.weak_type == first.weak_type for a in avals):
        dtype, weak = first.dtype, first.weak_type
    else:
        dtype, weak = dtypes.promote_weak(*[(a.dtype, a.weak_type) for a in avals])
    out = []
    for a, aval in zip(args, avals):
        ready = type(a) is Array or isinstance(a, Tracer)
        if ready and aval.dtype == dtype and aval.weak_type == weak:
            out.append(a)
        else:
            out.append(convert(a, dtype, weak))
    return out


def _promote_pair(a, b):
    """promote_dtypes for two operands, with the common cases first (the eager hot path)."""
    a_aval = a.aval if type(a) is Array else aval_of(a)
    b_aval = b.aval if type(b) is Array else aval_of(b)
    if a_aval.dtype == b_aval.dtype and a_aval.weak_type == b_aval.weak_type:
        dtype, weak = a_aval.dtype, a_aval.weak_type
    else:
        dtype, weak = dtypes.promote_weak((a_aval.dtype, a_aval.weak_type),
                                         (b_aval.dtype, b_aval.weak_type))
    if a_aval.dtype != dtype or a_aval.weak_type != weak or not (
            type(a) is Array or isinstance(a, Tracer)):
        a = convert(a, dtype, weak)
    if b_aval.dtype != dtype or b_aval.weak_type != weak or not (
            type(b) is Array or isinstance(b, Tracer)):
        b = convert(b, dtype, weak)
    return a, b, a_aval.shape, b_aval.shape


# (scalar's type, scalar, Array's dtype, its weak type, x64) -> the scalar as an operand
# next to such an Array, or False where promoting the two does not keep the Array's type
# (decided by the lattice once).  The common `x * 0.5` is then one lookup.  Zeros are
# left out (-0.0 == 0.0: the sign would be lost), and the size is bounded (NaN keys
# never match).
_scalar_operands = {}


def _with_python_scalar(array, scalar):
    """The Python scalar as an operand next to the Array, when promotion keeps the
    Array's type (the eager hot path skips promotion then); None otherwise."""
    aval = array.aval
    key = (type(scalar), scalar, aval.dtype, aval.weak_type, config.jax_enable_x64)
    operand = _scalar_operands.get(key) if scalar else None
    if operand is None:
        scalar_dtype = core.aval_of_python_scalar(scalar).dtype
        promoted = dtypes.promote_weak((aval.dtype, aval.weak_type), (scalar_dtype, True))
        keeps = promoted == (aval.dtype, aval.weak_type)
        operand = python_scalar_array(scalar, aval.dtype, aval.weak_type) if keeps else False
        if scalar:
            if len(_scalar_operands) > 4096:
                _scalar_operands.clear()
            _scalar_operands[key] = operand
    return None if operand is False else operand


_WEAK_PYTHON_SCALARS = (float, int)


def check_rank_promotion(name, shapes):
    """jax_numpy_rank_promotion: operands of two different non-zero ranks warn or raise."""
    if len({len(s) for s in shapes if s}) < 2:
        return
    shown = " ".join(str(tuple(s)) for s in shapes)
    if config.jax_numpy_rank_promotion == "warn":
        warnings.warn(f"Following NumPy automatic rank promotion for {name} on shapes "
                      f"{shown}. Set the jax_numpy_rank_promotion config option to 'allow' "
                      f"to disable this warning; for more information, see "
                      f"https://docs.jax.dev/en/latest/rank_promotion_warning.html.")
    elif config.jax_numpy_rank_promotion == "raise":
        raise ValueError(f"Operands could not be broadcast together for {name} on shapes "
                         f"{shown} and with the config option jax_numpy_rank_promotion="
                         f"'raise'. For more information, see "
                         f"https://docs.jax.dev/en/latest/rank_promotion_warning.html.")


def promote_and_broadcast(*args, name=None):
    """Promote, then broadcast to one shape; rank-0 operands stay rank 0 (elementwise
    primitives accept them next to shaped operands)."""
    if len(args) == 2:
        a, b = args
        # an array (or a tracer: tracing's hot path too) next to a Python scalar
        if type(b) in _WEAK_PYTHON_SCALARS and (type(a) is Array or isinstance(a, Tracer)):
            scalar = _with_python_scalar(a, b)
            if scalar is not None:
                return a, scalar
        elif type(a) in _WEAK_PYTHON_SCALARS and (type(b) is Array or isinstance(b, Tracer)):
            scalar = _with_python_scalar(b, a)
            if scalar is not None:
                return scalar, b
        a, b, a_shape, b_shape = _promote_pair(a, b)
        if a_shape == b_shape or not a_shape or not b_shape:
            return a, b
        if len(a_shape) != len(b_shape) and config.jax_numpy_rank_promotion != "allow":
            check_rank_promotion(name, [a_shape, b_shape])
        # As jax: the operands get one rank (leading size-1 dimensions); the primitive
        # stretches size-1 dimensions itself, inside its own kernel.
        rank = len(broadcast_shapes(a_shape, b_shape, names=name))
        return _to_rank(a, a_shape, rank), _to_rank(b, b_shape, rank)
    args = promote_dtypes(*args)
    shapes = [aval_of(a).shape for a in args]
    if all(s == shapes[0] or not s for s in shapes):
        return args
    if config.jax_numpy_rank_promotion != "allow":
        check_rank_promotion(name, shapes)
    shape = broadcast_shapes(*shapes, names=name)
    return [a if not s else broadcast_to_shape(a, shape) for a, s in zip(args, shapes)]


def promote_to_inexact(*args):
    """Promote, then make integers and booleans floating (for sin, sqrt, true division)."""
    args = promote_dtypes(*args)
    aval = aval_of(args[0])
    if not dtypes.is_inexact(aval.dtype):
        dtype = dtypes.to_inexact(aval.dtype, aval.weak_type)
        args = [convert(a, dtype, aval.weak_type) for a in args]
    return args


def static_int(value, name):
    """An int argument that must be known while tracing (an axis, a size)."""
    if isinstance(value, Tracer):
        where = calling_function("funcgraph.numpy") or "funcgraph.numpy"
        raise core.ConcretizationTypeError(
            f"{where}: {name} must be a static int, got a traced {value.aval.str_short()}; "
            f"under jit, pass it with static_argnums or compute it from shapes")
    return operator.index(value)


def check_axis(axis, ndim, name="axis"):
    axis = static_int(axis, name)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name} {axis} is out of bounds for an array of dimension {ndim}")
    return axis % ndim


def canonical_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(check_axis(a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"repeated axis in {axis}")
        return axes
    return (check_axis(axis, ndim),)


def canonical_dtype(dtype):
    return None if dtype is None else dtypes.canonicalize(np.dtype(dtype))


def shape_arg(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        return tuple(int(d) for d in shape)
    except shape_poly.InconclusiveDimensionOperation:
        return shape_poly.dims_tuple(shape)
    except TypeError:
        where = calling_function("funcgraph.numpy") or "funcgraph.numpy"
        raise TypeError(f"{where}: shape must be an int or a tuple of ints (static values), "
                        f"got {shape!r}; under jit, pass shapes with static_argnums") from None


def check_same_shapes(arrays, name):
    first = aval_of(arrays[0]).shape
    for i, a in enumerate(arrays[1:], 1):
        if aval_of(a).shape != first:
            raise ValueError(f"{name}: all input arrays must have the same shape, but arrays[0] "
                             f"has shape {first} and arrays[{i}] has shape {aval_of(a).shape}")


def astype(x, dtype, /, copy=False):
    current = aval_of(x).dtype
    if isinstance(dtype, dtypes.ExtendedDType) or isinstance(current, dtypes.ExtendedDType):
        return _astype_extended(x, current, dtype)
    dtype = dtypes.canonicalize(np.dtype(dtype))
    return convert(x, dtype, False)


def _astype_extended(x, current, dtype):
    """Key arrays convert only to their own dtype (a no-op), as in jax."""
    if current == dtype:
        return x
    if not isinstance(dtype, dtypes.ExtendedDType):
        dtype = np.dtype(dtype)
    elif isinstance(current, dtypes.ExtendedDType):
        raise ValueError(f"cannot directly convert between extended dtypes: from {current} "
                         f"to {dtype}; convert through their representation dtypes "
                         f"(random.key_data and random.wrap_key_data)")
    raise ValueError(f"Cannot convert_element_type from {current} to {dtype}")


# --- arrays from Python objects -----------------------------------------------------------

def array(object, dtype=None, copy=True, ndmin=0):
    if (type(object) is not Array and not isinstance(object, Tracer)
            and hasattr(type(object), "__jax_array__")):
        object = object.__jax_array__()  # a symbolic dimension's value, say
    if type(object) is Array or isinstance(object, Tracer):
        out = object if dtype is None else astype(object, dtype)
        if copy and out is object and type(object) is Array:
            # a new array, as jax's (it outlives the argument donated to a jit)
            out = ew.copy_p.bind(object)
    elif isinstance(object, (list, tuple)) and contains_traced(object):
        out = _stack_nested(object)
        out = astype(out, aval_of(out).dtype if dtype is None else dtype)
    else:
        if core.is_python_scalar(object) and dtype is None:
            # Weakly typed, as JAX's jnp.array(2.0) (bools are never weak).
            aval = core.aval_of_python_scalar(object)
            out = Array(np.array(object, aval.dtype), aval)
        else:
            value = np.array(object, dtype=canonical_dtype(dtype))
            if value.dtype.kind not in NUMERIC_KINDS:
                raise invalid_operand_error(object, "funcgraph.numpy")
            if dtype is None and value.dtype == np.float64 and not _all_numpy(object):
                value = value.astype(dtypes.default_float())
            value = core.canonical_numpy(value)
            out = Array(value, core.aval_of_numpy(value))
    for _ in range(ndmin - aval_of(out).ndim):
        out = lax.expand_dims(out, (0,))
    return out


# NumPy dtype kinds that hold numbers or booleans ("V" is ml_dtypes' bfloat16 and float8s).
NUMERIC_KINDS = frozenset("biufcV")


def _all_numpy(x):
    return isinstance(x, (np.ndarray, np.generic))


def _stack_nested(seq):
    """Nested sequences holding traced values, stacked; Python scalars stay weakly typed
    (so [x_f16, 1.0] is float16, as in JAX)."""
    items = [_stack_nested(o) if isinstance(o, (list, tuple)) else asarray_operand(o)
             for o in seq]
    if not items:
        raise ValueError("stack: need at least one array to stack")
    check_same_shapes(items, "stack")
    items = promote_dtypes(*[lax.expand_dims(a, (0,)) for a in items])
    return items[0] if len(items) == 1 else lax.concatenate(items, 0)


def contains_traced(seq):
    for o in seq:
        if isinstance(o, (Array, Tracer, shape_poly.DimExpr)):
            return True
        if isinstance(o, (list, tuple)) and contains_traced(o):
            return True
    return False


def asarray(a, dtype=None, order=None, copy=None):
    if (type(a) is Array or isinstance(a, Tracer)) and dtype is None and not copy:
        return a
    return array(a, dtype=dtype, copy=bool(copy))
