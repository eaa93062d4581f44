"""Two processes on localhost, 4 virtual CPU devices each, form one 8-device mesh
through funcgraph.distributed (jaxlib's coordination service and gloo collectives) and
train a data-parallel MLP with sharded jit; both must get the losses one process with
8 devices gets, and those must be jax's (the oracle, run in that process)."""
import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

import funcgraph as fg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKER = os.path.join(ROOT, "tests", "multiprocess_worker.py")


def _free_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _env(n_devices):
    return dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={n_devices}",
                JAX_PLATFORMS="cpu", PYTHONPATH=ROOT)


def _report(stdout):
    return json.loads(stdout.strip().splitlines()[-1])


def test_two_processes_train_like_one_process_with_eight_devices():
    port = _free_port()
    workers = [subprocess.Popen([sys.executable, WORKER, "multi", str(port), str(i)],
                                cwd=ROOT, env=_env(4), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for i in range(2)]
    single = subprocess.run([sys.executable, WORKER, "single"], cwd=ROOT, env=_env(8),
                            capture_output=True, text=True, timeout=300)
    outputs = []
    for w in workers:
        try:
            out, err = w.communicate(timeout=300)
        finally:
            w.kill()
        assert w.returncode == 0, err[-4000:]
        outputs.append(_report(out))
    assert single.returncode == 0, single.stderr[-4000:]
    one = _report(single.stdout)

    for i, report in enumerate(outputs):
        assert report["process_index"] == i
        assert report["process_count"] == 2
        assert report["device_count"] == 8 and report["local_device_count"] == 4
        assert report["mesh_processes"] == [0] * 4 + [1] * 4
    assert set(outputs[0]["local_ids"]).isdisjoint(outputs[1]["local_ids"])
    # Arrays over the mesh spanning both processes: each process holds its own blocks.
    for report in outputs:
        spanning = report["spanning"]
        assert spanning["addressable_shard_ids"] == report["local_ids"]
        assert spanning["fully_addressable"] is False
        for way in ("device_put", "single_device_arrays", "host_argument", "process_local",
                    "process_local_global_shape"):
            assert spanning[way] == float(np.arange(32).sum()), way
        # As in jax: a host value split across processes by jit's in_shardings is refused.
        assert "Passing non-trivial shardings for numpy inputs" in spanning["host_argument_split"]
    assert one["spanning"]["host_argument_split"] is None
    assert one["spanning"]["fully_addressable"] is True
    assert len(one["spanning"]["addressable_shard_ids"]) == 8
    # Both processes hold the same (replicated) results...
    assert outputs[0]["losses"] == outputs[1]["losses"]
    assert outputs[0]["param_sums"] == outputs[1]["param_sums"]
    # ...which are those of one process on 8 devices (the all-reduce across processes
    # may add in another order), and jax's.
    np.testing.assert_allclose(outputs[0]["losses"], one["losses"], rtol=1e-5)
    np.testing.assert_allclose(outputs[0]["param_sums"], one["param_sums"], rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(one["losses"], one["jax_losses"], rtol=1e-5)
    assert one["losses"][-1] < one["losses"][0]


def test_initialize_after_the_devices_are_in_use_is_an_error():
    fg.devices()
    with pytest.raises(RuntimeError, match="must be called before any device is used"):
        fg.distributed.initialize("localhost:1", num_processes=2, process_id=0)
