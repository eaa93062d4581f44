"""Every notebook in notebooks/ runs top to bottom without error, and is committed
with empty outputs (tools/make_notebooks.py writes them)."""
import json
import os
import sys

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402
from jupyter_client.manager import KernelManager  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NB_DIR = os.path.join(ROOT, "notebooks")
NOTEBOOKS = sorted(n for n in os.listdir(NB_DIR) if n.endswith(".ipynb"))
KERNEL = "funcgraph-test"


@pytest.fixture(scope="session")
def kernel_dir(tmp_path_factory):
    """A kernelspec that runs this interpreter, whatever kernels are installed."""
    root = tmp_path_factory.mktemp("kernels")
    spec = root / KERNEL
    spec.mkdir()
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "funcgraph tests", "language": "python"}))
    return str(root)


def test_there_are_notebooks():
    assert {"tour.ipynb", "autodiff.ipynb", "vmap.ipynb", "control_flow.ipynb",
            "sharding.ipynb"} <= set(NOTEBOOKS)


def test_sharding_notebook_asks_for_eight_devices_first():
    """XLA fixes the device count when its backend starts: the first cell must set it."""
    nb = nbformat.read(os.path.join(NB_DIR, "sharding.ipynb"), as_version=4)
    first = nb.cells[0]
    assert first.cell_type == "code"
    assert "--xla_force_host_platform_device_count=8" in first.source
    assert "XLA_FLAGS" in first.source and "import funcgraph" not in first.source


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_without_outputs(name):
    nb = nbformat.read(os.path.join(NB_DIR, name), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, name


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs(name, kernel_dir):
    nb = nbformat.read(os.path.join(NB_DIR, name), as_version=4)
    km = KernelManager(kernel_name=KERNEL,
                       kernel_spec_manager=KernelSpecManager(kernel_dirs=[kernel_dir]))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    client = nbclient.NotebookClient(nb, km=km, timeout=120,
                                     resources={"metadata": {"path": NB_DIR}})
    # A failing cell raises CellExecutionError naming the cell and its traceback.
    client.execute(env=env)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    # The IR cells render as HTML through funcgraph.inspect.
    assert any("text/html" in o.get("data", {}) for o in outputs), name
