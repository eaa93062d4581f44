"""Eager primitives run compiled (funcgraph_eager_numpy off, as on a GPU) on arrays
committed to other devices or sharded over several: results match jax's values."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph.sharding import NamedSharding, PartitionSpec as P


@pytest.fixture
def compiled_eager():
    fg.config.update("funcgraph_eager_numpy", False)
    yield
    fg.config.update("funcgraph_eager_numpy", True)


def test_compiled_eager_on_committed_and_sharded_arrays(compiled_eager):
    value = np.linspace(0, 3, 16, dtype=np.float32)
    expected = np.asarray(jnp.sin(value) * 2 + value)
    mesh = fg.make_mesh((8,), ("x",))
    placed = [fg.device_put(value, NamedSharding(mesh, P("x"))),
              fg.device_put(value, fg.devices()[3]), fg.device_put(value, fg.devices()[0])]
    for x in placed:
        np.testing.assert_allclose(np.asarray(fnp.sin(x) * 2 + x), expected, rtol=1e-6)
    assert jax.device_count() == 8


EAGER_OPS = [
    ("sin", lambda np_mod, x: np_mod.sin(x)),
    ("add a scalar", lambda np_mod, x: x + 1.0),
    ("add a host array", lambda np_mod, x: x + np.ones((8, 4), np.float32)),
    ("sum over axis 0", lambda np_mod, x: np_mod.sum(x, axis=0)),
    ("matmul", lambda np_mod, x: x @ x.T),
    ("transpose", lambda np_mod, x: x.T),
    ("where", lambda np_mod, x: np_mod.where(x > 3.0, x, 0.0)),
]


@pytest.mark.parametrize("eager_numpy", [True, False])
@pytest.mark.parametrize("name,op", EAGER_OPS, ids=[n for n, _ in EAGER_OPS])
def test_eager_ops_on_sharded_arrays_keep_jaxs_shardings(meshes, name, op, eager_numpy):
    """An eager op on a sharded Array runs over its devices, and its result is sharded as
    jax's is (XLA's propagation, Auto axes), not gathered to one device."""
    fg.config.update("funcgraph_eager_numpy", eager_numpy)
    try:
        mesh, jmesh = meshes((4, 2), ("x", "y"))
        value = np.arange(32, dtype=np.float32).reshape(8, 4)
        x = fg.device_put(value, NamedSharding(mesh, P("x", "y")))
        jx = jax.device_put(value, jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec(
            "x", "y")))
        ours, theirs = op(fnp, x), op(jnp, jx)
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
        assert isinstance(ours.sharding, NamedSharding)
        assert tuple(ours.sharding.spec) == tuple(theirs.sharding.spec)
        assert len(ours.addressable_shards) == 8
    finally:
        fg.config.update("funcgraph_eager_numpy", True)


def test_eager_op_on_an_array_committed_to_another_device_stays_there():
    x = fg.device_put(np.ones(4, np.float32), fg.devices()[3])
    y = fnp.exp(x) + 1.0
    assert y.sharding == fg.sharding.SingleDeviceSharding(fg.devices()[3])
    np.testing.assert_allclose(np.asarray(y), np.e + 1.0, rtol=1e-6)
