"""examples/parallel_mlp.py (data- and model-parallel training on 8 virtual devices)
prints the losses the same program gets in jax with the same layouts, and draws the
layouts of its parameters and activations."""
import os
import re
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOSS_LINE = re.compile(r"^(\S+) step (\d+) loss ([-\d.]+)$", re.M)


def _run(script):
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=ROOT)
    env.pop("XLA_FLAGS", None)
    result = subprocess.run([sys.executable, script], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def _losses(stdout):
    found = {}
    for name, step, value in LOSS_LINE.findall(stdout):
        found.setdefault(name, []).append((int(step), float(value)))
    return {name: [v for _, v in sorted(steps)] for name, steps in found.items()}


def test_example_losses_match_jax_and_layouts_are_drawn():
    ours = _run(os.path.join(ROOT, "examples", "parallel_mlp.py"))
    theirs = _run(os.path.join(ROOT, "tests", "parallel_mlp_jax.py"))
    got, want = _losses(ours), _losses(theirs)
    assert set(got) == set(want) == {"data-parallel", "model-parallel"}
    for name in want:
        assert len(got[name]) == len(want[name]) == 5
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=2e-6)
    # The model-parallel weights and activations are drawn split over the "model" axis.
    assert "w1 (16, 32) laid out as P(None, 'model')" in ours
    assert "│ CPU 0,4  │ CPU 1,5  │ CPU 2,6  │ CPU 3,7  │" in ours
    assert "activations (64, 32) laid out as P('data', 'model')" in ours
    assert "│ CPU 4 │ CPU 5 │ CPU 6 │ CPU 7 │" in ours
