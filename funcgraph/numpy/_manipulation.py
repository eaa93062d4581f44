"""Array manipulation of funcgraph.numpy: differences, tiling, rolling, padding,
Kronecker and cross products, append/delete/insert."""
import builtins
import operator

import numpy as np

from funcgraph import core, dtypes, lax
from funcgraph.array import Array
from funcgraph.numpy._compiled import compiled_when_eager
from funcgraph.numpy._core import asarray_operand, astype, aval_of, check_axis, promote_dtypes
from funcgraph.numpy._creation import zeros_like
from funcgraph.numpy._joining import concatenate, flip, stack
from funcgraph.numpy._shapes import broadcast_to, moveaxis, ravel, reshape, transpose
from funcgraph.numpy._taking import take
from funcgraph.numpy._ufuncs import not_equal, remainder, subtract

# delete and pad take at most this many runs of elements as slices (more: one gather)
_MAX_SLICES = 8


def _index_arg(value, name):
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {value!r}") from None


def diff(a, n=1, axis=-1, prepend=None, append=None):
    a = asarray_operand(a)
    n = _index_arg(n, "diff: n")
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative, got {n}")
    nd = aval_of(a).ndim
    if nd == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = check_axis(axis, nd)
    if n == 0:
        return a
    parts = []
    for extra in (prepend, append):
        if extra is None:
            parts.append(None)
            continue
        extra = asarray_operand(extra)
        if aval_of(extra).ndim == 0:
            shape = list(aval_of(a).shape)
            shape[axis] = 1
            extra = broadcast_to(extra, tuple(shape))
        parts.append(extra)
    pieces = [p for p in (parts[0], a, parts[1]) if p is not None]
    if len(pieces) > 1:
        a = concatenate(pieces, axis=axis)
    boolean = aval_of(a).dtype == np.bool_
    for _ in range(n):
        size = aval_of(a).shape[axis]
        upper = lax.slice_in_dim(a, 1, builtins.max(size, 1), axis=axis) if size else a
        lower = lax.slice_in_dim(a, 0, builtins.max(size - 1, 0), axis=axis)
        a = not_equal(upper, lower) if boolean else subtract(upper, lower)
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    ary = ravel(ary)
    out = diff(ary)
    pieces = [out]
    if to_begin is not None:
        pieces.insert(0, ravel(astype(to_begin, aval_of(ary).dtype)))
    if to_end is not None:
        pieces.append(ravel(astype(to_end, aval_of(ary).dtype)))
    return concatenate(pieces) if len(pieces) > 1 else out


def tile(A, reps):
    A = asarray_operand(A)
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    reps = tuple(_index_arg(r, "tile: reps") for r in reps)
    if builtins.any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be non-negative, got {reps}")
    shape = aval_of(A).shape
    nd = builtins.max(len(shape), len(reps))
    shape = (1,) * (nd - len(shape)) + shape
    reps = (1,) * (nd - len(reps)) + reps
    # A broadcast to (r0, s0, r1, s1, ...), then merged pairwise
    lead = nd - aval_of(A).ndim
    wide = lax.broadcast_in_dim(A, tuple(d for r, s in zip(reps, shape) for d in (r, s)),
                                tuple(2 * i + 1 for i in range(lead, nd)))
    return reshape(wide, tuple(r * s for r, s in zip(reps, shape)))


def _roll_static(a, shift, axis):
    n = aval_of(a).shape[axis]
    if n == 0:
        return a
    shift %= n
    if shift == 0:
        return a
    return concatenate([lax.slice_in_dim(a, n - shift, n, axis=axis),
                        lax.slice_in_dim(a, 0, n - shift, axis=axis)], axis=axis)


def _roll_traced(a, shift, axis):
    n = aval_of(a).shape[axis]
    if n == 0:
        return a
    start = remainder(n - remainder(shift, n), n).astype(dtypes.default_int())
    doubled = concatenate([a, a], axis=axis)
    return lax.dynamic_slice_in_dim(doubled, start, n, axis=axis)


def roll(a, shift, axis=None):
    a = asarray_operand(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), aval_of(a).shape)
    nd = aval_of(a).ndim
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    if isinstance(shift, core.Tracer) or isinstance(shift, Array):
        shifts = [shift] if aval_of(shift).ndim == 0 else [shift[i] for i in
                                                            range(aval_of(shift).shape[0])]
    else:
        shifts = [shift] if np.ndim(shift) == 0 else list(shift)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(axes) == 1:
        axes = axes * len(shifts)
    if len(axes) != len(shifts):
        raise ValueError(f"roll: shift and axis must have the same length (or one be a "
                         f"scalar), got {len(shifts)} shifts and {len(axes)} axes")
    for s, ax in zip(shifts, axes):
        ax = check_axis(ax, nd)
        if isinstance(s, core.Tracer):
            a = _roll_traced(a, s, ax)
        else:
            a = _roll_static(a, _index_arg(int(np.asarray(s)) if isinstance(s, Array)
                                           else s, "roll: shift"), ax)
    return a


def rot90(m, k=1, axes=(0, 1)):
    m = asarray_operand(m)
    nd = aval_of(m).ndim
    if len(axes) != 2:
        raise ValueError(f"rot90: axes must be a pair, got {axes!r}")
    ax0, ax1 = check_axis(axes[0], nd, "axes[0]"), check_axis(axes[1], nd, "axes[1]")
    if ax0 == ax1:
        raise ValueError("rot90: the two axes must differ")
    k = _index_arg(k, "rot90: k") % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, ax0), ax1)
    perm = list(range(nd))
    perm[ax0], perm[ax1] = perm[ax1], perm[ax0]
    if k == 1:
        return transpose(flip(m, ax1), perm)
    return flip(transpose(m, perm), ax1)


# --- pad ---------------------------------------------------------------------------------------

def _pairs(value, nd, name, integer):
    """NumPy's broadcasting of pad widths / values to one (before, after) pair per axis."""
    arr = np.asarray(value)
    if arr.dtype == object or (integer and arr.size and arr.dtype.kind not in "iu"):
        raise TypeError(f"pad: {name} must be integers, got {value!r}")
    if arr.ndim > 2 or (arr.ndim >= 1 and arr.shape[-1] not in (1, 2)) or (
            arr.ndim == 2 and arr.shape[0] not in (1, nd)):
        raise ValueError(f"pad: {name} {value!r} cannot be broadcast to ({nd}, 2), one "
                         f"(before, after) pair per axis")
    arr = np.broadcast_to(arr.reshape((-1, arr.shape[-1]) if arr.ndim else (1, 1)), (nd, 2))
    return [tuple(row) for row in arr.tolist()]


def pad(array, pad_width, mode="constant", **kwargs):
    array = asarray_operand(array)
    nd = aval_of(array).ndim
    if isinstance(pad_width, core.Tracer):
        raise core.ConcretizationTypeError("pad: pad_width must be static (not traced)")
    widths = _pairs(pad_width, nd, "pad_width", True)
    widths = [(int(b), int(a)) for b, a in widths]
    if builtins.any(b < 0 or a < 0 for b, a in widths):
        raise ValueError(f"pad: pad_width can't contain negative values, got {pad_width!r}")
    allowed = {"constant": {"constant_values"}, "empty": set(), "edge": set(),
               "wrap": set(), "reflect": {"reflect_type"}, "symmetric": {"reflect_type"}}
    if callable(mode) or mode not in allowed:
        raise NotImplementedError(f"pad: mode {mode!r} is not supported; use one of "
                                  f"{sorted(allowed)}")
    extra = set(kwargs) - allowed[mode]
    if extra:
        raise ValueError(f"pad: unsupported keyword arguments for mode {mode!r}: "
                         f"{sorted(extra)}")
    if mode in ("constant", "empty"):
        return _pad_constant(array, widths, kwargs.get("constant_values", 0))
    if kwargs.get("reflect_type", "even") != "even":
        raise NotImplementedError("pad: reflect_type='odd' is not supported")
    for axis, (before, after) in enumerate(widths):
        if before == after == 0:
            continue
        n = aval_of(array).shape[axis]
        if n == 0:
            raise ValueError(f"pad: can't extend empty axis {axis} using modes other than "
                             f"'constant' or 'empty'")
        # NumPy's own pad of the positions gives the source of every output position
        source = np.pad(np.arange(n), (before, after), mode=mode)
        left, right = _runs(source[:before]), _runs(source[before + n:])
        if len(left) + len(right) > _MAX_SLICES:  # many short runs: one gather
            array = take(array, source.astype(np.int32), axis=axis, mode="promise_in_bounds")
            continue
        array = concatenate([_run_values(array, run, axis) for run in left] + [array]
                            + [_run_values(array, run, axis) for run in right], axis=axis)
    return array


def _runs(source):
    """Source positions as runs (first, length, step) of steps 1, -1 or 0."""
    runs, i = [], 0
    while i < len(source):
        j, step = i + 1, 1
        if j < len(source) and source[j] - source[i] in (1, -1, 0):
            step = int(source[j] - source[i])
            while j < len(source) and source[j] - source[j - 1] == step:
                j += 1
        runs.append((int(source[i]), j - i, step))
        i = j
    return runs


def _run_values(array, run, axis):
    """The elements of a run of source positions along axis: a slice, reversed for a
    descending run, broadcast for a repeated position."""
    first, length, step = run
    if step == 1:
        return lax.slice_in_dim(array, first, first + length, axis=axis)
    if step == -1:
        return lax.rev(lax.slice_in_dim(array, first - length + 1, first + 1, axis=axis),
                       (axis,))
    one = lax.slice_in_dim(array, first, first + 1, axis=axis)
    shape = list(aval_of(one).shape)
    shape[axis] = length
    return lax.broadcast_in_dim(one, tuple(shape), tuple(range(len(shape))))


def _pad_constant(array, widths, constant_values):
    nd = aval_of(array).ndim
    dtype = aval_of(array).dtype
    if isinstance(constant_values, core.Tracer) or (
            isinstance(constant_values, Array) and aval_of(constant_values).ndim == 0):
        values = [(constant_values, constant_values)] * nd
    else:
        values = _pairs(constant_values, nd, "constant_values", False)
    if _all_same(values):  # one value: one pad
        return lax.pad(array, astype(values[0][0], dtype), [(b, a, 0) for b, a in widths])
    # axis by axis and side by side: the corners get the values of the last axis, as in
    # NumPy
    for axis in range(nd):
        for side, value in enumerate(values[axis]):
            if widths[axis][side]:
                config = [(0, 0, 0)] * nd
                config[axis] = (widths[axis][0], 0, 0) if side == 0 else (0, widths[axis][1], 0)
                array = lax.pad(array, astype(value, dtype), config)
    return array


def _all_same(values):
    first = values[0][0]
    if isinstance(first, (core.Tracer, Array)):
        return builtins.all(v is first for pair in values for v in pair)
    return builtins.all(v == first for pair in values for v in pair)


# --- products ------------------------------------------------------------------------------------

def kron(a, b):
    a, b = promote_dtypes(a, b)
    sa, sb = aval_of(a).shape, aval_of(b).shape
    nd = builtins.max(len(sa), len(sb))
    sa, sb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
    # a and b broadcast to (a0, b0, a1, b1, ...), multiplied, then merged pairwise
    wide = tuple(d for x, y in zip(sa, sb) for d in (x, y))
    a = lax.broadcast_in_dim(a, wide, tuple(2 * i for i in range(nd - aval_of(a).ndim, nd)))
    b = lax.broadcast_in_dim(b, wide, tuple(2 * i + 1 for i in range(nd - aval_of(b).ndim, nd)))
    return reshape(a * b, tuple(x * y for x, y in zip(sa, sb)))


@compiled_when_eager(static_argnames=("axisa", "axisb", "axisc", "axis"))
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote_dtypes(a, b)
    a = moveaxis(a, check_axis(axisa, aval_of(a).ndim, "axisa"), -1)
    b = moveaxis(b, check_axis(axisb, aval_of(b).ndim, "axisb"), -1)
    na, nb = aval_of(a).shape[-1], aval_of(b).shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(f"cross: incompatible dimensions for cross product (dimension must "
                         f"be 2 or 3), got {na} and {nb}")
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    if na == 2 and nb == 2:
        return a0 * b1 - a1 * b0
    a2 = a[..., 2] if na == 3 else zeros_like(a0)
    b2 = b[..., 2] if nb == 3 else zeros_like(b0)
    c = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return moveaxis(c, -1, check_axis(axisc, aval_of(c).ndim, "axisc"))


# --- append, delete, insert -------------------------------------------------------------------

def append(arr, values, axis=None):
    if axis is None:
        return concatenate([ravel(arr), ravel(values)])
    return concatenate([arr, values], axis=axis)


def _static_positions(obj, n, name):
    if isinstance(obj, core.Tracer):
        raise core.ConcretizationTypeError(f"{name}: obj must be static (not traced)")
    if isinstance(obj, slice):
        return np.arange(n)[obj]
    pos = np.asarray(obj)
    if pos.dtype == np.bool_:
        raise TypeError(f"{name}: boolean obj is not supported; use integer positions")
    if pos.size and pos.dtype.kind not in "iu":
        raise TypeError(f"{name}: obj must be integers or a slice, got {obj!r}")
    return pos.astype(np.int64)


def delete(arr, obj, axis=None):
    arr = asarray_operand(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = check_axis(axis, aval_of(arr).ndim)
    n = aval_of(arr).shape[axis]
    pos = _static_positions(obj, n, "delete")
    if pos.size and (pos.min() < -n or pos.max() >= n):
        raise IndexError(f"delete: index out of bounds for axis {axis} with size {n}")
    keep = np.ones(n, bool)
    keep[pos % n if n else pos] = False
    kept = np.flatnonzero(keep)
    # the kept runs of consecutive positions: a few slices, else one gather
    starts = kept[np.flatnonzero(np.diff(kept, prepend=-2) != 1)]
    ends = kept[np.flatnonzero(np.diff(kept, append=n + 2) != 1)] + 1
    if 0 < len(starts) <= _MAX_SLICES:
        runs = [lax.slice_in_dim(arr, int(b), int(e), axis=axis) for b, e in zip(starts, ends)]
        return runs[0] if len(runs) == 1 else concatenate(runs, axis=axis)
    return take(arr, kept.astype(np.int32), axis=axis, mode="promise_in_bounds")


def insert(arr, obj, values, axis=None):
    arr = asarray_operand(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = check_axis(axis, aval_of(arr).ndim)
    n = aval_of(arr).shape[axis]
    pos = _static_positions(obj, n + 1, "insert")
    scalar_pos = pos.ndim == 0
    pos = np.atleast_1d(pos)
    if pos.size and (pos.min() < -n or pos.max() > n):
        raise IndexError(f"insert: index out of bounds for axis {axis} with size {n}")
    pos = np.where(pos < 0, pos + n, pos)
    values = astype(values, aval_of(arr).dtype)
    shape = list(aval_of(arr).shape)
    vshape = aval_of(values).shape
    if scalar_pos:
        # as NumPy: values get the array's rank (leading ones), then their first axis
        # moves into place, and all of it is inserted at the one position
        nd = aval_of(arr).ndim
        values = reshape(values, (1,) * (nd - len(vshape)) + vshape)
        values = moveaxis(values, 0, axis)
        pos = np.full(aval_of(values).shape[axis], pos[0])
    shape[axis] = pos.size
    values = broadcast_to(values, tuple(shape))
    # stable ordering of old positions and new ones: new ones go before the old one at pos
    order = np.argsort(np.concatenate([np.arange(n), pos]) * 2
                       - np.concatenate([np.zeros(n, int), np.ones(pos.size, int)]),
                       kind="stable")
    joined = concatenate([arr, values], axis=axis)
    return take(joined, order.astype(np.int32), axis=axis, mode="promise_in_bounds")
