"""Operators and methods shared by funcgraph.Array and every tracer."""
from funcgraph.array import Array
from funcgraph.core import Tracer


def _np():
    import funcgraph.numpy as fnp
    return fnp


def _swap(f):
    return lambda self, other: f(other, self)


def _getitem(self, index):
    from funcgraph.numpy._indexing import getitem
    return getitem(self, index)


def _at(self):
    from funcgraph.numpy._indexing import IndexUpdateHelper
    return IndexUpdateHelper(self)


def _astype(self, dtype, copy=False):
    return _np().astype(self, dtype)


def _reshape(self, *shape, order="C"):
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    return _np().reshape(self, shape, order=order)


def _transpose(self, *axes):
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = axes[0]
    return _np().transpose(self, axes or None)


def _method(name):
    def method(self, *args, **kwargs):
        return getattr(_np(), name)(self, *args, **kwargs)
    method.__name__ = name
    return method


def _operators():
    fnp = _np()
    return {
        "__add__": fnp.add, "__radd__": _swap(fnp.add),
        "__sub__": fnp.subtract, "__rsub__": _swap(fnp.subtract),
        "__mul__": fnp.multiply, "__rmul__": _swap(fnp.multiply),
        "__truediv__": fnp.true_divide, "__rtruediv__": _swap(fnp.true_divide),
        "__floordiv__": fnp.floor_divide, "__rfloordiv__": _swap(fnp.floor_divide),
        "__mod__": fnp.remainder, "__rmod__": _swap(fnp.remainder),
        "__divmod__": lambda a, b: (fnp.floor_divide(a, b), fnp.remainder(a, b)),
        "__rdivmod__": lambda a, b: (fnp.floor_divide(b, a), fnp.remainder(b, a)),
        "__pow__": fnp.power, "__rpow__": _swap(fnp.power),
        "__matmul__": fnp.matmul, "__rmatmul__": _swap(fnp.matmul),
        "__and__": fnp.bitwise_and, "__rand__": _swap(fnp.bitwise_and),
        "__or__": fnp.bitwise_or, "__ror__": _swap(fnp.bitwise_or),
        "__xor__": fnp.bitwise_xor, "__rxor__": _swap(fnp.bitwise_xor),
        "__lshift__": fnp.left_shift, "__rlshift__": _swap(fnp.left_shift),
        "__rshift__": fnp.right_shift, "__rrshift__": _swap(fnp.right_shift),
        "__eq__": fnp.equal, "__ne__": fnp.not_equal,
        "__lt__": fnp.less, "__le__": fnp.less_equal,
        "__gt__": fnp.greater, "__ge__": fnp.greater_equal,
        "__neg__": fnp.negative, "__pos__": fnp.positive, "__abs__": fnp.absolute,
        "__invert__": fnp.invert,
        "__getitem__": _getitem,
    }


_METHODS = ["sum", "prod", "max", "min", "mean", "var", "std", "all", "any", "argmax",
            "argmin", "cumsum", "cumprod", "clip", "ravel", "squeeze", "swapaxes", "dot",
            "round", "conj", "conjugate", "sort", "argsort", "flatten", "take", "repeat",
            "nonzero", "trace", "diagonal", "ptp"]


def install_methods():
    for cls in (Array, Tracer):
        for name, fn in _operators().items():
            setattr(cls, name, fn)
        for name in _METHODS:
            setattr(cls, name, _method("ravel" if name == "flatten" else name))
        cls.astype = _astype
        cls.reshape = _reshape
        cls.transpose = _transpose
        cls.T = property(lambda self: _np().transpose(self))
        cls.mT = property(lambda self: _np().swapaxes(self, -1, -2))
        cls.real = property(lambda self: _np().real(self))
        cls.imag = property(lambda self: _np().imag(self))
        cls.at = property(_at)
