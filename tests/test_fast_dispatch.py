"""The jit fast path's two implementations (funcgraph/transforms/fast_dispatch.py): the
C module funcgraph._cdispatch and the Python classes, which must agree step for step.
tests/test_dispatch.py tests the fast path through jit; here it also runs with the
Python classes forced (FUNCGRAPH_PYTHON_DISPATCH=1), in a process of its own."""
import gc
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import core
from funcgraph.array import Array
from funcgraph.transforms import fast_dispatch, jit as jit_module

BUILT = importlib.util.find_spec("funcgraph._cdispatch") is not None
needs_c = pytest.mark.skipif(not fast_dispatch.IN_C, reason="funcgraph._cdispatch is not "
                             "built (no C compiler where funcgraph was installed) or not used")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_c_version_is_used_where_it_was_built():
    forced = os.environ.get("FUNCGRAPH_PYTHON_DISPATCH") == "1"
    assert fast_dispatch.IN_C == (BUILT and not forced)
    expected = "funcgraph._cdispatch" if fast_dispatch.IN_C else fast_dispatch.__name__
    assert fg.jit(lambda x: x).__class__.__mro__[1].__module__ == expected


def test_aval_tokens_are_equal_exactly_for_equal_avals():
    f32, i32 = np.dtype(np.float32), np.dtype(np.int32)
    avals = [core.ShapedArray((3,), f32), core.ShapedArray((3,), f32, weak_type=True),
             core.ShapedArray((3,), i32), core.ShapedArray((3, 1), f32),
             core.ShapedArray((), f32), core.ShapedArray((3,), f32, vma=frozenset("i"))]
    tokens = [a.token for a in avals]
    assert len(set(tokens)) == len(avals)
    assert core.ShapedArray((3,), f32).token == tokens[0]
    assert core.get_aval(np.ones(3, np.float32)).token == tokens[0]


def _key_cases():
    x = fg.device_put(np.ones(3, np.float32))
    placed = fg.device_put(np.ones(3, np.float32), fg.devices()[0])
    return {
        "arrays": (x, x),
        "numpy": (np.ones(3, np.float32), np.float32(2.0)),
        "python scalars": (1.0, 2, True),
        "mixed": (x, np.ones((2, 2), np.int32), 3.0),
        "committed": (placed, x),
        "no arguments": (),
        "a container": (x, [x]),
        "a dict": ({"a": x},),
        "a string": ("a",),
        "float64 NumPy": (np.ones(3), np.ones((2, 1))),
        "big-endian NumPy (a TypeError, as in jax)": (np.ones(3, ">f4"),),
        "an unsupported NumPy dtype": (np.array(["a"]),),
    }


def _key_or_error(key, args):
    try:
        return key(args)
    except TypeError as e:
        return str(e)


@needs_c
@pytest.mark.parametrize("case", list(_key_cases()))
def test_c_and_python_flat_keys_agree(case):
    from funcgraph import _cdispatch
    args = _key_cases()[case]
    assert (_key_or_error(_cdispatch.flat_key, args)
            == _key_or_error(fast_dispatch.py_flat_key, args))


def test_flat_keys_separate_what_traces_differently():
    key = fast_dispatch.flat_key
    x = np.ones(3, np.float32)
    assert key((x,)) == key((fg.device_put(x),))  # NumPy values and Arrays trace alike
    assert key((1.0,)) != key((np.float32(1.0),))  # weak and strong
    assert key((x,)) != key((x.astype(np.int32),))
    assert key((x,)) != key((x[:2],))
    placed = fg.device_put(x, fg.devices()[0])
    assert key((placed,)) == ((fg.device_put(x).aval.token, placed._sharding),)
    assert key((x, [x])) is None


def test_numpy_keys_follow_the_x64_flag():
    """A NumPy argument's key is remembered by dtype and shape; the x64 flag decides its
    aval, so a float64 array keys (and traces) as float32 without it, float64 with it."""
    f = fg.jit(lambda v: v * 2)
    x = np.ones(3)
    for x64 in (False, True, False, True):
        with fg.enable_x64(x64):
            expected = core.get_aval(x).token
            assert fast_dispatch.flat_key((x,)) == (expected,)
            assert f(x).dtype == (np.float64 if x64 else np.float32)
            assert f(x).dtype == (np.float64 if x64 else np.float32)  # the fast path


def test_numpy_keys_are_forgotten_when_many():
    fast_dispatch._ndarray_tokens.clear()
    for n in range(fast_dispatch._NDARRAY_TOKENS_KEPT + 5):
        fast_dispatch.flat_key((np.ones(n, np.float32),))
    assert 0 < len(fast_dispatch._ndarray_tokens) <= fast_dispatch._NDARRAY_TOKENS_KEPT
    x = np.ones(3, np.int16)
    assert fast_dispatch.flat_key((x,)) == (core.get_aval(x).token,)


def _compiled_entry(fun, *args):
    f = fg.jit(fun)
    f(*args)
    (entry,) = f._cache.values()
    return entry


def _flat_calls(entry):
    """The C and the Python FlatCall of a cache entry (the C one where it is built)."""
    compiled = entry.compiled
    kept = range(len(entry.in_avals)) if compiled.kept is None else compiled.kept
    puts = tuple(jit_module._host_put(aval) if i in kept else None
                 for i, aval in enumerate(entry.in_avals))
    unflatten = None if entry.out_tree.single else entry.out_tree.unflatten
    parts = (*compiled.executable.fast_parts, tuple(compiled.out_avals), unflatten, puts)
    calls = [fast_dispatch.PyFlatCall(*parts)]
    if fast_dispatch.IN_C:
        from funcgraph import _cdispatch
        calls.append(_cdispatch.FlatCall(*parts))
    return calls


def test_flat_calls_agree_on_one_output_with_device_and_host_arguments():
    x = fg.device_put(np.arange(4, dtype=np.float32))
    entry = _compiled_entry(lambda a, b: a * b + 1.0, x, x)
    for call in _flat_calls(entry):
        for args in [(x, x), (np.arange(4, dtype=np.float32), x), [x, np.ones(4)]]:
            out = call(args)
            assert type(out) is Array and out._sharding is None
            assert out.aval == entry.closed.out_avals[0]
            np.testing.assert_array_equal(out, np.asarray(args[0]) * np.asarray(args[1]) + 1)


def test_flat_calls_agree_on_an_output_tree():
    x = fg.device_put(np.arange(4, dtype=np.float32))
    entry = _compiled_entry(lambda a: {"double": a * 2, "pair": (a + 1, a.sum())}, x)
    for call in _flat_calls(entry):
        out = call((x,))
        assert sorted(out) == ["double", "pair"]
        np.testing.assert_array_equal(out["double"], np.arange(4) * 2)
        np.testing.assert_array_equal(out["pair"][0], np.arange(4) + 1)
        assert out["pair"][1].shape == () and float(out["pair"][1]) == 6.0


def test_flat_calls_reject_a_wrong_argument_count_and_deleted_arrays():
    x = fg.device_put(np.arange(4, dtype=np.float32))
    entry = _compiled_entry(lambda a, b: a + b, x, x)
    dead = fg.device_put(np.arange(4, dtype=np.float32))
    dead.delete()
    for call in _flat_calls(entry):
        with pytest.raises((TypeError, ValueError)):
            call((x,))
        with pytest.raises(RuntimeError, match="deleted"):
            call((x, dead))


def test_flat_calls_skip_the_arguments_the_program_dropped():
    """An unused argument (jit's keep_unused=False) has no put: it is neither read nor
    transferred, so a deleted Array or an object no transfer takes is fine there."""
    x = fg.device_put(np.arange(4, dtype=np.float32))
    entry = _compiled_entry(lambda a, unused, b: a - b, x, x, x)
    assert entry.compiled.kept == (0, 2)
    dead = fg.device_put(np.arange(4, dtype=np.float32))
    dead.delete()
    for call in _flat_calls(entry):
        for unused in (x, dead, np.ones(4, np.float32), "not an array"):
            np.testing.assert_array_equal(call((x, unused, np.ones(4, np.float32))),
                                          np.arange(4) - 1)
        with pytest.raises((TypeError, ValueError)):
            call((x, x))


def test_the_fast_path_keeps_no_references():
    """Calls of the fast path leave the reference counts of their arguments, avals and
    outputs as they were, and no Arrays behind (a C reference leak would show here)."""
    f = fg.jit(lambda a, b: (a * b, a + b))
    g = fg.jit(lambda a, b: a * b)
    x = fg.device_put(np.ones(8, np.float32))
    for fun in (f, g):
        fun(x, x)
        fun(x, x)
    before = (sys.getrefcount(x), sys.getrefcount(x.aval), sys.getrefcount(x._buf))
    gc.collect()
    live = sum(type(o) is Array for o in gc.get_objects())
    for _ in range(200):
        f(x, x)
        g(x, x)
        f(np.ones(8, np.float32), x)
    gc.collect()
    assert (sys.getrefcount(x), sys.getrefcount(x.aval), sys.getrefcount(x._buf)) == before
    assert sum(type(o) is Array for o in gc.get_objects()) == live


def test_a_jitted_function_with_a_cycle_is_collected():
    import weakref

    def make():
        f = fg.jit(lambda a: a + 1.0)
        f.self_reference = f
        f(fg.device_put(np.ones(2, np.float32)))
        return weakref.ref(f)

    ref = make()
    gc.collect()
    assert ref() is None


@pytest.mark.skipif(os.environ.get("FUNCGRAPH_PYTHON_DISPATCH") == "1",
                    reason="already the Python version")
def test_the_dispatch_tests_pass_with_the_python_version():
    env = dict(os.environ, FUNCGRAPH_PYTHON_DISPATCH="1")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:randomly",
         "tests/test_dispatch.py", "tests/test_fast_dispatch.py"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def test_threads_calling_while_caches_are_cleared():
    """Calls in several threads while another clears the function's caches: every call
    answers right (the C path holds the cache it reads while Python code runs)."""
    import threading
    f = fg.jit(lambda a, b: a * b + 1.0)
    x = fg.device_put(np.arange(4, dtype=np.float32))
    expected = np.arange(4, dtype=np.float32) ** 2 + 1
    errors, stop = [], threading.Event()

    def call():
        try:
            for i in range(300):
                out = f(x, np.arange(4, dtype=np.float32)) if i % 2 else f(x, x)
                np.testing.assert_array_equal(out, expected)
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    def clear():
        while not stop.is_set():
            f.clear_cache()

    clearer = threading.Thread(target=clear)
    callers = [threading.Thread(target=call) for _ in range(4)]
    clearer.start()
    for t in callers:
        t.start()
    for t in callers:
        t.join()
    stop.set()
    clearer.join()
    assert not errors, errors[0]


def test_flat_call_arrays_have_every_slot_of_a_constructed_array():
    """The C FlatCall makes Arrays slot by slot (not through Array.__init__): a slot
    added to Array must be set there too, or this fails."""
    x = fg.device_put(np.arange(4, dtype=np.float32))
    entry = _compiled_entry(lambda a: a + 1.0, x)
    slots = [s for s in Array.__slots__ if s != "__weakref__"]
    for call in _flat_calls(entry):
        out = call((x,))
        made = Array(None, out.aval, out._buf)
        assert {s: getattr(out, s) for s in slots} == {s: getattr(made, s) for s in slots}
        with pytest.raises(TypeError):
            call((x,), unknown=1)


def _double(x):
    return x * 2.0


def test_copies_and_pickles_of_a_jitted_function_are_new_jits_of_it():
    """A new jit of the same function and options, which shares its caches (as any jit
    of the same function does, in jax too)."""
    import copy
    import pickle
    f = fg.jit(_double, static_argnums=())
    x = np.arange(3, dtype=np.float32)
    f(x)
    for other in (copy.copy(f), copy.deepcopy(f), pickle.loads(pickle.dumps(f))):
        assert type(other) is type(f) and other is not f and other.fun is f.fun
        assert other._cache is f._cache
        np.testing.assert_array_equal(other(x), x * 2)


def test_importing_funcgraph_leaves_jax_unimported():
    """The backend imports jax on first use (setting up the C fast path must not)."""
    code = "import sys, funcgraph; print('jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "False"


# --- the eager NumPy path's common case in C (_cdispatch.eager_numpy) -----------------

def _eager_cases():
    f32 = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    i32 = np.arange(6, dtype=np.int32).reshape(2, 3)
    return {
        "add": lambda: fnp.add(fnp.asarray(f32), fnp.asarray(f32)),
        "scalar multiply (weak operand)": lambda: fnp.asarray(f32) * 0.5,
        "maximum": lambda: fnp.maximum(fnp.asarray(f32), 0.0),
        "comparison": lambda: fnp.asarray(i32) < 3,
        "integer floor division": lambda: fnp.asarray(i32) // 4,
        "sum over an axis (params)": lambda: fnp.asarray(f32).sum(axis=1),
        "convert (params)": lambda: fnp.asarray(i32).astype(np.float32),
        "a device-held operand": lambda: fg.jit(lambda a: a + 1)(f32) * 2.0,
        "a NumPy operand": lambda: fnp.asarray(f32) + np.ones(3, np.float32),
        "a committed operand": lambda: fg.device_put(f32, fg.devices()[0]) - 1.0,
    }


@pytest.mark.parametrize("case", list(_eager_cases()))
def test_eager_ops_agree_with_and_without_the_c_path(case, monkeypatch):
    from funcgraph.interpreters import eval as eval_module
    with_c = _eager_cases()[case]()
    monkeypatch.setattr(eval_module, "_fast_numpy_op", None)
    python = _eager_cases()[case]()
    assert type(with_c) is Array and with_c.aval == python.aval
    assert with_c.weak_type == python.weak_type
    np.testing.assert_array_equal(np.asarray(with_c), np.asarray(python))


@needs_c
def test_eager_numpy_serves_only_uncommitted_arrays():
    from funcgraph import _cdispatch
    from funcgraph.interpreters.eval import impl_rules
    from funcgraph.primitives import elementwise as ew
    impl, rule = impl_rules[ew.add_p], core.shape_rules[ew.add_p]
    x = fg.device_put(np.arange(3, dtype=np.float32))
    out = _cdispatch.eager_numpy(impl, rule, (x, x), {})
    assert type(out) is Array and out._buf is None and out._sharding is None
    np.testing.assert_array_equal(out, [0, 2, 4])
    placed = fg.device_put(np.arange(3, dtype=np.float32), fg.devices()[0])
    for args in [(x, np.ones(3, np.float32)), (x, 1.0), (x, placed), [x, x]]:
        assert _cdispatch.eager_numpy(impl, rule, args, {}) is NotImplemented
    dead = fg.device_put(np.arange(3, dtype=np.float32))
    dead.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        _cdispatch.eager_numpy(impl, rule, (x, dead), {})
    with pytest.raises(TypeError):  # the shape rule's error, as in Python
        _cdispatch.eager_numpy(impl, rule, (x, fg.device_put(np.ones(2, np.float32))), {})


# --- where an eager primitive runs: NumPy for small work on the host, the device for
# large work and for values the device is still computing (interpreters/eval.py) --------

def _ran_on(out):
    return "numpy" if out._buf is None else "device"


@pytest.fixture(params=["C path", "Python path"])
def eager_path(request, monkeypatch):
    from funcgraph.interpreters import eval as eval_module
    if request.param == "Python path":
        monkeypatch.setattr(eval_module, "_fast_numpy_op", None)
    return eval_module


def test_large_eager_work_runs_compiled(eager_path):
    n = eager_path.LARGE_OP_SIZE
    below, at = fnp.asarray(np.ones(n - 1, np.float32)), fnp.asarray(np.ones(n, np.float32))
    assert _ran_on(below * 2) == "numpy"
    assert _ran_on(at * 2) == "device"
    assert _ran_on(fnp.max(at)) == "device"  # a large argument, a small result
    assert _ran_on(fnp.broadcast_to(fnp.asarray(np.ones(1, np.float32)), (n,))) == "device"
    np.testing.assert_array_equal(at * 2, np.full(n, 2, np.float32))


def test_an_op_on_a_value_being_computed_runs_compiled(eager_path):
    a = fg.device_put(np.ones((1500, 1500), np.float32))
    f = fg.jit(lambda a: (a @ a @ a)[0, :4])
    fg.block_until_ready(f(a) + 1)  # both compiled before the timed call
    y = f(a)
    if y._buf.is_ready():
        pytest.skip("the device finished the product before the next op")
    z = y + 1
    assert _ran_on(z) == "device"
    np.testing.assert_array_equal(z, np.full(4, 1500.0 ** 2 + 1, np.float32))
    y.block_until_ready()
    assert _ran_on(y + 1) == "numpy"  # ready: read in place on the host


@needs_c
def test_eager_numpy_leaves_large_work_to_the_python_path():
    from funcgraph import _cdispatch
    from funcgraph.interpreters import eval as eval_module
    from funcgraph.primitives import elementwise as ew
    impl, rule = eval_module.impl_rules[ew.add_p], core.shape_rules[ew.add_p]
    n = eval_module.LARGE_OP_SIZE
    small, large = (fnp.asarray(np.ones(k, np.float32)) for k in (n - 1, n))
    assert type(_cdispatch.eager_numpy(impl, rule, (small, small), {})) is Array
    assert _cdispatch.eager_numpy(impl, rule, (large, large), {}) is NotImplemented
