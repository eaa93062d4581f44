"""reduce_window and reduce over a user monoid, with JAX's signatures.  A known monoid
(lax.add, lax.max, ... with its identity as the init value) takes the dedicated
primitive; any other computation is traced to a jaxpr."""
import operator

import numpy as np

from funcgraph import core, tree_util
from funcgraph.array import Array
from funcgraph.interpreters.staging import trace_flat
from funcgraph.lax._convolution import padtype_to_pads
from funcgraph.lax._elementwise import (
    add, bitwise_and, bitwise_or, convert_element_type, max, min, mul)
from funcgraph.lax._operands import as_operand
from funcgraph.primitives import reductions as _red
from funcgraph.primitives import windowed as _win
from funcgraph.primitives.base import identity
from funcgraph.primitives.convolution import dilate_dim, stride_dim

__all__ = ["reduce", "reduce_window", "reduce_window_shape_tuple"]


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    """The output shape of reduce_window, as jax computes it: no checks, and a dimension
    that holds no window has size 0 (stax's layers pass a batch size of -1 for "any")."""
    n = len(operand_shape)
    base_dilation = (1,) * n if base_dilation is None else base_dilation
    window_dilation = (1,) * n if window_dilation is None else window_dilation
    return tuple(
        stride_dim(dilate_dim(d, b) + lo + hi, dilate_dim(k, w), s)
        for d, k, s, (lo, hi), b, w in zip(operand_shape, window_dimensions, window_strides,
                                           padding, base_dilation, window_dilation,
                                           strict=True))


def _concrete_scalar(x):
    """The value of a concrete scalar init value, or None (traced or not a scalar)."""
    if isinstance(x, core.Tracer):
        return None
    value = x._value if isinstance(x, Array) else np.asarray(x)
    return value if np.shape(value) == () else None


def _is_identity(init, dtype, monoid):
    value = _concrete_scalar(init)
    return value is not None and bool(np.equal(value, identity(dtype, monoid)))


def _matching(init, dtype):
    """An init value given as a Python number adopts the operand's dtype."""
    value = as_operand(init)
    if value.aval.weak_type and value.aval.dtype != dtype:
        return convert_element_type(value, dtype)
    return value


def _trace_monoid(computation, tree, dtypes_):
    """computation(acc_tree, x_tree) -> tree, traced over scalars into a const-free jaxpr."""
    avals = [core.ShapedArray((), d) for d in dtypes_]
    n = len(avals)
    out_trees = []

    def flat(*leaves):
        acc = tree_util.tree_unflatten(tree, list(leaves[:n]))
        x = tree_util.tree_unflatten(tree, list(leaves[n:]))
        out_leaves, out_tree = tree_util.tree_flatten(computation(acc, x))
        out_trees.append(out_tree)
        return [_matching(o, d) for o, d in zip(out_leaves, dtypes_)]

    closed = trace_flat(flat, avals * 2)
    if out_trees[0] != tree:
        raise ValueError(f"the reduction computation must return the operands' tree "
                         f"structure {tree}, got {out_trees[0]}")
    if closed.consts:
        raise NotImplementedError("the reduction computation closes over traced arrays; "
                                  "pass them as operands instead")
    return closed


def _flat_operands(name, operands, init_values):
    flat, tree = tree_util.tree_flatten(operands)
    flat_inits, init_tree = tree_util.tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"Operands must have the same tree structure as init_values: {tree} "
                         f"vs. {init_tree}")
    if not flat:
        raise ValueError(f"{name} must have at least one operand.")
    flat = [as_operand(x) for x in flat]
    inits = [_matching(i, x.aval.dtype) for i, x in zip(flat_inits, flat, strict=True)]
    return flat, inits, tree


_WINDOW_MONOIDS = ((add, "add", _win.reduce_window_sum_p),
                   (max, "max", _win.reduce_window_max_p),
                   (min, "min", _win.reduce_window_min_p))


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """Reduce each window of `operand` (or of a tree of operands) with `computation`,
    starting from `init_value`; padding is 'VALID', 'SAME', 'SAME_LOWER' or (low, high)
    pairs."""
    flat, inits, tree = _flat_operands("reduce_window", operand, init_value)
    window_dimensions = tuple(operator.index(d) for d in window_dimensions)
    n = len(window_dimensions)
    window_strides = (1,) * n if window_strides is None else \
        tuple(operator.index(s) for s in window_strides)
    base_dilation = (1,) * n if base_dilation is None else tuple(base_dilation)
    window_dilation = (1,) * n if window_dilation is None else tuple(window_dilation)
    if isinstance(padding, str):
        spans = [dilate_dim(k, w) for k, w in zip(window_dimensions, window_dilation)]
        padding = padtype_to_pads(flat[0].aval.shape, spans, window_strides, padding)
    params = dict(window_dimensions=window_dimensions, window_strides=window_strides,
                  padding=tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding),
                  base_dilation=tuple(operator.index(b) for b in base_dilation),
                  window_dilation=tuple(operator.index(w) for w in window_dilation))
    if len(flat) == 1:
        for fn, monoid, prim in _WINDOW_MONOIDS:
            if computation is fn and _is_identity(inits[0], flat[0].aval.dtype, monoid):
                return tree_util.tree_unflatten(tree, [prim.bind(flat[0], **params)])
    jaxpr = _trace_monoid(computation, tree, [x.aval.dtype for x in flat])
    outs = _win.reduce_window_p.bind(*flat, *inits, jaxpr=jaxpr, **params)
    return tree_util.tree_unflatten(tree, outs)


_REDUCE_MONOIDS = ((add, "add", _red.reduce_sum_p), (mul, "mul", _red.reduce_prod_p),
                   (max, "max", _red.reduce_max_p), (min, "min", _red.reduce_min_p),
                   (bitwise_and, "and", _red.reduce_and_p), (bitwise_or, "or", _red.reduce_or_p))


def _bitwise(fn):
    return fn is bitwise_and or fn is bitwise_or


def reduce(operands, init_values, computation, dimensions):
    """Reduce `operands` (an array or a tree of arrays of one shape) over `dimensions`
    with the monoid (`computation`, `init_values`)."""
    flat, inits, tree = _flat_operands("reduce", operands, init_values)
    dimensions = tuple(operator.index(d) for d in dimensions)
    if len(flat) == 1:
        dtype = flat[0].aval.dtype
        integral = dtype == np.bool_ or np.issubdtype(dtype, np.integer)
        for fn, monoid, prim in _REDUCE_MONOIDS:
            if computation is fn and (integral or not _bitwise(fn)) and \
                    _is_identity(inits[0], dtype, monoid):
                return tree_util.tree_unflatten(tree, [prim.bind(flat[0], axes=dimensions)])
    jaxpr = _trace_monoid(computation, tree, [x.aval.dtype for x in flat])
    outs = _win.reduce_p.bind(*flat, *inits, jaxpr=jaxpr, dimensions=dimensions)
    return tree_util.tree_unflatten(tree, outs)
