"""Where the real jax modules live while `import jax` means funcgraph.

funcgraph's backend imports the real jax as its compiler and runtime.  When a program
makes `jax` mean funcgraph (funcgraph.install_as_jax, or by hand with
sys.modules["jax"] = funcgraph), the real modules are set aside here, out of
sys.modules, and the backend imports from them inside `real_jax_imports()`.  The
compatibility layer's import hook hands them to the real jax's own lazy imports
(`real_jax_spec`), never to programs or libraries."""
import builtins
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
    # (funcgraph's shims live in funcgraph/jax_compat/jax/: not the real jax)
    return (getattr(module, "__name__", None) == name and "/jax/" in path + "/"
            and "/jax_compat/jax/" not in path + "/")


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
        sys.meta_path.insert(0, _REAL_JAX_FINDER)
        try:
            yield
        finally:
            sys.meta_path.remove(_REAL_JAX_FINDER)
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


# --- the real jax's own imports ---------------------------------------------------------
# jax imports some of its modules inside functions (`from jax._src import shard_map` when
# first needed).  Each real jax module is executed with builtins whose __import__ answers
# from the real modules while `jax` means funcgraph, so those imports never meet the alias
# (and never leave a real module where a program's `import jax...` would find it).

_builtin_import = builtins.__import__


def _real_jax_import(name, globals=None, locals=None, fromlist=(), level=0):
    if not _set_aside or not (level or _is_jax_name(name)):
        return _builtin_import(name, globals, locals, fromlist, level)
    if level == 0:
        module = _real_modules.get(name)
        if module is not None and all(hasattr(module, item) for item in fromlist or ()):
            return module if fromlist else _real_modules["jax"]
    with real_jax_imports():
        return _builtin_import(name, globals, locals, fromlist, level)


_REAL_JAX_BUILTINS = dict(builtins.__dict__, __import__=_real_jax_import)


class _RealJaxLoader(importlib.abc.Loader):
    """A real jax module's own loader, executing the module with _REAL_JAX_BUILTINS."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        module.__dict__["__builtins__"] = _REAL_JAX_BUILTINS
        self.loader.exec_module(module)

    def __getattr__(self, name):  # get_source, get_resource_reader, ...
        return getattr(self.loader, name)


class _RealJaxFinder(importlib.abc.MetaPathFinder):
    """First on sys.meta_path inside real_jax_imports(): the real jax, from its files."""

    def find_spec(self, name, path=None, target=None):
        if not _is_jax_name(name):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _RealJaxLoader(spec.loader)
        return spec


_REAL_JAX_FINDER = _RealJaxFinder()


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
