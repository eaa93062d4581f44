"""The JAX libraries on funcgraph: each imports under `python -m funcgraph run`, a
bounded slice of its own tests keeps the outcomes recorded in ecosystem/expected/, and
the example programs of examples/ecosystem/ give jax's numbers unmodified."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "ecosystem"))
import run as ecosystem  # noqa: E402
import slices  # noqa: E402

MODULES = {"optax": "optax", "chex": "chex", "flax_linen": "flax.linen", "flax_nnx": "flax.nnx",
           "equinox": "equinox", "numpyro": "numpyro", "distrax": "distrax",
           "diffrax": "diffrax"}


def python(args, *, alias):
    """Run python (under `-m funcgraph run` when alias) with args; (code, out, err)."""
    prefix = ["-m", "funcgraph", "run"] if alias else []
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("FUNCGRAPH_AS_JAX", None)
    done = subprocess.run([sys.executable, *prefix, *args], capture_output=True, text=True,
                          timeout=900, env=env, cwd=ROOT)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("lib", slices.LIBRARIES)
def test_library_imports_on_funcgraph(lib, tmp_path):
    script = tmp_path / "imports.py"
    script.write_text(f"import jax, {MODULES[lib]}, funcgraph\n"
                      f"assert jax.numpy is funcgraph.numpy\n")
    code, out, err = python([str(script)], alias=True)
    assert code == 0, err[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("lib", slices.LIBRARIES)
def test_library_slice_keeps_its_outcomes(lib):
    """Every test of the slice that passes under jax and was recorded passing under
    funcgraph passes now (ecosystem/expected/LIB.tsv; rerecord with ecosystem/run.py)."""
    expected = ecosystem.read_expected(lib)
    outcomes = ecosystem.run_slice(lib, oracle=False, full=False)
    assert outcomes, f"{lib}: the slice ran no test"
    missing = [t for t in outcomes if t not in expected]
    assert not missing, f"{lib}: not in expected/{lib}.tsv (rerecord): {missing[:5]}"
    lost = ecosystem.regressions(lib, outcomes)
    assert not lost, f"{lib}: pass under jax and passed on funcgraph, fail now: {lost}"


def test_docs_report_the_recorded_outcomes():
    """docs/ecosystem.md's results table is the one expected/ records
    (`python ecosystem/run.py all --summary` prints it)."""
    with open(os.path.join(ROOT, "docs", "ecosystem.md")) as f:
        doc = f.read()
    for row in ecosystem.summary_rows(slices.LIBRARIES):
        assert row in doc, f"docs/ecosystem.md lacks the row {row!r}: rerun --summary"


def test_docs_list_every_shim_module():
    """Each jax module that funcgraph emulates (a file of funcgraph/jax_compat/jax/) is
    named in docs/ecosystem.md."""
    with open(os.path.join(ROOT, "docs", "ecosystem.md")) as f:
        doc = f.read()
    shims = os.path.join(ROOT, "funcgraph", "jax_compat", "jax")
    for folder, _, files in os.walk(shims):
        for file in files:
            if not file.endswith(".py"):
                continue
            parts = os.path.relpath(os.path.join(folder, file), shims)[:-3].split(os.sep)
            name = ".".join(["jax"] + [p for p in parts if p != "__init__"])
            assert f"`{name}`" in doc, f"docs/ecosystem.md does not name the shim {name}"


EXAMPLES = {
    "flax_linen_cnn.py": dict(rtol=2e-3, atol=1e-4),
    "flax_nnx_mlp.py": dict(rtol=2e-3, atol=1e-4),
    "equinox_mlp.py": dict(rtol=2e-3, atol=1e-4),
    "numpyro_nuts.py": dict(rtol=0, atol=0.05),
    "diffrax_ode.py": dict(rtol=1e-4, atol=1e-5),
}


def _numbers(tree):
    if isinstance(tree, dict):
        return [x for key in sorted(tree) for x in _numbers(tree[key])]
    if isinstance(tree, list):
        return [x for item in tree for x in _numbers(item)]
    return [float(tree)]


@pytest.mark.slow
@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_example_gives_jax_numbers(example):
    path = os.path.join("examples", "ecosystem", example)
    code, out, err = python([path], alias=True)
    assert code == 0, err[-3000:]
    code_jax, out_jax, err_jax = python([path], alias=False)
    assert code_jax == 0, err_jax[-3000:]
    ours, theirs = json.loads(out.splitlines()[-1]), json.loads(out_jax.splitlines()[-1])
    assert sorted(ours) == sorted(theirs)
    np.testing.assert_allclose(_numbers(ours), _numbers(theirs), **EXAMPLES[example])


@pytest.mark.slow
def test_funcgraph_views_of_a_flax_step(tmp_path):
    """The IR with source lines, the residual report, the NaN probe and the HTML view
    work on a flax.linen model run unmodified (docs/ecosystem.md shows them)."""
    out = tmp_path / "step.html"
    code, text, err = python([os.path.join("examples", "ecosystem", "flax_views.py"), str(out)],
                             alias=True)
    assert code == 0, err[-3000:]
    ir = text.split("== equations by primitive")[0]
    assert "conv_general_dilated" in ir and "# linear.py:" in ir  # flax's own lines
    assert "flax_linen_cnn.py:20 (__call__)" in ir
    assert "keeps" in text and "residuals alive" in text
    assert "first nan made by sub at _classification.py:" in text  # optax's loss
    assert "0 added, 0 removed" in text.split("batch 4")[1]  # the diff of two batch sizes
    page = out.read_text()
    assert "conv_general_dilated" in page and "flax_linen_cnn.py" in page


@pytest.mark.slow
def test_funcgraph_views_of_an_equinox_model():
    """The same views on an equinox MLP's loss: equinox's source lines in the IR, the
    residual report and the NaN probe naming equinox's line."""
    code, text, err = python([os.path.join("examples", "ecosystem", "equinox_views.py")],
                             alias=True)
    assert code == 0, err[-3000:]
    ir = text.split("== what the backward pass")[0]
    assert "# _linear.py:" in ir and "_mlp.py:" in ir
    assert "vjp(loss) keeps" in text and "residuals alive" in text
    assert "first nan made by dot_general at _linear.py:" in text
