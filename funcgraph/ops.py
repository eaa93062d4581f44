"""funcgraph.ops: segment reductions, with jax.ops' names and semantics.

`segment_sum(data, segment_ids, num_segments)` reduces the rows of `data` that share a
segment id into row `id` of a (num_segments, *data.shape[1:]) result: one scatter of
`data` into an array filled with the reduction's identity.  Ids outside
[0, num_segments) are dropped (negative ones too: no wrap-around), and a segment no row
names keeps the identity (0 for sums, 1 for products, the dtype's lowest value for
maxima and its highest for minima).
"""
import operator

import numpy as np

from funcgraph import dtypes, lax
from funcgraph import numpy as fnp

def _identity(name, dtype):
    if name == "segment_sum":
        return 0
    if name == "segment_prod":
        return 1
    lowest = name == "segment_max"
    if dtypes.issubdtype(dtype, np.inexact):
        return -np.inf if lowest else np.inf
    if dtype == np.bool_:
        return not lowest
    info = np.iinfo(dtype)
    return info.min if lowest else info.max


def _segment_reduce(name, scatter, data, segment_ids, num_segments, indices_are_sorted,
                    unique_indices, mode):
    data, segment_ids = fnp.asarray(data), fnp.asarray(segment_ids)
    if not dtypes.issubdtype(segment_ids.dtype, np.integer):
        raise TypeError(f"{name}: segment_ids must be integers, got {segment_ids.dtype}")
    if num_segments is None:
        num_segments = int(fnp.max(segment_ids)) + 1 if segment_ids.size else 0
    num_segments = operator.index(num_segments)  # a static size (a tracer refuses)
    if segment_ids.ndim != 1 or data.ndim < 1 or data.shape[0] != segment_ids.shape[0]:
        raise ValueError(f"{name}: segment_ids must be one id per row of data (shape "
                         f"({data.shape[0] if data.ndim else 0},)), got shape "
                         f"{segment_ids.shape} for data of shape {data.shape}")
    out = lax.full((num_segments, *data.shape[1:]),
                   np.dtype(data.dtype).type(_identity(name, data.dtype)))
    indices = lax.broadcast_in_dim(segment_ids, (segment_ids.shape[0], 1), (0,))
    numbers = lax.ScatterDimensionNumbers(
        update_window_dims=tuple(range(1, data.ndim)), inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,))
    return scatter(out, indices, data, numbers, indices_are_sorted=indices_are_sorted,
                   unique_indices=unique_indices,
                   mode=lax.GatherScatterMode.FILL_OR_DROP if mode is None else mode)


def _segment_function(name, scatter, summary):
    def reduce(data, segment_ids, num_segments=None, indices_are_sorted=False,
               unique_indices=False, bucket_size=None, mode=None):
        # bucket_size splits a long reduction into buckets to bound rounding growth:
        # the result is the same reduction, so one scatter serves every value.
        del bucket_size
        return _segment_reduce(name, scatter, data, segment_ids, num_segments,
                               indices_are_sorted, unique_indices, mode)
    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = f"The {summary} of the rows of `data` in each segment (jax.ops.{name})."
    return reduce


segment_sum = _segment_function("segment_sum", lax.scatter_add, "sum")
segment_prod = _segment_function("segment_prod", lax.scatter_mul, "product")
segment_max = _segment_function("segment_max", lax.scatter_max, "maximum")
segment_min = _segment_function("segment_min", lax.scatter_min, "minimum")

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
