"""The CNN of examples/cnn.py written once against a namespace and run with jax and with
funcgraph: the SGD losses, and per-example gradients through the network (vmap of grad),
must agree."""
import jax
import jax.numpy as jnp
import numpy as np

import funcgraph as fg
import funcgraph.numpy as fnp

LAYOUT = ("NHWC", "HWIO", "NHWC")


def _params_and_data():
    rng = np.random.RandomState(0)
    params = {"conv1": rng.randn(3, 3, 1, 4).astype(np.float32) * 0.3,
              "conv2": rng.randn(3, 3, 4, 8).astype(np.float32) * 0.1,
              "dense": rng.randn(4 * 4 * 8, 10).astype(np.float32) * 0.05}
    images = rng.randn(8, 16, 16, 1).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.randint(0, 10, 8)]
    return params, images, labels


def _loss(jmod, np_mod):
    lax, nn = jmod.lax, jmod.nn

    def loss(params, images, labels):
        h = nn.relu(lax.conv_general_dilated(images, params["conv1"], (1, 1), "SAME",
                                             dimension_numbers=LAYOUT))
        h = lax.reduce_window(h, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = nn.relu(lax.conv_general_dilated(h, params["conv2"], (1, 1), "SAME",
                                             dimension_numbers=LAYOUT))
        h = lax.reduce_window(h, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
        logits = h.reshape(h.shape[0], -1) @ params["dense"]
        return -np_mod.mean(np_mod.sum(nn.log_softmax(logits) * labels, axis=-1))
    return loss


def _train(jmod, np_mod, steps=5):
    loss = _loss(jmod, np_mod)

    @jmod.jit
    def step(params, images, labels):
        value, grads = jmod.value_and_grad(loss)(params, images, labels)
        return jmod.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), value

    params, images, labels = _params_and_data()
    losses = []
    for _ in range(steps):
        params, value = step(params, images, labels)
        losses.append(float(value))
    return losses, params


def test_sgd_losses_match_jax():
    ours, p_ours = _train(fg, fnp)
    theirs, p_theirs = _train(jax, jnp)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert ours[-1] < ours[0]
    for name in p_theirs:
        np.testing.assert_allclose(np.asarray(p_ours[name]), np.asarray(p_theirs[name]),
                                   rtol=1e-4, atol=1e-5)


def test_per_example_gradients_match_jax():
    params, images, labels = _params_and_data()

    def per_example(jmod, np_mod):
        loss = _loss(jmod, np_mod)
        return jmod.vmap(jmod.grad(lambda p, x, y: loss(p, x[None], y[None])),
                         in_axes=(None, 0, 0))

    expected = jax.jit(per_example(jax, jnp))(params, images, labels)
    for fn in (per_example(fg, fnp), fg.jit(per_example(fg, fnp))):
        actual = fn(params, images, labels)
        for name in expected:
            assert actual[name].shape == (8,) + params[name].shape
            np.testing.assert_allclose(np.asarray(actual[name]), np.asarray(expected[name]),
                                       rtol=1e-4, atol=1e-5)
