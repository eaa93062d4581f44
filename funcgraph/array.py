"""funcgraph.Array: a concrete array over a host (NumPy) value and/or a device buffer.

Eager CPU work keeps the NumPy value; jitted calls produce device buffers.
Each side is made from the other on first use and kept.  Operators, indexing
and methods are attached by funcgraph.numpy (the same ones tracers get).
"""
import numpy as np

from funcgraph import backend, core


class _ArrayType(type):
    """Makes `isinstance(x, Array)` true for traced values too, as `isinstance(x,
    jax.Array)` is inside jit, grad and vmap.  An Array instance never reaches this
    (isinstance answers `type(x) is cls` first), and funcgraph's own code tests for a
    concrete array with `type(x) is Array`."""

    def __instancecheck__(cls, instance):
        return isinstance(instance, core.Tracer) or type.__instancecheck__(cls, instance)


class Array(metaclass=_ArrayType):
    __slots__ = ("_np", "_buf", "aval", "_deleted", "__weakref__")
    __array_priority__ = 100

    def __init__(self, value, aval, buf=None):
        self._np = value
        self._buf = buf
        self.aval = aval
        self._deleted = False

    @classmethod
    def from_buffer(cls, buf, aval):
        return cls(None, aval, buf)

    # --- the two representations ---
    @property
    def _value(self):
        value = self._np
        if value is None:
            self._check_alive()
            value = self._np = backend.to_numpy(self._buf)
        return value

    def _device_buffer(self, device=None):
        self._check_alive()
        buf = self._buf
        if buf is None:
            buf = self._buf = backend.device_put(self._np, device)
        return buf

    def _check_alive(self):
        if self._deleted:
            raise RuntimeError("Array has been deleted (its buffer was donated to a jit "
                               "call with donate_argnums); use the function's output instead.")

    def delete(self):
        self._deleted = True
        self._np = None
        self._buf = None

    def is_deleted(self):
        return self._deleted

    # --- metadata ---
    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    @property
    def weak_type(self):
        return self.aval.weak_type

    @property
    def ndim(self):
        return len(self.aval.shape)

    @property
    def size(self):
        return self.aval.size

    @property
    def nbytes(self):
        return self.aval.size * self.aval.dtype.itemsize

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object (a 0-d array)")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))

    # --- conversion to Python and NumPy ---
    def __array__(self, dtype=None, copy=None):
        """The value as NumPy: a read-only view (Arrays are immutable), or a writable copy
        when a dtype change or copy=True asks for one."""
        value = np.asarray(self._value)
        if dtype is not None and value.dtype != dtype:
            return value.astype(dtype)
        if copy:
            return value.copy()
        view = value.view()
        view.flags.writeable = False
        return view

    def __dlpack__(self, *args, **kwargs):
        return np.asarray(self._value).__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return np.asarray(self._value).__dlpack_device__()

    def _scalar(self, kind):
        if self.aval.size != 1:
            raise TypeError(f"only arrays of one element can be converted to Python "
                            f"scalars ({kind}); this one has shape {self.aval.shape}")
        return np.asarray(self._value).reshape(())

    def __bool__(self):
        return bool(self._scalar("bool"))

    def __int__(self):
        return int(self._scalar("int"))

    def __float__(self):
        return float(self._scalar("float"))

    def __complex__(self):
        return complex(self._scalar("complex"))

    def __index__(self):
        if self.aval.shape or self.aval.dtype.kind not in "iub":
            raise TypeError(f"only integer scalar arrays can be used as an index, "
                            f"not {self.aval.str_short()}")
        return int(self._value)

    def item(self, *args):
        return np.asarray(self._value).item(*args)

    def tolist(self):
        return np.asarray(self._value).tolist()

    def __hash__(self):
        raise TypeError("unhashable type: funcgraph Array (use a tuple or a Python "
                        "scalar for a static argument)")

    # --- runtime ---
    def block_until_ready(self):
        if self._buf is not None:
            self._buf.block_until_ready()
        return self

    @property
    def device(self):
        return self._buf.devices().pop() if self._buf is not None else backend.devices()[0]

    def devices(self):
        return {self.device}

    def copy(self):
        return Array(np.array(self._value), self.aval)

    def __repr__(self):
        value = np.asarray(self._value)
        body = np.array2string(value, separator=", ", prefix="Array(")
        weak = ", weak_type=True" if self.aval.weak_type else ""
        return f"Array({body}, dtype={self.aval.dtype.name}{weak})"

    def __str__(self):
        return str(np.asarray(self._value))

    def __format__(self, spec):
        if not self.aval.shape:
            return format(np.asarray(self._value).item(), spec)
        return format(str(self), spec)

    def __reduce__(self):
        return (_rebuild, (np.asarray(self._value), self.aval))


def _rebuild(value, aval):
    return Array(value, aval)


def array_from_numpy(x, weak_type=False):
    x = core.canonical_numpy(x)
    return Array(x, core.ShapedArray(x.shape, x.dtype, weak_type))


def scalar_array(value, dtype, weak_type=False):
    """A concrete rank-0 Array (the constants rules bind: zeros, ones, fill values)."""
    return Array(np.array(value, dtype), core.scalar_aval(dtype, weak_type))
