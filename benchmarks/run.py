"""Side-by-side benchmarks of funcgraph and jax in one process.

Each benchmark times the same program written with funcgraph and with jax, in
interleaved rounds, and reports the median ratio funcgraph/jax (lower is
better) next to the target from DESIGN.md.

    python benchmarks/run.py            # all benchmarks
    python benchmarks/run.py dispatch   # those whose name contains "dispatch"
"""
import gc
import os
import statistics
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import funcgraph as fg  # noqa: E402
import funcgraph.numpy as fnp  # noqa: E402

BENCHMARKS = []


def benchmark(name, target):
    def register(fn):
        BENCHMARKS.append((name, target, fn))
        return fn
    return register


def time_call(fn, repeat):
    """Seconds per call of fn(), best of a few batches of `repeat` calls."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - start) / repeat)
    return best


def interleaved(fg_fn, jax_fn, rounds, repeat):
    """Median over rounds of (funcgraph time, jax time, ratio)."""
    fg_times, jax_times, ratios = [], [], []
    for _ in range(rounds):
        gc.collect()
        t_fg = time_call(fg_fn, repeat)
        t_jax = time_call(jax_fn, repeat)
        fg_times.append(t_fg)
        jax_times.append(t_jax)
        ratios.append(t_fg / t_jax)
    return statistics.median(fg_times), statistics.median(jax_times), statistics.median(ratios)


# --- benchmarks --------------------------------------------------------------------

@benchmark("jit dispatch of a tiny function", 1.5)
def dispatch():
    f_fg = fg.jit(lambda x, y: x * y + 1.0)
    f_jax = jax.jit(lambda x, y: x * y + 1.0)
    x_fg = fg.device_put(np.ones(8, np.float32))
    x_jax = jax.device_put(np.ones(8, np.float32))
    f_fg(x_fg, x_fg).block_until_ready()
    f_jax(x_jax, x_jax).block_until_ready()
    return interleaved(lambda: f_fg(x_fg, x_fg), lambda: f_jax(x_jax, x_jax),
                       rounds=7, repeat=2000)


def _eager_chain(np_mod, x):
    for _ in range(10):
        x = np_mod.sin(x) * 0.5 + x
    return x


@benchmark("eager chain of small elementwise ops", 0.5)
def eager_chain():
    x_fg = fnp.asarray(np.linspace(0, 1, 16, dtype=np.float32))
    x_jax = jnp.asarray(np.linspace(0, 1, 16, dtype=np.float32))
    _eager_chain(fnp, x_fg)
    _eager_chain(jnp, x_jax).block_until_ready()
    return interleaved(lambda: _eager_chain(fnp, x_fg),
                       lambda: _eager_chain(jnp, x_jax).block_until_ready(),
                       rounds=7, repeat=50)


def _long_program(np_mod):
    def f(x, y):
        for _ in range(1000):
            x = np_mod.tanh(x * y + 1.0)
        return x
    return f


@benchmark("tracing a 3000-equation program", 0.3)
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


@benchmark("first call (trace + lower + compile) of an MLP", 1.0)
def first_call():
    rng = np.random.default_rng(0)
    params = mlp_params(rng, [784, 512, 512, 10])
    x = rng.normal(size=(128, 784)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]

    def fresh_fg():
        fg.jit(lambda p, x, y: mlp_loss(fnp, p, x, y))(params, x, labels).block_until_ready()

    def fresh_jax():
        jax.jit(lambda p, x, y: mlp_loss(jnp, p, x, y))(params, x, labels).block_until_ready()
    return interleaved(fresh_fg, fresh_jax, rounds=5, repeat=2)


def main(selected):
    rows = []
    for name, target, fn in BENCHMARKS:
        if selected and not any(s in name for s in selected):
            continue
        t_fg, t_jax, ratio = fn()
        ok = "ok" if ratio <= target else "MISSED"
        rows.append((name, t_fg, t_jax, ratio, target, ok))
        print(f"{name:<48} funcgraph {t_fg * 1e6:10.1f} us   jax {t_jax * 1e6:10.1f} us   "
              f"ratio {ratio:5.2f}  (target <= {target})  {ok}", flush=True)
    return rows


if __name__ == "__main__":
    print(f"jax {jax.__version__}, backend {jax.default_backend()}, funcgraph {fg.__version__}")
    main(sys.argv[1:])
