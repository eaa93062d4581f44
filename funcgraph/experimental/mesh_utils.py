"""funcgraph.experimental.mesh_utils: arrays of devices shaped for a Mesh, as JAX's
mesh_utils makes them (devices in their default order on CPU, by id on GPU; TPU's
physical-torus arrangement is not modelled)."""
import math

import numpy as np

from funcgraph import api


def _axis_sizes(mesh_shape):
    try:
        sizes = tuple(int(s) for s in mesh_shape)
    except TypeError:
        sizes = None
    if sizes is None or any(isinstance(s, bool) for s in mesh_shape):
        raise ValueError(f"`mesh_shape` passed to `create_device_mesh` should be a sequence "
                         f"of ints. Got {mesh_shape}")
    return sizes


def create_device_mesh(mesh_shape, devices=None, *, contiguous_submeshes=False,
                       allow_split_physical_axes=False):
    """The devices (default: all) as an array of shape mesh_shape."""
    del contiguous_submeshes, allow_split_physical_axes
    devices = list(api.devices() if devices is None else devices)
    shape = _axis_sizes(mesh_shape)
    if math.prod(shape) != len(devices):
        raise ValueError(f"Number of devices {len(devices)} must equal the product of "
                         f"mesh_shape {shape}")
    if devices[-1].platform == "gpu":
        devices = sorted(devices, key=lambda d: d.id)
    out = np.empty(len(devices), dtype=object)
    out[:] = devices
    return out.reshape(shape)


def create_hybrid_device_mesh(mesh_shape, dcn_mesh_shape, devices=None, *,
                              process_is_granule=False, should_sort_granules_by_key=True,
                              allow_split_physical_axes=False):
    """A mesh per granule (slice, or process) of shape mesh_shape, the granules laid out
    in dcn_mesh_shape: the result's shape is their elementwise product."""
    del allow_split_physical_axes
    devices = list(api.devices() if devices is None else devices)
    attr = "process_index" if process_is_granule or not hasattr(devices[0], "slice_index") \
        else "slice_index"
    granules = {}
    for d in devices:
        granules.setdefault(getattr(d, attr), []).append(d)
    keys = sorted(granules) if should_sort_granules_by_key else list(granules)
    meshes = [create_device_mesh(mesh_shape, granules[k]) for k in keys]
    dcn = _axis_sizes(dcn_mesh_shape)
    if len(meshes) != math.prod(dcn):
        raise ValueError(f"Number of slices {len(meshes)} must equal the product of "
                         f"dcn_mesh_shape {dcn}")
    grid = np.empty(len(meshes), dtype=object)
    for i, mesh in enumerate(meshes):
        grid[i] = mesh
    return np.block(grid.reshape(dcn).tolist())
