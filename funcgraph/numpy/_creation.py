"""Arrays made from shapes: zeros, ones, full, empty (and their *_like), arange, eye."""
import numpy as np

from funcgraph import core, dtypes, lax, shape_poly
from funcgraph.array import Array
from funcgraph.errors import sequence_operand_error
from funcgraph.interpreters.eval import is_eager
from funcgraph.numpy._core import (
    asarray_operand, aval_of, broadcast_to_shape, canonical_dtype, convert, shape_arg)


# Under a transformation zeros, ones and full broadcast a scalar (a broadcast_in_dim
# equation, not a constant the size of the array: jit(lambda: zeros((10**6, 10**6)))
# traces in no memory); eagerly zeros and ones make the array directly.

def _filled(shape, value, dtype):
    dtype = canonical_dtype(dtype) or dtypes.default_float()
    if not is_eager():
        return full(shape, value, dtype)
    shape = shape_arg(shape)
    return Array(np.full(shape, value, dtype), core.ShapedArray(shape, dtype))


def zeros(shape, dtype=None):
    return _filled(shape, 0, dtype)


def ones(shape, dtype=None):
    return _filled(shape, 1, dtype)


def full(shape, fill_value, dtype=None):
    shape = shape_arg(shape)
    if dtype is None:  # a weakly typed fill (a Python scalar) gives a weak array, as jax's
        fill = asarray_operand(fill_value)
    else:
        fill = convert(fill_value, dtypes.canonicalize(np.dtype(dtype)))
    out = broadcast_to_shape(fill, shape)
    if type(out) is Array and not shape:
        # a new array each call, as jax's, not the scalar shared by conversions (code
        # that caches by identity, as tfp's bijectors, must not find it again)
        out = Array(out._value, out.aval)
    return out


def empty(shape, dtype=None):
    return zeros(shape, dtype)


def zeros_like(a, dtype=None, shape=None):
    return _full_like(a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None):
    return _full_like(a, 1, dtype, shape)


def full_like(a, fill_value, dtype=None, shape=None):
    return _full_like(a, fill_value, dtype, shape)


def _full_like(a, fill_value, dtype, shape):
    """As jax's: `a` may be anything with a shape and a dtype (jax.ShapeDtypeStruct), and
    without a dtype the result keeps a's dtype and weak type."""
    if isinstance(a, (list, tuple)):
        raise sequence_operand_error(a, "funcgraph.numpy")  # as jax's
    if hasattr(a, "shape") and hasattr(a, "dtype") and not isinstance(a, (Array, core.Tracer)):
        aval = core.ShapedArray(tuple(a.shape), dtypes.canonicalize(np.dtype(a.dtype)),
                                bool(getattr(a, "weak_type", False)))
    else:
        aval = aval_of(a)
    shape = aval.shape if shape is None else shape_arg(shape)
    if dtype is not None:
        return full(shape, fill_value, dtype)
    return broadcast_to_shape(convert(fill_value, aval.dtype, aval.weak_type), shape)


def empty_like(a, dtype=None, shape=None):
    return zeros_like(a, dtype, shape)


def _static_number(x, name):
    if isinstance(x, core.Tracer):
        raise core.ConcretizationTypeError(
            f"{name} must be a concrete value, got a traced {x.aval.str_short()}; under jit "
            f"pass it with static_argnums")
    return x.item() if isinstance(x, Array) else x


def arange(start, stop=None, step=None, dtype=None):
    start = _static_number(start, "arange start")
    stop = None if stop is None else _static_number(stop, "arange stop")
    step = None if step is None else _static_number(step, "arange step")
    if stop is None:
        start, stop = 0, start
    step_given = step is not None
    step = 1 if step is None else step
    if shape_poly.is_symbolic_dim(stop):
        return _symbolic_arange(start, stop, step, dtype)
    value = np.arange(start, stop, step)
    if dtype is None:
        dtype = dtypes.default_int() if value.dtype.kind in "iu" else dtypes.default_float()
    dtype = dtypes.canonicalize(np.dtype(dtype))
    if step_given and dtypes.is_float(dtype):
        # as jax: start + step * i, each rounded in the dtype (float32 at least)
        work = np.dtype(np.float32) if dtype.itemsize < 4 else dtype
        i = np.arange(value.shape[0], dtype=work)
        value = np.asarray(start, work) + np.asarray(step, work) * i
    value = value.astype(dtype)
    return Array(value, core.aval_of_numpy(value))


def _symbolic_arange(start, stop, step, dtype):
    """arange(b) of a symbolic length: an iota (start 0 and step 1 only)."""
    if start != 0 or step != 1:
        raise NotImplementedError(f"arange with a symbolic stop ({stop}) supports only start=0 "
                                  f"and step=1, got start={start}, step={step}")
    dtype = dtypes.default_int() if dtype is None else dtypes.canonicalize(np.dtype(dtype))
    return lax.iota(dtype, stop)


def eye(N, M=None, k=0, dtype=None):
    dtype = canonical_dtype(dtype) or dtypes.default_float()
    value = np.eye(N, M, k, dtype=dtype)
    return Array(value, core.aval_of_numpy(value))


def identity(n, dtype=None):
    return eye(n, dtype=dtype)
