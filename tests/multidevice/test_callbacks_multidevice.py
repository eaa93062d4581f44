"""Host callbacks (debug.print, debug.callback, pure_callback, io_callback) in programs
over several devices, against jax: in a sharded jit they run once, on one device, on
whole values (or on the device `sharding=` names); inside shard_map every device calls
back with its own block; partitioned debug callbacks see each device's shard."""
import re

import jax
import jax.numpy as jnp
import jax.sharding as js
import numpy as np
import pytest
from jax.experimental import io_callback as jax_io_callback

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax
from funcgraph.experimental import io_callback
from funcgraph.sharding import NamedSharding, PartitionSpec as P, SingleDeviceSharding

JP = js.PartitionSpec

# A host callback's result, returned as it is, is computed on one device. jax 0.11's XLA
# sends it on to every device of the program (the compiled output sharding is replicated);
# 0.10's left it on that device alone (maximal). funcgraph hands results over in the layout
# XLA chose, so it follows the installed version, as jax does.
JAX_011 = jax.__version_info__ >= (0, 11)


@pytest.fixture
def both(meshes):
    """(funcgraph, jax) each as (mesh, x): x = arange(16) split over "x" of a 4x2 mesh."""
    fm, jm = meshes((4, 2), ("x", "y"))
    value = np.arange(16, dtype=np.float32)
    return ((fm, fg.device_put(value, NamedSharding(fm, P("x")))),
            (jm, jax.device_put(value, js.NamedSharding(jm, JP("x")))))


def _printed(capsys, run):
    """The lines run() prints (callbacks included), and its result."""
    capsys.readouterr()
    out = run()
    fg.effects_barrier()
    jax.effects_barrier()
    return capsys.readouterr().out.splitlines(), out


def _same(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert repr(got.sharding) == repr(want.sharding)


def _on_the_callbacks_device(got, device, mesh):
    """A callback's result returned as it is: on `device` alone (jax 0.10), or the whole
    value on every device of `mesh` (jax 0.11)."""
    if not JAX_011:
        assert got.sharding == SingleDeviceSharding(device)
        return
    assert got.sharding == NamedSharding(mesh, P())
    assert len(got.addressable_shards) == mesh.size
    for shard in got.addressable_shards:
        np.testing.assert_array_equal(np.asarray(shard.data), np.asarray(got))


def test_debug_print_in_sharded_jit_prints_whole_values_once(both, capsys):
    (fm, fx), (jm, jx) = both

    def f(np_, debug, x):
        debug.print("x={x} sum={s}", x=x, s=x.sum())
        debug.print("reshaped {}", x.reshape(4, 4) * 2)
        return np_.sin(x)
    ours, got = _printed(capsys, lambda: fg.jit(lambda x: f(fnp, fg.debug, x))(fx))
    theirs, want = _printed(capsys, lambda: jax.jit(lambda x: f(jnp, jax.debug, x))(jx))
    assert ours == theirs and len(ours) == 5  # one x line, four matrix rows
    _same(got, want)


def test_debug_callback_in_sharded_jit_gets_the_whole_array_once(both):
    (fm, fx), (jm, jx) = both
    seen = {"fg": [], "jax": []}

    def record(key):
        return lambda v: seen[key].append((np.asarray(v).copy(), str(v.sharding.device_set)))
    fg.jit(lambda x: (fg.debug.callback(record("fg"), x * 2), x)[1])(fx)
    jax.jit(lambda x: (jax.debug.callback(record("jax"), x * 2), x)[1])(jx)
    fg.effects_barrier()
    jax.effects_barrier()
    assert len(seen["fg"]) == len(seen["jax"]) == 1
    np.testing.assert_array_equal(seen["fg"][0][0], seen["jax"][0][0])
    assert seen["fg"][0][1] == seen["jax"][0][1]  # on the first (CPU) device


def test_shard_map_debug_print_prints_once_per_device_with_its_block(both, capsys):
    (fm, fx), (jm, jx) = both

    def body(debug):
        def f(b):
            debug.print("block {b} total {t}", b=b, t=b.sum())
            return b * 2
        return f
    ours, got = _printed(capsys, lambda: fg.jit(fg.shard_map(
        body(fg.debug), mesh=fm, in_specs=P("x"), out_specs=P("x")))(fx))
    theirs, want = _printed(capsys, lambda: jax.jit(jax.shard_map(
        body(jax.debug), mesh=jm, in_specs=JP("x"), out_specs=JP("x")))(jx))
    # devices call back concurrently: the order of the lines is not fixed
    assert sorted(ours) == sorted(theirs) and len(ours) == 8
    _same(got, want)


def test_eager_shard_map_prints_per_device(meshes, capsys):
    # A 1-D mesh: over (4, 2) with P("x") jax's eager shard_map prints each distinct
    # block once (4 lines, its debug rule zips blocks with devices); compiled, it and
    # funcgraph print on all 8 devices.
    fm, jm = meshes((8,), ("x",))
    value = np.arange(16, dtype=np.float32)
    fx = fg.device_put(value, NamedSharding(fm, P("x")))
    jx = jax.device_put(value, js.NamedSharding(jm, JP("x")))

    def body(debug):
        return lambda b: (debug.print("e {}", b), b + 1)[1]
    ours, got = _printed(capsys, lambda: fg.shard_map(
        body(fg.debug), mesh=fm, in_specs=P("x"), out_specs=P("x"))(fx))
    theirs, want = _printed(capsys, lambda: jax.shard_map(
        body(jax.debug), mesh=jm, in_specs=JP("x"), out_specs=JP("x"))(jx))
    assert sorted(ours) == sorted(theirs) and len(ours) == 8
    _same(got, want)


def test_partitioned_debug_print_prints_each_shard(both, capsys):
    (fm, fx), (jm, jx) = both
    ours, _ = _printed(capsys, lambda: fg.jit(
        lambda x: (fg.debug.print("p {}", x, partitioned=True), x + 1)[1])(fx))
    theirs, _ = _printed(capsys, lambda: jax.jit(
        lambda x: (jax.debug.print("p {}", x, partitioned=True), x + 1)[1])(jx))
    assert sorted(ours) == sorted(theirs) and len(ours) == 8


@pytest.mark.parametrize("then", ["plus_one", "direct"])
def test_pure_callback_in_sharded_jit(both, then):
    (fm, fx), (jm, jx) = both
    calls = []

    def host(v):
        calls.append(np.asarray(v).shape)
        return np.sin(np.asarray(v))

    def f(pure, sds, x):
        y = pure(host, sds((16,), np.float32), x)
        return y + 1 if then == "plus_one" else y
    got = fg.jit(lambda x: f(fg.pure_callback, fg.ShapeDtypeStruct, x))(fx)
    want = jax.jit(lambda x: f(jax.pure_callback, jax.ShapeDtypeStruct, x))(jx)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert calls == [(16,), (16,)]  # once each, on the whole value
    if then == "plus_one":
        assert repr(got.sharding) == repr(want.sharding)
    else:
        _on_the_callbacks_device(got, fg.devices()[0], fm)
        if JAX_011:
            assert repr(got.sharding) == repr(want.sharding)
        else:  # jax: GSPMDSharding({maximal device=0}); the value lives on device 0 alone
            assert "maximal device=0" in repr(want.sharding)


def test_pure_callback_sharding_names_the_device_it_runs_on(both):
    (fm, fx), (jm, jx) = both
    host = lambda v: np.cos(np.asarray(v))  # noqa: E731
    got = fg.jit(lambda x: fg.pure_callback(
        host, fg.ShapeDtypeStruct((16,), np.float32), x,
        sharding=SingleDeviceSharding(fg.devices()[3])) * 2)(fx)
    want = jax.jit(lambda x: jax.pure_callback(
        host, jax.ShapeDtypeStruct((16,), np.float32), x,
        sharding=js.SingleDeviceSharding(jax.devices()[3])) * 2)(jx)
    _same(got, want)
    direct = fg.jit(lambda x: fg.pure_callback(
        host, fg.ShapeDtypeStruct((16,), np.float32), x,
        sharding=SingleDeviceSharding(fg.devices()[3])))(fx)
    # jax 0.10 returns zeros here (the array reads device 0's copy); the value is on device 3
    np.testing.assert_allclose(np.asarray(direct), np.cos(np.arange(16)), rtol=1e-6)
    _on_the_callbacks_device(direct, fg.devices()[3], fm)
    if JAX_011:
        _same(direct, jax.jit(lambda x: jax.pure_callback(
            host, jax.ShapeDtypeStruct((16,), np.float32), x,
            sharding=js.SingleDeviceSharding(jax.devices()[3])))(jx))
    text = fg.jit(lambda x: fg.pure_callback(
        host, fg.ShapeDtypeStruct((16,), np.float32), x,
        sharding=SingleDeviceSharding(fg.devices()[3]))).lower(fx).as_text()
    assert "sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>" in text
    assert "sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_3, []>]>" in text


def _callback_shardings(text):
    return re.findall(r"python_cpu_callback.*(sdy\.sharding = #sdy\.sharding_per_value<.*?>\])",
                      text)


def test_lowered_callback_shardings_match_jax(both):
    (fm, fx), (jm, jx) = both

    def f(debug, pure, sds, x):
        debug.print("{}", x)
        return pure(np.negative, sds((16,), np.float32), x)

    def g(debug, pure, sds, b):
        debug.print("{}", b)
        return pure(np.negative, sds(b.shape, b.dtype), b)
    ours = fg.jit(lambda x: f(fg.debug, fg.pure_callback, fg.ShapeDtypeStruct, x)).lower(fx)
    theirs = jax.jit(lambda x: f(jax.debug, jax.pure_callback, jax.ShapeDtypeStruct, x)).lower(jx)
    assert _callback_shardings(ours.as_text()) == _callback_shardings(theirs.as_text())
    assert len(_callback_shardings(ours.as_text())) == 2
    ours = fg.jit(fg.shard_map(lambda b: g(fg.debug, fg.pure_callback, fg.ShapeDtypeStruct, b),
                               mesh=fm, in_specs=P("x"), out_specs=P("x"))).lower(fx)
    theirs = jax.jit(jax.shard_map(
        lambda b: g(jax.debug, jax.pure_callback, jax.ShapeDtypeStruct, b),
        mesh=jm, in_specs=JP("x"), out_specs=JP("x"))).lower(jx)
    assert _callback_shardings(ours.as_text()) == _callback_shardings(theirs.as_text())
    assert "sdy.mesh @empty_mesh = <[]>" in ours.as_text()


@pytest.mark.parametrize("kind", ["pure", "io", "io_ordered"])
def test_callbacks_in_shard_map_get_each_block(both, kind):
    (fm, fx), (jm, jx) = both
    blocks = {"fg": [], "jax": []}

    def make(key):
        def host(v):
            blocks[key].append(tuple(np.asarray(v)))
            return np.asarray(v) * 10 + 1
        return host

    def body(pure, io, sds, key):
        def f(b):
            out = sds(b.shape, b.dtype)
            if kind == "pure":
                return pure(make(key), out, b)
            return io(make(key), out, b, ordered=kind == "io_ordered")
        return f
    got = fg.jit(fg.shard_map(body(fg.pure_callback, io_callback, fg.ShapeDtypeStruct, "fg"),
                              mesh=fm, in_specs=P("x"), out_specs=P("x")))(fx)
    want = jax.jit(jax.shard_map(
        body(jax.pure_callback, jax_io_callback, jax.ShapeDtypeStruct, "jax"),
        mesh=jm, in_specs=JP("x"), out_specs=JP("x")))(jx)
    _same(got, want)
    assert sorted(blocks["fg"]) == sorted(blocks["jax"]) and len(blocks["fg"]) == 8


def test_ordered_io_callbacks_keep_program_order_over_devices(both):
    (fm, fx), (jm, jx) = both
    log = {"fg": [], "jax": []}

    def program(io, sds, key):
        def f(x):
            a = io(lambda v: (log[key].append(("sum", float(v))), np.float32(1))[1],
                   sds((), np.float32), x.sum(), ordered=True)
            b = io(lambda v: (log[key].append(("max", float(v))), np.float32(2))[1],
                   sds((), np.float32), x.max(), ordered=True)
            return a * 10 + b
        return f
    ours = fg.jit(program(io_callback, fg.ShapeDtypeStruct, "fg"))
    theirs = jax.jit(program(jax_io_callback, jax.ShapeDtypeStruct, "jax"))
    single_fg = fg.jit(program(io_callback, fg.ShapeDtypeStruct, "fg"))
    single_jax = jax.jit(program(jax_io_callback, jax.ShapeDtypeStruct, "jax"))
    # the token moves between the mesh and one device and back
    for _ in range(2):
        _same(ours(fx), theirs(jx))
        single_fg(np.arange(3, dtype=np.float32))
        single_jax(np.arange(3, dtype=np.float32))
    fg.effects_barrier()
    jax.effects_barrier()
    assert log["fg"] == log["jax"] and len(log["fg"]) == 8


@pytest.mark.parametrize("ordered", [False, True])
def test_io_callback_sharding_runs_on_that_device(both, ordered):
    (fm, fx), (jm, jx) = both
    got = fg.jit(lambda x: io_callback(
        lambda v: np.asarray(v).sum(), fg.ShapeDtypeStruct((), np.float32), x,
        ordered=ordered, sharding=SingleDeviceSharding(fg.devices()[5])))(fx)
    # jax 0.10's value here is 0.0 (it reads device 0's copy of a value device 5 holds)
    assert float(got) == 120.0
    _on_the_callbacks_device(got, fg.devices()[5], fm)
    if JAX_011:
        _same(got, jax.jit(lambda x: jax_io_callback(
            lambda v: np.asarray(v).sum(), jax.ShapeDtypeStruct((), np.float32), x,
            ordered=ordered, sharding=js.SingleDeviceSharding(jax.devices()[5])))(jx))
    twice = fg.jit(lambda x: io_callback(
        lambda v: np.asarray(v).sum(), fg.ShapeDtypeStruct((), np.float32), x,
        ordered=ordered, sharding=SingleDeviceSharding(fg.devices()[5])) * 2)(fx)
    want = jax.jit(lambda x: jax_io_callback(
        lambda v: np.asarray(v).sum(), jax.ShapeDtypeStruct((), np.float32), x,
        ordered=ordered, sharding=js.SingleDeviceSharding(jax.devices()[5])) * 2)(jx)
    _same(twice, want)


@pytest.mark.parametrize("method", ["expand_dims", "broadcast_all", "sequential"])
def test_pure_callback_vmap_methods_in_sharded_jit(meshes, method):
    fm, jm = meshes((8,), ("x",))
    value = np.arange(32, dtype=np.float32).reshape(8, 4)
    shapes = {"fg": [], "jax": []}

    def make(key):
        def host(a, b):
            shapes[key].append((np.shape(a), np.shape(b)))
            return np.asarray(a) * np.asarray(b)
        return host

    def f(pure, sds, key):
        return lambda r, c: pure(make(key), sds((4,), np.float32), r, c, vmap_method=method)
    got = fg.jit(fg.vmap(f(fg.pure_callback, fg.ShapeDtypeStruct, "fg"), in_axes=(0, None)))(
        fg.device_put(value, NamedSharding(fm, P("x"))), np.full(4, 2, np.float32))
    want = jax.jit(jax.vmap(f(jax.pure_callback, jax.ShapeDtypeStruct, "jax"),
                            in_axes=(0, None)))(
        jax.device_put(value, js.NamedSharding(jm, JP("x"))), np.full(4, 2, np.float32))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want))
    assert shapes["fg"] == shapes["jax"]


def test_callbacks_inside_control_flow_of_a_sharded_jit(both, capsys):
    (fm, fx), (jm, jx) = both

    def f(np_, lax_, debug, x):
        def body(i, c):
            debug.print("step {i} {c}", i=i, c=c)
            return c + x.sum()
        y = lax_.fori_loop(0, 3, body, np_.float32(0))
        return lax_.cond(y > 0, lambda: (debug.print("positive {}", y), x * 2)[1], lambda: x)
    ours, got = _printed(capsys, lambda: fg.jit(lambda x: f(fnp, lax, fg.debug, x))(fx))
    theirs, want = _printed(capsys, lambda: jax.jit(lambda x: f(jnp, jax.lax, jax.debug, x))(jx))
    assert ours == theirs and len(ours) == 4
    _same(got, want)


def test_callbacks_on_one_non_default_device(capsys):
    x = fg.device_put(np.arange(4, dtype=np.float32), fg.devices()[3])
    jx = jax.device_put(np.arange(4, dtype=np.float32), jax.devices()[3])

    def f(debug, io, sds, x):
        debug.print("on3 {}", x, ordered=True)
        return io(lambda v: np.asarray(v) * 2, sds((4,), np.float32), x, ordered=True)
    ours, got = _printed(capsys, lambda: fg.jit(
        lambda x: f(fg.debug, io_callback, fg.ShapeDtypeStruct, x))(x))
    theirs, want = _printed(capsys, lambda: jax.jit(
        lambda x: f(jax.debug, jax_io_callback, jax.ShapeDtypeStruct, x))(jx))
    assert ours == theirs == ["on3 [0. 1. 2. 3.]"]
    _same(got, want)


def test_eager_callbacks_of_sharded_values(both, capsys):
    (fm, fx), (jm, jx) = both
    ours, _ = _printed(capsys, lambda: fg.debug.print("eager {}", fx))
    theirs, _ = _printed(capsys, lambda: jax.debug.print("eager {}", jx))
    assert ours == theirs
    got = io_callback(lambda v: np.asarray(v).sum(), fg.ShapeDtypeStruct((), np.float32), fx,
                      ordered=True)
    assert float(got) == 120.0
    placed = fg.pure_callback(lambda v: np.asarray(v) + 1,
                              fg.ShapeDtypeStruct((16,), np.float32), fx,
                              sharding=SingleDeviceSharding(fg.devices()[3]))
    np.testing.assert_array_equal(np.asarray(placed), np.arange(1, 17))
    assert placed.sharding == SingleDeviceSharding(fg.devices()[3])


def _error(run):
    with pytest.raises(Exception) as info:
        run()
    return info.type


def test_unsupported_combinations_raise_jax_errors(both):
    (fm, fx), (jm, jx) = both
    out, jout = fg.ShapeDtypeStruct((16,), np.float32), jax.ShapeDtypeStruct((16,), np.float32)
    cases = [
        # ordered debug callbacks over several devices
        (lambda: fg.jit(lambda x: (fg.debug.print("{}", x, ordered=True), x)[1])(fx),
         lambda: jax.jit(lambda x: (jax.debug.print("{}", x, ordered=True), x)[1])(jx),
         ValueError),
        (lambda: fg.jit(fg.shard_map(lambda b: (fg.debug.print("{}", b, ordered=True), b)[1],
                                     mesh=fm, in_specs=P("x"), out_specs=P("x")))(fx),
         lambda: jax.jit(jax.shard_map(lambda b: (jax.debug.print("{}", b, ordered=True), b)[1],
                                       mesh=jm, in_specs=JP("x"), out_specs=JP("x")))(jx),
         ValueError),
        # a sharding over several devices
        (lambda: fg.jit(lambda x: fg.pure_callback(
            np.sin, out, x, sharding=NamedSharding(fm, P("x"))))(fx),
         lambda: jax.jit(lambda x: jax.pure_callback(
             np.sin, jout, x, sharding=js.NamedSharding(jm, JP("x"))))(jx),
         NotImplementedError),
        # a sharding inside shard_map
        (lambda: fg.jit(fg.shard_map(lambda b: fg.pure_callback(
            np.sin, fg.ShapeDtypeStruct(b.shape, b.dtype), b,
            sharding=SingleDeviceSharding(fg.devices()[0])),
            mesh=fm, in_specs=P("x"), out_specs=P("x")))(fx),
         lambda: jax.jit(jax.shard_map(lambda b: jax.pure_callback(
             np.sin, jax.ShapeDtypeStruct(b.shape, b.dtype), b,
             sharding=js.SingleDeviceSharding(jax.devices()[0])),
             mesh=jm, in_specs=JP("x"), out_specs=JP("x")))(jx),
         NotImplementedError),
        # a device the program does not run on
        (lambda: fg.jit(lambda x: fg.pure_callback(
            np.sin, out, x, sharding=SingleDeviceSharding(fg.devices()[3])))(
                np.ones(16, np.float32)),
         lambda: jax.jit(lambda x: jax.pure_callback(
             np.sin, jout, x, sharding=js.SingleDeviceSharding(jax.devices()[3])))(
                 np.ones(16, np.float32)),
         ValueError),
        (lambda: io_callback(np.sin, out, np.ones(16, np.float32),
                             sharding=SingleDeviceSharding(fg.devices()[3])),
         lambda: jax_io_callback(np.sin, jout, np.ones(16, np.float32),
                                 sharding=js.SingleDeviceSharding(jax.devices()[3])),
         ValueError),
    ]
    for ours, theirs, kind in cases:
        assert _error(ours) is _error(theirs) is kind


def test_callback_before_the_mesh_is_known_still_runs_once(both, capsys):
    """Uncommitted arguments: the program's devices are known only at the shard_map
    lowered after the callback."""
    (fm, _), (jm, _) = both

    def f(debug, shard_map, mesh, spec):
        def g(x):
            debug.print("before {}", x[:2])
            return shard_map(lambda b: b * 2, mesh=mesh, in_specs=spec, out_specs=spec)(x)
        return g
    value = np.arange(16, dtype=np.float32)
    ours, got = _printed(capsys, lambda: fg.jit(f(fg.debug, fg.shard_map, fm, P("x")))(value))
    theirs, want = _printed(capsys, lambda: jax.jit(
        f(jax.debug, jax.shard_map, jm, JP("x")))(value))
    assert ours == theirs == ["before [0. 1.]"]
    _same(got, want)


@pytest.mark.parametrize("where", ["scan", "nested_jit", "scan_between"])
def test_ordered_io_callbacks_in_scan_and_nested_jit_over_devices(both, where):
    (fm, fx), (jm, jx) = both
    log = {"fg": [], "jax": []}

    def program(jit, lax_, io, sds, key):
        def step(a):
            log[key].append(float(a))
            return np.float32(a) * 2
        inner = jit(lambda v: io(step, sds((), np.float32), v.sum(), ordered=True))

        def body(c, v):
            r = io(step, sds((), np.float32), v, ordered=True)
            return c + r, r

        def f(x):
            if where == "scan":
                return lax_.scan(body, np.float32(0), x[:4])
            if where == "scan_between":  # the loop's token orders it with the others
                first = inner(x)
                total, rows = lax_.scan(body, first, x[:4])
                return total + inner(x * 2), rows
            return inner(x) + inner(x * 2) * 10, inner(x[:3])
        return f
    got = fg.jit(program(fg.jit, lax, io_callback, fg.ShapeDtypeStruct, "fg"))(fx)
    want = jax.jit(program(jax.jit, jax.lax, jax_io_callback, jax.ShapeDtypeStruct, "jax"))(jx)
    for g, w in zip(got, want, strict=True):
        _same(g, w)
    fg.effects_barrier()
    jax.effects_barrier()
    expected = {"scan": [0.0, 1.0, 2.0, 3.0], "nested_jit": [120.0, 240.0, 3.0],
                "scan_between": [120.0, 0.0, 1.0, 2.0, 3.0, 240.0]}[where]
    assert log["fg"] == log["jax"] == expected


def test_pmap_debug_print_and_pure_callback_per_device(capsys):
    value = np.arange(8, dtype=np.float32).reshape(8, 1)

    def f(debug, pure, sds):
        def g(v):
            debug.print("device value {}", v)
            return pure(lambda a: np.asarray(a) * 3, sds(v.shape, v.dtype), v)
        return g
    ours, got = _printed(capsys, lambda: fg.pmap(
        f(fg.debug, fg.pure_callback, fg.ShapeDtypeStruct))(value))
    theirs, want = _printed(capsys, lambda: jax.pmap(
        f(jax.debug, jax.pure_callback, jax.ShapeDtypeStruct))(value))
    assert sorted(ours) == sorted(theirs) and len(ours) == 8
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_ordered_io_callbacks_keep_order_through_loops_and_branches(both):
    (fm, fx), (jm, jx) = both
    log = {"fg": [], "jax": []}

    def program(lax_, io, sds, key):
        def say(tag):
            def host(v):
                log[key].append((tag, float(v)))
                return np.float32(v)
            return lambda v: io(host, sds((), np.float32), v, ordered=True)

        def f(x):
            c = say("start")(x.sum())
            c = lax_.fori_loop(0, 2, lambda i, c: say("loop")(c) + 1, c)
            c = lax_.cond(c > 0, lambda v: say("then")(v) * 2, lambda v: say("else")(v), c)
            c = lax_.while_loop(lambda v: v < 500, lambda v: say("while")(v) * 2, c)
            return say("end")(c)
        return f
    got = fg.jit(program(lax, io_callback, fg.ShapeDtypeStruct, "fg"))(fx)
    want = jax.jit(program(jax.lax, jax_io_callback, jax.ShapeDtypeStruct, "jax"))(jx)
    assert float(got) == float(want)
    # the callback's own result (jax 0.10: GSPMDSharding({maximal device=0}))
    _on_the_callbacks_device(got, fg.devices()[0], fm)
    if JAX_011:
        assert repr(got.sharding) == repr(want.sharding)
    fg.effects_barrier()
    jax.effects_barrier()
    assert log["fg"] == log["jax"]
    assert [t for t, _ in log["fg"]] == ["start", "loop", "loop", "then", "while", "while", "end"]


def test_ordered_io_callbacks_across_programs_on_other_device_orders():
    """The token of the last ordered program is on other devices, or the same ones in
    another order: the next program waits for it and takes a new one."""
    devices = fg.devices()
    order = []
    value = np.arange(8, dtype=np.float32)

    def program(tag):
        return fg.jit(lambda x: io_callback(
            lambda a: (order.append(tag), np.asarray(a) + 1)[1],
            fg.ShapeDtypeStruct((), np.float32), x.sum(), ordered=True))
    meshes_in_turn = [("all", devices), ("half", devices[4:]), ("reversed", devices[::-1]),
                      ("all again", devices)]
    for tag, devs in meshes_in_turn:
        mesh = fg.sharding.Mesh(np.array(devs), ("x",))
        got = program(tag)(fg.device_put(value, NamedSharding(mesh, P("x"))))
        assert float(got) == 29.0
        _on_the_callbacks_device(got, devs[0], mesh)
    program("one device")(value)
    fg.effects_barrier()
    assert order == [t for t, _ in meshes_in_turn] + ["one device"]
