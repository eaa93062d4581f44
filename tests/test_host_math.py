"""Eager sin, cos, tan, arctan2 and cbrt by the C math library
(funcgraph/primitives/host_math.py): XLA's results bit for bit, a fallback to the
compiled path wherever the library does not serve, and the NumPy path's speed."""
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import jax
import jax.numpy as jnp

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph.interpreters.eval import NoHostImpl, impl_rules
from funcgraph.primitives import elementwise as ew
from funcgraph.primitives import host_math
from funcgraph.transforms import jit as jit_module

pytestmark = pytest.mark.cpu_only  # the eager NumPy path serves the CPU only

UNARY = ["sin", "cos", "tan", "cbrt"]
DTYPES = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16]
needs_libm = pytest.mark.skipif(host_math._libm is None, reason="funcgraph._libm not built")


def _inputs(dtype, n=3000):
    rng = np.random.default_rng(0)
    special = [0.0, -0.0, 1e-40, -1e-40, 1e-310, 1.0, np.pi, 1e4, 1e30, -1e30, np.inf,
               -np.inf, np.nan]
    with np.errstate(over="ignore"):
        special = np.array(special).astype(dtype)
    values = rng.standard_normal(n) * 10.0 ** rng.integers(-6, 7, n)
    with np.errstate(over="ignore"):
        return np.concatenate([special, values.astype(dtype)])


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype.kind == "c":  # compare the real and imaginary parts
        a, b = (v.view(v.real.dtype) for v in (a, b))
    nan = np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64))
    assert ((a.view(f"u{a.itemsize}") == b.view(f"u{b.itemsize}")) | nan).all()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", UNARY)
def test_eager_unary_is_xlas_result_bit_for_bit(x64, name, dtype):
    x = _inputs(dtype)
    eager = getattr(fnp, name)(fnp.asarray(x))
    _same_bits(eager, jax.jit(getattr(jnp, name))(x))
    _same_bits(eager, fg.jit(getattr(fnp, name))(x))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_eager_atan2_is_xlas_result_bit_for_bit(x64, dtype):
    x = _inputs(dtype)
    y = np.random.default_rng(1).permutation(x)
    _same_bits(fnp.arctan2(fnp.asarray(x), fnp.asarray(y)), jax.jit(jnp.arctan2)(x, y))
    # a rank-0 operand meets a shaped one, either side; Python scalars
    _same_bits(fnp.arctan2(x, dtype(2.0)), jax.jit(jnp.arctan2)(x, dtype(2.0)))
    _same_bits(fnp.arctan2(dtype(-3.0), y), jax.jit(jnp.arctan2)(dtype(-3.0), y))
    _same_bits(fnp.arctan2(1.5, fnp.asarray(y)), jnp.arctan2(1.5, y))


@needs_libm
def test_served_by_the_library_not_compiled():
    x = fnp.asarray(_inputs(np.float32))
    fnp.sin(x), fnp.cbrt(x), fnp.arctan2(x, x)  # each checked against XLA (compiled) once
    before = len(jit_module._primitive_cache)
    fnp.sin(x * 2.0)
    fnp.cbrt(x[:10])
    fnp.arctan2(x, x)
    assert len(jit_module._primitive_cache) == before
    assert host_math._served["sin"][np.dtype(np.float32)] is True
    assert type(impl_rules[ew.sin_p]) is host_math._libm.UnaryImpl


def test_scalars_and_shapes():
    for x in [1.0, np.float32(0.5), np.zeros((2, 0, 3), np.float32),
              np.arange(6.0, dtype=np.float32).reshape(2, 3).T]:  # not C-contiguous
        _same_bits(fnp.sin(x), jnp.sin(x))
    assert fnp.sin(1.0).weak_type and fnp.sin(1.0).shape == ()


def test_other_dtypes_run_compiled():
    """Complex numbers are not the library's: the impl raises NoHostImpl and the op runs
    compiled (sin and cos of complex numbers as jax writes them: the real part of
    sin(-0.5j) is +0, XLA's own complex sine gives -0)."""
    z = np.array([1 + 2j, -0.5j, 3.0, 1e-3 + 1e-4j], np.complex64)
    with pytest.raises(NoHostImpl):
        impl_rules[ew.sin_p](z)
    _same_bits(fnp.sin(z), jnp.sin(z))
    _same_bits(fnp.cos(z * 1j), jnp.cos(z * 1j))
    _same_bits(fg.jit(fnp.sin)(z.astype(np.complex128)), jnp.sin(z.astype(np.complex128)))
    _same_bits(fnp.arctan2(fnp.ones(3, np.int32), 2), jnp.arctan2(jnp.ones(3, np.int32), 2))


@pytest.fixture
def sin_unchecked():
    """sin's checks forgotten during the test (the dict is UnaryImpl's own: it is
    emptied and refilled, not replaced)."""
    checked = host_math._served["sin"]
    saved = dict(checked)
    checked.clear()
    yield checked
    checked.clear()
    checked.update(saved)


def test_a_disagreeing_library_is_not_used(monkeypatch, sin_unchecked):
    """Where the probe finds any result that differs from XLA's (another XLA), the op
    runs compiled: here the check is made to fail."""
    monkeypatch.setattr(host_math, "_agrees_with_xla", lambda prim, dtype, arity: False)
    x = _inputs(np.float32, n=1234)  # a shape of its own: not compiled before
    before = len(jit_module._primitive_cache)
    _same_bits(fnp.sin(fnp.asarray(x)), jax.jit(jnp.sin)(x))
    assert len(jit_module._primitive_cache) > before
    assert sin_unchecked[np.dtype(np.float32)] is False


_WITHOUT_LIBM = """
import sys
sys.modules["funcgraph._libm"] = None  # as where no C compiler built it
import numpy as np, jax, jax.numpy as jnp
import funcgraph as fg, funcgraph.numpy as fnp
from funcgraph.primitives import host_math
from funcgraph.transforms import jit as jit_module
assert host_math._libm is None
x = np.linspace(-50, 50, 1001, dtype=np.float32)
before = len(jit_module._primitive_cache)
for f, g in [(fnp.tan, jnp.tan), (fnp.sin, jnp.sin)]:
    assert np.asarray(f(x)).tobytes() == np.asarray(jax.jit(g)(x)).tobytes()
assert np.asarray(fnp.arctan2(x, 2.0)).tobytes() == np.asarray(jnp.arctan2(x, 2.0)).tobytes()
assert len(jit_module._primitive_cache) == before + 3  # each ran compiled
z = (x + 1j * x[::-1]).astype(np.complex64)  # complex products run compiled (Python impl)
assert np.asarray(fnp.asarray(z) * z).tobytes() == np.asarray(jnp.asarray(z) * z).tobytes()
assert np.asarray(fnp.asarray(x) * 3).tobytes() == (x * np.float32(3)).tobytes()
print("ok")
"""


def test_without_the_c_module_the_ops_run_compiled():
    out = subprocess.run([sys.executable, "-c", _WITHOUT_LIBM], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.split()[-1] == "ok", out.stderr


@needs_libm
def test_the_probe_compares_with_the_compiled_primitive():
    assert host_math._agrees_with_xla(ew.cos_p, np.dtype(np.float32), 1)
    assert host_math._agrees_with_xla(ew.atan2_p, np.dtype(np.float64), 2)
    special, random = host_math._probe(np.dtype(np.float32))
    assert np.isnan(special).any() and np.isinf(special).any()
    assert (np.abs(special[special != 0]) < np.finfo(np.float32).tiny).any()  # subnormals
    assert host_math._probe(np.dtype(np.float16))[1].size == 2 ** 16


@needs_libm
def test_the_floating_point_mode_is_restored():
    """The library runs with subnormals flushed (XLA's mode); NumPy after it does not."""
    fnp.sin(np.ones(4, np.float32))
    tiny = np.array([1e-38], np.float32)
    assert (tiny * np.float32(0.01))[0] != 0


def test_constant_folding_under_jit_gives_xlas_numbers():
    f = lambda: fnp.sin(fnp.arange(5.0) * 1e3) + fnp.arctan2(fnp.arange(5.0), 3.0)
    g = lambda: jnp.sin(jnp.arange(5.0) * 1e3) + jnp.arctan2(jnp.arange(5.0), 3.0)
    _same_bits(fg.jit(f)(), jax.jit(g)())


def test_without_the_numpy_path_nothing_is_folded_by_the_library():
    """With the eager NumPy path off (as on a GPU default device) the impl serves
    nothing, so jit keeps sin for XLA."""
    fg.config.update("funcgraph_eager_numpy", False)
    try:
        text = fg.jit(lambda: fnp.sin(fnp.arange(3.0))).lower().as_text()
    finally:
        fg.config.update("funcgraph_eager_numpy", True)
    assert "stablehlo.sine" in text
    assert "stablehlo.sine" not in fg.jit(lambda: fnp.sin(fnp.arange(3.0))).lower().as_text()


def test_grad_and_vmap_of_eager_sin():
    x = np.linspace(-2, 2, 7, dtype=np.float32)
    _same_bits(fg.vmap(fg.grad(fnp.sin))(x), jax.vmap(jax.grad(jnp.sin))(x))
    _same_bits(fg.grad(lambda v: fnp.arctan2(v, 2.0))(np.float32(0.3)),
               jax.grad(lambda v: jnp.arctan2(v, 2.0))(np.float32(0.3)))


@needs_libm
def test_the_c_impl_is_its_python_fallback():
    """UnaryImpl's C case and the Python impl it falls back to give the same arrays, and
    the C case hands every other input to the fallback."""
    fnp.sin(np.ones(3, np.float32))  # checked against XLA
    impl = impl_rules[ew.sin_p]
    x = _inputs(np.float32)
    with np.errstate(over="ignore"):
        narrow = x.astype(np.float16)
    cases = [x, x.astype(np.float64), x[::2], x.reshape(-1, 1)[:5], np.float32(0.5),
             np.array(2.0, np.float32), narrow, np.zeros((0, 3), np.float32),
             x.astype(">f4")]
    for value in cases:
        try:
            want = impl.fallback(value)
        except NoHostImpl:
            with pytest.raises(NoHostImpl):
                impl(value)
            continue
        _same_bits(impl(value), want)
        assert type(impl(value)) is type(want)
    with pytest.raises(NoHostImpl):
        impl(np.ones(3, np.complex64))


@needs_libm
def test_multiply_is_numpys_ufunc_for_real_operands_and_compiled_for_complex():
    """mul's eager impl (_libm.RealImpl): NumPy's multiply for every dtype but complex,
    whose operands go to the fallback (which runs the primitive compiled); no references
    kept."""
    impl = impl_rules[ew.mul_p]
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    for a, b in [(x, x), (x, np.float32(2)), (x.reshape(7, 1), x), (x.astype(np.int32), 3),
                 (np.float64(2.5), 4.0), (x[::2], x[::2] * 2)]:
        want = np.multiply(a, b)
        got = impl(a, b)
        assert type(got) is type(want) and np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)
    z = x.astype(np.complex64)
    for args in [(z, z), (z, np.complex64(1j))]:
        with pytest.raises(NoHostImpl):
            impl(*args)
    before = sys.getrefcount(x), sys.getrefcount(x.dtype)
    for _ in range(1000):
        impl(x, x)
    assert (sys.getrefcount(x), sys.getrefcount(x.dtype)) == before


@needs_libm
def test_the_c_impl_keeps_no_references():
    x = np.ones(16, np.float32)
    impl = impl_rules[ew.cos_p]
    impl(x)
    before = sys.getrefcount(x), sys.getrefcount(x.dtype)
    for _ in range(1000):
        impl(x)
    assert (sys.getrefcount(x), sys.getrefcount(x.dtype)) == before


@needs_libm
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", UNARY + ["arctan2"])
def test_every_array_length_is_xlas(x64, name, dtype):
    """XLA's code for a function may depend on the array's length (its float32 atan is
    the library's only for some lengths, so atan runs compiled): each served function
    gives XLA's bits at short lengths too."""
    values = _inputs(dtype, n=200)
    for n in (1, 2, 3, 5, 8, 13, 16, 23, 32, 33, 64, 100):
        x = values[13:13 + n]  # random values
        if name == "arctan2":
            y = values[-n:]
            _same_bits(fnp.arctan2(fnp.asarray(x), fnp.asarray(y)), jax.jit(jnp.arctan2)(x, y))
        else:
            _same_bits(getattr(fnp, name)(fnp.asarray(x)), jax.jit(getattr(jnp, name))(x))


def test_atan_runs_compiled():
    assert impl_rules.get(ew.atan_p) is None
    x = np.ones(8, np.float32)  # a length where XLA's atan is not the library's
    _same_bits(fnp.arctan(x), jax.jit(jnp.arctan)(x))
