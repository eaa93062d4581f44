"""jit's dispatch fast path and the eager compiled primitives: the machinery, not timings
(benchmarks/run.py measures speed).  Which cache a call uses is observed through the
function's caches and by making the slow path fail."""
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import core
from funcgraph.transforms import jit as jit_module


def _forbid_slow_path(f):
    """Make a call that misses the fast path fail loudly."""
    def slow(args, kwargs):
        raise AssertionError("the call took the slow path")
    f._dispatch = slow


def test_first_call_with_numpy_fills_the_fast_path():
    f = fg.jit(lambda x, y: x * y + 1.0)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(f(x, x)), x * x + 1.0)
    _forbid_slow_path(f)
    # NumPy values again, and Arrays of the same type, reach the entry the first call made.
    np.testing.assert_array_equal(np.asarray(f(x, x)), x * x + 1.0)
    a = fg.device_put(x)
    np.testing.assert_array_equal(np.asarray(f(a, x)), x * x + 1.0)
    assert len(f._cache) == 1


def test_first_call_with_numpy_scalars_then_arrays():
    f = fg.jit(lambda x, y: x * y)
    assert float(f(np.float32(2), np.float32(3))) == 6.0
    _forbid_slow_path(f)
    two = fg.device_put(np.float32(2))
    assert float(f(two, two)) == 4.0


def test_python_scalars_are_weak_in_the_key():
    f = fg.jit(lambda x: x * 2)
    g = jax.jit(lambda x: x * 2)
    for arg in (1.0, np.float32(1.0), 1.0, 3, True, np.int32(3)):
        out, expected = f(arg), g(arg)
        assert out.dtype == expected.dtype, arg
        # A weak result promotes to the other operand's type; a strong one does not.
        assert (out + np.float16(1)).dtype == (expected + np.float16(1)).dtype, arg
    # weak float32, strong float32, weak int32, bool, strong int32: five entries.
    assert len(f._cache) == 5
    assert len(f._flat_cache) == 5


def test_numpy_float64_is_narrowed_without_x64_and_kept_with_it(x64):
    f = fg.jit(lambda x: x + 1)
    assert f(np.ones(3, np.float64)).dtype == jnp.ones(3, np.float64).dtype == np.float64
    assert f(np.ones(3, np.float32)).dtype == np.float32


def test_numpy_float64_narrowed():
    f = fg.jit(lambda x: x + 1)
    out = f(np.ones(3, np.float64))
    assert out.dtype == jax.jit(lambda x: x + 1)(np.ones(3, np.float64)).dtype == np.float32


def test_statics_and_keywords_take_the_full_path():
    f = fg.jit(lambda x, n: x * n, static_argnums=1)
    x = np.ones(3, np.float32)
    assert float(f(x, 2)[0]) == 2.0
    assert float(f(x, 3)[0]) == 3.0
    assert float(f(x, 2)[0]) == 2.0
    assert len(f._cache) == 2 and not f._flat_cache
    g = fg.jit(lambda x, y: x - y)
    assert float(g(x, y=x)[0]) == 0.0
    assert not g._flat_cache  # a keyword call is never keyed by position


def test_container_arguments_take_the_container_fast_path_and_agree_with_jax():
    body = lambda d: {k: v + 1.0 for k, v in d.items()}  # noqa: E731
    f = fg.jit(body)
    d = {f"p{i}": np.full(2, i, np.float32) for i in range(20)}
    first = f(d)
    assert not f._flat_cache and len(f._container_cache) == 1
    expected = jax.jit(body)(d)
    _forbid_slow_path(f)
    for value in (first, f(d), f({k: fg.device_put(v) for k, v in d.items()})):
        assert sorted(value) == sorted(d)
        for k in d:
            np.testing.assert_array_equal(np.asarray(value[k]), np.asarray(expected[k]))
    f.clear_cache()
    assert not f._container_cache


@pytest.mark.parametrize("first,other", [
    ({"a": 1.0, "b": 2.0}, {"a": 1.0, "c": 2.0}),            # other keys
    ([1.0, 2.0], (1.0, 2.0)),                                  # list vs tuple
    ((1.0, None), (1.0, 2.0)),                                 # None has no leaves
    ({"a": np.float32(1)}, {"a": 1.0}),                        # Python scalars are weak
    ({"a": np.ones(2, np.float32)}, {"a": np.ones(3, np.float32)}),
    ({"a": np.ones(2, np.float32)}, {"a": np.ones(2, np.int32)}),
])
def test_container_key_separates_what_traces_differently(first, other):
    f = fg.jit(lambda t: jax_free_sum(t))
    f(first)
    assert len(f._container_cache) == 1
    np.testing.assert_allclose(np.asarray(f(other)), jax_free_sum(other, np))
    assert len(f._container_cache) == 2 and len(f._cache) == 2


def jax_free_sum(tree, module=fnp):
    return sum(module.sum(module.asarray(x)) for x in fg.tree_util.tree_leaves(tree))


def test_namedtuple_arguments_take_the_container_fast_path():
    import collections
    Pair = collections.namedtuple("Pair", "w b")
    f = fg.jit(lambda p, x: p.w * x + p.b)
    p = Pair(np.float32(2), np.float32(1))
    f(p, np.ones(3, np.float32))
    _forbid_slow_path(f)
    np.testing.assert_array_equal(np.asarray(f(p, np.ones(3, np.float32))), np.full(3, 3.0))


def test_registered_nodes_and_other_containers_stay_on_the_full_path():
    """A class registered with funcgraph.tree_util, an OrderedDict: jaxlib's flatten of
    Python's own containers does not see them as funcgraph does, so they are never keyed
    by it.  A dict whose keys do not sort is an error, as in jax."""
    import collections

    class Params:
        def __init__(self, w):
            self.w = w
    fg.tree_util.register_pytree_node(Params, lambda p: ((p.w,), None),
                                      lambda _, c: Params(*c))
    f = fg.jit(lambda t: jax_free_sum(t))
    for tree in ({"p": Params(np.ones(2, np.float32))},
                 collections.OrderedDict(a=np.ones(2, np.float32))):
        np.testing.assert_allclose(np.asarray(f(tree)), jax_free_sum(tree, np))
        np.testing.assert_allclose(np.asarray(f(tree)), jax_free_sum(tree, np))
    assert not f._container_cache and len(f._cache) == 2
    unsortable = {1: np.ones(2, np.float32), "a": np.ones(3, np.float32)}
    with pytest.raises(ValueError, match="sorting pytree dictionary keys"):
        f(unsortable)


def test_container_fast_path_under_a_transformation_traces():
    f = fg.jit(lambda d: d["a"] * d["b"])
    d = {"a": np.float32(3), "b": np.float32(2)}
    f(d)
    assert len(f._container_cache) == 1
    g = fg.grad(lambda a: f({"a": a, "b": np.float32(2)}))
    assert float(g(np.float32(3))) == 2.0
    assert float(fg.vmap(lambda a: f({"a": a, "b": a}))(np.arange(3.0, dtype=np.float32))[2]) == 4.0


def test_mutating_the_numpy_argument_after_the_result_is_ready_leaves_the_result():
    # As in jax, a NumPy argument may be read in place while the call computes (no copy
    # on the CPU): the caller may write to it once the result is ready.
    f = fg.jit(lambda x: x * 1.0)
    x = np.ones(1000, np.float32)
    out = f(x).block_until_ready()
    x[:] = 5.0
    np.testing.assert_array_equal(np.asarray(out), np.ones(1000, np.float32))


def test_donated_numpy_arguments_are_copied_not_overwritten():
    # Donation lets XLA write its results into the argument's buffer: never the caller's
    # own memory.
    f = fg.jit(lambda x: x * 2.0 + 1.0, donate_argnums=0)
    x = np.ones(4096, np.float32)
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(f(x)), np.full(4096, 3.0, np.float32))
    np.testing.assert_array_equal(x, np.ones(4096, np.float32))
    compiled = fg.jit(lambda x: x * 2.0 + 1.0, donate_argnums=0).lower(x).compile()
    np.testing.assert_array_equal(np.asarray(compiled(x)), np.full(4096, 3.0, np.float32))
    np.testing.assert_array_equal(x, np.ones(4096, np.float32))


def test_committed_arrays_have_their_own_entry_and_stay_committed():
    f = fg.jit(lambda x: x + 1.0)
    x = np.ones(3, np.float32)
    uncommitted = f(x)
    assert uncommitted._sharding is None
    committed = fg.device_put(x, fg.devices()[0])
    assert committed._sharding is not None
    out = f(committed)
    assert out._sharding is not None  # a committed argument commits the result, as in jax
    assert len(f._flat_cache) == 2
    _forbid_slow_path(f)
    assert f(committed)._sharding is not None
    assert f(x)._sharding is None


def test_donation_takes_the_full_path():
    f = fg.jit(lambda x: x * 2.0, donate_argnums=0)
    for _ in range(2):
        x = fg.device_put(np.ones(3, np.float32))
        np.testing.assert_array_equal(np.asarray(f(x)), np.full(3, 2.0, np.float32))
    assert not f._flat_cache and len(f._cache) == 1


def test_tracer_arguments_fall_back_to_the_traced_call():
    f = fg.jit(lambda x: fnp.sin(x) * x)
    f(np.float32(0.5))  # fills the fast path for float32[]
    grad = fg.grad(lambda x: f(x))(np.float32(0.5))
    expected = jax.grad(lambda x: jnp.sin(x) * x)(np.float32(0.5))
    np.testing.assert_allclose(float(grad), float(expected), rtol=1e-6)


def test_debug_nans_bypasses_the_fast_path():
    f = fg.jit(lambda x: fnp.log(x))
    f(np.float32(1.0))
    fg.config.update("jax_debug_nans", True)
    try:
        with pytest.raises(FloatingPointError):
            f(np.float32(-1.0))
    finally:
        fg.config.update("jax_debug_nans", False)


def test_threads_share_one_trace():
    f = fg.jit(lambda x, y: x * y + 1.0)
    x = np.arange(8, dtype=np.float32)
    errors, barrier = [], threading.Barrier(8)

    def work(i):
        try:
            barrier.wait()
            for _ in range(50):
                arg = x if i % 2 else fg.device_put(x)
                np.testing.assert_array_equal(np.asarray(f(arg, x)), x * x + 1.0)
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert len(f._cache) == 1


def test_flat_key():
    x = np.ones(3, np.float32)
    key = jit_module.flat_key((x, 1.0))
    assert key[0] == fg.device_put(x).aval.token
    assert key[1] == core.ShapedArray((), np.dtype(np.float32), weak_type=True).token
    assert jit_module.flat_key(({"a": x},)) is None
    assert jit_module.flat_key((x, [x])) is None


def test_eager_compiled_primitive_keeps_device_values_and_is_jits_result():
    x = np.linspace(-3, 3, 1000, dtype=np.float32)
    on_device = fg.jit(lambda v: v * 1.0)(x)
    assert on_device._np is None
    eager = fnp.exp(on_device)
    assert on_device._np is None  # its host value was not fetched to run exp
    jitted = fg.jit(fnp.exp)(x)
    np.testing.assert_array_equal(np.asarray(eager), np.asarray(jitted))
    np.testing.assert_array_equal(np.asarray(eager), np.asarray(jnp.exp(x)))
    # a host value and a Python scalar still work
    assert np.asarray(fnp.exp(fnp.asarray(x))).tobytes() == np.asarray(jnp.exp(x)).tobytes()
    assert float(fnp.exp(1.0)) == float(jnp.exp(1.0))


def test_eager_compiled_primitive_cache_is_keyed_by_type_and_params():
    x = np.ones((2, 3), np.float32)
    before = len(jit_module._primitive_cache)
    fnp.exp(x)
    fnp.exp(x)
    fnp.exp(x.astype(np.float16))
    assert len(jit_module._primitive_cache) - before <= 2


@pytest.mark.parametrize("donate", [(), (0,)])
def test_pmap_lowered_ahead_of_time_compiles_and_runs_as_jax(donate):
    """pmap(f).lower(...).compile() (equinox's filter_pmap AOT path): the program's
    devices come from the shard_map inside, which the lowering must settle."""
    f = lambda x, y: 2 * x + y  # noqa: E731
    for mod in (fg, jax):
        lowered = mod.pmap(f, donate_argnums=donate).lower(mod.numpy.array([3]),
                                                           mod.numpy.array([4]))
        out = lowered.compile()(mod.numpy.array([3]), mod.numpy.array([4]))
        np.testing.assert_array_equal(out, [10])
    compiled = fg.jit(f).lower(1.0, 2.0).compile()
    assert len(fg.tree_util.tree_leaves(compiled.input_shardings)) == 2


def test_lower_and_calls_under_transformations_share_one_trace_as_jax():
    """flax.nnx.tabulate lowers each module call and then calls it inside the outer
    model's trace: as jax's trace cache, one trace serves both."""
    counts = {"fg": 0, "jax": 0}

    def build(mod, name):
        def f(x):
            counts[name] += 1
            return x * 2
        jf = mod.jit(f)
        jf.lower(np.ones(3, np.float32))
        mod.jit(lambda x: jf(x) + 1)(np.ones(3, np.float32))
        jf.eval_shape(np.ones(3, np.float32))
    build(fg, "fg")
    build(jax, "jax")
    assert counts["fg"] == counts["jax"] == 1
