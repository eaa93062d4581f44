"""The import machinery behind `install_as_jax`: a meta path finder that answers for
`jax` and `jax.*`, while funcgraph's backend keeps the real jax modules to itself."""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import threading

from funcgraph import backend
from funcgraph.backend import jax_modules

# The jax release whose behaviour funcgraph follows: `jax.__version__` under the alias
# (libraries choose code paths by it); funcgraph.__version__ stays funcgraph's own.
JAX_VERSION = "0.10.2"

# The shim modules, laid out as jax's modules are (jax/__init__.py is `jax`,
# jax/_src/core.py is `jax._src.core`); each is loaded under its jax name only, so a
# shim imports its siblings by their jax names.
SHIM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax")

# funcgraph's own modules whose API is jax's module of the same name; jax.<name>.<sub>
# follows funcgraph.<name>.<sub> where no shim module stands in front of it.
SAME_API_MODULES = frozenset({
    "ad_checkpoint", "custom_batching", "custom_derivatives", "debug", "distributed",
    "dtypes", "errors", "example_libraries", "experimental", "export", "extend",
    "flatten_util", "lax", "nn", "numpy", "ops", "profiler", "random", "scipy", "sharding",
    "test_util", "tree", "tree_util", "typing",
})

_lock = threading.RLock()
_installed = False


def is_installed():
    return _installed


def install_as_jax():
    """Make `import jax` and every `jax.<sub>` funcgraph for the rest of the process,
    third-party libraries included.  Call it before anything imports jax; a jax
    imported earlier is set aside (funcgraph's backend keeps using it underneath).
    Subprocesses inherit it through the FUNCGRAPH_AS_JAX environment variable when
    they start through `python -m funcgraph run` (see funcgraph.__main__)."""
    global _installed
    with _lock:
        if _installed:
            return sys.modules["jax"]
        backend.set_aside_real_jax()
        sys.meta_path.insert(0, _FINDER)
        _installed = True
        return importlib.import_module("jax")


def _module_exists(name):
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def shim_spec(name):
    """The spec of the shim module for the jax module `name`, or None."""
    base = os.path.join(SHIM_DIR, *name.split(".")[1:])
    init = os.path.join(base, "__init__.py")
    if os.path.isfile(init):
        return importlib.util.spec_from_file_location(name, init,
                                                      submodule_search_locations=[base])
    if name != "jax" and os.path.isfile(base + ".py"):
        return importlib.util.spec_from_file_location(name, base + ".py")
    return None


def own_module_name(name):
    """funcgraph's own module that serves the jax module `name` where no shim stands in
    front of it, or None."""
    parts = name.split(".")
    if len(parts) < 2 or parts[1] not in SAME_API_MODULES:
        return None
    own = ".".join(["funcgraph"] + parts[1:])
    return own if _module_exists(own) else None


class _JaxFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "jax" and not name.startswith("jax."):
            return None
        if backend.importing_real_jax() or _imported_by_real_jax():
            return backend.real_jax_spec(name)
        spec = shim_spec(name)
        if spec is not None:
            return spec
        served = own_module_name(name)
        if served is None:
            raise ModuleNotFoundError(
                f"No module named {name!r}: funcgraph's jax compatibility layer "
                f"(install_as_jax) does not provide it; docs/ecosystem.md lists what it "
                f"provides", name=name)
        module = importlib.import_module(served)
        return importlib.machinery.ModuleSpec(
            name, jax_modules.ModuleLoader(module), is_package=hasattr(module, "__path__"))


def _imported_by_real_jax():
    """Whether the import running now was asked for by one of the real jax's files: jax
    imports some modules lazily, and those that a program imported before funcgraph
    could not be given their own imports (backend/jax_modules.py)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
        frame = frame.f_back
    if frame is None:
        return False
    return backend.is_real_jax_file(frame.f_code.co_filename)


_FINDER = _JaxFinder()
