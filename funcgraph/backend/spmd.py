"""Programs over several devices (or one that is not the default): XLA's SPMD
partitioner splits a module annotated with Shardy shardings into one program per
device and inserts the collectives; jaxlib's PJRT client runs it on arrays whose
shards live on those devices.

funcgraph describes layouts with its own sharding classes; here they become jax's
runtime shardings (what jaxlib's multi-device arrays and result handlers take), and
the layouts XLA chose for unannotated outputs come back as plain block tables.  The
jaxlib surface: `batched_device_put` with several devices, `ArrayImpl` (assembling
single-device arrays), `compile_and_load` with a device assignment and
`num_partitions`, `get_output_shardings`, `execute_sharded` with result handlers; for
programs that call Python back, `compile_and_load(..., host_callbacks=)` of a parsed
module and `execute_sharded(..., with_tokens=True)` with `consume_token` and a prefix
`consume_with_handlers(..., strict=False)` for the ordered-effects token.
"""
import functools
import threading
import weakref

import numpy as np

from funcgraph.backend import (
    _checked_compile, _client, _jax, _jax_aval, _jax_x64, _mlir_context, _sharding,
    compilation_cache, compile_and_load, ir_dump, ordered_token, prepare_kernels,
    result_handler, set_runtime_tokens)


# --- runtime shardings ------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def named_sharding(flat_devices, mesh_shape, axis_names, spec):
    sharding_mod = _sharding_module()
    grid = np.empty(len(flat_devices), dtype=object)
    grid[:] = flat_devices
    mesh = sharding_mod.Mesh(grid.reshape(mesh_shape), axis_names,
                             axis_types=(sharding_mod.AxisType.Auto,) * len(axis_names))
    return sharding_mod.NamedSharding(mesh, sharding_mod.PartitionSpec(*spec))


def single_device_sharding(device):
    return _sharding(device)


def _sharding_module():
    return _jax().sharding


def _gspmd_sharding(devices, op_sharding):
    return _jax().GSPMDSharding(tuple(devices), op_sharding)


# --- arrays over several devices ------------------------------------------------------------

def put_pieces(shape, dtype, runtime_sharding, pieces, devices):
    """One array from host pieces, pieces[i] on devices[i]."""
    aval = _jax_aval(tuple(shape), np.dtype(dtype))
    # Copies: on the CPU the buffers may alias the host pieces, which may be views of
    # data the caller can change.
    pieces = [np.array(p, order="C") for p in pieces]
    return _jax().xla_client.batched_device_put(aval, runtime_sharding, pieces, list(devices),
                                                True, enable_x64=True)


def assemble(shape, dtype, runtime_sharding, buffers):
    """One array from single-device arrays, one per device of the sharding (in its
    device order)."""
    aval = _jax_aval(tuple(shape), np.dtype(dtype))
    return _jax().xla_client.ArrayImpl(aval, runtime_sharding, list(buffers), True)


def shard_buffers(buf):
    """[(device, its single-device array)] of a (possibly multi-device) array."""
    return [(s.device, s.data) for s in buf.addressable_shards]


def buffer_device(buf):
    """The device of a single-device array."""
    return next(iter(buf.devices()))


def reshard(buf, runtime_sharding):
    jax = _jax()
    if not runtime_sharding.is_fully_addressable and buf.is_fully_addressable:
        # Data of this process onto a mesh spanning processes (funcgraph.distributed):
        # every process holds the same value and puts the blocks of its own devices.
        # As in jax, only a replicated layout takes it; split ones need the blocks.
        if not runtime_sharding.is_fully_replicated:
            raise ValueError(
                f"Passing non-trivial shardings for numpy inputs is not allowed. To fix "
                f"this error, either specify a replicated sharding explicitly or, if the "
                f"numpy input is the same on each process, use "
                f"`fg.make_array_from_callback(...)` to create an Array which you can pass "
                f"to jit. Got arg type: {buf.dtype}{list(buf.shape)}")
        value = np.asarray(buf)
        blocks = runtime_sharding.addressable_devices_indices_map(value.shape)
        return put_pieces(value.shape, value.dtype, runtime_sharding,
                          [value[index] for index in blocks.values()], list(blocks))
    try:
        if np.dtype(buf.dtype).itemsize == 8 or buf.dtype == np.complex128:
            with _jax_x64():
                return jax.device_put(buf, runtime_sharding)
        return jax.device_put(buf, runtime_sharding)
    except (ImportError, KeyError):
        # Under install_as_jax, jax.device_put's lazy `from jax.experimental import
        # multihost_utils` (ImportError) or its lazy load of jax._src.lib.mlir.dialects
        # for Array._multi_slice (KeyError) meets the alias: the blocks go through the
        # host instead.
        value = np.asarray(buf)
        blocks = runtime_sharding.addressable_devices_indices_map(value.shape)
        return put_pieces(value.shape, value.dtype, runtime_sharding,
                          [value[index] for index in blocks.values()], list(blocks))


# --- compiling and running ----------------------------------------------------------

class Layout:
    """How XLA laid out one output: `tiles` blocks per dimension, the block each
    partition holds, and the runtime sharding to hand results over with; or, for a
    value that only one partition holds (a host callback's result), that partition."""
    __slots__ = ("tiles", "blocks", "runtime", "partition")

    def __init__(self, tiles, blocks, runtime, partition=None):
        self.tiles = tiles
        self.blocks = blocks
        self.runtime = runtime
        self.partition = partition


def _whole(ndim, devices):
    return Layout((1,) * ndim, [(0,) * ndim] * len(devices),
                  _jax().GSPMDSharding.get_replicated(tuple(devices)))


def _layout(op_sharding, ndim, devices):
    hlo = _jax().xla_client.HloSharding.from_proto(op_sharding)
    n = len(devices)
    if hlo.is_maximal() and not hlo.is_replicated():  # (XLA counts replicated as maximal)
        return Layout(None, None, None, int(hlo.tile_assignment_devices()[0]))
    if hlo.is_replicated() or ndim == 0:
        return Layout((1,) * ndim, [(0,) * ndim] * n, _gspmd_sharding(devices, op_sharding))
    dims = list(hlo.tile_assignment_dimensions())
    grid = np.asarray(hlo.tile_assignment_devices()).reshape(dims)
    blocks = [None] * n
    for position in np.ndindex(*dims):
        blocks[int(grid[position])] = tuple(int(i) for i in position[:ndim])
    return Layout(tuple(dims[:ndim]), blocks, _gspmd_sharding(devices, op_sharding))


class SpmdExecutable:
    """A program partitioned over `devices` (partition i runs on devices[i]).

    `run(buffers)` hands each argument over in the layout the program was compiled for
    (moving those that are elsewhere: uncommitted host or default-device data) and
    returns multi-device arrays in the output layouts."""

    def __init__(self, loaded, text, devices, in_runtime, out_avals, host_callbacks=None,
                 ordered=False):
        self.loaded = loaded
        self.text = text
        self.devices = devices
        self.in_runtime = list(in_runtime)
        self.out_avals = out_avals
        self.layouts = None
        self.host_callbacks = host_callbacks  # kept alive while the program may call them
        self.ordered = ordered  # @main takes and returns the ordered-effects token
        if host_callbacks is not None:
            self.run = self.run_with_callbacks

    def output_layouts(self):
        """The Layout XLA chose for each output."""
        if self.layouts is None:
            devices = self.devices
            shardings = self.loaded.get_output_shardings()
            if shardings is None:  # one partition (a mesh of one device): XLA names none
                self.layouts = [_whole(len(a.shape), devices) for a in self.out_avals]
            else:
                self.layouts = [_layout(op, len(a.shape), devices) for op, a in
                                zip(shardings[1 if self.ordered else 0:], self.out_avals,
                                    strict=True)]
        return self.layouts

    def result_handlers(self, runtime_shardings):
        """What turns the outputs into arrays with these shardings (one per output; a
        partition number: the array that partition holds)."""
        return [_pick(s) if isinstance(s, int) else
                result_handler(_jax_aval(a.shape, a.dtype), s)
                for a, s in zip(self.out_avals, runtime_shardings, strict=True)]

    def place(self, bufs, start=0):
        """The arguments from position `start` on, each in its compiled layout."""
        expected = self.in_runtime
        out = []
        for i, buf in enumerate(bufs, start):
            want = expected[i]
            have = buf.sharding
            if have is not want and have != want:
                buf = reshard(buf, want)
            out.append(buf)
        return out

    def run(self, bufs, handlers):
        return self.loaded.execute_sharded(self.place(bufs)).consume_with_handlers(handlers)

    def run_with_callbacks(self, bufs, handlers):
        """`run` of a program that calls Python back: it keeps the runtime tokens, and
        passes the ordered-effects token on when it has ordered effects."""
        bufs = self.place(bufs)
        if self.ordered:
            bufs.insert(0, ordered_token(self._token_sharding()))
        results = self.loaded.execute_sharded(bufs, with_tokens=True)
        token = None
        if self.ordered:
            [pieces] = results.consume_with_handlers([list], strict=False)
            token = assemble((0,), np.bool_, self._token_sharding(), pieces)
        set_runtime_tokens(token, results.consume_token())
        return results.consume_with_handlers(handlers)

    def _token_sharding(self):
        return named_sharding(self.devices, (len(self.devices),), ("devices",), ())

    def cost_analysis(self):
        return dict(self.loaded.cost_analysis())

    def memory_analysis(self):
        return self.loaded.get_compiled_memory_stats()

    def hlo_text(self):
        return self.loaded.hlo_modules()[0].to_string()


def _pick(partition):
    """The result handler of an output only `partition` holds."""
    return lambda arrays: arrays[partition]


_spmd_cache = weakref.WeakValueDictionary()
_lock = threading.Lock()


def compile_spmd(text, devices, in_runtime, out_avals, propagate_outputs, host_callbacks=(),
                 ordered=False, options=()):
    """Compile a module for `devices` (num_partitions = len(devices)); outputs where
    propagate_outputs[i] take the layout XLA's propagation gives them.  A module that
    calls Python back gets its functions (host_callbacks, by index; its text names
    them by index only, so it is never shared); an `ordered` one threads the
    ordered-effects token (@main's first argument and result).  options: XLA options
    as sorted (name, value) pairs (jit's compiler_options)."""
    effectful = bool(host_callbacks) or ordered
    key = (text, tuple(devices), tuple(in_runtime), tuple(propagate_outputs), options)
    with _lock:
        found = None if effectful else _spmd_cache.get(key)
    if found is not None:
        return found
    ir_dump.dump(text)
    prepare_kernels(text)
    jax = _jax()
    client = devices[0].client  # the devices' platform, not the default (cuda,cpu: cuda)
    compile_options = jax.backend.get_compile_options(
        num_replicas=1, num_partitions=len(devices),
        device_assignment=np.array([d.id for d in devices]).reshape(1, len(devices)),
        env_options_overrides=dict(
            options + compilation_cache.xla_cache_options(client.platform)) or None,
        backend=client)
    build = compile_options.executable_build_options
    build.use_shardy_partitioner = True
    propagate = [False] * ordered + list(propagate_outputs)
    build.allow_spmd_sharding_propagation_to_output = propagate or [False]
    device_list = jax.xla_client.DeviceList(tuple(devices))
    where = f" for {len(devices)} devices"
    if effectful:
        def compile_module():
            with _mlir_context():
                module = jax.mlir_ir.Module.parse(text)
                return compile_and_load(client, module, device_list, compile_options,
                                        list(host_callbacks))
        loaded = _checked_compile(compile_module, text, options, where)
    else:
        loaded = compilation_cache.compile_or_load(
            text, client, devices, device_list, compile_options,
            lambda: _checked_compile(
                lambda: compile_and_load(client, text, device_list, compile_options),
                text, options, where))
    executable = SpmdExecutable(loaded, text, tuple(devices), in_runtime, out_avals,
                                list(host_callbacks) if effectful else None, ordered)
    if effectful:
        return executable
    with _lock:
        _spmd_cache[key] = executable
    return executable


def process_index():
    return _client().process_index()


def process_count():
    return _jax().jax.process_count()
