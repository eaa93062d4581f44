"""Tests over 8 virtual CPU devices.  XLA reads the device count once, when the backend
starts, so these run in their own process (tests/test_multidevice.py starts it with
XLA_FLAGS=--xla_force_host_platform_device_count=8); any other run skips them."""
import os

import numpy as np
import pytest

EIGHT_DEVICES = "--xla_force_host_platform_device_count=8" in os.environ.get("XLA_FLAGS", "")

collect_ignore_glob = [] if EIGHT_DEVICES else ["test_*.py"]


@pytest.fixture
def meshes():
    """make(shape, names) -> (funcgraph Mesh, jax Mesh) over the same devices, in order."""
    import jax
    import jax.sharding as js

    import funcgraph as fg
    from funcgraph.sharding import Mesh

    def make(shape, names):
        return (Mesh(np.array(fg.devices()).reshape(shape), names),
                js.Mesh(np.array(jax.devices()).reshape(shape), names))
    return make
