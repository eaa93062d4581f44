"""The rest of JAX's numpy.linalg and scipy.linalg against jax: values, and gradients where
jax differentiates; complex Cholesky; second derivatives of eigh."""
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
import funcgraph.scipy.linalg as fsp
from tests.util import column_phases, on_cpu

RNG = np.random.RandomState(0)
A = RNG.randn(4, 4).astype(np.float32)
B = RNG.randn(4).astype(np.float32)
T = RNG.randn(2, 3, 4).astype(np.float32)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)
HERMITIAN = np.array([[5., 2. + 3j, 5j], [2. - 3j, 7., 1. + 7j], [-5j, 1. - 7j, 12.]],
                     np.complex64)


def close(x, y, tol=2e-5):
    xs, ys = jax.tree_util.tree_leaves(x), jax.tree_util.tree_leaves(y)
    assert len(xs) == len(ys)
    for a, b in zip(xs, ys):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


NUMPY_CASES = [
    ("matrix_transpose", (T,), {}), ("diagonal", (T,), {"offset": 1}), ("trace", (T,), {}),
    ("outer", (B, B), {}), ("cross", (T[..., :3], T[..., 1:]), {}), ("vecdot", (T, T), {}),
    ("matmul", (A, A), {}), ("tensordot", (T, T.transpose(1, 2, 0)), {"axes": 2}),
    ("vector_norm", (T,), {}), ("vector_norm", (T,), {"axis": (0, 2), "keepdims": True}),
    ("vector_norm", (T,), {"axis": 1, "ord": 1}), ("matrix_norm", (T,), {}),
    ("matrix_norm", (T,), {"ord": "nuc"}), ("matrix_norm", (T,), {"ord": 2}),
    ("matrix_power", (A, 3), {}), ("matrix_power", (A, -2), {}), ("matrix_power", (A, 0), {}),
    ("multi_dot", ([B, A, A, B],), {}), ("cond", (A,), {}), ("cond", (A,), {"p": 1}),
    ("cond", (A,), {"p": "fro"}), ("cond", (A,), {"p": -2}),
    ("tensorinv", (RNG.randn(6, 4, 8, 3).astype(np.float32),), {"ind": 2}),
    ("tensorsolve", (RNG.randn(6, 2, 3).astype(np.float32),
                     RNG.randn(6).astype(np.float32)), {}),
    ("lstsq", (RNG.randn(5, 3).astype(np.float32), RNG.randn(5).astype(np.float32)), {}),
    ("lstsq", (RNG.randn(3, 5).astype(np.float32), RNG.randn(3, 2).astype(np.float32)), {}),
    ("eigvals", (A,), {}), ("eig", (A,), {}), ("solve", (HERMITIAN, HERMITIAN[0]), {}),
    ("inv", (HERMITIAN,), {}), ("cholesky", (HERMITIAN,), {}),
    ("cholesky", (HERMITIAN,), {"upper": True}),
]


@pytest.mark.parametrize("name,args,kwargs", NUMPY_CASES,
                         ids=[f"{c[0]}{i}" for i, c in enumerate(NUMPY_CASES)])
def test_numpy_linalg_values(name, args, kwargs):
    close(getattr(fnp.linalg, name)(*args, **kwargs),
          getattr(jnp.linalg, name)(*args, **kwargs), tol=5e-5)


@pytest.mark.parametrize("name,fn", [
    ("matrix_power", lambda m, a: m.linalg.matrix_power(a, 3)),
    ("matrix_power_neg", lambda m, a: m.linalg.matrix_power(a, -1)),
    ("lstsq", lambda m, a: m.linalg.lstsq(a, B)[0]),
    ("eigvals", lambda m, a: m.real(m.linalg.eigvals(a) ** 2)),
    ("multi_dot", lambda m, a: m.linalg.multi_dot([a, a.T, a])),
    ("matrix_norm_nuc", lambda m, a: m.linalg.matrix_norm(a, ord="nuc")),
    ("tensorsolve", lambda m, a: m.linalg.tensorsolve(a, B)),
])
def test_numpy_linalg_gradients(name, fn):
    g = fg.grad(lambda a: fnp.sum(fn(fnp, a)))(A)
    gj = jax.grad(lambda a: jnp.sum(fn(jnp, a)))(A)
    close(g, gj, tol=1e-3)


def test_cond_of_a_singular_matrix_is_huge():
    # LAPACK leaves a rounding-sized singular value (cond ~1e22), the Jacobi SVD used off
    # the CPU an exact zero (cond inf): either says singular.
    ones = np.ones((3, 3), np.float32)
    assert float(fnp.linalg.cond(ones)) > 1e15 and float(jnp.linalg.cond(ones)) > 1e15


def test_eig_host_path_under_jit_and_vmap_and_no_eigenvector_derivative():
    stack = np.stack([A, A.T])
    close(fg.jit(fnp.linalg.eigvals)(A), jnp.linalg.eigvals(A))
    (w, v), (jw, jv) = fg.vmap(fnp.linalg.eig)(stack), jax.vmap(jnp.linalg.eig)(stack)
    close(w, jw)
    if not on_cpu():  # jax's GPU eig may give each eigenvector another phase than LAPACK
        v = np.asarray(v) * column_phases(np.asarray(v), np.asarray(jv))[..., None, :]
    close(v, jv)
    with pytest.raises(NotImplementedError, match="eigenvectors"):
        fg.grad(lambda a: fnp.sum(fnp.abs(fnp.linalg.eig(a)[1])))(A)


def test_complex_cholesky_gradient_from_the_autodiff_cookbook():
    def f(m):
        def g(x):
            factor = m.linalg.cholesky(x)
            return m.sum((factor - m.sin(factor)) ** 2)
        return g
    close(fnp.linalg.cholesky(HERMITIAN), jnp.linalg.cholesky(HERMITIAN))
    close(fg.jit(fnp.linalg.cholesky)(HERMITIAN), jnp.linalg.cholesky(HERMITIAN))
    close(fg.grad(f(fnp), holomorphic=True)(HERMITIAN),
          jax.grad(f(jnp), holomorphic=True)(HERMITIAN), tol=1e-4)
    # its products are in full precision, as jax's (a GPU's default TF32 lost 3 digits)
    text = fg.jit(fg.grad(f(fnp), holomorphic=True)).lower(HERMITIAN).as_text()
    dots = [line for line in text.splitlines() if "stablehlo.dot_general" in line]
    assert dots and all("precision = [HIGHEST, HIGHEST]" in line for line in dots)


@pytest.mark.parametrize("trans", [0, 1, 2])
@pytest.mark.parametrize("lower", [True, False])
def test_complex_solve_triangular(trans, lower):
    tri = np.tril(HERMITIAN) if lower else np.triu(HERMITIAN)
    b = HERMITIAN[1]
    close(fsp.solve_triangular(tri, b, trans=trans, lower=lower),
          jsp.solve_triangular(tri, b, trans=trans, lower=lower))
    close(fg.jit(lambda t, b: fsp.solve_triangular(t, b, trans=trans, lower=lower))(tri, b),
          jsp.solve_triangular(tri, b, trans=trans, lower=lower))


def test_eigh_second_derivatives():
    def f(m):
        return lambda a: m.sum(m.linalg.eigh(a)[0] ** 3)
    close(fg.grad(f(fnp))(SPD), jax.grad(f(jnp))(SPD), tol=1e-3)
    v = RNG.randn(4, 4).astype(np.float32)
    hvp = lambda m, grad, jvp: lambda a: jvp(grad(f(m)), (a,), (v,))[1]
    close(hvp(fnp, fg.grad, fg.jvp)(SPD), hvp(jnp, jax.grad, jax.jvp)(SPD), tol=2e-3)
    gg = lambda m, grad: grad(lambda a: m.sum(grad(f(m))(a) * v))
    close(gg(fnp, fg.grad)(SPD), gg(jnp, jax.grad)(SPD), tol=2e-3)


def _up_to_column_signs(x, y):
    x, y = np.asarray(x), np.asarray(y)
    signs = np.sign(np.sum(x * y, axis=-2, keepdims=True))
    np.testing.assert_allclose(x * signs, y, rtol=1e-4, atol=1e-4)


def test_scipy_linalg_lu_family():
    close(fsp.lu(A), jsp.lu(A))
    close(fsp.lu(A, permute_l=True), jsp.lu(A, permute_l=True))
    close(fsp.lu_factor(A), jsp.lu_factor(A))
    factors = fsp.lu_factor(A)
    for trans in (0, 1, 2):
        close(fsp.lu_solve(factors, B, trans=trans), jsp.lu_solve(jsp.lu_factor(A), B, trans=trans),
              tol=1e-4)
    g = fg.grad(lambda b: fnp.sum(fsp.lu_solve(fsp.lu_factor(A), b) ** 2))(B)
    gj = jax.grad(lambda b: jnp.sum(jsp.lu_solve(jsp.lu_factor(A), b) ** 2))(B)
    close(g, gj, tol=1e-3)


def test_scipy_linalg_solvers_and_decompositions():
    close(fsp.solve(A, B), jsp.solve(A, B), tol=1e-4)
    close(fsp.solve(SPD, B, assume_a="pos"), jsp.solve(SPD, B, assume_a="pos"))
    close(fsp.inv(A), jsp.inv(A), tol=1e-4)
    close(fsp.det(A), jsp.det(A))
    w, v = fsp.eigh(SPD)
    wj, vj = jsp.eigh(SPD)
    close(w, wj, tol=1e-4)
    _up_to_column_signs(v, vj)
    q, r = fsp.qr(A)
    qj, rj = jsp.qr(A)
    close(q, qj, tol=1e-4)
    close(r, rj, tol=1e-4)
    close(fsp.svd(A, compute_uv=False), jsp.svd(A, compute_uv=False), tol=1e-4)
    close(fsp.polar(A), jsp.polar(A), tol=1e-4)
    close(fsp.polar(A, method="svd", side="left"), jsp.polar(A, method="svd", side="left"),
          tol=1e-4)


def test_expm_and_frechet():
    e = np.outer(B, B).astype(np.float32)
    close(fsp.expm(A), jsp.expm(A), tol=1e-4)
    np.testing.assert_allclose(fsp.expm(3 * A), jsp.expm(3 * A), rtol=1e-4)
    close(fg.jit(fsp.expm)(A), jsp.expm(A), tol=1e-4)
    close(fsp.expm_frechet(A, e), jsp.expm_frechet(A, e), tol=1e-4)
    close(fsp.expm_frechet(A, e, compute_expm=False), jsp.expm_frechet(A, e, compute_expm=False),
          tol=1e-4)
    loss = lambda m, sp: lambda a: m.sum(sp.expm(a) ** 2)
    np.testing.assert_allclose(fg.grad(loss(fnp, fsp))(A), jax.grad(loss(jnp, jsp))(A),
                               rtol=1e-4, atol=1e-3)
    stack = np.stack([A, 0.5 * A])
    close(fg.vmap(fsp.expm)(stack), jax.vmap(jsp.expm)(stack), tol=1e-4)


def test_expm_beyond_max_squarings_is_nan_and_float16_is_refused_as_jaxs():
    big = A * 1e6
    for max_squarings in (16, 40):
        np.testing.assert_array_equal(
            np.asarray(fsp.expm(big, max_squarings=max_squarings)),
            np.asarray(jsp.expm(big, max_squarings=max_squarings)))
    assert np.all(np.isnan(np.asarray(fsp.expm(big))))
    with pytest.raises(TypeError, match="A.dtype=float16 is not supported"):
        fsp.expm(A.astype(np.float16))
    with pytest.raises(ValueError, match="same shape"):
        fsp.expm_frechet(A, A[:2, :2])


@pytest.mark.cpu_only  # jax has schur (and sqrtm, through it) only on the CPU (LAPACK)
def test_host_schur_and_sqrtm():
    close(fsp.schur(A), jsp.schur(A), tol=1e-5)
    close(fsp.schur(A, output="complex"), jsp.schur(A, output="complex"), tol=1e-5)
    close(fsp.sqrtm(SPD), jsp.sqrtm(SPD), tol=1e-4)


def test_special_matrices():
    close(fsp.block_diag(A[:2, :3], B, np.ones((2, 2), np.float32)),
          jsp.block_diag(A[:2, :3], B, np.ones((2, 2), np.float32)))
    close(fsp.toeplitz(B, 2 * B[::-1]), jsp.toeplitz(B, 2 * B[::-1]))
    close(fsp.toeplitz(B), jsp.toeplitz(B))


V4 = np.array([2., 3., 4., 5.], np.float32)
D4 = np.array([1., 2., 3., 4.], np.float32)
E3 = np.array([1., .5, .3], np.float32)
C43 = RNG.randn(4, 3).astype(np.float32)

SPECIAL_CASES = [
    ("circulant", (V4,), {}), ("circulant", (np.arange(6, dtype=np.int32).reshape(2, 3),), {}),
    ("companion", (V4,), {}), ("companion", (RNG.randn(2, 4).astype(np.float32),), {}),
    ("convolution_matrix", (V4[:3], 5), {}),
    ("convolution_matrix", (V4[:3], 5), {"mode": "same"}),
    ("convolution_matrix", (V4, 2), {"mode": "same"}),
    ("convolution_matrix", (V4[:3], 5), {"mode": "valid"}),
    ("convolution_matrix", (V4, 2), {"mode": "valid"}),
    ("dft", (5,), {}), ("dft", (4, "sqrtn"), {}), ("dft", (4, "n"), {}),
    ("fiedler", (V4,), {}), ("fiedler", (np.array([1, 4, 2], np.int32),), {}),
    ("fiedler_companion", (V4,), {}),
    ("fiedler_companion", (np.arange(1., 8., dtype=np.float32),), {}),
    ("fiedler_companion", (V4[:2],), {}),
    ("hadamard", (8,), {}), ("hadamard", (4, np.float32), {}),
    ("hankel", (V4,), {}), ("hankel", (V4[:3], D4), {}),
    ("helmert", (4,), {}), ("helmert", (4, True), {}), ("hilbert", (4,), {}),
    ("pascal", (4,), {}), ("pascal", (4, "upper"), {}), ("pascal", (4, "lower"), {}),
    ("invpascal", (4,), {}), ("invpascal", (4, "lower"), {}), ("invpascal", (4, "upper"), {}),
    ("leslie", (V4, E3), {}),
    # jax has hessenberg and schur (which solve_sylvester uses) only on the CPU (LAPACK)
    pytest.param("hessenberg", (A,), {}, marks=pytest.mark.cpu_only),
    pytest.param("hessenberg", (A,), {"calc_q": True}, marks=pytest.mark.cpu_only),
    pytest.param("solve_sylvester", (A, B[:3, None] * A[:3, :3], C43), {},
                 marks=pytest.mark.cpu_only),
    ("qr_multiply", (C43, np.ones((2, 4), np.float32)), {}),
    ("qr_multiply", (C43, np.ones((3, 2), np.float32)), {"mode": "left"}),
    ("qr_multiply", (C43.astype(np.complex64) * 1j, np.ones((2, 4), np.float32)),
     {"conjugate": True}),
    ("eigh_tridiagonal", (D4, E3), {"eigvals_only": True}),
    ("eigh_tridiagonal", (D4, E3), {"eigvals_only": True, "select": "i",
                                    "select_range": (1, 2)}),
    ("rsf2csf", __import__("scipy.linalg").linalg.schur(A), {}),
]


@pytest.mark.parametrize("name,args,kwargs", SPECIAL_CASES,
                         ids=[f"{c[0]}{i}" for i, c in enumerate(SPECIAL_CASES)])
def test_scipy_linalg_special_and_host_names(name, args, kwargs):
    close(getattr(fsp, name)(*args, **kwargs), getattr(jsp, name)(*args, **kwargs), tol=1e-4)


def test_invhilbert_is_the_exact_inverse():
    """jax's invhilbert is a float32 approximation (~1e-5 relative); funcgraph's the rounded
    closed form."""
    np.testing.assert_allclose(fsp.invhilbert(4), jsp.invhilbert(4), rtol=1e-5)
    exact = np.linalg.inv(np.asarray(fsp.hilbert(4), np.float64))
    np.testing.assert_allclose(np.asarray(fsp.invhilbert(4)), exact, rtol=1e-4)


@pytest.mark.cpu_only  # jax's funm calls schur, which jax has only on the CPU (LAPACK)
def test_funm_against_jax():
    close(fsp.funm(A, fnp.exp), jsp.funm(A, jnp.exp), tol=1e-4)
    f, err = fsp.funm(A, fnp.sin, disp=False)
    fj, errj = jsp.funm(A, jnp.sin, disp=False)
    close((f, err), (fj, errj), tol=1e-4)


def test_funm_of_exp_is_expm():
    np.testing.assert_allclose(np.asarray(fsp.funm(SPD / 4, fnp.exp)).real,
                               np.asarray(fsp.expm(SPD / 4)), rtol=1e-4)


def test_solve_sylvester_solves_its_equation():
    c = RNG.randn(4, 4).astype(np.float32)
    x = fsp.solve_sylvester(A, SPD, c)
    np.testing.assert_allclose(A @ np.asarray(x) + np.asarray(x) @ SPD, c, atol=1e-4)


@pytest.mark.cpu_only  # jax's solve_sylvester calls schur, which jax has only on the CPU
def test_complex_solve_sylvester_matches_jax():
    xc = fsp.solve_sylvester(HERMITIAN, HERMITIAN.T, HERMITIAN)
    close(xc, jsp.solve_sylvester(HERMITIAN, HERMITIAN.T, HERMITIAN), tol=1e-4)


def test_eigh_tridiagonal_vectors():
    """jax's eigh_tridiagonal finds eigenvectors by inverse iteration, whose signs differ
    from LAPACK's; the columns agree up to sign."""
    w, v = fsp.eigh_tridiagonal(D4, E3)
    wj, vj = jsp.eigh_tridiagonal(D4, E3)
    close(w, wj, tol=1e-5)
    _up_to_column_signs(v, vj)
    w, _ = fsp.eigh_tridiagonal(D4, E3, select="v", select_range=(1.5, 10.))
    np.testing.assert_allclose(w, np.asarray(wj)[np.asarray(wj) > 1.5], rtol=1e-5)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (1, 4)])
def test_lu_of_non_square_matrices(shape):
    a = RNG.randn(*shape).astype(np.float32)
    close(fsp.lu(a), jsp.lu(a), tol=1e-5)
    close(fsp.lu(a, permute_l=True), jsp.lu(a, permute_l=True), tol=1e-5)
    close(fg.jit(fsp.lu)(a), jsp.lu(a), tol=1e-5)


def test_scipy_linalg_has_every_jax_name():
    missing = [n for n in dir(jsp) if not n.startswith("_") and not hasattr(fsp, n)]
    assert missing == []
