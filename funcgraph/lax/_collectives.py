"""Collectives over named axes (of vmap, shard_map or pmap): psum, pmax, pmin, pmean,
all_gather, psum_scatter, ppermute, all_to_all, pswapaxes, axis_index, axis_size."""
import math

import numpy as np

from funcgraph import core, tree_util
from funcgraph.interpreters.batching import find_axis, manual_axis_names
from funcgraph.lax._elementwise import add, div, mul
from funcgraph.lax._operands import as_operand, aval_of
from funcgraph.primitives.base import transpose_p
from funcgraph.primitives.collectives import (
    all_gather_p, all_to_all_p, axis_index_p, pmax_p, pmin_p, ppermute_p, psum_p, pvary_p,
    reduce_scatter_p)


def _axis_names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _collective(prim):
    def fn(x, axis_name, *, axis_index_groups=None):
        _no_groups(axis_index_groups, prim.name)
        return tree_util.tree_map(
            lambda leaf: prim.bind(as_operand(leaf), axis_name=_axis_names(axis_name)), x)
    core.named_function(fn, prim.name)
    return fn


def psum(x, axis_name, *, axis_index_groups=None):
    """The sum over the named axis; a Python scalar is the same on every lane, so its
    sum is the scalar times the axis size, a constant."""
    if core.is_python_scalar(x):
        _no_groups(axis_index_groups, "psum")
        return int(x) * axis_size(axis_name) if isinstance(x, bool) else x * axis_size(axis_name)
    return _psum(x, axis_name, axis_index_groups=axis_index_groups)


_psum = _collective(psum_p)
pmax = _collective(pmax_p)
pmin = _collective(pmin_p)


def axis_size(axis_name):
    """The size of the named axis (the product of the sizes for a tuple of names)."""
    return math.prod(find_axis(n).size for n in _axis_names(axis_name))


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean over the named axis: psum(x) / (the axis size, known statically)."""
    _no_groups(axis_index_groups, "pmean")
    size = axis_size(axis_name)
    return tree_util.tree_map(
        lambda leaf: div(psum(leaf, axis_name), np.array(size, aval_of(leaf).dtype)), x)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Every lane's x, stacked (or concatenated with tiled=True) along `axis`."""
    _no_groups(axis_index_groups, "all_gather")
    names = _axis_names(axis_name)
    size = axis_size(names)

    def gather(leaf):
        leaf = as_operand(leaf)
        ax = axis % (leaf.aval.ndim + (0 if tiled else 1))
        return all_gather_p.bind(leaf, axis_name=names, axis=ax, tiled=tiled, axis_size=size)
    return tree_util.tree_map(gather, x)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """psum, of which each lane (device) keeps only its block along scatter_dimension
    (that dimension removed, unless tiled=True)."""
    _no_groups(axis_index_groups, "psum_scatter")
    names = _axis_names(axis_name)
    size = axis_size(names)

    def scatter(leaf):
        leaf = as_operand(leaf)
        return reduce_scatter_p.bind(leaf, axis_name=names,
                                   scatter_dimension=scatter_dimension % leaf.aval.ndim,
                                   tiled=tiled, axis_size=size)
    return tree_util.tree_map(scatter, x)


def ppermute(x, axis_name, perm):
    """Send each lane's x to another: perm is a list of (source, destination) indices
    along the axis; lanes no one sends to get zeros."""
    names = _axis_names(axis_name)
    perm = tuple((int(s), int(t)) for s, t in perm)
    return tree_util.tree_map(
        lambda leaf: ppermute_p.bind(as_operand(leaf), axis_name=names, perm=perm), x)


def pshuffle(x, axis_name, perm):
    """Lane i gets lane perm[i]'s x."""
    return ppermute(x, axis_name, [(p, i) for i, p in enumerate(perm)])


def _move_axis(x, src, dst):
    ndim = x.aval.ndim
    if src == dst:
        return x
    order = [d for d in range(ndim) if d != src]
    order.insert(dst, src)
    return transpose_p.bind(x, permutation=tuple(order))


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Split x along split_axis into one chunk per lane, send chunk j to lane j, and
    concatenate what arrives along concat_axis; untiled, split_axis (of the axis's size)
    is removed and the chunks stack along a new concat_axis."""
    _no_groups(axis_index_groups, "all_to_all")
    names = _axis_names(axis_name)
    size = axis_size(names)

    def exchange(leaf):
        leaf = as_operand(leaf)
        ndim = leaf.aval.ndim
        split, concat = split_axis % ndim, concat_axis % ndim
        if tiled:
            return all_to_all_p.bind(leaf, axis_name=names, split_axis=split,
                                     concat_axis=concat, axis_size=size)
        if leaf.aval.shape[split] != size:
            raise ValueError(f"all_to_all: split_axis {split} of {leaf.aval.str_short()} "
                             f"must have the size of the axis {names} ({size}), or pass "
                             f"tiled=True")
        front = _move_axis(leaf, split, 0)
        swapped = all_to_all_p.bind(front, axis_name=names, split_axis=0, concat_axis=0,
                                    axis_size=size)
        return _move_axis(swapped, 0, concat)
    return tree_util.tree_map(exchange, x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swap the named axis with x's axis `axis` (of the named axis's size): lane i gets
    the i-th chunks of every lane, stacked along `axis`; all_to_all(x, axis_name, axis,
    axis)."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


_PCAST_TO = ("reduced", "unreduced", "varying")


def pcast(x, axis_name, *, to):
    """to="varying": x, marked as differing between devices along the named axes (the
    value is unchanged; the gradient of a value used so is summed over the axes).  In a
    shard_map body without check_vma, where nothing tracks variance, it does nothing."""
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name}")
    if to not in _PCAST_TO:
        raise ValueError(f"Got unexpected `to` value. Allowed `to` values are: "
                         f"{set(_PCAST_TO)}")
    if to != "varying":
        raise NotImplementedError(f"pcast(..., to={to!r}): only to='varying' is supported")
    tracked = core.current.vma_axes
    untracked = set(manual_axis_names()) - set(tracked)
    names = tuple(n for n in _axis_names(axis_name) if n not in untracked)
    if not names:
        return x
    return tree_util.tree_map(lambda leaf: _pvary(as_operand(leaf), names, tracked), x)


def _pvary(leaf, names, tracked):
    vma = aval_of(leaf).vma
    already = [n for n in names if n in tracked and n in vma]
    if already and len(already) == len(names):
        raise ValueError("Unsupported pcast from=varying, to='varying'")
    if already:
        raise ValueError(f"lax.pcast can only accept axis_name which corresponds to one "
                         f"of varying, unreduced, reduced or invarying state of the input. "
                         f"Got input type: {aval_of(leaf).str_short()}, axes: {names} and "
                         f"input state: {{'invarying', 'varying'}}")
    return pvary_p.bind(leaf, axis_name=names)


def _no_groups(groups, name):
    if groups is not None:
        raise NotImplementedError(f"{name} with axis_index_groups is not supported")


def axis_index(axis_name):
    """This lane's index along the named vmap axis (or device's along mesh axes); over
    several vmap axes, its row-major index in their product."""
    names = _axis_names(axis_name)
    if len(names) == 1 or set(names) & set(manual_axis_names()):
        return axis_index_p.bind(axis_name=names)
    index = axis_index_p.bind(axis_name=names[:1])
    for name in names[1:]:
        index = add(mul(index, np.int32(find_axis(name).size)),
                    axis_index_p.bind(axis_name=(name,)))
    return index
