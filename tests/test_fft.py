"""funcgraph.numpy.fft and lax.fft against jax.numpy.fft: every transform over odd and
even lengths, n / s cropping and zero-padding, axes and norms, run eagerly and under
jit, differentiated through real-valued losses of the complex outputs, batched and
pushed forward; plus finite differences, the primitive against NumPy, dtypes with and
without x64, frequencies and shifts, errors, and the lowering."""
import importlib.util
import pathlib
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax
from funcgraph.primitives.fft import FftType, fft_numpy
from funcgraph.test_util import check_grads
from tests.util import assert_close, eager_and_jit

# (function name, input kind: "r" real or "c" complex, shape, keyword arguments)
CASES = [
    ("fft", "c", (4, 6), {}),
    ("fft", "r", (3, 7), {"n": 4}),
    ("fft", "c", (5, 3), {"n": 8, "axis": 0, "norm": "ortho"}),
    ("ifft", "c", (2, 9), {"norm": "forward"}),
    ("ifft", "c", (6,), {"n": 10}),
    ("rfft", "r", (3, 8), {}),
    ("rfft", "r", (2, 7), {"norm": "ortho"}),
    ("rfft", "r", (5, 4), {"n": 7, "axis": 0}),
    ("rfft", "r", (9,), {"n": 6, "norm": "forward"}),
    ("irfft", "c", (3, 5), {}),
    ("irfft", "c", (3, 5), {"n": 9}),
    ("irfft", "c", (4, 6), {"n": 4, "axis": 0, "norm": "ortho"}),
    ("irfft", "c", (7,), {"n": 16, "norm": "forward"}),
    ("fft2", "c", (2, 4, 5), {}),
    ("ifft2", "c", (4, 3, 5), {"s": (3, 7), "axes": (0, 2), "norm": "ortho"}),
    ("rfft2", "r", (3, 6, 5), {}),
    ("rfft2", "r", (6, 5), {"s": (4, 8), "norm": "forward"}),
    ("irfft2", "c", (2, 4, 5), {}),
    ("irfft2", "c", (4, 5), {"s": (5, 7), "axes": (1, 0)}),
    ("fftn", "c", (3, 4, 5), {}),
    ("fftn", "r", (2, 3, 2, 3), {"norm": "ortho"}),  # 4 axes: split into 2 + 2
    ("ifftn", "c", (3, 4, 5), {"axes": (2, 0), "s": (6, 2)}),
    ("rfftn", "r", (3, 4, 6), {"axes": (0, 1)}),
    ("rfftn", "r", (2, 2, 3, 2, 4), {}),  # 5 axes: 3 + 2
    ("irfftn", "c", (3, 4, 5), {"s": (3, 5, 9)}),
    ("irfftn", "c", (2, 3, 2, 3), {"norm": "forward"}),
    ("hfft", "c", (3, 5), {}),
    ("hfft", "c", (6, 4), {"n": 7, "axis": 0, "norm": "ortho"}),
    ("ihfft", "r", (3, 8), {}),
    ("ihfft", "r", (5, 3), {"n": 6, "axis": 0}),
]
IDS = [f"{name}-{kind}{'x'.join(map(str, shape))}-" +
       "-".join(f"{k}{v}" for k, v in kw.items()) for name, kind, shape, kw in CASES]


def _input(kind, shape, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if kind == "c":
        return (x + 1j * rng.standard_normal(shape)).astype(np.complex64)
    return x.astype(np.float32)


def _fns(name, kw):
    return (lambda x: getattr(fnp.fft, name)(x, **kw),
            lambda x: getattr(jnp.fft, name)(x, **kw))


def _loss(transform, np_like):
    """A real-valued loss of a complex (or real) output: weighted |out|^2 plus a weighted
    real part, so every output element's real and imaginary parts matter."""
    def loss(x):
        out = transform(x)
        w = np.cos(np.arange(int(np.prod(out.shape)))).reshape(out.shape).astype(np.float32)
        return np_like.sum(np_like.abs(out) ** 2 * w) + np_like.sum(np_like.real(out) * (1 - w))
    return loss


def _scale(x):
    return max(1.0, float(np.abs(np.asarray(x)).max()))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_forward_eager_and_jit(case):
    name, kind, shape, kw = case
    x = _input(kind, shape)
    ours, theirs = _fns(name, kw)
    expected = jax.jit(theirs)(x)
    for result in eager_and_jit(ours, x):
        assert_close(result, expected, scale=_scale(expected))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_grad_of_real_loss(case):
    name, kind, shape, kw = case
    x = _input(kind, shape)
    ours, theirs = _fns(name, kw)
    expected = jax.jit(jax.grad(_loss(theirs, jnp)))(x)
    grad = fg.grad(_loss(ours, fnp))
    for result in (grad(x), fg.jit(grad)(x)):
        assert_close(result, expected, scale=_scale(expected))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_vmap(case):
    """A batch axis in the middle of the operand (at 1, or 0 for vectors)."""
    name, kind, shape, kw = case
    axis = min(1, len(shape) - 1)
    batched_shape = shape[:axis] + (3,) + shape[axis:]
    x = _input(kind, batched_shape, seed=1)
    ours, theirs = _fns(name, kw)
    expected = jax.jit(jax.vmap(theirs, in_axes=axis))(x)
    assert_close(fg.vmap(ours, in_axes=axis)(x), expected, scale=_scale(expected))
    assert_close(fg.jit(fg.vmap(ours, in_axes=axis))(x), expected, scale=_scale(expected))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jvp(case):
    name, kind, shape, kw = case
    x, t = _input(kind, shape), _input(kind, shape, seed=2)
    ours, theirs = _fns(name, kw)
    out, tangent = fg.jvp(ours, (x,), (t,))
    e_out, e_tangent = jax.jit(lambda x, t: jax.jvp(theirs, (x,), (t,)))(x, t)
    assert_close(out, e_out, scale=_scale(e_out))
    assert_close(tangent, e_tangent, scale=_scale(e_tangent))


FD_CASES = [c for c in CASES if c[0] in ("fft", "rfft", "irfft", "rfft2", "irfftn", "ihfft")]


@pytest.mark.parametrize("case", FD_CASES, ids=[IDS[CASES.index(c)] for c in FD_CASES])
def test_finite_differences(case):
    """jvp against central differences and vjp against jvp, through the transform and
    through a nonlinear function of it (second order too)."""
    name, kind, shape, kw = case
    x = _input(kind, shape)
    ours, _ = _fns(name, kw)
    check_grads(ours, (x,), order=1, modes=("fwd", "rev"), atol=2e-2, rtol=2e-2)
    check_grads(lambda x: fnp.abs(ours(x)) ** 2, (x,), order=2, modes=("fwd", "rev"),
                atol=5e-2, rtol=5e-2)


def test_vmap_of_grad_and_grad_of_grad():
    x = _input("r", (4, 7))

    def make_loss(np_like, fft_mod):
        def loss(x):
            spectrum = fft_mod.rfft(x, n=10)
            return np_like.sum(np_like.abs(fft_mod.irfft(spectrum * spectrum, n=9)) ** 2)
        return loss
    ours, theirs = make_loss(fnp, fnp.fft), make_loss(jnp, jnp.fft)
    expected = jax.jit(jax.vmap(jax.grad(theirs)))(x)
    assert_close(fg.vmap(fg.grad(ours))(x), expected, scale=_scale(expected))
    hvp = lambda grad, loss: grad(lambda y: grad(loss)(y).sum())(x[0])  # noqa: E731
    expected = jax.jit(lambda: hvp(jax.grad, theirs))()
    assert_close(hvp(fg.grad, ours), expected, scale=_scale(expected))


# --- lax.fft and the primitive ----------------------------------------------------------

LAX_CASES = [
    ("fft", "c", (3, 8), (8,)),
    ("ifft", "c", (2, 3, 5), (3, 5)),
    ("fft", "c", (2, 3, 4, 5), (3, 4, 5)),
    ("rfft", "r", (4, 7), (4, 7)),
    ("rfft", "r", (2, 6), (6,)),
    ("irfft", "c", (3, 5), (8,)),
    ("irfft", "c", (3, 5), (9,)),
    ("irfft", "c", (2, 3, 4), (2, 3, 6)),
]


@pytest.mark.parametrize("case", LAX_CASES, ids=str)
def test_lax_fft_against_jax_and_numpy(case):
    fft_type, kind, shape, lengths = case
    x = _input(kind, shape)
    expected = jax.lax.fft(x, fft_type, lengths)
    for result in eager_and_jit(lambda x: lax.fft(x, fft_type, lengths), x):
        assert_close(result, expected, scale=_scale(expected))
    assert_close(fft_numpy(x, FftType[fft_type.upper()], lengths), expected,
                 scale=_scale(expected))
    ct = _input("c" if fft_type != "irfft" else "r", expected.shape, seed=3)
    _, pullback = fg.vjp(lambda x: lax.fft(x, FftType[fft_type.upper()], lengths), x)
    _, e_pullback = jax.vjp(lambda x: jax.lax.fft(x, fft_type, lengths), x)
    e_ct_in, = e_pullback(ct.astype(expected.dtype))
    assert_close(pullback(ct.astype(expected.dtype))[0], e_ct_in, scale=_scale(e_ct_in))


@pytest.mark.cpu_only  # XLA's CPU FFT (ducc) matches NumPy's bit for bit; cuFFT need not
@pytest.mark.parametrize("case", LAX_CASES, ids=str)
def test_double_precision_matches_numpy(case, x64):
    """NumPy and XLA run the same one-axis transforms in double precision, bit for bit
    (several axes go in different orders)."""
    fft_type, kind, shape, lengths = case
    x = _input(kind, shape).astype(np.complex128 if kind == "c" else np.float64)
    result = np.asarray(fg.jit(lambda x: lax.fft(x, fft_type, lengths))(x))
    expected = fft_numpy(x, FftType[fft_type.upper()], lengths)
    if len(lengths) == 1:
        np.testing.assert_array_equal(result, expected)
    assert_close(result, expected, scale=_scale(expected))


def test_fft_type_enum_and_names():
    assert [(t.name, int(t)) for t in lax.FftType] == \
        [(t.name, int(t)) for t in jax.lax.FftType]
    x = _input("c", (4,))
    for name in ("fft", "FFT", lax.FftType.FFT):
        assert_close(lax.fft(x, name, (4,)), jax.lax.fft(x, "fft", (4,)))
    assert lax.fft(x, "fft", ()) is not None and lax.fft(x, "fft", ()).shape == (4,)


def test_lowers_to_stablehlo_fft():
    text = fg.jit(lambda x: lax.fft(x, "irfft", (3, 8))).lower(_input("c", (2, 3, 5))).as_text()
    assert "stablehlo.fft" in text and "IRFFT" in text and "3, 8" in text
    jaxpr = fg.make_jaxpr(lambda x: fnp.fft.rfft(x))(_input("r", (6,)))
    assert [e.prim.name for e in jaxpr.jaxpr.eqns] == ["fft"]


# --- dtypes -----------------------------------------------------------------------------

DTYPE_INPUTS = [np.float32, np.int32, np.bool_, np.uint8, np.float16, np.complex64]


@pytest.mark.parametrize("dtype", DTYPE_INPUTS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
def test_dtypes(name, dtype):
    x = (np.arange(6) % 3).astype(dtype)
    _check_same_outcome(lambda: getattr(fnp.fft, name)(x), lambda: getattr(jnp.fft, name)(x))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fftn", "hfft"])
def test_dtypes_x64(name, dtype, x64):
    x = (np.arange(8) % 5).astype(dtype)
    _check_same_outcome(lambda: getattr(fnp.fft, name)(x), lambda: getattr(jnp.fft, name)(x))


def test_x64_grad_and_jit_complex128(x64):
    x = _input("r", (3, 10)).astype(np.float64)
    loss = _loss(lambda x: fnp.fft.rfft2(x, norm="ortho"), fnp)
    expected = jax.jit(jax.grad(_loss(lambda x: jnp.fft.rfft2(x, norm="ortho"), jnp)))(x)
    assert_close(fg.jit(fg.grad(loss))(x), expected)
    assert fg.jit(fnp.fft.fft)(x).dtype == np.complex128


def _check_same_outcome(ours, theirs):
    """Same value and dtype, or the same exception type."""
    try:
        expected = theirs()
    except Exception as e:  # noqa: BLE001  (whatever jax raises, we must raise too)
        with pytest.raises(type(e)):
            ours()
        return
    assert_close(ours(), expected, scale=_scale(expected))


# --- frequencies and shifts -------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 4, 5])
@pytest.mark.parametrize("d", [1.0, 0.1, 2])
@pytest.mark.parametrize("dtype", [None, np.float32, np.complex64])
def test_fftfreq_and_rfftfreq(n, d, dtype):
    assert_close(fnp.fft.fftfreq(n, d, dtype=dtype), jnp.fft.fftfreq(n, d, dtype=dtype))
    if dtype is not np.complex64:
        assert_close(fnp.fft.rfftfreq(n, d, dtype=dtype), jnp.fft.rfftfreq(n, d, dtype=dtype))


def test_fftfreq_with_traced_spacing():
    assert_close(fg.jit(lambda d: fnp.fft.fftfreq(6, d))(np.float32(0.5)),
                 jnp.fft.fftfreq(6, np.float32(0.5)))


@pytest.mark.parametrize("axes", [None, 0, 1, (1, 0), [1]])
@pytest.mark.parametrize("shift", ["fftshift", "ifftshift"])
def test_shifts(shift, axes):
    x = np.arange(15).reshape(3, 5)
    assert_close(getattr(fnp.fft, shift)(x, axes), getattr(jnp.fft, shift)(x, axes))
    assert_close(fg.jit(lambda x: getattr(fnp.fft, shift)(x, axes))(x),
                 getattr(jnp.fft, shift)(x, axes))


def test_shift_roundtrip_and_grad():
    x = _input("r", (4, 5))
    assert_close(fnp.fft.ifftshift(fnp.fft.fftshift(x)), x)
    w = np.arange(20, dtype=np.float32).reshape(4, 5)
    expected = jax.grad(lambda x: jnp.sum(jnp.fft.fftshift(x) * w))(x)
    assert_close(fg.grad(lambda x: fnp.sum(fnp.fft.fftshift(x) * w))(x), expected)


# --- errors, as jax raises them -----------------------------------------------------------

ERROR_CASES = [
    ("fft", (np.ones(3),), {"norm": "bad"}),
    ("fft", (np.ones(3),), {"n": 0}),
    ("fft", (np.ones(3),), {"axis": (0,)}),
    ("fft", (np.ones(3),), {"axis": 2}),
    ("fft", ([1.0, 2.0],), {}),
    ("rfft", (np.ones(3, np.complex64),), {}),
    ("fftn", (np.ones((2, 3)),), {"axes": (0, 0)}),
    ("fftn", (np.ones(3),), {"s": (2, 3)}),
    ("fftn", (np.ones((2, 3)),), {"s": (2, 3), "axes": (0,)}),
    ("fft2", (np.ones((2, 3)),), {"axes": (0,)}),
    ("fft2", (np.ones(3),), {}),
    ("fftfreq", ((4,),), {}),
    ("fftfreq", (4, [1.0]), {}),
    ("fftshift", ([1, 2, 3],), {}),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=lambda c: f"{c[0]}-{c[2]}")
def test_errors_match_jax(case):
    name, args, kw = case
    with pytest.raises(Exception) as expected:
        getattr(jnp.fft, name)(*args, **kw)
    with pytest.raises(expected.type) as ours:
        getattr(fnp.fft, name)(*args, **kw)
    assert str(ours.value).replace("funcgraph.numpy", "jax.numpy") == str(expected.value)


@pytest.mark.parametrize("args", [
    (np.ones(3), "bad", (3,)),
    (np.ones(3, np.complex64), "fft", (4,)),
    (np.ones((2, 3), np.complex64), "irfft", (3, 4)),
    (np.ones(3), "fft", (1, 3)),
])
def test_lax_errors_match_jax(args):
    with pytest.raises(Exception) as expected:
        jax.lax.fft(*args)
    with pytest.raises(expected.type, match=re.escape(str(expected.value))):
        lax.fft(*args)


# --- the PDE example, run by funcgraph and by jax -------------------------------------------

def _load_example():
    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "fft_pde.py"
    spec = importlib.util.spec_from_file_location("fft_pde_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pde_example_matches_jax():
    """The heat solution, the Burgers solution and the gradients of the final energy
    (through a jitted fori_loop of pseudo-spectral steps) agree with jax's."""
    example = _load_example()
    ours, theirs = example.build(fg, fnp), example.build(jax, jnp)
    x = example.grid()
    u0_2d = np.sin(x)[:, None] * np.cos(2 * x)[None, :]
    args_2d = (u0_2d, np.float32(0.1), np.float32(0.7))
    assert_close(ours["heat_2d"](*args_2d), theirs["heat_2d"](*args_2d))
    u0, nu = example.initial_condition(), np.float32(0.05)
    assert_close(ours["burgers"](u0, nu), theirs["burgers"](u0, nu), scale=10)
    assert_close(ours["final_energy"](u0, nu), theirs["final_energy"](u0, nu), scale=10)
    for g, e in zip(ours["energy_grads"](u0, nu), theirs["energy_grads"](u0, nu), strict=True):
        assert_close(g, e, scale=50)
