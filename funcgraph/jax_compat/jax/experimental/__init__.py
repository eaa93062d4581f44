"""`jax.experimental`: funcgraph.experimental's names (io_callback, compilation_cache,
...), as a shim package so that shim children (layout, checkify, ...) can stand under it;
jax.experimental.<sub> without a shim file falls through to funcgraph.experimental.<sub>."""
import funcgraph.experimental as _own
from funcgraph.experimental import *  # noqa: F401,F403
from .hijax import cur_qdd  # noqa: F401  (jax re-exports it here)


def __getattr__(name):
    try:
        return getattr(_own, name)
    except AttributeError:
        raise AttributeError(f"module 'jax.experimental' has no attribute {name!r}") from None
