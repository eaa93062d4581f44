"""Ragged matrix products (lax.ragged_dot, lax.ragged_dot_general), composed of existing
primitives: the ragged dimension of an operand is expanded into a leading group axis whose
slice g keeps only the positions of group g (zeros elsewhere), and one dot_general then
contracts, or batches over, that group axis.  Differentiation and batching come from the
primitives used."""
import dataclasses

import numpy as np

from funcgraph import dtypes
from funcgraph.lax._contractions import dot_general
from funcgraph.lax._elementwise import bitwise_and, le, lt, select, sub
from funcgraph.lax._operands import as_operand
from funcgraph.lax._reductions import cumsum
from funcgraph.lax._shapes import broadcast, broadcast_in_dim, transpose
from funcgraph.lax._slicing import broadcasted_iota


@dataclasses.dataclass(frozen=True, init=False)
class RaggedDotDimensionNumbers:
    """The dimensions of ragged_dot_general: dot_dimension_numbers as dot_general's
    `((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`, the one lhs ragged
    dimension, and the rhs group dimensions (one when the ragged dimension is a
    non-contracting one, none otherwise)."""
    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: tuple
    rhs_group_dimensions: tuple

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
        object.__setattr__(self, "dot_dimension_numbers",
                           tuple(tuple(tuple(int(d) for d in dims) for dims in pair)
                                 for pair in dot_dimension_numbers))
        object.__setattr__(self, "lhs_ragged_dimensions",
                           tuple(int(d) for d in lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions",
                           tuple(int(d) for d in rhs_group_dimensions))


_BASIC = RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])
_NONCONTRACTING, _CONTRACTING, _BATCH = "noncontracting", "contracting", "batch"


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None):
    """Ragged matrix product: lhs (m, k), rhs (g, k, n), group_sizes (g,) integers; the
    rows of lhs fall into g consecutive groups of those sizes, group i multiplied by
    rhs[i] (rows past the last group give zeros).  Returns (m, n)."""
    return ragged_dot_general(lhs, rhs, group_sizes, _BASIC, precision, preferred_element_type,
                              group_offset)


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None):
    """dot_general with one ragged lhs dimension split into groups by group_sizes (shape
    [g] or [prefix..., g]).  A ragged non-contracting dimension picks rhs's slice of its
    group along the rhs group dimension; a ragged contracting dimension contracts each
    group on its own (the result gains a leading group axis); a ragged batch dimension
    is an ordinary batch dimension."""
    if group_offset is not None:
        raise NotImplementedError("Unimplemented group_offset support.")
    lhs, rhs, group_sizes = as_operand(lhs), as_operand(rhs), as_operand(group_sizes)
    dims = ragged_dot_dimension_numbers
    (l_contract, r_contract), (l_batch, r_batch) = dims.dot_dimension_numbers
    mode, ragged = _check_dimensions(lhs.aval, rhs.aval, group_sizes.aval, dims)
    l_prefix = _prefix_dims(mode, lhs.aval.ndim, ragged, l_batch, l_contract)
    if group_sizes.aval.ndim == 1:
        group_sizes = broadcast(group_sizes, [lhs.aval.shape[i] for i in l_prefix])
    def dot(x, y, dimension_numbers):
        return dot_general(x, y, dimension_numbers, precision, preferred_element_type)

    def shift(ds):  # the dimensions once a group axis 0 is in front
        return [d + 1 for d in ds]

    if mode == _NONCONTRACTING:
        expanded = _expand_groups(lhs, ragged, group_sizes, l_prefix)
        return dot(expanded, rhs, ((shift(l_contract) + [0],
                                    list(r_contract) + [dims.rhs_group_dimensions[0]]),
                                   (shift(l_batch), list(r_batch))))
    if mode == _CONTRACTING:
        r_ragged = r_contract[l_contract.index(ragged)]
        r_prefix = _prefix_dims(mode, rhs.aval.ndim, r_ragged, r_batch, r_contract)
        return dot(_expand_groups(lhs, ragged, group_sizes, l_prefix),
                   _expand_groups(rhs, r_ragged, group_sizes, r_prefix),
                   ((shift(l_contract), shift(r_contract)),
                    ([0] + shift(l_batch), [0] + shift(r_batch))))
    return dot(lhs, rhs, dims.dot_dimension_numbers)


def _expand_groups(x, dim, group_sizes, prefix):
    """x with a new leading group axis: slice g keeps the positions of x along dim that
    group g covers (group_sizes[..., g] of them, after those of the groups before) and
    is zero elsewhere; group_sizes' leading axes line up with x's prefix dimensions."""
    num_groups = group_sizes.aval.shape[-1]
    shape = (num_groups,) + x.aval.shape
    ends = cumsum(group_sizes, axis=group_sizes.aval.ndim - 1)
    starts = sub(ends, group_sizes)
    # group_sizes is [prefix..., g]: its group axis goes to 0 and its other axes to
    # 1 + prefix, in increasing order as broadcast_in_dim wants.
    targets = [1 + p for p in prefix] + [0]
    order = np.argsort(targets)
    sorted_targets = tuple(int(targets[i]) for i in order)
    starts, ends = (broadcast_in_dim(transpose(b, order), shape, sorted_targets)
                    for b in (starts, ends))
    position = broadcasted_iota(group_sizes.aval.dtype, shape, dim + 1)
    inside = bitwise_and(le(starts, position), lt(position, ends))
    zeros = np.zeros((), x.aval.dtype)
    return select(inside, broadcast(x, (num_groups,)), broadcast_in_dim(zeros, shape, ()))


def _prefix_dims(mode, rank, ragged, batch, contract):
    """The dimensions that group_sizes' leading axes stand for: the batch dimensions and
    the dimensions of the ragged one's kind before it (none but outer batch ones for a
    ragged batch dimension)."""
    batch, contract = list(batch), list(contract)
    free = [d for d in range(rank) if d not in batch and d not in contract]
    if mode == _NONCONTRACTING:
        return batch + free[:free.index(ragged)]
    if mode == _CONTRACTING:
        return batch + contract[:contract.index(ragged)]
    return batch[:batch.index(ragged)]


def _check_dimensions(lhs, rhs, group_sizes, dims):
    """(mode, lhs ragged dimension), with jax's errors for inconsistent arguments."""
    if not dtypes.is_int(group_sizes.dtype):
        raise TypeError("ragged_dot_general requires that group_sizes.dtype is subtype of "
                        f"np.integer, got {group_sizes.dtype.name}.")
    if len(dims.lhs_ragged_dimensions) != 1:
        raise TypeError("ragged_dot_general expects exactly one lhs ragged dimension.")
    ragged = dims.lhs_ragged_dimensions[0]
    _check_in_range(ragged, lhs.ndim, "lhs ragged dimension", "lhs")
    (l_contract, r_contract), (l_batch, r_batch) = dims.dot_dimension_numbers
    mode = (_CONTRACTING if ragged in l_contract else _BATCH if ragged in l_batch
            else _NONCONTRACTING)
    if group_sizes.ndim == 0:
        raise TypeError("expected rank of group_sizes to be >=1.")
    if group_sizes.ndim != 1:
        prefix = _prefix_dims(mode, lhs.ndim, ragged, l_batch, l_contract)
        expected = tuple(lhs.shape[i] for i in prefix) + group_sizes.shape[-1:]
        if group_sizes.shape != expected:
            raise TypeError(f"expected group_sizes to have shape {expected}, got "
                            f"{group_sizes.shape}.")
    group_dims = dims.rhs_group_dimensions
    if mode != _NONCONTRACTING and group_dims:
        raise TypeError("ragged_dot_general requires zero group dimensions in the rhs when "
                        "lhs ragged dimension is contracting or batch.")
    if mode == _NONCONTRACTING:
        if len(group_dims) != 1:
            raise TypeError("ragged_dot_general requires exactly one rhs group dimension "
                            "when lhs ragged dimension is noncontracting.")
        _check_in_range(group_dims[0], rhs.ndim, "rhs group dimension", "rhs")
        if group_dims[0] in r_batch or group_dims[0] in r_contract:
            raise TypeError("ragged_dot_general requires rhs group dimension numbers to be "
                            "distinct from contracting and batch dimensions.")
        if rhs.shape[group_dims[0]] != group_sizes.shape[-1]:
            raise TypeError(f"expected rhs group dimension size to be "
                            f"{group_sizes.shape[-1]}, got {rhs.shape[group_dims[0]]}.")
    return mode, ragged


def _check_in_range(dim, rank, dim_name, arg_name):
    if not 0 <= dim < rank:
        raise TypeError(f"ragged_dot_general requires {dim_name} numbers to be nonnegative "
                        f"and less than the number of axes of the {arg_name} value, got "
                        f"{dim} for {arg_name} of rank {rank}.")
