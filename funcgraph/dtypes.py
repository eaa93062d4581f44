"""Dtype policy: canonical dtypes, weak types and JAX's type promotion lattice.

Python scalars are *weakly typed*: they adopt the dtype of the array they meet
(`x_f16 + 1.0` stays float16).  Promotion follows JAX's lattice, not NumPy's
value-based rules, so `int8 + uint8 -> int16` and `int32 + float16 -> float16`.
"""
import functools

import ml_dtypes
import numpy as np

from funcgraph.config import config

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
bfloat16 = np.dtype(ml_dtypes.bfloat16)
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

# The narrow formats of ml_dtypes: 8- and 4-bit floats and 4- and 2-bit integers.  As in
# JAX they promote only with weakly typed scalars (and floats with integers), never with
# one another or with the wider types.
_NARROW_FLOAT_NAMES = {
    "float8_e4m3fn": "f8_e4m3fn", "float8_e5m2": "f8_e5m2", "float8_e4m3": "f8_e4m3",
    "float8_e3m4": "f8_e3m4", "float8_e4m3fnuz": "f8_e4m3fnuz",
    "float8_e5m2fnuz": "f8_e5m2fnuz", "float8_e4m3b11fnuz": "f8_e4m3b11fnuz",
    "float8_e8m0fnu": "f8_e8m0fnu", "float4_e2m1fn": "f4_e2m1fn"}
_NARROW_INT_NAMES = {"int4": "i4", "uint4": "u4", "int2": "i2", "uint2": "u2"}
NARROW_FLOATS = tuple(np.dtype(getattr(ml_dtypes, n)) for n in _NARROW_FLOAT_NAMES)
NARROW_INTS = tuple(np.dtype(getattr(ml_dtypes, n)) for n in _NARROW_INT_NAMES)
(float8_e4m3fn, float8_e5m2, float8_e4m3, float8_e3m4, float8_e4m3fnuz, float8_e5m2fnuz,
 float8_e4m3b11fnuz, float8_e8m0fnu, float4_e2m1fn) = NARROW_FLOATS
int4, uint4, int2, uint2 = NARROW_INTS
_UNSIGNED_NARROW = (uint4, uint2)

# float0 is the dtype of tangents of integer and boolean values (as in JAX).
float0 = np.dtype([("float0", np.void, 0)])

_SHORT_NAMES = {
    bool_: "bool", int8: "i8", int16: "i16", int32: "i32", int64: "i64",
    uint8: "u8", uint16: "u16", uint32: "u32", uint64: "u64",
    float16: "f16", bfloat16: "bf16", float32: "f32", float64: "f64",
    complex64: "c64", complex128: "c128", float0: "float0",
    **{d: _NARROW_FLOAT_NAMES[d.name] for d in NARROW_FLOATS},
    **{d: _NARROW_INT_NAMES[d.name] for d in NARROW_INTS},
}

_NARROW_64 = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}

SUPPORTED = frozenset(_SHORT_NAMES) - {float0}


def name_of(dtype):
    """jax's name of a dtype (float32, key<fry>)."""
    if isinstance(dtype, ExtendedDType):
        return dtype.name
    return "float0" if dtype == float0 else np.dtype(dtype).name


def short_name(dtype):
    try:
        return _SHORT_NAMES[dtype]
    except KeyError:
        if isinstance(dtype, ExtendedDType):
            return dtype.name
        raise


_FLOATS = frozenset((float16, bfloat16, float32, float64) + NARROW_FLOATS)


def is_float(dtype):
    return dtype in _FLOATS


def is_complex(dtype):
    return dtype in (complex64, complex128)


def real_dtype(dtype):
    """The dtype of a complex dtype's real and imaginary parts; other dtypes unchanged."""
    return {complex64: float32, complex128: float64}.get(dtype, dtype)


def is_inexact(dtype):
    return is_float(dtype) or is_complex(dtype)


def is_int(dtype):
    return dtype.kind in "iu" or dtype in NARROW_INTS


def is_unsigned(dtype):
    return dtype.kind == "u" or dtype in _UNSIGNED_NARROW


def finfo(dtype):
    return ml_dtypes.finfo(dtype)


def iinfo(dtype):
    return ml_dtypes.iinfo(dtype)


def canonicalize(dtype):
    """The dtype funcgraph uses for `dtype`: 64-bit types narrow unless x64 is on."""
    if isinstance(dtype, ExtendedDType):
        return dtype
    dtype = np.dtype(dtype)
    if dtype not in _SHORT_NAMES:
        raise TypeError(f"funcgraph does not support the dtype {dtype}")
    if not config.jax_enable_x64:
        return _NARROW_64.get(dtype, dtype)
    return dtype


def default_int():
    return int64 if config.jax_enable_x64 else int32


def default_uint():
    return uint64 if config.jax_enable_x64 else uint32


def default_float():
    return float64 if config.jax_enable_x64 else float32


def to_inexact(dtype, weak_type=False):
    """The floating dtype that sin, sqrt, true division and mean give for `dtype`, as in
    JAX: a Python number becomes the default float, 64-bit integers float64, and booleans
    and narrower integers float32 (even with x64 on)."""
    if is_inexact(dtype):
        return dtype
    if weak_type:
        return default_float()
    return canonicalize(float64) if np.dtype(dtype).itemsize == 8 else float32


def default_complex():
    return complex128 if config.jax_enable_x64 else complex64


def python_scalar_dtype(value):
    """The (weak) dtype of a Python scalar."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return default_int()
    if isinstance(value, float):
        return default_float()
    if isinstance(value, complex):
        return default_complex()
    raise TypeError(f"not a Python scalar: {value!r}")


class TypePromotionError(ValueError):
    """Two dtypes have no implicit promotion (as JAX's TypePromotionError)."""


# --- the promotion lattice -------------------------------------------------
# Nodes are dtypes or the weak categories "i*", "f*", "c*" (Python int, float,
# complex).  An edge a -> b means a promotes to b.  Joins are least upper bounds.
_LATTICE = {
    bool_: ["i*"],
    "i*": [uint8, int8, *NARROW_INTS],
    uint8: [int16, uint16], uint16: [int32, uint32], uint32: [int64, uint64], uint64: ["f*"],
    int8: [int16], int16: [int32], int32: [int64], int64: ["f*"],
    "f*": ["c*", float16, bfloat16, *NARROW_FLOATS],
    float16: [float32], bfloat16: [float32], float32: [float64, complex64], float64: [complex128],
    "c*": [complex64], complex64: [complex128], complex128: [],
    **{d: [] for d in NARROW_FLOATS + NARROW_INTS},
}


def _upper_bounds():
    bounds = {}
    for node in _LATTICE:
        seen, stack = set(), [node]
        while stack:
            n = stack.pop()
            if n not in seen:
                seen.add(n)
                stack.extend(_LATTICE[n])
        bounds[node] = seen
    return bounds


_UPPER = _upper_bounds()


def _lattice_node(dtype, weak):
    if not weak or dtype == bool_:
        return dtype
    if is_int(dtype):
        return "i*"
    if is_float(dtype):
        return "f*"
    return "c*"


# JAX's strict promotion (jax_numpy_dtype_promotion="strict"): a dtype promotes to
# nothing else; weakly typed scalars to any dtype of their kind or of a wider kind.
_STRICT_UPPER = {node: {node} for node in _LATTICE}
_STRICT_UPPER["c*"] |= {d for d in _LATTICE if d not in ("i*", "f*", "c*") and is_complex(d)}
_STRICT_UPPER["f*"] |= _STRICT_UPPER["c*"] | {d for d in _LATTICE if d not in ("i*", "f*", "c*")
                                              and is_float(d)}
_STRICT_UPPER["i*"] |= _STRICT_UPPER["f*"] | {d for d in _LATTICE if d not in ("i*", "f*", "c*")
                                              and is_int(d)}


_WEAK_NAMES = {"i*": str(int), "f*": str(float), "c*": str(complex)}


@functools.lru_cache(maxsize=4096)
def _join(nodes, strict=False):
    if strict:
        common = set.intersection(*(_STRICT_UPPER[n] for n in nodes))
        least = [c for c in common if common <= _STRICT_UPPER[c]]
        if len(least) == 1:
            return least[0]
        raise TypePromotionError(
            f"Input dtypes {tuple(_WEAK_NAMES.get(n, str(n)) for n in nodes)} have no "
            f"available implicit dtype promotion path when jax_numpy_dtype_promotion=strict. Try explicitly casting "
            f"inputs to the desired output type, or set jax_numpy_dtype_promotion=standard.")
    common = set.intersection(*(_UPPER[n] for n in nodes))
    # The least upper bound is the common bound that every other common bound is above.
    for candidate in common:
        if common <= _UPPER[candidate]:
            return candidate
    names = ", ".join(str(n) for n in nodes)
    raise TypePromotionError(
        f"Input dtypes ({names}) have no available implicit dtype promotion path (the "
        f"8- and 4-bit types promote only with themselves and weakly typed scalars). "
        f"Convert explicitly with .astype(...).")


@functools.lru_cache(maxsize=4096)
def _result_type_cached(keys, x64, strict=False):
    extended_dtypes = {d for d, _ in keys if isinstance(d, ExtendedDType)}
    if extended_dtypes:
        if len(extended_dtypes) == 1 and len({d for d, _ in keys}) == 1:
            return next(iter(extended_dtypes)), False
        names = ", ".join(sorted({str(d) for d, _ in keys}))
        raise TypePromotionError(f"Input dtypes ({names}) have no available implicit dtype "
                                 f"promotion path: key arrays combine only with keys of "
                                 f"the same implementation.")
    nodes = tuple(sorted({_lattice_node(d, w) for d, w in keys}, key=str))
    joined = _join(nodes, strict)
    if joined == "i*":
        return default_int(), True
    if joined == "f*":
        return default_float(), True
    if joined == "c*":
        return default_complex(), True
    return canonicalize(joined), False


def promote_weak(*dtypes_and_weak):
    """Promote (dtype, weak_type) pairs to one (dtype, weak_type), as JAX does (cached
    per state of the 64-bit flag, so changing the flag needs no cache clearing)."""
    return _result_type_cached(tuple(dtypes_and_weak), config.jax_enable_x64,
                               config.jax_numpy_dtype_promotion == "strict")


# --- JAX's dtypes API (jax.dtypes) ---------------------------------------------------------

class extended:
    """The abstract dtype class of JAX's extended dtypes (funcgraph has none but key
    types below)."""


class prng_key(extended):
    """The abstract dtype class of typed PRNG keys."""


class ExtendedDType:
    """A dtype that is no NumPy dtype: each element is `physical_shape` elements of
    `physical_dtype` (trailing dimensions of the physical array, as in JAX).  On the host
    an array of it is a NumPy array of `host_dtype`, a structured dtype holding one
    element's physical data, so NumPy's structural operations (transpose, indexing,
    concatenation, ...) act on whole elements."""
    type = extended
    physical_shape = ()
    physical_dtype = None

    @property
    def host_dtype(self):
        return np.dtype([("bits", self.physical_dtype, self.physical_shape)])

    @property
    def itemsize(self):
        return self.physical_dtype.itemsize * int(np.prod(self.physical_shape))

    kind = "V"

    def __repr__(self):
        return self.name

    __str__ = __repr__


class KeyTy(ExtendedDType):
    """The dtype of typed PRNG keys of one implementation (jax's `key<fry>` for
    threefry2x32: a key is two uint32 words)."""
    type = prng_key

    def __init__(self, impl_name, short, physical_shape, physical_dtype):
        self.impl_name = impl_name
        self.name = f"key<{short}>"
        self.physical_shape = tuple(physical_shape)
        self.physical_dtype = np.dtype(physical_dtype)

    def __eq__(self, other):
        return type(other) is KeyTy and other.impl_name == self.impl_name

    def __hash__(self):
        return hash((KeyTy, self.impl_name))

    def __reduce__(self):
        return (key_dtype, (self.impl_name,))


_KEY_DTYPES = {"threefry2x32": KeyTy("threefry2x32", "fry", (2,), np.uint32)}
threefry_key = _KEY_DTYPES["threefry2x32"]


def key_dtype(impl_name="threefry2x32"):
    """The key dtype of a PRNG implementation."""
    try:
        return _KEY_DTYPES[impl_name]
    except KeyError:
        raise ValueError(f"funcgraph implements only the threefry2x32 PRNG, not "
                         f"{impl_name!r}") from None


def is_extended(dtype):
    return isinstance(dtype, ExtendedDType)


def physical_value(value, dtype):
    """The physical NumPy array (trailing physical dimensions) of a host value of an
    extended dtype."""
    value = np.asarray(value)
    if value.dtype == dtype.host_dtype:
        return np.ascontiguousarray(value["bits"])
    return value


def host_value(physical, dtype):
    """A host value of an extended dtype from its physical NumPy array."""
    physical = np.ascontiguousarray(physical, dtype.physical_dtype)
    shape = physical.shape[:physical.ndim - len(dtype.physical_shape)]
    words = int(np.prod(dtype.physical_shape))
    return physical.reshape(shape + (words,)).view(dtype.host_dtype).reshape(shape)


def canonicalize_dtype(dtype, allow_extended_dtype=False):
    """The dtype funcgraph uses for `dtype` (64-bit types narrow unless x64 is on)."""
    del allow_extended_dtype
    return canonicalize(dtype)


# ml_dtypes' types are not subclasses of NumPy's abstract scalar types: place them.
_ABSTRACT_PARENTS = {
    "float": (np.floating, np.inexact, np.number, np.generic),
    "signed": (np.signedinteger, np.integer, np.number, np.generic),
    "unsigned": (np.unsignedinteger, np.integer, np.number, np.generic),
}


def _ml_family(dtype):
    if dtype == bfloat16 or dtype in NARROW_FLOATS:
        return "float"
    if dtype in NARROW_INTS:
        return "unsigned" if dtype in _UNSIGNED_NARROW else "signed"
    return None


_ABSTRACT_BASES = (np.generic, np.number, np.inexact, np.floating, np.complexfloating,
                   np.integer, np.signedinteger, np.unsignedinteger)


def issubdtype(a, b):
    """np.issubdtype that also places bfloat16, the float8s and int4s in NumPy's
    hierarchy (bfloat16 is a floating type), and knows the key dtype classes."""
    if isinstance(a, ExtendedDType):
        a = a.type
    if isinstance(b, ExtendedDType):
        return isinstance(a, type) and a is b.type
    if isinstance(b, type) and issubclass(b, extended):
        return isinstance(a, type) and issubclass(a, b)
    if isinstance(a, type) and (issubclass(a, extended) or a in _ABSTRACT_BASES):
        return not issubclass(a, extended) and bool(np.issubdtype(a, b))
    family = _ml_family(np.dtype(a))
    if family is None:
        return bool(np.issubdtype(a, b))
    if isinstance(b, type) and b in _ABSTRACT_BASES:
        return b in _ABSTRACT_PARENTS[family]
    return np.dtype(a) == np.dtype(b)


def itemsize_bits(dtype):
    """The number of bits of one element (4 for int4)."""
    dtype = np.dtype(dtype)
    if dtype in NARROW_INTS or dtype == float4_e2m1fn:
        return {int4: 4, uint4: 4, int2: 2, uint2: 2, float4_e2m1fn: 4}[dtype]
    return dtype.itemsize * 8


def scalar_type_of(x):
    """The Python scalar type (bool, int, float or complex) of x's dtype."""
    dtype = np.dtype(getattr(x, "dtype", None) or python_scalar_dtype(x))
    if dtype == bool_:
        return bool
    if is_int(dtype):
        return int
    if is_float(dtype):
        return float
    if is_complex(dtype):
        return complex
    raise TypeError(f"no Python scalar type for dtype {dtype}")


def _dtype_and_weak(x):
    if isinstance(x, tuple):
        raise TypeError("dtypes.result_type takes arrays, dtypes and scalars; promote "
                        "(dtype, weak_type) pairs with dtypes.promote_weak")
    if type(x) in (bool, int, float, complex):
        return python_scalar_dtype(x), True
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.dtype, aval.weak_type
    if isinstance(x, ExtendedDType):
        return x, False
    if isinstance(x, (np.dtype, type, str)):
        return canonicalize(np.dtype(x)), False
    return canonicalize(np.asarray(x).dtype), False


def result_type(*args, return_weak_type_flag=False):
    """The dtype JAX's promotion gives arrays, dtypes and scalars `args` (and whether
    it is weak, with return_weak_type_flag)."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    dtype, weak = promote_weak(*(_dtype_and_weak(a) for a in args))
    return (dtype, weak) if return_weak_type_flag else dtype
