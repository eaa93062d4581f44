"""Test setup: the IR type checker runs after every construction and pass."""
import os

os.environ.setdefault("FUNCGRAPH_CHECK_IR", "1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
if os.environ["JAX_PLATFORMS"].split(",")[0] in ("cuda", "gpu", "rocm"):
    # GPUs run float32 matmuls in TF32 by default (both libraries): the suite compares
    # values at float32 precision, so it asks both for it (subprocesses inherit it).
    os.environ.setdefault("JAX_DEFAULT_MATMUL_PRECISION", "highest")

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


@pytest.fixture
def jax_op_by_op():
    """The jax oracle runs op by op (jax.disable_jit) for one test.  jax's library
    functions (jax.scipy.stats) are jitted inside: each case of a table then compiles
    whole programs of its own, which dominates the table's time.  Op by op, each primitive
    compiles once per type and is shared across the cases.  funcgraph is not affected.
    Not for tests whose jax functions loop (a while_loop then runs op by op in Python,
    slower than its compile) or that compare random bits (op by op rounds differently)."""
    with jax.disable_jit():
        yield


def _share_jax_compilations():
    """The jax oracle traces a fresh jax.jit(lambda ...) in most tests, recompiling programs
    it compiled moments before; in the test process, identical modules compile once."""
    from jax._src import compiler
    original = compiler.backend_compile_and_load
    cache = {}

    def compile_once(backend, module, executable_devices, options, host_callbacks):
        if host_callbacks:
            return original(backend, module, executable_devices, options, host_callbacks)
        # The devices themselves, in order: a program loaded for one device assignment
        # must not run on another (same module over a reordered mesh).
        key = (id(backend), str(module), tuple(d.id for d in executable_devices))
        if key not in cache:
            cache[key] = original(backend, module, executable_devices, options, host_callbacks)
        return cache[key]
    compiler.backend_compile_and_load = compile_once


_share_jax_compilations()


def pytest_runtest_setup(item):
    """Tests marked cpu_only (the NumPy eager path, CPU-specific numerics) run only when
    funcgraph's default backend is the CPU (e.g. not with JAX_PLATFORMS=cuda,cpu)."""
    if item.get_closest_marker("cpu_only") and funcgraph.default_backend() != "cpu":
        pytest.skip(f"cpu_only: the default backend is {funcgraph.default_backend()}")


def pytest_collection_modifyitems(items):
    """The slow tests run first (the 8-device suite, a 3-minute subprocess, first of all),
    so that with several workers none of them is left running alone at the end.  `make
    test` hands out whole files (--dist loadfile --no-loadscope-reorder), in the order of
    their first test here: the files with slow tests first."""
    def order(item):
        if item.nodeid.startswith("tests/test_multidevice.py"):
            return 0
        return 1 if item.get_closest_marker("slow") else 2
    items.sort(key=order)
