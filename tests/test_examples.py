"""Every script in examples/ runs to completion (exit code 0) as its own process.

The examples check their own results with asserts (losses go down, gradients match
finite differences, ...), so a zero exit code means they ran and their checks held."""
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = sorted((REPO / "examples").glob("*.py"))
TIMEOUT_S = 300


def test_examples_are_found():
    names = {p.name for p in EXAMPLES}
    assert {"quickstart.py", "per_example_gradients.py", "rnn_scan.py", "ode_fori_loop.py",
            "newton_while_loop.py"} <= names, names


# Examples that another test already runs whole, with more checks: here they would only
# run (and compile) a second time.
RUN_ELSEWHERE = {
    "bayesian_model.py": "tests/test_examples_research.py runs its main() in the process "
                         "that compiled the same programs for the jax comparison",
    "parallel_mlp.py": "tests/test_parallel_mlp_example.py runs it and compares its "
                       "losses with jax's",
}
RUN_HERE = [p for p in EXAMPLES if p.name not in RUN_ELSEWHERE]


@pytest.mark.parametrize("path", RUN_HERE, ids=[p.name for p in RUN_HERE])
def test_example_runs(path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.setdefault("JAX_PLATFORMS", "cpu")
    env["MPLBACKEND"] = "Agg"  # examples that plot must not need a display
    result = subprocess.run([sys.executable, str(path)], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=TIMEOUT_S)
    assert result.returncode == 0, (
        f"{path.name} exited with {result.returncode}\n--- stdout ---\n{result.stdout[-3000:]}"
        f"\n--- stderr ---\n{result.stderr[-5000:]}")


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_uses_only_the_public_api(path):
    """Examples show funcgraph's API: no jax imports (jax is only the backend)."""
    source = path.read_text()
    assert "import jax" not in source and "from jax" not in source, path.name
