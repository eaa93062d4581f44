"""NumPy's index tricks: s_, index_exp (plain index expressions), ix_, mgrid, ogrid, r_,
c_ (arrays built by indexing syntax)."""
import numpy as np

from funcgraph.numpy._core import array, asarray, aval_of
from funcgraph.numpy._creation import arange
from funcgraph.numpy._shapes import reshape, transpose
from funcgraph.numpy._joining import concatenate, stack
from funcgraph.numpy._ranges import linspace, meshgrid

# Index expressions hold no arrays: NumPy's objects serve as they are (as in JAX).
s_ = np.s_
index_exp = np.index_exp


def ix_(*args):
    """An open mesh from 1-D integer sequences: the k-th result has shape (1,..,n_k,..,1)."""
    out = []
    for k, arg in enumerate(args):
        arg = asarray(arg)
        if aval_of(arg).ndim != 1:
            raise ValueError(f"ix_: arguments must be 1-dimensional, got shape "
                             f"{aval_of(arg).shape} at position {k}")
        if aval_of(arg).dtype == np.bool_:
            raise TypeError("ix_: boolean arguments are not supported (their size is not "
                            "static); pass integer indices, e.g. from nonzero()")
        shape = [1] * len(args)
        shape[k] = aval_of(arg).shape[0]
        out.append(reshape(arg, tuple(shape)))
    return tuple(out)


def _slice_range(item):
    """The 1-D array a slice stands for: arange, or linspace for a complex step
    (`0:1:5j` is 5 points from 0 to 1 inclusive)."""
    start = 0 if item.start is None else item.start
    step = 1 if item.step is None else item.step
    if isinstance(step, complex):
        return linspace(start, item.stop, int(abs(step)))
    return arange(start, item.stop, step)


def _grid_dtype(slices):
    parts = [v for s in slices for v in (s.start, s.stop, s.step) if v is not None]
    return float if any(isinstance(v, (float, complex)) for v in parts) else int


class _Grid:
    """mgrid (dense) / ogrid (sparse): `mgrid[0:3, 0:4]` is the index grid."""

    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        slices = key if isinstance(key, tuple) else (key,)
        dtype = _grid_dtype(slices)
        ranges = [asarray(_slice_range(s), dtype=dtype) for s in slices]
        if not isinstance(key, tuple):
            return ranges[0]
        grids = meshgrid(*ranges, indexing="ij", sparse=self.sparse)
        return list(grids) if self.sparse else stack(grids, 0)


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)


def _parse_directive(text):
    """'axis[,ndmin[,trans1d]]' -> ints (NumPy's string directive of r_ and c_)."""
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise ValueError(f"r_/c_: unsupported directive {text!r} (JAX does not support the "
                         f"matrix directives 'r' and 'c')") from None
    if not 1 <= len(values) <= 3:
        raise ValueError(f"r_/c_: directive {text!r} has more than three numbers")
    return values


def _promote_ndmin(item, ndmin, trans1d):
    """item with at least ndmin dimensions; its own axes go where trans1d says."""
    item = asarray(item)
    ndim = aval_of(item).ndim
    if ndim >= ndmin:
        return item
    out = array(item, ndmin=ndmin)
    if trans1d != -1:
        added = ndmin - ndim
        first = trans1d if trans1d >= 0 else trans1d + added + 1
        axes = list(range(ndmin))
        out = transpose(out, axes[:first] + axes[added:] + axes[first:added])
    return out


class _Concatenator:
    """r_ / c_: concatenate slices (as ranges), scalars and arrays along an axis."""

    def __init__(self, axis, ndmin, trans1d):
        self.defaults = (axis, ndmin, trans1d)

    def __getitem__(self, key):
        items = list(key) if isinstance(key, tuple) else [key]
        axis, ndmin, trans1d = self.defaults
        if items and isinstance(items[0], str):
            values = _parse_directive(items.pop(0))
            axis, ndmin, trans1d = (values + [ndmin, trans1d][len(values) - 1:])[:3]
        parts = [_promote_ndmin(_slice_range(i) if isinstance(i, slice) else i, ndmin, trans1d)
                 for i in items]
        if not parts:
            return asarray([], dtype=float)
        return concatenate(parts, axis=axis)


r_ = _Concatenator(axis=0, ndmin=1, trans1d=-1)
c_ = _Concatenator(axis=-1, ndmin=2, trans1d=0)
