"""Runs tests/multidevice in a process with 8 virtual CPU devices (the rest of the suite
keeps one: XLA fixes the device count when its backend starts)."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow
def test_multidevice_suite_passes():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
               JAX_PLATFORMS="cpu", PYTHONPATH=ROOT)
    # Set for GPU runs of the suite (tests/conftest.py); these run on CPU devices, and
    # the docs they check show jaxprs traced with the default (unset) precision.
    env.pop("JAX_DEFAULT_MATMUL_PRECISION", None)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-n", "0",
         os.path.join(ROOT, "tests", "multidevice")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert " passed" in result.stdout and "skipped" not in result.stdout.split("\n")[-2]
