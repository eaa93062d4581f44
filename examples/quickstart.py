"""funcgraph end to end: trace a function to IR, run it eagerly and compiled,
show the StableHLO, and time a jitted call against the eager one."""
import time

import numpy as np

import funcgraph as fg
import funcgraph.numpy as fnp


def predict(w, b, x):
    """A small layer and a softmax: the mean log-probability of class 0."""
    logits = fnp.tanh(x @ w + b) * 3.0
    shifted = logits - fnp.max(logits, axis=1, keepdims=True)
    log_probs = shifted - fnp.log(fnp.sum(fnp.exp(shifted), axis=1, keepdims=True))
    return fnp.mean(log_probs[:, 0])


def best_time(fn, repeat=200):
    fn()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - start) / repeat)
    return best


def main():
    rng = np.random.default_rng(0)
    w = rng.normal(size=(16, 8)).astype(np.float32)
    b = np.zeros(8, np.float32)
    x = rng.normal(size=(32, 16)).astype(np.float32)

    print("== The traced IR (make_jaxpr) ==")
    print(fg.make_jaxpr(predict)(w, b, x))

    print("\n== With each equation's source line ==")
    print(fg.make_jaxpr(predict)(w, b, x).pretty(source=True))

    fast = fg.jit(predict)
    eager_value = predict(w, b, x)
    jit_value = fast(w, b, x)
    print("\n== Results ==")
    print(f"eager: {float(eager_value):.6f}   jit: {float(jit_value):.6f}")

    print("\n== The StableHLO that XLA compiles (jit(f).lower(...).as_text()) ==")
    print(fg.jit(predict).lower(w, b, x).as_text())

    compiled = fg.jit(predict).lower(w, b, x).compile()
    print("== XLA's cost analysis ==")
    costs = compiled.cost_analysis()
    print({k: costs[k] for k in ("flops", "transcendentals", "bytes accessed") if k in costs})

    wd, bd, xd = fg.device_put((w, b, x))
    t_eager = best_time(lambda: predict(w, b, x))
    t_jit = best_time(lambda: fast(wd, bd, xd).block_until_ready())
    print("\n== Timing ==")
    print(f"eager: {t_eager * 1e6:8.1f} us per call")
    print(f"jit:   {t_jit * 1e6:8.1f} us per call  ({t_eager / t_jit:.1f}x faster)")


if __name__ == "__main__":
    main()
