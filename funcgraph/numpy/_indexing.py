"""NumPy indexing of funcgraph arrays: `x[idx]` and `x.at[idx].set/add/...`, with JAX's rules.

An index is first normalized (`_parse`) into one entry per dimension of the operand, once
the index's new axes (None, and scalar booleans) have been inserted into it:

    _Slice(start, step, length)   a static slice (the step may be negative)
    int                           a static integer
    _Dynamic(value)               a traced integer scalar
    _Advanced(value)              an integer array (a NumPy array or a traced one)

Reading (`getitem`) turns static slices and integers into lax.slice/rev/squeeze, traced
integers into one dynamic_slice, and integer arrays into one gather. Updates (`.at[...]`)
become one scatter. Where several integer arrays meet, they broadcast together and their
result dimensions go where NumPy puts them: in place of the indexed dimensions when those
are adjacent in the index, else in front (integers count as arrays there).

Out-of-bounds indices follow JAX: reads clamp (`mode=None`), updates are dropped.
"""
import collections

import numpy as np

from funcgraph import core, dtypes, lax, shape_poly
from funcgraph.array import Array
from funcgraph.numpy._core import (
    array, asarray_operand, aval_of, broadcast_shapes, broadcast_to_shape, contains_traced,
    convert)
from funcgraph.numpy._creation import ones_like, zeros
from funcgraph.numpy._ufuncs import divide, negative, power, where_values


class NonConcreteBooleanIndexError(core.ConcretizationTypeError):
    """A boolean mask whose values are traced: the result's shape would depend on them."""


_Slice = collections.namedtuple("_Slice", "start step length")
_Dynamic = collections.namedtuple("_Dynamic", "value")
_Advanced = collections.namedtuple("_Advanced", "value")


def _index_dtype():
    return dtypes.default_int()


# --- parsing ---------------------------------------------------------------------------------

def _static_slice_part(v, sl):
    if v is None:
        return None
    if isinstance(v, core.Tracer):
        raise IndexError(
            f"array slice indices must be static to be used with NumPy indexing syntax; got "
            f"{sl} with a traced {v.aval.str_short()}. To index at a traced position, use "
            f"lax.dynamic_slice / lax.dynamic_slice_in_dim (or x.at[...] with an integer "
            f"array); shapes must be static under jit")
    try:
        return int(v.__index__())
    except (AttributeError, TypeError):
        raise TypeError(f"slice indices must be integers or None, got {v!r} in {sl}") from None


def _classify(item):
    """(kind, value) of one element of an index tuple."""
    if item is None:
        return "none", None
    if item is Ellipsis:
        return "ellipsis", None
    if isinstance(item, (bool, np.bool_)):
        return "bool", bool(item)
    if isinstance(item, slice):
        parts = tuple(_static_slice_part(v, item) for v in (item.start, item.stop, item.step))
        return "slice", slice(*parts)
    if isinstance(item, (int, np.integer)):
        return "int", int(item)
    if isinstance(item, (list, tuple)):
        item = _sequence_index(item)
    if isinstance(item, core.Tracer):
        return _classify_traced(item)
    if isinstance(item, (Array, np.ndarray, np.generic)):
        return _classify_concrete(np.asarray(item))
    raise TypeError(f"indexer must be an integer, a slice, Ellipsis, None, an integer array "
                    f"or a boolean mask; got {type(item).__name__} {item!r}")


def _sequence_index(seq):
    if contains_traced(seq):
        return array(seq)
    value = np.asarray(seq)
    return value.astype(np.intp) if value.size == 0 else value


def _classify_traced(t):
    aval = t.aval
    if aval.dtype == dtypes.bool_:
        raise NonConcreteBooleanIndexError(
            f"array boolean indices must be concrete; got a traced boolean mask "
            f"{aval.str_short()}. The number of True entries (hence the result's shape) is not "
            f"known while tracing. Use fnp.where(mask, x, fill) to keep the shape, or "
            f"x[fnp.nonzero(mask, size=N)] with a static size=N")
    if not dtypes.is_int(aval.dtype):
        raise TypeError(f"indexer must have integer or boolean type, got a traced "
                        f"{aval.str_short()}")
    return ("dyn", t) if aval.ndim == 0 else ("array", t)


def _classify_concrete(value):
    if value.dtype == np.bool_:
        return ("bool", bool(value)) if value.ndim == 0 else ("mask", value)
    if value.dtype.kind not in "iu":
        raise TypeError(f"indexer must have integer or boolean type, got an array of dtype "
                        f"{value.dtype} and shape {value.shape}")
    return ("int", int(value)) if value.ndim == 0 else ("array", value)


def _consumed(kind, value):
    if kind in ("int", "dyn", "slice", "array"):
        return 1
    if kind == "mask":
        return value.ndim
    return 0


def _parse(index, shape):
    """(positions of new axes, one entry per dimension, shape with the new axes)."""
    if not isinstance(index, tuple):
        if isinstance(index, list):
            raise TypeError("using a non-tuple sequence for multidimensional indexing is not "
                            "allowed; use `arr[array(seq)]` instead of `arr[seq]` (or "
                            "`arr[tuple(seq)]` for one index per dimension)")
        index = (index,)
    items = [_classify(i) for i in index]
    if sum(kind == "ellipsis" for kind, _ in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(_consumed(kind, value) for kind, value in items)
    if consumed > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but "
                         f"{consumed} were indexed")
    new_axes, entries, expanded = [], [], []
    dim = 0
    for kind, value in items:
        if kind in ("none", "bool"):
            new_axes.append(len(entries))
            if kind == "none":
                entries.append(_Slice(0, 1, 1))
            else:
                entries.append(_Advanced(np.zeros(1 if value else 0, np.intp)))
            expanded.append(1)
            continue
        if kind == "ellipsis":
            count = len(shape) - consumed
        elif kind == "mask":
            _check_mask(value, shape, dim)
            for coords in np.nonzero(value):
                entries.append(_Advanced(coords))
                expanded.append(shape[dim])
                dim += 1
            continue
        else:
            entries.append(_entry(kind, value, shape[dim]))
            expanded.append(shape[dim])
            dim += 1
            continue
        for _ in range(count):
            entries.append(_Slice(0, 1, shape[dim]))
            expanded.append(shape[dim])
            dim += 1
    while dim < len(shape):
        entries.append(_Slice(0, 1, shape[dim]))
        expanded.append(shape[dim])
        dim += 1
    return tuple(new_axes), entries, tuple(expanded)


def _check_mask(mask, shape, dim):
    for i, size in enumerate(mask.shape):
        if size != shape[dim + i]:
            raise IndexError(f"boolean index did not match indexed array along axis {dim + i}; "
                             f"size of axis is {shape[dim + i]} but size of corresponding "
                             f"boolean axis is {size}")


def _entry(kind, value, size):
    if kind == "slice":
        if type(size) is not int:  # symbolic (an export for every batch size)
            start, length = _symbolic_slice(value, size)
            return _Slice(start, 1, length)
        start, stop, step = value.indices(size)
        length = len(range(start, stop, step))
        return _Slice(start if length else 0, step if length > 1 else 1, length)
    if kind == "int":
        return value  # negative values are counted from the end where used, once
    if kind == "dyn":
        return _Dynamic(value)
    return _Advanced(value)


def _symbolic_slice(value, size):
    """(start, length) of a slice of the symbolic dimension `size` with constant bounds
    and step 1, clamped as Python clamps (x[1:], x[:-1], x[2:5]).  Where the clamping
    depends on the dimension's value (x[:16] of a dimension b, whose length is
    min(b, 16)) it is refused: funcgraph's dimensions have no min or max."""
    if value.step not in (None, 1) or not all(
            v is None or type(v) is int for v in (value.start, value.stop)):
        raise NotImplementedError(
            f"indexing: the slice {value} of the symbolic dimension {size}; funcgraph "
            f"slices symbolic dimensions with constant bounds and step 1 only")

    def bound(v, default):
        v = default if v is None else v
        v = v + size if v < 0 else v
        return 0 if v < 0 else size if v > size else v

    try:
        start, stop = bound(value.start, 0), bound(value.stop, size)
        return (start, stop - start) if stop >= start else (0, 0)
    except shape_poly.InconclusiveDimensionOperation:
        raise NotImplementedError(
            f"indexing: the slice {value} of the symbolic dimension {size}, whose length "
            f"depends on the value of {size}; funcgraph slices symbolic dimensions only "
            f"where the bounds fall inside it for every value") from None


def _ints_as_arrays(entries):
    """Integers count as 0-d integer arrays once an index holds arrays (NumPy's rule)."""
    out = []
    for e in entries:
        if isinstance(e, int):
            out.append(_Advanced(np.array(e, np.intp)))
        elif isinstance(e, _Dynamic):
            out.append(_Advanced(e.value))
        else:
            out.append(e)
    return out


# --- index arithmetic --------------------------------------------------------------------------

def _normalized(value, size):
    """Integer index (NumPy or traced) with negative values counted from the end, in the
    default index dtype."""
    dtype = _index_dtype()
    if not isinstance(value, core.Tracer):
        value = np.asarray(value)
        return np.where(value < 0, value + size, value).astype(dtype)
    unsigned = dtypes.is_unsigned(value.aval.dtype)
    value = convert(value, dtype)
    if unsigned:
        return value
    return lax.select(lax.lt(value, 0), lax.add(value, size), value)


def _is_static(x):
    return isinstance(x, np.ndarray)


def _stack_last(columns, shape):
    """Stack index columns (each of `shape`) along a new last axis."""
    if all(_is_static(c) for c in columns):
        return asarray_operand(np.stack([np.broadcast_to(c, shape) for c in columns], -1))
    cols = [lax.expand_dims(asarray_operand(np.broadcast_to(c, shape) if _is_static(c) else c),
                            (len(shape),)) for c in columns]
    return cols[0] if len(cols) == 1 else lax.concatenate(cols, len(shape))


def _broadcast_index_shapes(arrays):
    shapes = [aval_of(a).shape for a in arrays]
    try:
        return broadcast_shapes(*shapes)
    except ValueError:
        shown = " ".join(str(tuple(s)) for s in shapes)
        raise IndexError(f"shape mismatch: indexing arrays could not be broadcast together "
                         f"with shapes {shown}") from None


def _place(column, shape, dims):
    """`column` (static or traced) broadcast to `shape`, its dims going to `dims`."""
    if _is_static(column):
        expanded = [1] * len(shape)
        for axis, d in enumerate(dims):
            expanded[d] = column.shape[axis]
        return np.broadcast_to(column.reshape(expanded), shape)
    return lax.broadcast_in_dim(column, shape, dims)


def _gather_mode(mode):
    modes = lax.GatherScatterMode
    return modes.PROMISE_IN_BOUNDS if mode is None else modes.from_any(mode)


def _scatter_mode(mode):
    return lax.GatherScatterMode.from_any(mode)  # None means FILL_OR_DROP, as in JAX


# --- reading -----------------------------------------------------------------------------------

def getitem(x, index, *, mode=None, fill_value=None, unique_indices=False,
            indices_are_sorted=False):
    """x[index]; also x.at[index].get(...) and take."""
    x = asarray_operand(x)
    new_axes, entries, shape = _parse(index, x.aval.shape)
    if new_axes:
        x = lax.expand_dims(x, new_axes)
    mode = _gather_mode(mode)
    gathered = any(isinstance(e, _Advanced) for e in entries)
    if gathered or mode == lax.GatherScatterMode.FILL_OR_DROP:
        # with mode='fill' an out-of-bounds integer reads fill_value: gather it too
        entries = _ints_as_arrays(entries)
        gathered = any(isinstance(e, _Advanced) for e in entries)
    x = _static_slices(x, entries, shape)
    x = _dynamic_ints(x, entries, shape)
    point_dims = [d for d, e in enumerate(entries) if isinstance(e, (int, _Dynamic))]
    if point_dims:
        x = lax.squeeze(x, point_dims)
        entries = [e for e in entries if not isinstance(e, (int, _Dynamic))]
    if gathered:
        x = _gather(x, entries, mode, fill_value, unique_indices, indices_are_sorted)
    return x


def _static_slices(x, entries, shape):
    """One lax.slice (and a rev for negative steps) for every static slice and integer."""
    starts, limits, strides, reversed_dims = [], [], [], []
    for d, (e, size) in enumerate(zip(entries, shape)):
        if isinstance(e, _Slice):
            if e.step > 0:
                lo, stride = e.start, e.step
                hi = e.start + (e.length - 1) * e.step + 1 if e.length else e.start
            else:  # (a negative step means at least two elements, see _entry)
                lo, hi, stride = e.start + (e.length - 1) * e.step, e.start + 1, -e.step
                reversed_dims.append(d)
        elif isinstance(e, int):
            if size == 0:
                raise IndexError(f"index {e} is out of bounds for axis {d} with size 0")
            lo = min(max(e + size if e < 0 else e, 0), size - 1)  # reads clamp, as in JAX
            hi, stride = lo + 1, 1
        else:
            lo, hi, stride = 0, size, 1
        starts.append(lo)
        limits.append(hi)
        strides.append(stride)
    if starts != [0] * len(shape) or limits != list(shape) or set(strides) - {1}:
        x = lax.slice(x, starts, limits, None if set(strides) <= {1} else strides)
    if reversed_dims:
        x = lax.rev(x, reversed_dims)
    return x


def _dynamic_ints(x, entries, shape):
    dims = [d for d, e in enumerate(entries) if isinstance(e, _Dynamic)]
    if not dims:
        return x
    for d in dims:
        if shape[d] == 0:
            raise IndexError(f"index is out of bounds for axis {d} with size 0")
    sizes = tuple(1 if d in dims else size for d, size in enumerate(x.aval.shape))
    # dynamic_slice counts negative starts from the end and clamps, as JAX's x[i] does
    starts = [e.value if d in dims else 0 for d, e in enumerate(entries)]
    return lax.dynamic_slice(x, starts, sizes)


def _gather(x, entries, mode, fill_value, unique_indices, indices_are_sorted):
    shape = x.aval.shape
    adv = [d for d, e in enumerate(entries) if isinstance(e, _Advanced)]
    arrays = [entries[d].value for d in adv]
    batch = _broadcast_index_shapes(arrays)
    rest = [d for d in range(len(shape)) if d not in adv]
    adjacent = adv == list(range(adv[0], adv[0] + len(adv)))
    if adjacent:
        offset_dims = tuple(d if d < adv[0] else d - len(adv) + len(batch) for d in rest)
    else:
        offset_dims = tuple(range(len(batch), len(batch) + len(rest)))
    empty = [d for d in adv if shape[d] == 0]
    if empty:
        return _gather_from_empty(x, empty[0], batch, offset_dims, rest)
    columns = [_normalized(a, shape[d]) for a, d in zip(arrays, adv)]
    columns = [c if _is_static(c) else broadcast_to_shape(c, batch) for c in columns]
    indices = _stack_last(columns, batch)
    dnums = lax.GatherDimensionNumbers(offset_dims=offset_dims, collapsed_slice_dims=tuple(adv),
                                       start_index_map=tuple(adv))
    slice_sizes = tuple(1 if d in adv else size for d, size in enumerate(shape))
    return lax.gather(x, indices, dnums, slice_sizes, unique_indices=unique_indices,
                      indices_are_sorted=indices_are_sorted, mode=mode, fill_value=fill_value)


def _gather_from_empty(x, dim, batch, offset_dims, rest):
    """Integer arrays into an axis of size 0: only an empty selection is in bounds."""
    if int(np.prod(batch)) != 0:
        raise IndexError(f"index is out of bounds for axis {dim} with size 0")
    out_shape = [None] * (len(batch) + len(rest))
    for pos, d in zip(offset_dims, rest):
        out_shape[pos] = x.aval.shape[d]
    it = iter(batch)
    out_shape = tuple(next(it) if s is None else s for s in out_shape)
    zero = np.zeros((), x.aval.dtype)
    return lax.broadcast_in_dim(zero, out_shape, ())


# --- updates -----------------------------------------------------------------------------------

class _UpdatePlan:
    """How x[index] lays out the indexed elements, as a scatter sees them.

    view: the shape of x[index]; window_positions: the view dims that are slices of x
    (scatter windows); scatter_shape: the other view dims; columns: (operand dim, index
    values of scatter_shape) for every dim that the index vector addresses."""

    def __init__(self, entries, shape):
        adv = [d for d, e in enumerate(entries) if isinstance(e, _Advanced)]
        batch = _broadcast_index_shapes([entries[d].value for d in adv]) if adv else ()
        adjacent = bool(adv) and adv == list(range(adv[0], adv[0] + len(adv)))
        view = []       # ("window" | "iota", dim, size) or ("batch",)
        if adv and not adjacent:
            view.append(("batch",))
        for d, e in enumerate(entries):
            if isinstance(e, _Slice):
                kind = "window" if e.step == 1 else "iota"
                view.append((kind, d, e.length))
            elif isinstance(e, _Advanced) and adjacent and d == adv[0]:
                view.append(("batch",))
        self.view_shape, self.window_positions, scatter_dims = [], [], {}
        batch_positions = []
        for item in view:
            if item[0] == "batch":
                for size in batch:
                    batch_positions.append(len(scatter_dims))
                    scatter_dims[("batch", len(batch_positions))] = len(scatter_dims)
                    self.view_shape.append(size)
                continue
            kind, d, size = item
            if kind == "window":
                self.window_positions.append(len(self.view_shape))
            else:
                scatter_dims[("iota", d)] = len(scatter_dims)
            self.view_shape.append(size)
        self.view_shape = tuple(self.view_shape)
        self.scatter_shape = tuple(s for i, s in enumerate(self.view_shape)
                                   if i not in self.window_positions)
        self.windows = [d for d, e in enumerate(entries) if isinstance(e, _Slice) and e.step == 1]
        self.columns = []
        self.traced = False
        self.sorted = not adv
        for d, e in enumerate(entries):
            column = self._column(d, e, shape[d], scatter_dims, batch, batch_positions)
            if column is not None:
                self.columns.append((d, column))
                self.traced = self.traced or not _is_static(column)

    def _column(self, d, e, size, scatter_dims, batch, batch_positions):
        shape = self.scatter_shape
        if isinstance(e, _Slice):
            if e.step == 1:
                if e.start == 0 and e.length == size:
                    return None
                return np.full(shape, e.start, _index_dtype())
            self.sorted = self.sorted and e.step > 0
            values = (e.start + e.step * np.arange(e.length)).astype(_index_dtype())
            return _place(values, shape, (scatter_dims[("iota", d)],))
        if isinstance(e, int):
            return np.full(shape, e + size if e < 0 else e, _index_dtype())
        if isinstance(e, _Dynamic):
            return _place(_normalized(e.value, size), shape, ())
        values = _normalized(e.value, size)
        if not _is_static(values):
            values = broadcast_to_shape(values, batch)
        else:
            values = np.broadcast_to(values, batch)
        return _place(values, shape, tuple(batch_positions))


_SCATTERS = {"set": "scatter", "add": "scatter_add", "mul": "scatter_mul",
             "min": "scatter_min", "max": "scatter_max"}


def scatter_update(x, index, values, kind, *, mode=None, indices_are_sorted=False,
                   unique_indices=False):
    """x.at[index].<kind>(values) for kind in set/add/mul/min/max."""
    x = asarray_operand(x)
    aval = x.aval
    values = convert(values, aval.dtype, aval.weak_type)
    new_axes, entries, shape = _parse(index, aval.shape)
    if new_axes:
        x = lax.expand_dims(x, new_axes)
    if any(isinstance(e, _Advanced) for e in entries):
        entries = _ints_as_arrays(entries)
    plan = _UpdatePlan(entries, shape)
    try:
        updates = broadcast_to_shape(values, plan.view_shape)
    except ValueError:
        raise ValueError(f"x.at[...].{kind}: values of shape {aval_of(values).shape} cannot be "
                         f"broadcast to the indexed shape {plan.view_shape}") from None
    if not plan.columns:
        out = _combine_everywhere(x, updates, kind)
    else:
        indices = _stack_last([c for _, c in plan.columns], plan.scatter_shape)
        windows = set(plan.windows)
        dnums = lax.ScatterDimensionNumbers(
            update_window_dims=tuple(plan.window_positions),
            inserted_window_dims=tuple(d for d in range(len(shape)) if d not in windows),
            scatter_dims_to_operand_dims=tuple(d for d, _ in plan.columns))
        if plan.sorted:
            # only static slices and integers: every element is written once, in order
            indices_are_sorted = unique_indices = True
        scatter = getattr(lax, _SCATTERS[kind])
        out = scatter(x, indices, updates, dnums, indices_are_sorted=indices_are_sorted,
                      unique_indices=unique_indices, mode=_scatter_mode(mode))
    if new_axes:
        out = lax.squeeze(out, new_axes)
    return out


def _combine_everywhere(x, updates, kind):
    if kind == "set":
        return updates
    op = {"add": lax.add, "mul": lax.mul, "min": lax.min, "max": lax.max}[kind]
    return op(x, updates)


# --- x.at[...] ---------------------------------------------------------------------------------

class IndexUpdateHelper:
    """`x.at`: index it (`x.at[idx]`) to get an updater of the indexed elements."""
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


class IndexUpdateRef:
    """`x.at[idx]`: each method returns a new array with the indexed elements updated."""
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None):
        return getitem(self.array, self.index, mode=mode, fill_value=fill_value,
                       unique_indices=unique_indices, indices_are_sorted=indices_are_sorted)

    def _update(self, values, kind, indices_are_sorted, unique_indices, mode):
        return scatter_update(self.array, self.index, values, kind, mode=mode,
                              indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, "set", indices_are_sorted, unique_indices, mode)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, "add", indices_are_sorted, unique_indices, mode)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        values = convert(values, aval_of(self.array).dtype)
        return self._update(negative(values), "add", indices_are_sorted, unique_indices, mode)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, "mul", indices_are_sorted, unique_indices, mode)

    mul = multiply

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, "min", indices_are_sorted, unique_indices, mode)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, "max", indices_are_sorted, unique_indices, mode)

    def _factors(self, values, indices_are_sorted, unique_indices, mode):
        ones = IndexUpdateRef(ones_like(self.array), self.index)
        return ones.multiply(values, indices_are_sorted=indices_are_sorted,
                             unique_indices=unique_indices, mode=mode)

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return divide(self.array, self._factors(values, indices_are_sorted, unique_indices, mode))

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return power(self.array, self._factors(values, indices_are_sorted, unique_indices, mode))

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """func (elementwise) applied to the indexed elements, once per occurrence of an
        element in the index (as JAX's scatter does; with traced index arrays, once)."""
        x = asarray_operand(self.array)
        counts = IndexUpdateRef(zeros(x.aval.shape, np.int32), self.index).add(
            1, indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)
        for r in range(_static_multiplicity(x.aval.shape, self.index)):
            x = where_values(counts > r, convert(func(x), x.aval.dtype, x.aval.weak_type), x)
        return x


def _static_multiplicity(shape, index):
    """How many times the index names its most repeated element (1 when traced)."""
    _, entries, expanded = _parse(index, shape)
    if any(isinstance(e, _Advanced) for e in entries):
        entries = _ints_as_arrays(entries)
    plan = _UpdatePlan(entries, expanded)
    if plan.traced or not plan.columns:
        return 1
    vectors = np.stack([np.broadcast_to(c, plan.scatter_shape) for _, c in plan.columns], -1)
    vectors = vectors.reshape(-1, len(plan.columns))
    if not len(vectors):
        return 0
    return int(np.unique(vectors, axis=0, return_counts=True)[1].max())
