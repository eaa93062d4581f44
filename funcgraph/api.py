"""Devices and moving data: devices, device_put, device_get, block_until_ready,
effects_barrier, and arrays laid out over several devices."""
import importlib.metadata
import os
import platform
import sys
import textwrap
import warnings

import numpy as np

from funcgraph import backend, core, tree_util
from funcgraph.array import Array, put_sharded, reshard as place_array
from funcgraph.backend import platforms, spmd
from funcgraph.primitives.sharding_constraint import sharding_constraint_p
from funcgraph.sharding import (
    NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding, resolve, spelled_out)


class _DeviceType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, backend.device_type())

    def __subclasscheck__(cls, sub):
        return sub is cls or issubclass(sub, backend.device_type())


class Device(metaclass=_DeviceType):
    """jax.Device: the type of what devices() holds (the runtime's device objects);
    isinstance and issubclass answer for the runtime's class, imported on first use."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("Device objects come from funcgraph.devices(); they cannot be built")


def devices(backend=None):
    """The devices of platform `backend` ("cpu", "gpu", ...; None: the default backend)."""
    return platforms.devices(backend)


def local_devices(process_index=None, backend=None):
    if process_index is None:
        return platforms.local_devices(backend)
    return [d for d in platforms.devices(backend) if d.process_index == process_index]


def device_count(backend=None):
    return len(platforms.devices(backend))


def local_device_count(backend=None):
    return len(platforms.local_devices(backend))


def process_index(backend=None):
    return spmd.process_index()


def process_count(backend=None):
    return spmd.process_count()


def process_indices(backend=None):
    """The indices of every process: [0, ..., process_count() - 1]."""
    return list(range(spmd.process_count()))


def _renamed(old, new):
    warnings.warn(f"funcgraph.{old} has been renamed to funcgraph.{new} (as in jax). This "
                  f"alias will eventually be removed; please update your code.", stacklevel=3)


def host_count(backend=None):
    """Deprecated alias of process_count (jax's)."""
    _renamed("host_count", "process_count")
    return process_count(backend)


def host_id(backend=None):
    """Deprecated alias of process_index (jax's)."""
    _renamed("host_id", "process_index")
    return process_index(backend)


def host_ids(backend=None):
    """Deprecated alias of process_indices (jax's)."""
    _renamed("host_ids", "process_indices")
    return process_indices(backend)


def default_backend():
    """The default backend's platform name: "cpu", "gpu" or "tpu"."""
    return platforms.default_platform()


def _as_sharding(where):
    if where is None or isinstance(where, (Sharding, PartitionSpec)):
        return None if where is None else resolve(where, "device_put")
    return SingleDeviceSharding(where)  # a device


def device_put(x, device=None):
    """Put every leaf of x on a device, or lay it out as a sharding says (each device
    gets its block); `device` may be a tree prefix of x.  Placed arrays are committed:
    jit runs where they are."""
    if device is None or isinstance(device, (Sharding, PartitionSpec)) or \
            not isinstance(device, (tuple, list, dict)):
        return tree_util.tree_map(lambda leaf: _put(leaf, _as_sharding(device)), x)
    return tree_util.tree_map(lambda where, leaf: _put(leaf, _as_sharding(where)), device, x,
                              is_leaf=lambda v: v is None)


def _put(leaf, sharding):
    if isinstance(leaf, core.Tracer):
        return _put_traced(leaf, sharding)
    if sharding is None:
        if type(leaf) is Array:
            leaf._device_buffer()
            return leaf
        value = core.canonical_numpy(np.asarray(leaf))
        arr = Array(value, core.aval_of_numpy(value))
        arr._device_buffer()
        return arr
    if type(leaf) is Array:
        return place_array(leaf, sharding)
    return put_sharded(leaf, sharding)


def _put_traced(leaf, sharding):
    """Inside a transformation a sharding is a constraint on the layout, as
    with_sharding_constraint (jit checks its devices are the program's)."""
    if sharding is None:
        return leaf
    if isinstance(sharding, NamedSharding):
        return sharding_constraint_p.bind(leaf, sharding=sharding)
    raise NotImplementedError(f"device_put of a traced value to {sharding}: inside jit, "
                              f"funcgraph places values by NamedSharding only")


def reshard(xs, out_shardings):
    """xs laid out as out_shardings say (one sharding or PartitionSpec for every leaf, or
    a tree prefix of xs): placed now outside jit, a layout constraint inside it.  Over
    Explicit mesh axes the result's spec names every dimension, as jax's result type
    does (funcgraph's types themselves carry no sharding)."""
    leaves, tree = tree_util.tree_flatten(xs)
    given = tree_util.prefix_leaves(out_shardings, xs, _is_sharding_leaf, "reshard")
    out = []
    for leaf, s in zip(leaves, given, strict=True):
        s = resolve(s, "reshard")
        if isinstance(s, NamedSharding):
            s = spelled_out(s, np.ndim(leaf))
        out.append(sharding_constraint_p.bind(leaf, sharding=s))
    return tree_util.tree_unflatten(tree, out)


def _is_sharding_leaf(x):
    return isinstance(x, (Sharding, PartitionSpec))


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """An Array laid out as `sharding` whose block on each device is
    data_callback(index) (index: the block's slices into the global array)."""
    shape = tuple(shape)
    sharding = resolve(sharding, "make_array_from_callback")
    indices = sharding.addressable_devices_indices_map(shape)
    blocks = {}
    pieces = []
    for device, index in indices.items():
        key = tuple((s.start, s.stop) for s in index)
        if key not in blocks:
            blocks[key] = core.canonical_numpy(np.asarray(data_callback(index), dtype))
        pieces.append(blocks[key])
    dtype = pieces[0].dtype
    aval = core.ShapedArray(shape, dtype)
    if isinstance(sharding, SingleDeviceSharding):
        return put_sharded(pieces[0].reshape(shape), sharding)
    buf = spmd.put_pieces(shape, dtype, sharding._backend_sharding(), pieces, list(indices))
    return Array(None, aval, buf, sharding)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """The Arrays laid out as `sharding` (a tree prefix of local_data) from the data this
    process holds: each dimension of a leaf is either the whole global dimension, or
    the blocks this process's devices address along it, in order.  With one process
    the data is the whole array (global_shape, if given, must be its shape), as jax."""
    leaves, tree = tree_util.tree_flatten(local_data)
    shardings = [resolve(s, "make_array_from_process_local_data") for s in
                 tree_util.prefix_leaves(sharding, local_data, _is_sharding_leaf,
                                         "make_array_from_process_local_data sharding")]
    shapes = tree_util.prefix_leaves(global_shape, local_data, _is_shape_leaf,
                                     "make_array_from_process_local_data global_shape")
    leaves = [np.asarray(x) for x in leaves]
    if spmd.process_count() == 1:
        for shape, data in zip(shapes, leaves, strict=True):
            if shape is not None and tuple(shape) != data.shape:
                raise ValueError(f"When calling `make_array_from_process_local_data` on a "
                                 f"single process, global_shape should be None or equal to "
                                 f"local_data.shape.Got global_shape={shape} and "
                                 f"local_data.shape={data.shape}.")
        return tree_util.tree_unflatten(
            tree, [_put(x, s) for x, s in zip(leaves, shardings, strict=True)])
    return tree_util.tree_unflatten(tree, [
        _from_process_local(x, s, shape)
        for x, s, shape in zip(leaves, shardings, shapes, strict=True)])


def _is_sharding_leaf(x):
    return x is None or isinstance(x, (Sharding, PartitionSpec))


def _is_shape_leaf(x):
    return x is None or isinstance(x, tuple)


def _addressed_starts(sharding, shape):
    """Per dimension: the sorted distinct block starts over all devices, and over this
    process's devices."""
    every = sharding.devices_indices_map(shape)
    here = sharding.addressable_devices_indices_map(shape)

    def starts(indices, d):
        return sorted({index[d].start or 0 for index in indices.values()})
    return ([starts(every, d) for d in range(len(shape))],
            [starts(here, d) for d in range(len(shape))])


def _from_process_local(data, sharding, global_shape):
    """One leaf of make_array_from_process_local_data over several processes."""
    if global_shape is None:
        probe = (sharding.num_devices,) * data.ndim  # divisible by any tiling
        every, here = _addressed_starts(sharding, probe)
        global_shape = tuple(n * len(e) // len(h) for n, e, h in
                             zip(data.shape, every, here, strict=True))
    global_shape = tuple(global_shape)
    _, here = _addressed_starts(sharding, global_shape)
    block = sharding.shard_shape(global_shape)
    whole = [n == g for n, g in zip(data.shape, global_shape, strict=True)]
    for d, (n, g) in enumerate(zip(data.shape, global_shape, strict=True)):
        if not whole[d] and n != len(here[d]) * block[d]:
            raise ValueError(f"Invalid host data, each dimension should match either global "
                             f"or process shape. In dimension {d}, the process data has {n} "
                             f"elements. Process addresses {len(here[d]) * block[d]} elements "
                             f"and global_shape={global_shape}.")

    def local_block(index):
        return data[tuple(s if whole[d] else
                          slice(here[d].index(s.start or 0) * block[d],
                                (here[d].index(s.start or 0) + 1) * block[d])
                          for d, s in enumerate(index))]
    return make_array_from_callback(global_shape, sharding, local_block)


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """An Array laid out as `sharding` from one single-device Array per device (in
    the order of sharding's devices_indices_map); with several processes, one per device
    of this process."""
    shape = tuple(shape)
    sharding = resolve(sharding, "make_array_from_single_device_arrays")
    indices = sharding.addressable_devices_indices_map(shape)
    by_device = {a.device: a for a in arrays}
    if set(by_device) != set(indices):
        raise ValueError(f"make_array_from_single_device_arrays: the arrays live on devices "
                         f"{sorted(d.id for d in by_device)}, but {sharding} needs one on each "
                         f"of {sorted(d.id for d in indices)}")
    for device, index in indices.items():
        want = sharding.shard_shape(shape)
        if by_device[device].shape != want:
            raise ValueError(f"make_array_from_single_device_arrays: the array on {device} "
                             f"has shape {by_device[device].shape}, but its block of {shape} "
                             f"under {sharding} has shape {want}")
    first = arrays[0]
    ordered = [by_device[d] for d in indices]
    if isinstance(sharding, SingleDeviceSharding):
        return place_array(first, sharding)
    buf = spmd.assemble(shape, first.dtype, sharding._backend_sharding(),
                        [a._device_buffer() for a in ordered])
    return Array(None, core.ShapedArray(shape, first.dtype, first.weak_type), buf, sharding)


def device_get(x):
    return tree_util.tree_map(lambda a: np.asarray(a) if type(a) is Array else a, x)


def block_until_ready(x):
    return tree_util.tree_map(lambda a: a.block_until_ready() if type(a) is Array else a, x)


def effects_barrier():
    """Wait until the host callbacks (debug.print, io_callback, ...) of every computation
    started so far have run."""
    backend.effects_barrier()


def print_environment_info(return_string=False):
    """Versions of funcgraph, jaxlib, numpy and Python, the devices and the platform (for
    bug reports), printed or returned."""
    import_versions = {}
    for package in ("funcgraph", "jax", "jaxlib", "numpy"):
        try:
            import_versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            import_versions[package] = "not installed"
    found = devices()
    info = textwrap.dedent(f"""\
        funcgraph: {import_versions["funcgraph"]}
        jax:    {import_versions["jax"]}
        jaxlib: {import_versions["jaxlib"]}
        numpy:  {import_versions["numpy"]}
        python: {sys.version.replace(chr(10), " ")}
        device info: {found[0].device_kind}-{len(found)}, {local_device_count()} local devices
        process_count: {process_count()}
        platform: {platform.uname()}""")
    for key, value in os.environ.items():
        if key.startswith(("JAX_", "XLA_", "FUNCGRAPH_")):
            info += f"\n{key}={value}"
    if return_string:
        return info
    print(info)
    return None


def copy_to_host_async(x):
    """Starts the host copy of every leaf that has a copy_to_host_async method (funcgraph
    Arrays copy to the host when read, so they have none) and returns x."""
    for leaf in tree_util.tree_leaves(x):
        start = getattr(leaf, "copy_to_host_async", None)
        if start is not None:
            start()
    return x
