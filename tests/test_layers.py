"""The import graph of funcgraph is a DAG of layers (README, Layout): a module imports
only modules of its own layer or of lower ones, no import hides inside a function
except the few listed below, and import cycles stay within a couple of modules."""
import ast
import os

import pytest

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "funcgraph")

# Lowest first.  A module belongs to the longest entry that is it or a package above it.
LAYERS = [
    ("config", "_cdispatch", "_libm", "_source", "native"),  # C modules (and native.py, which loads them)
    ("dtypes", "tree_util", "tree", "backend", "shape_poly"),
    ("core", "sharding"),
    ("array", "ir", "errors", "util", "typing", "refs"),
    ("interpreters",),
    ("lowering",),
    ("primitives",),
    ("passes", "lax"),
    ("transforms", "api", "ad_checkpoint", "callback", "distributed", "experimental", "export",
     "export_poly", "sharding_display", "custom_derivatives", "custom_batching"),
    ("debugging", "debug", "profiler"),  # debug re-exports debugging's find_nonfinite
    ("numpy",),
    ("special_math",),
    ("random", "test_util"),
    ("nn", "checkify", "ops"),
    ("scipy",),
    ("lax.linalg",),  # JAX's lax.linalg names over funcgraph.numpy.linalg and scipy.linalg
    ("extend", "flatten_util", "example_libraries"),
    ("inspect",),
    ("experimental.sparse",),  # BCOO over funcgraph.numpy
    # funcgraph/__init__.py: the public namespace; jax_compat (`import jax` as funcgraph:
    # jax's names over the namespace) and python -m funcgraph stand beside it
    ("", "__main__", "jax_compat"),
]

# Function-local imports that are allowed: (importing module, imported module).
# Known debts, each to be moved to its layer: refs make arrays with funcgraph.numpy
# (a layer above them), and numpy's key comparison reads key data through
# funcgraph.random (which imports funcgraph.numpy).
LOCAL_IMPORTS_ALLOWED = {("funcgraph.refs", "funcgraph.numpy"),
                         ("funcgraph.numpy._ufuncs", "funcgraph.random"),
                         ("funcgraph.numpy._ufuncs", "funcgraph.numpy")}

MAX_CYCLE = 2


def _modules():
    mods = {}
    for dirpath, _, files in os.walk(PACKAGE):
        for f in files:
            if f.endswith((".py", ".c")):  # .c: an extension module built by setup.py
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, os.path.dirname(PACKAGE))
                rel = rel.rpartition(".")[0].replace(os.sep, ".")
                mods[rel[:-len(".__init__")] if rel.endswith(".__init__") else rel] = path
    return mods


def _resolve(name, mods):
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def _imports(mod, path, mods):
    """(imported module, is function-local, line) for every funcgraph import of mod."""
    if path.endswith(".c"):
        return []
    tree = ast.parse(open(path).read())
    package = mod if path.endswith("__init__.py") else mod.rpartition(".")[0]
    found = []

    def visit(node, local):
        for child in ast.iter_child_nodes(node):
            inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            targets = []
            if isinstance(child, ast.Import):
                targets = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")[:len(package.split(".")) - child.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                # `from pkg import sub` names a submodule; `from mod import name` the module.
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                           for a in child.names]
            for t in targets:
                target = _resolve(t, mods)
                if target and target != mod and target.startswith("funcgraph"):
                    found.append((target, inner, child.lineno))
            visit(child, inner)
    visit(tree, False)
    return found


def _layer(mod):
    """The layer of the longest entry that is mod or a package above it."""
    name = mod[len("funcgraph."):] if mod != "funcgraph" else ""
    matches = [(len(entry), i) for i, group in enumerate(LAYERS) for entry in group
               if name == entry or (entry and name.startswith(entry + "."))]
    if not matches:
        raise AssertionError(f"module {mod} belongs to no layer: add it to LAYERS")
    return max(matches)[1]


def _graph():
    mods = _modules()
    return mods, {m: _imports(m, p, mods) for m, p in mods.items()}


def _cycles(edges):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def connect(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in edges:
        if v not in index:
            connect(v)
    return out


def test_every_module_has_a_layer():
    for mod in _modules():
        _layer(mod)


def test_no_module_imports_a_higher_layer():
    mods, graph = _graph()
    upward = [f"{mods[m]}:{line}: {m} imports {t}"
              for m, imports in graph.items() for t, _, line in imports
              if _layer(t) > _layer(m) and (m, t) not in LOCAL_IMPORTS_ALLOWED]
    assert not upward, "lower layers import higher ones:\n" + "\n".join(upward)


def test_no_imports_hidden_in_functions():
    mods, graph = _graph()
    hidden = [f"{mods[m]}:{line}: {m} imports {t} inside a function"
              for m, imports in graph.items() for t, local, line in imports
              if local and (m, t) not in LOCAL_IMPORTS_ALLOWED]
    assert not hidden, "\n".join(hidden)


def test_import_cycles_are_small_and_inside_one_package():
    _, graph = _graph()
    edges = {m: {t for t, _, _ in imports if (m, t) not in LOCAL_IMPORTS_ALLOWED}
             for m, imports in graph.items()}
    for cycle in _cycles(edges):
        packages = {m.rpartition(".")[0] for m in cycle}
        assert len(cycle) <= MAX_CYCLE and len(packages) == 1, f"import cycle: {cycle}"


@pytest.mark.parametrize("module", ["funcgraph.core", "funcgraph.ir", "funcgraph.interpreters.eval"])
def test_low_layers_import_alone(module, tmp_path):
    """A low module imports in a fresh interpreter without the rest of funcgraph loaded
    first (its package __init__ still runs, so this checks it holds no import-order trap)."""
    import subprocess
    import sys
    code = f"import importlib; importlib.import_module({module!r})"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)
