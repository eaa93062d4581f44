"""Host callbacks with JAX's API: pure_callback (funcgraph.pure_callback) and io_callback
(funcgraph.experimental.io_callback), and the argument splitting that the debug
callbacks share."""
import numpy as np

from funcgraph import core, dtypes, tree_util
from funcgraph.primitives.callbacks import (
    VMAP_METHODS, FlatCallback, io_callback_p, pure_callback_p)


def split_callback_args(args, kwargs):
    """(tree of (args, kwargs), dynamic leaves, static leaves as ((index, value), ...)):
    array-like leaves travel through the program, the others (strings, ...) are kept."""
    leaves, in_tree = tree_util.tree_flatten((tuple(args), dict(kwargs)))
    dynamic, static = [], []
    for i, leaf in enumerate(leaves):
        try:
            core.get_aval(leaf)
        except TypeError:
            static.append((i, leaf))
        else:
            dynamic.append(leaf)
    return in_tree, dynamic, tuple(static)


def _result_avals(result_shape_dtypes):
    """The flat result types and their tree (JAX's error for 64-bit types without x64)."""
    leaves, out_tree = tree_util.tree_flatten(result_shape_dtypes)
    avals = []
    for leaf in leaves:
        dtype = np.dtype(leaf.dtype)
        if dtypes.canonicalize(dtype) != dtype:
            raise ValueError("result_shape_dtypes cannot specify 64-bit types when "
                             "`jax_enable_x64` is disabled")
        avals.append(core.ShapedArray(tuple(leaf.shape), dtype))
    return tuple(avals), out_tree


def _flat_call(callback, args, kwargs):
    leaves, in_tree = tree_util.tree_flatten((tuple(args), dict(kwargs)))
    return leaves, FlatCallback(callback, in_tree)


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
    """Call the pure Python function `callback(*args, **kwargs)` (on funcgraph Arrays)
    from anywhere: eagerly, under jit (an XLA host callback), vmap (per `vmap_method`:
    "sequential" loops over the batch, "expand_dims" adds a leading axis of size 1 to
    unbatched operands, "broadcast_all" tiles them; None is an error), in control flow.
    It must return arrays matching `result_shape_dtypes` (a pytree of objects with
    .shape and .dtype).  It has no derivative: wrap it in custom_jvp / custom_vjp.
    In a program over several devices it runs once, on whole values, on the first
    device or the one `sharding` (a SingleDeviceSharding) names; inside shard_map, on
    every device with its blocks."""
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {VMAP_METHODS}, "
                         f"but got: {vmap_method}")
    result_avals, out_tree = _result_avals(result_shape_dtypes)
    leaves, flat = _flat_call(callback, args, kwargs)
    outs = pure_callback_p.bind(*leaves, callback=flat, result_avals=result_avals,
                                sharding=sharding, vmap_method=vmap_method)
    return tree_util.tree_unflatten(out_tree, outs)


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    """Call the impure Python function `callback(*args, **kwargs)`; it always runs (passes
    never drop it), and with ordered=True in program order with the other ordered
    effects.  Results must match `result_shape_dtypes`.  Over several devices it runs
    as pure_callback does (`sharding` names its device); ordered, in program order
    there too."""
    result_avals, out_tree = _result_avals(result_shape_dtypes)
    leaves, flat = _flat_call(callback, args, kwargs)
    outs = io_callback_p.bind(*leaves, callback=flat, result_avals=result_avals,
                              sharding=sharding, ordered=bool(ordered))
    return tree_util.tree_unflatten(out_tree, outs)
