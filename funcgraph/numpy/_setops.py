"""Sorted searches and set operations of funcgraph.numpy. Data-dependent sizes need a
static size= under tracing, as in JAX."""
import numpy as np

from funcgraph import core, dtypes, lax
from funcgraph.primitives import elementwise as ew
from funcgraph.numpy._core import asarray, asarray_operand, astype, aval_of, promote_dtypes
from funcgraph.numpy._creation import arange, full, ones, zeros
from funcgraph.numpy._joining import concatenate
from funcgraph.numpy._reductions import all, any, sum
from funcgraph.numpy._shapes import expand_dims, ravel, reshape
from funcgraph.numpy._sorting import argsort, cumsum, nonzero, where
from funcgraph.numpy._taking import take
from funcgraph.numpy._ufuncs import equal, isnan, less, less_equal, not_equal


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Binary search: ceil(log2(len(a) + 1)) halvings of [low, high), in a scan (or
    unrolled); or ranks in a sort of a and v together (sort); or every comparison at once
    (compare_all)."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"searchsorted: invalid method {method!r}")
    a, v = asarray_operand(a), asarray_operand(v)
    if aval_of(a).ndim != 1:
        raise ValueError(f"searchsorted: a must be one-dimensional, got shape "
                         f"{aval_of(a).shape}")
    if sorter is not None:
        a = take(a, sorter, mode="clip")
    a, v = promote_dtypes(a, v)
    n = aval_of(a).shape[0]
    index_dtype = dtypes.default_int()
    if method == "compare_all":  # the count of a's elements before v (or not after it)
        rank = aval_of(v).ndim
        column = lax.broadcast_in_dim(a, (n,) + (1,) * rank, (0,))
        row = lax.broadcast_in_dim(v, (1,) + aval_of(v).shape, tuple(range(1, rank + 1)))
        before = _before(column, row) if side == "left" else _not_after(column, row)
        return sum(before, axis=0, dtype=index_dtype)
    if n == 0:
        return zeros(aval_of(v).shape, index_dtype)
    if method == "sort":
        return _searchsorted_by_sorting(a, v, side, index_dtype)

    def halve(bounds, _):
        low, high = bounds
        mid = low + lax.div(high - low, np.asarray(2, index_dtype))
        if aval_of(mid).ndim:
            probe = take(a, mid, mode="clip")
        else:  # one value: a slice at mid (clamped as the gather's clip mode would)
            probe = lax.squeeze(lax.dynamic_slice(a, (mid,), (1,), allow_negative_indices=False),
                                (0,))
        # v goes left of the probe when v <= probe (side left) or v < probe (right)
        left = _not_after(v, probe) if side == "left" else _before(v, probe)
        return (lax.select(left, low, mid), lax.select(left, mid, high)), None

    bounds = (zeros(aval_of(v).shape, index_dtype), full(aval_of(v).shape, n, index_dtype))
    levels = int(np.ceil(np.log2(n + 1)))
    if method == "scan_unrolled":
        for _ in range(levels):
            bounds, _ = halve(bounds, None)
    else:
        bounds, _ = lax.scan(halve, bounds, None, length=levels)
    return bounds[1]


def _before(x, y):
    """x < y in sort order: NaN after everything, as the sort that made a sorted array
    (floats compare in total order once -0 and every NaN are made one value, as jax's)."""
    if not dtypes.is_float(aval_of(x).dtype):
        return less(x, y)
    return ew.lt_to_p.bind(*_sortable(x, y))


def _not_after(x, y):
    """x <= y in sort order (see _before)."""
    if not dtypes.is_float(aval_of(x).dtype):
        return less_equal(x, y)
    return ew.le_to_p.bind(*_sortable(x, y))


def _sortable(x, y):
    """x and y as the total order compares them (of one rank: the comparison stretches
    size-1 dimensions)."""
    return _canonical_for_order(x), _canonical_for_order(y)


def _canonical_for_order(x):
    """x with -0 as 0 and every NaN as the one NaN: equal values for the total order."""
    x = where(equal(x, 0), _scalar(0.0, x), x)
    return where(not_equal(x, x), _scalar(np.nan, x), x)


def _scalar(value, like):
    return full((), value, aval_of(like).dtype)


def _searchsorted_by_sorting(a, v, side, index_dtype):
    """Each value's rank among a and the values (v before equal elements of a for side
    left, after them for right) less its rank among the values alone."""
    flat = ravel(v)
    if side == "left":
        ranks = _ranks(concatenate([flat, a]), index_dtype)[:aval_of(flat).shape[0]]
    else:
        ranks = _ranks(concatenate([a, flat]), index_dtype)[aval_of(a).shape[0]:]
    return reshape(ranks - _ranks(flat, index_dtype), aval_of(v).shape)


def _ranks(x, index_dtype):
    """Each element's position in x's stable sort."""
    positions = lax.broadcasted_iota(index_dtype, aval_of(x).shape, 0)
    order = lax.sort_key_val(x, positions)[1]
    return zeros(aval_of(x).shape, index_dtype).at[order].set(positions, unique_indices=True)


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    element = asarray_operand(element)
    tests = ravel(test_elements)
    element, tests = promote_dtypes(element, tests)
    element = expand_dims(element, -1)
    if invert:
        return all(not_equal(element, tests), axis=-1)
    return any(equal(element, tests), axis=-1)


def _unique_parts(ar, equal_nan):
    """The sorted values, the permutation that sorts, and where each new value starts."""
    flat = ravel(ar)
    perm = argsort(flat, stable=True)
    s = flat[perm]
    n = aval_of(s).shape[0]
    if n == 0:
        return s, perm, zeros((0,), bool)
    diff = not_equal(s[1:], s[:-1])
    if equal_nan and dtypes.is_inexact(aval_of(s).dtype):
        diff = diff & ~(isnan(s[1:]) & isnan(s[:-1]))
    starts = concatenate([ones((1,), bool), diff])
    return s, perm, starts


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, size=None, fill_value=None, sorted=True):
    if axis is not None:
        raise NotImplementedError("unique: axis= is not supported yet; use axis=None")
    ar = asarray_operand(ar)
    if dtypes.is_complex(aval_of(ar).dtype):
        raise NotImplementedError("unique: complex inputs are not supported")
    s, perm, starts = _unique_parts(ar, equal_nan)
    n = aval_of(s).shape[0]
    index_dtype = dtypes.default_int()
    if size is None:
        if isinstance(ar, core.Tracer):
            raise core.ConcretizationTypeError(
                f"unique of a traced array {aval_of(ar).str_short()}: the number of unique "
                f"values is not known while tracing; pass a static size=... (and optionally "
                f"fill_value=...)")
        size = int(np.asarray(starts).sum())
    size = int(size)
    if size < 0:
        raise ValueError(f"unique: size must be non-negative, got {size}")
    # past the unique values, pos is 0: they repeat the first (smallest) value
    (pos,) = nonzero(starts, size=size) if n else (zeros((size,), index_dtype),)
    if n:
        values = s[pos]
        if fill_value is not None:
            valid = less(arange(size, dtype=index_dtype), sum(starts, dtype=index_dtype))
            values = where(valid, values, astype(fill_value, aval_of(s).dtype))
    else:
        if size:
            raise ValueError("unique: size > 0 with an empty input needs values to fill; "
                             "empty inputs only support size=0")
        values = s
    out = [values]
    if return_index:
        # padding entries point at the first (smallest) value, as in JAX
        out.append(perm[pos] if n else zeros((size,), index_dtype))
    group = cumsum(starts, dtype=index_dtype) - 1
    if return_inverse:
        inverse = zeros((n,), index_dtype).at[perm].set(group, unique_indices=True)
        out.append(reshape(inverse, aval_of(ar).shape) if aval_of(ar).ndim else inverse)
    if return_counts:
        out.append(zeros((size,), index_dtype).at[group].add(1, mode="drop"))
    return out[0] if len(out) == 1 else tuple(out)


def unique_values(x, *, size=None, fill_value=None):
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


def unique_counts(x, *, size=None, fill_value=None):
    return unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value)


def unique_inverse(x, *, size=None, fill_value=None):
    return unique(x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value)


def unique_all(x, *, size=None, fill_value=None):
    # NaNs are distinct values here (the array API's rule, as in NumPy and jax)
    return unique(x, return_index=True, return_inverse=True, return_counts=True,
                  equal_nan=False, size=size, fill_value=fill_value)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    return unique(concatenate([ravel(ar1), ravel(ar2)]), size=size,
                  fill_value=fill_value)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    if return_indices:
        raise NotImplementedError("intersect1d: return_indices=True is not supported")
    ar1 = ravel(ar1)
    keep = isin(ar1, ar2)
    return _masked_unique(ar1, keep, size, fill_value, "intersect1d")


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    ar1 = ravel(ar1)
    keep = isin(ar1, ar2, invert=True)
    return _masked_unique(ar1, keep, size, fill_value, "setdiff1d")


def _masked_unique(ar, keep, size, fill_value, name):
    """The unique values of ar where keep holds: the others are replaced by a kept value
    (or dropped when all are dropped) before unique."""
    if size is None:
        if isinstance(ar, core.Tracer) or isinstance(keep, core.Tracer):
            raise core.ConcretizationTypeError(
                f"{name} of traced arrays: the result size is not known while tracing; pass "
                f"a static size=...")
        return unique(asarray(np.asarray(ar)[np.asarray(keep)]))
    n = aval_of(ar).shape[0]
    if n == 0:
        return unique(ar, size=size, fill_value=fill_value)
    # sort dropped values to the end with a sort key, then count only kept ones
    order = argsort(~keep, stable=True)
    ar, keep = ar[order], keep[order]
    s, perm, starts = _unique_parts(where(keep, ar, ar[0]), True)
    kept_sorted = keep[perm]
    starts = starts & kept_sorted
    (pos,) = nonzero(starts, size=size)  # 0 past the kept values
    valid = less(arange(size), sum(starts, dtype=dtypes.default_int()))
    fill = s[0] if fill_value is None else astype(fill_value, aval_of(s).dtype)
    return where(valid, s[pos], fill)
