"""Train a small MLP on synthetic data (two interleaved spirals) with value_and_grad and
SGD under jit, and save a plot of the loss to a file (not shown)."""
import os
import sys

import numpy as np

import funcgraph as fg
import funcgraph.numpy as fnp


def spirals(rng, n):
    t = rng.uniform(0.5, 3.5, n)
    label = rng.integers(0, 2, n)
    angle = t * 2.5 + np.pi * label
    x = np.stack([t * np.cos(angle), t * np.sin(angle)], 1) / 3.5
    return (x + rng.normal(0, 0.03, x.shape)).astype(np.float32), label


def init(rng, sizes):
    return [(rng.normal(size=(m, n)).astype(np.float32) * np.sqrt(2.0 / m),
             np.zeros(n, np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]


def logits(params, x):
    for w, b in params[:-1]:
        x = fnp.maximum(x @ w + b, 0.0)
    w, b = params[-1]
    return x @ w + b


def loss(params, x, labels):
    z = logits(params, x)
    log_probs = z - fnp.log(fnp.sum(fnp.exp(z - fnp.max(z, axis=1, keepdims=True)), axis=1,
                                    keepdims=True)) - fnp.max(z, axis=1, keepdims=True)
    return -fnp.mean(fnp.take_along_axis(log_probs, labels[:, None], axis=1))


@fg.jit
def step(params, x, labels):
    value, grads = fg.value_and_grad(loss)(params, x, labels)
    return fg.tree_util.tree_map(lambda p, g: p - 0.3 * g, params, grads), value


def main(out_path=os.path.join(os.path.dirname(os.path.abspath(__file__)), "mlp_loss.png")):
    rng = np.random.default_rng(0)
    x, labels = spirals(rng, 512)
    params = init(rng, [2, 64, 64, 2])
    history = []
    for _ in range(400):
        params, value = step(params, x, labels.astype(np.int32))
        history.append(float(value))
    accuracy = float(np.mean(np.argmax(np.asarray(logits(params, x)), 1) == labels))
    print(f"loss {history[0]:.3f} -> {history[-1]:.3f}, training accuracy {accuracy:.1%}")
    assert history[-1] < 0.5 * history[0], "training did not reduce the loss"

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot(history)
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy")
    ax.set_yscale("log")
    ax.set_title("MLP on two spirals")
    fig.tight_layout()
    fig.savefig(out_path)
    print(f"loss curve saved to {os.path.abspath(out_path)}")


if __name__ == "__main__":
    main(*sys.argv[1:])
