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
