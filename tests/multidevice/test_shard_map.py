"""shard_map and pmap over 8 devices against jax: each collective's values, the
lowering (manual computation and collectives' replica groups), grad (psum's transpose
and replicated inputs/outputs), vmap, nesting in jit and grad, and a data-parallel
train step."""
import json
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
X = np.arange(64, dtype=np.float32).reshape(8, 8) / 7 - 3


def _pair(meshes, body, in_specs, out_specs, shape=(4, 2), names=("x", "y"), check_vma=True):
    """(funcgraph shard_map, jax shard_map) of body(lax module, numpy module, *blocks).
    check_vma=False where neither can infer that an output is replicated."""
    fm, jm = meshes(shape, names)

    def to_jax(specs):
        if isinstance(specs, P):
            return JP(*specs)
        return tuple(to_jax(s) for s in specs)
    ours = fg.shard_map(lambda *a: body(lax, fnp, *a), mesh=fm, in_specs=in_specs,
                        out_specs=out_specs, check_vma=check_vma)
    theirs = jax.shard_map(lambda *a: body(jax.lax, jnp, *a), mesh=jm,
                           in_specs=to_jax(in_specs), out_specs=to_jax(out_specs),
                           check_vma=check_vma)
    return ours, theirs


def _close(got, want, rtol=1e-5):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                    strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-5)


RING = [(i, (i + 1) % 4) for i in range(4)]

COLLECTIVES = {
    "psum": (lambda l, n, a: l.psum(a, "x"), P("x", "y"), P(None, "y")),
    "psum_both": (lambda l, n, a: l.psum(a, ("x", "y")), P("x", "y"), P()),
    "pmean": (lambda l, n, a: l.pmean(a, "y"), P("x", "y"), P("x")),
    "pmax": (lambda l, n, a: l.pmax(a, "x"), P("x", "y"), P(None, "y")),
    "pmin": (lambda l, n, a: l.pmin(a, ("x", "y")), P("x", "y"), P()),
    "all_gather": (lambda l, n, a: l.all_gather(a, "x"), P("x", "y"), P(None, None, "y"),
                   False),
    "all_gather_axis1": (lambda l, n, a: l.all_gather(a, "y", axis=1), P("x", "y"),
                         P("x", None, None), False),
    "all_gather_tiled": (lambda l, n, a: l.all_gather(a, "x", tiled=True), P("x", "y"),
                         P(None, "y"), False),
    "all_gather_two_axes": (lambda l, n, a: l.all_gather(a, ("x", "y"), axis=1, tiled=True),
                            P("x", "y"), P(), False),
    "ppermute": (lambda l, n, a: l.ppermute(a, "x", RING), P("x", "y"), P("x", "y")),
    "ppermute_partial": (lambda l, n, a: l.ppermute(a, "x", [(0, 2), (3, 1)]), P("x", "y"),
                         P("x", "y")),
    "psum_scatter_tiled": (lambda l, n, a: l.psum_scatter(a, "y", scatter_dimension=0,
                                                          tiled=True), P("x", None),
                           P(("x", "y"))),
    "psum_scatter": (lambda l, n, a: l.psum_scatter(a[:4], "x", scatter_dimension=0),
                     P(None, "y"), P(("x", "y"))),
    "all_to_all_tiled": (lambda l, n, a: l.all_to_all(a, "x", 1, 0, tiled=True),
                         P("x", "y"), P("x", "y")),
    "all_to_all": (lambda l, n, a: l.all_to_all(a[:, :4], "x", 1, 0), P(None, "y"),
                   P("x", "y")),
    "axis_index": (lambda l, n, a: a + l.axis_index("x") * 10 + l.axis_index("y"),
                   P("x", "y"), P("x", "y")),
    "axis_index_two_axes": (lambda l, n, a: a * 0 + l.axis_index(("x", "y")), P("x", "y"),
                            P("x", "y")),
    "axis_size": (lambda l, n, a: a * l.axis_size("x") + l.axis_size(("x", "y")), P("x", "y"),
                  P("x", "y")),
}


@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_collective_values_match_jax(meshes, name):
    body, in_spec, out_spec, *check = COLLECTIVES[name]
    ours, theirs = _pair(meshes, body, in_spec, out_spec, check_vma=not check)
    want = jax.jit(theirs)(X)
    _close(fg.jit(ours)(X), want)
    _close(ours(X), want)  # eager: the one equation compiled over the mesh


def _manual_computation(text):
    """(in_shardings, out_shardings, manual_axes) of the first manual computation."""
    m = re.search(r"sdy\.manual_computation\([^)]*\) in_shardings=(\[.*?\]) "
                  r"out_shardings=(\[.*?\]) manual_axes=(\{[^}]*\})", text)
    return m.groups()


def _collective_ops(text, mesh_shape, axis_names):
    """Each collective's op name with its replica groups (lists of partition ids) or
    source-target pairs.  jax 0.10 (and funcgraph) write the groups out
    (`replica_groups = dense<[[0, 2], ...]>`); jax 0.11 names the mesh axes they span
    (`#stablehlo.replica_group_mesh_axes<mesh = @m, axes = [#stablehlo.axis_ref<name = "x">]>`)."""
    ops = re.findall(r'"stablehlo\.(all_reduce|all_gather|reduce_scatter|all_to_all|'
                     r'collective_permute)"\(.*?(?:replica_groups|source_target_pairs) = '
                     r'(dense<[^>]*>|#stablehlo\.replica_group_mesh_axes<.*?\]>)', text)
    return [(op, _groups_over_axes(re.findall(r'axis_ref<name = "(\w+)">', groups),
                                   mesh_shape, axis_names)
             if groups.startswith("#") else json.loads(groups[len("dense<"):-1]))
            for op, groups in ops]


def _groups_over_axes(axes, mesh_shape, axis_names):
    """The partition ids (row-major over the mesh) that differ only along `axes`, one
    group per position along the other axes, ordered along `axes` as named."""
    ids = np.arange(int(np.prod(mesh_shape))).reshape(mesh_shape)
    spanned = [axis_names.index(a) for a in axes]
    others = [i for i in range(len(mesh_shape)) if i not in spanned]
    size = int(np.prod([mesh_shape[i] for i in spanned]))
    return np.transpose(ids, others + spanned).reshape(-1, size).tolist()


def test_lowering_matches_jax(meshes):
    def body(l, n, a):
        return (l.psum(a, "x") + l.ppermute(a, "x", RING)
                + l.psum_scatter(l.all_gather(a, "y", tiled=True), "y", tiled=True)
                + l.all_to_all(a, "y", 0, 0, tiled=True) + l.pmax(a, ("x", "y")),
                l.axis_index("y")[None])
    ours, theirs = _pair(meshes, body, P("x", "y"), (P("x", "y"), P("y")))
    text, jtext = fg.jit(ours).lower(X).as_text(), jax.jit(theirs).lower(X).as_text()
    assert _manual_computation(text) == _manual_computation(jtext)
    ops = _collective_ops(text, (4, 2), ("x", "y"))
    assert ops == _collective_ops(jtext, (4, 2), ("x", "y")) and len(ops) == 6
    assert ops[0] == ("all_reduce", [[0, 2, 4, 6], [1, 3, 5, 7]])  # psum over "x"
    assert ops[-1] == ("all_reduce", [list(range(8))])  # pmax over ("x", "y")
    assert "stablehlo.partition_id" in text and "sdy.mesh @mesh" in text
    _close(fg.jit(ours)(X), jax.jit(theirs)(X))


def test_closed_over_values_replicated_pytrees_and_decorator(meshes):
    fm, jm = meshes((4, 2), ("x", "y"))
    w = np.linspace(-1, 1, 4, dtype=np.float32)

    @fg.shard_map(mesh=fm, in_specs=({"a": P("x", "y")}, P()), out_specs=(P("x", "y"), P()))
    def ours(tree, b):
        return tree["a"] * w + b, lax.psum(tree["a"].sum(), ("x", "y")) / 2

    @jax.shard_map(mesh=jm, in_specs=({"a": JP("x", "y")}, JP()),
                   out_specs=(JP("x", "y"), JP()))
    def theirs(tree, b):
        return tree["a"] * w + b, jax.lax.psum(tree["a"].sum(), ("x", "y")) / 2
    _close(ours({"a": X}, 2.0), theirs({"a": X}, 2.0))


def test_mesh_from_set_mesh_and_errors(meshes):
    fm, _ = meshes((4, 2), ("x", "y"))
    with fg.set_mesh(fm):
        out = fg.shard_map(lambda a: lax.psum(a, "y"), in_specs=P(None, "y"),
                           out_specs=P())(X)
    np.testing.assert_allclose(out, X[:, :4] + X[:, 4:], rtol=1e-6)
    with pytest.raises(ValueError, match="mesh"):
        fg.shard_map(lambda a: a, in_specs=P(), out_specs=P())(X)
    with pytest.raises(ValueError, match="divide"):
        fg.shard_map(lambda a: a, mesh=fm, in_specs=P("x"), out_specs=P("x"))(X[:6])
    with pytest.raises(ValueError, match="must refer to an axis marked as manual"):
        fg.shard_map(lambda a: a, mesh=fm, in_specs=P("z"), out_specs=P())(X)
    with pytest.raises(NameError, match="unbound axis name"):
        lax.psum(X, "x")


GRADS = {
    # a replicated output (psum), replicated weights: psum transposes to psum
    "psum_replicated_out": (lambda l, n, a, w: l.psum(n.sum(n.tanh(a * w[:4])), ("x", "y")),
                            (P("x", "y"), P()), P()),
    "pmean_over_one_axis": (lambda l, n, a, w: l.pmean(n.sin(a) * w[0], "x"),
                            (P("x", "y"), P()), P(None, "y")),
    "all_gather": (lambda l, n, a, w: l.all_gather(a * w, "x", tiled=True) ** 2,
                   (P("x"), P()), P(), False),
    "ppermute": (lambda l, n, a, w: l.ppermute(n.sin(a), "x", RING) * w[:4],
                 (P("x", "y"), P()), P("x", "y")),
    "psum_scatter": (lambda l, n, a, w: l.psum_scatter(a ** 2, "y", tiled=True) * w[0],
                     (P("x"), P()), P(("x", "y"))),
    "all_to_all": (lambda l, n, a, w: l.all_to_all(a * a, "y", 0, 1, tiled=True) * w[0],
                   (P("x", "y"), P()), P("x", "y")),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_grad_matches_jax(meshes, name):
    body, in_specs, out_spec, *check = GRADS[name]
    ours, theirs = _pair(meshes, body, in_specs, out_spec, check_vma=not check)
    w = np.linspace(0.5, 1.5, 8, dtype=np.float32)

    def loss(np_, f):
        def weighted(a, w):
            out = f(a, w)
            return np_.sum(out * np_.sin(np_.arange(out.size).reshape(out.shape)))
        return weighted
    want = jax.jit(jax.grad(loss(jnp, theirs), argnums=(0, 1)))(X, w)
    _close(fg.jit(fg.grad(loss(fnp, ours), argnums=(0, 1)))(X, w), want, rtol=1e-4)
    _close(fg.grad(loss(fnp, ours), argnums=(0, 1))(X, w), want, rtol=1e-4)


def test_jvp_and_linearize_match_jax(meshes):
    ours, theirs = _pair(meshes, lambda l, n, a: n.sin(l.psum(a * a, "y")), P("x", "y"),
                         P("x"))
    t = np.ones_like(X)
    _close(fg.jvp(ours, (X,), (t,)), jax.jvp(theirs, (X,), (t,)))
    _, f_lin = fg.linearize(ours, X)
    _close(f_lin(t), jax.jvp(theirs, (X,), (t,))[1])


def test_vmap_of_shard_map_and_collectives_under_inner_vmap(meshes):
    def body(l, n, a):
        per_row = jax.vmap if l is jax.lax else fg.vmap
        return per_row(lambda r: l.psum(r * r, "x") + l.all_gather(r, "y", tiled=True)[:4])(a)
    ours, theirs = _pair(meshes, body, P("x", "y"), P("x", "y"))
    batch = np.stack([X, 2 * X, -X])
    _close(fg.vmap(ours)(batch), jax.vmap(theirs)(batch))
    last = np.stack([X, 2 * X, -X], axis=2)
    _close(fg.jit(fg.vmap(ours, in_axes=2))(last), jax.vmap(theirs, in_axes=2)(last))
    _close(fg.jit(ours)(X), jax.jit(theirs)(X))


def test_nested_in_jit_grad_and_jitted_calls_inside(meshes):
    inner = fg.jit(lambda a: lax.psum(a, "x") * 2)
    jinner = jax.jit(lambda a: jax.lax.psum(a, "x") * 2)
    ours, theirs = _pair(meshes, lambda l, n, a: (inner if l is lax else jinner)(n.cos(a)),
                         P("x", "y"), P(None, "y"))
    _close(fg.jit(lambda a: ours(a + 1) * 3)(X), jax.jit(lambda a: theirs(a + 1) * 3)(X))

    def outer(np_, f):
        return lambda a: np_.sum(f(np_.sin(a)) ** 2)
    _close(fg.jit(fg.grad(outer(fnp, ours)))(X), jax.jit(jax.grad(outer(jnp, theirs)))(X),
           rtol=1e-4)
    # two shard_maps, one over a different mesh shape of the same devices
    fm, jm = meshes((8,), ("d",))
    second = fg.shard_map(lambda a: lax.pmean(a, "d"), mesh=fm, in_specs=P(None, "d"),
                          out_specs=P())
    jsecond = jax.shard_map(lambda a: jax.lax.pmean(a, "d"), mesh=jm, in_specs=JP(None, "d"),
                            out_specs=JP())
    _close(fg.jit(lambda a: second(ours(a)))(X), jax.jit(lambda a: jsecond(theirs(a)))(X))
    _close(fg.hessian(lambda a: fnp.sum(ours(a)[:1, :2] ** 3))(X[:, :2].copy()),
           jax.hessian(lambda a: jnp.sum(theirs(a)[:1, :2] ** 3))(X[:, :2].copy()), rtol=1e-4)


def test_data_parallel_train_step_matches_jax(meshes):
    fm, jm = meshes((8,), ("batch",))
    rng = np.random.default_rng(0)
    params = {"w": rng.normal(size=(5, 3)).astype(np.float32),
              "b": np.zeros(3, np.float32)}
    xs = rng.normal(size=(32, 5)).astype(np.float32)
    ys = rng.normal(size=(32, 3)).astype(np.float32)

    def make_step(np_, lax_, grad, shard_map, mesh, spec, **check):
        def loss(p, x, y):
            return np_.mean((np_.tanh(x @ p["w"] + p["b"]) - y) ** 2)

        def local_step(p, x, y):
            g = lax_.pmean(grad(loss)(p, x, y), "batch")
            return {k: p[k] - 0.1 * g[k] for k in p}, lax_.pmean(loss(p, x, y), "batch")
        return shard_map(local_step, mesh=mesh, in_specs=(spec(), spec("batch"), spec("batch")),
                         out_specs=(spec(), spec()), **check)
    # with check_vma the gradient taken inside the body (of replicated params) is summed
    # over the devices; without it, it is the local one
    for check in ({}, {"check_vma": False}):
        ours = fg.jit(make_step(fnp, lax, fg.grad, fg.shard_map, fm, P, **check))
        theirs = jax.jit(make_step(jnp, jax.lax, jax.grad, jax.shard_map, jm, JP, **check))
        p_ours, p_theirs = params, params
        for _ in range(3):
            p_ours, l_ours = ours(p_ours, xs, ys)
            p_theirs, l_theirs = theirs(p_theirs, xs, ys)
            _close((p_ours, l_ours), (p_theirs, l_theirs), rtol=1e-4)

    # the same step written as the gradient of a shard_map'd loss (psum's transpose)
    def global_loss(np_, lax_, shard_map, mesh, spec):
        def local(p, x, y):
            return lax_.pmean(np_.mean((np_.tanh(x @ p["w"] + p["b"]) - y) ** 2), "batch")
        return shard_map(local, mesh=mesh, in_specs=(spec(), spec("batch"), spec("batch")),
                         out_specs=spec())
    g_ours = fg.jit(fg.grad(global_loss(fnp, lax, fg.shard_map, fm, P)))(params, xs, ys)
    g_theirs = jax.jit(jax.grad(global_loss(jnp, jax.lax, jax.shard_map, jm, JP)))(
        params, xs, ys)
    _close(g_ours, g_theirs, rtol=1e-4)


PMAPS = {
    "psum": lambda l, a: l.psum(a, "i"),
    "pmean": lambda l, a: l.pmean(a, "i"),
    "pmax": lambda l, a: l.pmax(a, "i"),
    "pmin": lambda l, a: l.pmin(a, "i"),
    "all_gather": lambda l, a: l.all_gather(a, "i"),
    "all_gather_tiled": lambda l, a: l.all_gather(a, "i", tiled=True),
    "ppermute": lambda l, a: l.ppermute(a, "i", [(j, (j + 1) % 8) for j in range(8)]),
    "psum_scatter": lambda l, a: l.psum_scatter(a, "i"),
    "psum_scatter_tiled": lambda l, a: l.psum_scatter(a, "i", tiled=True),
    "all_to_all": lambda l, a: l.all_to_all(a, "i", 0, 0),
    "axis_index": lambda l, a: a * l.axis_index("i"),
}


@pytest.mark.parametrize("name", sorted(PMAPS))
def test_pmap_collectives_match_jax(name):
    body = PMAPS[name]
    x = np.arange(64, dtype=np.float32).reshape(8, 8) - 20
    _close(fg.pmap(lambda a: body(lax, a), axis_name="i")(x),
           jax.pmap(lambda a: body(jax.lax, a), axis_name="i")(x))


def test_pmap_in_axes_out_axes_and_devices():
    x = np.arange(24, dtype=np.float32).reshape(3, 8)
    y = np.float32(2.0)

    def f(l, a, b):
        return {"sum": l.psum(a, "i") * b, "own": a + 1}
    kw = dict(axis_name="i", in_axes=(1, None), out_axes={"sum": None, "own": 1})
    _close(fg.pmap(lambda a, b: f(lax, a, b), **kw)(x, y),
           jax.pmap(lambda a, b: f(jax.lax, a, b), **kw)(x, y))
    four = fg.pmap(lambda a: lax.psum(a, "i"), axis_name="i", devices=fg.devices()[4:])
    out = four(np.ones((4, 2), np.float32))
    np.testing.assert_allclose(out, np.full((4, 2), 4.0))
    assert {d.id for d in out.sharding.device_set} == {d.id for d in fg.devices()[4:]}
    with pytest.raises(ValueError, match="requires 9 logical devices"):
        fg.pmap(lambda a: a)(np.ones((9, 2), np.float32))
    # grad through pmap
    g = fg.grad(lambda a: fnp.sum(fg.pmap(lambda r: lax.psum(r ** 2, "i"), "i")(a)))(x.T)
    jg = jax.grad(lambda a: jnp.sum(jax.pmap(lambda r: jax.lax.psum(r ** 2, "i"), "i")(a)))(x.T)
    _close(g, jg, rtol=1e-4)


def test_check_vma_rejects_out_specs_claiming_replication_like_jax(meshes):
    fm, jm = meshes((4, 2), ("x", "y"))
    for body, out_spec in [(lambda l, a: a * 2, P(None, "y")),
                           (lambda l, a: l.all_gather(a, "y") + l.axis_index("x"), P()),
                           (lambda l, a: l.psum_scatter(l.psum(a, "x"), "y", tiled=True),
                            P(None, None))]:
        with pytest.raises(ValueError, match="require replication which can't be statically"):
            fg.shard_map(lambda a: body(lax, a), mesh=fm, in_specs=P("x", "y"),
                         out_specs=out_spec)(X)
        with pytest.raises(ValueError, match="require replication which can't be statically"):
            jax.shard_map(lambda a: body(jax.lax, a), mesh=jm, in_specs=JP("x", "y"),
                          out_specs=JP(*out_spec))(X)
    # replication that follows from psum, from replicated inputs, or from a jitted call
    fine = fg.shard_map(lambda a, b: (lax.psum(a, "x") + b,
                                      fg.jit(lambda c: lax.pmax(c, "x"))(a)),
                        mesh=fm, in_specs=(P("x", "y"), P()),
                        out_specs=(P(None, "y"), P(None, "y")))
    fine(X, np.float32(1.0))
    fg.shard_map(lambda a: a * 2, mesh=fm, in_specs=P("x", "y"), out_specs=P(None, "y"),
                 check_vma=False)(X)


def test_pcast_to_varying_makes_in_body_gradients_sum_like_jax(meshes):
    """jax (check_vma=True) sums the gradient of a replicated value used by varying
    ones over the devices; an explicit pcast(..., to="varying") changes nothing."""
    fm, jm = meshes((8,), ("batch",))
    rng = np.random.default_rng(1)
    w = rng.normal(size=(5, 3)).astype(np.float32)
    xs = rng.normal(size=(32, 5)).astype(np.float32)

    def make(np_, lax_, grad, shard_map, mesh, spec, **check):
        def local(w, x):
            g = grad(lambda v: np_.sum(np_.tanh(x @ lax_.pcast(v, "batch", to="varying"))))(w)
            return w - 0.01 * g, lax_.psum(np_.sum(x @ w), "batch")
        return shard_map(local, mesh=mesh, in_specs=(spec(), spec("batch")),
                         out_specs=(spec(), spec()), **check)
    ours = make(fnp, lax, fg.grad, fg.shard_map, fm, P)
    theirs = make(jnp, jax.lax, jax.grad, jax.shard_map, jm, JP)
    _close(fg.jit(ours)(w, xs), jax.jit(theirs)(w, xs), rtol=1e-4)
    assert "pvary" in str(fg.make_jaxpr(ours)(w, xs))
    _close(fg.grad(lambda w, x: ours(w, x)[0].sum())(w, xs),
           jax.grad(lambda w, x: theirs(w, x)[0].sum())(w, xs), rtol=1e-4)
    # without check_vma pcast does nothing: the in-body gradient is the local one
    unchecked = make(fnp, lax, fg.grad, fg.shard_map, fm, P, check_vma=False)
    junchecked = make(jnp, jax.lax, jax.grad, jax.shard_map, jm, JP, check_vma=False)
    assert "pvary" not in str(fg.make_jaxpr(unchecked)(w, xs))
    _close(fg.grad(lambda w, x: unchecked(w, x)[0].sum())(w, xs),
           jax.grad(lambda w, x: junchecked(w, x)[0].sum())(w, xs), rtol=1e-4)


def test_jitted_function_reused_inside_shard_maps_over_different_meshes(meshes):
    gather = fg.jit(lambda a: lax.all_gather(a, "x", tiled=True))
    small = fg.sharding.Mesh(np.array(fg.devices()[:2]), ("x",))
    large, _ = meshes((8,), ("x",))
    for mesh in (small, large):  # blocks of the same shape: a trace per mesh
        v = np.arange(4 * mesh.size, dtype=np.float32)
        out = fg.shard_map(gather, mesh=mesh, in_specs=P("x"), out_specs=P(),
                           check_vma=False)(v)
        np.testing.assert_array_equal(out, v)
