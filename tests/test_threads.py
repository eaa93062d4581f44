"""Trace state is per thread: several threads tracing grad, vmap and fresh jits at once
get the same numbers as one thread, no jaxpr picks up another thread's operations, and
every thread (the main one included) is eager again afterwards."""
import threading

import numpy as np

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph.interpreters.eval import is_eager

from tests.util import assert_trees_close

THREADS = 4
ROUNDS = 60


def loss(w, x):
    h = fnp.tanh(x @ w)
    if h.sum() > 0:  # Python control flow on a primal value (concrete under grad)
        return (h ** 2).mean()
    return fnp.abs(h).mean()


def smooth_loss(w, x):
    return (fnp.tanh(x @ w) ** 2).mean()


def per_example(w, xs):
    return fg.vmap(fg.grad(smooth_loss), in_axes=(None, 0))(w, xs[:, None, :])


def fresh_jit(k, x):
    """A new jitted function (a new trace and compile) every call: k changes its body."""
    return fg.jit(lambda y: fnp.sin(y) * k + fnp.cos(y * k))(x)


def workload(i, w, xs):
    out = {"grad": fg.grad(loss)(w, xs[i % 4:i % 4 + 1]),
           "per_example": per_example(w, xs),
           "jaxpr": len(fg.make_jaxpr(fg.grad(smooth_loss))(w, xs[:1]).jaxpr.eqns)}
    if i % 6 == 0:
        out["fresh_jit"] = fresh_jit(float(i % 5 + 1), xs)
    return out


def test_many_threads_tracing_give_one_threads_numbers():
    rng = np.random.default_rng(0)
    w = rng.normal(size=(3, 2)).astype(np.float32)
    xs = rng.normal(size=(5, 3)).astype(np.float32)
    expected = [workload(i, w, xs) for i in range(ROUNDS)]
    results = [[None] * ROUNDS for _ in range(THREADS)]
    errors = []
    start = threading.Barrier(THREADS)

    def run(t):
        try:
            start.wait()
            for i in range(ROUNDS):
                results[t][i] = workload((i + 7 * t) % ROUNDS, w, xs)
            results[t].append(is_eager())
        except BaseException as e:  # reported below, with the thread that raised it
            errors.append((t, e))

    threads = [threading.Thread(target=run, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    for t in range(THREADS):
        assert results[t].pop() is True  # each thread ends eager
        for i in range(ROUNDS):
            assert_trees_close(results[t][i], expected[(i + 7 * t) % ROUNDS], tol=1e-5)
    assert is_eager()
    assert type(fnp.sin(1.0)) is fg.Array


def test_a_trace_in_one_thread_is_invisible_to_another():
    """While another thread is in the middle of tracing, this thread's operations run
    eagerly and stay out of that thread's jaxpr."""
    inside, release = threading.Event(), threading.Event()
    box = {}

    def f(x):
        y = fnp.sin(x)
        inside.set()
        release.wait(10)
        return y * 2.0

    def trace():
        box["jaxpr"] = fg.make_jaxpr(f)(1.0)

    th = threading.Thread(target=trace)
    th.start()
    assert inside.wait(10)
    try:
        assert is_eager()
        value = fnp.exp(fnp.ones(3)) + 1.0
        assert type(value) is fg.Array
        assert_trees_close(fg.grad(lambda x: x * x)(3.0), np.float32(6.0))
    finally:
        release.set()
        th.join()
    assert [e.prim.name for e in box["jaxpr"].jaxpr.eqns] == ["sin", "mul"]
