"""Operators and methods shared by funcgraph.Array and every tracer."""
import numpy as np

from funcgraph.array import Array
from funcgraph.core import Tracer
from funcgraph.lax import copy_p_bind
from funcgraph.numpy._core import astype
from funcgraph.numpy._diagonals import diagonal, trace
from funcgraph.numpy._indexing import IndexUpdateHelper, getitem
from funcgraph.numpy._products import dot, matmul
from funcgraph.numpy._reductions import all, any, max, mean, min, prod, std, sum, var
from funcgraph.numpy._shapes import ravel, reshape, squeeze, swapaxes, transpose
from funcgraph.numpy._sorting import (
    argmax, argmin, argsort, cumprod, cumsum, nonzero, ptp, sort)
from funcgraph.numpy._taking import repeat, take
from funcgraph.numpy._ufuncs import (
    absolute, add, bitwise_and, bitwise_or, bitwise_xor, clip, conj, conjugate, equal,
    floor_divide, greater, greater_equal, imag, invert, left_shift, less, less_equal,
    multiply, negative, not_equal, positive, power, real, remainder, right_shift, round,
    subtract, true_divide)


def _swap(f):
    return lambda self, other: f(other, self)


# What an array's binary operators take; other operands (a sparse array, a library's own
# array type) get NotImplemented, so Python asks their reflected operator, as in jax.
_OPERAND_TYPES = (int, float, complex, np.generic, np.ndarray, Array, Tracer, list, tuple,
                  set, dict)


def _deferring(f):
    def op(self, other):
        if isinstance(other, _OPERAND_TYPES) or hasattr(other, "__jax_array__"):
            return f(self, other)
        return NotImplemented
    return op


def _astype(self, dtype, copy=False):
    return astype(self, dtype)


def _reshape(self, *shape, order="C"):
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    return reshape(self, shape, order=order)


def _transpose(self, *axes):
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = axes[0]
    return transpose(self, axes or None)


def _method(name, fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = name
    return method


_OPERATORS = {
    "__add__": add, "__radd__": _swap(add),
    "__sub__": subtract, "__rsub__": _swap(subtract),
    "__mul__": multiply, "__rmul__": _swap(multiply),
    "__truediv__": true_divide, "__rtruediv__": _swap(true_divide),
    "__floordiv__": floor_divide, "__rfloordiv__": _swap(floor_divide),
    "__mod__": remainder, "__rmod__": _swap(remainder),
    "__divmod__": lambda a, b: (floor_divide(a, b), remainder(a, b)),
    "__rdivmod__": lambda a, b: (floor_divide(b, a), remainder(b, a)),
    "__pow__": power, "__rpow__": _swap(power),
    "__matmul__": matmul, "__rmatmul__": _swap(matmul),
    "__and__": bitwise_and, "__rand__": _swap(bitwise_and),
    "__or__": bitwise_or, "__ror__": _swap(bitwise_or),
    "__xor__": bitwise_xor, "__rxor__": _swap(bitwise_xor),
    "__lshift__": left_shift, "__rlshift__": _swap(left_shift),
    "__rshift__": right_shift, "__rrshift__": _swap(right_shift),
    "__eq__": equal, "__ne__": not_equal,
    "__lt__": less, "__le__": less_equal,
    "__gt__": greater, "__ge__": greater_equal,
    "__neg__": negative, "__pos__": positive, "__abs__": absolute,
    "__invert__": invert,
    "__getitem__": getitem,
    "__round__": lambda a, ndigits=None: _operator_round(a, ndigits),
}


def _operator_round(a, ndigits):
    """round(x[, ndigits]) as jax's: numpy round; without ndigits, cast to int as
    Python's round(7.5) returns an int."""
    out = round(a, decimals=ndigits or 0)
    return out if ndigits is not None else _astype(out, int)


_BINARY = frozenset(name for name in _OPERATORS
                    if name not in ("__neg__", "__pos__", "__abs__", "__invert__",
                                    "__getitem__", "__round__"))

_METHODS = {
    "sum": sum, "prod": prod, "max": max, "min": min, "mean": mean, "var": var, "std": std,
    "all": all, "any": any, "argmax": argmax, "argmin": argmin, "cumsum": cumsum,
    "cumprod": cumprod, "clip": clip, "ravel": ravel, "squeeze": squeeze,
    "swapaxes": swapaxes, "dot": dot, "round": round, "conj": conj, "conjugate": conjugate,
    "sort": sort, "argsort": argsort, "flatten": ravel, "take": take, "repeat": repeat,
    "nonzero": nonzero, "trace": trace, "diagonal": diagonal, "ptp": ptp,
}


def install_methods():
    for cls in (Array, Tracer):
        for name, fn in _OPERATORS.items():
            setattr(cls, name, _deferring(fn) if name in _BINARY else fn)
        for name, fn in _METHODS.items():
            setattr(cls, name, _method(name, fn))
        cls.astype = _astype
        cls.reshape = _reshape
        cls.transpose = _transpose
        cls.T = property(transpose)
        cls.mT = property(lambda self: swapaxes(self, -1, -2))
        cls.real = property(real)
        cls.imag = property(imag)
        cls.at = property(IndexUpdateHelper)
    Tracer.copy = copy_p_bind  # a copy equation, as jax's x.copy() under a transformation
