"""A small tanh RNN trained with lax.scan: predict the next value of noisy sine waves.

The recurrence runs as one `scan` over time (batched over sequences), the loss and its
gradient come from `fg.value_and_grad`, and each SGD step is one `fg.jit` call."""
import time

import numpy as np

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax

HIDDEN = 16
STEPS = 300
LEARNING_RATE = 0.1


def make_data(rng, batch=32, length=20):
    """Sine waves of random frequency and phase; the target is the next value."""
    t = np.arange(length + 1, dtype=np.float32)
    freq = rng.uniform(0.2, 0.6, size=(batch, 1)).astype(np.float32)
    phase = rng.uniform(0, 2 * np.pi, size=(batch, 1)).astype(np.float32)
    waves = np.sin(freq * t + phase) + 0.05 * rng.normal(size=(batch, length + 1))
    waves = waves.astype(np.float32)
    # time-major: (length, batch, 1), as scan walks the leading axis
    inputs = waves[:, :-1].T[:, :, None]
    targets = waves[:, 1:].T[:, :, None]
    return inputs, targets


def init_params(rng):
    def normal(*shape, scale):
        return (rng.normal(size=shape) * scale).astype(np.float32)
    return {"w_in": normal(1, HIDDEN, scale=1.0),
            "w_rec": normal(HIDDEN, HIDDEN, scale=0.5 / np.sqrt(HIDDEN)),
            "b": np.zeros(HIDDEN, np.float32),
            "w_out": normal(HIDDEN, 1, scale=1.0 / np.sqrt(HIDDEN)),
            "b_out": np.zeros(1, np.float32)}


def rnn_predictions(params, inputs):
    """Run the tanh cell over time; returns the per-step predictions (length, batch, 1)."""
    def cell(h, x):
        h = fnp.tanh(x @ params["w_in"] + h @ params["w_rec"] + params["b"])
        return h, h @ params["w_out"] + params["b_out"]
    h0 = fnp.zeros((inputs.shape[1], HIDDEN), np.float32)
    _, predictions = lax.scan(cell, h0, inputs)
    return predictions


def loss_fn(params, inputs, targets):
    return fnp.mean((rnn_predictions(params, inputs) - targets) ** 2)


@fg.jit
def train_step(params, inputs, targets):
    loss, grads = fg.value_and_grad(loss_fn)(params, inputs, targets)
    new_params = fg.tree_map(lambda p, g: p - LEARNING_RATE * g, params, grads)
    return new_params, loss


def main():
    rng = np.random.default_rng(0)
    params = init_params(rng)
    inputs, targets = make_data(rng)
    test_inputs, test_targets = make_data(rng)

    initial_loss = float(loss_fn(params, test_inputs, test_targets))
    print(f"initial held-out loss: {initial_loss:.4f}")
    start = time.perf_counter()
    for step in range(STEPS):
        params, loss = train_step(params, inputs, targets)
        if step % 50 == 0 or step == STEPS - 1:
            print(f"step {step:4d}  training loss {float(loss):.4f}")
    elapsed = time.perf_counter() - start
    final_loss = float(fg.jit(loss_fn)(params, test_inputs, test_targets))
    print(f"final held-out loss:   {final_loss:.4f}   ({STEPS} steps in {elapsed:.2f} s)")
    assert np.isfinite(final_loss)
    assert final_loss < initial_loss, (initial_loss, final_loss)


if __name__ == "__main__":
    main()
