"""Write docs/api.md: every public name of funcgraph's API modules with its signature
and the first paragraph of its docstring.

Run after changing the public API: `.venv/bin/python tools/gen_api_docs.py`.
tests/test_docs.py fails when docs/api.md is out of date."""
import importlib
import importlib.metadata
import inspect
import os
import re
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
API_MD = os.path.join(HERE, "..", "docs", "api.md")

# (module, what its names mirror): names without a docstring point there.
MODULES = [
    ("funcgraph", "jax"),
    ("funcgraph.numpy", "jax.numpy"),
    ("funcgraph.lax", "jax.lax"),
    ("funcgraph.tree_util", "jax.tree_util"),
    ("funcgraph.random", "jax.random"),
    ("funcgraph.nn", "jax.nn"),
    ("funcgraph.ops", "jax.ops"),
    ("funcgraph.nn.initializers", "jax.nn.initializers"),
    ("funcgraph.numpy.linalg", "jax.numpy.linalg"),
    ("funcgraph.numpy.fft", "jax.numpy.fft"),
    ("funcgraph.lax.linalg", "jax.lax.linalg"),
    ("funcgraph.scipy.linalg", "jax.scipy.linalg"),
    ("funcgraph.scipy.special", "jax.scipy.special"),
    ("funcgraph.scipy.sparse.linalg", "jax.scipy.sparse.linalg"),
    ("funcgraph.custom_derivatives", "jax.custom_derivatives"),
    ("funcgraph.custom_batching", "jax.custom_batching"),
    ("funcgraph.scipy.stats", "jax.scipy.stats"),
    ("funcgraph.scipy.stats.bernoulli", "jax.scipy.stats.bernoulli"),
    ("funcgraph.scipy.stats.beta", "jax.scipy.stats.beta"),
    ("funcgraph.scipy.stats.betabinom", "jax.scipy.stats.betabinom"),
    ("funcgraph.scipy.stats.binom", "jax.scipy.stats.binom"),
    ("funcgraph.scipy.stats.cauchy", "jax.scipy.stats.cauchy"),
    ("funcgraph.scipy.stats.chi2", "jax.scipy.stats.chi2"),
    ("funcgraph.scipy.stats.dirichlet", "jax.scipy.stats.dirichlet"),
    ("funcgraph.scipy.stats.expon", "jax.scipy.stats.expon"),
    ("funcgraph.scipy.stats.gamma", "jax.scipy.stats.gamma"),
    ("funcgraph.scipy.stats.gennorm", "jax.scipy.stats.gennorm"),
    ("funcgraph.scipy.stats.geom", "jax.scipy.stats.geom"),
    ("funcgraph.scipy.stats.gumbel_l", "jax.scipy.stats.gumbel_l"),
    ("funcgraph.scipy.stats.gumbel_r", "jax.scipy.stats.gumbel_r"),
    ("funcgraph.scipy.stats.laplace", "jax.scipy.stats.laplace"),
    ("funcgraph.scipy.stats.logistic", "jax.scipy.stats.logistic"),
    ("funcgraph.scipy.stats.multinomial", "jax.scipy.stats.multinomial"),
    ("funcgraph.scipy.stats.multivariate_normal", "jax.scipy.stats.multivariate_normal"),
    ("funcgraph.scipy.stats.nbinom", "jax.scipy.stats.nbinom"),
    ("funcgraph.scipy.stats.norm", "jax.scipy.stats.norm"),
    ("funcgraph.scipy.stats.pareto", "jax.scipy.stats.pareto"),
    ("funcgraph.scipy.stats.poisson", "jax.scipy.stats.poisson"),
    ("funcgraph.scipy.stats.t", "jax.scipy.stats.t"),
    ("funcgraph.scipy.stats.truncnorm", "jax.scipy.stats.truncnorm"),
    ("funcgraph.scipy.stats.uniform", "jax.scipy.stats.uniform"),
    ("funcgraph.scipy.stats.vonmises", "jax.scipy.stats.vonmises"),
    ("funcgraph.scipy.stats.wrapcauchy", "jax.scipy.stats.wrapcauchy"),
    ("funcgraph.test_util", "jax.test_util"),
    ("funcgraph.errors", "jax.errors"),
    ("funcgraph.ad_checkpoint", "jax.ad_checkpoint"),
    ("funcgraph.export", "jax.export"),
    ("funcgraph.inspect", "funcgraph.inspect"),
]


def public_names(module):
    """__all__ when the module has one; otherwise its non-underscore attributes that
    are not modules."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")
                 and not isinstance(getattr(module, n), types.ModuleType)]
    return sorted(set(names), key=lambda n: (n.lower(), n))


def signature(obj):
    if not callable(obj):
        return None
    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return None
    # Default values that print their address would change on every run.
    return re.sub(r" at 0x[0-9a-fA-F]+", "", sig)


def summary(obj, module_name, mirror, name):
    doc = inspect.getdoc(obj) if (callable(obj) or isinstance(obj, type)) else None
    if isinstance(obj, types.ModuleType):
        doc = inspect.getdoc(obj) or f"The `{module_name}.{name}` module."
    if doc and not (isinstance(obj, type) and doc == inspect.getdoc(type(obj))):
        return doc.split("\n\n")[0].strip()
    if not callable(obj):
        return f"Constant: `{obj!r}`." if isinstance(obj, (int, float, type(None))) else \
            f"`{type(obj).__name__}` value."
    return f"As `{mirror}.{name}`."


def module_section(module_name, mirror):
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    lines = [f"## `{module_name}`", ""]
    head = (inspect.getdoc(module) or "").split("\n\n")[0].strip()
    if head:
        lines += [head, ""]
    for name in public_names(module):
        obj = getattr(module, name)
        sig = signature(obj) if not isinstance(obj, types.ModuleType) else None
        kind = "class " if isinstance(obj, type) else ""
        lines.append(f"### `{module_name}.{name}`")
        lines.append("")
        if sig is not None:
            lines += ["```text", f"{kind}{name}{sig}", "```", ""]
        lines += [summary(obj, module_name, mirror, name), ""]
    return "\n".join(lines)


def environment():
    """The line naming what the text depends on besides funcgraph: Python (inspect's
    signatures, e.g. of enums) and the packages whose values' reprs it shows."""
    packages = ", ".join(f"{name} {importlib.metadata.version(name)}"
                         for name in ("jax", "numpy", "ml_dtypes"))
    return f"Rendered with Python {sys.version_info.major}.{sys.version_info.minor}, {packages}."


def render():
    sections = [s for s in (module_section(m, mirror) for m, mirror in MODULES) if s]
    header = ("# API reference\n\n"
              "Generated by `tools/gen_api_docs.py` from signatures and docstrings; do not "
              "edit by hand. funcgraph follows JAX's API: a name without its own docstring "
              "behaves as the JAX function it names.\n\n" + environment() + "\n")
    return header + "\n" + "\n".join(sections)


def main():
    with open(API_MD, "w") as f:
        f.write(render())
    print("wrote docs/api.md")


if __name__ == "__main__":
    main()
