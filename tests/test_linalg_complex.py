"""Complex inputs to funcgraph.numpy.linalg against jax: values (bit-identical factors where
both call the same LAPACK routine on the host), and gradients of real-valued functions
(and of holomorphic ones, where jax allows them) of complex matrices."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from tests.util import column_phases, on_cpu

RNG = np.random.RandomState(3)


def _complex(shape, dtype=np.complex64):
    return (RNG.randn(*shape) + 1j * RNG.randn(*shape)).astype(dtype)


def _hermitian(n, dtype=np.complex64):
    a = _complex((n, n), dtype)
    return ((a + a.conj().T) / 2).astype(dtype)


SQUARE = _complex((4, 4))
TALL = _complex((5, 3))
HERM = _hermitian(4)
BATCH = _complex((2, 3, 3))


def close(x, y, tol=2e-5):
    xs, ys = jax.tree_util.tree_leaves(x), jax.tree_util.tree_leaves(y)
    assert len(xs) == len(ys)
    for a, b in zip(xs, ys, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def close_factors(name, got, want, tol=2e-5):
    """close(got, want) on the CPU, where funcgraph and jax both call LAPACK.  Elsewhere
    (jax calls cuSOLVER) eigen- and singular vectors are compared up to each one's phase:
    u and v^H of a singular triple by opposite phases, and the columns of u (rows of v^H)
    beyond the singular values, any basis of the same space, by their projector."""
    if on_cpu() or name not in ("eigh", "svd") or not isinstance(want, tuple):
        close(got, want, tol)
        return
    if name == "eigh":
        (w, v), (jw, jv) = got, want
        close(w, jw, tol)
        close(v * column_phases(v, jv)[..., None, :], jv, tol)
        return
    (u, s, vh), (ju, js, jvh) = got, want
    close(s, js, tol)
    u, vh, ju, jvh = (np.asarray(x) for x in (u, vh, ju, jvh))
    k = s.shape[-1]
    phases = column_phases(u[..., :k], ju[..., :k])
    close(u[..., :k] * phases[..., None, :], ju[..., :k], tol)
    close(vh[..., :k, :] * np.conj(phases)[..., :, None], jvh[..., :k, :], tol)
    rest = lambda q: q @ np.conj(np.swapaxes(q, -1, -2))  # noqa: E731
    close(rest(u[..., k:]), rest(ju[..., k:]), tol)
    close(rest(np.conj(np.swapaxes(vh[..., k:, :], -1, -2))),
          rest(np.conj(np.swapaxes(jvh[..., k:, :], -1, -2))), tol)


VALUE_CASES = [
    ("eigh", (HERM,), {}), ("eigh", (HERM,), {"UPLO": "U", "symmetrize_input": False}),
    ("eigvalsh", (HERM,), {}),
    ("svd", (SQUARE,), {}), ("svd", (TALL,), {"full_matrices": False}),
    ("svd", (TALL.T,), {}), ("svd", (TALL,), {"compute_uv": False}), ("svd", (BATCH,), {}),
    ("qr", (TALL,), {}), ("qr", (TALL,), {"mode": "complete"}), ("qr", (TALL.T,), {}),
    ("qr", (TALL,), {"mode": "r"}),
    ("det", (SQUARE,), {}), ("det", (BATCH,), {}), ("slogdet", (SQUARE,), {}),
    ("slogdet", (BATCH,), {}),
    ("pinv", (TALL,), {}), ("pinv", (TALL.T,), {}), ("matrix_rank", (TALL,), {}),
    ("lstsq", (TALL, _complex((5, 2))), {}), ("lstsq", (TALL, _complex((5,))), {}),
    ("norm", (SQUARE,), {}), ("norm", (SQUARE,), {"ord": 2}), ("norm", (SQUARE,), {"ord": -2}),
    ("norm", (SQUARE,), {"ord": "nuc"}), ("norm", (SQUARE,), {"ord": 1}),
    ("norm", (SQUARE,), {"ord": np.inf}), ("norm", (BATCH,), {"ord": 2, "axis": (0, 2)}),
    ("norm", (BATCH,), {"ord": "nuc", "axis": (-1, -2), "keepdims": True}),
    ("svdvals", (TALL,), {}), ("cond", (SQUARE,), {}), ("matrix_norm", (BATCH,), {"ord": 2}),
]


@pytest.mark.parametrize("name,args,kwargs", VALUE_CASES,
                         ids=[f"{c[0]}{i}" for i, c in enumerate(VALUE_CASES)])
def test_complex_values_match_jax(name, args, kwargs):
    expected = getattr(jnp.linalg, name)(*args, **kwargs)
    fn = getattr(fnp.linalg, name)
    close_factors(name, fn(*args, **kwargs), expected)
    close_factors(name, fg.jit(lambda *a: fn(*a, **kwargs))(*args), expected)


@pytest.mark.cpu_only  # jax calls cuSOLVER on a GPU: other phases, other last bits
@pytest.mark.parametrize("name,args", [("eigh", (HERM,)), ("svd", (SQUARE,)),
                                       ("qr", (TALL,))])
def test_factors_are_bit_identical_to_jax(name, args):
    """Both call LAPACK (heevd, gesdd, geqrf/ungqr) on the CPU: the same phases and signs."""
    for fn_out, jax_out in zip(getattr(fnp.linalg, name)(*args),
                               getattr(jnp.linalg, name)(*args), strict=True):
        np.testing.assert_array_equal(np.asarray(fn_out), np.asarray(jax_out))


@pytest.mark.parametrize("name,args", [("eigh", (HERM.real.copy(),)),
                                       ("svd", (SQUARE.real.copy(),)),
                                       ("qr", (TALL.real.copy(),))])
def test_real_factors_agree_with_jax_up_to_column_signs(name, args):
    """Real inputs stay in the compiled program (exportable, partitionable): the factors
    equal jax's up to the sign of each eigen- or singular vector (and R's matching rows)."""
    got = [np.asarray(o) for o in getattr(fnp.linalg, name)(*args)]
    want = [np.asarray(o) for o in getattr(jnp.linalg, name)(*args)]
    vectors, other = (1, 0) if name == "eigh" else (0, 1)
    signs = np.sign(np.sum(got[vectors] * want[vectors], axis=0))
    np.testing.assert_allclose(got[vectors] * signs, want[vectors], atol=2e-5)
    if name == "qr":
        np.testing.assert_allclose(got[1] * signs[:, None], want[1], atol=2e-5)
    else:
        np.testing.assert_allclose(got[other], want[other], atol=2e-5)
    if name == "svd":
        np.testing.assert_allclose(got[2] * signs[:, None], want[2], atol=2e-5)


def test_vmap_of_complex_factorizations():
    stack = np.stack([HERM, HERM.conj()])
    close_factors("eigh", fg.vmap(fnp.linalg.eigh)(stack), jax.vmap(jnp.linalg.eigh)(stack))
    close_factors("svd", fg.vmap(fnp.linalg.svd)(BATCH), jax.vmap(jnp.linalg.svd)(BATCH))


# --- gradients (complex128) ---------------------------------------------------------------

def _eigh_loss(lib):
    def loss(x):
        w, v = lib.linalg.eigh(x)
        # |v|^2 does not depend on each eigenvector's phase.
        return lib.sum(w * lib.arange(1.0, 5.0)) + lib.sum(lib.abs(v) ** 2 * lib.real(x))
    return loss


def _svd_loss(lib, full_matrices=False):
    def loss(x):
        u, s, vh = lib.linalg.svd(x, full_matrices=full_matrices)
        k = s.shape[-1]
        uv = u[..., :, :k] @ vh[..., :k, :]   # each pair's phases cancel in u_ik vh_kj
        return (lib.sum(s * lib.arange(1.0, k + 1.0)) + lib.sum(lib.abs(u) ** 2 * 0.3)
                + lib.sum(lib.real(uv) * lib.arange(1.0, x.shape[-1] + 1.0)))
    return loss


def _qr_loss(lib):
    def loss(x):
        q, r = lib.linalg.qr(x)
        return lib.sum(lib.real(q) ** 2) + lib.sum(lib.imag(r)) + lib.sum(lib.abs(r) ** 2 * 0.3)
    return loss


def _real_losses(lib):
    la = lib.linalg
    return {
        "eigh": (_eigh_loss(lib), _hermitian(4, np.complex128)),
        "eigvalsh": (lambda x: lib.sum(la.eigvalsh(x) ** 2), _hermitian(3, np.complex128)),
        "svd_tall": (_svd_loss(lib), _complex((5, 3), np.complex128)),
        "svd_wide": (_svd_loss(lib), _complex((3, 5), np.complex128)),
        "svd_square_full": (_svd_loss(lib, True), _complex((3, 3), np.complex128)),
        "svdvals": (lambda x: lib.sum(la.svd(x, compute_uv=False) ** 3),
                    _complex((4, 3), np.complex128)),
        "qr": (_qr_loss(lib), _complex((5, 3), np.complex128)),
        "det_abs": (lambda x: lib.abs(la.det(x)) ** 2, _complex((3, 3), np.complex128)),
        "slogdet": (lambda x: la.slogdet(x)[1] + lib.real(la.slogdet(x)[0]) * 0.7
                    + lib.imag(la.slogdet(x)[0]) * 0.2, _complex((3, 3), np.complex128)),
        "pinv": (lambda x: lib.sum(lib.real(la.pinv(x)) * lib.arange(1.0, 4.0)),
                 _complex((3, 5), np.complex128)),
        "lstsq": (lambda x: lib.sum(lib.abs(la.lstsq(x, lib.arange(5.0) + 1j)[0]) ** 2),
                  _complex((5, 3), np.complex128)),
        "norm2": (lambda x: la.norm(x, ord=2) + la.norm(x, ord="nuc") + la.norm(x),
                  _complex((3, 4), np.complex128)),
    }


@pytest.mark.parametrize("name", list(_real_losses(jnp)))
def test_grad_of_real_function_of_complex_matrix(x64, name):
    fn_loss, x = _real_losses(fnp)[name]
    jax_loss, _ = _real_losses(jnp)[name]
    close(fg.grad(fn_loss)(x), jax.grad(jax_loss)(x), tol=1e-8)


def test_grad_under_jit_and_vmap(x64):
    fn_loss, x = _real_losses(fnp)["eigh"]
    jax_loss, _ = _real_losses(jnp)["eigh"]
    stack = np.stack([x, x.conj()])
    close(fg.jit(fg.vmap(fg.grad(fn_loss)))(stack), jax.vmap(jax.grad(jax_loss))(stack),
          tol=1e-8)


@pytest.mark.parametrize("name", ["det", "inv", "solve"])
def test_holomorphic_grads(x64, name):
    x = _complex((3, 3), np.complex128)
    b = _complex((3,), np.complex128)

    def make(lib):
        la = lib.linalg
        return {"det": lambda a: la.det(a),
                "inv": lambda a: lib.sum(la.inv(a) * lib.arange(1.0, 4.0)),
                "solve": lambda a: lib.sum(la.solve(a, b) ** 2)}[name]
    close(fg.grad(make(fnp), holomorphic=True)(x), jax.grad(make(jnp), holomorphic=True)(x),
          tol=1e-8)


def test_jvp_of_complex_eigh_and_svd(x64):
    x, t = _hermitian(3, np.complex128), _hermitian(3, np.complex128)
    (w, _), (dw, _) = fg.jvp(fnp.linalg.eigh, (x,), (t,))
    (jw, _), (jdw, _) = jax.jvp(jnp.linalg.eigh, (x,), (t,))
    close((w, dw), (jw, jdw), tol=1e-8)
    a, da = _complex((4, 3), np.complex128), _complex((4, 3), np.complex128)
    out, tan = fg.jvp(lambda m: fnp.linalg.svd(m, full_matrices=False), (a,), (da,))
    jout, jtan = jax.jvp(lambda m: jnp.linalg.svd(m, full_matrices=False), (a,), (da,))
    if on_cpu():
        close((out, tan), (jout, jtan), tol=1e-8)
        return
    # Off the CPU, up to the singular vectors' phases P (the JVP rule is equivariant:
    # u P has tangent du P, P* v^H has P* dv^H).
    close_factors("svd", out, jout, tol=1e-8)
    phases = column_phases(np.asarray(out[0]), np.asarray(jout[0]))
    close(tan[1], jtan[1], tol=1e-8)
    close(np.asarray(tan[0]) * phases[None, :], jtan[0], tol=1e-8)
    close(np.asarray(tan[2]) * np.conj(phases)[:, None], jtan[2], tol=1e-8)
