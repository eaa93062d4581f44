"""Smaller API pieces against jax: lax.batch_matmul, numpy.block and friends,
nn.dot_product_attention (values and gradients), scipy.special."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
import funcgraph.scipy.special as fsp
from funcgraph import lax

rng = np.random.default_rng(0)


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def test_batch_matmul():
    a = rng.normal(size=(3, 2, 4)).astype(np.float32)
    b = rng.normal(size=(3, 4, 5)).astype(np.float32)
    close(lax.batch_matmul(a, b), jax.lax.batch_matmul(a, b))
    with pytest.raises(TypeError, match="equal rank"):
        lax.batch_matmul(a, b[0])


@pytest.mark.parametrize("case", ["matrix", "mixed_ranks", "vector"])
def test_block(case):
    A, B = np.ones((2, 2), np.float32), np.zeros((2, 3), np.float32)
    C = np.arange(5, dtype=np.float32)
    blocks = {"matrix": [[A, B], [C[None, :2], C[None, :3]]],
              "mixed_ranks": [[A, B], [np.ones(5, np.float32)]],
              "vector": [1.0, np.ones(2, np.float32), C]}[case]
    close(fnp.block(blocks), np.block(blocks))


def test_index_helpers_and_small_routines():
    for got, want in zip(fnp.triu_indices(4, 1), np.triu_indices(4, 1)):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(fnp.tril_indices_from(np.ones((3, 5))), np.tril_indices_from(np.ones((3, 5)))):
        np.testing.assert_array_equal(got, want)
    p = np.array([1.0, -2.0, 3.0], np.float32)
    close(fnp.polyval(p, np.float32(1.5)), jnp.polyval(p, np.float32(1.5)))
    # Coefficients with more axes broadcast against x (diffrax's local interpolation).
    p2, x2 = np.arange(12, dtype=np.float32).reshape(4, 3), np.float32(0.5)
    close(fnp.polyval(p2, x2), jnp.polyval(p2, x2))
    assert fnp.polyval(np.array([1, 2]), 2.0).dtype == jnp.polyval(np.array([1, 2]), 2.0).dtype
    keys = (np.array([3, 1, 2, 1]), np.array([0, 1, 0, 1]))
    np.testing.assert_array_equal(fnp.lexsort(keys), np.lexsort(keys))
    y = np.array([1.0, 4.0, 9.0], np.float32)
    close(fnp.trapezoid(y, dx=0.5), jnp.trapezoid(y, dx=0.5))


def attention_inputs(t=6, s=6, heads=4, kv_heads=2):
    q = rng.normal(size=(2, t, heads, 8)).astype(np.float32)
    k = rng.normal(size=(2, s, kv_heads, 8)).astype(np.float32)
    v = rng.normal(size=(2, s, kv_heads, 8)).astype(np.float32)
    return q, k, v


@pytest.mark.parametrize("options", ["plain", "scale", "causal", "bias_mask", "unbatched"])
def test_dot_product_attention(options):
    q, k, v = attention_inputs()
    kwargs = {"plain": {}, "scale": {"scale": 0.3}, "causal": {"is_causal": True},
              "bias_mask": {"bias": rng.normal(size=(2, 4, 6, 6)).astype(np.float32),
                            "mask": rng.random((2, 4, 6, 6)) < 0.7}, "unbatched": {}}[options]
    if options == "unbatched":
        q, k, v = q[0], k[0], v[0]
    close(fg.nn.dot_product_attention(q, k, v, **kwargs),
          jax.nn.dot_product_attention(q, k, v, **kwargs))
    loss = lambda f: lambda q: (f(q, k, v, **kwargs) ** 2).sum()
    close(fg.grad(loss(fg.nn.dot_product_attention))(q),
          jax.grad(loss(jax.nn.dot_product_attention))(q), 1e-4)


def test_scipy_special():
    x = np.linspace(-2, 2, 7).astype(np.float32)
    p = np.linspace(0.05, 0.95, 7).astype(np.float32)
    import jax.scipy.special as jsp
    for name, arg in [("expit", x), ("logit", p), ("erf", x), ("erfc", x), ("gammaln", p + 1),
                      ("digamma", p + 1), ("ndtr", x), ("ndtri", p), ("entr", p)]:
        close(getattr(fsp, name)(arg), getattr(jsp, name)(arg), 1e-5)
    close(fsp.xlogy(np.float32(0), np.float32(0)), jsp.xlogy(np.float32(0), np.float32(0)))
    close(fsp.logsumexp(x), jsp.logsumexp(x))
