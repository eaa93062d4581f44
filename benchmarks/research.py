"""Benchmarks of research-sized programs (issue 29): models.py's transformer, CNN, graph
network and RNN, side by side with jax; eager execution; import, tracing and lowering as
programs grow."""
import compileall
import gc
import os
import subprocess
import sys

import jax
import numpy as np

import funcgraph as fg
import models
from timing import benchmark, interleaved, median_of_rounds, seconds

FRAMEWORKS = (fg, jax)


def _jitted_pair(build, args, rounds=7, repeat=5):
    """Interleaved times of jit(build(m))(*args) for funcgraph and jax, device arrays,
    after one call each (compiled); also checks that both give the same numbers."""
    calls = []
    for m in FRAMEWORKS:
        f, device_args = m.jit(build(m)), m.device_put(args)
        calls.append(lambda f=f, a=device_args, m=m: m.block_until_ready(f(*a)))
    ours, theirs = (call() for call in calls)
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs),
                    strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-3, atol=2e-5)
    return interleaved(calls[0], calls[1], rounds=rounds, repeat=repeat)


def _transformer_args(layers, batch=models.BATCH):
    rng = np.random.default_rng(0)
    return models.transformer_params(rng, layers), *models.transformer_batch(rng, batch)


def _transformer_step(layers):
    params, tokens, targets = _transformer_args(layers)
    return _jitted_pair(
        lambda m: models.adamw_step(m, models.transformer_loss(m)),
        (params, models.adamw_state(jax, params), tokens, targets))


@benchmark("transformer train step, 2 layers (AdamW)", 1.0)
def transformer_step_2():
    return _transformer_step(2)


@benchmark("transformer train step, 4 layers (AdamW)", 1.0)
def transformer_step_4():
    return _transformer_step(4)


@benchmark("transformer per-example gradients, 2 layers", 1.0)
def transformer_per_example():
    return _jitted_pair(
        lambda m: models.per_example_grads(m, models.transformer_loss(m)),
        _transformer_args(2))


@benchmark("transformer grad of grad norm, 2 layers", 1.0)
def transformer_grad_of_grad_norm():
    return _jitted_pair(
        lambda m: models.grad_of_grad_norm(m, models.transformer_loss(m)),
        _transformer_args(2), repeat=2)


@benchmark("scan RNN value_and_grad, hidden 256, T = 1000", 1.0)
def rnn_long():
    rng = np.random.default_rng(0)
    return _jitted_pair(lambda m: m.value_and_grad(models.rnn_loss(m)),
                        (models.rnn_params(rng), *models.rnn_batch(rng, 1000)), repeat=2)


@benchmark("CNN with batch norm train step (32x32x3, batch 64)", 1.0)
def cnn_batch_norm_step():
    rng = np.random.default_rng(0)
    return _jitted_pair(lambda m: models.sgd_step(m, models.cnn_loss(m)),
                        (models.cnn_params(rng), *models.cnn_batch(rng)), repeat=2)


@benchmark("graph network train step (segment_sum, 2000 nodes)", 1.0)
def gnn_step():
    rng = np.random.default_rng(0)
    return _jitted_pair(lambda m: models.sgd_step(m, models.gnn_loss(m)),
                        (models.gnn_params(rng), *models.gnn_batch(rng)))


@benchmark("eager transformer forward, 2 layers", 0.8)
def eager_transformer_forward():
    params, tokens, _ = _transformer_args(2)
    calls = []
    for m in FRAMEWORKS:
        p, t = m.device_put((params, tokens))
        calls.append(lambda m=m, p=p, t=t: m.block_until_ready(
            models.transformer_logits(m, p, t)))
    np.testing.assert_allclose(np.asarray(calls[0]()), np.asarray(calls[1]()),
                               rtol=2e-3, atol=2e-5)
    return interleaved(calls[0], calls[1], rounds=7, repeat=3)


_IMPORT_PROGRAM = "import time; s = time.perf_counter(); import {}; print(time.perf_counter() - s)"


def _import_seconds(module):
    out = subprocess.run([sys.executable, "-c", _IMPORT_PROGRAM.format(module)],
                         capture_output=True, text=True, check=True).stdout
    return float(out.split()[-1])


@benchmark("import in a fresh process (funcgraph vs jax)", 1.0)
def import_time():
    """`import funcgraph` against `import jax`, each in a new process; jax's own modules
    load under funcgraph at its first compile.  funcgraph's bytecode is compiled first,
    as pip does at install for jax's: an editable install under PYTHONDONTWRITEBYTECODE
    (set on some machines) would otherwise compile every module at every import."""
    compileall.compile_dir(os.path.dirname(fg.__file__), quiet=1)
    return median_of_rounds(lambda: (_import_seconds("funcgraph"), _import_seconds("jax")),
                            rounds=7)


def unrolled_program(m, ops):
    """ops // 3 rounds of tanh(x * y + 1.0): `ops` equations."""
    def f(x, y):
        for _ in range(ops // 3):
            x = m.numpy.tanh(x * y + 1.0)
        return x
    return f


def _lowering_seconds(m, fn, args):
    traced = m.jit(fn).trace(*args)  # a fresh trace: jax caches lowerings by jaxpr
    return seconds(traced.lower)


def _lowering_pair(build, args, rounds=3):
    return median_of_rounds(lambda: tuple(_lowering_seconds(m, build(m), args)
                                          for m in FRAMEWORKS), rounds)


@benchmark("lowering a 10,000-op unrolled program to StableHLO", 0.5)
def lowering_long():
    x = np.ones((4, 4), np.float32)
    return _lowering_pair(lambda m: unrolled_program(m, 10000), (x, x))


@benchmark("lowering: time per op at 10,000 ops / at 2,500 (funcgraph alone)", 1.15)
def lowering_linear():
    x = np.ones((4, 4), np.float32)

    def per_op(ops):
        return _lowering_seconds(fg, unrolled_program(fg, ops), (x, x)) / ops
    return median_of_rounds(lambda: (per_op(10000), per_op(2500)), rounds=3)


@benchmark("lowering the 16-layer transformer train step", 0.5)
def lowering_transformer():
    params, tokens, targets = _transformer_args(16)
    state = models.adamw_state(jax, params)
    return _lowering_pair(lambda m: models.adamw_step(m, models.transformer_loss(m)),
                          (params, state, tokens, targets), rounds=3)


def _tracing_3000(m):
    x = np.ones((4, 4), np.float32)
    return lambda: m.make_jaxpr(unrolled_program(m, 3000))(x, x)


@benchmark("tracing a 3000-equation program in a process holding 2M objects", 0.15)
def tracing_warm_process():
    """As in a notebook that has run for a while: many live objects that each full
    collection of Python's garbage collector walks."""
    held = [{"value": i} for i in range(2_000_000)]
    try:
        return interleaved(_tracing_3000(fg), _tracing_3000(jax), rounds=5, repeat=3)
    finally:
        del held
        gc.collect()


@benchmark("tracing: time per equation at 50,000 / at 3,000 (funcgraph alone)", 1.15)
def tracing_linear():
    x = np.ones((4, 4), np.float32)

    def per_equation(ops):
        return seconds(lambda: fg.make_jaxpr(unrolled_program(fg, ops))(x, x)) / ops
    return median_of_rounds(lambda: (per_equation(50001), per_equation(3000)), rounds=3)

