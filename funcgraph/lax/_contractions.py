"""Contractions: dot_general, dot and batch_matmul."""
from funcgraph import dtypes
from funcgraph.lax._elementwise import convert_element_type
from funcgraph.lax._operands import as_operand
from funcgraph.primitives import contractions as con
from funcgraph.primitives.precision import canonicalize_precision


def _precision_rank(dtype):
    """How XLA (and so jax) picks the dtype of a dot of two dtypes: complex over float over
    integer over bool; floats by exponent then mantissa bits; integers by width, then
    signed over unsigned (so uint8 . int8 is int8, and float16 . bfloat16 is bfloat16)."""
    if dtype == dtypes.bool_:
        return (0, 0, 0)
    if dtypes.is_int(dtype):
        return (1, dtype.itemsize, not dtypes.is_unsigned(dtype))
    if dtypes.is_complex(dtype):
        return (3, dtype.itemsize, 0)
    info = dtypes.finfo(dtype)
    return (2, info.nexp, info.nmant)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    dims = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    if preferred_element_type is not None:
        preferred_element_type = dtypes.canonicalize(preferred_element_type)
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    if lhs.dtype != rhs.dtype:  # mixed operands: both take the higher-precision dtype
        dtype = max(lhs.dtype, rhs.dtype, key=_precision_rank)
        lhs, rhs = convert_element_type(lhs, dtype), convert_element_type(rhs, dtype)
    return con.dot_general_p.bind(lhs, rhs, dimension_numbers=dims,
                                  precision=canonicalize_precision(precision),
                                  preferred_element_type=preferred_element_type)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    if lhs.aval.ndim not in (1, 2) or rhs.aval.ndim not in (1, 2):
        raise TypeError(f"lax.dot takes operands of rank 1 or 2, got {lhs.aval.str_short()} "
                        f"and {rhs.aval.str_short()}")
    return dot_general(lhs, rhs, (((lhs.aval.ndim - 1,), (0,)), ((), ())),
                       precision, preferred_element_type)


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over matching leading (batch) dimensions: [..., m, k] @ [..., k, n]."""
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    nd = lhs.aval.ndim
    if nd < 2 or rhs.aval.ndim != nd or lhs.aval.shape[:-2] != rhs.aval.shape[:-2]:
        raise TypeError(f"batch_matmul: operands need equal rank >= 2 and equal batch "
                        f"dimensions, got {lhs.aval.str_short()} and {rhs.aval.str_short()}")
    batch = tuple(range(nd - 2))
    return dot_general(lhs, rhs, (((nd - 1,), (nd - 2,)), (batch, batch)), precision)
