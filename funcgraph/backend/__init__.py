"""The backend: the only part of funcgraph that imports jax or jaxlib.

jaxlib is used as the MLIR parser/printer, the XLA compiler and the device
runtime, through a deliberately small surface (kept in this file):
`jax.interpreters.mlir.make_ir_context`, `jax.extend.mlir.ir.Module.parse`,
`jax.extend.backend.get_backend().compile_and_load`, `LoadedExecutable.execute`,
`jax.device_put` and `numpy.asarray` on a device buffer.
"""
import functools
import threading

import numpy as np


@functools.lru_cache(maxsize=None)
def _client():
    import jax.extend.backend as jax_backend
    return jax_backend.get_backend()


@functools.lru_cache(maxsize=None)
def platform():
    return _client().platform


def devices():
    return list(_client().devices())


def device_put(value, device=None):
    import jax
    value = np.asarray(value)
    device = device or devices()[0]
    if value.dtype.itemsize == 8 or value.dtype == np.complex128:
        # jax narrows 64-bit values unless its own x64 flag is on; funcgraph decides that.
        with _jax_x64():
            return jax.device_put(value, device)
    return jax.device_put(value, device)


def _jax_x64():
    import jax
    enable = getattr(jax, "enable_x64", None)
    if enable is None:
        from jax.experimental import enable_x64 as enable
    return enable(True)


def to_numpy(buf):
    return np.asarray(buf)


@functools.lru_cache(maxsize=None)
def _mlir_context():
    from jax.interpreters import mlir
    return mlir.make_ir_context()


def pretty_mlir(text):
    """Parse StableHLO text (checking it) and print it in MLIR's pretty form."""
    from jax.extend.mlir import ir
    with _mlir_context():
        return str(ir.Module.parse(text))


class Executable:
    """A compiled XLA program: `run(list of device buffers) -> list of device buffers`."""

    def __init__(self, loaded, text, out_avals):
        self.loaded = loaded
        self.text = text
        self.run = _fast_runner(loaded, out_avals) or loaded.execute

    def cost_analysis(self):
        return dict(self.loaded.cost_analysis())

    def memory_analysis(self):
        return self.loaded.get_compiled_memory_stats()

    def hlo_text(self):
        return self.loaded.hlo_modules()[0].to_string()


def _fast_runner(loaded, out_avals):
    """execute_sharded with jaxlib's C++ result handlers: about 2 us less per call than
    `execute`.  These are jaxlib internals, so any failure falls back to `execute`."""
    try:
        from jax._src import core as jax_core
        from jax._src.lib import xla_client
        from jax.sharding import SingleDeviceSharding
        sharding = SingleDeviceSharding(loaded.local_devices()[0])
        handlers = [xla_client.array_result_handler(
            jax_core.ShapedArray(a.shape, a.dtype), sharding, True, True) for a in out_avals]
        execute_sharded = loaded.execute_sharded
        plain = loaded.execute

        def run(bufs):
            try:
                return execute_sharded(bufs).consume_with_handlers(handlers)
            except TypeError:
                return plain(bufs)
        return run
    except Exception:
        return None


@functools.lru_cache(maxsize=None)
def _compile_options():
    import jax.extend.backend as jax_backend
    return jax_backend.get_compile_options(num_replicas=1, num_partitions=1)


# Identical modules (the same primitive on the same types, the same jitted function
# traced again) compile once per process.  Threads may compile at once; the lock
# guards only the cache (XLA compiles outside it).
_compiled_modules = {}
_MAX_CACHED_MODULES = 1024
_cache_lock = threading.Lock()


def compile(text, out_avals):
    loaded = _compiled_modules.get(text)
    if loaded is None:
        loaded = _compile_module(text)
        with _cache_lock:
            if len(_compiled_modules) >= _MAX_CACHED_MODULES:
                _compiled_modules.pop(next(iter(_compiled_modules)))
            _compiled_modules[text] = loaded
    return Executable(loaded, text, out_avals)


def _compile_module(text):
    client = _client()
    try:
        # Compile options as jax passes them: without them XLA's CPU reductions with
        # max/min drop NaNs (reduce_max([1, nan, 3]) == 3).
        loaded = client.compile_and_load(text, client.devices()[:1], _compile_options())
    except Exception as e:
        raise RuntimeError(f"XLA could not compile funcgraph's StableHLO ({e}). This is a "
                           f"bug in funcgraph's lowering; the module was:\n{text}") from None
    return loaded
