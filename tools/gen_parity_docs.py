"""Write docs/jaxpr_parity.md: the jaxpr-parity tables' rows, and every listed difference
from jax's program with its reason (tests/test_jaxpr_parity*.py hold them).

Run after changing a table: `.venv/bin/python tools/gen_parity_docs.py`.
tests/test_jaxpr_parity_docs.py fails when docs/jaxpr_parity.md is out of date."""
import collections
import importlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PARITY_MD = os.path.join(ROOT, "docs", "jaxpr_parity.md")

# (test module, what its table covers)
TABLES = [
    ("tests.test_jaxpr_parity", "products (matmul, dot, einsum, ...)"),
    ("tests.test_jaxpr_parity_numpy", "funcgraph.numpy"),
    ("tests.test_jaxpr_parity_linalg_fft", "numpy.linalg, numpy.fft, lax.linalg, scipy.linalg"),
    ("tests.test_jaxpr_parity_lax", "funcgraph.lax"),
    ("tests.test_jaxpr_parity_nn_random_scipy",
     "nn, nn.initializers, random, scipy.special/stats/fft/optimize/sparse"),
]

INTRO = """# Jaxpr parity: funcgraph's programs against jax's

For every public function of funcgraph.numpy (with linalg and fft), lax, nn, random
and scipy, the tests in `tests/test_jaxpr_parity*.py` trace a call with representative
arguments under both libraries and compare the programs (`tests/jaxpr_parity.py`):
funcgraph's may not have more equations than jax's (call wrappers such as jax's `jit`
counted by their bodies), nor a primitive jax's lacks (layout primitives aside), nor
contractions of other operand shapes, nor other output types.  Where jax keeps one
high-level primitive that lowers to many ops (threefry's `random_bits`), rows compare
the number of StableHLO ops after lowering instead.

A row whose program differs must be listed below with its reason, or its test fails;
a listed row whose program no longer differs fails too, so this page stays true.
Written by `tools/gen_parity_docs.py` from the tests' tables.
"""


def _load(name):
    sys.path.insert(0, ROOT)
    return importlib.import_module(name)


def _flat(table):
    """NOT_TRACED may be keyed by module, then function: (name, reason) pairs."""
    for key, value in sorted(table.items()):
        if isinstance(value, dict):
            for name, reason in sorted(value.items()):
                yield f"{key}.{name}", reason
        else:
            yield key, value


def render():
    lines = [INTRO, "## Rows", "", "| table | covers | rows | jax's program | listed |",
             "| --- | --- | ---: | ---: | ---: |"]
    sections = []
    for name, covers in TABLES:
        module = _load(name)
        rows = getattr(module, "ROWS", None) or list(getattr(module, "CASES", {}))
        known = getattr(module, "KNOWN_DIFFERENCES", {})
        lines.append(f"| `{name.split('.')[-1]}` | {covers} | {len(rows)} | "
                     f"{len(rows) - len(known)} | {len(known)} |")
        by_reason = collections.defaultdict(list)
        for row, reason in known.items():
            by_reason[reason].append(row)
        not_traced = list(_flat(getattr(module, "NOT_TRACED", {})))
        if by_reason or not_traced:
            sections.append(f"## {covers}\n")
        if by_reason:
            sections.append("| rows | why the program differs |\n| --- | --- |")
            for reason, names in sorted(by_reason.items(), key=lambda kv: sorted(kv[1])[0]):
                listed = ", ".join(f"`{n}`" for n in sorted(names))
                sections.append(f"| {listed} | {reason.replace('|', '/')} |")
            sections.append("")
        if not_traced:
            sections.append("Public names without a traced row:\n")
            sections.append("| name | why |\n| --- | --- |")
            sections.extend(f"| `{n}` | {r.replace('|', '/')} |" for n, r in not_traced)
            sections.append("")
    return "\n".join(lines + [""] + sections).rstrip() + "\n"


if __name__ == "__main__":
    with open(PARITY_MD, "w") as f:
        f.write(render())
    print(f"wrote {os.path.relpath(PARITY_MD, ROOT)}")
