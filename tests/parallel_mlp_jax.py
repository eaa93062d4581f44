"""examples/parallel_mlp.py's training written in jax (the oracle for
tests/test_parallel_mlp_example.py): same data, model, layouts and steps; prints the
losses in the example's format.  Run as a script with 8 virtual CPU devices."""
import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402


def _example():
    spec = importlib.util.spec_from_file_location(
        "parallel_mlp", os.path.join(ROOT, "examples", "parallel_mlp.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def loss(params, xs, ys):
    w1, b1, w2, b2 = params
    return ((jnp.tanh(xs @ w1 + b1) @ w2 + b2 - ys) ** 2).mean()


def train(example, name, mesh, param_specs, batch_spec):
    param_shardings = tuple(NamedSharding(mesh, s) for s in param_specs)
    params, xs, ys = example.make_data()
    params = jax.device_put(params, param_shardings)
    xs, ys = jax.device_put((xs, ys), NamedSharding(mesh, batch_spec))

    def step(params, xs, ys):
        value, grads = jax.value_and_grad(loss)(params, xs, ys)
        return tuple(p - example.LEARNING_RATE * g
                     for p, g in zip(params, grads, strict=True)), value
    step = jax.jit(step, out_shardings=(param_shardings, NamedSharding(mesh, P())))
    for i in range(example.STEPS):
        params, value = step(params, xs, ys)
        print(f"{name} step {i} loss {float(value):.6f}")


def main():
    example = _example()
    auto = (AxisType.Auto,)
    train(example, "data-parallel", jax.make_mesh((8,), ("data",), auto * 1),
          [P()] * 4, P("data"))
    train(example, "model-parallel", jax.make_mesh((2, 4), ("data", "model"), auto * 2),
          [P(None, "model"), P("model"), P("model", None), P()], P("data"))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
