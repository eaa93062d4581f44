"""`jax` under install_as_jax (this tree of shims is loaded under jax's module names only): funcgraph's public API with the version of the jax
release whose behaviour funcgraph follows, plus the names jax has at its top level
that funcgraph keeps elsewhere."""
import funcgraph as _funcgraph
from funcgraph.jax_compat.alias import JAX_VERSION as __version__

__version_info__ = tuple(int(part) for part in __version__.split("."))

from funcgraph.config import check_tracer_leaks, checking_leaks  # noqa: E402,F401


# Submodules `import jax` imports itself (so `jax.stages.Lowered` works after a bare
# `import jax`) that funcgraph's top level does not hold.
# These are served by jax's submodule (a shim) before any funcgraph attribute of the same
# name (funcgraph.core is not jax.core).
_EAGER_SUBMODULES = frozenset({"stages", "core", "interpreters", "custom_derivatives",
                               "_src", "api_util", "extend", "experimental",
                               "version", "dtypes"})


def __getattr__(name):
    if name in _EAGER_SUBMODULES:
        import importlib
        return importlib.import_module(f"jax.{name}")
    try:
        return getattr(_funcgraph, name)
    except AttributeError:
        raise AttributeError(f"module 'jax' has no attribute {name!r} (jax means funcgraph "
                             f"here: funcgraph.install_as_jax)") from None


def __dir__():
    return sorted(set(globals()) | set(dir(_funcgraph)))
