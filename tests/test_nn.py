"""funcgraph.nn against jax.nn: values, gradients (incl. at kinks), stability, initializers."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
from funcgraph import nn, random
from tests.util import assert_close, assert_exact_on_cpu, check_against_jax

X = np.array([-30.0, -6.5, -1.0, -0.25, 0.0, 0.5, 1.0, 6.0, 7.5, 40.0], np.float32)

ACTIVATIONS = ["relu", "relu6", "leaky_relu", "elu", "celu", "selu", "gelu", "silu", "swish",
               "sigmoid", "softplus", "soft_sign", "log_sigmoid", "hard_tanh"]


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_values(name):
    check_against_jax(getattr(nn, name), getattr(jax.nn, name), X, scale=4)


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_grads(name):
    """Elementwise derivative, including at the kinks 0 and 6 (relu'(0) = 0 etc.)."""
    got = fg.vmap(fg.grad(getattr(nn, name)))(X)
    expected = jax.vmap(jax.grad(getattr(jax.nn, name)))(X)
    assert_close(got, np.asarray(expected), scale=4)


def test_activation_grads_under_jit():
    got = fg.jit(fg.vmap(fg.grad(nn.relu6)))(X)
    assert_close(got, np.asarray(jax.vmap(jax.grad(jax.nn.relu6))(X)))


@pytest.mark.parametrize("approximate", [True, False])
def test_gelu_modes(approximate):
    check_against_jax(lambda x: nn.gelu(x, approximate=approximate),
                      lambda x: jax.nn.gelu(x, approximate=approximate), X, scale=4)
    got = fg.vmap(fg.grad(lambda x: nn.gelu(x, approximate)))(X)
    assert_close(got, np.asarray(jax.vmap(jax.grad(lambda x: jax.nn.gelu(x, approximate)))(X)),
                 scale=4)


def test_activation_params_and_dtypes():
    check_against_jax(lambda x: nn.leaky_relu(x, 0.2), lambda x: jax.nn.leaky_relu(x, 0.2), X)
    check_against_jax(lambda x: nn.elu(x, 0.5), lambda x: jax.nn.elu(x, 0.5), X)
    check_against_jax(lambda x: nn.celu(x, 2.0), lambda x: jax.nn.celu(x, 2.0), X)
    x16 = X.astype(np.float16)
    for name in ["relu", "sigmoid", "gelu", "softplus"]:
        check_against_jax(getattr(nn, name), getattr(jax.nn, name), x16)
    ints = np.array([-2, 0, 3], np.int32)
    check_against_jax(nn.relu, jax.nn.relu, ints)


A = np.random.RandomState(0).randn(3, 4).astype(np.float32) * 3


@pytest.mark.parametrize("kwargs", [dict(), dict(axis=0), dict(axis=1, keepdims=True),
                                    dict(axis=(0, 1)), dict(axis=-1, b=np.float32(2.0)),
                                    dict(axis=1, b=np.array([1, -1, 2, 0.5], np.float32),
                                         return_sign=True)])
def test_logsumexp(kwargs):
    check_against_jax(lambda a: nn.logsumexp(a, **kwargs),
                      lambda a: jax.nn.logsumexp(a, **kwargs), A)


def test_logsumexp_stable_and_grad():
    big = np.array([1000.0, 1000.0, -1000.0], np.float32)
    assert_close(nn.logsumexp(big), np.float32(1000.0 + np.log(2.0)))
    assert_close(fg.grad(nn.logsumexp)(big), np.asarray(jax.grad(jax.nn.logsumexp)(big)))
    inf = np.array([-np.inf, -np.inf], np.float32)
    assert_close(nn.logsumexp(inf), np.asarray(jax.nn.logsumexp(inf)))
    f = lambda a: nn.logsumexp(a, axis=1).sum()
    assert_close(fg.grad(f)(A), np.asarray(jax.grad(lambda a: jax.nn.logsumexp(a, 1).sum())(A)))


@pytest.mark.parametrize("axis", [-1, 0, (0, 1)])
def test_softmax_and_log_softmax(axis):
    check_against_jax(lambda a: nn.softmax(a, axis), lambda a: jax.nn.softmax(a, axis), A)
    check_against_jax(lambda a: nn.log_softmax(a, axis),
                      lambda a: jax.nn.log_softmax(a, axis), A)
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    for ours, theirs in [(nn.softmax, jax.nn.softmax), (nn.log_softmax, jax.nn.log_softmax)]:
        got = fg.grad(lambda a: (ours(a, axis) * w).sum())(A)
        expected = jax.grad(lambda a: (theirs(a, axis) * w).sum())(A)
        assert_close(got, np.asarray(expected), scale=10)
        got_jvp = fg.jvp(lambda a: ours(a, axis), (A,), (w,))[1]
        expected_jvp = jax.jvp(lambda a: theirs(a, axis), (A,), (w,))[1]
        assert_close(got_jvp, np.asarray(expected_jvp), scale=10)


def test_softmax_large_inputs():
    x = np.array([1000.0, 1001.0, 999.0], np.float32)
    assert_close(nn.softmax(x), np.asarray(jax.nn.softmax(x)))
    assert_close(nn.log_softmax(x), np.asarray(jax.nn.log_softmax(x)))


@pytest.mark.parametrize("x,kwargs", [
    (np.array([0, 2, 1, 5]), dict(num_classes=4)),
    (np.array([[0, 1], [2, 3]]), dict(num_classes=3, axis=0)),
    (np.array([1, 2]), dict(num_classes=3, dtype=np.int32)),
    (np.array(2), dict(num_classes=4, dtype=jnp.bfloat16)),
])
def test_one_hot(x, kwargs):
    check_against_jax(lambda v: nn.one_hot(v, **kwargs), lambda v: jax.nn.one_hot(v, **kwargs),
                      x)


@pytest.mark.parametrize("kwargs", [dict(), dict(axis=0), dict(algorithm="stable"),
                                    dict(axis=(0, 1), epsilon=1e-3)])
def test_standardize(kwargs):
    check_against_jax(lambda a: nn.standardize(a, **kwargs),
                      lambda a: jax.nn.standardize(a, **kwargs), A, scale=10)


INITS = [
    ("glorot_normal", (), (5, 7)), ("glorot_uniform", (), (5, 7)),
    ("he_normal", (), (3, 3, 4, 8)), ("he_uniform", (), (4, 6)),
    ("lecun_normal", (), (6, 2)), ("lecun_uniform", (), (6, 2)),
    ("normal", (0.5,), (4, 3)), ("uniform", (2.0,), (4, 3)),
    ("truncated_normal", (0.1,), (10,)),
]


@pytest.mark.parametrize("name,args,shape", INITS)
def test_initializers_bit_exact(name, args, shape):
    init = getattr(nn.initializers, name)(*args)
    expected = getattr(jax.nn.initializers, name)(*args)(jax.random.PRNGKey(3), shape)
    got = init(random.PRNGKey(3), shape)
    assert np.asarray(got).dtype == expected.dtype
    # the same random bits; their transformation (erfinv, scaling) fuses differently
    # under jit on a GPU, a few ulps apart
    assert_exact_on_cpu(got, expected)
    got_jit = fg.jit(lambda k: init(k, shape))(random.PRNGKey(3))
    assert_exact_on_cpu(got_jit, expected)


@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "fan_avg", "fan_geo_avg"])
@pytest.mark.parametrize("distribution", ["truncated_normal", "normal", "uniform"])
def test_variance_scaling(mode, distribution):
    init = nn.initializers.variance_scaling(0.7, mode, distribution, dtype=np.float16)
    expected = jax.nn.initializers.variance_scaling(0.7, mode, distribution, dtype=jnp.float16)
    np.testing.assert_array_equal(np.asarray(init(random.PRNGKey(1), (4, 5))),
                                  np.asarray(expected(jax.random.PRNGKey(1), (4, 5))))


def test_constant_initializers():
    k = random.PRNGKey(0)
    assert_close(nn.initializers.zeros(k, (2, 3)), np.zeros((2, 3), np.float32))
    assert_close(nn.initializers.ones(k, (2,), np.int32), np.ones((2,), np.int32))
    assert_close(nn.initializers.constant(-1.5)(k, (3,)), np.full((3,), -1.5, np.float32))
    with pytest.raises(ValueError, match="invalid mode"):
        nn.initializers.variance_scaling(1.0, "fan_bad", "normal")(k, (2, 2))
    with pytest.raises(ValueError, match="at least 2D"):
        nn.initializers.glorot_normal()(k, (3,))


def test_exact_gelu_is_jaxs_formula():
    """0.5 x erfc(-x / sqrt 2), as jax: 1 + erf(x / sqrt 2) lost digits for negative x
    (15 ulp at x = -2.5)."""
    x = np.linspace(-6, 3, 37, dtype=np.float32)
    got = np.asarray(fg.jit(lambda v: nn.gelu(v, approximate=False))(x))
    want = np.asarray(jax.jit(lambda v: jax.nn.gelu(v, approximate=False))(x))
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
