"""The dtypes, scalar types and constants that JAX's numpy module exports, and the dtype
queries (result_type, promote_types, can_cast, ...)."""
import numpy as np

from funcgraph import core, dtypes
from funcgraph.array import Array
from funcgraph.numpy._core import asarray, aval_of
from funcgraph.transforms.jit import ShapeDtypeStruct


class _ScalarMeta(type):
    """The type of jnp.float32 and the other concrete scalar types, as JAX's: calling one
    makes an array of its dtype (jnp.float32(x) works on traced x); it equals and hashes
    as NumPy's scalar type, np.dtype() reads its `dtype`, and isinstance asks NumPy's."""

    def __call__(cls, x):
        return asarray(x, dtype=cls.dtype)

    def __eq__(cls, other):
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other):
        return not cls == other

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)


def _scalar_type(np_type):
    return _ScalarMeta(np_type.__name__, (object,),
                       {"dtype": np.dtype(np_type), "__module__": "funcgraph.numpy",
                        "__doc__": f"The {np_type.__name__} scalar type: calling it makes "
                                   f"an array of dtype {np_type.__name__}."})


ndarray = Array
bool_ = _scalar_type(np.bool_)
int8, int16, int32, int64 = map(_scalar_type, (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = map(_scalar_type, (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = map(_scalar_type, (np.float16, np.float32, np.float64))
bfloat16 = _scalar_type(dtypes.bfloat16.type)
(float8_e4m3fn, float8_e5m2, float8_e4m3, float8_e3m4, float8_e4m3fnuz, float8_e5m2fnuz,
 float8_e4m3b11fnuz, float8_e8m0fnu, float4_e2m1fn) = (
    _scalar_type(d.type) for d in dtypes.NARROW_FLOATS)
int4, uint4, int2, uint2 = (_scalar_type(d.type) for d in dtypes.NARROW_INTS)
complex64, complex128 = _scalar_type(np.complex64), _scalar_type(np.complex128)
dtype = np.dtype
inf, nan, pi, e, euler_gamma = np.inf, np.nan, np.pi, np.e, np.euler_gamma
newaxis = None
integer, floating, complexfloating, inexact, number, signedinteger, unsignedinteger = (
    np.integer, np.floating, np.complexfloating, np.inexact, np.number, np.signedinteger,
    np.unsignedinteger)
iinfo = dtypes.iinfo
finfo = dtypes.finfo


def issubdtype(arg1, arg2):
    return dtypes.issubdtype(arg1, arg2)


def result_type(*args):
    pairs = []
    for a in args:
        if isinstance(a, (type, np.dtype, str)) and not core.is_python_scalar(a):
            pairs.append((dtypes.canonicalize(np.dtype(a)), False))
        elif isinstance(a, (core.ShapedArray, ShapeDtypeStruct)):  # types, as jax takes
            pairs.append((dtypes.canonicalize(a.dtype), a.weak_type))
        else:
            aval = aval_of(a)
            pairs.append((aval.dtype, aval.weak_type))
    return dtypes.promote_weak(*pairs)[0]


def promote_types(a, b):
    return dtypes.promote_weak((dtypes.canonicalize(np.dtype(a)), False),
                              (dtypes.canonicalize(np.dtype(b)), False))[0]


def can_cast(from_, to, casting="safe"):
    return np.can_cast(from_, to, casting)
