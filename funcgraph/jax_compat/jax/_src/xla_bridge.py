"""`jax._src.xla_bridge`: `_backends`, the runtime clients started so far ({} before the
first use; chex's set_n_cpu_devices reads it), from funcgraph.backend."""
from funcgraph import backend as _backend


def backends():
    return _backend.started_backends()


def __getattr__(name):
    if name == "_backends":
        return _backend.started_backends()
    raise AttributeError(f"module 'jax._src.xla_bridge' has no attribute {name!r}")
