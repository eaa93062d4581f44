"""make_array_from_process_local_data and the small multi-device aliases (host_count,
host_id, host_ids, process_indices, make_single_device_sharding, Shard) over 8 devices
in one process, against jax."""
import warnings

import jax
import jax.sharding as js
import numpy as np
import pytest

import funcgraph as fg
from funcgraph import api
from funcgraph.sharding import NamedSharding, PartitionSpec as P, make_single_device_sharding

JP = js.PartitionSpec


def _layout(x):
    return [(s.device.id, s.index, np.asarray(s.data).tolist()) for s in x.addressable_shards]


@pytest.mark.parametrize("spec", [("x",), ("x", "y"), (None, "y"), (("x", "y"),), ()])
def test_process_local_data_in_one_process_is_the_whole_array(meshes, spec):
    fm, jm = meshes((4, 2), ("x", "y"))
    data = np.arange(64, dtype=np.float32).reshape(8, 8)
    got = fg.make_array_from_process_local_data(NamedSharding(fm, P(*spec)), data)
    want = jax.make_array_from_process_local_data(js.NamedSharding(jm, JP(*spec)), data)
    assert got.shape == want.shape and repr(got.sharding) == repr(want.sharding)
    assert _layout(got) == _layout(want)
    shaped = fg.make_array_from_process_local_data(NamedSharding(fm, P(*spec)), data, (8, 8))
    assert _layout(shaped) == _layout(want)


def test_process_local_data_takes_trees_and_rejects_other_global_shapes(meshes):
    fm, jm = meshes((8,), ("x",))
    tree = {"a": np.arange(8.0, dtype=np.float32), "b": np.ones((16, 2), np.int32)}
    got = fg.make_array_from_process_local_data(NamedSharding(fm, P("x")), tree)
    want = jax.make_array_from_process_local_data(js.NamedSharding(jm, JP("x")), tree)
    for k in tree:
        assert _layout(got[k]) == _layout(want[k])
    with pytest.raises(ValueError) as ours:
        fg.make_array_from_process_local_data(NamedSharding(fm, P("x")), tree["a"], (16,))
    with pytest.raises(ValueError) as theirs:
        jax.make_array_from_process_local_data(js.NamedSharding(jm, JP("x")), tree["a"], (16,))
    assert str(ours.value) == str(theirs.value)


def test_process_local_blocks_placed_where_the_process_devices_address_them(meshes):
    """The several-process path, in one process: each dimension of the local data is
    either the whole dimension or this process's blocks along it."""
    fm, jm = meshes((4, 2), ("x", "y"))
    data = np.arange(64, dtype=np.float32).reshape(8, 8)
    sharding = NamedSharding(fm, P("x", "y"))
    for shape in (None, (8, 8)):
        got = api._from_process_local(data, sharding, shape)
        assert _layout(got) == _layout(fg.device_put(data, sharding))
    with pytest.raises(ValueError, match="In dimension 0, the process data has 8 elements"):
        api._from_process_local(data, sharding, (16, 8))


def test_process_aliases_match_jax():
    for name in ("host_count", "host_id", "host_ids"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert getattr(fg, name)() == getattr(jax, name)()
        assert any("renamed" in str(w.message) for w in caught), name
    assert fg.process_indices() == jax.process_indices() == [0]


def test_make_single_device_sharding_and_shard():
    device = fg.devices()[3]
    sharding = make_single_device_sharding(device)
    assert sharding == fg.sharding.SingleDeviceSharding(device)
    assert repr(sharding) == repr(js.make_single_device_sharding(jax.devices()[3]))
    x = fg.device_put(np.arange(4.0), sharding)
    assert x.sharding == sharding and x.devices() == {device}
    assert isinstance(x.addressable_shards[0], fg.Shard)
