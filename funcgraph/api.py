"""Public entry points that are not transformations of their own: make_jaxpr,
eval_shape, device_put, devices."""
import functools

import numpy as np

from funcgraph import backend, core, tree_util
from funcgraph.array import Array
from funcgraph.jit_function import JitFunction


def make_jaxpr(fun, static_argnums=(), return_shape=False):
    """make_jaxpr(f)(*args) -> the ClosedJaxpr of f at the types of args (jit's trace,
    before any pass runs)."""
    traceable = JitFunction(fun, static_argnums=static_argnums)

    @functools.wraps(fun)
    def make(*args, **kwargs):
        traced = traceable.trace(*args, **kwargs)
        return (traced.jaxpr, traced.out_info) if return_shape else traced.jaxpr
    return make


def eval_shape(fun, *args, **kwargs):
    """The output shapes and dtypes of fun(*args) as ShapeDtypeStructs, without computing."""
    return JitFunction(fun).trace(*args, **kwargs).out_info


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
