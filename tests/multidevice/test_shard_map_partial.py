"""shard_map over some mesh axes only (axis_names), nested shard_map, smap and
lax.pswapaxes over 8 devices against jax: values (eager and jitted), grad, the
lowered sdy.manual_computation (manual axes, open shardings), and jax's errors."""
import re

import jax
import jax.numpy as jnp
import jax.sharding as js
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax
from funcgraph.sharding import PartitionSpec as P

JP = js.PartitionSpec
RNG = np.random.RandomState(0)
X = RNG.randn(8, 8).astype(np.float32)
W = RNG.randn(8, 6).astype(np.float32)


def _close(got, want, rtol=1e-5):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                    strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-5)


def _jax_specs(specs):
    if isinstance(specs, P):
        return JP(*specs)
    return tuple(_jax_specs(s) for s in specs)


def _both(meshes, make, shape=(2, 4), names=("x", "y")):
    """(ours, jax's) of make(shard_map, lax, numpy, mesh, P) over the same mesh."""
    fm, jm = meshes(shape, names)
    ours = make(fg.shard_map, lax, fnp, fm, lambda *a: P(*a))
    theirs = make(jax.shard_map, jax.lax, jnp, jm, lambda *a: JP(*a))
    return ours, theirs


def _loss(fn, tree_leaves):
    return lambda *a: sum((leaf ** 2).sum() for leaf in tree_leaves(fn(*a)))


def _check_values_and_grads(ours, theirs, *args):
    want = jax.jit(theirs)(*args)
    _close(ours(*args), want)
    _close(fg.jit(ours)(*args), want)
    argnums = tuple(range(len(args)))
    want_grad = jax.grad(_loss(theirs, jax.tree_util.tree_leaves), argnums)(*args)
    ours_grad = fg.grad(_loss(ours, fg.tree_util.tree_leaves), argnums)
    _close(ours_grad(*args), want_grad, rtol=1e-4)
    _close(fg.jit(ours_grad)(*args), want_grad, rtol=1e-4)


def _manual_computations(text):
    """(in_shardings, out_shardings, manual_axes) of each sdy.manual_computation."""
    return re.findall(r"sdy\.manual_computation\(.*?\) in_shardings=(\[.*?\]) "
                      r"out_shardings=(\[.*?\]) manual_axes=(\{.*?\})", text)


# --- some axes manual ------------------------------------------------------------------

def _over_x(shard_map, lx, np_, mesh, p):
    def f(a, w):
        h = np_.tanh(a @ w)
        return lx.psum(h, "x"), h * 2, lx.axis_index("x") + a.sum(1)
    return shard_map(f, mesh=mesh, in_specs=(p("x"), p()), out_specs=(p(), p("x"), p("x")),
                     axis_names={"x"})


def _over_y(shard_map, lx, np_, mesh, p):
    def f(a, w):
        h = np_.sin(a @ w)
        return lx.psum(h, "y"), lx.pmean(a, "y"), lx.all_gather(h, "y", axis=1, tiled=True)
    return shard_map(f, mesh=mesh, in_specs=(p(None, "y"), p("y")),
                     out_specs=(p(), p(None, "y"), p(None, "y")), axis_names={"y"})


@pytest.mark.parametrize("make", [_over_x, _over_y], ids=["x", "y"])
def test_some_axes_manual_values_and_grads(meshes, make):
    ours, theirs = _both(meshes, make)
    _check_values_and_grads(ours, theirs, X, W)


def test_some_axes_manual_lowering_matches_jax(meshes):
    ours, theirs = _both(meshes, _over_y)
    got = _manual_computations(fg.jit(ours).lower(X, W).as_text())
    want = _manual_computations(jax.jit(theirs).lower(X, W).as_text())
    assert got == want == [('[<@mesh, [{?}, {"y", ?}]>, <@mesh, [{"y", ?}, {?}]>]',
                            '[<@mesh, [{?}, {?}]>, <@mesh, [{?}, {"y", ?}]>, '
                            '<@mesh, [{?}, {"y", ?}]>]', '{"y"}')]


def test_every_axis_named_is_fully_manual_with_closed_shardings(meshes):
    def make(shard_map, lx, np_, mesh, p):
        return shard_map(lambda a: lx.psum(a, "y"), mesh=mesh, in_specs=p("x", "y"),
                         out_specs=p("x"), axis_names={"x", "y"})
    ours, theirs = _both(meshes, make)
    got = _manual_computations(fg.jit(ours).lower(X).as_text())
    assert got == _manual_computations(jax.jit(theirs).lower(X).as_text())
    assert got[0][2] == '{"x", "y"}' and "?" not in got[0][0]
    _close(ours(X), theirs(X))


def test_three_axis_mesh_two_manual(meshes):
    def make(shard_map, lx, np_, mesh, p):
        def f(a):
            return lx.psum(np_.exp(a), ("x", "z")), a * lx.axis_index("z")
        return shard_map(f, mesh=mesh, in_specs=p("z", "x"), out_specs=(p(), p("z", "x")),
                         axis_names={"x", "z"})
    ours, theirs = _both(meshes, make, (2, 2, 2), ("x", "y", "z"))
    _check_values_and_grads(ours, theirs, X)
    got = _manual_computations(fg.jit(ours).lower(X).as_text())
    assert got == _manual_computations(jax.jit(theirs).lower(X).as_text())
    assert got[0][2] == '{"x", "z"}'


def test_some_axes_manual_under_vmap(meshes):
    ours, theirs = _both(meshes, _over_x)
    xs = np.stack([X, -X, 2 * X])
    _close(fg.vmap(ours, in_axes=(0, None))(xs, W), jax.vmap(theirs, in_axes=(0, None))(xs, W))


def test_control_flow_jit_and_collectives_in_a_partial_body(meshes):
    def make(shard_map, lx, np_, mesh, p):
        def f(a):
            h = (fg.jit if lx is lax else jax.jit)(lambda b: np_.sin(b) * 3)(a)
            h = lx.cond(a.sum() > 0, lambda: h + 1, lambda: h - 1)
            init = lx.pcast(np_.zeros(a.shape[0]), ("y",), to="varying")
            c, ys = lx.scan(lambda c, r: (c + r, c * r), init, h.T)
            ring = [(i, (i + 1) % 4) for i in range(4)]
            return (lx.psum(c, "y")[None], ys.T, lx.ppermute(a, "y", ring),
                    lx.psum_scatter(a, "y", scatter_dimension=0, tiled=True),
                    lx.all_to_all(a, "y", 0, 0, tiled=True))
        return shard_map(f, mesh=mesh, in_specs=p(None, "y"),
                         out_specs=(p(), p(None, "y"), p(None, "y"), p("y"), p(None, "y")),
                         axis_names={"y"})
    ours, theirs = _both(meshes, make)
    _check_values_and_grads(ours, theirs, X)


# --- nested ----------------------------------------------------------------------------

def _nested(shard_map, lx, np_, mesh, p):
    def outer(a, w):
        def inner(b, v):
            return lx.psum(b @ v, "y"), b * lx.axis_index("y")
        s, t = shard_map(inner, in_specs=(p(None, "y"), p("y")),
                         out_specs=(p(), p(None, "y")), axis_names={"y"})(a, w)
        return np_.cos(s) + lx.axis_index("x"), lx.psum(s, "x"), t
    return shard_map(outer, mesh=mesh, in_specs=(p("x"), p()), out_specs=(p("x"), p(), p("x")),
                     axis_names={"x"})


def _flat(shard_map, lx, np_, mesh, p):
    """_nested as one shard_map over both axes."""
    def f(a, w):
        s = lx.psum(a @ w, "y")
        return np_.cos(s) + lx.axis_index("x"), lx.psum(s, "x"), a * lx.axis_index("y")
    return shard_map(f, mesh=mesh, in_specs=(p("x", "y"), p("y")),
                     out_specs=(p("x"), p(), p("x", "y")))


def test_nested_values_and_lowering_match_jax(meshes):
    ours, theirs = _both(meshes, _nested)
    want = jax.jit(theirs)(X, W)
    _close(ours(X, W), want)
    _close(fg.jit(ours)(X, W), want)
    got = _manual_computations(fg.jit(ours).lower(X, W).as_text())
    assert got == _manual_computations(jax.jit(theirs).lower(X, W).as_text())
    # outer over x, inner over y, and axis_index("x") read in a region manual over y
    assert [m[2] for m in got] == ['{"x"}', '{"y"}', '{"y"}']


def test_nested_grad_matches_one_shard_map_over_both_axes(meshes):
    # jax 0.10.2 fails to differentiate the nested form itself (its residuals get the
    # wrong spec), so the oracle is the same computation as one shard_map.
    ours, _ = _both(meshes, _nested)
    ours_flat, theirs_flat = _both(meshes, _flat)
    _close(ours(X, W), theirs_flat(X, W))
    want = jax.grad(_loss(theirs_flat, jax.tree_util.tree_leaves), (0, 1))(X, W)
    grad = fg.grad(_loss(ours, fg.tree_util.tree_leaves), (0, 1))
    _close(grad(X, W), want, rtol=1e-4)
    _close(fg.jit(grad)(X, W), want, rtol=1e-4)


def test_nested_jvp_vmapped_grad_and_second_order_match_one_shard_map(meshes):
    ours, _ = _both(meshes, _nested)
    _, theirs = _both(meshes, _flat)
    t = (np.ones_like(X), np.full_like(W, 0.5))
    _close(fg.jvp(ours, (X, W), t), jax.jvp(theirs, (X, W), t))
    ours_loss = _loss(ours, fg.tree_util.tree_leaves)
    theirs_loss = _loss(theirs, jax.tree_util.tree_leaves)
    xs = np.stack([X, -X, 2 * X])
    _close(fg.vmap(fg.grad(ours_loss, (0, 1)), in_axes=(0, None))(xs, W),
           jax.vmap(jax.grad(theirs_loss, (0, 1)), in_axes=(0, None))(xs, W), rtol=1e-4)
    _close(fg.grad(lambda w: fg.grad(ours_loss)(X, w).sum())(W),
           jax.grad(lambda w: jax.grad(theirs_loss)(X, w).sum())(W), rtol=1e-4)


def test_nested_default_axis_names_are_the_automatic_ones(meshes):
    def make(shard_map, lx, np_, mesh, p):
        def outer(a):
            return shard_map(lambda b: lx.psum(b, "y") + 1, in_specs=p(None, "y"),
                             out_specs=p())(a)
        return shard_map(outer, mesh=mesh, in_specs=p("x"), out_specs=p("x"),
                         axis_names={"x"})
    ours, theirs = _both(meshes, make)
    _close(fg.jit(ours)(X), jax.jit(theirs)(X))
    got = _manual_computations(fg.jit(ours).lower(X).as_text())
    assert [m[2] for m in got] == ['{"x"}', '{"y"}']


# --- errors ----------------------------------------------------------------------------

def _error(fn, *args):
    with pytest.raises(Exception) as info:
        fn(*args)
    return info.type, str(info.value)


def _same_error(meshes, make, *args):
    ours, theirs = _both(meshes, make)
    got, want = _error(ours, *args), _error(theirs, *args)
    assert got[0] is want[0]
    return got[1], want[1]


def test_specs_may_name_manual_axes_only(meshes):
    def in_auto(shard_map, lx, np_, mesh, p):
        return shard_map(lambda a: a, mesh=mesh, in_specs=(p("x", "y"),), out_specs=p("x"),
                         axis_names={"x"})

    def out_auto(shard_map, lx, np_, mesh, p):
        return shard_map(lambda a: a, mesh=mesh, in_specs=p("x"), out_specs=p("x", "y"),
                         axis_names={"x"})
    for make in (in_auto, out_auto):
        got, want = _same_error(meshes, make, X)
        assert got == want
        assert "must refer to an axis marked as manual" in got


def test_axis_names_errors(meshes):
    def not_in_mesh(shard_map, lx, np_, mesh, p):
        return shard_map(lambda a: a, mesh=mesh, in_specs=p(), out_specs=p(),
                         axis_names={"z"})

    def a_list(shard_map, lx, np_, mesh, p):
        return shard_map(lambda a: a, mesh=mesh, in_specs=p(), out_specs=p(),
                         axis_names=["x"])
    got, _ = _same_error(meshes, not_in_mesh, X)
    assert "to be a subset of mesh.axis_names" in got
    got, want = _same_error(meshes, a_list, X)
    assert got == want


def test_collective_over_an_automatic_axis_is_unbound(meshes):
    def make(shard_map, lx, np_, mesh, p):
        return shard_map(lambda a: lx.psum(a, "y"), mesh=mesh, in_specs=p("x"),
                         out_specs=p("x"), axis_names={"x"})
    got, _ = _same_error(meshes, make, X)
    assert "unbound axis name" in got


def test_out_spec_leaving_out_a_varying_manual_axis(meshes):
    def make(shard_map, lx, np_, mesh, p):
        return shard_map(lambda a: a, mesh=mesh, in_specs=p("x"), out_specs=p(),
                         axis_names={"x"})
    got, want = _same_error(meshes, make, X)
    assert "require replication which can't be statically inferred" in got
    assert got[got.index("out_specs is"):] == want[want.index("out_specs is"):].replace(
        "`jax.shard_map`", "`shard_map`")


def test_nested_shard_map_over_an_axis_already_manual_is_rejected(meshes):
    # jax 0.10.2 reaches a verifier error in the lowering; funcgraph says why.
    fm, _ = meshes((2, 4), ("x", "y"))

    def outer(a):
        return fg.shard_map(lambda b: b + 1, in_specs=P(None, "x"), out_specs=P(None, "x"),
                            axis_names={"x"})(a)
    f = fg.shard_map(outer, mesh=fm, in_specs=P("x"), out_specs=P("x"), axis_names={"x"})
    with pytest.raises(ValueError, match="already made manual"):
        f(X)


def test_nested_specs_may_name_its_own_manual_axes_only(meshes):
    def make(shard_map, lx, np_, mesh, p):
        def outer(a):
            return shard_map(lambda b: b, in_specs=p("x", "y"), out_specs=p(None, "y"),
                             axis_names={"y"})(a)
        return shard_map(outer, mesh=mesh, in_specs=p("x"), out_specs=p("x"),
                         axis_names={"x"})
    got, want = _same_error(meshes, make, X)
    assert got == want and "in_specs refers to 'x'" in got


def test_nested_shard_map_over_another_mesh_is_rejected(meshes):
    fm, _ = meshes((2, 4), ("x", "y"))
    other, _ = meshes((4, 2), ("x", "y"))

    def outer(a):
        return fg.shard_map(lambda b: b, mesh=other, in_specs=P(None, "y"),
                            out_specs=P(None, "y"), axis_names={"y"})(a)
    f = fg.shard_map(outer, mesh=fm, in_specs=P("x"), out_specs=P("x"), axis_names={"x"})
    with pytest.raises(ValueError, match="should match the mesh passed to shard_map"):
        f(X)


# --- smap and pswapaxes ------------------------------------------------------------------

def test_smap_matches_jax(meshes):
    fm, jm = meshes((2, 4), ("x", "y"))

    def make(smap, lx, np_):
        def f(a, b):
            return lx.psum(a, "y") * b, np_.sin(a)
        return smap(f, in_axes=(1, None), out_axes=(None, 1), axis_name="y")
    with jax.set_mesh(jm):
        theirs = jax.jit(make(jax.smap, jax.lax, jnp))
        want = theirs(X, 2.0)
        want_text = theirs.lower(X, 2.0).as_text()
    with fg.set_mesh(fm):
        ours = make(fg.smap, lax, fnp)
        _close(ours(X, 2.0), want)
        _close(fg.jit(ours)(X, 2.0), want)
        got_text = fg.jit(ours).lower(X, 2.0).as_text()
    assert _manual_computations(got_text) == _manual_computations(want_text)


def test_smap_infers_in_axes_from_the_argument_layout(meshes):
    fm, _ = meshes((2, 4), ("x", "y"))
    xs = fg.device_put(X, fg.NamedSharding(fm, P("x", "y")))
    with fg.set_mesh(fm):
        out = fg.smap(lambda a: lax.psum(a, "x"), out_axes=None, axis_name="x")(xs)
    np.testing.assert_allclose(out, X[:4] + X[4:], rtol=1e-5)


@pytest.mark.parametrize("kwargs", [dict(axis_name=("y",)), dict(in_axes=[0]),
                                    dict(in_axes=(0.5,)), dict(out_axes="a")])
def test_smap_argument_errors_match_jax(kwargs):
    full = {**dict(in_axes=0, out_axes=0, axis_name="y"), **kwargs}
    got, want = _error(lambda: fg.smap(lambda a: a, **full)), \
        _error(lambda: jax.smap(lambda a: a, **full))
    # funcgraph has no sharding.Infer sentinel: leaving in_axes out is how to infer
    assert got == (want[0], want[1].replace("jax.sharding.Infer, ", ""))


def test_pswapaxes_matches_jax(meshes):
    fm, jm = meshes((2, 4), ("x", "y"))
    y = np.arange(8 * 4 * 3, dtype=np.float32).reshape(8, 4, 3)
    want = jax.jit(jax.shard_map(lambda a: jax.lax.pswapaxes(a, "y", 1), mesh=jm,
                                 in_specs=JP("y"), out_specs=JP("y")))(y)
    ours = fg.shard_map(lambda a: lax.pswapaxes(a, "y", 1), mesh=fm, in_specs=P("y"),
                        out_specs=P("y"))
    _close(ours(y), want)
    _close(fg.jit(ours)(y), want)
