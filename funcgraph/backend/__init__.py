"""The backend: the only part of funcgraph that imports jax or jaxlib.

jaxlib is used as the MLIR parser/printer, the XLA compiler and the device
runtime, through a deliberately small surface (kept in this file):
`jax.interpreters.mlir.make_ir_context`, `jax.extend.mlir.ir.Module.parse`,
`jax.extend.backend.get_backend().compile_and_load`, `LoadedExecutable.execute`,
`jax.device_put` and `numpy.asarray` on a device buffer.
"""
import collections
import functools
import os
import sys
import threading
import types
import weakref

import numpy as np


def _is_real_jax_module(name, module):
    path = (getattr(module, "__file__", None) or "").replace(os.sep, "/")
    return getattr(module, "__name__", None) == name and "/jax/" in path


@functools.lru_cache(maxsize=None)
def _jax():
    """The jax/jaxlib modules the backend uses, imported once, on first use.

    Programs sometimes alias `jax` to funcgraph (sys.modules["jax"] = funcgraph) to run
    code written for jax; that must not change what the backend binds, so any such
    alias is set aside while the real modules are imported, then put back."""
    aliases = {name: module for name, module in list(sys.modules.items())
               if (name == "jax" or name.startswith("jax."))
               and not _is_real_jax_module(name, module)}
    for name in aliases:
        del sys.modules[name]
    try:
        import jax
        import jax.experimental
        import jax.extend.backend
        import jax.extend.mlir.ir
        import jax.interpreters.mlir
        import jax.sharding
        from jax._src import core as jax_core
        from jax._src.lib import xla_client
    except ImportError as e:
        raise ImportError(
            f"funcgraph's backend needs jax and jaxlib (XLA's compiler and runtime), which "
            f"could not be imported ({e}); install the versions pinned in funcgraph's "
            f"pyproject.toml, e.g. pip install 'jax==0.10.2' 'jaxlib==0.10.2'") from e
    finally:
        sys.modules.update(aliases)
    enable_x64 = getattr(jax, "enable_x64", None)  # a config State: no truth value
    return types.SimpleNamespace(
        device_put=jax.device_put,
        enable_x64=jax.experimental.enable_x64 if enable_x64 is None else enable_x64,
        backend=jax.extend.backend, mlir_ir=jax.extend.mlir.ir,
        make_ir_context=jax.interpreters.mlir.make_ir_context,
        SingleDeviceSharding=jax.sharding.SingleDeviceSharding, core=jax_core,
        xla_client=xla_client)


@functools.lru_cache(maxsize=None)
def _client():
    return _jax().backend.get_backend()


@functools.lru_cache(maxsize=None)
def platform():
    return _client().platform


def devices():
    return list(_client().devices())


def device_put(value, device=None):
    """A device buffer holding a copy of the host value.  jaxlib's batched transfer takes
    about 3 us where jax.device_put's Python path takes tens; the latter is the fallback."""
    value = np.asarray(value)
    device = device or devices()[0]
    jax = _jax()
    try:
        # enable_x64: funcgraph, not jax's flag, decides which dtypes exist.
        return jax.xla_client.batched_device_put(
            _jax_aval(value.shape, value.dtype), _sharding(device), [value], [device], True,
            True, enable_x64=True)
    except Exception:
        pass
    if value.dtype.itemsize == 8 or value.dtype == np.complex128:
        # jax narrows 64-bit values unless its own x64 flag is on; funcgraph decides that.
        with _jax_x64():
            return jax.device_put(value, device)
    return jax.device_put(value, device)


@functools.lru_cache(maxsize=4096)
def _jax_aval(shape, dtype):
    return _jax().core.ShapedArray(shape, dtype)


@functools.lru_cache(maxsize=None)
def _sharding(device):
    return _jax().SingleDeviceSharding(device)


def _jax_x64():
    return _jax().enable_x64(True)


def to_numpy(buf):
    return np.asarray(buf)


@functools.lru_cache(maxsize=None)
def _mlir_context():
    return _jax().make_ir_context()


def pretty_mlir(text, debug_info=False):
    """Parse StableHLO text (checking it) and print it in MLIR's pretty form (with the
    ops' locations when debug_info)."""
    with _mlir_context():
        module = _jax().mlir_ir.Module.parse(text)
        if debug_info:
            return module.operation.get_asm(enable_debug_info=True)
        return str(module)


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
        jax = _jax()
        sharding = jax.SingleDeviceSharding(loaded.local_devices()[0])
        handlers = [jax.xla_client.array_result_handler(
            jax.core.ShapedArray(a.shape, a.dtype), sharding, True, True) for a in out_avals]
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
    return _jax().backend.get_compile_options(num_replicas=1, num_partitions=1)


# Identical modules (the same primitive on the same types, the same jitted function
# traced again) compile once: an executable is shared while anything uses it (a weak
# cache), and the most recently compiled few stay alive after their users are gone, so
# that re-creating a function soon after costs no compile.  Memory stays bounded by what
# the program holds, not by how many functions it ever compiled.  Threads may compile at
# once; the lock guards only the caches (XLA compiles outside it).
_executables = weakref.WeakValueDictionary()
_recent = collections.OrderedDict()
_RECENT_KEPT = 64
_cache_lock = threading.Lock()


def compile(text, out_avals):
    with _cache_lock:
        executable = _executables.get(text)
    if executable is None:
        executable = Executable(_compile_module(text), text, out_avals)
        with _cache_lock:
            _executables[text] = executable
    with _cache_lock:
        _recent[text] = executable
        _recent.move_to_end(text)
        if len(_recent) > _RECENT_KEPT:
            _recent.popitem(last=False)
    return executable


def clear_caches():
    """Forget every compiled module (the next compile of each text is a real one)."""
    with _cache_lock:
        _executables.clear()
        _recent.clear()


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
