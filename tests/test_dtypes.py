"""The dtype policy: JAX's promotion lattice, weak types, canonicalization, x64."""
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import dtypes

ALL = [np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32,
       np.float16, dtypes.bfloat16.type, np.float32, np.complex64]
PY_SCALARS = [True, 1, 1.0, 1j]


@pytest.mark.parametrize("a,b", list(itertools.combinations_with_replacement(ALL, 2)))
def test_array_array_promotion_matches_jax(a, b):
    x, y = np.zeros(2, a), np.zeros(2, b)
    assert (fnp.asarray(x) + fnp.asarray(y)).dtype == (jnp.asarray(x) + jnp.asarray(y)).dtype


@pytest.mark.parametrize("dtype,scalar", [
    (np.uint8, 300), (np.int8, -200), (np.uint32, -1), (np.int16, 70000)])
def test_python_int_wraps_into_a_narrower_int_like_jax(dtype, scalar):
    """The int is the default int first, then converted (wrapping), eagerly and in jit."""
    x = np.arange(3, dtype=dtype)
    expected = np.asarray(jnp.asarray(x) * scalar)
    for got in (fnp.asarray(x) * scalar, scalar * fnp.asarray(x),
                fg.jit(lambda v: v * scalar)(x)):
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == expected.dtype


def test_python_int_too_large_for_the_default_int_is_an_overflow_error():
    with pytest.raises(OverflowError):
        jnp.arange(3, dtype=np.int32) * 2**31
    with pytest.raises(OverflowError, match="2147483648"):
        fnp.arange(3, dtype=np.int32) * 2**31


@pytest.mark.parametrize("weak", [False, True])
def test_array_times_python_float_keeps_the_array_type(weak):
    x = fnp.asarray(np.float32(2.0)) if not weak else fnp.asarray(2.0)
    jx = jnp.asarray(np.float32(2.0)) if not weak else jnp.asarray(2.0)
    for op in (lambda v: v * 0.5, lambda v: 0.5 * v, lambda v: v - 3, lambda v: 1.5 + v):
        assert fg.typeof(op(x)) == fg.typeof(x) and str(fg.typeof(op(x))) == str(jax.typeof(op(jx)))
        assert float(op(x)) == float(op(jx))


@pytest.mark.parametrize("a", ALL)
@pytest.mark.parametrize("scalar", PY_SCALARS, ids=lambda s: type(s).__name__)
def test_weak_scalar_promotion_matches_jax(a, scalar):
    x = np.zeros(2, a)
    expected = jnp.asarray(x) + scalar
    actual = fnp.asarray(x) + scalar
    assert actual.dtype == expected.dtype
    assert actual.weak_type == expected.aval.weak_type


@pytest.mark.parametrize("s1,s2", list(itertools.product(PY_SCALARS, repeat=2)))
def test_scalar_scalar_results_are_weak(s1, s2):
    out = fg.jit(lambda a, b: a + b)(s1, s2)
    expected = jax.jit(lambda a, b: a + b)(s1, s2)
    assert out.dtype == expected.dtype
    assert out.weak_type == expected.aval.weak_type


def test_canonicalize_narrows_64_bit_without_x64():
    assert dtypes.canonicalize(np.float64) == np.float32
    assert dtypes.canonicalize(np.int64) == np.int32
    assert fnp.asarray(np.arange(3)).dtype == np.int32
    assert fnp.asarray(np.ones(3)).dtype == np.float32


def test_x64_flag():
    fg.config.update("jax_enable_x64", True)
    try:
        assert fnp.asarray(np.ones(3)).dtype == np.float64
        assert (fnp.ones(3, np.float32) + 1.0).dtype == np.float32
        assert fg.jit(lambda x: x * 2)(np.ones(2)).dtype == np.float64
        assert fnp.arange(3).dtype == np.int64
    finally:
        fg.config.update("jax_enable_x64", False)
    assert fnp.arange(3).dtype == np.int32


def test_unsupported_dtype_is_an_error():
    with pytest.raises(TypeError, match="asarray: argument 'a' .* not a valid array"):
        fnp.asarray(np.array(["a"]))


@pytest.mark.parametrize("make", ["zeros_like", "ones_like", "empty_like", "full_like"])
@pytest.mark.parametrize("like", [np.array([1.0, 2.0]), np.array([1, 2], np.int64),
                                  np.float64(3.0), jax.ShapeDtypeStruct((2,), np.float64)],
                         ids=["f64-array", "i64-array", "f64-scalar", "f64-struct"])
def test_like_functions_canonicalize_a_64_bit_template(make, like):
    """Without x64, zeros_like of a NumPy float64 array is float32, as in jax (optax's
    LBFGS state would otherwise not match its while_loop carry)."""
    args = (like, 7) if make == "full_like" else (like,)
    got, want = getattr(fnp, make)(*args), getattr(jnp, make)(*args)
    assert (got.dtype, got.shape, got.weak_type) == (want.dtype, want.shape, want.weak_type)


@pytest.mark.parametrize("name", ["less", "less_equal", "greater", "greater_equal"])
def test_complex_ordering_is_lexicographic_like_jax(name):
    """jnp's ordered comparisons of complex values compare real parts, then imaginary
    parts (optax's rss scaling compares a complex state with 0); lax's refuse complex."""
    a = np.array([1 + 2j, 1 + 1j, 2 - 1j, np.nan + 0j, 1 + 0j], np.complex64)
    b = np.array([1 + 1j, 1 + 1j, 1 + 5j, 1 + 0j, 1 + np.nan * 1j], np.complex64)
    want = getattr(jnp, name)(a, b)
    np.testing.assert_array_equal(getattr(fnp, name)(a, b), want)
    np.testing.assert_array_equal(fg.jit(getattr(fnp, name))(a, b), want)
