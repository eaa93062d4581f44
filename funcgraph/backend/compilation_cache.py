"""The persistent compilation cache, as JAX's: with `jax_compilation_cache_dir` set
(`funcgraph.config.update`, the JAX_COMPILATION_CACHE_DIR variable, or
`funcgraph.experimental.compilation_cache.compilation_cache.set_cache_dir`), an
executable whose compile took at least `jax_persistent_cache_min_compile_time_secs`
(1 s) is saved in that directory, and a later process compiling the same module loads
it instead of compiling again.

An entry's name is a hash of everything that decides the compiled code: the module's
text, XLA's compile options (device assignment and compiler_options included), the
platform and its version, the kinds of the devices and jaxlib's version.  Its content
is the compile time and XLA's serialized executable, compressed.  Entries are written
atomically (a new file renamed into place), so processes may share a directory; with
`jax_compilation_cache_max_size` set, the least recently used entries are removed to
keep the directory under it.  Errors reading or writing the cache are warnings unless
`jax_raise_persistent_cache_errors` is on: the cache never stops a program.

As in JAX, the directory is read the first time a compile needs it; a later change of
it takes effect after `reset_cache()`.  Loading an entry runs code written by whoever
wrote the directory, so a cache directory must be trusted as the program itself is.
Programs that call Python back are never cached (their functions are not part of the
executable)."""
import hashlib
import importlib.metadata
import logging
import os
import struct
import threading
import time
import warnings
import zlib

from funcgraph.config import config

logger = logging.getLogger("funcgraph.compilation_cache")

_MAGIC = b"funcgraph-xla-1\n"
_PREFIX = "funcgraph-"
_lock = threading.Lock()
_directory = None    # the directory in use since the first compile that read the flag
_initialized = False


def set_cache_dir(path):
    """Use `path` as the persistent compilation cache (JAX's `set_cache_dir`)."""
    config.update("jax_compilation_cache_dir", None if path is None else os.fspath(path))


def reset_cache():
    """Forget the directory in use: the next compile reads `jax_compilation_cache_dir`
    again (JAX's `reset_cache`)."""
    global _directory, _initialized
    with _lock:
        _directory = None
        _initialized = False


def _cache_directory():
    """The directory in use, fixed at the first compile that asks; None: no cache."""
    global _directory, _initialized
    with _lock:
        if not _initialized:
            path = config.jax_compilation_cache_dir
            if path and config.jax_enable_compilation_cache:
                _directory = os.fspath(path)
                _initialized = True
        directory = _directory
    if not config.jax_enable_compilation_cache or config.jax_compilation_cache_max_size == 0:
        return None
    return directory


def xla_cache_options(platform):
    """XLA's own GPU caches that live beside the persistent cache when it is on, as in
    jax (`jax_persistent_cache_enable_xla_caches`: "all" or names among
    xla_gpu_per_fusion_autotune_cache_dir, jax's default, and xla_gpu_kernel_cache_file):
    XLA options as (name, value) pairs, none off the GPU."""
    if platform not in ("gpu", "cuda", "rocm"):
        return ()
    directory = _cache_directory()
    if directory is None:
        return ()
    wanted = config.jax_persistent_cache_enable_xla_caches or ""
    pairs = []
    if wanted == "all" or "xla_gpu_kernel_cache_file" in wanted:
        pairs += [("xla_gpu_kernel_cache_file",
                   os.path.join(directory, "xla_gpu_kernel_cache_file")),
                  ("xla_gpu_enable_llvm_module_compilation_parallelism", True)]
    if wanted == "all" or "xla_gpu_per_fusion_autotune_cache_dir" in wanted:
        pairs.append(("xla_gpu_per_fusion_autotune_cache_dir",
                      os.path.join(directory, "xla_gpu_per_fusion_autotune_cache_dir")))
    return tuple(pairs)


def _jaxlib_version():
    try:
        return importlib.metadata.version("jaxlib")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def cache_key(text, client, devices, compile_options):
    """The entry's file name: a hash of what decides the compiled code."""
    digest = hashlib.sha256()
    parts = [text.encode(), compile_options.SerializeAsString(),
             client.platform.encode(), client.platform_version.encode(),
             ",".join(d.device_kind for d in devices).encode(), _jaxlib_version().encode()]
    for part in parts:
        digest.update(struct.pack("<Q", len(part)))
        digest.update(part)
    return _PREFIX + digest.hexdigest()


def compile_or_load(text, client, devices, device_list, compile_options, compile_module):
    """compile_module() -> a loaded executable; with the cache on, a saved executable of
    the same module is loaded instead, and a new one is saved when its compile took at
    least the minimum time.  devices: the executable's devices (device_list, the same
    as jaxlib's DeviceList)."""
    directory = _cache_directory()
    if directory is None:
        return compile_module()
    key = cache_key(text, client, devices, compile_options)
    loaded = _guarded("reading", key, lambda: _read(directory, key, client, device_list,
                                                      compile_options))
    if loaded is not None:
        _log("Persistent compilation cache hit for %s", key)
        return loaded
    start = time.perf_counter()
    loaded = compile_module()
    seconds = time.perf_counter() - start
    if seconds < config.jax_persistent_cache_min_compile_time_secs:
        logger.debug("Not writing persistent cache entry %s: its compile took %.3f s, "
                     "under the minimum of %.3f s", key, seconds,
                     config.jax_persistent_cache_min_compile_time_secs)
    else:
        _guarded("writing", key, lambda: _write(directory, key, client, loaded, seconds))
    return loaded


def _log(message, key):
    level = logging.WARNING if config.jax_explain_cache_misses else logging.DEBUG
    logger.log(level, message, key)


def _guarded(action, key, work):
    """work(), with its error a warning unless jax_raise_persistent_cache_errors."""
    try:
        return work()
    except Exception as e:
        if config.jax_raise_persistent_cache_errors:
            raise
        warnings.warn(f"Error {action} persistent compilation cache entry {key}: "
                      f"{type(e).__name__}: {e}", stacklevel=2)
        return None


def _read(directory, key, client, device_list, compile_options):
    path = os.path.join(directory, key)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    try:
        os.utime(path)  # its time of last use, for the size limit's eviction order
    except OSError:  # a directory this process may read but not write
        pass
    if not data.startswith(_MAGIC):
        raise ValueError(f"{path} is not a funcgraph compilation cache entry")
    payload = zlib.decompress(data[len(_MAGIC) + 8:])
    return client.deserialize_executable(payload, device_list, compile_options)


def _write(directory, key, client, loaded, seconds):
    serialize = getattr(loaded, "serialize", None)
    payload = serialize() if serialize else client.serialize_executable(loaded)
    data = _MAGIC + struct.pack("<d", seconds) + zlib.compress(payload)
    if len(data) < config.jax_persistent_cache_min_entry_size_bytes:
        logger.debug("Not writing persistent cache entry %s: %d bytes, under the "
                     "minimum size", key, len(data))
        return
    max_size = config.jax_compilation_cache_max_size
    if max_size > 0 and len(data) > max_size:
        logger.debug("Not writing persistent cache entry %s: %d bytes, over the cache's "
                     "size limit", key, len(data))
        return
    os.makedirs(directory, exist_ok=True)
    # A new file of this process and thread (mode 0666 less the umask, so a shared
    # directory stays shared), renamed over the entry once complete.
    temporary = os.path.join(
        directory, f".writing-{key}-{os.getpid()}-{threading.get_ident()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temporary, os.path.join(directory, key))
    except BaseException:
        os.unlink(temporary)
        raise
    _log("Wrote persistent compilation cache entry %s", key)
    if max_size > 0:
        _evict(directory, max_size, keep=key)


def _evict(directory, max_size, keep):
    """Remove the least recently used entries until the directory's entries fit in
    max_size bytes (never `keep`, the entry just written)."""
    entries = []
    for name in os.listdir(directory):
        if name.startswith(_PREFIX):
            try:
                stat = os.stat(os.path.join(directory, name))
            except FileNotFoundError:  # removed by another process meanwhile
                continue
            entries.append((stat.st_mtime, stat.st_size, name))
    total = sum(size for _, size, _ in entries)
    for _, size, name in sorted(entries):
        if total <= max_size:
            break
        if name == keep:
            continue
        try:
            os.unlink(os.path.join(directory, name))
        except FileNotFoundError:
            pass
        total -= size
