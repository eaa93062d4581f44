"""Test setup: the IR type checker runs after every construction and pass."""
import os

os.environ.setdefault("FUNCGRAPH_CHECK_IR", "1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=1")

import funcgraph  # noqa: E402

funcgraph.config.update("funcgraph_check_ir", True)
