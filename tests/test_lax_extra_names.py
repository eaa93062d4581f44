"""lax names filled in after the first coverage pass (reduce_precision, the special-function
primitives, ragged_dot, scatter_apply, ...), each compared with jax.lax (the oracle): values
and dtypes eagerly and under jit, errors, and derivatives and vmap where jax has them."""
import jax
import numpy as np
import pytest

import funcgraph as fg
from funcgraph import lax
from tests.util import assert_close, check_against_jax


# --- reduce_precision -----------------------------------------------------------------

def _rounding_inputs(dtype):
    rng = np.random.default_rng(0)
    edges = [0.0, -0.0, 1.0001, 3.14159, 65504.0, 65520.0, 1e5, -2.5e-3, 1e-7, 6e-8,
             np.inf, -np.inf, np.nan]
    values = np.concatenate([edges, rng.standard_normal(16) * 100])
    with np.errstate(over="ignore"):  # values past float16's range become inf, as meant
        return values.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, jax.numpy.bfloat16])
@pytest.mark.parametrize("bits", [(5, 10), (8, 7), (4, 3), (2, 0), (11, 52)])
def test_reduce_precision_matches_jax_bit_for_bit(dtype, bits):
    x = _rounding_inputs(dtype)
    expected = np.asarray(jax.lax.reduce_precision(x, *bits))
    for result in (lax.reduce_precision(x, *bits),
                   fg.jit(lambda v: lax.reduce_precision(v, *bits))(x)):
        result = np.asarray(result)
        assert result.dtype == expected.dtype
        np.testing.assert_array_equal(result.view(np.uint8), expected.view(np.uint8))


def test_reduce_precision_is_linear_in_grad_jvp_and_batches():
    x = np.array([1.0001, -3.3, 7e4], np.float32)
    f = lambda lx: lambda v: (lx.reduce_precision(v, 5, 2) * v).sum()  # noqa: E731
    assert_close(fg.grad(f(lax))(x), jax.grad(f(jax.lax))(x))
    t = np.array([1.3, 0.5, 1.0], np.float32)
    _, tangent = fg.jvp(lambda v: lax.reduce_precision(v, 5, 2), (x,), (t,))
    _, expected = jax.jvp(lambda v: jax.lax.reduce_precision(v, 5, 2), (x,), (t,))
    assert_close(tangent, expected)
    batch = np.stack([x, 3 * x])
    assert_close(fg.vmap(lambda v: lax.reduce_precision(v, 4, 3))(batch),
                 jax.vmap(lambda v: jax.lax.reduce_precision(v, 4, 3))(batch))


@pytest.mark.parametrize("operand,bits,error", [
    (np.float32(1), (0, 3), ValueError), (np.float32(1), (3, -1), ValueError),
    (np.float32(1), (1.5, 3), TypeError), (np.arange(3), (5, 2), TypeError)])
def test_reduce_precision_errors_as_jax(operand, bits, error):
    with pytest.raises(error):
        jax.lax.reduce_precision(operand, *bits)
    with pytest.raises(error, match="reduce_precision"):
        lax.reduce_precision(operand, *bits)


def test_reduce_precision_primitive_is_exported():
    assert lax.reduce_precision_p.name == "reduce_precision"
    jaxpr = fg.make_jaxpr(lambda v: lax.reduce_precision(v, 5, 2))(np.float32(1))
    assert "reduce_precision[exponent_bits=5 mantissa_bits=2]" in str(jaxpr)


# --- special functions lowered through CHLO --------------------------------------------

def test_zeta_matches_jax():
    x = np.array([1.5, 2.0, 3.0, 4.5, 1.0, 0.5, 2.0], np.float32)
    q = np.array([1.0, 0.5, 2.0, 3.0, 1.0, 1.0, -1.5], np.float32)
    check_against_jax(lax.zeta, jax.lax.zeta, x, q)
    check_against_jax(lax.zeta, jax.lax.zeta, x.astype(np.float16), q.astype(np.float16))
    assert_close(fg.vmap(lax.zeta, in_axes=(0, None))(np.stack([x, x + 1]), np.float32(2)),
                 jax.vmap(jax.lax.zeta, in_axes=(0, None))(np.stack([x, x + 1]), np.float32(2)))


def test_zeta_rejects_integers_and_mixed_dtypes_as_jax():
    for args in [(np.int32(2), np.int32(1)), (np.float32(2), np.float16(1))]:
        with pytest.raises(TypeError):
            jax.lax.zeta(*args)
        with pytest.raises(TypeError, match="zeta"):
            lax.zeta(*args)


# --- special functions computed by loop kernels (funcgraph.lax._special) ---------------

GAMMA_A = np.array([0.5, 1.0, 2.0, 5.0, 30.0, 0.1, 3.0, 1e-3, -1.0, 2.0, np.nan], np.float32)
GAMMA_X = np.array([0.3, 1.0, 2.5, 3.0, 25.0, 2.0, 0.0, 1e-2, 1.0, np.inf, 1.0], np.float32)


@pytest.mark.parametrize("name", ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad"])
def test_incomplete_gamma_family_matches_jax(name):
    check_against_jax(getattr(lax, name), getattr(jax.lax, name), GAMMA_A, GAMMA_X, scale=5)


def test_incomplete_gamma_in_half_precision_computes_wide_as_jax():
    a, x = GAMMA_A[:8].astype(np.float16), GAMMA_X[:8].astype(np.float16)
    check_against_jax(lax.igamma, jax.lax.igamma, a, x)
    check_against_jax(lax.igammac, jax.lax.igammac, a, x)


def test_betainc_and_bessel_match_jax():
    a = np.array([2.0, 0.5, 3.0, 10.0, 1.0, -1.0], np.float32)
    b = np.array([0.5, 2.0, 3.0, 1.0, 4.0, 1.0], np.float32)
    x = np.array([0.5, 0.2, 0.9, 0.3, 1.0, 0.5], np.float32)
    check_against_jax(lax.betainc, jax.lax.betainc, a, b, x, scale=5)
    z = np.array([0.0, 1e-8, 0.5, -3.0, 19.9, 20.1, 45.0, -200.0, np.inf, np.nan], np.float32)
    check_against_jax(lax.bessel_i0e, jax.lax.bessel_i0e, z)
    check_against_jax(lax.bessel_i1e, jax.lax.bessel_i1e, z)


def test_special_function_derivatives_match_jax():
    a, x = np.float32(2.0), np.array([0.4, 1.5, 6.0], np.float32)
    for name in ("igamma", "igammac"):
        f, jf = getattr(lax, name), getattr(jax.lax, name)
        for argnums in (0, 1):
            assert_close(fg.grad(lambda a, x: f(a, x).sum(), argnums)(a, x),
                         jax.grad(lambda a, x: jf(a, x).sum(), argnums)(a, x), scale=5)
    assert_close(fg.grad(lax.betainc, 2)(2.0, 3.0, 0.3), jax.grad(jax.lax.betainc, 2)(2.0, 3.0, 0.3))
    for name in ("bessel_i0e", "bessel_i1e"):
        f, jf = getattr(lax, name), getattr(jax.lax, name)
        z = np.array([-2.0, 0.0, 1e-9, 1.3, 25.0], np.float32)
        assert_close(fg.vmap(fg.grad(f))(z), jax.vmap(jax.grad(jf))(z), scale=5)
    t = np.ones(3, np.float32)
    _, tangent = fg.jvp(lambda v: lax.random_gamma_grad(a, v), (x,), (t,))
    _, expected = jax.jvp(lambda v: jax.lax.random_gamma_grad(a, v), (x,), (t,))
    assert_close(tangent, expected, scale=5)


def test_special_functions_batch_and_stage_one_primitive():
    a = np.array([[0.5, 2.0, 4.0], [1.0, 3.0, 9.0]], np.float32)
    x = np.array([1.0, 2.0, 3.0], np.float32)
    assert_close(fg.vmap(lax.igamma, (0, None))(a, x),
                 jax.vmap(jax.lax.igamma, (0, None))(a, x), scale=5)
    assert_close(fg.vmap(lax.igamma, (1, 0))(a, a.T),
                 jax.vmap(jax.lax.igamma, (1, 0))(a, a.T), scale=5)
    for f, p in [(lax.igamma, lax.igamma_p), (lax.igammac, lax.igammac_p),
                 (lax.igamma_grad_a, lax.igamma_grad_a_p)]:
        eqns = fg.make_jaxpr(f)(a, a).jaxpr.eqns
        assert [e.primitive for e in eqns] == [p]
    eqns = fg.make_jaxpr(lax.betainc)(x, x, x).jaxpr.eqns
    assert [e.primitive for e in eqns] == [lax.regularized_incomplete_beta_p]


def test_special_function_errors_as_jax():
    f32, f16, i32 = np.float32(1), np.float16(1), np.int32(1)
    cases = [("igamma", (f32, f16)), ("igammac", (i32, i32)), ("igamma_grad_a", (f32, f16)),
             ("random_gamma_grad", (f32, f16)), ("betainc", (f32, f32, f16)),
             ("bessel_i0e", (i32,)), ("bessel_i1e", (i32,))]
    for name, args in cases:
        with pytest.raises(TypeError):
            getattr(jax.lax, name)(*args)
        with pytest.raises(TypeError, match=name.replace("betainc", "regularized_incomplete_beta")):
            getattr(lax, name)(*args)
    with pytest.raises(ValueError, match="Betainc gradient"):
        jax.grad(jax.lax.betainc)(2.0, 3.0, 0.5)
    with pytest.raises(ValueError, match="Betainc gradient"):
        fg.grad(lax.betainc)(2.0, 3.0, 0.5)


# --- clear_caches ---------------------------------------------------------------------------

@pytest.mark.parametrize("mod", [jax, fg], ids=["jax", "funcgraph"])
def test_clear_caches_makes_jitted_functions_trace_again(mod):
    traces = []

    def f(x):
        traces.append(1)
        return x * 2

    jitted = mod.jit(f)
    x = np.arange(3.0, dtype=np.float32)
    jitted(x)
    jitted(x)
    assert len(traces) == 1 and jitted._cache_size() == 1
    mod.clear_caches()
    assert jitted._cache_size() == 0
    np.testing.assert_array_equal(np.asarray(jitted(x)), 2 * x)
    assert len(traces) == 2


def test_clear_caches_empties_the_eager_and_backend_caches():
    from funcgraph import backend
    from funcgraph.transforms import jit as jit_module
    fg.config.update("funcgraph_eager_numpy", False)
    try:
        lax.add(np.float32(1), np.float32(2))
    finally:
        fg.config.update("funcgraph_eager_numpy", True)
    assert jit_module._primitive_cache and backend._executables
    fg.clear_caches()
    assert not jit_module._primitive_cache and not backend._executables
    assert not jit_module._compiled_calls
    assert float(lax.exp(np.float32(0))) == 1.0  # compiles anew
