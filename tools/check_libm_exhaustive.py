"""Compare funcgraph's eager C math library functions (funcgraph/_libm.c) with XLA's CPU
code on every float32 input (2^32 of them, a few minutes per function on 2 cores) and
every float16 and bfloat16 input, and on arrays of every length up to 300 (XLA's code
for a function may depend on the length: its float32 atan matches the library's only
for some).  host_math.py checks a probe of inputs at run time; run this after a jaxlib
upgrade for the whole picture.

    python tools/check_libm_exhaustive.py [sin cos tan cbrt]
"""
import sys
import time

import ml_dtypes
import numpy as np

import jax
import jax.numpy as jnp

from funcgraph import _libm

def same_bits(a, b):
    bits = f"u{a.itemsize}"
    return (a.view(bits) == b.view(bits)) | (np.isnan(a.astype(np.float32))
                                             & np.isnan(b.astype(np.float32)))


def check_narrow(names):
    for dtype in (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)):
        x = np.arange(2 ** 16, dtype=np.uint16).view(dtype)
        for name in names:
            want = np.asarray(jax.jit(getattr(jnp, name))(x))
            out = np.empty(x.shape, np.float32)
            _libm.unary(name, x.astype(np.float32), out)
            with np.errstate(over="ignore"):
                got = out.astype(dtype)
            print(f"{dtype.name} {name}: {int((~same_bits(want, got)).sum())} differ", flush=True)


def check_float32(names, chunk=1 << 24):
    fns = {n: jax.jit(getattr(jnp, n)) for n in names}
    differ = dict.fromkeys(names, 0)
    out = np.empty(chunk, np.float32)
    start = time.time()
    for c in range(2 ** 32 // chunk):
        x = np.arange(c * chunk, (c + 1) * chunk, dtype=np.uint64).astype(np.uint32)
        x = x.view(np.float32)
        for name in names:
            want = np.asarray(fns[name](x))
            _libm.unary(name, x, out)
            bad = ~same_bits(want, out)
            if bad.any() and differ[name] == 0:
                print(f"float32 {name}: first differences at {x[bad][:3]}", flush=True)
            differ[name] += int(bad.sum())
    for name in names:
        print(f"float32 {name}: {differ[name]} of 2^32 differ", flush=True)
    print(f"{time.time() - start:.0f} s")


def check_lengths(names, longest=300):
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        with jax.enable_x64(dtype == np.float64):
            values = (rng.standard_normal(4 * longest)
                      * 10.0 ** rng.integers(-6, 7, 4 * longest)).astype(dtype)
            for name in names:
                fn = jax.jit(getattr(jnp, name))
                lengths = [n for n in range(1, longest + 1)
                           if not same_bits(np.asarray(fn(values[:n])),
                                            _unary(name, values[:n])).all()]
                print(f"{np.dtype(dtype).name} {name}: lengths that differ: {lengths[:10]}"
                      f"{' ...' if len(lengths) > 10 else ''} ({len(lengths)})", flush=True)


def _unary(name, x):
    out = np.empty_like(x)
    _libm.unary(name, x, out)
    return out


if __name__ == "__main__":
    functions = sys.argv[1:] or ["sin", "cos", "tan", "cbrt"]
    check_lengths(functions)
    check_narrow(functions)
    check_float32(functions)
