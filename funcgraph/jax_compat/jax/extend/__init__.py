"""`jax.extend`: funcgraph.extend (core: the jaxpr object model and primitives), plus
the shim children linear_util (WrappedFun and its transformations) and
source_info_util (source lines and name stacks)."""
import funcgraph.extend as _own
from funcgraph.extend import *  # noqa: F401,F403


def __getattr__(name):
    try:
        return getattr(_own, name)
    except AttributeError:
        pass
    if name in ("linear_util", "source_info_util", "core"):
        import importlib
        return importlib.import_module(f"jax.extend.{name}")
    raise AttributeError(f"module 'jax.extend' has no attribute {name!r}")
