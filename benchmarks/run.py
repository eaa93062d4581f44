"""Side-by-side benchmarks of funcgraph and jax in one process.

Each benchmark times the same program written with funcgraph and with jax, in
interleaved rounds, and reports the median ratio funcgraph/jax (lower is
better) next to the target from DESIGN.md.

    python benchmarks/run.py            # all benchmarks
    python benchmarks/run.py dispatch   # those whose name contains "dispatch"
"""
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # timing, models

import numpy as np  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import funcgraph as fg  # noqa: E402
import funcgraph.numpy as fnp  # noqa: E402
from funcgraph import backend  # noqa: E402
from timing import BENCHMARKS, benchmark, interleaved, median_of_rounds  # noqa: E402
from timing import seconds as _seconds  # noqa: E402
import research  # noqa: E402,F401  (registers the research-sized programs)

# --- benchmarks --------------------------------------------------------------------

@benchmark("jit dispatch of a tiny function", 1.0)
def dispatch():
    f_fg = fg.jit(lambda x, y: x * y + 1.0)
    f_jax = jax.jit(lambda x, y: x * y + 1.0)
    x_fg = fg.device_put(np.ones(8, np.float32))
    x_jax = jax.device_put(np.ones(8, np.float32))
    f_fg(x_fg, x_fg).block_until_ready()
    f_jax(x_jax, x_jax).block_until_ready()
    return interleaved(lambda: f_fg(x_fg, x_fg), lambda: f_jax(x_jax, x_jax),
                       rounds=7, repeat=2000)


@benchmark("jit dispatch with NumPy host arguments", 1.05)
def dispatch_numpy():
    f_fg = fg.jit(lambda x, y: x * y + 1.0)
    f_jax = jax.jit(lambda x, y: x * y + 1.0)
    x = np.ones(4096, np.float32)  # 16 KB
    f_fg(x, x).block_until_ready()
    f_jax(x, x).block_until_ready()
    return interleaved(lambda: f_fg(x, x), lambda: f_jax(x, x), rounds=7, repeat=1000)


@benchmark("jit dispatch after a first call with NumPy scalars", 1.0)
def dispatch_after_numpy_scalars():
    f_fg = fg.jit(lambda x, y: x * y + 1.0)
    f_jax = jax.jit(lambda x, y: x * y + 1.0)
    f_fg(np.float32(2), np.float32(3)).block_until_ready()
    f_jax(np.float32(2), np.float32(3)).block_until_ready()
    x_fg = fg.device_put(np.float32(2))
    x_jax = jax.device_put(np.float32(2))
    return interleaved(lambda: f_fg(x_fg, x_fg), lambda: f_jax(x_jax, x_jax),
                       rounds=7, repeat=2000)


@benchmark("jit dispatch of a 100-leaf pytree in and out", 1.0)
def dispatch_pytree():
    f_fg = fg.jit(lambda d: {k: v + 1.0 for k, v in d.items()})
    f_jax = jax.jit(lambda d: {k: v + 1.0 for k, v in d.items()})
    d_fg = {f"p{i}": fg.device_put(np.ones(4, np.float32)) for i in range(100)}
    d_jax = {f"p{i}": jax.device_put(np.ones(4, np.float32)) for i in range(100)}
    f_fg(d_fg)
    jax.block_until_ready(f_jax(d_jax))
    return interleaved(lambda: f_fg(d_fg), lambda: f_jax(d_jax), rounds=7, repeat=300)


def _eager_chain(np_mod, x):
    for _ in range(10):
        x = np_mod.sin(x) * 0.5 + x
    return x


@benchmark("eager chain of small elementwise ops", 0.3)
def eager_chain():
    x_fg = fnp.asarray(np.linspace(0, 1, 16, dtype=np.float32))
    x_jax = jnp.asarray(np.linspace(0, 1, 16, dtype=np.float32))
    _eager_chain(fnp, x_fg)
    _eager_chain(jnp, x_jax).block_until_ready()
    return interleaved(lambda: _eager_chain(fnp, x_fg),
                       lambda: _eager_chain(jnp, x_jax).block_until_ready(),
                       rounds=7, repeat=50)


def _exact_chain(np_mod, x):
    for _ in range(10):
        x = np_mod.maximum(x * 0.5 + 1.0, x - 2.0)
    return x


@benchmark("eager chain of exact ops (arithmetic, max)", 0.3)
def eager_exact_chain():
    """Ops whose NumPy results are bit-exact with XLA's run on NumPy eagerly; the
    transcendental ops of the chain above run compiled (docs/concepts.md)."""
    x_fg = fnp.asarray(np.linspace(0, 1, 16, dtype=np.float32))
    x_jax = jnp.asarray(np.linspace(0, 1, 16, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(_exact_chain(fnp, x_fg)),
                                  np.asarray(_exact_chain(jnp, x_jax)))
    return interleaved(lambda: _exact_chain(fnp, x_fg),
                       lambda: _exact_chain(jnp, x_jax).block_until_ready(),
                       rounds=7, repeat=50)


def _long_program(np_mod):
    def f(x, y):
        for _ in range(1000):
            x = np_mod.tanh(x * y + 1.0)
        return x
    return f


def _batched_matmul_pair(build):
    """jit of build(np_mod) for both libraries on a transformer-sized activation
    (8, 64, 128) and weight (128, 512): the interleaved times."""
    a = np.random.default_rng(0).normal(size=(8, 64, 128)).astype(np.float32)
    w = np.random.default_rng(1).normal(size=(128, 512)).astype(np.float32)
    f_fg, f_jax = fg.jit(build(fg, fnp)), jax.jit(build(jax, jnp))
    a_fg, w_fg = fg.device_put(a), fg.device_put(w)
    a_jax, w_jax = jax.device_put(a), jax.device_put(w)
    fg.block_until_ready(f_fg(w_fg, a_fg))
    jax.block_until_ready(f_jax(w_jax, a_jax))
    return interleaved(lambda: fg.block_until_ready(f_fg(w_fg, a_fg)),
                       lambda: jax.block_until_ready(f_jax(w_jax, a_jax)),
                       rounds=7, repeat=50)


@benchmark("jitted batched activation @ weight (8x64x128 @ 128x512)", 1.0)
def batched_matmul():
    return _batched_matmul_pair(lambda lib, np_mod: lambda w, a: a @ w)


@benchmark("jitted weight gradient of a batched activation @ weight", 1.0)
def batched_matmul_weight_grad():
    return _batched_matmul_pair(
        lambda lib, np_mod: lib.grad(lambda w, a: np_mod.sum(np_mod.tanh(a @ w))))


@benchmark("tracing a 3000-equation program", 0.15)
def tracing():
    x = np.ones((4, 4), np.float32)
    assert len(fg.make_jaxpr(_long_program(fnp))(x, x).eqns) == 3000
    # A fresh function each call: jax caches traces by function identity.
    return interleaved(lambda: fg.make_jaxpr(_long_program(fnp))(x, x),
                       lambda: jax.make_jaxpr(_long_program(jnp))(x, x),
                       rounds=5, repeat=3)


def mlp_params(rng, sizes):
    return [(rng.normal(size=(m, n)).astype(np.float32) / np.sqrt(m),
             np.zeros(n, np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]


def mlp_loss(np_mod, params, x, labels):
    h = x
    for w, b in params[:-1]:
        h = np_mod.maximum(h @ w + b, 0.0)
    w, b = params[-1]
    logits = h @ w + b
    shifted = logits - np_mod.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np_mod.log(np_mod.sum(np_mod.exp(shifted), axis=1, keepdims=True))
    return -np_mod.mean(np_mod.sum(log_probs * labels, axis=1))


@benchmark("first call (trace + lower + compile) of an MLP", 0.8)
def first_call():
    rng = np.random.default_rng(0)
    params = mlp_params(rng, [784, 512, 512, 10])
    x = rng.normal(size=(128, 784)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]

    def fresh_fg():
        backend.clear_caches()  # time a real compile, not funcgraph's module cache
        fg.jit(lambda p, x, y: mlp_loss(fnp, p, x, y))(params, x, labels).block_until_ready()

    def fresh_jax():
        jax.jit(lambda p, x, y: mlp_loss(jnp, p, x, y))(params, x, labels).block_until_ready()
    return interleaved(fresh_fg, fresh_jax, rounds=5, repeat=2)


def _mlp_setup():
    rng = np.random.default_rng(0)
    params = mlp_params(rng, [784, 512, 512, 10])
    x = rng.normal(size=(128, 784)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]
    return params, x, labels


def train_step(grad_mod, np_mod, tree_map):
    def step(params, x, labels):
        loss, grads = grad_mod.value_and_grad(lambda p: mlp_loss(np_mod, p, x, labels))(params)
        return tree_map(lambda p, g: p - 0.01 * g, params, grads), loss
    return step


def _train_steps():
    step_fg = fg.jit(train_step(fg, fnp, fg.tree_util.tree_map))
    step_jax = jax.jit(train_step(jax, jnp, jax.tree_util.tree_map))
    return step_fg, step_jax


@benchmark("steady-state jitted MLP train step", 1.05)
def mlp_train_step():
    params, x, labels = _mlp_setup()
    step_fg, step_jax = _train_steps()
    p_fg, x_fg, l_fg = fg.device_put((params, x, labels))
    p_jax, x_jax, l_jax = jax.device_put((params, x, labels))
    step_fg(p_fg, x_fg, l_fg)[1].block_until_ready()
    step_jax(p_jax, x_jax, l_jax)[1].block_until_ready()
    return interleaved(lambda: step_fg(p_fg, x_fg, l_fg)[1].block_until_ready(),
                       lambda: step_jax(p_jax, x_jax, l_jax)[1].block_until_ready(),
                       rounds=7, repeat=20)


@benchmark("MLP train step with NumPy inputs", 1.02)
def mlp_train_step_numpy():
    """The same step called with the host (NumPy) parameters and batch each time."""
    params, x, labels = _mlp_setup()
    step_fg, step_jax = _train_steps()
    step_fg(params, x, labels)[1].block_until_ready()
    step_jax(params, x, labels)[1].block_until_ready()
    return interleaved(lambda: step_fg(params, x, labels)[1].block_until_ready(),
                       lambda: step_jax(params, x, labels)[1].block_until_ready(),
                       rounds=7, repeat=20)


_FIRST_CALL_PROGRAM = """
import sys, time
import numpy as np
sys.path.insert(0, sys.argv[2])
from run import mlp_loss, mlp_params
if sys.argv[1] == "funcgraph":
    import funcgraph as fw, funcgraph.numpy as np_
else:
    import jax as fw, jax.numpy as np_
if len(sys.argv) > 3:  # a persistent compilation cache directory, every compile saved
    fw.config.update("jax_compilation_cache_dir", sys.argv[3])
    fw.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
rng = np.random.default_rng(0)
params = mlp_params(rng, [784, 512, 512, 10])
x = rng.normal(size=(128, 784)).astype(np.float32)
labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]
fw.jit(lambda v: v + 1.0)(np.ones(2, np.float32)).block_until_ready()  # backend started
start = time.perf_counter()
fw.jit(lambda p, x, y: mlp_loss(np_, p, x, y))(params, x, labels).block_until_ready()
print(time.perf_counter() - start)
"""


def _first_call_in_fresh_process(framework, cache_dir=None):
    here = os.path.dirname(os.path.abspath(__file__))
    extra = [cache_dir] if cache_dir else []
    out = subprocess.run([sys.executable, "-c", _FIRST_CALL_PROGRAM, framework, here, *extra],
                         capture_output=True, text=True, check=True).stdout
    return float(out.split()[-1])


@benchmark("first call of an MLP in a fresh process", 0.8)
def first_call_fresh_process():
    """Trace + lower + compile + run of the MLP loss, the first jit of its kind in a new
    process (after the backend has started): no warm caches on either side."""
    return median_of_rounds(lambda: (_first_call_in_fresh_process("funcgraph"),
                                     _first_call_in_fresh_process("jax")), rounds=3)


@benchmark("first call of an MLP in a fresh process, persistent cache warm", 0.8)
def first_call_fresh_process_cached():
    """The same with each framework's persistent compilation cache set and already
    holding the program (one earlier process wrote it): the compile is a load."""
    with tempfile.TemporaryDirectory() as fg_dir, tempfile.TemporaryDirectory() as jax_dir:
        _first_call_in_fresh_process("funcgraph", fg_dir)
        _first_call_in_fresh_process("jax", jax_dir)
        return median_of_rounds(lambda: (_first_call_in_fresh_process("funcgraph", fg_dir),
                                         _first_call_in_fresh_process("jax", jax_dir)),
                                rounds=3)


@benchmark("XLA compile of a 10,000-equation program", 1.0)
def compile_long_program():
    """Only the compile of the lowered program (funcgraph's module cache cleared)."""
    x = np.ones((4, 4), np.float32)

    def long_program(np_mod):
        def f(x, y):
            for _ in range(3334):
                x = np_mod.tanh(x * y + 1.0)
            return x
        return f
    def compile_times():  # a fresh lowering each round: jax's Lowered keeps its executable
        lowered_fg = fg.jit(long_program(fnp)).lower(x, x)
        lowered_jax = jax.jit(long_program(jnp)).lower(x, x)
        backend.clear_caches()
        return _seconds(lowered_fg.compile), _seconds(lowered_jax.compile)
    return median_of_rounds(compile_times, rounds=2)


@benchmark("grad over forward pass (funcgraph alone)", 2.5)
def grad_cost():
    params, x, labels = _mlp_setup()
    p, xd, ld = fg.device_put((params, x, labels))
    forward = fg.jit(lambda p, x, y: mlp_loss(fnp, p, x, y))
    backward = fg.jit(fg.grad(lambda p, x, y: mlp_loss(fnp, p, x, y)))
    forward(p, xd, ld).block_until_ready()
    fg.block_until_ready(backward(p, xd, ld))
    return interleaved(lambda: fg.block_until_ready(backward(p, xd, ld)),
                       lambda: forward(p, xd, ld).block_until_ready(), rounds=7, repeat=20)


def stablehlo_op_count(text):
    return sum(1 for line in text.splitlines()
               if "stablehlo." in line or "chlo." in line or "func.call" in line)


@benchmark("StableHLO op count of the MLP train step", 1.0)
def op_count():
    params, x, labels = _mlp_setup()
    step_fg, step_jax = _train_steps()
    n_fg = stablehlo_op_count(step_fg.lower(params, x, labels).as_text())
    n_jax = stablehlo_op_count(step_jax.lower(params, x, labels).as_text())
    return n_fg, n_jax, n_fg / n_jax, "ops"


def _per_example_setup():
    rng = np.random.default_rng(1)
    params = mlp_params(rng, [32, 64, 64, 10])
    x = rng.normal(size=(64, 32)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)]
    return params, x, labels


def _example_loss(np_mod):
    def loss(params, x, y):
        return mlp_loss(np_mod, params, x[None], y[None])
    return loss


@benchmark("jitted per-example gradients (vmap of grad)", 1.05)
def per_example():
    params, x, labels = _per_example_setup()
    f_fg = fg.jit(fg.vmap(fg.grad(_example_loss(fnp)), in_axes=(None, 0, 0)))
    f_jax = jax.jit(jax.vmap(jax.grad(_example_loss(jnp)), in_axes=(None, 0, 0)))
    args_fg = fg.device_put((params, x, labels))
    args_jax = jax.device_put((params, x, labels))
    fg.block_until_ready(f_fg(*args_fg))
    jax.block_until_ready(f_jax(*args_jax))
    return interleaved(lambda: fg.block_until_ready(f_fg(*args_fg)),
                       lambda: jax.block_until_ready(f_jax(*args_jax)), rounds=7, repeat=50)


def rnn_loss(np_mod, lax_mod):
    def loss(params, xs, target):
        w_in, w_h, w_out = params

        def cell(h, x):
            h = np_mod.tanh(x @ w_in + h @ w_h)
            return h, h
        h0 = np_mod.zeros((xs.shape[1], w_h.shape[0]), np.float32)
        h, _ = lax_mod.scan(cell, h0, xs)
        return np_mod.mean((h @ w_out - target) ** 2)
    return loss


def _rnn_setup():
    rng = np.random.default_rng(2)
    params = (rng.normal(size=(16, 64)).astype(np.float32) * 0.2,
              rng.normal(size=(64, 64)).astype(np.float32) * 0.1,
              rng.normal(size=(64, 4)).astype(np.float32) * 0.2)
    xs = rng.normal(size=(50, 32, 16)).astype(np.float32)
    target = rng.normal(size=(32, 4)).astype(np.float32)
    return params, xs, target


@benchmark("jitted scan RNN gradients", 1.05)
def rnn_gradients():
    params, xs, target = _rnn_setup()
    f_fg = fg.jit(fg.grad(rnn_loss(fnp, fg.lax)))
    f_jax = jax.jit(jax.grad(rnn_loss(jnp, jax.lax)))
    args_fg = fg.device_put((params, xs, target))
    args_jax = jax.device_put((params, xs, target))
    fg.block_until_ready(f_fg(*args_fg))
    jax.block_until_ready(f_jax(*args_jax))
    return interleaved(lambda: fg.block_until_ready(f_fg(*args_fg)),
                       lambda: jax.block_until_ready(f_jax(*args_jax)), rounds=7, repeat=20)


@benchmark("jitted scan RNN gradients with NumPy inputs", 1.02)
def rnn_gradients_numpy():
    params, xs, target = _rnn_setup()
    f_fg = fg.jit(fg.grad(rnn_loss(fnp, fg.lax)))
    f_jax = jax.jit(jax.grad(rnn_loss(jnp, jax.lax)))
    fg.block_until_ready(f_fg(params, xs, target))
    jax.block_until_ready(f_jax(params, xs, target))
    return interleaved(lambda: fg.block_until_ready(f_fg(params, xs, target)),
                       lambda: jax.block_until_ready(f_jax(params, xs, target)),
                       rounds=7, repeat=20)


def cnn_loss(np_mod, lax_mod, nn_mod):
    layout = ("NHWC", "HWIO", "NHWC")

    def loss(params, images, labels):
        w1, w2, dense = params
        h = nn_mod.relu(lax_mod.conv_general_dilated(images, w1, (1, 1), "SAME",
                                                     dimension_numbers=layout))
        h = lax_mod.reduce_window(h, -np.inf, lax_mod.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = nn_mod.relu(lax_mod.conv_general_dilated(h, w2, (1, 1), "SAME",
                                                     dimension_numbers=layout))
        h = lax_mod.reduce_window(h, 0.0, lax_mod.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        logits = h.reshape(h.shape[0], -1) @ dense
        return -np_mod.mean(np_mod.sum(nn_mod.log_softmax(logits) * labels, axis=-1))
    return loss


@benchmark("cnn train step", 1.05)
def cnn_train_step():
    rng = np.random.default_rng(3)
    params = (rng.normal(size=(3, 3, 1, 16)).astype(np.float32) * 0.3,
              rng.normal(size=(3, 3, 16, 32)).astype(np.float32) * 0.1,
              rng.normal(size=(7 * 7 * 32, 10)).astype(np.float32) * 0.05)
    images = rng.normal(size=(64, 28, 28, 1)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)]

    def step(grad_mod, loss, tree_map):
        def update(params, images, labels):
            value, grads = grad_mod.value_and_grad(loss)(params, images, labels)
            return tree_map(lambda p, g: p - 0.01 * g, params, grads), value
        return update
    step_fg = fg.jit(step(fg, cnn_loss(fnp, fg.lax, fg.nn), fg.tree_util.tree_map))
    step_jax = jax.jit(step(jax, cnn_loss(jnp, jax.lax, jax.nn), jax.tree_util.tree_map))
    args_fg = fg.device_put((params, images, labels))
    args_jax = jax.device_put((params, images, labels))
    step_fg(*args_fg)[1].block_until_ready()
    step_jax(*args_jax)[1].block_until_ready()
    return interleaved(lambda: step_fg(*args_fg)[1].block_until_ready(),
                       lambda: step_jax(*args_jax)[1].block_until_ready(), rounds=7, repeat=10)


@benchmark("data-parallel MLP train step on 8 virtual devices", 1.05)
def sharded_train_step():
    """In its own process: XLA's device count is fixed when the backend starts."""
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sharded_step.py")
    out = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True,
                         check=True).stdout
    t_fg, t_jax, ratio = map(float, out.split()[-3:])
    return t_fg, t_jax, ratio


_RSS_PROGRAM = """
import gc, resource, sys
import numpy as np
if sys.argv[1] == "funcgraph":
    import funcgraph as fw, funcgraph.numpy as np_
else:
    import jax as fw, jax.numpy as np_
def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2 ** 20
x = np.ones((8,), np.float32)
for i in range(20):  # warm up: the first compiles load the compiler itself
    fw.jit(lambda v, i=i: np_.sin(v) * (i + 0.5))(x).block_until_ready()
gc.collect()
base = rss_mb()
for i in range(int(sys.argv[2])):  # distinct functions, each dropped after its call
    fw.jit(lambda v, i=i: np_.sin(v) * (i + 1000.5) + np_.cos(v))(x).block_until_ready()
gc.collect()
print(rss_mb() - base)
"""


def _rss_growth(framework, compiles):
    out = subprocess.run([sys.executable, "-c", _RSS_PROGRAM, framework, str(compiles)],
                         capture_output=True, text=True, check=True).stdout
    return float(out.split()[-1])


@benchmark("RSS growth after 1000 distinct jit compiles", 30)
def memory_after_compiles():
    """A fresh process per framework; the score is the difference in MB (funcgraph - jax)."""
    grow_fg, grow_jax = _rss_growth("funcgraph", 1000), _rss_growth("jax", 1000)
    return grow_fg, grow_jax, grow_fg - grow_jax, "MB"


def main(selected):
    rows = []
    for name, target, fn in BENCHMARKS:
        if selected and not any(s in name for s in selected):
            continue
        result = fn()
        t_fg, t_jax, ratio = result[:3]
        unit = result[3] if len(result) > 3 else "us"
        scale = 1e6 if unit == "us" else 1
        ok = "ok" if ratio <= target else "MISSED"
        rows.append((name, t_fg, t_jax, ratio, target, ok))
        other = "jax" if "alone" not in name else "base"
        score = "diff " if unit == "MB" else "ratio"
        print(f"{name:<48} funcgraph {t_fg * scale:10.1f} {unit:<3}  {other} "
              f"{t_jax * scale:10.1f} {unit:<3}  {score} {ratio:5.2f}  (target <= {target})  "
              f"{ok}", flush=True)
    return rows


if __name__ == "__main__":
    print(f"jax {jax.__version__}, backend {jax.default_backend()}, funcgraph {fg.__version__}")
    main(sys.argv[1:])
