"""The benchmark registry and the interleaved timing every benchmark uses."""
import gc
import statistics
import time

BENCHMARKS = []  # (name, target, function returning (funcgraph, jax, ratio[, unit]))


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


def median_of_rounds(measure, rounds):
    """Median over rounds of (funcgraph time, jax time, ratio); measure() -> the two
    times of one round."""
    fg_times, jax_times, ratios = [], [], []
    for _ in range(rounds):
        gc.collect()
        t_fg, t_jax = measure()
        fg_times.append(t_fg)
        jax_times.append(t_jax)
        ratios.append(t_fg / t_jax)
    return statistics.median(fg_times), statistics.median(jax_times), statistics.median(ratios)


def interleaved(fg_fn, jax_fn, rounds, repeat):
    """Median over rounds of (funcgraph time, jax time, ratio) of calls of fg_fn, jax_fn."""
    return median_of_rounds(lambda: (time_call(fg_fn, repeat), time_call(jax_fn, repeat)),
                            rounds)


def seconds(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start
