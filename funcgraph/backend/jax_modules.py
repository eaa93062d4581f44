"""Where the real jax modules live while `import jax` means funcgraph.

funcgraph's backend imports the real jax as its compiler and runtime.  When a program
makes `jax` mean funcgraph (funcgraph.install_as_jax, or by hand with
sys.modules["jax"] = funcgraph), the real modules are set aside here, out of
sys.modules, and the backend imports from them inside `real_jax_imports()`.  The
compatibility layer's import hook hands them to the real jax's own lazy imports
(`real_jax_spec`), never to programs or libraries."""
import contextlib
import importlib.abc
import importlib.machinery
import os
import sys
import threading

_real_modules = {}        # name -> real jax module, while set aside
_set_aside = False
_state = threading.local()
_lock = threading.RLock()


def _is_jax_name(name):
    return name == "jax" or name.startswith("jax.")


def is_real_jax_module(name, module):
    path = (getattr(module, "__file__", None) or "").replace(os.sep, "/")
    if not path:  # a namespace package: its search path says where it lives
        path = "/".join(str(p) for p in getattr(module, "__path__", ()))
    return getattr(module, "__name__", None) == name and "/jax/" in path + "/"


def importing_real_jax():
    return getattr(_state, "depth", 0) > 0


def _stash_real_modules():
    for name, module in list(sys.modules.items()):
        if _is_jax_name(name) and is_real_jax_module(name, module):
            _real_modules[name] = sys.modules.pop(name)


@contextlib.contextmanager
def real_jax_imports():
    """Inside it, `import jax...` imports the real jax (and anything aliased to it is
    set aside); the real modules are put aside again afterwards if jax means
    funcgraph."""
    with _lock:
        aliases = {name: module for name, module in list(sys.modules.items())
                   if _is_jax_name(name) and not is_real_jax_module(name, module)}
        for name in aliases:
            del sys.modules[name]
        sys.modules.update(_real_modules)
        _state.depth = getattr(_state, "depth", 0) + 1
        try:
            yield
        finally:
            _state.depth -= 1
            if _set_aside:
                _stash_real_modules()
            sys.modules.update(aliases)


def set_aside_real_jax(import_real_jax):
    """From now on the real jax modules live here, not in sys.modules;
    `import_real_jax()` imports them first (they must be loaded before the alias)."""
    global _set_aside
    with _lock:
        import_real_jax()
        _set_aside = True
        _stash_real_modules()


def real_jax_dir():
    jax = _real_modules.get("jax") or sys.modules.get("jax")
    return os.path.dirname(jax.__file__) + os.sep if jax is not None else None


def is_real_jax_file(filename):
    root = real_jax_dir()
    return root is not None and filename.startswith(root)


class ModuleLoader(importlib.abc.Loader):
    """Loads a name as a module object that already exists (one module, two names).
    The module keeps its own __spec__ (importlib sets the new name's spec on it)."""

    def __init__(self, module):
        self.module = module
        self.own_spec = getattr(module, "__spec__", None)

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        module.__spec__ = self.own_spec


def real_jax_spec(name):
    """The spec of the real jax module `name`, for jax's own lazy imports."""
    module = _real_modules.get(name)
    if module is not None:
        return importlib.machinery.ModuleSpec(
            name, ModuleLoader(module), is_package=hasattr(module, "__path__"))
    parent, _, _ = name.rpartition(".")
    path = None
    if parent:
        parent_module = _real_modules.get(parent) or sys.modules.get(parent)
        path = getattr(parent_module, "__path__", None)
    return importlib.machinery.PathFinder.find_spec(name, path)
