"""The Householder primitives (geqrf, householder_product, ormqr, hessenberg, tridiagonal)
and tridiagonal_solve: jax's bits eagerly and under jit (LAPACK on the CPU), batching,
empty and singular inputs, jax's errors, tridiagonal_solve's derivatives, the loops that
run off the CPU, and the scipy.linalg functions built on them (hessenberg, qr_multiply)."""
import jax
import jax._src.lax.linalg as jax_linalg_internal
import jax.scipy.linalg as jsl
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.scipy.linalg as fsl
from funcgraph.lax import linalg as flinalg
from funcgraph.numpy import _householder, _tridiagonal
from funcgraph.test_util import check_grads
from tests.util import assert_exact_on_cpu

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _random(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _geqrf(a):
    return _householder.geqrf_p.bind(fg.numpy.asarray(a))


def _assert_jaxs_bits(fn, jax_fn, *args):
    expected = jax_fn(*args)
    expected = expected if isinstance(expected, (tuple, list)) else (expected,)
    for got in (fn(*args), fg.jit(fn)(*args)):
        got = got if isinstance(got, (tuple, list)) else (got,)
        for g, e in zip(got, expected, strict=True):
            assert_exact_on_cpu(np.asarray(g), np.asarray(e))


# --- jax's bits ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (140, 130)])
def test_geqrf_and_its_products_give_jaxs_bits(x64, dtype, shape):
    """(140, 130) is past LAPACK's crossover to its blocked code: the workspace queried as
    jaxlib queries it."""
    a = _random(shape, dtype)
    _assert_jaxs_bits(_geqrf, jax_linalg_internal.geqrf, a)
    packed, taus = (np.asarray(v) for v in jax_linalg_internal.geqrf(a))
    if shape[-2] >= shape[-1]:
        _assert_jaxs_bits(flinalg.householder_product, jax.lax.linalg.householder_product,
                          packed, taus)
    m = shape[-2]
    for left in (True, False):
        for transpose in (True, False):
            c = _random(shape[:-2] + ((m, 4) if left else (4, m)), dtype, seed=1)
            _assert_jaxs_bits(
                lambda *xs: flinalg.ormqr(*xs, left=left, transpose=transpose),
                lambda *xs: jax.lax.linalg.ormqr(*xs, left=left, transpose=transpose),
                packed, taus, c)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (2, 3, 3), (140, 140)])
def test_hessenberg_and_tridiagonal_give_jaxs_bits(x64, dtype, shape):
    a = _random(shape, dtype, seed=2)
    _assert_jaxs_bits(flinalg.hessenberg, jax.lax.linalg.hessenberg, a)
    for lower in (True, False):
        _assert_jaxs_bits(lambda x: flinalg.tridiagonal(x, lower=lower),
                          lambda x: jax.lax.linalg.tridiagonal(x, lower=lower), a)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,batch", [(6, ()), (1, ()), (5, (2, 3))])
def test_tridiagonal_solve_gives_jaxs_bits(x64, dtype, m, batch):
    dl, d, du = (_random(batch + (m,), dtype, seed) for seed in (3, 4, 5))
    b = _random(batch + (m, 2), dtype, seed=6)
    _assert_jaxs_bits(flinalg.tridiagonal_solve, jax.lax.linalg.tridiagonal_solve, dl, d, du, b)


def test_singular_and_nan_inputs_are_jaxs():
    """A singular tridiagonal system is NaN (gtsv's info); NaN passes through gehrd."""
    zeros = np.zeros(3, np.float32)
    b = np.ones((3, 1), np.float32)
    _assert_jaxs_bits(flinalg.tridiagonal_solve, jax.lax.linalg.tridiagonal_solve,
                      zeros, zeros, zeros, b)
    _assert_jaxs_bits(flinalg.hessenberg, jax.lax.linalg.hessenberg,
                      np.full((3, 3), np.nan, np.float32))


def test_empty_inputs_are_jaxs():
    for shape in [(0, 3), (3, 0), (2, 0, 0)]:
        _assert_jaxs_bits(_geqrf, jax_linalg_internal.geqrf, np.zeros(shape, np.float32))
    a = _random((3, 2), np.float32)
    no_taus = np.zeros((0,), np.float32)
    _assert_jaxs_bits(flinalg.householder_product, jax.lax.linalg.householder_product, a,
                      no_taus)
    _assert_jaxs_bits(flinalg.householder_product, jax.lax.linalg.householder_product,
                      np.zeros((3, 0), np.float32), no_taus)
    c = _random((3, 2), np.float32, seed=1)
    _assert_jaxs_bits(flinalg.ormqr, jax.lax.linalg.ormqr, a, no_taus, c)
    empty = np.zeros((0,), np.float32)
    _assert_jaxs_bits(flinalg.tridiagonal_solve, jax.lax.linalg.tridiagonal_solve,
                      empty, empty, empty, np.zeros((0, 2), np.float32))


# --- batching and derivatives -------------------------------------------------------------

def test_vmap_matches_jax():
    a = _random((3, 5, 4), np.float32)
    packed, taus = (np.asarray(v) for v in jax_linalg_internal.geqrf(a))
    c = _random((3, 5, 2), np.float32, seed=1)
    cases = [
        (flinalg.householder_product, jax.lax.linalg.householder_product, (packed, taus),
         (0, 0)),
        (flinalg.ormqr, jax.lax.linalg.ormqr, (packed, taus, c[0]), (0, 0, None)),
        (flinalg.hessenberg, jax.lax.linalg.hessenberg, (a[:, :4],), (0,)),
        (flinalg.tridiagonal, jax.lax.linalg.tridiagonal, (np.moveaxis(a[:, 1:], 0, 1),),
         (1,)),
    ]
    for fn, jax_fn, args, in_axes in cases:
        _assert_jaxs_bits(fg.vmap(fn, in_axes=in_axes), jax.vmap(jax_fn, in_axes=in_axes),
                          *args)


@pytest.mark.parametrize("in_axes", [(None, None, None, 0), (0, None, None, 1), 0])
def test_tridiagonal_solve_vmap_matches_jax(in_axes):
    """Only b batched: one solve with the batch as more columns; otherwise batched
    diagonals."""
    dl, d, du = (_random((3, 5), np.float32, seed) for seed in (7, 8, 9))
    d = d + 4
    b = _random((3, 5, 2), np.float32, seed=10)
    args = [dl, d, du, b]
    if in_axes == (None, None, None, 0):
        args[:3] = [v[0] for v in args[:3]]
    elif in_axes == (0, None, None, 1):
        args[1:3] = [v[0] for v in args[1:3]]
        args[3] = np.moveaxis(b, 0, 1)
    _assert_jaxs_bits(fg.vmap(flinalg.tridiagonal_solve, in_axes=in_axes),
                      jax.vmap(jax.lax.linalg.tridiagonal_solve, in_axes=in_axes), *args)


def test_tridiagonal_solve_derivatives(x64):
    rng = np.random.default_rng(11)
    dl, du = rng.standard_normal((2, 5))
    d = rng.standard_normal(5) + 4
    b = rng.standard_normal((5, 3))
    check_grads(flinalg.tridiagonal_solve, (dl, d, du, b), order=2, modes=("fwd", "rev"))

    def loss(mod):
        return lambda *xs: (mod.lax.linalg.tridiagonal_solve(*xs) ** 2).sum()
    mine = fg.grad(loss(fg), argnums=(0, 1, 2, 3))(dl, d, du, b)
    theirs = jax.grad(loss(jax), argnums=(0, 1, 2, 3))(dl, d, du, b)
    for g, e in zip(mine, theirs, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


def test_transpose_of_tridiagonal_solve_solves_with_the_transposed_matrix():
    dl, d, du = (_random((4,), np.float32, seed) for seed in (12, 13, 14))
    d = d + 4
    ct = _random((4, 2), np.float32, seed=15)
    (got,) = fg.linear_transpose(lambda b: flinalg.tridiagonal_solve(dl, d, du, b),
                                 np.zeros((4, 2), np.float32))(ct)
    t = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
    np.testing.assert_allclose(got, np.linalg.solve(t.T, ct), rtol=1e-5, atol=1e-5)


def test_no_derivative_rules_as_in_jax():
    a = _random((4, 3), np.float32)
    packed, taus = (np.asarray(v) for v in jax_linalg_internal.geqrf(a))
    with pytest.raises(NotImplementedError, match="householder_product"):
        fg.grad(lambda x: flinalg.householder_product(x, taus).sum())(packed)


# --- the loops that run off the CPU -----------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_portable_loops_match_lapack(dtype):
    a = _random((2, 5, 3), dtype)
    packed, taus = _householder._geqrf_loop(fg.numpy.asarray(a))
    expected = jax_linalg_internal.geqrf(a)
    np.testing.assert_allclose(packed, expected[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(taus, expected[1], rtol=1e-5, atol=1e-5)
    packed, taus = (np.asarray(v) for v in expected)
    (q,) = fg.jit(_householder._householder_product_loop)(packed, taus)
    np.testing.assert_allclose(q, jax.lax.linalg.householder_product(packed, taus), rtol=1e-5,
                               atol=1e-5)
    for left in (True, False):
        for transpose in (True, False):
            c = _random((2, 5, 4) if left else (2, 4, 5), dtype, seed=1)
            (out,) = fg.jit(_householder._ormqr_loop(left, transpose))(packed, taus, c)
            np.testing.assert_allclose(
                out, jax.lax.linalg.ormqr(packed, taus, c, left=left, transpose=transpose),
                rtol=1e-5, atol=1e-5)
    dl, d, du = (_random((2, 6), dtype, seed) for seed in (2, 3, 4))
    d = d + 4
    b = _random((2, 6, 3), dtype, seed=5)
    (x,) = fg.jit(_tridiagonal._thomas)(dl, d, du, b)
    np.testing.assert_allclose(x, jax.lax.linalg.tridiagonal_solve(dl, d, du, b), rtol=1e-4,
                               atol=1e-5)


def test_lowering_is_lapack_on_the_cpu_and_portable_elsewhere():
    a = _random((4, 4), np.float32)
    taus = np.ones(3, np.float32)
    vec = np.ones(4, np.float32)
    calls = [(_geqrf, (a,), "geqrf"), (flinalg.householder_product, (a, taus), "orgqr"),
             (flinalg.ormqr, (a, taus, a), "ormqr"), (flinalg.hessenberg, (a,), "gehrd"),
             (flinalg.tridiagonal, (a,), "sytrd"),
             (flinalg.tridiagonal_solve, (vec, vec, vec, a), "gtsv")]
    on_cpu = fg.default_backend() == "cpu"
    for fn, args, routine in calls:
        assert (f"lapack_s{routine}_ffi" in fg.jit(fn).lower(*args).as_text()) == on_cpu
        if routine in ("gehrd", "sytrd"):
            continue   # elsewhere a host callback, which no export can carry (jax: no rule)
        text = fg.export.export(fg.jit(fn), platforms=["cuda"])(*args).mlir_module()
        assert "custom_call" not in text


def test_float16_runs_the_portable_paths():
    a = _random((4, 3), np.float16)
    packed, taus = _geqrf(a)
    assert packed.dtype == np.float16
    q = flinalg.householder_product(packed, taus)
    np.testing.assert_allclose(np.asarray(q, np.float32).T @ np.asarray(q, np.float32),
                               np.eye(3), atol=1e-2)
    h, _ = flinalg.hessenberg(_random((4, 4), np.float16))
    assert h.dtype == np.float16


# --- jax's errors -------------------------------------------------------------------------

def test_errors_are_jaxs():
    f32 = np.float32
    with pytest.raises(TypeError, match="Input 0 to householder_product must have rank at "
                                        "least 2"):
        flinalg.householder_product(np.zeros(3, f32), np.zeros(2, f32))
    with pytest.raises(ValueError, match="at least as many rows as columns"):
        flinalg.householder_product(np.zeros((2, 3), f32), np.zeros(2, f32))
    with pytest.raises(ValueError, match="must not have more rows than the minimum"):
        flinalg.householder_product(np.zeros((3, 2), f32), np.zeros(3, f32))
    with pytest.raises(TypeError, match="householder_product does not accept"):
        flinalg.householder_product(np.zeros((3, 2), np.int32), np.zeros(2, np.int32))
    with pytest.raises(ValueError, match="same batch"):
        flinalg.householder_product(np.zeros((2, 3, 2), f32), np.zeros((3, 2), f32))
    with pytest.raises(ValueError, match="ormqr with left=True expects c to have the same "
                                         "number of rows"):
        flinalg.ormqr(np.zeros((3, 2), f32), np.zeros(2, f32), np.zeros((4, 2), f32))
    with pytest.raises(ValueError, match="ormqr with left=False expects c to have the same "
                                         "number of columns"):
        flinalg.ormqr(np.zeros((3, 2), f32), np.zeros(2, f32), np.zeros((4, 2), f32),
                      left=False)
    with pytest.raises(ValueError, match=r"must have shape \[..., n, n\]"):
        flinalg.hessenberg(np.zeros((3, 2), f32))
    with pytest.raises(ValueError, match="must be a square matrix"):
        flinalg.tridiagonal(np.zeros((3, 2), f32))
    vec = np.zeros(3, f32)
    with pytest.raises(TypeError, match="all diagonal arguments have the same shape"):
        flinalg.tridiagonal_solve(vec, np.zeros(4, f32), vec, np.zeros((3, 1), f32))
    with pytest.raises(TypeError, match="leading ndim-1 dimensions of b"):
        flinalg.tridiagonal_solve(vec, vec, vec, np.zeros((4, 1), f32))
    with pytest.raises(TypeError, match="Input 3 to tridiagonal_solve must have rank at "
                                        "least 2"):
        flinalg.tridiagonal_solve(vec, vec, vec, vec)
    with pytest.raises(NotImplementedError, match="perturb_singular"):
        flinalg.tridiagonal_solve(vec, vec, vec, np.zeros((3, 1), f32), perturb_singular=True)


# --- scipy.linalg on top ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_scipy_hessenberg_gives_jaxs_bits(dtype):
    a = _random((5, 5), dtype)
    for calc_q in (False, True):
        _assert_jaxs_bits(lambda x: fsl.hessenberg(x, calc_q=calc_q),
                          lambda x: jsl.hessenberg(x, calc_q=calc_q), a)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_scipy_qr_multiply_gives_jaxs_bits(shape, dtype):
    a = _random(shape, dtype)
    m, n = shape
    k = min(m, n)
    for mode, c_shape in [("right", (2, m)), ("right", (m,)), ("left", (k, 2)),
                          ("left", (k,))]:
        c = _random(c_shape, dtype, seed=1)
        for conjugate in (False, True):
            _assert_jaxs_bits(
                lambda x, y: fsl.qr_multiply(x, y, mode=mode, conjugate=conjugate),
                lambda x, y: jsl.qr_multiply(x, y, mode=mode, conjugate=conjugate), a, c)
    with pytest.raises(ValueError, match="not compatible for c @ Q"):
        fsl.qr_multiply(a, np.ones((2, m + 1), dtype))
    with pytest.raises(ValueError, match="mode must be 'right' or 'left'"):
        fsl.qr_multiply(a, np.ones((2, m), dtype), mode="up")
