"""The benchmarked data-parallel MLP train step (benchmarks/sharded_step.py: the
784-512-512-10 MLP of benchmarks/run.py, parameters replicated, the batch split over
8 devices) is partitioned by XLA with the same collectives, kind by kind, as jax's
(DESIGN.md's performance target for the sharded step), and gives jax's loss."""
import importlib.util
import os

import jax
import jax.sharding as js
import numpy as np

import funcgraph as fg
from funcgraph.sharding import NamedSharding, PartitionSpec as P
from tests.multidevice.test_sharded_jit import _count_collectives

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _benchmarks():
    spec = importlib.util.spec_from_file_location(
        "benchmarks_run", os.path.join(ROOT, "benchmarks", "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_benchmarked_data_parallel_step_has_jax_collectives(meshes):
    run = _benchmarks()
    params, x, labels = run._mlp_setup()
    fm, jm = meshes((8,), ("data",))
    f_rep, f_data = NamedSharding(fm, P()), NamedSharding(fm, P("data"))
    j_rep, j_data = js.NamedSharding(jm, js.PartitionSpec()), \
        js.NamedSharding(jm, js.PartitionSpec("data"))
    step_fg = fg.jit(run.train_step(fg, run.fnp, fg.tree_util.tree_map),
                     in_shardings=(f_rep, f_data, f_data))
    step_jax = jax.jit(run.train_step(jax, run.jnp, jax.tree_util.tree_map),
                       in_shardings=(j_rep, j_data, j_data))
    ours = _count_collectives(step_fg.lower(params, x, labels).compile().as_text())
    theirs = _count_collectives(step_jax.lower(params, x, labels).compile().as_text())
    assert ours == theirs, (ours, theirs)
    assert ours["all-reduce"] >= 1  # the gradients are summed over the batch shards
    loss_fg = step_fg(params, x, labels)[1]
    loss_jax = step_jax(params, x, labels)[1]
    np.testing.assert_allclose(float(loss_fg), float(loss_jax), rtol=1e-5)
