"""Multi-dimensional histograms (histogramdd, histogram2d) over the 1-d bin edges of
funcgraph.numpy.histogram_bin_edges; the counts come from one bincount of flat bin indices,
so they are jittable (bin counts are static) and weights are differentiable."""
import builtins

import numpy as np

from funcgraph.numpy._core import asarray, promote_to_inexact
from funcgraph.numpy._joining import stack
from funcgraph.numpy._manipulation import diff
from funcgraph.numpy._reductions import sum
from funcgraph.numpy._setops import searchsorted
from funcgraph.numpy._shapes import reshape
from funcgraph.numpy._sorting import where
from funcgraph.numpy._stats import bincount, histogram_bin_edges


def _per_dimension(value, n, name):
    if value is None or np.ndim(value) == 0 and not isinstance(value, (list, tuple)):
        return [value] * n
    if len(value) != n:
        raise ValueError(f"histogramdd: {name} must have one entry per dimension ({n}), "
                         f"got {len(value)}")
    return list(value)


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    (sample,) = promote_to_inexact(asarray(sample))
    if sample.ndim != 2:
        raise ValueError(f"histogramdd: sample must be 2-d (N, D), got shape {sample.shape}")
    n_dims = sample.shape[1]
    bins_per_dim = bins if isinstance(bins, (list, tuple)) else [bins] * n_dims
    if len(bins_per_dim) != n_dims:
        raise ValueError(f"histogramdd: bins must have one entry per dimension ({n_dims})")
    ranges = _per_dimension(range, n_dims, "range")
    edges, flat_index, sizes = [], 0, []
    for d in builtins.range(n_dims):
        column = sample[:, d]
        e = histogram_bin_edges(column, bins_per_dim[d], ranges[d])
        # 0 below the first edge, 1..n inside (the last edge closes the last bin), n+1 above
        index = searchsorted(e, column, side="right")
        index = where(column == e[-1], index - 1, index)
        size = e.shape[0] + 1
        flat_index = flat_index * size + index
        edges.append(e)
        sizes.append(size)
    total = int(np.prod(sizes))
    counts = bincount(flat_index, weights, length=total)
    counts = reshape(counts, tuple(sizes))[tuple(slice(1, -1) for _ in sizes)]
    if density:
        counts = counts / sum(counts)
        for d, e in enumerate(edges):
            shape = [1] * n_dims
            shape[d] = -1
            counts = counts / reshape(diff(e), shape)
    return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    x, y = asarray(x), asarray(y)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"histogram2d: x and y must be 1-d of one length, got {x.shape} and "
                         f"{y.shape}")
    sample = stack([x, y], axis=1)
    if np.ndim(bins) == 1 and len(bins) != 2 or hasattr(bins, "aval"):
        bins = [bins, bins]  # one array of edges for both dimensions
    counts, (x_edges, y_edges) = histogramdd(sample, bins, range, weights, density)
    return counts, x_edges, y_edges
