"""A flax.nnx MLP trained with optax (nnx.Optimizer) on a synthetic regression:

    python -m funcgraph run examples/ecosystem/flax_nnx_mlp.py

It prints the losses as JSON (the suite compares them with jax's)."""
import json

import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, rngs):
        self.hidden = nnx.Linear(4, 32, rngs=rngs)
        self.out = nnx.Linear(32, 1, rngs=rngs)

    def __call__(self, x):
        return self.out(nnx.gelu(self.hidden(x)))


def main(steps=25):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(128, 4)).astype(np.float32)
    y = (np.sin(x).sum(axis=1, keepdims=True) + 0.1 * x[:, :1] ** 2).astype(np.float32)
    model = MLP(nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adam(3e-2), wrt=nnx.Param)

    @nnx.jit
    def train_step(model, optimizer, x, y):
        def loss_fn(model):
            return jnp.mean((model(x) - y) ** 2)
        loss, grads = nnx.value_and_grad(loss_fn)(model)
        optimizer.update(model, grads)
        return loss

    return [float(train_step(model, optimizer, x, y)) for _ in range(steps)]


if __name__ == "__main__":
    print(json.dumps({"losses": main()}))
