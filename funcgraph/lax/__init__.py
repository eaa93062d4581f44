"""funcgraph.lax: the primitive-level operations, with JAX's lax names.

Unlike funcgraph.numpy these do not promote dtypes or broadcast (except that
Python scalars and 0-d operands adopt the other operand's dtype and shape)."""
# The modules below import only the ones listed before them: _operands, _shapes, _elementwise,
# _reductions, _contractions, _slicing, _convolution, _windowed, _fft, _collectives, _control_flow,
# _sharding, _solves, _conveniences, _ragged, _special.  funcgraph.lax.linalg wraps
# funcgraph.numpy.linalg and funcgraph.scipy.linalg, so it sits above them: funcgraph's
# __init__ imports it.

# Array and pjit_p have always been reachable here; _as_operand is what tests build operands with.
from funcgraph.array import Array
from funcgraph.primitives.call import pjit_p
from funcgraph.lax._operands import as_operand as _as_operand
from funcgraph.lax._shapes import (
    broadcast, broadcast_in_dim, builtins_max, expand_dims, reshape, squeeze, transpose)
from funcgraph.lax._elementwise import (
    abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bitcast_convert_type, bitwise_and,
    bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, clamp, clz, conj, convert_element_type,
    copy_p_bind, cos, cosh, digamma, div, eq, erf, erf_inv, erfc, exp, exp2, expm1, floor, ge, gt,
    imag, integer_pow, is_finite, le, lgamma, log, log1p, logistic, lt, max, min, mul, ne, neg,
    nextafter, polygamma, population_count, pow, real, reciprocal, reduce_precision, rem, round, RoundingMethod,
    rsqrt, select, select_n, shift_left, shift_right_arithmetic, shift_right_logical, sign, sin,
    sinh, sqrt, square, stop_gradient, sub, tan, tanh, zeta)
from funcgraph.lax._reductions import (
    argmax, argmin, cumlogsumexp, cummax, cummin, cumprod, cumsum, reduce_and, reduce_max,
    reduce_min, reduce_or, reduce_prod, reduce_sum, sort, sort_key_val, top_k)
from funcgraph.lax._contractions import batch_matmul, dot, dot_general, scaled_dot
from funcgraph.primitives.precision import Precision
from funcgraph.lax._slicing import (
    broadcasted_iota, concatenate, dynamic_index_in_dim, dynamic_slice, dynamic_slice_in_dim,
    dynamic_update_index_in_dim, dynamic_update_slice, dynamic_update_slice_in_dim, gather,
    GatherDimensionNumbers, GatherScatterMode, index_in_dim, iota, pad, rev, scatter,
    scatter_add, scatter_max, scatter_min, scatter_mul, ScatterDimensionNumbers, slice,
    slice_in_dim)
from funcgraph.lax._convolution import (
    conv, conv_dimension_numbers, conv_general_dilated, conv_general_permutations,
    conv_general_shape_tuple, conv_shape_tuple, conv_transpose, conv_transpose_shape_tuple,
    conv_with_general_padding, ConvDimensionNumbers, padtype_to_pads)
from funcgraph.lax._windowed import reduce, reduce_window, reduce_window_shape_tuple
from funcgraph.lax._fft import fft, FftType
from funcgraph.lax._collectives import (all_gather, all_to_all, axis_index, axis_size, pcast,
                                        pmax, pmean, pmin, ppermute, pshuffle, psum,
                                        psum_scatter, pswapaxes)
from funcgraph.lax._control_flow import (
    associative_scan, cond, fori_loop, map, optimization_barrier, scan, switch, while_loop)
from funcgraph.lax._sharding import with_sharding_constraint
from funcgraph.lax._solves import custom_linear_solve, custom_root
from funcgraph.lax._conveniences import (
    approx_max_k, approx_min_k, broadcast_shapes, broadcast_to_rank, collapse, complex,
    conv_general_dilated_local, conv_general_dilated_patches, dtype, empty, full, full_like, reduce_xor, scatter_apply,
    scatter_sub, split, stack, tile, unstack)
from funcgraph.lax._ragged import RaggedDotDimensionNumbers, ragged_dot, ragged_dot_general
from funcgraph.lax._special import (
    bessel_i0e, bessel_i1e, betainc, igamma, igamma_grad_a, igammac, random_gamma_grad)
from funcgraph.lax._primitives import *  # noqa: E402,F401,F403  the *_p objects
