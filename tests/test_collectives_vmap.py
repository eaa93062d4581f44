"""The collectives new with shard_map (ppermute, psum_scatter, axis_size) over a named
vmap axis, and their gradients, against jax."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax

X = np.arange(24, dtype=np.float32).reshape(4, 6) / 5 - 2

CASES = {
    "ppermute": lambda l, a: l.ppermute(a, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]),
    "pshuffle": lambda l, a: l.pshuffle(a, "i", [3, 2, 1, 0]),
    "psum_scatter": lambda l, a: l.psum_scatter(a[:4], "i"),
    "psum_scatter_tiled": lambda l, a: l.psum_scatter(a[:4], "i", tiled=True),
    "all_gather_tiled": lambda l, a: l.all_gather(a, "i", tiled=True),
    "axis_size": lambda l, a: a * l.axis_size("i"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_collective_under_named_vmap_matches_jax(name):
    body = CASES[name]
    ours = fg.vmap(lambda a: body(lax, a), axis_name="i")
    theirs = jax.vmap(lambda a: body(jax.lax, a), axis_name="i")
    # atol: sums that cancel to ~0 differ by an ulp of their terms where the order of
    # the sum differs (a GPU's reduction).
    np.testing.assert_allclose(ours(X), theirs(X), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(fg.jit(ours)(X), theirs(X), rtol=1e-6, atol=1e-6)
    w = np.sin(np.arange(np.asarray(theirs(X)).size)).reshape(np.shape(theirs(X)))
    g = fg.grad(lambda a: fnp.sum(ours(a) ** 2 * w))(X)
    jg = jax.grad(lambda a: jnp.sum(theirs(a) ** 2 * w))(X)
    np.testing.assert_allclose(g, jg, rtol=1e-5, atol=1e-5)


def test_all_to_all_over_a_vmap_axis_is_jaxs():
    y = np.arange(32.0, dtype=np.float32).reshape(4, 8)
    ours = fg.vmap(lambda a: lax.all_to_all(a, "i", 0, 0, tiled=True), axis_name="i")(y)
    theirs = jax.vmap(lambda a: jax.lax.all_to_all(a, "i", 0, 0, tiled=True), axis_name="i")(y)
    np.testing.assert_array_equal(ours, theirs)
    with pytest.raises(ValueError, match=r"split_axis \(6\) has to be divisible by the size "
                                         r"of the named axis i \(4\)"):
        fg.vmap(lambda a: lax.all_to_all(a, "i", 0, 0, tiled=True), axis_name="i")(X)
