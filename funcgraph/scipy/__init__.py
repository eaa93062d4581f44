"""funcgraph.scipy: parts of the SciPy API (JAX's scipy semantics).  Its submodules are
attributes of funcgraph.scipy, as JAX's scipy submodules are; each is imported at its
first use (`import funcgraph` need not load them, nor SciPy under them)."""
import importlib

_SUBMODULES = ("fft", "linalg", "optimize", "sparse", "special", "stats")


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"funcgraph.scipy.{name}")
    raise AttributeError(f"module 'funcgraph.scipy' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_SUBMODULES))
