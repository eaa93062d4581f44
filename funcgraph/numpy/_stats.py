"""Statistics of funcgraph.numpy: quantiles, nan-aware reductions, weighted averages,
histograms, convolutions. Compositions of other funcgraph.numpy functions."""
import builtins
import operator

import numpy as np

from funcgraph import core, dtypes, lax
from funcgraph.numpy._core import (
    asarray, asarray_operand, astype, aval_of, canonical_axes, promote_dtypes,
    promote_to_inexact)
from funcgraph.numpy._compiled import compiled_when_eager
from funcgraph.numpy._creation import full, ones, ones_like, zeros
from funcgraph.numpy._manipulation import diff
from funcgraph.numpy._ranges import linspace
from funcgraph.numpy._reductions import all, any, max, mean, min, prod, sum, var
from funcgraph.numpy._setops import searchsorted
from funcgraph.numpy._shapes import broadcast_to, moveaxis, ravel, reshape, transpose
from funcgraph.numpy._sorting import argmax, argmin, cumprod, cumsum, sort
from funcgraph.numpy._taking import take_along_axis
from funcgraph.numpy._ufuncs import (
    ceil, clip, conj, equal, floor, greater_equal, isnan, real, sqrt, where_values)

_QUANTILE_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _quantile(a, q, axis, method, keepdims, squash_nans, name):
    if method not in _QUANTILE_METHODS:
        raise ValueError(f"{name}: method must be one of {_QUANTILE_METHODS}, got {method!r}")
    a = asarray_operand(a)
    q = asarray_operand(q)
    if dtypes.is_complex(aval_of(a).dtype) or dtypes.is_complex(aval_of(q).dtype):
        raise TypeError(f"{name}: a and q must be real, got {aval_of(a).str_short()} and "
                        f"{aval_of(q).str_short()}")
    if not isinstance(q, core.Tracer):
        qv = np.asarray(q, np.float64)
        if qv.size and (np.any(qv < 0) or np.any(qv > 1)):
            raise ValueError(f"{name}: q must be in the range [0, 1] (in [0, 100] for "
                             f"percentiles), got {qv}")
    a, q = promote_to_inexact(a, q)
    shape = aval_of(a).shape
    axes = canonical_axes(axis, len(shape))
    out_shape = _reduced_shape(shape, axes, keepdims)
    a, axis = _one_axis(a, axes)
    if aval_of(a).shape[axis] == 0:
        raise ValueError(f"{name}: cannot take a quantile over an empty axis")
    if not squash_nans:
        return _quantile_sorted(a, q, axis, method, out_shape)
    return _nanquantile_sorted(a, q, axis, method, out_shape)


def _one_axis(a, axes):
    """a with the reduced axes gathered into one (at the end when there are several), and
    that axis."""
    if len(axes) == 1:
        return a, axes[0]
    shape = aval_of(a).shape
    rest = [i for i in range(len(shape)) if i not in axes]
    a = transpose(a, rest + list(axes))
    return reshape(a, tuple(shape[i] for i in rest) + (-1,)), len(rest)


def _interpolate(method, lo_v, hi_v, high_weight):
    if method == "linear":
        return lo_v * (1 - high_weight) + hi_v * high_weight
    if method == "lower":
        return lo_v
    if method == "higher":
        return hi_v
    if method == "midpoint":
        return (lo_v + hi_v) * 0.5
    # nearest: a tie goes to the lower one, as jax (NumPy rounds to even)
    return where_values(high_weight <= 0.5, lo_v, hi_v)


def _quantile_sorted(a, q, axis, method, out_shape):
    """Quantiles along axis: each slice sorted, and the positions, the same for every
    slice, taken from q alone, as jax's."""
    n = aval_of(a).shape[axis]
    # a slice with a NaN is all NaN: its quantiles are NaN
    a = where_values(any(isnan(a), axis=axis, keepdims=True), np.nan, a)
    s = sort(a, axis=axis)
    dtype = aval_of(s).dtype
    pos = q * np.asarray(n - 1, dtype)
    lo, hi = floor(pos), ceil(pos)
    last = np.asarray(n - 1, dtype)
    lo_v = _slices_at(s, lax.clamp(np.asarray(0, dtype), lo, last), axis)
    hi_v = _slices_at(s, lax.clamp(np.asarray(0, dtype), hi, last), axis)
    high_weight = pos - lo
    q_shape = aval_of(q).shape
    if q_shape:  # each quantile's weight for all of its slice
        high_weight = lax.broadcast_in_dim(high_weight, aval_of(lo_v).shape,
                                           tuple(range(len(q_shape))))
    return reshape(_interpolate(method, lo_v, hi_v, high_weight), q_shape + out_shape)


def _nanquantile_sorted(a, q, axis, method, out_shape):
    """Quantiles along axis of the non-NaN values: each slice sorted (NaNs last), and the
    positions from q and the slice's count of values; the quantiles (flattened) take the
    place of the axis until the end."""
    n = aval_of(a).shape[axis]
    s = sort(a, axis=axis)
    dtype = aval_of(s).dtype
    counts = astype(sum(~isnan(s), axis=axis, keepdims=True), dtype)
    q_shape = aval_of(q).shape
    if q_shape:
        count_shape = aval_of(counts).shape
        wide = count_shape[:axis] + (int(np.prod(q_shape)),) + count_shape[axis + 1:]
        q = lax.broadcast_in_dim(ravel(q), wide, (axis,))
    pos = q * (counts - 1)
    lo, hi = floor(pos), ceil(pos)
    lo_v = _values_at(s, astype(clip(lo, 0, n - 1), dtypes.default_int()), axis)
    hi_v = _values_at(s, astype(clip(hi, 0, n - 1), dtypes.default_int()), axis)
    out = _interpolate(method, lo_v, hi_v, pos - lo)
    if q_shape:
        out = moveaxis(out, axis, 0)
    return reshape(out, q_shape + out_shape)


def _values_at(s, positions, axis):
    """take_along_axis; one value of a vector is a dynamic slice."""
    if aval_of(s).ndim == 1 and aval_of(positions).shape == (1,):
        return lax.dynamic_slice(s, (reshape(positions, ()),), (1,))
    return take_along_axis(s, positions, axis)


def _slices_at(s, positions, axis):
    """The slices of s at the (float, whole) positions along axis, in positions' shape
    followed by s's other axes."""
    positions = astype(positions, dtypes.default_int())
    batch = aval_of(positions).ndim
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(batch, batch + aval_of(s).ndim - 1)),
        collapsed_slice_dims=(axis,), start_index_map=(axis,))
    sizes = tuple(1 if d == axis else n for d, n in enumerate(aval_of(s).shape))
    return lax.gather(s, lax.broadcast_in_dim(positions, aval_of(positions).shape + (1,),
                                              tuple(range(batch))), dnums, sizes)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, interpolation=None):
    return _quantile_call(a, q, axis, interpolation or method, keepdims, False, False,
                          "quantile")


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, interpolation=None):
    return _quantile_call(a, q, axis, interpolation or method, keepdims, True, False,
                          "nanquantile")


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, interpolation=None):
    return _quantile_call(a, q, axis, interpolation or method, keepdims, False, True,
                          "percentile")


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, interpolation=None):
    return _quantile_call(a, q, axis, interpolation or method, keepdims, True, True,
                          "nanpercentile")


def _quantile_call(a, q, axis, method, keepdims, squash_nans, percent, name):
    """Checks a concrete q, then runs the quantile as one compiled program when eager (as
    jax's jitted quantile: q traced, the rest static)."""
    if not isinstance(q, core.Tracer):
        qv = np.asarray(q, np.float64) / (100 if percent else 1)
        if qv.size and (np.any(qv < 0) or np.any(qv > 1)):
            raise ValueError(f"{name}: q must be in the range [0, 1] (in [0, 100] for "
                             f"percentiles), got {qv}")
    return _quantile_program(a, q, axis, method, keepdims, squash_nans, percent, name)


@compiled_when_eager(static_argnames=("axis", "method", "keepdims", "squash_nans", "percent", "name"))
def _quantile_program(a, q, axis, method, keepdims, squash_nans, percent, name):
    return _quantile(a, _percent(q) if percent else q, axis, method, keepdims, squash_nans,
                     name)


def _percent(q):
    q = asarray_operand(q)
    (q,) = promote_to_inexact(q)
    return q / 100


@compiled_when_eager(static_argnames=("axis", "overwrite_input", "keepdims"))
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return _quantile(a, 0.5, axis, "midpoint", keepdims, False, "median")


@compiled_when_eager(static_argnames=("axis", "overwrite_input", "keepdims"))
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return _quantile(a, 0.5, axis, "midpoint", keepdims, True, "nanmedian")


# --- nan-aware reductions ---------------------------------------------------------------------

def _nan_replaced(a, value):
    a = asarray_operand(a)
    if not dtypes.is_inexact(aval_of(a).dtype):
        return a, None
    mask = isnan(a)
    return where_values(mask, value, a), mask


@compiled_when_eager(static_argnames=("axis", "dtype", "keepdims"))
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    a, _ = _nan_replaced(a, 0)
    return sum(a, axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


@compiled_when_eager(static_argnames=("axis", "dtype", "keepdims"))
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    a, _ = _nan_replaced(a, 1)
    return prod(a, axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


def _nan_extremum(reduce, fill, a, axis, keepdims, initial, where):
    a = asarray_operand(a)
    replaced, mask = _nan_replaced(a, fill)
    out = reduce(replaced, axis, keepdims=keepdims, initial=initial, where=where)
    if mask is None:
        return out
    return where_values(all(mask, axis=axis, keepdims=keepdims), np.nan, out)


@compiled_when_eager(static_argnames=("axis", "keepdims"))
def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _nan_extremum(max, -np.inf, a, axis, keepdims, initial, where)


@compiled_when_eager(static_argnames=("axis", "keepdims"))
def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _nan_extremum(min, np.inf, a, axis, keepdims, initial, where)


def _nan_arg(arg, fill, a, axis, keepdims):
    replaced, mask = _nan_replaced(a, fill)
    out = arg(replaced, axis, keepdims=keepdims)
    if mask is None:
        return out
    return where_values(all(mask, axis=axis, keepdims=bool(keepdims)), -1, out)


def nanargmax(a, axis=None, out=None, keepdims=None):
    return _nan_arg(argmax, -np.inf, a, axis, keepdims)


def nanargmin(a, axis=None, out=None, keepdims=None):
    return _nan_arg(argmin, np.inf, a, axis, keepdims)


@compiled_when_eager(static_argnames=("axis", "dtype", "keepdims"))
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    a = asarray_operand(a)
    if not dtypes.is_inexact(aval_of(a).dtype):
        return mean(a, axis, dtype=dtype, keepdims=keepdims, where=where)
    if dtype is not None:
        a = astype(a, dtype)
    mask = ~isnan(a)
    if where is not None:
        mask = mask & broadcast_to(where, aval_of(a).shape)
    total = sum(where_values(mask, a, 0), axis=axis, keepdims=keepdims)
    count = sum(mask, axis=axis, keepdims=keepdims).astype(aval_of(total).dtype)
    return total / count


@compiled_when_eager(static_argnames=("axis", "dtype", "keepdims"))
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    a = asarray_operand(a)
    if not dtypes.is_inexact(aval_of(a).dtype):
        return var(a, axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where)
    if dtype is not None:
        a = astype(a, dtype)
    mask = ~isnan(a)
    if where is not None:
        mask = mask & broadcast_to(where, aval_of(a).shape)
    centered = where_values(mask, a - nanmean(a, axis, keepdims=True, where=where), 0)
    sq = real(centered * conj(centered)) if dtypes.is_complex(aval_of(a).dtype) \
        else lax.square(centered)
    count = sum(mask, axis=axis, keepdims=keepdims).astype(aval_of(sq).dtype)
    return sum(sq, axis=axis, keepdims=keepdims) / (count - ddof)


@compiled_when_eager(static_argnames=("axis", "dtype", "keepdims"))
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    return sqrt(nanvar(a, axis, dtype, ddof=ddof, keepdims=keepdims, where=where))


@compiled_when_eager(static_argnames=("axis", "dtype"))
def nancumsum(a, axis=None, dtype=None, out=None):
    a, _ = _nan_replaced(a, 0)
    return cumsum(a, axis, dtype=dtype)


@compiled_when_eager(static_argnames=("axis", "dtype"))
def nancumprod(a, axis=None, dtype=None, out=None):
    a, _ = _nan_replaced(a, 1)
    return cumprod(a, axis, dtype=dtype)


# --- weighted averages ------------------------------------------------------------------------

@compiled_when_eager(static_argnames=("axis", "returned", "keepdims"))
def average(a, axis=None, weights=None, returned=False, keepdims=False):
    a = asarray_operand(a)
    shape = aval_of(a).shape
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        if not returned:
            return avg
        axes = canonical_axes(axis, len(shape))
        count = int(np.prod([shape[i] for i in axes]))
        weights_sum = full(aval_of(avg).shape, count, aval_of(avg).dtype)
    else:
        weights = asarray_operand(weights)
        a, weights = promote_to_inexact(a, weights)
        w_shape = aval_of(weights).shape
        if w_shape != shape:
            if axis is None:
                raise TypeError("average: axis must be specified when the shapes of a "
                                f"{shape} and weights {w_shape} differ")
            if not isinstance(axis, int) and not hasattr(axis, "__index__"):
                raise TypeError("average: a single integer axis is needed when the shapes of "
                                "a and weights differ")
            ax = canonical_axes(axis, len(shape))[0]
            if len(w_shape) != 1:
                raise TypeError(f"average: 1D weights expected when the shapes of a {shape} "
                                f"and weights {w_shape} differ")
            if w_shape[0] != shape[ax]:
                raise ValueError(f"average: length of weights ({w_shape[0]}) is not compatible "
                                 f"with axis {axis} of a, of size {shape[ax]}")
            # the weights laid along axis ax (size 1 elsewhere), as jax reshapes them
            weights = reshape(weights, tuple(d if i == ax else 1 for i, d in enumerate(shape)))
        weights_sum = sum(weights, axis=axis, keepdims=keepdims)
        avg = sum(a * weights, axis=axis, keepdims=keepdims) / weights_sum
    if returned:
        return avg, broadcast_to(weights_sum, aval_of(avg).shape)
    return avg


# --- histograms and counts ------------------------------------------------------------------

def histogram_bin_edges(a, bins=10, range=None, weights=None):
    a = asarray_operand(a)
    if dtypes.is_complex(aval_of(a).dtype):
        raise TypeError("histogram: complex input is not supported")
    if not isinstance(bins, int) and not (hasattr(bins, "__index__") and np.ndim(bins) == 0):
        bins = asarray_operand(bins)
        if aval_of(bins).ndim != 1:
            raise ValueError(f"histogram: bins must be an integer or a 1-d array of edges, "
                             f"got shape {aval_of(bins).shape}")
        (bins,) = promote_to_inexact(bins)
        return bins
    bins = operator.index(bins)
    if bins < 1:
        raise ValueError(f"histogram: bins must be a positive integer, got {bins}")
    (a,) = promote_to_inexact(a)
    if range is None:
        first, last = min(a), max(a)
    else:
        if len(range) != 2:
            raise ValueError(f"histogram: range must be a pair (min, max), got {range!r}")
        first, last = (asarray(r).astype(aval_of(a).dtype) for r in range)
        if not isinstance(first, core.Tracer) and not isinstance(last, core.Tracer) and \
                float(first) > float(last):
            raise ValueError(f"histogram: max must be larger than min in range, got {range!r}")
    same = equal(first, last)
    first = where_values(same, first - 0.5, first)
    last = where_values(same, last + 0.5, last)
    return linspace(first, last, bins + 1, dtype=aval_of(a).dtype)


def histogram(a, bins=10, range=None, weights=None, density=None):
    a = asarray_operand(a)
    edges = histogram_bin_edges(a, bins, range, weights)
    (a,) = promote_to_inexact(ravel(a))
    if weights is None:
        weights = ones_like(a)
    else:
        weights = asarray_operand(weights)
        if aval_of(weights).size != aval_of(a).size:
            raise ValueError(f"histogram: weights must have the shape of a, got "
                             f"{aval_of(weights).shape}")
        weights = ravel(weights)
    n_edges = aval_of(edges).shape[0]
    idx = searchsorted(edges, a, side="right")
    # the last bin is closed on the right
    idx = where_values(equal(a, edges[-1]), n_edges - 1, idx)
    counts = zeros(n_edges, aval_of(weights).dtype).at[idx].add(weights, mode="drop")[1:]
    if density:
        widths = diff(edges)
        counts = counts / widths / sum(counts)
    return counts, edges


def bincount(x, weights=None, minlength=0, *, length=None):
    x = asarray_operand(x)
    if not dtypes.is_int(aval_of(x).dtype):
        raise TypeError(f"bincount: x must have an integer type, got {aval_of(x).str_short()}")
    if aval_of(x).ndim != 1:
        raise ValueError(f"bincount: x must be one-dimensional, got shape {aval_of(x).shape}")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError(f"bincount: minlength must be non-negative, got {minlength}")
    if length is None:
        if isinstance(x, core.Tracer):
            raise core.ConcretizationTypeError(
                f"bincount of a traced array {aval_of(x).str_short()}: the length of the result "
                f"is not known while tracing; pass a static length=...")
        values = np.asarray(x)
        length = builtins.max(minlength, int(values.max()) + 1 if values.size else 0)
    length = operator.index(length)
    if weights is None:
        weights = ones(aval_of(x).shape, dtypes.default_int())
    else:
        weights = asarray_operand(weights)
        if aval_of(weights).shape != aval_of(x).shape:
            raise ValueError(f"bincount: weights must have the shape of x {aval_of(x).shape}, "
                             f"got {aval_of(weights).shape}")
    return zeros(length, aval_of(weights).dtype).at[clip(x, 0)].add(weights, mode="drop")


def digitize(x, bins, right=False):
    bins = asarray_operand(bins)
    if aval_of(bins).ndim != 1:
        raise ValueError(f"digitize: bins must be one-dimensional, got shape "
                         f"{aval_of(bins).shape}")
    x = asarray_operand(x)
    side = "left" if right else "right"
    n = aval_of(bins).shape[0]
    if n == 0:
        return zeros(aval_of(x).shape, dtypes.default_int())
    up = searchsorted(bins, x, side=side)
    down = n - searchsorted(bins[::-1], x, side=side)
    return where_values(greater_equal(bins[-1], bins[0]), up, down)


# --- convolutions -------------------------------------------------------------------------------

def _conv_1d(a, v, mode, name, preferred_element_type):
    a, v = asarray_operand(a), asarray_operand(v)
    if aval_of(a).ndim != 1 or aval_of(v).ndim != 1:
        raise ValueError(f"{name}: a and v must be one-dimensional, got shapes "
                         f"{aval_of(a).shape} and {aval_of(v).shape}")
    n, m = aval_of(a).shape[0], aval_of(v).shape[0]
    if n == 0 or m == 0:
        raise ValueError(f"{name}: inputs cannot be empty")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    # NumPy's convolutions compute in floating point unless a result type is asked for
    a, v = promote_dtypes(a, v) if preferred_element_type is not None else \
        promote_to_inexact(a, v)
    return a, v, n, m


def _sliding_dot(x, y, mode, preferred_element_type):
    """out[k] = sum_j x[k + j - pad] y[j]: XLA's convolution (a correlation), padded with
    zeros as the mode says (NumPy's 'same' centres the longer operand)."""
    m = aval_of(y).shape[0]
    pads = {"valid": (0, 0), "same": (m // 2, m - m // 2 - 1), "full": (m - 1, m - 1)}[mode]
    out = lax.conv_general_dilated(x[None, None], y[None, None], (1,), [pads],
                                   preferred_element_type=preferred_element_type)
    return out[0, 0]


@compiled_when_eager(static_argnames=("mode", "precision", "preferred_element_type"))
def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    a, v, n, m = _conv_1d(a, v, mode, "convolve", preferred_element_type)
    if m > n:
        a, v = v, a
    return _sliding_dot(a, v[::-1], mode, preferred_element_type)


@compiled_when_eager(static_argnames=("mode", "precision", "preferred_element_type"))
def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    a, v, n, m = _conv_1d(a, v, mode, "correlate", preferred_element_type)
    v = conj(v)
    if m > n:  # slide the longer operand, then read the result backwards
        return _sliding_dot(v, a, mode, preferred_element_type)[::-1]
    return _sliding_dot(a, v, mode, preferred_element_type)
