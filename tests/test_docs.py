"""The docs stay true: every ```python block of docs/*.md runs (the blocks of one file
in order, sharing a namespace, like a notebook; ```python-skip and ```text blocks are
not run), and docs/api.md is what tools/gen_api_docs.py writes now."""
import glob
import importlib.util
import os
import re
import tomllib

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.S | re.M)


def python_blocks(text):
    """(line number, source) of each block fenced exactly as ```python."""
    return [(text[:m.start()].count("\n") + 1, m.group(2))
            for m in FENCE.finditer(text) if m.group(1).strip() == "python"]


def _load_generator():
    spec = importlib.util.spec_from_file_location(
        "gen_api_docs", os.path.join(ROOT, "tools", "gen_api_docs.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_block_extraction():
    text = ("intro\n```python\nx = 1\n```\n```python-skip\nboom()\n```\n"
            "```text\nnot code\n```\n```python\ny = x + 1\n```\n")
    blocks = python_blocks(text)
    assert [src for _, src in blocks] == ["x = 1\n", "y = x + 1\n"]
    assert [line for line, _ in blocks] == [2, 11]


def test_docs_exist():
    names = {os.path.basename(p) for p in DOCS}
    assert {"getting_started.md", "concepts.md", "api.md", "adding_a_primitive.md",
            "sharp_edges.md"} <= names


@pytest.mark.parametrize("path", DOCS, ids=os.path.basename)
def test_python_blocks_run(path):
    with open(path) as f:
        text = f.read()
    namespace = {"__name__": "__doc_example__"}
    for line, source in python_blocks(text):
        # Compiling with the doc's name and line makes a failure point at the block.
        code = compile("\n" * (line) + source, path, "exec")
        exec(code, namespace)


def test_api_reference_is_up_to_date():
    """docs/api.md is rendered in the pinned environment (.venv); elsewhere (another Python
    prints enum signatures differently, another jax or numpy other reprs) it cannot be
    compared, and the environment line it names says so."""
    gen = _load_generator()
    with open(gen.API_MD) as f:
        committed = f.read()
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        pins = tomllib.load(f)["project"]["dependencies"]
    for name in ("jax", "numpy", "ml_dtypes"):  # rendered with the pinned packages
        version = next(p.split("==")[1] for p in pins if p.startswith(name + "=="))
        assert f"{name} {version}" in committed.split("\n## ")[0], (name, version)
    if gen.environment() not in committed:
        pytest.skip(f"docs/api.md was not rendered here ({gen.environment()})")
    assert committed == gen.render(), \
        "docs/api.md is out of date: run .venv/bin/python tools/gen_api_docs.py"


def test_api_reference_lists_every_public_name():
    import funcgraph
    with open(os.path.join(ROOT, "docs", "api.md")) as f:
        text = f.read()
    missing = [n for n in funcgraph.__all__ if f"### `funcgraph.{n}`" not in text]
    assert not missing, f"docs/api.md lacks {missing}"
    for name in ("sum", "where", "arange"):
        assert f"### `funcgraph.numpy.{name}`" in text
    assert "### `funcgraph.inspect.residuals_report`" in text
