"""funcgraph.experimental.multihost_utils in one process, against jax's."""
import jax
import numpy as np
from jax.experimental import multihost_utils as theirs

from funcgraph.experimental import multihost_utils as ours

TREE = {"a": np.arange(3, dtype=np.float32), "b": np.float32(2.0)}


def _same(mine, want):
    for m, w in zip(jax.tree_util.tree_leaves(mine), jax.tree_util.tree_leaves(want),
                    strict=True):
        assert np.asarray(m).shape == np.asarray(w).shape
        np.testing.assert_array_equal(m, w)


def test_gathers_and_broadcasts_of_one_process_match_jax():
    for tiled in (False, True):
        _same(ours.process_allgather(TREE, tiled=tiled),
              theirs.process_allgather(TREE, tiled=tiled))
    _same(ours.broadcast_one_to_all(TREE), theirs.broadcast_one_to_all(TREE))
    assert ours.sync_global_devices("step") is None
    assert ours.assert_equal(TREE) is None
    assert ours.reached_preemption_sync_point(3) is theirs.reached_preemption_sync_point(3)
