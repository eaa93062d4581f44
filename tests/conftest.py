"""Test setup: the IR type checker runs after every construction and pass."""
import os

os.environ.setdefault("FUNCGRAPH_CHECK_IR", "1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=1")

import funcgraph  # noqa: E402

funcgraph.config.update("funcgraph_check_ir", True)


import jax  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture
def x64():
    """64-bit types on in both funcgraph and jax (the oracle) for one test."""
    saved = funcgraph.config.jax_enable_x64, jax.config.read("jax_enable_x64")
    funcgraph.config.update("jax_enable_x64", True)
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        funcgraph.config.update("jax_enable_x64", saved[0])
        jax.config.update("jax_enable_x64", saved[1])
