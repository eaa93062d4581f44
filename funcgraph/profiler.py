"""Profiling with JAX's API (jax.profiler): traces of the host and the devices for
TensorBoard's profile plugin and Perfetto, named trace events around Python code, and
device memory profiles in pprof's format.  The runtime's profiler does the work
(backend/profiler.py).

    with funcgraph.profiler.trace("/tmp/trace"):
        with funcgraph.profiler.TraceAnnotation("step"):
            train_step(params, batch)
"""
import contextlib
import functools
import gzip
import json
import os
import pathlib
import threading

from funcgraph.backend import profiler as runtime_profiler


class _ProfileState:
    def __init__(self):
        self.lock = threading.Lock()
        self.session = None
        self.log_dir = None
        self.perfetto_trace = False


_state = _ProfileState()
_server = None


def ProfileOptions():  # noqa: N802 (JAX's name for a class)
    """The runtime profiler's options (host_tracer_level, python_tracer_level, ...)."""
    return runtime_profiler.profile_options()


def start_trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False,
                profiler_options=None):
    """Start tracing the host and the devices; stop_trace writes the trace to log_dir
    (TensorBoard's plugins/profile layout).  create_perfetto_trace also writes a
    perfetto_trace.json.gz there for ui.perfetto.dev.  One trace at a time."""
    if create_perfetto_link:
        raise NotImplementedError(
            "funcgraph.profiler.start_trace: create_perfetto_link (serving the trace to "
            "ui.perfetto.dev) is not supported; use create_perfetto_trace=True and open "
            "perfetto_trace.json.gz there")
    with _state.lock:
        if _state.session is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be "
                               "run at a time.")
        _state.session = runtime_profiler.start_session(profiler_options)
        _state.log_dir = str(log_dir)
        _state.perfetto_trace = create_perfetto_trace


def stop_trace():
    """Stop the running trace and write it to the log_dir start_trace was given."""
    with _state.lock:
        if _state.session is None:
            raise RuntimeError("No profile started")
        try:
            _state.session.stop_and_export(_state.log_dir)
            if _state.perfetto_trace:
                _write_perfetto_trace(_state.log_dir)
        finally:
            _state.session, _state.log_dir, _state.perfetto_trace = None, None, False


def _write_perfetto_trace(log_dir):
    """The newest trace's trace.json.gz without its metadata, as perfetto_trace.json.gz
    beside it (what ui.perfetto.dev loads)."""
    folders = (pathlib.Path(log_dir).absolute() / "plugins" / "profile").iterdir()
    newest = max(folders, key=os.path.getmtime)
    (trace_file,) = newest.glob("*.trace.json.gz")
    with gzip.open(trace_file, "rb") as f:
        trace_json = json.load(f)
    trace_json.pop("metadata", None)
    path = newest / "perfetto_trace.json.gz"
    with gzip.open(path, "wb") as f:
        f.write(json.dumps(trace_json).encode("utf-8"))
    return path


@contextlib.contextmanager
def trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False,
          profiler_options=None):
    """start_trace on entry, stop_trace on exit."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation:
    """A context manager recording a trace event named `name` (with keyword arguments as
    its metadata) over the code it encloses, while a trace runs."""

    def __init__(self, name, **kwargs):
        self.name = name
        self.kwargs = kwargs
        self._event = None

    def __enter__(self):
        self._event = runtime_profiler.trace_event(self.name, **self.kwargs)
        self._event.__enter__()
        return self

    def __exit__(self, *exc):
        event, self._event = self._event, None
        return event.__exit__(*exc)


class StepTraceAnnotation(TraceAnnotation):
    """A TraceAnnotation marking one step (step_num=...), which the profiler's step
    analysis groups by."""

    def __init__(self, name, **kwargs):
        super().__init__(name, _r=1, **kwargs)


def annotate_function(func, name=None, **decorator_kwargs):
    """A decorator: each call of func is a trace event named `name` (default: its
    qualified name)."""
    name = name or getattr(func, "__qualname__", None) or func.__name__

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper


def device_memory_profile(backend=None):
    """The live device buffers and executables with their allocation sites, as a gzipped
    pprof protocol buffer (`pprof --web file.prof`)."""
    return gzip.compress(runtime_profiler.heap_profile(backend))


def save_device_memory_profile(filename, backend=None):
    with open(filename, "wb") as f:
        f.write(device_memory_profile(backend))


def start_server(port):
    """Serve profiles on `port` (TensorBoard's "capture profile" connects to it)."""
    global _server
    if _server is not None:
        raise ValueError("Only one profiler server can be active at a time.")
    _server = runtime_profiler.start_server(port)
    return _server


def stop_server():
    global _server
    if _server is None:
        raise ValueError("No active profiler server.")
    _server = None  # the server stops when its object is collected
