"""The statistics functions of JAX's scipy.stats: mode, rankdata, sem.

mode counts each column's unique values (a sort), as jax; rankdata compares every pair of
elements along the axis (O(n^2), vectorized), which keeps it simple; it is meant for
moderate n."""
from typing import NamedTuple

import numpy as np

from funcgraph import dtypes, numpy as fnp
from funcgraph.transforms.vmap import vmap as _vmap


class ModeResult(NamedTuple):
    mode: object
    count: object


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most frequent value along axis (the smallest one on ties; NaNs count together)
    and its count: each column's unique values with their counts, as jax."""
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not "
                                  f"implemented")
    if nan_policy == "raise":
        raise NotImplementedError("In order to best JIT compile `mode`, we cannot know "
                                  "whether `x` contains nans. Please check if nans exist in "
                                  "`x` outside of the `mode` function.")
    x = fnp.atleast_1d(fnp.asarray(a))
    if axis is None:
        output_shape = (1,) * x.ndim if keepdims else ()
        x, axis = fnp.ravel(x), 0
    else:
        axis = _canonical_axis(axis, x.ndim)
        output_shape = tuple(1 if i == axis else d for i, d in enumerate(x.shape)
                             if keepdims or i != axis)
    columns = fnp.moveaxis(x, axis, 0)
    columns = columns.reshape(columns.shape[0], int(np.prod(columns.shape[1:])))
    values, counts = _vmap(_column_mode, in_axes=1)(columns)
    return ModeResult(values.reshape(output_shape), counts.reshape(output_shape))


def _canonical_axis(axis, ndim):
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _column_mode(column):
    if column.size == 0:
        return (fnp.array(np.nan, dtype=dtypes.default_float()),
                fnp.array(0, dtype=dtypes.default_float()))
    values, counts = fnp.unique(column, return_counts=True, size=column.size)
    return values[fnp.argmax(counts)], counts.max()


_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def _ranks_last_axis(a, method):
    less = fnp.sum(a[..., None, :] < a[..., :, None], axis=-1)
    equal = fnp.sum(a[..., None, :] == a[..., :, None], axis=-1)
    if method == "average":
        return less + (equal + 1) / 2
    if method == "min":
        return less + 1
    if method == "max":
        return less + equal
    if method == "ordinal":
        return fnp.argsort(fnp.argsort(a, axis=-1, stable=True), axis=-1, stable=True) + 1
    ordered = fnp.sort(a, axis=-1)
    first = fnp.concatenate([fnp.ones_like(ordered[..., :1], dtype=bool),
                             ordered[..., 1:] != ordered[..., :-1]], axis=-1)
    # dense: how many distinct values are <= each element.
    return fnp.sum(first[..., None, :] & (ordered[..., None, :] <= a[..., :, None]), axis=-1)


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks (1-based, as floats) of the data along axis, ties resolved by `method`; with
    axis None the flattened array is ranked.  Any NaN makes the whole result NaN."""
    if method not in _RANK_METHODS:
        raise ValueError(f"unknown method '{method}'")
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy != "propagate":
        raise NotImplementedError("The `omit` and `raise` nan_policy values are not "
                                  "supported by rankdata (as jax)")
    a = fnp.asarray(a)
    if axis is None:
        a, axis = fnp.ravel(a), 0
    moved = fnp.moveaxis(a, axis, -1)
    ranks = _ranks_last_axis(moved, method).astype(np.float32)
    if fnp.issubdtype(a.dtype, np.inexact):
        any_nan = fnp.any(fnp.isnan(moved), axis=-1, keepdims=True)
        ranks = fnp.where(any_nan, np.float32(np.nan), ranks)
    return fnp.moveaxis(ranks, -1, axis)


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean: std(a, ddof) / sqrt(n) along axis (NaNs skipped
    with nan_policy='omit')."""
    if nan_policy not in ("propagate", "omit"):
        raise ValueError(f"{nan_policy} is not supported")
    a = fnp.asarray(a)
    if not fnp.issubdtype(a.dtype, np.inexact):
        a = a.astype(fnp.result_type(float))
    if nan_policy == "omit":
        std = fnp.nanstd(a, axis=axis, ddof=ddof, keepdims=keepdims)
        n = fnp.sum(fnp.logical_not(fnp.isnan(a)), axis=axis, keepdims=keepdims)
    else:
        std = fnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims)
        n = fnp.sum(fnp.ones_like(a), axis=axis, keepdims=keepdims)
    return std / fnp.sqrt(n.astype(std.dtype))
