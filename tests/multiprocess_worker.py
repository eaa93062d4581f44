"""One process of tests/test_multiprocess.py (run as a script, XLA_FLAGS set by the
caller):

    multiprocess_worker.py multi PORT PROCESS_ID   # one of 2 processes, 4 devices each
    multiprocess_worker.py single                  # one process with 8 devices (+ jax)

Each trains the same data-parallel MLP for a few steps over an 8-device mesh (params
replicated, the batch split over "data") and prints one JSON line with its losses."""
import json
import sys

import numpy as np

STEPS = 3
BATCH, D_IN, HIDDEN, D_OUT = 64, 16, 32, 4


def host_data():
    rng = np.random.default_rng(0)
    params = (rng.normal(size=(D_IN, HIDDEN)).astype(np.float32) * 0.3,
              np.zeros(HIDDEN, np.float32),
              rng.normal(size=(HIDDEN, D_OUT)).astype(np.float32) * 0.3,
              np.zeros(D_OUT, np.float32))
    xs = rng.normal(size=(BATCH, D_IN)).astype(np.float32)
    ys = rng.normal(size=(BATCH, D_OUT)).astype(np.float32)
    return params, xs, ys


def make_step(np_, value_and_grad):
    def loss(params, xs, ys):
        w1, b1, w2, b2 = params
        out = np_.tanh(xs @ w1 + b1) @ w2 + b2
        return ((out - ys) ** 2).mean()

    def step(params, xs, ys):
        value, grads = value_and_grad(loss)(params, xs, ys)
        return tuple(p - 0.1 * g for p, g in zip(params, grads, strict=True)), value
    return step


def train_funcgraph(fg, fnp):
    from funcgraph.sharding import NamedSharding, PartitionSpec as P
    params, xs, ys = host_data()
    mesh = fg.make_mesh((fg.device_count(),), ("data",))
    replicated, split = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    # Each process builds only its own blocks of the global arrays.
    params = tuple(fg.make_array_from_callback(p.shape, replicated, lambda i, p=p: p[i])
                   for p in params)
    xs = fg.make_array_from_callback(xs.shape, split, lambda i: xs[i])
    ys = fg.make_array_from_callback(ys.shape, split, lambda i: ys[i])
    step = fg.jit(make_step(fnp, fg.value_and_grad), in_shardings=(replicated, split, split),
                  out_shardings=(replicated, replicated))
    losses = []
    for _ in range(STEPS):
        params, loss = step(params, xs, ys)
        losses.append(float(loss))
    return losses, [float(np.asarray(p.addressable_data(0)).sum()) for p in params]


def train_jax():
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P
    params, xs, ys = host_data()
    mesh = jax.make_mesh((jax.device_count(),), ("data",))
    replicated, split = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    params, xs, ys = (jax.device_put(params, replicated), jax.device_put(xs, split),
                      jax.device_put(ys, split))
    step = jax.jit(make_step(jnp, jax.value_and_grad), in_shardings=(replicated, split, split),
                   out_shardings=(replicated, replicated))
    losses = []
    for _ in range(STEPS):
        params, loss = step(params, xs, ys)
        losses.append(float(loss))
    return losses


def _error(thunk):
    try:
        thunk()
    except ValueError as e:
        return str(e)
    return None


def spanning_arrays(fg):
    """Ways of making arrays over a mesh spanning processes, each summed by a jitted
    program over the whole mesh (every process must get the global sum)."""
    from funcgraph.sharding import NamedSharding, PartitionSpec as P
    mesh = fg.make_mesh((fg.device_count(),), ("data",))
    split, replicated = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
    values = np.arange(32, dtype=np.float32)
    total = fg.jit(lambda a: a.sum())
    index_map = split.addressable_devices_indices_map(values.shape)
    pieces = [fg.device_put(values[index], device) for device, index in index_map.items()]
    assembled = fg.make_array_from_single_device_arrays(values.shape, split, pieces)
    placed = fg.device_put(values, split)
    local = values.reshape(fg.process_count(), -1)[fg.process_index()]  # this process's rows
    from_local = fg.make_array_from_process_local_data(split, local)
    from_local_shaped = fg.make_array_from_process_local_data(split, local, values.shape)
    return {"device_put": float(total(placed)),
            "process_local": float(total(from_local)),
            "process_local_global_shape": float(total(from_local_shaped)),
            "single_device_arrays": float(total(assembled)),
            "host_argument": float(fg.jit(lambda a: a.sum(), in_shardings=replicated)(values)),
            "host_argument_split": _error(lambda: fg.jit(lambda a: a.sum(),
                                                         in_shardings=split)(values)),
            "addressable_shard_ids": [s.device.id for s in placed.addressable_shards],
            "fully_addressable": placed.is_fully_addressable}


def main(argv):
    import funcgraph as fg
    import funcgraph.numpy as fnp
    report = {}
    if argv[0] == "multi":
        port, process_id = int(argv[1]), int(argv[2])
        fg.distributed.initialize(f"localhost:{port}", num_processes=2, process_id=process_id,
                                  initialization_timeout=60)
        mesh_devices = fg.make_mesh((8,), ("data",)).devices
        report.update(
            process_index=fg.process_index(), process_count=fg.process_count(),
            device_count=fg.device_count(), local_device_count=fg.local_device_count(),
            local_ids=sorted(d.id for d in fg.local_devices()),
            mesh_processes=[d.process_index for d in mesh_devices.flat])
    report["losses"], report["param_sums"] = train_funcgraph(fg, fnp)
    report["spanning"] = spanning_arrays(fg)
    if argv[0] == "single":
        report["jax_losses"] = train_jax()
    if argv[0] == "multi":
        fg.distributed.shutdown()
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
