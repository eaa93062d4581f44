"""Helpers for comparing funcgraph with NumPy and with jax (the oracle)."""
import os
import subprocess
import sys
import textwrap

import jax
import numpy as np

import funcgraph as fg
from funcgraph import dtypes

TOLERANCES = {
    np.dtype(np.float16): 2e-2, dtypes.bfloat16: 5e-2, np.dtype(np.float32): 2e-5,
    np.dtype(np.float64): 1e-12, np.dtype(np.complex64): 2e-5, np.dtype(np.complex128): 1e-12,
}


def tolerance(dtype, scale=1.0):
    return TOLERANCES.get(np.dtype(dtype), 0) * scale


def assert_close(actual, expected, dtype=None, scale=1.0, check_dtype=True):
    """Compare values (and dtypes), with a tolerance chosen by dtype."""
    actual_np = np.asarray(actual)
    expected_np = np.asarray(expected)
    if check_dtype:
        assert actual_np.dtype == expected_np.dtype, (actual_np.dtype, expected_np.dtype)
    assert actual_np.shape == expected_np.shape, (actual_np.shape, expected_np.shape)
    dtype = dtype or expected_np.dtype
    tol = tolerance(dtype, scale)
    if actual_np.dtype.kind in "fcV" or dtype == dtypes.bfloat16:
        a = actual_np.astype(np.complex128 if actual_np.dtype.kind == "c" else np.float64)
        e = expected_np.astype(a.dtype)
        np.testing.assert_allclose(a, e, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual_np, expected_np)


def eager_and_jit(fn, *args, compiled_eager=True, **kwargs):
    """fn run eagerly (NumPy path), eagerly compiled (unless compiled_eager=False), and
    under jit."""
    eager = fn(*args, **kwargs)
    results = [eager]
    if compiled_eager:
        fg.config.update("funcgraph_eager_numpy", False)
        try:
            results.append(fn(*args, **kwargs))
        finally:
            fg.config.update("funcgraph_eager_numpy", True)
    results.append(fg.jit(lambda *a: fn(*a, **kwargs))(*args))
    return tuple(results)


def check_against_jax(fg_fn, jax_fn, *args, scale=1.0, check_dtype=True, compiled_eager=True,
                      **kwargs):
    """funcgraph's eager, compiled-eager and jitted results all match jax's.  Sweeps over
    many shapes pass compiled_eager=False: eagerly compiled, each op of each shape is a
    program of its own (most of such a sweep's time), lowered by the rule jit checks."""
    expected = jax.jit(lambda *a: jax_fn(*a, **kwargs))(*args)
    for result in eager_and_jit(fg_fn, *args, compiled_eager=compiled_eager, **kwargs):
        flat_r = fg.tree_util.tree_leaves(result)
        flat_e = jax.tree_util.tree_leaves(expected)
        assert len(flat_r) == len(flat_e)
        for r, e in zip(flat_r, flat_e):
            assert_close(r, np.asarray(e), scale=scale, check_dtype=check_dtype)


def on_cpu():
    """Whether the suite runs on the CPU (funcgraph's default backend).  There funcgraph and
    jax compile the same XLA code, so results are compared as strictly as written (often
    bit for bit); other backends (cuda) fuse and approximate differently in the last bits,
    and solvers (cuSOLVER) may pick other eigenvector phases."""
    return fg.default_backend() == "cpu"


def assert_exact_on_cpu(actual, expected, ulps=8):
    """Bit for bit on the CPU; elsewhere within `ulps` units in the last place of the
    largest magnitude of `expected` (a GPU's fused kernels round differently, and errors
    of one computation scale with its values, not with each element)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if on_cpu() or actual.dtype.kind not in "fc":
        np.testing.assert_array_equal(actual, expected)
        return
    scale = np.max(np.abs(expected), initial=0.0)
    atol = ulps * np.finfo(actual.dtype).eps * scale
    np.testing.assert_allclose(actual, expected, rtol=0, atol=atol)


def assert_float32_on_cpu_exact(value, expected, ulps=2):
    """A float32 (or its printed text) equals float32(expected) (or its text) on the CPU;
    elsewhere it is within `ulps` units in the last place (GPU sin, cos, ... round
    differently)."""
    value, expected = np.float32(value), np.float32(expected)
    if on_cpu():
        assert value == expected, (value, expected)
    else:
        assert abs(value - expected) <= ulps * np.spacing(np.abs(expected)), (value, expected)


def column_phases(got, want):
    """The unit factors (phases; signs for real vectors) by which each column of `want`
    differs from the matching column of `got` (eigen- and singular vectors are defined up
    to them, and cuSOLVER picks others than LAPACK): <got_i, want_i> / |<got_i, want_i>|."""
    inner = np.sum(np.conj(got) * want, axis=-2)
    size = np.abs(inner)
    return np.where(size > 0, inner / np.where(size > 0, size, 1), 1).astype(inner.dtype)


def assert_same(actual, expected, tol=1e-6):
    """Same dtype and shape; values equal (exactly for integers and booleans)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if actual.dtype.kind in "fc" or actual.dtype == dtypes.bfloat16:
        wide = np.complex128 if actual.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(actual.astype(wide), expected.astype(wide),
                                   rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)


def random_array(shape, dtype, seed=0, int_high=100):
    """Deterministic test data of any dtype: normal floats (and complex), booleans, and
    integers in [0, int_high)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, int_high, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def batched_arrays(specs, in_axes, size, make):
    """vmap test arguments: make(shape, kind) for each (shape, kind) spec, with a batch axis
    of `size` inserted where its in_axes entry says (none where it is None)."""
    args = []
    for (shape, kind), axis in zip(specs, in_axes):
        if axis is None:
            args.append(make(shape, kind))
        else:
            a = axis % (len(shape) + 1)
            args.append(make(shape[:a] + (size,) + shape[a:], kind))
    return args


def to_numpy_tree(tree):
    """Any pytree (funcgraph or jax leaves) with numpy leaves; funcgraph's Array is a
    leaf to jax's tree_util, so jax's structure compares the two frameworks' outputs."""
    return jax.tree_util.tree_map(np.asarray, tree)


def assert_trees_close(got, want, tol=1e-4):
    """Same tree structure, shapes and dtypes; values close (exact for integers)."""
    got, want = to_numpy_tree(got), to_numpy_tree(want)
    got_tree = jax.tree_util.tree_structure(got)
    want_tree = jax.tree_util.tree_structure(want)
    assert got_tree == want_tree, f"output structure {got_tree} != jax's {want_tree}"
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        if g.dtype.kind in "fc":
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(g, w)


def run_under_jax_and_alias(script, tmp_path, cwd=None):
    """(stdout under the real jax, stdout under funcgraph's alias, `python -m funcgraph
    run`) of a script (dedented), run in cwd (default: the repository root); each run
    must succeed."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(script))
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=root)
    env.pop("FUNCGRAPH_AS_JAX", None)
    outs = []
    for runner in ([], ["-m", "funcgraph", "run"]):
        done = subprocess.run([sys.executable, *runner, str(path)], capture_output=True,
                              text=True, env=env, cwd=cwd or root, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        outs.append(done.stdout)
    return outs
