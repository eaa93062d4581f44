"""Devices and moving data: devices, device_put, device_get, block_until_ready,
effects_barrier."""
import numpy as np

from funcgraph import backend, core, tree_util
from funcgraph.array import Array


def devices(backend_name=None):
    return backend.devices()


def local_devices():
    return backend.devices()


def default_backend():
    return backend.platform()


def device_put(x, device=None):
    """Put every leaf of x on the device (as funcgraph Arrays)."""
    def put(leaf):
        if type(leaf) is Array:
            leaf._device_buffer(device)
            return leaf
        value = core.canonical_numpy(np.asarray(leaf))
        arr = Array(value, core.aval_of_numpy(value))
        arr._device_buffer(device)
        return arr
    return tree_util.tree_map(put, x)


def device_get(x):
    return tree_util.tree_map(lambda a: np.asarray(a) if type(a) is Array else a, x)


def block_until_ready(x):
    return tree_util.tree_map(lambda a: a.block_until_ready() if type(a) is Array else a, x)


def effects_barrier():
    """Wait until the host callbacks (debug.print, io_callback, ...) of every computation
    started so far have run."""
    backend.effects_barrier()
