"""funcgraph.numpy.linalg, the cholesky / triangular_solve primitives and
funcgraph.scipy.linalg: values against NumPy and jax, eagerly and under jit,
derivatives against jax and finite differences, batching and vmap."""
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
import funcgraph.numpy.linalg as la
import funcgraph.scipy.linalg as fsl
from funcgraph.lax import linalg as flax_linalg
from funcgraph.numpy import _lu as _lu_module
from funcgraph.test_util import check_grads
from tests.util import assert_exact_on_cpu




def _rng(seed=0):
    return np.random.default_rng(seed)


def _general(shape, dtype=np.float32, seed=0):
    """Well-conditioned square matrices (diagonally shifted)."""
    a = _rng(seed).standard_normal(shape)
    return (a + 2 * np.eye(shape[-1]) * np.sqrt(shape[-1])).astype(dtype)


def _spd(shape, dtype=np.float32, seed=0):
    a = _rng(seed).standard_normal(shape)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _sym(shape, dtype=np.float32, seed=0):
    a = _rng(seed).standard_normal(shape)
    return (a + np.swapaxes(a, -1, -2)).astype(dtype)


def _mT(x):
    return np.swapaxes(x, -1, -2)


def _eager_and_jit(fn, *args):
    return [fn(*args), fg.jit(fn)(*args)]


def _np(tree):
    return jax.tree_util.tree_map(np.asarray, tuple(tree) if isinstance(tree, tuple) else tree)


def _rel(actual, expected):
    expected = np.asarray(expected, np.float64)
    return np.abs(np.asarray(actual, np.float64) - expected).max() / max(np.abs(expected).max(), 1)


# --- values -----------------------------------------------------------------------

SQUARE_SHAPES = [(1, 1), (4, 4), (2, 1, 5, 5)]


@pytest.mark.parametrize("shape", SQUARE_SHAPES)
def test_cholesky_values(shape):
    a = _spd(shape)
    expected = np.linalg.cholesky(a.astype(np.float64))
    for out in _eager_and_jit(la.cholesky, a):
        assert out.dtype == np.float32 and out.shape == shape
        assert _rel(out, expected) < 1e-5
    upper = la.cholesky(a, upper=True)
    assert _rel(upper, _mT(expected)) < 1e-5


def test_cholesky_not_positive_definite_is_nan():
    a = -np.eye(3, dtype=np.float32)
    for out in _eager_and_jit(la.cholesky, a):
        assert np.isnan(np.asarray(out)).any()


@pytest.mark.parametrize("shape,bshape", [((3, 3), (3,)), ((4, 4), (4, 2)), ((2, 5, 5), (2, 5, 3)),
                                          ((2, 4, 4), (4, 1)), ((4, 4), (3, 4, 2))])
def test_solve_values(shape, bshape):
    a = _general(shape)
    b = _rng(1).standard_normal(bshape).astype(np.float32)
    expected = np.linalg.solve(a.astype(np.float64), b) if len(bshape) != 1 else np.linalg.solve(a.astype(np.float64), b)
    for out in _eager_and_jit(la.solve, a, b):
        assert out.shape == expected.shape and out.dtype == np.float32
        assert _rel(out, expected) < 1e-5


def test_solve_needs_pivoting():
    a = np.array([[0., 1., 2.], [1., 0., 3.], [4., -3., 8.]], np.float32)
    b = np.array([1., 2., 3.], np.float32)
    for out in _eager_and_jit(la.solve, a, b):
        assert _rel(out, np.linalg.solve(a, b)) < 1e-5


@pytest.mark.parametrize("shape", SQUARE_SHAPES)
def test_inv_det_slogdet_values(shape):
    a = _general(shape) * np.float32(0.5)
    a = a.copy()
    a[..., [0, -1], :] = a[..., [-1, 0], :]  # a row swap: negative determinants too
    a64 = a.astype(np.float64)
    for out in _eager_and_jit(la.inv, a):
        assert _rel(out, np.linalg.inv(a64)) < 1e-5
    for out in _eager_and_jit(la.det, a):
        assert out.shape == shape[:-2]
        np.testing.assert_allclose(out, np.linalg.det(a64), rtol=1e-5)
    sign, logabs = np.linalg.slogdet(a64)
    for out in _eager_and_jit(la.slogdet, a):
        np.testing.assert_array_equal(out.sign, sign)
        np.testing.assert_allclose(out.logabsdet, logabs, rtol=1e-5, atol=1e-5)


def test_det_singular_is_zero():
    a = np.array([[1., 2.], [2., 4.]], np.float32)
    for out in _eager_and_jit(la.det, a):
        assert float(out) == 0.0
    with np.errstate(divide="ignore"):
        assert float(la.slogdet(a).logabsdet) == -np.inf


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 6, 4)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_values(shape, mode):
    a = _rng(2).standard_normal(shape).astype(np.float32)
    eq, er = np.linalg.qr(a.astype(np.float64), mode=mode)
    for q, r in _eager_and_jit(lambda x: la.qr(x, mode=mode), a):
        assert q.shape == eq.shape and r.shape == er.shape
        # Householder with LAPACK's sign convention: equal to NumPy's factors.
        assert _rel(q, eq) < 1e-5 and _rel(r, er) < 1e-5
        assert np.allclose(np.triu(np.asarray(r)), r)
    assert _rel(la.qr(a, mode="r"), er if mode == "reduced" else np.linalg.qr(a, mode="r")) < 1e-5


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (8, 8), (2, 7, 7)])
def test_eigh_values(shape):
    s = _sym(shape)
    expected = np.linalg.eigvalsh(s.astype(np.float64))
    for w, v in _eager_and_jit(la.eigh, s):
        w, v = np.asarray(w), np.asarray(v)
        assert w.shape == shape[:-1] and v.shape == shape
        assert _rel(w, expected) < 1e-5
        assert _rel((v * w[..., None, :]) @ _mT(v), s) < 1e-5
        assert np.abs(_mT(v) @ v - np.eye(shape[-1])).max() < 1e-5
    np.testing.assert_allclose(la.eigvalsh(s), expected, rtol=1e-4, atol=1e-5)


def test_eigh_uses_lower_triangle_without_symmetrize():
    s = _sym((4, 4))
    junk = s + np.triu(np.ones((4, 4), np.float32), 1) * 5
    w = la.eigh(junk, symmetrize_input=False).eigenvalues
    np.testing.assert_allclose(w, np.linalg.eigvalsh(s), rtol=1e-5, atol=1e-5)


def test_eigh_repeated_eigenvalues():
    q, _ = np.linalg.qr(_rng(3).standard_normal((5, 5)))
    s = (q * np.array([1., 1., 2., 2., 2.])) @ q.T
    w, v = _np(la.eigh(s.astype(np.float32)))
    np.testing.assert_allclose(w, [1, 1, 2, 2, 2], atol=1e-5)
    assert _rel((v * w) @ v.T, s) < 1e-5


@pytest.mark.parametrize("shape,full_matrices", [((1, 1), True), ((4, 4), False), ((6, 3), True),
                                                  ((3, 6), False), ((2, 5, 3), False),
                                                  ((2, 3, 7), True)])
def test_svd_values(shape, full_matrices):
    a = _rng(4).standard_normal(shape).astype(np.float32)
    m, n = shape[-2:]
    k = min(m, n)
    expected = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    for u, s, vh in _eager_and_jit(lambda x: la.svd(x, full_matrices=full_matrices), a):
        u, s, vh = np.asarray(u), np.asarray(s), np.asarray(vh)
        assert u.shape == shape[:-2] + ((m, m) if full_matrices else (m, k))
        assert vh.shape == shape[:-2] + ((n, n) if full_matrices else (k, n))
        assert _rel(s, expected) < 1e-5
        assert _rel((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a) < 1e-5
        assert np.abs(_mT(u) @ u - np.eye(u.shape[-1])).max() < 1e-5
        assert np.abs(vh @ _mT(vh) - np.eye(vh.shape[-2])).max() < 1e-5
    assert _rel(la.svd(a, compute_uv=False), expected) < 1e-5


def test_svd_rank_deficient_gives_orthonormal_u():
    a = np.outer(np.arange(1., 6.), [1., -2., 0.5]).astype(np.float32)
    u, s, vh = _np(la.svd(a, full_matrices=False))
    np.testing.assert_allclose(s[1:], 0, atol=1e-5)
    assert np.abs(u.T @ u - np.eye(3)).max() < 1e-5
    assert _rel((u * s) @ vh, a) < 1e-5
    assert int(la.matrix_rank(a)) == 1
    assert _rel(la.pinv(a), np.linalg.pinv(a)) < 1e-4


@pytest.mark.parametrize("n", [16, 33])
def test_larger_float32_accuracy(n):
    s = _sym((n, n), seed=5)
    w, v = _np(la.eigh(s))
    assert _rel(w, np.linalg.eigvalsh(s.astype(np.float64))) < 2e-5
    assert np.abs(v.T @ v - np.eye(n)).max() < 2e-5
    a = _rng(6).standard_normal((n + 3, n)).astype(np.float32)
    u, sv, vh = _np(la.svd(a, full_matrices=False))
    assert _rel(sv, np.linalg.svd(a.astype(np.float64), compute_uv=False)) < 2e-5
    assert _rel((u * sv) @ vh, a) < 2e-5


def test_integer_input_is_promoted():
    a = np.array([[2, 1], [1, 3]], np.int32)
    assert la.det(a).dtype == np.float32
    np.testing.assert_allclose(la.det(a), 5.0, rtol=1e-6)
    np.testing.assert_allclose(la.inv(a), np.linalg.inv(a), rtol=1e-6)


# --- primitives and scipy.linalg -------------------------------------------------------

@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
def test_triangular_solve_against_jax(left_side, lower, transpose_a, unit_diagonal):
    a = _general((2, 4, 4))
    b = _rng(7).standard_normal((2, 4, 3) if left_side else (2, 3, 4)).astype(np.float32)
    kw = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
              unit_diagonal=unit_diagonal)
    expected = jax.lax.linalg.triangular_solve(a, b, **kw)
    for out in _eager_and_jit(lambda x, y: flax_linalg.triangular_solve(x, y, **kw), a, b):
        assert _rel(out, expected) < 1e-5


def test_lowering_is_lapack_on_the_cpu_and_plain_stablehlo_elsewhere():
    a = _spd((3, 3))
    on_cpu = fg.default_backend() == "cpu"
    cholesky_text = fg.jit(la.cholesky).lower(a).as_text()
    assert ("lapack_spotrf_ffi" in cholesky_text) == on_cpu
    solve_text = fg.jit(la.solve).lower(a, a).as_text()
    assert ("lapack_sgetrf_ffi" in solve_text and "lapack_strsm_ffi" in solve_text) == on_cpu
    assert ("lapack_ssyevd_ffi" in fg.jit(la.eigh).lower(a).as_text()) == on_cpu
    assert ("lapack_sgesdd_ffi" in fg.jit(la.svd).lower(a).as_text()) == on_cpu
    assert ("lapack_sgeev_ffi" in fg.jit(la.eig).lower(a).as_text()) == on_cpu
    assert ("lapack_sgees_ffi" in fg.jit(fsl.schur).lower(a).as_text()) == on_cpu
    qr_text = fg.jit(la.qr).lower(a).as_text()
    assert ("lapack_sgeqrf_ffi" in qr_text and "lapack_sorgqr_ffi" in qr_text) == on_cpu
    # Off the CPU: XLA's cholesky and triangular_solve, LU and eigh loops of plain ops.
    for fn, op in ((la.cholesky, "stablehlo.cholesky"), (la.solve, "stablehlo.triangular_solve"),
                   (la.eigh, "stablehlo.while"), (la.qr, "stablehlo.while"),
                   (la.svd, "stablehlo.while")):
        exported = fg.export.export(fg.jit(fn), platforms=["cuda"])(*[a] * (1 + (fn is la.solve)))
        assert "custom_call" not in exported.mlir_module()
        assert op in exported.mlir_module()
    # The portable eigh, svd and qr (used off the CPU backend) are plain StableHLO loops.
    for fn in (la._eigh_jacobi, la._svd_tall, la._householder):
        assert "custom_call" not in fg.jit(fn).lower(a).as_text()


# --- lu: LAPACK's getrf on the CPU (as jax), a loop elsewhere ---------------------------

LU_CASES = [((4, 4), np.float32), ((2, 3, 5), np.float64), ((5, 3), np.complex64),
            ((2, 4, 4), np.complex128), ((1, 0, 3), np.float32)]


def _lu_input(shape, dtype, seed=0):
    x = _rng(seed).standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * _rng(seed + 1).standard_normal(shape)
    return x.astype(dtype)


@pytest.mark.parametrize("shape,dtype", LU_CASES)
def test_lu_gives_jaxs_bits_eagerly_and_under_jit(x64, shape, dtype):
    x = _lu_input(shape, dtype)
    expected = jax.lax.linalg.lu(x)
    for got in (flax_linalg.lu(x), fg.jit(flax_linalg.lu)(x)):
        for g, e in zip(got, expected, strict=True):
            assert_exact_on_cpu(np.asarray(g), np.asarray(e))


def test_lu_of_a_singular_matrix_keeps_its_factors():
    x = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], np.float32)
    expected = jax.lax.linalg.lu(x)
    for got in (flax_linalg.lu(x), fg.jit(flax_linalg.lu)(x)):
        assert not np.isnan(np.asarray(got[0])).any()
        for g, e in zip(got, expected, strict=True):
            assert_exact_on_cpu(np.asarray(g), np.asarray(e))


@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3), (3, 5)])
def test_lu_jvp_and_vmap_match_jax(shape):
    x = _lu_input(shape, np.float32, seed=3)
    t = _lu_input(shape, np.float32, seed=4)
    (out, dout), (jout, jdout) = (fg.jvp(flax_linalg.lu, (x,), (t,)),
                                  jax.jvp(jax.lax.linalg.lu, (x,), (t,)))
    np.testing.assert_allclose(np.asarray(out[0]), np.asarray(jout[0]), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(dout[0]), np.asarray(jdout[0]), rtol=2e-4,
                               atol=2e-4)
    assert np.asarray(dout[1]).dtype == jax.dtypes.float0
    stacked = np.stack([x, 2 * x + 1])
    batched = fg.vmap(flax_linalg.lu, in_axes=1, out_axes=1)(np.moveaxis(stacked, 0, 1))
    expected = jax.vmap(jax.lax.linalg.lu, in_axes=1, out_axes=1)(np.moveaxis(stacked, 0, 1))
    for g, e in zip(batched, expected, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-5, atol=1e-5)


def test_lu_gradients_by_finite_differences(x64):
    x = _lu_input((4, 4), np.float64, seed=5)
    check_grads(lambda a: flax_linalg.lu(a)[0], (x,), order=2, modes=["fwd", "rev"])
    solve_x = fg.grad(lambda a: fnp.sum(la.solve(a, np.ones(4)) ** 2))(x)
    solve_j = jax.grad(lambda a: jnp.sum(jnp.linalg.solve(a, np.ones(4)) ** 2))(x)
    np.testing.assert_allclose(np.asarray(solve_x), np.asarray(solve_j), rtol=1e-10)


@pytest.mark.parametrize("shape,dtype", [((5, 5), np.float32), ((2, 4, 6), np.float32),
                                         ((6, 4), np.float16)])
def test_portable_lu_loop_factors_the_matrix(shape, dtype):
    """The loop that runs off the CPU (and for float16): P a = L U with jax's pivots."""
    x = _lu_input(shape, np.float32, seed=6)
    lu, pivots, perm = fg.jit(_lu_module._lu_loop)(x.astype(dtype))
    _, jax_pivots, jax_perm = jax.lax.linalg.lu(x)
    np.testing.assert_array_equal(np.asarray(pivots), np.asarray(jax_pivots))
    np.testing.assert_array_equal(np.asarray(perm), np.asarray(jax_perm))
    k = min(shape[-2:])
    lu = np.asarray(lu, np.float64)
    l = np.tril(lu[..., :, :k], -1) + np.eye(shape[-2], k)
    u = np.triu(lu[..., :k, :])
    permuted = np.take_along_axis(x.astype(dtype).astype(np.float64),
                                  np.asarray(perm)[..., None], axis=-2)
    np.testing.assert_allclose(l @ u, permuted, atol=2e-2 if dtype == np.float16 else 1e-5)


def test_float16_lu_runs_the_loop_eagerly_and_under_jit():
    x = _lu_input((4, 4), np.float16, seed=7)
    eager, jitted = flax_linalg.lu(x), fg.jit(flax_linalg.lu)(x)
    for e, j in zip(eager, jitted, strict=True):
        np.testing.assert_array_equal(np.asarray(e), np.asarray(j))
    assert np.asarray(eager[0]).dtype == np.float16


@pytest.mark.cpu_only
def test_exported_lu_runs_in_a_fresh_process(tmp_path):
    """A deserialized module that calls LAPACK compiles and runs in a process that never
    lowered lu itself (the backend readies jaxlib's LAPACK kernels for it)."""
    x = _lu_input((3, 3), np.float32, seed=8)
    exported = fg.export.export(fg.jit(flax_linalg.lu))(x)
    assert "lapack_sgetrf_ffi" in exported.mlir_module()
    (tmp_path / "lu.bin").write_bytes(exported.serialize())
    np.save(tmp_path / "x.npy", x)
    script = (f"import numpy as np, funcgraph as fg\n"
              f"exp = fg.export.deserialize(open({str(tmp_path / 'lu.bin')!r}, 'rb').read())\n"
              f"out = exp.call(np.load({str(tmp_path / 'x.npy')!r}))\n"
              f"np.save({str(tmp_path / 'out.npy')!r}, np.asarray(out[0]))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"),
                                  np.asarray(jax.lax.linalg.lu(x)[0]))


def test_cholesky_of_a_matrix_not_positive_definite_is_nan_as_jaxs():
    x = np.stack([_spd((4, 4)), np.diag([1.0, -1.0, 2.0, 3.0]).astype(np.float32)])
    expected = np.asarray(jax.lax.linalg.cholesky(x))
    assert np.isnan(np.tril(expected[1])[np.tril_indices(4)]).all()
    assert not np.isnan(expected[0]).any()
    for got in (flax_linalg.cholesky(x), fg.jit(flax_linalg.cholesky)(x)):
        assert_exact_on_cpu(np.asarray(got), expected)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_eigh_bits_derivatives_and_batching_match_jax(dtype):
    x = _lu_input((3, 4, 4), dtype, seed=9)
    x = x + np.conj(np.swapaxes(x, -1, -2))
    t = _lu_input((3, 4, 4), dtype, seed=10)
    t = t + np.conj(np.swapaxes(t, -1, -2))
    expected = jax.lax.linalg.eigh(x)
    for got in (flax_linalg.eigh(x), fg.jit(flax_linalg.eigh)(x),
                fg.vmap(flax_linalg.eigh)(x)):
        for g, e in zip(got, expected, strict=True):
            assert_exact_on_cpu(np.asarray(g), np.asarray(e))
    _, (dv, dw) = fg.jvp(flax_linalg.eigh, (x,), (t,))
    _, (jdv, jdw) = jax.jvp(jax.lax.linalg.eigh, (x,), (t,))
    np.testing.assert_allclose(np.asarray(dw), np.asarray(jdw), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(dv), np.asarray(jdv), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("shape,dtype", [((3, 5, 3), np.float32), ((4, 4), np.complex64)])
def test_qr_bits_derivatives_and_batching_match_jax(shape, dtype):
    x = _lu_input(shape, dtype, seed=11)
    t = _lu_input(shape, dtype, seed=12)
    for full in (False, True):
        expected = jax.lax.linalg.qr(x, full_matrices=full)
        f = lambda a: flax_linalg.qr(a, full_matrices=full)
        for got in (f(x), fg.jit(f)(x), fg.vmap(f)(x) if len(shape) == 3 else f(x)):
            for g, e in zip(got, expected, strict=True):
                assert_exact_on_cpu(np.asarray(g), np.asarray(e))
    _, dout = fg.jvp(lambda a: flax_linalg.qr(a, full_matrices=False), (x,), (t,))
    _, jdout = jax.jvp(lambda a: jax.lax.linalg.qr(a, full_matrices=False), (x,), (t,))
    for g, e in zip(dout, jdout, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("shape,dtype", [((3, 5, 3), np.float32), ((4, 4), np.complex64)])
def test_svd_bits_derivatives_and_batching_match_jax(shape, dtype):
    x = _lu_input(shape, dtype, seed=13)
    t = _lu_input(shape, dtype, seed=14)
    for options in (dict(full_matrices=True), dict(full_matrices=False),
                    dict(compute_uv=False)):
        expected = jax.lax.linalg.svd(x, **options)
        f = lambda a: flax_linalg.svd(a, **options)
        for got in (f(x), fg.jit(f)(x), fg.vmap(f)(x) if len(shape) == 3 else f(x)):
            for g, e in zip(fg.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(expected),
                            strict=True):
                assert_exact_on_cpu(np.asarray(g), np.asarray(e))
    _, ds = fg.jvp(lambda a: flax_linalg.svd(a, compute_uv=False), (x,), (t,))
    _, jds = jax.jvp(lambda a: jax.lax.linalg.svd(a, compute_uv=False), (x,), (t,))
    np.testing.assert_allclose(np.asarray(ds), np.asarray(jds), rtol=2e-4, atol=2e-4)
    if dtype == np.float32:
        _, dout = fg.jvp(lambda a: flax_linalg.svd(a, full_matrices=False), (x,), (t,))
        _, jdout = jax.jvp(lambda a: jax.lax.linalg.svd(a, full_matrices=False), (x,), (t,))
        for g, e in zip(dout, jdout, strict=True):
            np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_eig_bits_left_vectors_and_eigenvalue_derivatives_match_jax(dtype):
    x = _lu_input((2, 4, 4), dtype, seed=15)
    t = _lu_input((2, 4, 4), dtype, seed=16)
    expected = jax.lax.linalg.eig(x)
    for got in (flax_linalg.eig(x), fg.jit(flax_linalg.eig)(x), fg.vmap(flax_linalg.eig)(x)):
        for g, e in zip(got, expected, strict=True):
            assert_exact_on_cpu(np.asarray(g), np.asarray(e))
    _, dw = fg.jvp(fnp.linalg.eigvals, (x,), (t,))
    _, jdw = jax.jvp(jnp.linalg.eigvals, (x,), (t,))
    np.testing.assert_allclose(np.asarray(dw), np.asarray(jdw), rtol=1e-3, atol=1e-3)
    with pytest.raises(NotImplementedError, match="eigenvectors"):
        fg.jvp(fnp.linalg.eig, (x,), (t,))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_schur_bits_and_batching_match_jax(dtype):
    x = _lu_input((2, 4, 4), dtype, seed=17)
    for vectors in (True, False):
        expected = jax.lax.linalg.schur(x, compute_schur_vectors=vectors)
        f = lambda a: flax_linalg.schur(a, compute_schur_vectors=vectors)
        for got in (f(x), fg.jit(f)(x), fg.vmap(f)(x)):
            for g, e in zip(got, expected, strict=True):
                assert_exact_on_cpu(np.asarray(g), np.asarray(e))
    for output in ("real", "complex"):
        for g, e in zip(fsl.schur(x[0], output=output), jax.scipy.linalg.schur(x[0], output),
                        strict=True):
            assert_exact_on_cpu(np.asarray(g), np.asarray(e))


def test_lu_errors_are_jaxs():
    with pytest.raises(TypeError, match=r"Input 0 to lu must have rank at least 2, but got "
                                        r"shape=\(3,\)"):
        flax_linalg.lu(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="lu does not accept"):
        flax_linalg.lu(np.ones((2, 2), np.int32))


@pytest.mark.parametrize("shape", [(4, 4), (5, 3)])
def test_portable_factorizations_match_numpy(shape):
    """The Jacobi eigh and SVD and the Householder QR that run off the CPU backend (on CPU
    LAPACK runs on the host, as in JAX) reconstruct their input with the right spectra."""
    x = _rng(1).standard_normal(shape).astype(np.float32)
    sym = _spd((4, 4))
    w, v = la._sort_columns(*la._eigh_jacobi(sym))
    np.testing.assert_allclose(w, np.linalg.eigvalsh(sym.astype(np.float64)), rtol=1e-4,
                               atol=1e-4)
    assert _rel(np.asarray(v) @ np.diag(w) @ np.asarray(v).T, sym) < 1e-5
    u, s, vm = la._svd_tall(x)
    k = s.shape[-1]
    np.testing.assert_allclose(s, np.linalg.svd(x.astype(np.float64), compute_uv=False),
                               rtol=1e-4, atol=1e-5)
    assert _rel(np.asarray(u)[:, :k] * np.asarray(s) @ np.asarray(vm).T, x) < 1e-5
    q, r = la._householder(x)
    assert _rel(np.asarray(q) @ np.asarray(r), x) < 1e-5
    np.testing.assert_allclose(np.asarray(q).T @ np.asarray(q), np.eye(shape[0]), atol=1e-5)


@pytest.mark.parametrize("trans", [0, 1])
@pytest.mark.parametrize("lower", [True, False])
def test_scipy_solve_triangular(trans, lower):
    import jax.scipy.linalg as jsl
    a = _general((4, 4))
    for b in (_rng(8).standard_normal((4,)).astype(np.float32),
              _rng(8).standard_normal((4, 2)).astype(np.float32)):
        expected = jsl.solve_triangular(a, b, trans=trans, lower=lower)
        out = fsl.solve_triangular(a, b, trans=trans, lower=lower)
        assert out.shape == expected.shape
        assert _rel(out, expected) < 1e-5


def test_scipy_cho_solve():
    a = _spd((4, 4))
    b = _rng(9).standard_normal((4, 2)).astype(np.float32)
    c = fsl.cho_factor(a, lower=True)
    assert _rel(fsl.cho_solve(c, b), np.linalg.solve(a.astype(np.float64), b)) < 1e-5
    assert _rel(fsl.cholesky(a, lower=False), _mT(np.linalg.cholesky(a))) < 1e-5


def test_errors():
    with pytest.raises(ValueError, match=r"square matrices \(\.\.\., n, n\)"):
        la.inv(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="matrices"):
        la.svd(np.ones((3,), np.float32))
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'm': 2 vs 3"):
        la.solve(np.eye(3, dtype=np.float32), np.ones((2,), np.float32))
    with pytest.raises(ValueError, match=r"Invalid shapes for solve: \(2, 3, 3\), \(2, 3\)"):
        la.solve(np.ones((2, 3, 3), np.float32), np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match=r"triangular_solve .*f32\[3,3\].*f32\[2,2\]"):
        flax_linalg.triangular_solve(fnp.eye(3), fnp.eye(2), left_side=True)
    with pytest.raises(ValueError, match="mode"):
        la.qr(np.eye(2, dtype=np.float32), mode="economic")


# --- derivatives against jax (float64) -----------------------------------------------

def _eigh_loss(lib):
    def loss(x):
        w, v = lib.linalg.eigh(x)
        weights = lib.arange(1.0, x.shape[-1] + 1.0)
        # v enters through v v^T per column, which does not depend on each column's sign.
        return lib.sum(w * weights) + lib.sum(lib.sin(v * v) * x)
    return loss


def _svd_loss(lib, full_matrices):
    def loss(x):
        u, s, vh = lib.linalg.svd(x, full_matrices=full_matrices)
        k = s.shape[-1]
        return (lib.sum(s * lib.arange(1.0, k + 1.0)) + lib.sum(lib.cos(u[..., :, :k] ** 2))
                + lib.sum((vh[..., :k, :] ** 2) * lib.arange(1.0, x.shape[-1] + 1.0)))
    return loss


def _qr_loss(lib, mode):
    def loss(x):
        q, r = lib.linalg.qr(x, mode=mode)
        return lib.sum(lib.sin(q)) + lib.sum(r * r * 0.3) + lib.sum(r)
    return loss


def _solve_loss(lib):
    def loss(a, b):
        return lib.sum(lib.sin(lib.linalg.solve(a, b)))
    return loss


GRAD_CASES = [
    ("cholesky", lambda lib: lambda x: lib.sum(lib.sin(lib.linalg.cholesky(x))), "spd", (4, 4)),
    ("cholesky_batched", lambda lib: lambda x: lib.sum(lib.linalg.cholesky(x) ** 3), "spd",
     (2, 3, 3)),
    ("inv", lambda lib: lambda x: lib.sum(lib.sin(lib.linalg.inv(x))), "general", (4, 4)),
    ("det", lambda lib: lambda x: lib.sum(lib.linalg.det(x)), "general", (2, 3, 3)),
    ("slogdet", lambda lib: lambda x: lib.sum(lib.linalg.slogdet(x)[1]), "general", (4, 4)),
    ("eigh", _eigh_loss, "sym", (4, 4)),
    ("eigh_batched", _eigh_loss, "sym", (2, 3, 3)),
    ("svd_square", lambda lib: _svd_loss(lib, True), "rect", (4, 4)),
    ("svd_tall", lambda lib: _svd_loss(lib, False), "rect", (5, 3)),
    ("svd_wide", lambda lib: _svd_loss(lib, False), "rect", (3, 5)),
    ("svdvals", lambda lib: lambda x: lib.sum(lib.linalg.svd(x, compute_uv=False) ** 2), "rect",
     (4, 3)),
    ("qr_square", lambda lib: _qr_loss(lib, "reduced"), "rect", (4, 4)),
    ("qr_tall", lambda lib: _qr_loss(lib, "reduced"), "rect", (5, 3)),
    ("qr_complete_square", lambda lib: _qr_loss(lib, "complete"), "rect", (3, 3)),
]

_MAKERS = {"spd": _spd, "general": _general, "sym": _sym,
           "rect": lambda shape, dtype, seed: _rng(seed).standard_normal(shape).astype(dtype)}


@pytest.mark.parametrize("name,make_loss,kind,shape", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_grad_against_jax(x64, name, make_loss, kind, shape):
    x = _MAKERS[kind](shape, np.float64, 11)
    expected = jax.grad(make_loss(jnp))(x)
    got = fg.grad(make_loss(fnp))(x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-8)
    check_grads(make_loss(fnp), (x,), order=1)


def test_solve_grad_against_jax(x64):
    a = _general((3, 3), np.float64, 12)
    b = _rng(13).standard_normal((3, 2))
    expected = jax.grad(_solve_loss(jnp), argnums=(0, 1))(a, b)
    got = fg.grad(_solve_loss(fnp), argnums=(0, 1))(a, b)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-8, atol=1e-10)
    check_grads(_solve_loss(fnp), (a, b), order=1)
    check_grads(lambda a, b: fnp.linalg.solve(a, b), (a, b[:, 0]), order=1)


def test_triangular_solve_grads(x64):
    a = _general((3, 3), np.float64, 14)
    b = _rng(15).standard_normal((3, 2))
    for kw in (dict(left_side=True, lower=True), dict(left_side=False, lower=False,
                                                      transpose_a=True, unit_diagonal=True)):
        bb = b if kw["left_side"] else b.T
        check_grads(lambda x, y: flax_linalg.triangular_solve(x, y, **kw), (a, bb), order=1)
        expected = jax.grad(lambda x, y: jnp.sum(jnp.sin(jax.lax.linalg.triangular_solve(
            x, y, **kw))), argnums=(0, 1))(a, bb)
        got = fg.grad(lambda x, y: fnp.sum(fnp.sin(flax_linalg.triangular_solve(
            x, y, **kw))), argnums=(0, 1))(a, bb)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-8, atol=1e-10)


def test_grad_under_jit(x64):
    x = _sym((3, 3), np.float64, 16)
    expected = jax.grad(_eigh_loss(jnp))(x)
    got = fg.jit(fg.grad(_eigh_loss(fnp)))(x)
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-8)
    a = _general((3, 3), np.float64, 17)
    np.testing.assert_allclose(fg.jit(fg.grad(lambda y: fnp.linalg.det(y)))(a),
                               jax.grad(jnp.linalg.det)(a), rtol=1e-8)


def test_jvp_of_eigenvalues_against_jax(x64):
    x = _sym((4, 4), np.float64, 18)
    t = _sym((4, 4), np.float64, 19)
    _, expected = jax.jvp(lambda y: jnp.linalg.eigh(y)[0], (x,), (t,))
    _, got = fg.jvp(lambda y: fnp.linalg.eigh(y).eigenvalues, (x,), (t,))
    np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-10)


def test_complete_derivatives_not_implemented():
    with pytest.raises(NotImplementedError, match="full_matrices=False"):
        fg.grad(lambda x: fnp.sum(fnp.linalg.svd(x)[0]))(np.ones((3, 2), np.float32))


# --- vmap --------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda x: la.det(x), lambda x: la.inv(x), lambda x: la.cholesky(x @ x.T + 3 * fnp.eye(3)),
    lambda x: la.eigh(x + x.T).eigenvalues, lambda x: la.svd(x, compute_uv=False),
    lambda x: la.qr(x).R, lambda x: la.solve(x, x[0]), lambda x: la.slogdet(x).logabsdet,
], ids=["det", "inv", "cholesky", "eigvalsh", "svdvals", "qr", "solve", "slogdet"])
def test_vmap_matches_batched(fn):
    xs = _general((3, 3, 3), seed=20)
    out = fg.vmap(fn)(xs)
    expected = np.stack([np.asarray(fn(x)) for x in xs])
    np.testing.assert_allclose(out, expected, rtol=2e-5, atol=2e-5)


def test_vmap_of_grad(x64):
    xs = _general((2, 3, 3), np.float64, 21)
    got = fg.vmap(fg.grad(lambda x: fnp.linalg.slogdet(x)[1]))(xs)
    expected = jax.vmap(jax.grad(lambda x: jnp.linalg.slogdet(x)[1]))(xs)
    np.testing.assert_allclose(got, expected, rtol=1e-8)


# --- det and slogdet as jax computes them ------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 5), (1, 1), (0, 0), (3, 0, 0)])
def test_det_and_slogdet_give_jaxs_bits(x64, dtype, shape):
    """slogdet's sign from the parity of the row swaps and the negative pivots (complex:
    their phases), det = sign * exp(log|det|) beyond 3 x 3; eager and under jit."""
    x = _lu_input(shape, dtype, seed=3)
    for fn, jax_fn in ((la.det, jnp.linalg.det), (la.slogdet, jnp.linalg.slogdet)):
        expected = jax_fn(x)
        for got in (fn(x), fg.jit(fn)(x)):
            for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(expected),
                            strict=True):
                assert_exact_on_cpu(np.asarray(g), np.asarray(e))


def test_slogdet_of_singular_and_nan_matrices_is_jaxs():
    for x in (np.zeros((4, 4), np.float32), np.full((4, 4), np.nan, np.float32)):
        for g, e in zip(la.slogdet(x), jnp.linalg.slogdet(x), strict=True):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(e))


@pytest.mark.parametrize("rank", [3, 2, 0])
def test_det_gradient_of_a_singular_matrix_is_the_adjugate_as_jaxs(x64, rank):
    """d det / da = adj(a)^T, finite where a is singular: rank n - 1 gives a rank-one
    adjugate, lower ranks zero (jax's cofactor solve; a / det(a) would be NaN)."""
    rng = _rng(4)
    a = rng.standard_normal((4, rank)) @ rng.standard_normal((rank, 4))
    got = fg.grad(la.det)(a)
    expected = jax.grad(jnp.linalg.det)(a)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    if rank == 3:
        assert np.abs(np.asarray(got)).max() > 1e-3
    _, tangent = fg.jvp(la.det, (a,), (np.ones_like(a),))
    np.testing.assert_allclose(tangent, jax.jvp(jnp.linalg.det, (a,), (np.ones_like(a),))[1],
                               rtol=1e-10, atol=1e-12)
