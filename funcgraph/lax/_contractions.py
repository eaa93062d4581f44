"""Contractions: dot_general, dot, batch_matmul and scaled_dot."""
from funcgraph import dtypes
from funcgraph.lax._elementwise import convert_element_type, mul
from funcgraph.lax._operands import as_operand
from funcgraph.lax._shapes import broadcast_in_dim, reshape
from funcgraph.lax._sharding import sharded_result
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


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                out_sharding=None):
    if out_sharding is not None:
        return sharded_result(dot_general(lhs, rhs, dimension_numbers, precision,
                                          preferred_element_type), out_sharding)
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


def dot(lhs, rhs, precision=None, preferred_element_type=None, out_sharding=None):
    if out_sharding is not None:
        return sharded_result(dot(lhs, rhs, precision, preferred_element_type), out_sharding)
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


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None,
               preferred_element_type=None):
    """(lhs * lhs_scale) . (rhs * rhs_scale) with dot_general's dimension_numbers (default:
    a matrix product, batched over the leading axis for rank-3 operands), computed and
    returned in preferred_element_type (default bfloat16).  A scale matches its operand
    except along contracting dimensions, where each scale entry covers a block of
    consecutive operand entries (the operand's size must be a multiple of the scale's).
    As XLA's decomposition: operands and scales convert to the result dtype, multiply,
    and one dot_general contracts them."""
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    if dimension_numbers is None:
        dimension_numbers = _default_scaled_dot_dims(lhs.aval.ndim, rhs.aval.ndim)
    dtype = dtypes.canonicalize(preferred_element_type or dtypes.bfloat16)
    (lc, rc), _ = dimension_numbers
    lhs = _apply_block_scale(lhs, lhs_scale, lc, dtype, "lhs")
    rhs = _apply_block_scale(rhs, rhs_scale, rc, dtype, "rhs")
    return dot_general(lhs, rhs, dimension_numbers, preferred_element_type=dtype)


def _default_scaled_dot_dims(lhs_ndim, rhs_ndim):
    if lhs_ndim == rhs_ndim == 2:
        return ((1,), (0,)), ((), ())
    if lhs_ndim == rhs_ndim == 3:
        return ((2,), (1,)), ((0,), (0,))
    raise TypeError(f"scaled_dot: without dimension_numbers the operands must both be of rank "
                    f"2 or both of rank 3, got ranks {lhs_ndim} and {rhs_ndim}")


def _apply_block_scale(x, scale, contracting, dtype, name):
    """x in dtype, times scale repeated blockwise along the contracting dimensions."""
    x = convert_element_type(x, dtype)
    if scale is None:
        return x
    scale = as_operand(scale)
    shape, scale_shape = x.aval.shape, scale.aval.shape
    if len(scale_shape) != len(shape):
        raise TypeError(f"scaled_dot: {name}_scale must have the rank of {name} "
                        f"({len(shape)}), got shape {scale_shape}")
    for d, (size, scale_size) in enumerate(zip(shape, scale_shape, strict=True)):
        blocked = d in contracting and scale_size and size % scale_size == 0
        if size != scale_size and not blocked:
            raise TypeError(f"scaled_dot: {name}_scale of shape {scale_shape} does not fit "
                            f"{name} of shape {shape}: dimension {d} must match, or divide "
                            f"it along a contracting dimension")
        if size != scale_size:
            current = scale.aval.shape
            split = current[:d + 1] + (size // scale_size,) + current[d + 1:]
            dims = tuple(i for i in range(len(split)) if i != d + 1)
            scale = reshape(broadcast_in_dim(scale, split, dims),
                            current[:d] + (size,) + current[d + 1:])
    return mul(x, convert_element_type(scale, dtype))
