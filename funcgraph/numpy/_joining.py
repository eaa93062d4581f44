"""Joining and splitting: concatenate, stack and its kin, split and its kin, flip."""
import builtins

import numpy as np

from funcgraph import core, lax
from funcgraph.array import Array
from funcgraph.numpy._core import (
    asarray_operand, astype, aval_of, canonical_axes, check_axis, check_same_shapes,
    promote_dtypes)
from funcgraph.numpy._shapes import (
    atleast_1d, atleast_2d, atleast_3d, expand_dims, ndim, ravel, reshape, shape)


def _as_sequence(arrays, name):
    """A list of operands from a sequence, or the rows of one array."""
    if isinstance(arrays, (Array, core.Tracer, np.ndarray)):
        arrays = asarray_operand(arrays)
        if ndim(arrays) == 0:
            raise ValueError(f"{name}: need a sequence of arrays, got a 0-d array")
        return [arrays[i] for i in range(shape(arrays)[0])]
    arrays = [asarray_operand(a) for a in arrays]
    if not arrays:
        raise ValueError(f"{name}: need at least one array to {name.split('.')[-1]}")
    return arrays


def concatenate(arrays, axis=0, dtype=None):
    arrays = _as_sequence(arrays, "concatenate")
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    if dtype is not None:
        arrays = [astype(a, dtype) for a in arrays]
    arrays = promote_dtypes(*arrays)
    first = aval_of(arrays[0])
    if first.ndim == 0:
        raise ValueError("concatenate: zero-dimensional arrays cannot be concatenated "
                         "(use stack, or reshape them to rank 1)")
    axis = check_axis(axis, first.ndim)
    for i, a in enumerate(arrays[1:], 1):
        other = aval_of(a)
        if other.ndim != first.ndim:
            raise TypeError(f"concatenate: all arrays must have the same number of dimensions, "
                            f"but arrays[0] has shape {first.shape} and arrays[{i}] has shape "
                            f"{other.shape}")
        if builtins.any(d0 != d1 for j, (d0, d1) in enumerate(zip(first.shape, other.shape))
                        if j != axis):
            raise TypeError(f"concatenate: array shapes must match except along axis {axis}, "
                            f"but arrays[0] has shape {first.shape} and arrays[{i}] has shape "
                            f"{other.shape}")
    if len(arrays) == 1:
        return arrays[0]
    return lax.concatenate(arrays, axis)


concat = concatenate


def stack(arrays, axis=0, out=None, dtype=None):
    arrays = _as_sequence(arrays, "stack")
    check_same_shapes(arrays, "stack")
    axis = check_axis(axis, ndim(arrays[0]) + 1)
    return concatenate([expand_dims(a, axis) for a in arrays], axis, dtype=dtype)


def hstack(tup, dtype=None):
    arrays = [atleast_1d(a) for a in _as_sequence(tup, "hstack")]
    return concatenate(arrays, 0 if ndim(arrays[0]) == 1 else 1, dtype=dtype)


def vstack(tup, dtype=None):
    return concatenate([atleast_2d(a) for a in _as_sequence(tup, "vstack")], 0, dtype=dtype)


row_stack = vstack


def dstack(tup, dtype=None):
    return concatenate([atleast_3d(a) for a in _as_sequence(tup, "dstack")], 2, dtype=dtype)


def column_stack(tup):
    arrays = []
    for a in _as_sequence(tup, "column_stack"):
        arrays.append(reshape(a, (-1, 1)) if ndim(a) < 2 else a)
    return concatenate(arrays, 1)


def slice_axis(a, start, stop, axis):
    aval = aval_of(a)
    if start == 0 and stop == aval.shape[axis]:
        return a
    starts = [0] * aval.ndim
    limits = list(aval.shape)
    starts[axis], limits[axis] = start, stop
    return lax.slice(a, starts, limits)


def _split_points(indices_or_sections, size, equal, name):
    if isinstance(indices_or_sections, core.Tracer):
        raise core.ConcretizationTypeError(
            f"{name}: indices_or_sections must be static (a traced value was given); pass it "
            f"with static_argnums under jit")
    sections = np.asarray(indices_or_sections)
    if sections.ndim == 0:
        n = int(sections)
        if n <= 0:
            raise ValueError(f"{name}: number of sections must be larger than 0, got {n}")
        if equal and size % n:
            raise ValueError(f"{name}: array split does not result in an equal division "
                             f"({size} elements into {n} sections); use array_split")
        base, extra = builtins.divmod(size, n)
        sizes = [base + 1] * extra + [base] * (n - extra)
        return [0] + [int(s) for s in np.cumsum(sizes)[:-1]]
    return [0] + [int(i) for i in sections]


def _split(ary, indices_or_sections, axis, equal, name):
    ary = asarray_operand(ary)
    axis = check_axis(axis, ndim(ary))
    size = shape(ary)[axis]
    starts = _split_points(indices_or_sections, size, equal, name)
    stops = starts[1:] + [size]
    out = []
    for start, stop in zip(starts, stops):
        start = builtins.min(builtins.max(start + size if start < 0 else start, 0), size)
        stop = builtins.min(builtins.max(stop + size if stop < 0 else stop, start), size)
        out.append(slice_axis(ary, start, stop, axis))
    return out


def split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, True, "split")


def array_split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, False, "array_split")


def hsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 0 if ndim(ary) == 1 else 1)


def vsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 2)


def flip(m, axis=None):
    m = asarray_operand(m)
    axes = canonical_axes(axis, ndim(m))
    return lax.rev(m, axes) if axes else m


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)
