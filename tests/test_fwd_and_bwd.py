"""vjp pullbacks are pytrees (a jitted function can return one, a jitted backward pass
can take one) and fwd_and_bwd, against jax."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp

X = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
W = np.linspace(0.5, 1.5, 20, dtype=np.float32).reshape(4, 5)
CT = np.linspace(1, 2, 15, dtype=np.float32).reshape(3, 5)


def layer(np_mod):
    return lambda x, w: np_mod.tanh(x @ w) * 2.0


def test_pullback_returned_from_jit_matches_jax():
    y, pb = fg.jit(lambda x, w: fg.vjp(layer(fnp), x, w))(X, W)
    y_j, pb_j = jax.jit(lambda x, w: jax.vjp(layer(jnp), x, w))(X, W)
    np.testing.assert_allclose(y, y_j, rtol=1e-6)
    for a, b in zip(pb(CT), pb_j(CT), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    leaves = fg.tree_util.tree_leaves(pb)  # the residuals, as concrete arrays
    assert leaves and all(type(r) is fg.Array for r in leaves)


def test_jitted_backward_pass_takes_a_pullback_and_compiles_once():
    forward = fg.jit(lambda x, w: fg.vjp(layer(fnp), x, w))
    backward = fg.jit(lambda pb, ct: pb(ct))
    for scale in (1.0, 2.0, 3.0):
        _, pb = forward(X * scale, W)
        cx, cw = backward(pb, CT)
        _, pb_j = jax.vjp(layer(jnp), X * scale, W)
        cx_j, cw_j = pb_j(CT)
        np.testing.assert_allclose(cx, cx_j, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(cw, cw_j, rtol=1e-5, atol=1e-6)
    assert len(backward._cache) == 1


def test_pullback_tree_round_trip_keeps_its_structure():
    _, pb = fg.vjp(layer(fnp), X, W)
    leaves, tree = fg.tree_util.tree_flatten(pb)
    rebuilt = fg.tree_util.tree_unflatten(tree, leaves)
    for a, b in zip(rebuilt(CT), pb(CT), strict=True):
        np.testing.assert_array_equal(a, b)
    assert fg.tree_util.tree_structure(rebuilt) == tree
    doubled = fg.tree_util.tree_map(lambda r: r * 1.0, pb)  # residuals are its leaves
    np.testing.assert_array_equal(doubled(CT)[1], pb(CT)[1])


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0)])
@pytest.mark.parametrize("jitted", [True, False])
def test_fwd_and_bwd_matches_jax(argnums, jitted):
    fwd, bwd = fg.fwd_and_bwd(layer(fnp), argnums=argnums, jitted=jitted)
    fwd_j, bwd_j = jax.fwd_and_bwd(layer(jnp), argnums=argnums, jitted=jitted)
    y, res = fwd(X, W)
    y_j, res_j = fwd_j(X, W)
    np.testing.assert_allclose(y, y_j, rtol=1e-6)
    got, want = bwd(res, CT), bwd_j(res_j, CT)
    assert type(got) is tuple if not isinstance(argnums, int) else True
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_fwd_and_bwd_reuses_the_compiled_backward_pass():
    fwd, bwd = fg.fwd_and_bwd(layer(fnp), argnums=(0, 1))
    for i in range(3):
        _, res = fwd(X + i, W)
        bwd(res, CT)
    assert len(fwd._cache) == 1 and len(bwd._cache) == 1


def test_fwd_and_bwd_with_aux():
    def f(np_mod):
        return lambda x: (np_mod.sum(np_mod.sin(x)), np_mod.cos(x))
    fwd, bwd = fg.fwd_and_bwd(f(fnp), argnums=0, has_aux=True)
    fwd_j, bwd_j = jax.fwd_and_bwd(f(jnp), argnums=0, has_aux=True)
    y, res, aux = fwd(X)
    y_j, res_j, aux_j = fwd_j(X)
    np.testing.assert_allclose(aux, aux_j, rtol=1e-6)
    np.testing.assert_allclose(bwd(res, np.float32(1.0)), bwd_j(res_j, np.float32(1.0)),
                               rtol=1e-6)


def test_fwd_and_bwd_argnums_out_of_range_is_jaxs_error():
    fwd, _ = fg.fwd_and_bwd(layer(fnp), argnums=5)
    fwd_j, _ = jax.fwd_and_bwd(layer(jnp), argnums=5)
    with pytest.raises(ValueError, match="less than len\\(args\\)") as ours:
        fwd(X, W)
    with pytest.raises(ValueError) as theirs:
        fwd_j(X, W)
    assert str(ours.value) == str(theirs.value).replace("static_argnums", "argnums")


def _fwd_bwd_jaxprs(lib, f, *args):
    """print_fwd_bwd of JAX's gradient-checkpointing page: the forward jaxpr of vjp and
    the backward jaxpr of the pullback rebuilt from its leaves."""
    y, f_vjp = lib.vjp(f, *args)
    fwd = lib.make_jaxpr(lambda *a: lib.vjp(f, *a))(*args).jaxpr
    res, tree = lib.tree.flatten(f_vjp)

    def backward(*res_and_ct):
        *res, ct = res_and_ct
        return lib.tree.unflatten(tree, res)(ct)
    bwd = lib.make_jaxpr(backward)(*res, y).jaxpr
    return fwd, bwd


@pytest.mark.parametrize("checkpointed", [False, True])
def test_print_fwd_bwd_of_the_checkpointing_doc(checkpointed):
    def f(np_mod):
        def g(w1, w2, x):
            return np_mod.sin(np_mod.dot(w2, np_mod.sin(np_mod.dot(w1, x))))
        return g
    args = (np.ones((5, 4), np.float32), np.ones((6, 5), np.float32), np.ones(4, np.float32))
    ours = _fwd_bwd_jaxprs(fg, fg.checkpoint(f(fnp)) if checkpointed else f(fnp), *args)
    theirs = _fwd_bwd_jaxprs(jax, jax.checkpoint(f(jnp)) if checkpointed else f(jnp), *args)
    assert len(ours[1].outvars) == len(theirs[1].outvars) == 3
    if checkpointed:  # only the inputs are saved; the backward pass recomputes the rest
        assert len(ours[0].outvars) == len(theirs[0].outvars) == 1 + 3
        assert "remat" in str(ours[1])
