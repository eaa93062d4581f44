"""`jax.extend.core`: funcgraph.extend.core (the jaxpr object model and primitives)
made a package, so that its child `jax.extend.core.primitives` can be imported."""
import funcgraph.extend.core as _own
from funcgraph.extend.core import *  # noqa: F401,F403


def __getattr__(name):
    if name == "primitives":
        import importlib
        return importlib.import_module("jax.extend.core.primitives")
    try:
        return getattr(_own, name)
    except AttributeError:
        raise AttributeError(f"module 'jax.extend.core' has no attribute {name!r}") from None
