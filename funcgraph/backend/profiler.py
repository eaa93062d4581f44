"""The runtime's profiler (jaxlib's, over XLA's): trace sessions written for TensorBoard
and Perfetto, trace events around Python code, device memory profiles, and the
profiler server.  funcgraph.profiler gives them JAX's API."""
from funcgraph.backend import _client, _jax
from funcgraph.backend.platforms import get_backend


def _profiler():
    return _jax().profiler


def start_session(options=None):
    """A running trace session (its profile is written by `stop_and_export`)."""
    profiler = _profiler()
    _client()  # the backend's devices are traced only once it has started
    return profiler.ProfilerSession(options or profiler.ProfileOptions())


def profile_options():
    return _profiler().ProfileOptions()


def trace_event(name, **metadata):
    """A context manager that records a trace event named `name` while a session runs."""
    return _profiler().TraceMe(name, **metadata)


def heap_profile(platform=None):
    """The device memory profile of a backend (pprof protobuf, uncompressed)."""
    return get_backend(platform).heap_profile()


def start_server(port):
    return _profiler().start_server(port)
