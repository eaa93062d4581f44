"""`jax._src.literals`: jax's host-side literal types (TypedInt, TypedFloat,
TypedComplex, TypedNdArray): Python scalars and NumPy arrays that carry a JAX type.
funcgraph's jaxprs hold NumPy values as literals and never make these; they exist for
code that tests for them (a value of one of them is an array to funcgraph too)."""
import numpy as np

from funcgraph.core import ShapedArray


def _weak_scalar_aval(dtype):
    return ShapedArray((), np.dtype(dtype), True)


def _typed_scalar(base, name, article):
    """A Python scalar type (int, float, complex) carrying a JAX dtype, weakly typed."""
    def __new__(cls, value, dtype):
        self = base.__new__(cls, value)
        self.dtype = np.dtype(dtype)
        self.aval = _weak_scalar_aval(dtype)
        return self

    def __repr__(self):
        return f"{name}({base(self)}, dtype={self.dtype.name})"

    def __getnewargs__(self):
        return base(self), self.dtype

    return type(name, (base,), {
        "__doc__": f"{article} {base.__name__} with a JAX dtype (weakly typed).",
        "__new__": __new__, "__repr__": __repr__, "__str__": lambda self: str(base(self)),
        "__getnewargs__": __getnewargs__, "__module__": __name__})


TypedInt = _typed_scalar(int, "TypedInt", "An")
TypedFloat = _typed_scalar(float, "TypedFloat", "A")
TypedComplex = _typed_scalar(complex, "TypedComplex", "A")


typed_scalar_types = {TypedInt, TypedFloat, TypedComplex}


class TypedNdArray(np.ndarray):
    """A NumPy array with a JAX type (possibly weak)."""

    def __new__(cls, val, aval=None):
        self = np.asarray(val).view(cls)
        if aval is not None:
            self._aval = aval
        return self

    def __array_finalize__(self, obj):
        self._aval = getattr(obj, "_aval", None) if isinstance(obj, TypedNdArray) else None

    @property
    def aval(self):
        if self._aval is None:
            return ShapedArray(self.shape, self.dtype)
        return self._aval

    @property
    def weak_type(self):
        return self.aval.weak_type
