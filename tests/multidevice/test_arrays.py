"""Devices, meshes, shardings and arrays over 8 devices, against jax."""
import jax
import jax.numpy as jnp
import jax.sharding as js
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph.sharding import (
    AxisType, Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding)

SPECS = [(), ("x",), ("x", None), (None, "y"), ("x", "y"), ("y", "x"), (("x", "y"),),
         (("y", "x"), None), (None, ("x", "y"))]


def test_device_queries_match_jax():
    assert fg.device_count() == jax.device_count() == 8
    assert fg.local_device_count() == jax.local_device_count()
    assert fg.devices() == jax.devices()
    assert fg.local_devices() == jax.local_devices()
    assert fg.process_index() == jax.process_index() == 0
    assert fg.process_count() == jax.process_count() == 1


def test_mesh_and_spec_repr_equality_match_jax(meshes):
    fm, jm = meshes((4, 2), ("x", "y"))
    assert repr(fm) == repr(jm) and str(fm) == str(jm)
    assert fm.shape == jm.shape and fm.size == jm.size and fm.axis_names == jm.axis_names
    np.testing.assert_array_equal(fm.device_ids, jm.device_ids)
    assert fm == Mesh(np.array(fg.devices()).reshape(4, 2), ("x", "y"))
    assert fm != Mesh(np.array(fg.devices()).reshape(2, 4), ("x", "y"))
    assert repr(fg.make_mesh((2, 4), ("a", "b"))) == repr(jax.make_mesh((2, 4), ("a", "b")))
    auto = fg.make_mesh((8,), ("d",), axis_types=(AxisType.Auto,))
    assert repr(auto) == repr(jax.make_mesh((8,), ("d",), axis_types=(js.AxisType.Auto,)))
    for spec in SPECS + [(None,)]:
        assert repr(P(*spec)) == repr(js.PartitionSpec(*spec))
    assert P("x") != P("x", None) and P("x") == P("x") and hash(P("x")) == hash(P("x"))


@pytest.mark.parametrize("spec", SPECS)
def test_named_sharding_queries_match_jax(meshes, spec):
    fm, jm = meshes((4, 2), ("x", "y"))
    fs, jsh = NamedSharding(fm, P(*spec)), js.NamedSharding(jm, js.PartitionSpec(*spec))
    shape = (8, 16)
    assert repr(fs) == repr(jsh)
    assert fs.shard_shape(shape) == jsh.shard_shape(shape)
    assert fs.is_fully_replicated == jsh.is_fully_replicated
    assert fs.device_set == jsh.device_set and fs.num_devices == jsh.num_devices
    assert fs.addressable_devices_indices_map(shape) == jsh.addressable_devices_indices_map(shape)
    assert fs.devices_indices_map(shape) == jsh.devices_indices_map(shape)
    assert fs == NamedSharding(fm, P(*spec)) and hash(fs) == hash(NamedSharding(fm, P(*spec)))


def test_named_sharding_errors_like_jax(meshes):
    fm, _ = meshes((4, 2), ("x", "y"))
    with pytest.raises(ValueError, match="not found in mesh"):
        NamedSharding(fm, P("z"))
    with pytest.raises(ValueError, match="duplicate"):
        NamedSharding(fm, P("x", "x"))
    with pytest.raises(ValueError, match="divisible by 4"):
        fg.device_put(np.ones(6), NamedSharding(fm, P("x")))


@pytest.mark.parametrize("spec", SPECS)
def test_device_put_shards_match_jax(meshes, spec):
    fm, jm = meshes((4, 2), ("x", "y"))
    value = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    x = fg.device_put(value, NamedSharding(fm, P(*spec)))
    y = jax.device_put(value, js.NamedSharding(jm, js.PartitionSpec(*spec)))
    assert x.committed and y.committed
    assert repr(x.sharding) == repr(y.sharding)
    assert x.is_fully_replicated == y.is_fully_replicated
    assert x.devices() == y.devices()
    got = [(s.device, s.index, s.replica_id) for s in x.addressable_shards]
    want = [(s.device, s.index, s.replica_id) for s in y.addressable_shards]
    assert got == want
    for fs, jsd in zip(x.addressable_shards, y.addressable_shards, strict=True):
        np.testing.assert_array_equal(np.asarray(fs.data), np.asarray(jsd.data))
        assert fs.data.devices() == {fs.device}
    np.testing.assert_array_equal(np.asarray(x), value)
    assert repr(x) == repr(y)


def test_single_device_put_and_repr():
    d = fg.devices()[5]
    x = fg.device_put(np.arange(4.0, dtype=np.float32), d)
    y = jax.device_put(np.arange(4.0, dtype=np.float32), d)
    assert repr(x.sharding) == repr(y.sharding) == repr(SingleDeviceSharding(d))
    assert x.committed and x.device == d and x.devices() == {d}
    assert repr(x) == repr(y)
    u = fg.device_put(np.ones(3))
    assert not u.committed and u.sharding == SingleDeviceSharding(fg.devices()[0])


def test_jit_runs_on_the_committed_device():
    d = fg.devices()[3]
    x = fg.device_put(np.arange(5.0, dtype=np.float32), d)
    f = fg.jit(lambda a: fnp.sin(a) * 2 + 1)
    out = f(x)
    want = jax.jit(lambda a: jnp.sin(a) * 2 + 1)(jax.device_put(np.arange(5.0, dtype=np.float32), d))
    assert out.devices() == want.devices() == {d}
    assert out.committed
    np.testing.assert_allclose(np.asarray(out), np.asarray(want), rtol=1e-6)
    # An uncommitted argument follows the committed one.
    out2 = fg.jit(lambda a, b: a + b)(x, np.ones(5, np.float32))
    assert out2.devices() == {d}
    np.testing.assert_allclose(np.asarray(out2), np.arange(5.0) + 1)


def test_jit_rejects_arguments_on_different_devices():
    a = fg.device_put(np.ones(3, np.float32), fg.devices()[1])
    b = fg.device_put(np.ones(3, np.float32), fg.devices()[2])
    with pytest.raises(ValueError, match="incompatible devices"):
        fg.jit(lambda u, v: u + v)(a, b)


def test_default_device_context_and_config():
    d = fg.devices()[6]
    f = fg.jit(lambda a: a * 3)
    with fg.default_device(d):
        out = f(np.ones(4, np.float32))
        placed = fg.device_put(np.ones(2))
    with jax.default_device(d):
        want = jax.jit(lambda a: a * 3)(np.ones(4, np.float32))
    assert out.devices() == want.devices() == {d}
    assert placed.devices() == {d}
    np.testing.assert_array_equal(np.asarray(out), np.full(4, 3.0))
    assert f(np.ones(4, np.float32)).devices() == {fg.devices()[0]}
    fg.config.update("jax_default_device", d)
    try:
        assert f(np.ones(4, np.float32)).devices() == {d}
    finally:
        fg.config.update("jax_default_device", None)


def test_make_array_from_callback_matches_jax(meshes):
    fm, jm = meshes((4, 2), ("x", "y"))
    value = np.arange(64, dtype=np.float32).reshape(8, 8)
    calls = []

    def cb(index):
        calls.append(index)
        return value[index]
    x = fg.make_array_from_callback((8, 8), NamedSharding(fm, P("x", "y")), cb)
    y = jax.make_array_from_callback((8, 8), js.NamedSharding(jm, js.PartitionSpec("x", "y")),
                                    lambda i: value[i])
    assert repr(x.sharding) == repr(y.sharding)
    np.testing.assert_array_equal(np.asarray(x), value)
    assert [s.index for s in x.addressable_shards] == [s.index for s in y.addressable_shards]
    assert len(calls) == 8


def test_make_array_from_single_device_arrays(meshes):
    fm, _ = meshes((8,), ("d",))
    sharding = NamedSharding(fm, P("d"))
    value = np.arange(16, dtype=np.float32)
    pieces = [fg.device_put(value[idx], dev)
              for dev, idx in sharding.addressable_devices_indices_map((16,)).items()]
    x = fg.make_array_from_single_device_arrays((16,), sharding, pieces)
    np.testing.assert_array_equal(np.asarray(x), value)
    assert x.sharding == sharding
    assert [np.asarray(s.data).tolist() for s in x.addressable_shards] == \
        [[2.0 * i, 2.0 * i + 1] for i in range(8)]


def test_set_mesh_resolves_partition_specs(meshes):
    fm, _ = meshes((4, 2), ("x", "y"))
    with fg.set_mesh(fm):
        assert fg.sharding.get_mesh() == fm
        x = fg.device_put(np.ones((8, 2)), P("x"))
        assert x.sharding == NamedSharding(fm, P("x"))
    assert fg.sharding.get_mesh().empty
    with pytest.raises(ValueError, match="needs a mesh"):
        fg.device_put(np.ones(8), P("x"))


def test_visualize_array_sharding(meshes, capsys):
    fm, _ = meshes((4, 2), ("x", "y"))
    x = fg.device_put(np.ones((8, 4)), NamedSharding(fm, P("x", "y")))
    view = fg.debug.visualize_array_sharding(x)
    text = capsys.readouterr().out
    assert text.strip() == str(view)
    rows = [line for line in text.splitlines() if line.startswith("│") and "CPU" in line]
    assert len(rows) == 4 and all(line.count("CPU") == 2 for line in rows)
    assert "CPU 0" in rows[0] and "CPU 1" in rows[0] and "CPU 7" in rows[3]
    replicated = fg.device_put(np.ones(8), NamedSharding(fm, P("y")))
    text = str(fg.debug.visualize_array_sharding(replicated))
    assert "CPU 0,2,4,6" in text and "CPU 1,3,5,7" in text
    assert "<table" in view._repr_html_() and view._repr_html_().count("<td") == 8
