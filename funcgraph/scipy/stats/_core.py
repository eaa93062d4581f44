"""The statistics functions of JAX's scipy.stats: mode, rankdata, sem.

mode and rankdata compare every pair of elements along the axis (O(n^2), vectorized), which
keeps them simple and differentiable-free of sorting tricks; they are meant for moderate n."""
from typing import NamedTuple

import numpy as np

from funcgraph import numpy as fnp


class ModeResult(NamedTuple):
    mode: object
    count: object


def _same(a, b):
    """Elementwise equality in which NaNs equal each other (mode counts them together)."""
    return (a == b) | (fnp.isnan(a) & fnp.isnan(b)) if fnp.issubdtype(a.dtype, np.inexact) \
        else a == b


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most frequent value along axis (the smallest one on ties) and its count."""
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy != "propagate":
        raise NotImplementedError(f"In order to best JIT compile `mode`, we cannot know "
                                  f"whether `x` contains nans. Please check if nans exist in "
                                  f"`x` outside of the `mode` function.")
    a = fnp.asarray(a)
    if axis is None:
        a, axis = fnp.ravel(a), 0
        out_ndim = 0
    else:
        axis = axis % max(a.ndim, 1)
        out_ndim = a.ndim - 1
    if a.ndim == 0:
        a = a[None]
    moved = fnp.sort(fnp.moveaxis(a, axis, -1), axis=-1)
    counts = fnp.sum(_same(moved[..., :, None], moved[..., None, :]), axis=-1).astype(np.int32)
    best = fnp.argmax(counts, axis=-1)
    values = fnp.take_along_axis(moved, best[..., None], axis=-1)[..., 0]
    count = fnp.max(counts, axis=-1)
    if keepdims:
        values, count = fnp.expand_dims(values, axis), fnp.expand_dims(count, axis)
    elif out_ndim == 0:
        values, count = fnp.reshape(values, ()), fnp.reshape(count, ())
    return ModeResult(values, count)


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
