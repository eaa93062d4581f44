"""Every public name of the jax namespaces funcgraph mirrors exists in funcgraph, or is
listed with its reason in docs/missing_api.md (a table: module | name | reason).  The
test fails on an unlisted gap and on a listed name that funcgraph now has, so the list
stays true.  "Public" means: no leading underscore, not a submodule (submodules are
compared as modules of their own), and not an object that a jax module merely imported
from the standard library (typing aliases, functools.partial, ...)."""
import importlib
import os
import re
import types

import jax
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MISSING_DOC = os.path.join(ROOT, "docs", "missing_api.md")

MODULES = [
    "jax", "jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.lax", "jax.random",
    "jax.nn", "jax.nn.initializers", "jax.scipy.special", "jax.scipy.linalg",
    "jax.scipy.stats", "jax.tree", "jax.tree_util", "jax.example_libraries.optimizers",
    "jax.example_libraries.stax", "jax.debug", "jax.sharding", "jax.export",
    "jax.custom_derivatives", "jax.custom_batching", "jax.flatten_util", "jax.dtypes",
    "jax.ad_checkpoint", "jax.experimental", "jax.scipy.fft", "jax.scipy.optimize",
    "jax.experimental.sparse",
]
# Modules of the standard library whose objects jax modules import for their own use.
STDLIB_MODULES = {"typing", "collections", "functools", "builtins", "__future__", "abc",
                  "enum", "dataclasses", "itertools", "operator", "collections.abc"}


def _stats_distributions():
    stats = importlib.import_module("jax.scipy.stats")
    return [f"jax.scipy.stats.{n}" for n in sorted(dir(stats))
            if not n.startswith("_") and isinstance(getattr(stats, n), types.ModuleType)]


def jax_modules():
    return MODULES + _stats_distributions()


def funcgraph_module_name(jax_module):
    return "funcgraph" + jax_module[len("jax"):]


def _from_stdlib(value):
    """Objects a jax module imported from the standard library, and typing aliases."""
    return getattr(value, "__module__", None) in STDLIB_MODULES or \
        type(value).__module__ in ("typing", "__future__")


def public_names(module):
    names = set()
    for name in dir(module):
        if name.startswith("_"):
            continue
        value = getattr(module, name)
        if isinstance(value, types.ModuleType) or _from_stdlib(value):
            continue
        names.add(name)
    return names


def read_missing_table():
    """{(module, name): reason} from docs/missing_api.md, and the jax version it records."""
    with open(MISSING_DOC) as f:
        text = f.read()
    version = re.search(r"jax (\d+\.\d+\.\d+)", text).group(1)
    table = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 3 or cells[0] in ("module", "") \
                or set(cells[0]) <= set("-: "):
            continue
        module, name, reason = (c.strip("`") for c in cells)
        assert (module, name) not in table, f"{module}.{name} listed twice in missing_api.md"
        assert reason, f"{module}.{name} has no reason in missing_api.md"
        table[(module, name)] = reason
    return table, version


def funcgraph_has(jax_module, name):
    try:
        module = importlib.import_module(funcgraph_module_name(jax_module))
    except ImportError:
        return False
    return hasattr(module, name)


@pytest.fixture(scope="module")
def missing():
    return read_missing_table()


def test_every_listed_module_is_a_compared_module(missing):
    table, _ = missing
    unknown = {m for m, _ in table} - set(jax_modules())
    assert not unknown, f"missing_api.md lists modules that are not compared: {unknown}"


def test_listed_names_are_still_missing(missing):
    table, _ = missing
    present = sorted(f"{m}.{n}" for m, n in table if funcgraph_has(m, n))
    assert not present, f"funcgraph now has these names: remove them from missing_api.md: {present}"


@pytest.mark.parametrize("jax_module", jax_modules())
def test_every_jax_name_exists_or_is_listed(missing, jax_module):
    table, version = missing
    if jax.__version__ != version:
        pytest.skip(f"missing_api.md was checked against jax {version}, "
                    f"jax {jax.__version__} is installed")
    names = public_names(importlib.import_module(jax_module))
    gaps = sorted(n for n in names if not funcgraph_has(jax_module, n)
                  and (jax_module, n) not in table)
    assert not gaps, f"{jax_module}: names neither in funcgraph nor in missing_api.md: {gaps}"
    stale = sorted(n for m, n in table if m == jax_module and n not in names)
    assert not stale, f"missing_api.md lists names {jax_module} does not have: {stale}"
