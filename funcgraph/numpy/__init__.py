"""funcgraph.numpy: the NumPy API over funcgraph arrays (JAX's numpy semantics).

Functions promote dtypes with JAX's lattice, broadcast like NumPy and bind
funcgraph primitives, so they work eagerly and under every transformation."""
# The modules below import only the ones listed before them: _core, _types, _creation,
# _shapes, _ufuncs, _reductions, _joining, _sorting, _indexing, _taking, _diagonals, _einsum,
# _products, _ranges, _manipulation, _setops, _math, _stats, _extras, _linalg_norm, linalg,
# fft, _aliases, _small_math, _rearranging, _polynomials, _host_io, _histograms_nd, _methods.
from funcgraph.numpy._core import (
    array, asarray, asarray_operand, astype, aval_of, broadcast_shapes, broadcast_to_shape,
    canonical_axes, check_axis, convert, promote_and_broadcast, promote_dtypes,
    promote_to_inexact)
from funcgraph.numpy._types import (
    bfloat16, bool_, can_cast, complex128, complex64, complexfloating, dtype, e, euler_gamma,
    finfo, float16, float32, float64, floating, iinfo, inexact, inf, int16, int32, int64, int8,
    integer, issubdtype, nan, ndarray, newaxis, number, pi, promote_types, result_type,
    signedinteger, uint16, uint32, uint64, uint8, unsignedinteger)
from funcgraph.numpy._types import (
    float4_e2m1fn, float8_e3m4, float8_e4m3, float8_e4m3b11fnuz, float8_e4m3fn,
    float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu, int2, int4, uint2, uint4)
from funcgraph.numpy._creation import (
    arange, empty, empty_like, eye, full, full_like, identity, ones, ones_like, zeros,
    zeros_like)
from funcgraph.numpy._shapes import (
    atleast_1d, atleast_2d, atleast_3d, broadcast_arrays, broadcast_to, expand_dims, moveaxis,
    ndim, permute_dims, ravel, reshape, shape, size, squeeze, swapaxes, transpose)
from funcgraph.numpy._ufuncs import (
    abs, absolute, acos, acosh, add, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh,
    around, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_not, bitwise_or, bitwise_xor,
    cbrt, ceil, clip, conj, conjugate, copysign, cos, cosh, divide, equal, exp, exp2, expm1,
    fabs, float_power, floor, floor_divide, fmod, greater, greater_equal, hypot, imag, invert,
    isfinite, isinf, isnan, left_shift, less, less_equal, log, log10, log1p, log2, logical_and,
    logical_not, logical_or, logical_xor, maximum, minimum, mod, multiply, negative, nextafter,
    not_equal, positive, pow, power, real, reciprocal, remainder, right_shift, rint, round,
    sign, signbit, sin, sinh, sqrt, square, subtract, tan, tanh, true_divide, trunc)
from funcgraph.numpy._reductions import all, amax, amin, any, max, mean, min, prod, std, sum, var
from funcgraph.numpy._joining import (
    array_split, column_stack, concat, concatenate, dsplit, dstack, flip, fliplr, flipud,
    hsplit, hstack, row_stack, split, stack, vsplit, vstack)
from funcgraph.numpy._sorting import (
    argmax, argmin, argsort, argwhere, cumprod, cumsum, flatnonzero, nonzero, ptp, sort,
    unravel_index, where)
from funcgraph.numpy._taking import repeat, take, take_along_axis
from funcgraph.numpy._diagonals import diag, diagonal, trace, tri, tril, triu
from funcgraph.numpy._einsum import einsum
from funcgraph.numpy._products import dot, inner, matmul, outer, tensordot, vdot, vecdot
from funcgraph.numpy._ranges import geomspace, linspace, logspace, meshgrid
from funcgraph.numpy._manipulation import (
    append, cross, delete, diff, ediff1d, insert, kron, pad, roll, rot90, tile)
from funcgraph.numpy._setops import (
    intersect1d, isin, searchsorted, setdiff1d, union1d, unique, unique_all, unique_counts,
    unique_inverse, unique_values)
from funcgraph.numpy._math import (
    allclose, array_equal, array_equiv, count_nonzero, deg2rad, degrees, divmod, fix, fmax,
    fmin, heaviside, interp, isclose, isneginf, isposinf, logaddexp, logaddexp2, modf,
    nan_to_num, rad2deg, radians, select, sinc, vander)
from funcgraph.numpy._stats import (
    average, bincount, convolve, correlate, digitize, histogram, histogram_bin_edges, median,
    nanargmax, nanargmin, nancumprod, nancumsum, nanmax, nanmean, nanmedian, nanmin,
    nanpercentile, nanprod, nanquantile, nanstd, nansum, nanvar, percentile, quantile)
from funcgraph.numpy._extras import (
    block, lexsort, polyval, trapezoid, tril_indices, tril_indices_from, triu_indices,
    triu_indices_from)
from funcgraph.numpy._functional import fromfunction, piecewise, vectorize
from funcgraph.numpy._index_tricks import c_, index_exp, ix_, mgrid, ogrid, r_, s_
from funcgraph.numpy._aliases import (
    bitwise_invert, bitwise_left_shift, bitwise_right_shift, bool, cdouble, character, complex_,
    ComplexWarning, csingle, double, flexible, float_, generic, get_printoptions, int_, iterable,
    array_repr, array_str, object_, printoptions, save, savez, set_printoptions, single, uint)
from funcgraph.numpy._small_math import (
    angle, bartlett, bitwise_count, blackman, copy, corrcoef, cov, cumulative_prod,
    cumulative_sum, frexp, gcd, gradient, hamming, hanning, i0, iscomplex, iscomplexobj, isdtype,
    isreal, isrealobj, isscalar, kaiser, lcm, ldexp, matvec, spacing, unwrap, vecmat)
from funcgraph.numpy._rearranging import (
    apply_along_axis, apply_over_axes, argpartition, choose, compress, diag_indices,
    diag_indices_from, diagflat, extract, fill_diagonal, indices, mask_indices, matrix_transpose,
    partition, place, put, put_along_axis, ravel_multi_index, resize, rollaxis, setxor1d,
    packbits, sort_complex, trim_zeros, unpackbits, unstack)
from funcgraph.numpy._polynomials import (
    poly, polyadd, polyder, polydiv, polyfit, polyint, polymul, polysub, roots)
from funcgraph.numpy._histograms_nd import histogram2d, histogramdd
from funcgraph.numpy._host_io import (
    einsum_path, frombuffer, fromfile, fromiter, fromstring, load)
from funcgraph.numpy._methods import install_methods
from funcgraph.numpy import fft, linalg

# The operators and methods of Array and of every tracer.
install_methods()
