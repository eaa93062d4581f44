"""An equinox MLP fitted with optax, filtered jit and grad:

    python -m funcgraph run examples/ecosystem/equinox_mlp.py

It prints the losses as JSON (the suite compares them with jax's)."""
import json

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax


def main(steps=25):
    rng = np.random.default_rng(1)
    x = rng.uniform(-2, 2, size=(96, 1)).astype(np.float32)
    y = np.tanh(2 * x) + 0.5 * x
    model = eqx.nn.MLP(in_size=1, out_size=1, width_size=16, depth=2,
                       key=jax.random.PRNGKey(42))
    optimizer = optax.adam(1e-2)
    state = optimizer.init(eqx.filter(model, eqx.is_inexact_array))

    @eqx.filter_jit
    def step(model, state, x, y):
        def loss_fn(model):
            return jnp.mean((jax.vmap(model)(x) - y) ** 2)
        loss, grads = eqx.filter_value_and_grad(loss_fn)(model)
        updates, state = optimizer.update(grads, state, model)
        return eqx.apply_updates(model, updates), state, loss

    losses = []
    for _ in range(steps):
        model, state, loss = step(model, state, x, y)
        losses.append(float(loss))
    return losses


if __name__ == "__main__":
    print(json.dumps({"losses": main()}))
