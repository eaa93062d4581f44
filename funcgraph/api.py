"""Public entry points that are not transformations of their own: make_jaxpr,
eval_shape, device_put, devices."""
import functools

import numpy as np

from funcgraph import backend, core, tree_util
from funcgraph.array import Array
from funcgraph.interpreters.staging import trace_flat
from funcgraph.jit_function import ShapeDtypeStruct, leaf_aval


def _trace_pytree(fun, args, kwargs, static_argnums=()):
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    dyn_args = [a for i, a in enumerate(args) if i not in static_argnums]
    leaves, in_tree = tree_util.tree_flatten((dyn_args, kwargs))
    out_tree_box = []

    def flat_fun(*flat):
        dyn, kw = tree_util.tree_unflatten(in_tree, flat)
        it = iter(dyn)
        full = [args[i] if i in static_argnums else next(it) for i in range(len(args))]
        out = fun(*full, **kw)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_tree_box.append(out_tree)
        return out_leaves

    closed = trace_flat(flat_fun, [leaf_aval(x) for x in leaves])
    return closed, out_tree_box[0]


def make_jaxpr(fun, static_argnums=(), return_shape=False):
    """make_jaxpr(f)(*args) -> the ClosedJaxpr of f at the types of args."""
    @functools.wraps(fun)
    def make(*args, **kwargs):
        closed, out_tree = _trace_pytree(fun, args, kwargs, static_argnums)
        if return_shape:
            shapes = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in closed.out_avals]
            return closed, tree_util.tree_unflatten(out_tree, shapes)
        return closed
    return make


def eval_shape(fun, *args, **kwargs):
    """The output shapes and dtypes of fun(*args) as ShapeDtypeStructs, without computing."""
    closed, out_tree = _trace_pytree(fun, args, kwargs)
    return tree_util.tree_unflatten(
        out_tree, [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in closed.out_avals])


def devices(backend_name=None):
    return backend.devices()


def local_devices():
    return backend.devices()


def default_backend():
    return backend.platform()


def device_put(x, device=None):
    """Put every leaf of x on the device (as funcgraph Arrays)."""
    def put(leaf):
        if isinstance(leaf, Array):
            leaf._device_buffer(device)
            return leaf
        value = core.canonical_numpy(np.asarray(leaf))
        arr = Array(value, core.aval_of_numpy(value))
        arr._device_buffer(device)
        return arr
    return tree_util.tree_map(put, x)


def device_get(x):
    return tree_util.tree_map(lambda a: np.asarray(a) if isinstance(a, Array) else a, x)


def block_until_ready(x):
    return tree_util.tree_map(lambda a: a.block_until_ready() if isinstance(a, Array) else a, x)
