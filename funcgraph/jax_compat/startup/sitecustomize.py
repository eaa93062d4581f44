"""Python's startup hook for processes started under `python -m funcgraph run` (on
PYTHONPATH with FUNCGRAPH_AS_JAX=1): jax means funcgraph before anything imports it.
A sitecustomize further along sys.path still runs, after this one."""
import importlib.util
import os
import sys

if os.environ.get("FUNCGRAPH_AS_JAX") == "1":
    importlib.import_module("funcgraph").install_as_jax()


def _run_next_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_run_next_sitecustomize()
