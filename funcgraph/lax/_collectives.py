"""Collectives over a named vmap axis: psum, pmax, pmin, pmean, all_gather, axis_index."""
from funcgraph import core, tree_util
from funcgraph.interpreters.batching import find_axis
from funcgraph.lax._elementwise import convert_element_type, div
from funcgraph.lax._operands import as_operand, aval_of
from funcgraph.primitives.collectives import all_gather_p, axis_index_p, pmax_p, pmin_p, psum_p


def _axis_names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _collective(prim):
    def fn(x, axis_name):
        return tree_util.tree_map(
            lambda leaf: prim.bind(as_operand(leaf), axis_name=_axis_names(axis_name)), x)
    core.named_function(fn, prim.name)
    return fn


psum = _collective(psum_p)
pmax = _collective(pmax_p)
pmin = _collective(pmin_p)


def pmean(x, axis_name):
    """The mean over the named axis: psum(x) / (the axis size)."""
    size = psum(1, axis_name)
    return tree_util.tree_map(lambda leaf: div(psum(leaf, axis_name),
                                               convert_element_type(size, aval_of(leaf).dtype)), x)


def all_gather(x, axis_name, *, axis=0, tiled=False):
    """Every lane's x, stacked (or concatenated with tiled=True) along `axis`."""
    names = _axis_names(axis_name)
    if len(names) != 1:
        raise NotImplementedError("all_gather over several axis names")
    size = find_axis(names[0]).size

    def gather(leaf):
        leaf = as_operand(leaf)
        ax = axis % (leaf.aval.ndim + (0 if tiled else 1))
        return all_gather_p.bind(leaf, axis_name=names, axis=ax, tiled=tiled, axis_size=size)
    return tree_util.tree_map(gather, x)


def axis_index(axis_name):
    """This lane's index along the named vmap axis."""
    return axis_index_p.bind(axis_name=_axis_names(axis_name))
