"""The backend: the only part of funcgraph that imports jax or jaxlib.

jaxlib is used as the MLIR parser/printer, the XLA compiler and the device
runtime, through a deliberately small surface (kept in this file):
`jax.interpreters.mlir.make_ir_context`, `jax.extend.mlir.ir.Module.parse`,
`jax.extend.backend.get_backend().compile_and_load`, `LoadedExecutable.execute`,
`jax.device_put` and `numpy.asarray` on a device buffer; for programs that call Python
back, `compile_and_load(..., host_callbacks=)` of a parsed module and
`execute_sharded(..., with_tokens=True)` (see "host callbacks" below).
"""
import atexit
import collections
import copy
import functools
import importlib
import os
import pkgutil
import re
import sys
import threading
import types
import weakref

import numpy as np

from funcgraph.backend import compilation_cache, ir_dump, jax_modules
from funcgraph.config import config, update_hooks


@functools.lru_cache(maxsize=None)
def _jax():
    """The jax/jaxlib modules the backend uses, imported once, on first use.

    Programs alias `jax` to funcgraph (funcgraph.install_as_jax, or
    sys.modules["jax"] = funcgraph by hand) to run code written for jax; that must not
    change what the backend binds: the real modules are imported inside
    jax_modules.real_jax_imports() (see there)."""
    try:
        with jax_modules.real_jax_imports():
            import jax
            import jax.experimental
            import jax.extend.backend
            import jax.extend.mlir.dialects.stablehlo
            import jax.extend.mlir.ir
            import jax.export
            import jax.interpreters.mlir
            import jax.sharding
            from jax._src import core as jax_core
            from jax._src import lib as jax_lib
            from jax._src import sharding_impls
            from jax._src.export import _export, serialization_generated
            from jax._src.lib import lapack, xla_client
            if config.jax_platforms:
                # jax initializes only these platforms (if it has not initialized any yet).
                jax.config.update("jax_platforms", config.jax_platforms)
            _forward_to_jax(jax, "jax_num_cpu_devices", -1)
            _import_pjrt_plugins()
    except ImportError as e:
        raise ImportError(
            f"funcgraph's backend needs jax and jaxlib (XLA's compiler and runtime), which "
            f"could not be imported ({e}); install the versions pinned in funcgraph's "
            f"pyproject.toml, e.g. pip install 'jax==0.10.2' 'jaxlib==0.10.2'") from e
    enable_x64 = getattr(jax, "enable_x64", None)  # a config State: no truth value
    return types.SimpleNamespace(
        jax=jax, device_put=jax.device_put,
        enable_x64=jax.experimental.enable_x64 if enable_x64 is None else enable_x64,
        backend=jax.extend.backend, mlir_ir=jax.extend.mlir.ir,
        stablehlo=jax.extend.mlir.dialects.stablehlo, export=jax.export,
        export_internal=_export, serialization_generated=serialization_generated,
        make_ir_context=jax.interpreters.mlir.make_ir_context,
        sharding=jax.sharding, GSPMDSharding=sharding_impls.GSPMDSharding,
        SingleDeviceSharding=jax.sharding.SingleDeviceSharding, core=jax_core,
        xla_client=xla_client, pytree=getattr(jax_lib, "pytree", None),
        jaxlib_extension=getattr(jax_lib, "_jax", None), profiler=jax_lib._profiler,
        lapack=lapack)


def runtime_error_type():
    """The exception the runtime raises when a computation fails while it runs (a host
    callback raised, say): jaxlib's JaxRuntimeError."""
    return _jax().jax.errors.JaxRuntimeError


def set_aside_real_jax():
    """`import jax` will mean funcgraph: the real jax is imported now and kept for the
    backend alone (funcgraph.jax_compat)."""
    jax_modules.set_aside_real_jax(_jax)


importing_real_jax = jax_modules.importing_real_jax
is_real_jax_file = jax_modules.is_real_jax_file
real_jax_spec = jax_modules.real_jax_spec


def _import_pjrt_plugins():
    """Import jax's PJRT plugin modules (jax_plugins.*, e.g. the CUDA one, which imports
    jax._src at its top) now, while an alias of jax is set aside; jax initializes them
    later, when its backends start (after fg.distributed.initialize, if called)."""
    try:
        import jax_plugins
    except ImportError:
        return
    for plugin in pkgutil.iter_modules(jax_plugins.__path__, "jax_plugins."):
        try:
            importlib.import_module(plugin.name)
        except Exception:
            pass  # jax reports a broken plugin itself when it loads it


def _forward_to_jax(jax, name, default):
    """An option jax's runtime reads when it starts, handed to jax now (where set) and on
    every later config.update (jax refuses it once its backends have started)."""
    if getattr(config, name) != default:
        jax.config.update(name, getattr(config, name))
    update_hooks[name] = lambda value: jax.config.update(name, value)


def _client():
    """The default backend: config jax_platform_name's platform where set, else the
    first platform config jax_platforms names (see platforms.py), else jax's default."""
    return _default_client(config.jax_platform_name or config.jax_platforms)


@functools.lru_cache(maxsize=None)
def _default_client(requested):
    """The first platform of `requested` ("cuda,cpu") that is present, as jax picks its
    default; none present: jax's error for the first."""
    get = _jax().backend.get_backend
    names = [n.strip() for n in (requested or "").split(",") if n.strip()]
    for name in names:
        try:
            return get(name)
        except RuntimeError:
            continue
    return get(names[0]) if names else get()


def platform():
    return _client().platform


def devices():
    """Every device, of every process (see backend/distributed.py)."""
    return list(_client().devices())


def local_devices():
    """The devices this process drives (all of them when it is the only process)."""
    return list(_client().local_devices())


def device_type():
    """The runtime's device class (jaxlib's Device: what devices() holds)."""
    return _jax().xla_client.Device


def started_backends():
    """{platform: client} of the runtime clients started so far (jax's record of them)."""
    with jax_modules.real_jax_imports():
        from jax._src import xla_bridge
    return dict(xla_bridge._backends or {})


def _default_device():
    return _first_local_device(_client())


@functools.lru_cache(maxsize=None)
def _first_local_device(client):
    """Cached per client: the default platform can change (config jax_platforms)."""
    return client.local_devices()[0]


def device_put(value, device=None, may_alias=False):
    """A device buffer holding a copy of the host value.  jaxlib's batched transfer takes
    about 3 us where jax.device_put's Python path takes tens; the latter is the fallback.

    may_alias: the buffer may share the value's memory where the device can read host
    memory (the CPU), as jax's jit does with NumPy arguments: for a call's arguments,
    which live only during the call, it saves copying them (a 2 MB array: ~0.2 ms)."""
    value = np.asarray(value)
    device = device or _default_device()
    jax = _jax()
    try:
        # enable_x64: funcgraph, not jax's flag, decides which dtypes exist.  Otherwise
        # copied during the call: the caller may write to its NumPy array right after.
        if may_alias:
            return jax.xla_client.batched_device_put(
                _jax_aval(value.shape, value.dtype), _sharding(device), [value], [device],
                True, False, _zero_copy(), enable_x64=True)
        return jax.xla_client.batched_device_put(
            _jax_aval(value.shape, value.dtype), _sharding(device), [value], [device], True,
            True, _immutable_during_call(), enable_x64=True)
    except Exception:
        pass
    if value.dtype.itemsize == 8 or value.dtype == np.complex128:
        # jax narrows 64-bit values unless its own x64 flag is on; funcgraph decides that.
        with _jax_x64():
            return jax.device_put(value, device)
    return jax.device_put(value, device)


def host_putter(shape, dtype, convert):
    """`put(value) -> buffer` for the arguments of one program: a NumPy array of exactly
    this dtype (and, as the caller checked, shape) goes to the default device, read in
    place during one call (device_put's may_alias); any other value is `convert(value)`.
    The jit fast path's transfer of host arguments, with the per-call lookups of
    device_put done once here, and in one Python frame: it runs once per argument."""
    device = _default_device()
    jax_aval, sharding, devices = _jax_aval(shape, dtype), _sharding(device), [device]
    semantics, batched_device_put = _zero_copy(), _jax().xla_client.batched_device_put

    def put(value):
        if type(value) is not np.ndarray or value.dtype != dtype:
            return convert(value)
        try:
            return batched_device_put(jax_aval, sharding, [value], devices, True, False,
                                      semantics, enable_x64=True)
        except Exception:
            return device_put(value, device, may_alias=True)
    return put


@functools.lru_cache(maxsize=None)
def container_flattener():
    """jaxlib's C++ flatten over Python's own containers only (tuple, list, dict with its
    keys sorted, namedtuple, None with no leaves: each a node as in funcgraph.tree_util;
    anything else a leaf): `flatten(tree) -> (leaves, treedef)`, hashable treedefs.  The
    jit fast path keys calls over such trees with it (optree's flatten of a 100-key dict
    takes twice as long).  None where this jaxlib offers no pytree registry."""
    pytree = _jax().pytree
    try:
        registry = pytree.PyTreeRegistry(enable_none=True, enable_tuple=True,
                                         enable_namedtuple=True, enable_list=True,
                                         enable_dict=True)
    except (AttributeError, TypeError):
        return None
    return registry.flatten


@functools.lru_cache(maxsize=None)
def _immutable_during_call():
    return _jax().xla_client.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL


@functools.lru_cache(maxsize=None)
def _zero_copy():
    return _jax().xla_client.HostBufferSemantics.ZERO_COPY


@functools.lru_cache(maxsize=4096)
def _jax_aval(shape, dtype):
    physical = getattr(dtype, "physical_dtype", None)  # an extended dtype (a key type)
    if physical is not None:
        shape, dtype = tuple(shape) + dtype.physical_shape, physical
    return _jax().core.ShapedArray(shape, dtype)


@functools.lru_cache(maxsize=None)
def _sharding(device):
    return _jax().SingleDeviceSharding(device)


def _jax_x64():
    return _jax().enable_x64(True)


def to_numpy(buf):
    return np.asarray(buf)


def buffer_pointer(buf):
    """The device address of a single-device buffer's memory (jax's
    Array.unsafe_buffer_pointer)."""
    return buf.unsafe_buffer_pointer()


@functools.lru_cache(maxsize=None)
def _mlir_context():
    # jax loads modules lazily while making it: the real ones, also under install_as_jax
    with jax_modules.real_jax_imports():
        return _jax().make_ir_context()


def lowered_cost_analysis(text):
    """XLA's cost estimate (flops, bytes accessed, ...) of a module before optimization,
    as jax's Lowered.cost_analysis gives it; None where the backend gives none."""
    xla = _jax().xla_client._xla
    try:
        computation = xla.mlir.mlir_module_to_xla_computation(text, use_tuple_args=False)
        return xla.hlo_module_cost_analysis(_client(), computation.as_hlo_module())
    except Exception:  # e.g. a plugin backend (PJRT C API) has no such analysis
        return None


def hlo_computation(text):
    """A StableHLO module as XLA's HLO (an XlaComputation: .as_hlo_text(),
    .as_hlo_module()), as jax's Lowered.compiler_ir("hlo") gives it."""
    xla = _jax().xla_client._xla
    return xla.mlir.mlir_module_to_xla_computation(text, use_tuple_args=False)


def parse_mlir(text):
    """StableHLO text as an MLIR module object of jaxlib's bindings (Lowered.compiler_ir)."""
    with _mlir_context():
        return _jax().mlir_ir.Module.parse(text)


def pretty_mlir(text, debug_info=False):
    """Parse StableHLO text (checking it) and print it in MLIR's pretty form (with the
    ops' locations when debug_info)."""
    with _mlir_context():
        module = _jax().mlir_ir.Module.parse(text)
        if debug_info:
            return module.operation.get_asm(enable_debug_info=True)
        return str(module)


class Executable:
    """A compiled XLA program: `run(list of device buffers) -> list of device buffers`.
    One that calls Python back holds those functions and tracks its runtime token.
    `fast_parts`: (execute_sharded, its result handlers, the plain execute) for the jit
    fast path's FlatCall, or None where jaxlib's internals for it are missing."""

    def __init__(self, loaded, text, out_avals, host_callbacks=None, ordered=False):
        self.loaded = loaded
        self.text = text
        self.loaded_text = text
        self.host_callbacks = host_callbacks
        self.fast_parts = None
        if host_callbacks is None:
            self.fast_parts = _fast_parts(loaded, out_avals)
            self.run = _fast_runner(*self.fast_parts) if self.fast_parts else loaded.execute
        else:
            self.run = _effectful_runner(loaded, ordered)

    def cost_analysis(self):
        return dict(self.loaded.cost_analysis())

    def memory_analysis(self):
        return self.loaded.get_compiled_memory_stats()

    def renamed(self, text):
        """This program under the name of `text`, a module that differs from self.text
        only in its name (the compiled program is shared)."""
        twin = copy.copy(self)
        twin.text = text
        return twin

    def hlo_text(self):
        text = self.loaded.hlo_modules()[0].to_string()
        compiled_name, own_name = (_MODULE_NAME.match(t) for t in (self.loaded_text, self.text))
        if compiled_name and own_name and compiled_name.group(1) != own_name.group(1):
            text = text.replace(f"HloModule {compiled_name.group(1)}",
                                f"HloModule {own_name.group(1)}", 1)
        return text


def _fast_parts(loaded, out_avals):
    """(execute_sharded, jaxlib's C++ result handlers of the outputs, execute):
    execute_sharded with the handlers takes about 2 us less per call than `execute`.
    These are jaxlib internals, so any failure here leaves None (then `execute`)."""
    try:
        jax = _jax()
        sharding = jax.SingleDeviceSharding(loaded.local_devices()[0])
        handlers = [result_handler(_jax_aval(a.shape, a.dtype), sharding)
                    for a in out_avals]
        return loaded.execute_sharded, handlers, loaded.execute
    except Exception:
        return None


def _fast_runner(execute_sharded, handlers, plain):
    def run(bufs):
        try:
            return execute_sharded(bufs).consume_with_handlers(handlers)
        except TypeError:  # a buffer execute_sharded does not take: the plain execute
            return plain(bufs)
    return run


def result_handler(aval, sharding):
    """jaxlib's C++ maker of committed result arrays of this type and sharding.  jaxlib
    0.10 takes a fourth argument (skip its checks), 0.11 does not."""
    make = _jax().xla_client.array_result_handler
    try:
        return make(aval, sharding, True, True)
    except TypeError:
        return make(aval, sharding, True)


@functools.lru_cache(maxsize=None)
def _compile_options(client, overrides=()):
    """Compile options as jax passes them for the client's platform; overrides: XLA
    options as (name, value) pairs (jit's compiler_options)."""
    return _jax().backend.get_compile_options(
        num_replicas=1, num_partitions=1, env_options_overrides=dict(overrides) or None,
        backend=client)


def compile_error(e, text, options, devices=""):
    """The error of a failed compile: XLA's own where compiler options were given and
    XLA rejected them, otherwise a funcgraph bug report with the module."""
    if options and ("compile option" in str(e) or "setting option" in str(e)):
        # jaxlib's JaxRuntimeError, as jax raises it (a RuntimeError subclass)
        kind = type(e) if isinstance(e, runtime_error_type()) else RuntimeError
        return kind(f"XLA rejected the compiler options {dict(options)}: {e}")
    return RuntimeError(f"XLA could not compile funcgraph's StableHLO{devices} ({e}). This "
                        f"is a bug in funcgraph's lowering; the module was:\n{text}")


# Identical modules (the same primitive on the same types, the same jitted function
# traced again) compile once: an executable is shared while anything uses it (a weak
# cache), and the most recently compiled few stay alive after their users are gone, so
# that re-creating a function soon after costs no compile.  Memory stays bounded by what
# the program holds, not by how many functions it ever compiled.  Threads may compile at
# once; the lock guards only the caches (XLA compiles outside it).  Modules that differ
# only in their name (an eager op's `jit_sin` and a jitted `lambda x: sin(x)`) are one
# program: they share the compile, and each keeps its own name (Executable.renamed).
_MODULE_NAME = re.compile(r'^module @("[^"]*"|[^\s]+)')
_executables = weakref.WeakValueDictionary()
_recent = collections.OrderedDict()
_RECENT_KEPT = 64
_cache_lock = threading.Lock()


def compile(text, out_avals, host_callbacks=(), ordered=False, options=()):
    """options: XLA options as sorted (name, value) pairs (jit's compiler_options)."""
    if host_callbacks or ordered:
        # The text names callbacks by index only, so such modules are never shared.
        loaded = _compile_module(text, list(host_callbacks), options)
        return Executable(loaded, text, out_avals, list(host_callbacks), ordered)
    named = _MODULE_NAME.match(text)
    unnamed = "module @m" + text[named.end():] if named else text
    key = (unnamed, options) if options else unnamed
    with _cache_lock:
        executable = _executables.get(key)
    if executable is None:
        executable = Executable(_compile_module(text, None, options), text, out_avals)
        with _cache_lock:
            _executables[key] = executable
    elif executable.text != text:
        return executable.renamed(text)
    with _cache_lock:
        _recent[key] = executable
        _recent.move_to_end(key)
        if len(_recent) > _RECENT_KEPT:
            _recent.popitem(last=False)
    return executable


def clear_caches():
    """Forget every compiled module (the next compile of each text is a real one)."""
    with _cache_lock:
        _executables.clear()
        _recent.clear()


def prepare_kernels(text):
    """Make the kernels a module calls ready to run: jaxlib's LAPACK custom calls take
    their routines from SciPy at initialization, which jax runs while lowering (before
    it, the module compiles, and running it crashes the process)."""
    if "lapack_" in text:
        _jax().lapack._lapack.initialize()


def _compile_module(text, host_callbacks=None, options=()):
    ir_dump.dump(text)
    prepare_kernels(text)
    client = _client()
    # Compile options as jax passes them: without them XLA's CPU reductions with
    # max/min drop NaNs (reduce_max([1, nan, 3]) == 3).
    if host_callbacks is not None:
        return _checked_compile(
            lambda: _compile_with_callbacks(client, text, host_callbacks, options),
            text, options)
    devices = client.local_devices()[:1]
    compile_options = _compile_options(
        client, options + compilation_cache.xla_cache_options(client.platform))
    return compilation_cache.compile_or_load(
        text, client, devices, _jax().xla_client.DeviceList(tuple(devices)),
        compile_options,
        lambda: _checked_compile(
            lambda: compile_and_load(client, text, _jax().xla_client.DeviceList(tuple(devices)),
                                     compile_options), text, options))


# Where set (jax._src.compiler under install_as_jax), every compile calls
# compile_hook(client, module, devices, options, host_callbacks) instead of the client.
compile_hook = None


def compile_and_load(client, module, devices, options, host_callbacks=None):
    """client.compile_and_load of a module (text or parsed) for a DeviceList."""
    if compile_hook is not None:
        return compile_hook(client, module, devices, options, host_callbacks)
    if host_callbacks is None:
        return client.compile_and_load(module, devices, options)
    return client.compile_and_load(module, executable_devices=devices,
                                   compile_options=options, host_callbacks=host_callbacks)


def _checked_compile(compile_module, text, options, devices=""):
    """compile_module(), its failure reported by `compile_error`."""
    try:
        return compile_module()
    except Exception as e:
        raise compile_error(e, text, options, devices) from None


# --- host callbacks ----------------------------------------------------------------------
# Compiled code calls Python through XLA's FFI custom call `xla_ffi_python_<device>_callback`
# whose attribute `index` picks the function among those handed to the compiler.  The
# function receives NumPy arrays and returns a tuple of them; an ordered-effects token
# travels as its first argument and result.  At run time each thread keeps the token the
# last ordered execution returned (the next one takes it, so ordered callbacks of
# successive calls stay in order) and the runtime token of its last execution with
# callbacks, which `effects_barrier` waits for.

def python_callback_target(partitioned=False):
    """The custom-call target that calls Python back on this platform (a partitioned
    one is called on every device with its local shards)."""
    name = platform()
    prefix = "xla_ffi_partitioned_python" if partitioned else "xla_ffi_python"
    if name == "cpu":
        return f"{prefix}_cpu_callback"
    if name in ("gpu", "cuda", "rocm"):
        return f"{prefix}_gpu_callback"
    raise NotImplementedError(f"host callbacks are not supported on the {name} backend")


def pass_token(callback):
    """callback as called with a token: the token comes first in and goes first out."""
    def with_token(token, *args):
        return (token, *callback(*args))
    return with_token


def _compile_with_callbacks(client, text, host_callbacks, options):
    jax = _jax()
    # parsing imports MLIR's dialect modules by jax's names: the real ones, also when
    # jax means funcgraph (install_as_jax)
    with jax_modules.real_jax_imports(), _mlir_context():
        module = jax.mlir_ir.Module.parse(text)
        devices = jax.xla_client.DeviceList(tuple(client.local_devices()[:1]))
        return compile_and_load(client, module, devices, _compile_options(client, options),
                                host_callbacks)


class _RuntimeTokens(threading.local):
    ordered = None   # token buffer returned by the last execution with ordered effects
    last = None      # runtime token of the last execution that calls Python back


_runtime_tokens = _RuntimeTokens()


def _effectful_runner(loaded, ordered):
    token_sharding = _sharding(loaded.local_devices()[0])

    def run(bufs):
        bufs = list(bufs)
        if ordered:
            bufs.insert(0, ordered_token(token_sharding))
        results = loaded.execute_sharded(bufs, with_tokens=True)
        _runtime_tokens.last = results.consume_token()
        outs = [shards[0] for shards in results.disassemble_into_single_device_arrays()]
        if ordered:
            _runtime_tokens.ordered = outs.pop(0)
        return outs
    return run


def ordered_token(runtime_sharding):
    """The ordered-effects token a program laid out over `runtime_sharding`'s devices
    takes: the one the last ordered execution returned when it ran there, else a new
    one, once that execution's ordered effects are done (so the programs' effects stay
    in order; XLA's token buffers cannot be moved between devices)."""
    token = _runtime_tokens.ordered
    if token is not None and token.sharding == runtime_sharding:
        return token
    if token is not None:
        token.block_until_ready()
    return _jax().jax.device_put(np.zeros(0, np.bool_), runtime_sharding)


def set_runtime_tokens(ordered, last):
    """Record what a multi-device execution returned (see _RuntimeTokens)."""
    if ordered is not None:
        _runtime_tokens.ordered = ordered
    _runtime_tokens.last = last


def effects_barrier():
    """Wait until every host callback of the computations this thread started has run."""
    for token in (_runtime_tokens.last, _runtime_tokens.ordered):
        if token is not None:
            token.block_until_ready()


atexit.register(effects_barrier)
