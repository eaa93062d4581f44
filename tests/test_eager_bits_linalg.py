"""funcgraph.numpy.linalg, funcgraph.scipy.linalg and funcgraph.numpy.fft: eager and jitted
results bit for bit equal to jax's (issue 29, "XLA's rewrites, bit for bit").

jax jits most of its linalg functions, so an eager call is one XLA program, fused as XLA
fuses; funcgraph's counterparts run compiled when eager (compiled_when_eager) where that
is what makes the bits agree.  Rows of KNOWN_DIFFERENCES still differ for a reason other
than fusion (another algorithm: funcgraph's LU, Jacobi/Householder or host routines
against jax's LAPACK calls); the test checks that they still differ, so the table stays
true.  A key "name/eager" or "name/jit" names one mode, a bare name both."""
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest
import scipy.linalg

import funcgraph as fg
import funcgraph.numpy as fnp
import funcgraph.scipy.linalg as fsl

RNG = np.random.default_rng(0)


def _f32(*shape):
    return (RNG.normal(size=shape) * 3).astype(np.float32)


def _c64(*shape):
    return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(np.complex64)


X = _f32(12, 20)
V = _f32(300)
B3 = _f32(4, 6, 5)
C = _c64(8, 16)
SQ = _f32(6, 6)
SQB = _f32(3, 5, 5)
SPD = (SQ @ SQ.T + 6 * np.eye(6)).astype(np.float32)
TRI = np.tril(SQ) + 10 * np.eye(6, dtype=np.float32)
RHS = _f32(6, 3)
SCHUR_T, SCHUR_Z = (m.astype(np.float32) for m in scipy.linalg.schur(SQ.astype(np.float64)))


def la(m):
    return m.numpy.linalg


def sl(m):
    return jsl if m is jax else fsl


def ff(m):
    return m.numpy.fft


# (name, call(module) -> function, array arguments (NumPy arrays or lists of them), static
# keyword arguments)
ROWS = [
    # numpy.linalg
    ("norm", lambda m: la(m).norm, (X,), {}),
    ("norm axis=1", lambda m: la(m).norm, (X,), dict(axis=1)),
    ("norm axis=[0, 2] keepdims", lambda m: la(m).norm, (B3,),
     dict(axis=(0, 2), keepdims=True)),
    ("norm ord=3", lambda m: la(m).norm, (V,), dict(ord=3)),
    ("norm ord=0.5 axis=0", lambda m: la(m).norm, (X,), dict(ord=0.5, axis=0)),
    ("norm ord=inf", lambda m: la(m).norm, (V,), dict(ord=np.inf)),
    ("norm ord=0", lambda m: la(m).norm, (V,), dict(ord=0)),
    ("norm fro", lambda m: la(m).norm, (X,), dict(ord="fro")),
    ("norm ord=1 matrix", lambda m: la(m).norm, (X,), dict(ord=1)),
    ("norm ord=-inf matrix", lambda m: la(m).norm, (X,), dict(ord=-np.inf)),
    ("norm ord=2 matrix", lambda m: la(m).norm, (X,), dict(ord=2)),
    ("norm nuc", lambda m: la(m).norm, (X,), dict(ord="nuc")),
    ("norm complex", lambda m: la(m).norm, (C,), {}),
    ("norm complex ord=3 axis=1", lambda m: la(m).norm, (C,), dict(ord=3, axis=1)),
    ("vector_norm axis=1", lambda m: la(m).vector_norm, (B3,), dict(axis=1)),
    ("vector_norm ord=3", lambda m: la(m).vector_norm, (V,), dict(ord=3)),
    ("vector_norm ord=-1", lambda m: la(m).vector_norm, (V,), dict(ord=-1)),
    ("matrix_norm", lambda m: la(m).matrix_norm, (B3,), {}),
    ("matrix_norm ord=1", lambda m: la(m).matrix_norm, (B3,), dict(ord=1)),
    ("det 2x2", lambda m: la(m).det, (_f32(60, 2, 2),), {}),
    ("det 3x3", lambda m: la(m).det, (_f32(60, 3, 3),), {}),
    ("det 6x6", lambda m: la(m).det, (_f32(20, 6, 6),), {}),
    ("slogdet", lambda m: la(m).slogdet, (_f32(20, 8, 8),), {}),
    ("solve", lambda m: la(m).solve, (SQ, RHS), {}),
    ("cholesky", lambda m: la(m).cholesky, (SPD,), {}),
    ("inv", lambda m: la(m).inv, (SQB,), {}),
    ("matrix_power -2", lambda m: la(m).matrix_power, (SQ,), dict(n=-2)),
    ("tensorsolve", lambda m: la(m).tensorsolve, (_f32(2, 3, 6), _f32(2, 3)), {}),
    ("outer", lambda m: la(m).outer, (V[:20], V[20:50]), {}),
    ("multi_dot", lambda m: la(m).multi_dot, ([_f32(5, 7), _f32(7, 9), _f32(9, 3)],), {}),
    ("multi_dot vectors", lambda m: la(m).multi_dot,
     ([_f32(7), _f32(7, 9), _f32(9, 3), _f32(3)],), {}),
    ("trace", lambda m: la(m).trace, (B3,), {}),
    ("trace offset=2", lambda m: la(m).trace, (X,), dict(offset=2)),
    ("matmul", lambda m: la(m).matmul, (X, X.T), {}),
    ("vecdot", lambda m: la(m).vecdot, (X, X), {}),
    ("tensordot", lambda m: la(m).tensordot, (B3, _f32(6, 5, 2)), {}),
    ("cross", lambda m: la(m).cross, (_f32(40, 3), _f32(40, 3)), {}),
    ("cross axis=0", lambda m: la(m).cross, (_f32(3, 40), _f32(3, 40)), dict(axis=0)),
    ("matrix_transpose", lambda m: la(m).matrix_transpose, (B3,), {}),
    ("diagonal", lambda m: la(m).diagonal, (B3,), dict(offset=1)),
    ("matrix_power 3", lambda m: la(m).matrix_power, (SQB * 0.3,), dict(n=3)),
    ("matrix_power 6", lambda m: la(m).matrix_power, (SQB * 0.3,), dict(n=6)),
    ("svdvals", lambda m: la(m).svdvals, (X,), {}),
    ("eigvalsh", lambda m: la(m).eigvalsh, (SPD,), {}),
    ("eigh", lambda m: la(m).eigh, (SPD,), {}),
    ("svd", lambda m: la(m).svd, (X,), {}),
    ("svd reduced", lambda m: la(m).svd, (X,), dict(full_matrices=False)),
    ("pinv", lambda m: la(m).pinv, (X,), {}),
    ("lstsq", lambda m: la(m).lstsq, (X.T, _f32(20, 2)), {}),
    ("cond", lambda m: la(m).cond, (SQ,), {}),
    ("matrix_rank", lambda m: la(m).matrix_rank, (X,), {}),
    ("qr", lambda m: la(m).qr, (X,), {}),
    ("qr complete", lambda m: la(m).qr, (X.T,), dict(mode="complete")),
    ("qr r", lambda m: la(m).qr, (X,), dict(mode="r")),
    ("eigvals", lambda m: la(m).eigvals, (SQ,), {}),
    # scipy.linalg
    ("sl.solve_triangular", lambda m: sl(m).solve_triangular, (TRI, RHS), dict(lower=True)),
    ("sl.cholesky", lambda m: sl(m).cholesky, (SPD,), {}),
    ("sl.lu", lambda m: sl(m).lu, (SQ,), {}),
    ("sl.lu_factor", lambda m: sl(m).lu_factor, (SQ,), {}),
    ("sl.lu_solve", lambda m: (lambda a, b: sl(m).lu_solve(sl(m).lu_factor(a), b)),
     (SQ, RHS), {}),
    ("sl.solve", lambda m: sl(m).solve, (SQ, RHS), {}),
    ("sl.inv", lambda m: sl(m).inv, (SQ,), {}),
    ("sl.det", lambda m: sl(m).det, (SQB,), {}),
    ("sl.cho_solve", lambda m: (lambda c, b: sl(m).cho_solve((c, True), b)),
     (np.linalg.cholesky(SPD).astype(np.float32), RHS), {}),
    ("sl.expm", lambda m: sl(m).expm, (SQ * 0.1,), {}),
    ("sl.expm large, batched", lambda m: sl(m).expm, (SQB * 3,), {}),
    ("sl.expm_frechet", lambda m: sl(m).expm_frechet, (SQ * 0.5, SQ), {}),
    ("sl.expm upper_triangular", lambda m: sl(m).expm, (TRI.T,), dict(upper_triangular=True)),
    ("sl.qr_multiply", lambda m: sl(m).qr_multiply, (X, X.T[:5]), {}),
    ("sl.hessenberg calc_q", lambda m: sl(m).hessenberg, (SQ,), dict(calc_q=True)),
    ("lax householder_product", lambda m: m.lax.linalg.householder_product,
     (np.tril(SQ, -1), V[:6]), {}),
    ("lax tridiagonal", lambda m: m.lax.linalg.tridiagonal, (SPD,), {}),
    ("lax qdwh", lambda m: m.lax.linalg.qdwh, (X.T,), {}),
    ("sl.eigh_tridiagonal", lambda m: sl(m).eigh_tridiagonal, (V[:40], V[40:79]),
     dict(eigvals_only=True)),
    ("sl.eigh_tridiagonal select i", lambda m: sl(m).eigh_tridiagonal, (V[:9], V[9:17]),
     dict(eigvals_only=True, select="i", select_range=(2, 5))),
    ("sl.polar", lambda m: sl(m).polar, (SQ,), {}),
    ("sl.polar left wide", lambda m: sl(m).polar, (X,), dict(side="left")),
    ("sl.polar svd batched", lambda m: sl(m).polar, (SQB,), dict(method="svd")),
    ("lax tridiagonal_solve", lambda m: m.lax.linalg.tridiagonal_solve,
     (V[:6], V[6:12] + 4, V[12:18], RHS[:6]), {}),
    ("sl.schur", lambda m: sl(m).schur, (SQ,), {}),
    ("sl.hessenberg", lambda m: sl(m).hessenberg, (SQ,), {}),
    ("sl.rsf2csf", lambda m: sl(m).rsf2csf, (SCHUR_T, SCHUR_Z), {}),
    ("sl.funm", lambda m: (lambda a: sl(m).funm(a, m.numpy.sin)), (SQ[:3, :3] * 0.3,), {}),
    ("sl.sqrtm", lambda m: sl(m).sqrtm, (SPD,), {}),
    ("sl.solve_sylvester", lambda m: sl(m).solve_sylvester, (SQ, SQ[:3, :3], _f32(6, 3)), {}),
    ("sl.solve_sylvester eigen", lambda m: sl(m).solve_sylvester, (SQ, SQ[:3, :3], _f32(6, 3)),
     dict(method="eigen")),
    ("sl.block_diag", lambda m: sl(m).block_diag, (SQ[:2, :2], SQ[:3, :3], X[:2]), {}),
    ("sl.toeplitz", lambda m: sl(m).toeplitz, (V[:5], V[5:12]), {}),
    # numpy.fft
    ("fft", lambda m: ff(m).fft, (V,), {}),
    ("fft ortho n=256", lambda m: ff(m).fft, (V,), dict(norm="ortho", n=256)),
    ("ifft forward", lambda m: ff(m).ifft, (C,), dict(norm="forward")),
    ("rfft", lambda m: ff(m).rfft, (V,), {}),
    ("irfft ortho", lambda m: ff(m).irfft, (C,), dict(norm="ortho")),
    ("hfft", lambda m: ff(m).hfft, (C,), {}),
    ("hfft ortho", lambda m: ff(m).hfft, (C,), dict(norm="ortho")),
    ("ihfft ortho", lambda m: ff(m).ihfft, (V,), dict(norm="ortho")),
    ("fft2", lambda m: ff(m).fft2, (X,), {}),
    ("ifft2 ortho", lambda m: ff(m).ifft2, (C,), dict(norm="ortho")),
    ("rfft2", lambda m: ff(m).rfft2, (X,), {}),
    ("irfft2", lambda m: ff(m).irfft2, (C,), {}),
    ("fftn ortho", lambda m: ff(m).fftn, (B3,), dict(norm="ortho")),
    ("ifftn", lambda m: ff(m).ifftn, (B3,), {}),
    ("rfftn", lambda m: ff(m).rfftn, (B3,), {}),
    ("irfftn s", lambda m: ff(m).irfftn, (C,), dict(s=(8, 30))),
    ("fftshift", lambda m: ff(m).fftshift, (X,), {}),
    ("ifftshift axes=1", lambda m: ff(m).ifftshift, (X,), dict(axes=1)),
    ("fftfreq", lambda m: (lambda: ff(m).fftfreq(37, 0.3)), (), {}),
    ("rfftfreq", lambda m: (lambda: ff(m).rfftfreq(37, 0.3)), (), {}),
]

# eigh_tridiagonal's eigenvectors are not jax's (see the function); its eigenvalues are.
KNOWN_DIFFERENCES = {
    "hfft ortho/jit": "funcgraph's jit passes the norm's closed-over size array as a runtime "
                      "argument, jax inlines it as a constant: XLA folds (x * 1/sqrt(n)) * n "
                      "into one multiply in jax's program only",
}


def _to(m, a):
    if isinstance(a, np.ndarray):
        return m.numpy.asarray(a)
    if isinstance(a, list):
        return [_to(m, x) for x in a]
    return a


def _call(m, call, args, kwargs, jit):
    f = call(m)
    args = tuple(_to(m, a) for a in args)
    if jit:
        return m.jit(lambda *a: f(*a, **kwargs))(*args)
    return f(*args, **kwargs)


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in _leaves(t)]
    return [np.asarray(tree)]


def _equal(got, want):
    got, want = _leaves(got), _leaves(want)
    return len(got) == len(want) and all(
        g.dtype == w.dtype and g.shape == w.shape and np.array_equal(g, w, equal_nan=True)
        for g, w in zip(got, want))


def _assert_equal(got, want):
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_array_equal(g, w)


def test_known_differences_name_rows():
    names = {row[0] for row in ROWS}
    assert {k.split("/")[0] for k in KNOWN_DIFFERENCES} <= names


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("name,call,args,kwargs", ROWS, ids=[row[0] for row in ROWS])
def test_bits_equal_jaxs(name, call, args, kwargs, mode):
    want = _call(jax, call, args, kwargs, mode == "jit")
    got = _call(fg, call, args, kwargs, mode == "jit")
    reason = KNOWN_DIFFERENCES.get(f"{name}/{mode}", KNOWN_DIFFERENCES.get(name))
    if reason is None:
        _assert_equal(got, want)
    else:
        assert not _equal(got, want), f"{name} ({mode}) now matches jax: drop it from " \
                                      f"KNOWN_DIFFERENCES ({reason})"


# --- float64 -------------------------------------------------------------------------

ROWS64 = [
    ("norm axis=1", lambda m: la(m).norm, (X,), dict(axis=1)),
    ("matrix_norm", lambda m: la(m).matrix_norm, (B3,), {}),
    ("det 3x3", lambda m: la(m).det, (_f32(60, 3, 3),), {}),
    ("cross", lambda m: la(m).cross, (_f32(40, 3), _f32(40, 3)), {}),
    ("matrix_power 3", lambda m: la(m).matrix_power, (SQB * 0.3,), dict(n=3)),
    ("hfft ortho", lambda m: ff(m).hfft, (C,), dict(norm="ortho")),
]


@pytest.mark.parametrize("name,call,args,kwargs", ROWS64, ids=[row[0] for row in ROWS64])
def test_float64_bits_equal_jaxs_eagerly(name, call, args, kwargs):
    args = tuple(a.astype(np.complex128 if np.iscomplexobj(a) else np.float64) for a in args)
    with fg.enable_x64(True), jax.enable_x64(True):
        want = _call(jax, call, args, kwargs, False)
        got = _call(fg, call, args, kwargs, False)
        _assert_equal(got, want)


# --- the compiled functions keep their argument forms and transformations ----------------

def test_norm_argument_forms():
    x = fnp.asarray(B3)
    want = np.asarray(jnp.linalg.norm(B3, 1, (0, 2), True))
    for got in (fnp.linalg.norm(x, 1, [0, 2], True),
                fnp.linalg.norm(x, ord=1, axis=(0, 2), keepdims=True),
                fg.jit(lambda a: fnp.linalg.norm(a, 1, [0, 2], True))(x)):
        np.testing.assert_array_equal(np.asarray(got), want)


def test_compiled_functions_under_grad_and_vmap():
    a3 = _f32(5, 3, 3)
    x = fnp.asarray(X)
    pairs = [
        (lambda m, a: m.numpy.linalg.norm(a, axis=1).sum(), X),
        (lambda m, a: m.numpy.linalg.det(a).sum(), a3),
        (lambda m, a: m.numpy.linalg.matrix_power(a, 3).sum(), a3 * 0.3),
        (lambda m, a: m.numpy.linalg.cross(a[..., 0], a[..., 1]).sum(), a3),
    ]
    for f, a in pairs:
        want = np.asarray(jax.grad(lambda v: f(jax, v))(a))
        got = np.asarray(fg.grad(lambda v: f(fg, v))(fnp.asarray(a)))
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-5)
    got = fg.vmap(lambda r: fnp.linalg.norm(r, ord=3))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(jnp.linalg.norm(X, 3, axis=1)),
                               rtol=1e-6)
    got = fg.vmap(fnp.linalg.det)(fnp.asarray(a3))
    np.testing.assert_allclose(np.asarray(got), np.asarray(jnp.linalg.det(a3)), rtol=1e-5)
    got = fg.vmap(lambda a: fnp.linalg.matrix_power(a, 3))(fnp.asarray(a3))
    np.testing.assert_allclose(np.asarray(got), np.asarray(jnp.linalg.matrix_power(a3, 3)),
                               rtol=1e-5)


def test_compiled_functions_stay_inline_under_jit():
    """Inside a transformation the decorated functions trace inline: no nested pjit."""
    names = [e.prim.name for e in
             fg.make_jaxpr(lambda a: fnp.linalg.norm(a, axis=1))(X).jaxpr.eqns]
    assert "pjit" not in names and "sqrt" in names
