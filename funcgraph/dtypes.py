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

# float0 is the dtype of tangents of integer and boolean values (as in JAX).
float0 = np.dtype([("float0", np.void, 0)])

_SHORT_NAMES = {
    bool_: "bool", int8: "i8", int16: "i16", int32: "i32", int64: "i64",
    uint8: "u8", uint16: "u16", uint32: "u32", uint64: "u64",
    float16: "f16", bfloat16: "bf16", float32: "f32", float64: "f64",
    complex64: "c64", complex128: "c128", float0: "float0",
}

_NARROW_64 = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}

SUPPORTED = frozenset(_SHORT_NAMES) - {float0}


def short_name(dtype):
    return _SHORT_NAMES[dtype]


def is_float(dtype):
    return dtype in (float16, bfloat16, float32, float64)


def is_complex(dtype):
    return dtype in (complex64, complex128)


def is_inexact(dtype):
    return is_float(dtype) or is_complex(dtype)


def is_int(dtype):
    return dtype.kind in "iu"


def is_unsigned(dtype):
    return dtype.kind == "u"


def finfo(dtype):
    return ml_dtypes.finfo(dtype)


def iinfo(dtype):
    return ml_dtypes.iinfo(dtype)


def canonicalize(dtype):
    """The dtype funcgraph uses for `dtype`: 64-bit types narrow unless x64 is on."""
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


# --- the promotion lattice -------------------------------------------------
# Nodes are dtypes or the weak categories "i*", "f*", "c*" (Python int, float,
# complex).  An edge a -> b means a promotes to b.  Joins are least upper bounds.
_LATTICE = {
    bool_: ["i*"],
    "i*": [uint8, int8],
    uint8: [int16, uint16], uint16: [int32, uint32], uint32: [int64, uint64], uint64: ["f*"],
    int8: [int16], int16: [int32], int32: [int64], int64: ["f*"],
    "f*": ["c*", float16, bfloat16],
    float16: [float32], bfloat16: [float32], float32: [float64, complex64], float64: [complex128],
    "c*": [complex64], complex64: [complex128], complex128: [],
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


@functools.lru_cache(maxsize=4096)
def _join(nodes):
    common = set.intersection(*(_UPPER[n] for n in nodes))
    # The least upper bound is the common bound that every other common bound is above.
    for candidate in common:
        if common <= _UPPER[candidate]:
            return candidate
    raise TypeError(f"no common type for {nodes}")  # unreachable for this lattice


@functools.lru_cache(maxsize=4096)
def _result_type_cached(keys, x64):
    nodes = tuple(sorted({_lattice_node(d, w) for d, w in keys}, key=str))
    joined = _join(nodes)
    if joined == "i*":
        return default_int(), True
    if joined == "f*":
        return default_float(), True
    if joined == "c*":
        return default_complex(), True
    return canonicalize(joined), False


def result_type(*dtypes_and_weak):
    """Promote (dtype, weak_type) pairs to one (dtype, weak_type), as JAX does (cached
    per state of the 64-bit flag, so changing the flag needs no cache clearing)."""
    return _result_type_cached(tuple(dtypes_and_weak), config.jax_enable_x64)
