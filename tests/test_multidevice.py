"""Runs tests/multidevice in processes with 8 virtual CPU devices (the rest of the suite
keeps one: XLA fixes the device count when its backend starts).  The files are split
into groups, one process each, so that the suite's workers share them."""
import glob
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "tests", "multidevice")
GROUPS = {
    "jax_docs": ["test_jax_sharding_docs.py", "test_scaling_doc.py"],
    "shard_map": ["test_shard_map.py", "test_shard_map_partial.py", "test_shard_map_vma.py"],
}


def _files(group):
    """The group's files; "rest": every other test file of tests/multidevice."""
    if group != "rest":
        return GROUPS[group]
    grouped = {f for files in GROUPS.values() for f in files}
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(HERE, "test_*.py"))
                  if os.path.basename(p) not in grouped)


@pytest.mark.parametrize("group", [*GROUPS, "rest"])
def test_multidevice_suite_passes(group):
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
               JAX_PLATFORMS="cpu", PYTHONPATH=ROOT)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-n", "0",
         *[os.path.join(HERE, f) for f in _files(group)]],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert " passed" in result.stdout and "skipped" not in result.stdout.split("\n")[-2]


def test_groups_name_existing_files():
    assert all(os.path.exists(os.path.join(HERE, f)) for fs in GROUPS.values() for f in fs)
