"""A small flax.linen CNN trained with optax on synthetic digits: a program written
for jax, run unmodified on funcgraph with

    python -m funcgraph run examples/ecosystem/flax_linen_cnn.py

It prints the losses as JSON (the suite compares them with jax's)."""
import json

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Conv(features=8, kernel_size=(3, 3))(x)
        x = nn.relu(x)
        x = nn.avg_pool(x, window_shape=(2, 2), strides=(2, 2))
        x = nn.Conv(features=16, kernel_size=(3, 3))(x)
        x = nn.relu(x)
        x = x.reshape((x.shape[0], -1))
        x = nn.Dense(features=32)(x)
        x = nn.relu(x)
        return nn.Dense(features=10)(x)


def synthetic_digits(n, seed=0):
    rng = np.random.default_rng(seed)
    images = rng.normal(size=(n, 12, 12, 1)).astype(np.float32)
    labels = (images[:, :6, :, 0].sum(axis=(1, 2)) > 0).astype(np.int32) * 3 + \
             (images[:, :, :6, 0].sum(axis=(1, 2)) > 0).astype(np.int32)
    return images, labels


def main(steps=20):
    model = CNN()
    images, labels = synthetic_digits(64)
    params = model.init(jax.random.PRNGKey(0), images[:1])
    optimizer = optax.adam(1e-2)
    state = optimizer.init(params)

    @jax.jit
    def train_step(params, state, x, y):
        def loss_fn(p):
            logits = model.apply(p, x)
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, state = optimizer.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    losses = []
    for _ in range(steps):
        params, state, loss = train_step(params, state, images, labels)
        losses.append(float(loss))
    return losses


if __name__ == "__main__":
    print(json.dumps({"losses": main()}))
