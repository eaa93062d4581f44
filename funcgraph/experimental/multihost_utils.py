"""funcgraph.experimental.multihost_utils: JAX's helpers for programs run by several
processes (barriers, broadcasts and gathers across hosts), for the one-process case
that funcgraph runs them in: each is what jax's gives when process_count() is 1.
With several processes they raise (funcgraph has no cross-process collectives here
yet), never a silent single-process answer."""
import numpy as np

from funcgraph import api, tree_util


def _single_process(name):
    if api.process_count() != 1:
        raise NotImplementedError(f"multihost_utils.{name} with {api.process_count()} "
                                  f"processes is not supported by funcgraph")


def sync_global_devices(name):
    """A barrier across processes (here: one process, nothing to wait for)."""
    _single_process("sync_global_devices")


def broadcast_one_to_all(in_tree, is_source=None):
    """The tree of the source process on every process: here, the tree itself (as host
    arrays, as jax's gives them)."""
    _single_process("broadcast_one_to_all")
    return tree_util.tree_map(np.asarray, in_tree)


def process_allgather(in_tree, tiled=False):
    """Every process's leaves gathered: with tiled, concatenated along axis 0; otherwise
    stacked along a new leading axis of size process_count() (here 1)."""
    _single_process("process_allgather")
    return tree_util.tree_map(
        lambda x: np.asarray(x) if tiled else np.expand_dims(np.asarray(x), 0), in_tree)


def assert_equal(in_tree, fail_message=""):
    """That in_tree is the same on every process (here: trivially)."""
    _single_process("assert_equal")


def reached_preemption_sync_point(step_id):
    """Whether a preemption notice asks the processes to save at step_id: False without
    a distributed service (as jax's), which funcgraph does not start."""
    return False
