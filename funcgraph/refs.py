"""Mutable array references: `new_ref(x)`, `ref[...]` reads and `ref[idx] = v` writes
(jax's `jax.new_ref`, `jax.Ref`, `jax.freeze`, `jax.empty_ref`, `jax.free_ref`).

A Ref holds an array value and replaces it on each write (arrays stay immutable; a
write at an index is `value.at[idx].set(v)`).  Inside a transformation a Ref made
there holds traced values, so reads and writes of a Ref created inside a jitted,
vmapped or differentiated function stage as the pure operations they stand for.
A Ref passed as an argument to `jit` is threaded through the program: the program
takes the value it holds and returns the value it holds at the end, which the call
writes back into the Ref (jax's state discharge; transforms/jit.py), and, as in jax, a
jitted function may not return a Ref.  What funcgraph does not do yet: the same for a
Ref a jitted function closes over, or one passed to grad/vmap/scan; writing such a Ref
under a transformation stores a traced value in it, which is an error when the Ref is
used after the transformation.
"""
from funcgraph import core, dtypes


class AbstractRef:
    """The type of a Ref: the type of the array it holds (`inner_aval`)."""
    __slots__ = ("inner_aval",)

    def __init__(self, inner_aval):
        self.inner_aval = inner_aval

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    ndim = property(lambda self: len(self.inner_aval.shape))
    size = property(lambda self: self.inner_aval.size)
    weak_type = property(lambda self: self.inner_aval.weak_type)
    vma = property(lambda self: self.inner_aval.vma)

    def str_short(self):
        return f"Ref{{{self.inner_aval.str_short()}}}"

    def __str__(self):
        dims = ",".join(map(str, self.inner_aval.shape))
        return f"Ref{{{dtypes.name_of(self.inner_aval.dtype)}[{dims}]}}"

    __repr__ = __str__

    def __eq__(self, other):
        return type(other) is AbstractRef and other.inner_aval == self.inner_aval

    def __hash__(self):
        return hash((AbstractRef, self.inner_aval))


def _array(x):
    import funcgraph.numpy as fnp  # refs sit below the numpy library in import order
    return fnp.asarray(x)


def _is_whole(index):
    return index is Ellipsis or (type(index) is tuple and
                                 (index == () or index == (Ellipsis,)))


class Ref:
    """A mutable reference to an array (jax.Ref)."""
    __slots__ = ("_value", "_freed", "__weakref__")

    def __init__(self, value):
        self._value = value
        self._freed = False

    def _get_value(self):
        if self._freed:
            raise RuntimeError("the Ref was freed (free_ref) or frozen (freeze)")
        return self._value

    @property
    def aval(self):
        return AbstractRef(core.get_aval(self._get_value()))

    shape = property(lambda self: core.get_aval(self._get_value()).shape)
    dtype = property(lambda self: core.get_aval(self._get_value()).dtype)
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: core.get_aval(self._get_value()).size)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a Ref to a 0-d array")
        return self.shape[0]

    def __getitem__(self, index):
        value = self._get_value()
        return value if _is_whole(index) else value[index]

    def __setitem__(self, index, new):
        value = self._get_value()
        if _is_whole(index):
            self._value = _checked(value, new)
        else:
            self._value = value.at[index].set(new)

    def get(self):
        return self[...]

    def set(self, value):
        self[...] = value

    def __repr__(self):
        value = self._get_value()
        if isinstance(value, core.Tracer):
            return f"Ref({value!r})"
        text = repr(value)
        return "Ref" + text[len("Array"):] if text.startswith("Array") else f"Ref({text})"

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


def _checked(old, new):
    """A whole new value: of the held array's shape and dtype (a weakly typed scalar or a
    NumPy value is converted), as jax's ref writes require."""
    old_aval = core.get_aval(old)
    new = _array(new) if not isinstance(new, core.Tracer) else new
    new_aval = core.get_aval(new)
    if new_aval.shape != old_aval.shape:
        raise ValueError(f"Invalid shape for `swap`. Ref shape: {old_aval.shape}. Expected "
                         f"shape: {old_aval.shape}. Value shape: {new_aval.shape}.")
    if new_aval.dtype != old_aval.dtype:
        if not new_aval.weak_type:
            raise ValueError(f"Invalid dtype for `swap`. Ref dtype: "
                             f"{dtypes.name_of(old_aval.dtype)}. Value dtype: "
                             f"{dtypes.name_of(new_aval.dtype)}.")
        new = new.astype(old_aval.dtype)
    return new


def new_ref(init_val, *, memory_space=None, kind=None):
    """A Ref holding init_val (as an array)."""
    del memory_space, kind
    if isinstance(init_val, Ref):
        raise TypeError("new_ref: the initial value is already a Ref")
    return Ref(_array(init_val))


def empty_ref(ty, *, memory_space=None):
    """A Ref of type `ty` (an aval or ShapeDtypeStruct) holding zeros."""
    del memory_space
    import funcgraph.numpy as fnp
    return Ref(fnp.zeros(ty.shape, ty.dtype))


def free_ref(ref):
    ref._freed = True


def freeze(ref):
    """The value a Ref holds; the Ref may not be used afterwards."""
    value = ref._get_value()
    ref._freed = True
    return value


def is_ref(x):
    return isinstance(x, Ref)


__all__ = ["AbstractRef", "Ref", "new_ref", "empty_ref", "free_ref", "freeze"]
