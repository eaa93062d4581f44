"""Data-parallel and model-parallel training of a small MLP on 8 virtual CPU devices.

XLA reads the device count when its backend starts, so XLA_FLAGS is set before
funcgraph is imported.  The program is the same for both layouts: only the shardings
of the parameters and of the batch change, and XLA's SPMD partitioner inserts the
collectives (an all-reduce of the gradients for data parallelism; all-reduces of the
partial products for the model-parallel layers).  On a GPU/TPU cluster the same code
runs after `fg.distributed.initialize(...)` with a larger mesh (docs/scaling.md)."""
import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_force_host_platform_device_count=8").strip()

import numpy as np  # noqa: E402

import funcgraph as fg  # noqa: E402
import funcgraph.numpy as fnp  # noqa: E402
from funcgraph import lax  # noqa: E402
from funcgraph.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

# The 8 virtual devices are CPU devices: run there even where an accelerator is the
# default (JAX_PLATFORMS=cuda,cpu).
fg.config.update("jax_platforms", "cpu")

BATCH, D_IN, HIDDEN, D_OUT = 64, 16, 32, 4
STEPS, LEARNING_RATE = 5, 0.1


def make_data(seed=0):
    """Parameters (w1, b1, w2, b2) and a regression batch (xs, ys), as NumPy arrays."""
    rng = np.random.default_rng(seed)
    params = (rng.normal(size=(D_IN, HIDDEN)).astype(np.float32) * 0.3,
              np.zeros(HIDDEN, np.float32),
              rng.normal(size=(HIDDEN, D_OUT)).astype(np.float32) * 0.3,
              np.zeros(D_OUT, np.float32))
    xs = rng.normal(size=(BATCH, D_IN)).astype(np.float32)
    ys = np.sin(xs[:, :D_OUT] * 2.0).astype(np.float32)
    return params, xs, ys


def hidden(params, xs):
    w1, b1, _, _ = params
    return fnp.tanh(xs @ w1 + b1)


def loss(params, xs, ys):
    _, _, w2, b2 = params
    return ((hidden(params, xs) @ w2 + b2 - ys) ** 2).mean()


def sgd_step(params, xs, ys):
    value, grads = fg.value_and_grad(loss)(params, xs, ys)
    return tuple(p - LEARNING_RATE * g for p, g in zip(params, grads, strict=True)), value


def train(name, mesh, param_specs, batch_spec):
    """Train with the parameters and the batch laid out as the specs say; prints and
    returns the losses."""
    param_shardings = tuple(NamedSharding(mesh, s) for s in param_specs)
    batch_sharding = NamedSharding(mesh, batch_spec)
    params, xs, ys = make_data()
    params = fg.device_put(params, param_shardings)
    xs, ys = fg.device_put((xs, ys), batch_sharding)
    step = fg.jit(sgd_step, out_shardings=(param_shardings, NamedSharding(mesh, P())))
    losses = []
    for i in range(STEPS):
        params, value = step(params, xs, ys)
        losses.append(float(value))
        print(f"{name} step {i} loss {losses[-1]:.6f}")
    assert losses[-1] < losses[0], losses
    print(f"{name}: w1 {params[0].shape} laid out as {params[0].sharding.spec}")
    fg.debug.visualize_array_sharding(params[0])
    print(f"{name}: w2 {params[2].shape} laid out as {params[2].sharding.spec}")
    fg.debug.visualize_array_sharding(params[2])
    # The hidden activations, kept split over the batch (and the hidden units, when the
    # mesh has a "model" axis) by a sharding constraint.
    activation_spec = P("data", "model" if "model" in mesh.axis_names else None)
    h = fg.jit(lambda p, x: lax.with_sharding_constraint(
        hidden(p, x), NamedSharding(mesh, activation_spec)))(params, xs)
    print(f"{name}: activations {h.shape} laid out as {h.sharding.spec}")
    fg.debug.visualize_array_sharding(h)
    return losses


def main():
    assert fg.device_count() == 8, fg.devices()
    data_mesh = fg.make_mesh((8,), ("data",))
    # Data parallel: every device holds all parameters and 1/8 of the batch.
    data_parallel = train("data-parallel", data_mesh, [P()] * 4, P("data"))
    # Model parallel (with data parallelism on the other mesh axis): w1's columns and
    # w2's rows (the hidden units) are split 4 ways, the batch 2 ways.
    model_mesh = fg.make_mesh((2, 4), ("data", "model"))
    model_parallel = train("model-parallel", model_mesh,
                           [P(None, "model"), P("model"), P("model", None), P()], P("data"))
    # The same model, laid out two ways: the same losses (up to summation order).
    np.testing.assert_allclose(data_parallel, model_parallel, rtol=1e-5)


if __name__ == "__main__":
    main()
