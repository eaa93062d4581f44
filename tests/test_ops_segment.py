"""funcgraph.ops' segment reductions against jax.ops: values, dtypes, dropped ids,
empty segments, gradients, vmap and jit, and the program (one scatter, as jax's)."""
import jax
import numpy as np
import pytest

import funcgraph as fg

RNG = np.random.default_rng(0)
DATA = RNG.normal(size=(6, 3)).astype(np.float32)
IDS = np.array([0, 0, 1, 3, -1, 7], np.int32)  # -1 and 7 are dropped; segment 2 is empty
NAMES = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.float16])
def test_values_match_jax(name, dtype):
    if dtype == np.bool_ and name in ("segment_sum", "segment_prod"):
        return  # jax refuses bool sums and products (add/mul of bool)
    data = (DATA * 3).astype(dtype)
    got = getattr(fg.ops, name)(data, IDS, 4)
    want = getattr(jax.ops, name)(data, IDS, 4)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("name", NAMES)
def test_under_jit_vmap_and_grad(name):
    f_fg = lambda d: getattr(fg.ops, name)(d, IDS, 4, indices_are_sorted=False)
    f_jax = lambda d: getattr(jax.ops, name)(d, IDS, 4, indices_are_sorted=False)
    batch = np.stack([DATA, DATA * 2])
    np.testing.assert_allclose(fg.jit(fg.vmap(f_fg))(batch), jax.vmap(f_jax)(batch), rtol=1e-6)
    if name == "segment_prod":  # both refuse: products of repeated ids have no rule
        for lib, f in ((fg, f_fg), (jax, f_jax)):
            with pytest.raises(NotImplementedError):
                lib.grad(lambda d: f(d).sum())(DATA)
        return
    np.testing.assert_allclose(fg.grad(lambda d: f_fg(d).sum())(DATA),
                               jax.grad(lambda d: f_jax(d).sum())(DATA), rtol=1e-6)


def test_num_segments_from_the_ids_bucket_size_and_shapes():
    ids = np.array([0, 0, 1, 2, 2, 2])
    np.testing.assert_allclose(fg.ops.segment_sum(DATA, ids), jax.ops.segment_sum(DATA, ids))
    np.testing.assert_allclose(fg.ops.segment_sum(DATA, ids, 3, bucket_size=2),
                               jax.ops.segment_sum(DATA, ids, 3, bucket_size=2), rtol=1e-6)
    with pytest.raises(ValueError, match="one id per row"):
        fg.ops.segment_sum(DATA.reshape(2, 3, 3), ids.reshape(2, 3), 3)


def test_program_is_one_scatter_like_jax():
    prims = [e.prim.name for e in fg.make_jaxpr(lambda d, s: fg.ops.segment_sum(d, s, 4))(
        DATA, IDS).jaxpr.eqns]
    assert prims == ["broadcast_in_dim", "broadcast_in_dim", "scatter_add"]


def test_errors():
    with pytest.raises(fg.errors.ConcretizationTypeError):
        fg.jit(lambda d, s: fg.ops.segment_sum(d, s))(DATA, IDS)
    with pytest.raises(TypeError, match="segment_ids must be integers"):
        fg.ops.segment_sum(DATA, IDS.astype(np.float32), 4)
