"""XLA's rewrites that change bits, followed by funcgraph's eager path: jax's eager and
jitted results are what XLA computes after its algebraic simplifier, so funcgraph's
eager results (NumPy) must compute the same, and its jitted ones (XLA) do."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp

RNG = np.random.default_rng(0)
X = (RNG.normal(size=(64, 32)) * 10).astype(np.float32)

# (x, divisor): a divisor broadcast against x is divided once (1/divisor) and multiplied
# (A / broadcast(B) -> A * broadcast(1/B)), up to 1 ulp from the rounded quotient in
# about a third of the elements; same shapes, or a broadcast dividend, divide exactly.
DIVISIONS = {
    "by a Python float": (X, 100.0),
    "by a Python int": (X, 7),
    "by a 0-d array": (X, np.float32(3.0)),
    "by a column": (X, RNG.normal(size=(64, 1)).astype(np.float32)),
    "by a row": (X, RNG.normal(size=(32,)).astype(np.float32)),
    "same shapes": (X, X + 1.0),
    "a scalar by an array": (np.float32(3.0), X),
    "float16": (X.astype(np.float16), 3.0),
    "float64 (x64)": (X.astype(np.float64), 3.0),
    "zeros and infinities": (X[:, :4], np.float32([0.0, -0.0, np.inf, -np.inf])),
    "integers": (np.arange(12, dtype=np.int32).reshape(3, 4), 5),
}


def _operand(mod, v):
    return mod.numpy.asarray(v) if isinstance(v, (np.ndarray, np.generic)) else v


@pytest.mark.parametrize("name", sorted(DIVISIONS))
def test_division_gives_xlas_bits_eagerly_and_under_jit(name):
    x, y = DIVISIONS[name]
    with fg.enable_x64(x.dtype == np.float64), jax.enable_x64(x.dtype == np.float64):
        want = np.asarray(_operand(jax, x) / _operand(jax, y))
        for got in (_operand(fg, x) / _operand(fg, y),
                    fnp.divide(_operand(fg, x), _operand(fg, y)),
                    fg.jit(lambda a, b: a / b, static_argnums=() if isinstance(y, np.ndarray)
                           else (1,))(_operand(fg, x), y)):
            got = np.asarray(got)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


def test_the_division_stays_a_division_in_the_program():
    """The rewrite is XLA's, not the program's: make_jaxpr shows jax's div."""
    names = [e.prim.name for e in fg.make_jaxpr(lambda a: a / 3.0)(X).jaxpr.eqns]
    assert names == ["div"]
