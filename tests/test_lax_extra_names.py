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
