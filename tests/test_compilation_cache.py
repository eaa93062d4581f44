"""The persistent compilation cache (JAX's `jax_compilation_cache_dir`): entries
written for compiles over the minimum time, loaded instead of compiling (in this
process after its in-memory caches are cleared, and in a new process), the size
limit, the switches, errors as warnings, and programs that call Python back left out."""
import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph.backend import compilation_cache as backend_cache
from funcgraph.experimental.compilation_cache import compilation_cache as cc

FLAGS = ("jax_compilation_cache_dir", "jax_enable_compilation_cache",
         "jax_persistent_cache_min_compile_time_secs",
         "jax_persistent_cache_min_entry_size_bytes", "jax_compilation_cache_max_size",
         "jax_raise_persistent_cache_errors", "jax_persistent_cache_enable_xla_caches")
HIT = "Persistent compilation cache hit"


@pytest.fixture
def cache_dir(tmp_path):
    """A fresh cache directory in use, every compile worth saving; the flags restored
    and the cache forgotten afterwards."""
    saved = {name: fg.config.read(name) for name in FLAGS}
    cc.reset_cache()
    fg.clear_caches()
    cc.set_cache_dir(tmp_path)
    fg.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    yield tmp_path
    for name, value in saved.items():
        fg.config.update(name, value)
    cc.reset_cache()
    fg.clear_caches()


def _entries(directory):
    return sorted(n for n in os.listdir(directory) if n.startswith("funcgraph-"))


def _mlp_loss(w, x):
    return fnp.sum(fnp.tanh(x @ w) ** 2)


def _args(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((32, 32), dtype=np.float32),
            rng.standard_normal((8, 32), dtype=np.float32))


def _hits(caplog):
    return sum(HIT in r.getMessage() for r in caplog.records)


def test_entry_written_then_loaded_with_the_same_results(cache_dir, caplog):
    import jax
    import jax.numpy as jnp
    caplog.set_level(logging.DEBUG, logger="funcgraph.compilation_cache")
    w, x = _args()
    first = fg.jit(fg.grad(_mlp_loss))(w, x)
    assert len(_entries(cache_dir)) == 1 and _hits(caplog) == 0
    fg.clear_caches()  # forget the in-memory executables: the next compile reads the disk
    again = fg.jit(fg.grad(_mlp_loss))(w, x)
    assert _hits(caplog) == 1 and len(_entries(cache_dir)) == 1
    want = jax.jit(jax.grad(lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2)))(w, x)
    np.testing.assert_array_equal(np.asarray(again), np.asarray(first))
    np.testing.assert_allclose(np.asarray(again), np.asarray(want), rtol=1e-5, atol=1e-5)


def test_aot_compile_and_compiler_options_are_keyed(cache_dir, caplog):
    caplog.set_level(logging.DEBUG, logger="funcgraph.compilation_cache")
    w, x = _args()
    lowered = fg.jit(_mlp_loss).lower(w, x)
    lowered.compile()
    lowered.compile(compiler_options={"xla_cpu_enable_fast_math": True})
    assert len(_entries(cache_dir)) == 2  # other options, another executable
    fg.clear_caches()
    value = fg.jit(_mlp_loss).lower(w, x).compile()(w, x)
    assert _hits(caplog) == 1
    np.testing.assert_allclose(float(value), float(_mlp_loss(w, x)), rtol=1e-6)


def test_new_process_loads_instead_of_compiling(tmp_path):
    script = textwrap.dedent("""
        import logging, sys
        import numpy as np
        import funcgraph as fg, funcgraph.numpy as fnp
        logging.basicConfig(level=logging.WARNING, stream=sys.stdout)
        fg.config.update("jax_explain_cache_misses", True)  # cache hits logged as warnings
        fg.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        w = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
        print("value", float(fg.jit(lambda w: fnp.sum(fnp.sin(w @ w)))(w)))
    """)
    env = dict(os.environ, JAX_COMPILATION_CACHE_DIR=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, timeout=120) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    assert len(_entries(tmp_path)) == 1
    assert HIT not in runs[0].stdout and HIT in runs[1].stdout
    values = [line for run in runs for line in run.stdout.splitlines()
              if line.startswith("value")]
    assert len(values) == 2 and values[0] == values[1]


def test_short_compiles_and_small_entries_are_not_written(cache_dir):
    fg.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)  # jax's default
    fg.jit(lambda a: a * 2 + 1)(np.ones(3, np.float32))
    assert _entries(cache_dir) == []
    fg.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    fg.config.update("jax_persistent_cache_min_entry_size_bytes", 10 ** 9)
    fg.jit(lambda a: a * 3 + 1)(np.ones(3, np.float32))
    assert _entries(cache_dir) == []


def test_switches_turn_the_cache_off(cache_dir):
    fg.config.update("jax_enable_compilation_cache", False)
    fg.jit(lambda a: a * 2 + 1)(np.ones(3, np.float32))
    fg.config.update("jax_enable_compilation_cache", True)
    fg.config.update("jax_compilation_cache_max_size", 0)
    fg.jit(lambda a: a * 4 + 1)(np.ones(3, np.float32))
    assert _entries(cache_dir) == []


def test_directory_is_fixed_until_reset(cache_dir, tmp_path_factory):
    fg.jit(lambda a: a * 2 + 1)(np.ones(3, np.float32))
    other = tmp_path_factory.mktemp("other")
    cc.set_cache_dir(other)  # as in jax: no effect until reset_cache
    fg.jit(lambda a: a * 5 + 1)(np.ones(3, np.float32))
    assert len(_entries(cache_dir)) == 2 and _entries(other) == []
    cc.reset_cache()
    fg.jit(lambda a: a * 6 + 1)(np.ones(3, np.float32))
    assert len(_entries(other)) == 1


def test_size_limit_evicts_the_least_recently_used(cache_dir):
    fg.jit(lambda a: a * 2 + 1)(np.ones(3, np.float32))
    (first,) = _entries(cache_dir)
    size = os.path.getsize(cache_dir / first)
    os.utime(cache_dir / first, (1, 1))  # long unused
    fg.config.update("jax_compilation_cache_max_size", int(size * 1.5))
    fg.jit(lambda a: a * 7 + 1)(np.ones(3, np.float32))
    remaining = _entries(cache_dir)
    assert len(remaining) == 1 and remaining[0] != first


def test_bad_entry_is_a_warning_or_an_error(cache_dir):
    fun = fg.jit(lambda a: fnp.cos(a) * 2)
    x = np.ones(4, np.float32)
    fun(x)
    (entry,) = _entries(cache_dir)
    (cache_dir / entry).write_bytes(b"not an executable")
    fg.clear_caches()
    with pytest.warns(UserWarning, match="Error reading persistent compilation cache"):
        np.testing.assert_allclose(np.asarray(fg.jit(lambda a: fnp.cos(a) * 2)(x)),
                                   np.cos(x) * 2, rtol=1e-6)
    (cache_dir / entry).write_bytes(b"not an executable")
    fg.clear_caches()
    fg.config.update("jax_raise_persistent_cache_errors", True)
    with pytest.raises(ValueError, match="not a funcgraph compilation cache entry"):
        fg.jit(lambda a: fnp.cos(a) * 2)(x)


def test_programs_calling_python_are_not_written(cache_dir):
    def f(a):
        fg.debug.callback(lambda v: None, a)
        return a + 1
    fg.jit(f)(np.ones(3, np.float32))
    assert _entries(cache_dir) == []


def test_key_covers_the_module_and_the_options(cache_dir):
    client = fg.devices()[0].client if hasattr(fg.devices()[0], "client") else None
    if client is None:
        pytest.skip("no jaxlib client on this device object")
    devices = client.local_devices()[:1]
    from funcgraph.backend import _compile_options
    plain = _compile_options(client, ())
    base = backend_cache.cache_key("module A", client, devices, plain)
    assert base == backend_cache.cache_key("module A", client, devices, plain)
    assert base != backend_cache.cache_key("module B", client, devices, plain)
    other = _compile_options(client, (("xla_cpu_enable_fast_math", True),))
    assert base != backend_cache.cache_key("module A", client, devices, other)


def test_jax_names():
    import jax.experimental.compilation_cache.compilation_cache as jcc
    assert {n for n in dir(jcc) if not n.startswith("_")} <= set(dir(cc)) | {"annotations"}
    assert fg.experimental.compilation_cache.compilation_cache is cc


def test_xla_gpu_caches_beside_the_cache_on_gpus_only(cache_dir):
    assert backend_cache.xla_cache_options("cpu") == ()
    autotune = dict(backend_cache.xla_cache_options("cuda"))  # jax's default: autotuning
    assert autotune == {"xla_gpu_per_fusion_autotune_cache_dir":
                        str(cache_dir / "xla_gpu_per_fusion_autotune_cache_dir")}
    fg.config.update("jax_persistent_cache_enable_xla_caches", "all")
    assert set(dict(backend_cache.xla_cache_options("gpu"))) == {
        "xla_gpu_per_fusion_autotune_cache_dir", "xla_gpu_kernel_cache_file",
        "xla_gpu_enable_llvm_module_compilation_parallelism"}
    fg.config.update("jax_persistent_cache_enable_xla_caches",
                     "xla_gpu_per_fusion_autotune_cache_dir")


def test_jax_docs_settings_are_accepted(cache_dir):
    # The settings of JAX's persistent compilation cache guide.
    fg.config.update("jax_compilation_cache_dir", str(cache_dir))
    fg.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    fg.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    fg.config.update("jax_persistent_cache_enable_xla_caches",
                     "xla_gpu_per_fusion_autotune_cache_dir")
    f = fg.jit(lambda x: x + 1)
    np.testing.assert_array_equal(np.asarray(f(fnp.zeros((2, 2)))), np.ones((2, 2)))
    assert len(_entries(cache_dir)) == 1
