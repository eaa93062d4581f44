"""Statistics of funcgraph.numpy: quantiles, nan-aware reductions, weighted averages,
histograms, convolutions. Compositions of other funcgraph.numpy functions."""
import builtins
import operator

import numpy as np

from funcgraph import core, dtypes, lax
from funcgraph.numpy._core import (
    asarray, asarray_operand, astype, aval_of, canonical_axes, promote_dtypes,
    promote_to_inexact)
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
    rest = [i for i in range(len(shape)) if i not in axes]
    # gather the reduced axes at the end, flattened into one
    a = transpose(a, rest + list(axes))
    n = int(np.prod([shape[i] for i in axes]))
    if n == 0:
        raise ValueError(f"{name}: cannot take a quantile over an empty axis")
    a = reshape(a, tuple(shape[i] for i in rest) + (n,))
    s = sort(a, axis=-1)  # NaNs sort last
    q_shape = aval_of(q).shape
    qf = ravel(q)
    lead = aval_of(s).shape[:-1]
    if squash_nans:
        counts = sum(~isnan(s), axis=-1, keepdims=True).astype(aval_of(s).dtype)
    else:
        counts = full(lead + (1,), n, aval_of(s).dtype)
    pos = qf * (counts - 1)  # (..., Q)
    lo = clip(floor(pos), 0, n - 1)
    hi = clip(ceil(pos), 0, n - 1)
    lo_v = take_along_axis(s, lo.astype(dtypes.default_int()), axis=-1)
    hi_v = take_along_axis(s, hi.astype(dtypes.default_int()), axis=-1)
    if method == "linear":
        w = pos - lo
        out = lo_v * (1 - w) + hi_v * w
    elif method == "lower":
        out = lo_v
    elif method == "higher":
        out = hi_v
    elif method == "midpoint":
        out = (lo_v + hi_v) * 0.5
    else:  # nearest: a tie goes to the lower one, as jax (NumPy rounds to even)
        out = where_values(pos - lo <= 0.5, lo_v, hi_v)
    if not squash_nans:
        out = where_values(any(isnan(s), axis=-1, keepdims=True), np.nan, out)
    # (..., Q) -> q_shape + out_shape
    out = moveaxis(out, -1, 0)
    return reshape(out, q_shape + out_shape)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, interpolation=None):
    method = interpolation or method
    return _quantile(a, q, axis, method, keepdims, False, "quantile")


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, interpolation=None):
    method = interpolation or method
    return _quantile(a, q, axis, method, keepdims, True, "nanquantile")


def _percent(q):
    q = asarray_operand(q)
    (q,) = promote_to_inexact(q)
    return q / 100


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, interpolation=None):
    return _quantile(a, _percent(q), axis, interpolation or method, keepdims, False,
                     "percentile")


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, interpolation=None):
    return _quantile(a, _percent(q), axis, interpolation or method, keepdims, True,
                     "nanpercentile")


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return _quantile(a, 0.5, axis, "midpoint", keepdims, False, "median")


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return _quantile(a, 0.5, axis, "midpoint", keepdims, True, "nanmedian")


# --- nan-aware reductions ---------------------------------------------------------------------

def _nan_replaced(a, value):
    a = asarray_operand(a)
    if not dtypes.is_inexact(aval_of(a).dtype):
        return a, None
    mask = isnan(a)
    return where_values(mask, value, a), mask


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    a, _ = _nan_replaced(a, 0)
    return sum(a, axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


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


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _nan_extremum(max, -np.inf, a, axis, keepdims, initial, where)


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
        else centered * centered
    count = sum(mask, axis=axis, keepdims=keepdims).astype(aval_of(sq).dtype)
    return sum(sq, axis=axis, keepdims=keepdims) / (count - ddof)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    return sqrt(nanvar(a, axis, dtype, ddof=ddof, keepdims=keepdims, where=where))


def nancumsum(a, axis=None, dtype=None, out=None):
    a, _ = _nan_replaced(a, 0)
    return cumsum(a, axis, dtype=dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    a, _ = _nan_replaced(a, 1)
    return cumprod(a, axis, dtype=dtype)


# --- weighted averages ------------------------------------------------------------------------

def average(a, axis=None, weights=None, returned=False, keepdims=False):
    a = asarray_operand(a)
    shape = aval_of(a).shape
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
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
            lone = [1] * len(shape)
            lone[ax] = w_shape[0]
            weights = broadcast_to(reshape(weights, lone), shape)
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


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    a, v, n, m = _conv_1d(a, v, mode, "convolve", preferred_element_type)
    if m > n:
        a, v = v, a
    return _sliding_dot(a, v[::-1], mode, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    a, v, n, m = _conv_1d(a, v, mode, "correlate", preferred_element_type)
    v = conj(v)
    if m > n:  # slide the longer operand, then read the result backwards
        return _sliding_dot(v, a, mode, preferred_element_type)[::-1]
    return _sliding_dot(a, v, mode, preferred_element_type)
