import numpy as np

import funcgraph as fg
import funcgraph.numpy as fnp
from tests.util import check_against_jax


def test_jit_matches_eager():
    x = fnp.arange(4.0)
    f = lambda x: fnp.sum(fnp.sin(x) * x + 1.0)
    np.testing.assert_allclose(fg.jit(f)(x), f(x), rtol=1e-6)


def test_against_jax():
    import jax.numpy as jnp
    x = np.linspace(-1, 1, 6, dtype=np.float32)
    check_against_jax(lambda x: fnp.tanh(x) * 2 - x, lambda x: jnp.tanh(x) * 2 - x, x)
