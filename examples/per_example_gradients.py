"""Per-example gradients with vmap(grad): one gradient per training example, in one
compiled call, checked against a Python loop of single-example gradients."""
import time

import numpy as np

import funcgraph as fg
import funcgraph.numpy as fnp


def init_params(rng, sizes):
    return [(rng.normal(size=(m, n)).astype(np.float32) / np.sqrt(m), np.zeros(n, np.float32))
            for m, n in zip(sizes[:-1], sizes[1:])]


def predict(params, x):
    for w, b in params[:-1]:
        x = fnp.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def example_loss(params, x, y):
    """Squared error of one example."""
    return fnp.sum((predict(params, x) - y) ** 2)


def main():
    rng = np.random.default_rng(0)
    params = init_params(rng, [8, 32, 32, 1])
    xs = rng.normal(size=(64, 8)).astype(np.float32)
    ys = rng.normal(size=(64, 1)).astype(np.float32)

    per_example = fg.jit(fg.vmap(fg.grad(example_loss), in_axes=(None, 0, 0)))
    grads = per_example(params, xs, ys)
    print("per-example gradient shapes:", [(w.shape, b.shape) for w, b in grads])

    print("\nThe batched gradient program (first lines):")
    text = str(fg.make_jaxpr(fg.vmap(fg.grad(example_loss), in_axes=(None, 0, 0)))(
        params, xs, ys))
    print("\n".join(text.splitlines()[:12]) + "\n    ...")

    loop = [fg.grad(example_loss)(params, xs[i], ys[i]) for i in range(4)]
    for i, g in enumerate(loop):
        for (gw, gb), (bw, bb) in zip(g, grads):
            np.testing.assert_allclose(np.asarray(bw)[i], gw, rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(np.asarray(bb)[i], gb, rtol=1e-4, atol=1e-5)
    print("\nmatches a loop of single-example gradients")

    norms = np.sqrt(sum(np.sum(np.asarray(w) ** 2, axis=(1, 2)) for w, _ in grads))
    print("largest per-example gradient norms:", np.round(np.sort(norms)[-3:], 3))

    per_example(params, xs, ys)
    start = time.perf_counter()
    for _ in range(50):
        fg.block_until_ready(per_example(params, xs, ys))
    print(f"jit(vmap(grad)) over 64 examples: {(time.perf_counter() - start) / 50 * 1e6:.0f} us")


if __name__ == "__main__":
    main()
