"""shard_map's varying manual axes (check_vma=True, the default) against jax: which axes
each value of the body varies over, the pvary equations, values and derivatives
(grad of replicated and sharded parameters, with and without psum or pmean, in-body
grad, jvp, vmap, jit of grad), the out_specs replication error, pcast, and
check_vma=False left as it was."""
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
# jax 0.11 rejects a reduction over axes the value is in different states along (pmin
# over ("i", "j") of a value varying along i only: "can only accept axis_name which
# corresponds to one of varying, ... or invarying state"); 0.10 and funcgraph make it
# vary along j first (a pvary).  Under 0.11 the body casts it so itself.
JAX_011 = jax.__version_info__ >= (0, 11)
RNG = np.random.default_rng(0)
X = RNG.normal(size=(8, 4)).astype(np.float32)
W = RNG.normal(size=(4,)).astype(np.float32)


def _to_jax(specs):
    if isinstance(specs, P):
        return JP(*specs)
    return tuple(_to_jax(s) for s in specs)


def _pair(meshes, body, in_specs, out_specs, **kw):
    """(funcgraph shard_map, jax shard_map) of body(lax module, numpy module, *blocks) over
    a (4, 2) mesh with axes i and j."""
    fm, jm = meshes((4, 2), ("i", "j"))
    ours = fg.shard_map(lambda *a: body(lax, fnp, *a), mesh=fm, in_specs=in_specs,
                        out_specs=out_specs, **kw)
    theirs = jax.shard_map(lambda *a: body(jax.lax, jnp, *a), mesh=jm,
                           in_specs=_to_jax(in_specs), out_specs=_to_jax(out_specs), **kw)
    return ours, theirs


def _close(got, want, rtol=1e-4):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                    strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-5)


def _count(text, name):
    return len(re.findall(rf"= {name}\[", text))


# --- which axes each value varies over --------------------------------------------------

def _typed_values(l, n, w, x):
    """Values of every kind the body can make, by name."""
    ring = [(k, (k + 1) % 4) for k in range(4)]
    return {"w": w, "x": x, "wx": w * x, "scaled": x * 2.0, "psum": l.psum(x, "i"),
            "psum_of_replicated": l.psum(w, "i"), "pmean": l.pmean(x, "i"),
            "pmax": l.pmax(x, "i"),
            "pmin_both": l.pmin(l.pcast(x, "j", to="varying") if JAX_011 else x, ("i", "j")),
            "axis_index": l.axis_index("j"), "all_gather": l.all_gather(x, "i"),
            "all_gather_of_replicated": l.all_gather(w, "j"),
            "psum_scatter": l.psum_scatter(x, "j", tiled=True),
            "ppermute_of_replicated": l.ppermute(w, "i", ring),
            "all_to_all": l.all_to_all(x, "j", 0, 0, tiled=True),
            "pcast": l.pcast(w, "j", to="varying"),
            "sum_over_rows": n.sum(x, 0)}


def test_values_vary_over_the_axes_jax_infers(meshes):
    ours_vma, theirs_vma = {}, {}

    def body(l, n, w, x):
        vals = _typed_values(l, n, w, x)
        record = ours_vma if l is lax else theirs_vma
        typeof = fg.typeof if l is lax else jax.typeof
        for k, v in vals.items():
            record[k] = set(typeof(v).manual_axis_type.varying)
        return x
    ours, theirs = _pair(meshes, body, (P(), P("i")), P("i"))
    fg.make_jaxpr(ours)(W, X)
    jax.make_jaxpr(theirs)(W, X)
    assert ours_vma == theirs_vma
    assert ours_vma["x"] == {"i"} and ours_vma["psum"] == set()  # the test can fail
    seen = {}
    fg.shard_map(lambda x: seen.setdefault("vma", fg.typeof(x).vma) and x, mesh=meshes(
        (4, 2), ("i", "j"))[0], in_specs=P("i", "j"), out_specs=P("i", "j"))(X)
    assert seen["vma"] == frozenset({"i", "j"})


def test_jaxpr_shows_pvary_where_jax_inserts_it(meshes):
    def body(l, n, w, x):
        vals = _typed_values(l, n, w, x)
        return l.psum(vals["wx"] + vals["scaled"], "i")
    ours, theirs = _pair(meshes, body, (P(), P("i")), P())
    text = str(fg.make_jaxpr(ours)(W, X))
    jtext = str(jax.make_jaxpr(theirs)(W, X))
    for name in ("pvary", "ppermute", "all_gather", "reduce_scatter", "all_to_all"):
        assert _count(text, name) == _count(jtext, name), name
    assert _count(text, "pvary") > 5
    assert "f32[2,4]{V:i}" in text and "f32[2,4]{V:(i,j)}" in text
    assert "{V:" not in text.split("= shard_map")[0]  # outside the body nothing varies
    _close(ours(W, X), theirs(W, X))


# --- values and derivatives -------------------------------------------------------------

CASES = {
    # replicated weights used with sharded data, a psum'd replicated output
    "replicated_w_psum": (lambda l, n, w, x: l.psum(n.sum(n.tanh(w * x) ** 2, 0), "i"),
                          (P(), P("i")), P()),
    # no collective: the output stays sharded
    "replicated_w_sharded_out": (lambda l, n, w, x: n.sin(w) * x, (P(), P("i")), P("i")),
    "pmean": (lambda l, n, w, x: l.pmean(n.sum(l.pcast(x * w, "j", to="varying"), 0),
                                         ("i", "j")), (P(), P("i")), P()),
    # sharded weights: the output varies along i and j
    "sharded_w": (lambda l, n, w, x: n.exp(w) * x, (P("j"), P("i", "j")), P("i", "j")),
    # an output invariant along an axis its spec splits over
    "invariant_out_split": (lambda l, n, w, x: l.psum(x * w, "i") ** 2, (P(), P("i")),
                            P("i")),
    "all_gather": (lambda l, n, w, x: n.sum(l.all_gather(x * w, "i", tiled=True) ** 2, 0),
                   (P(), P("i")), P("i")),
    "replicated_only": (lambda l, n, w, x: w * 3.0 + n.sum(x), (P(), P()), P()),
    "ppermute": (lambda l, n, w, x: l.ppermute(w, "i", [(k, (k + 1) % 4) for k in range(4)])
                 * x, (P(), P("i")), P("i")),
    "psum_scatter": (lambda l, n, w, x: l.psum_scatter(x * w, "j", scatter_dimension=1,
                                                        tiled=True), (P(), P("i")), P("i", "j")),
    "all_to_all": (lambda l, n, w, x: l.all_to_all(n.sin(x) * w, "i", 1, 1, tiled=True),
                   (P(), P("i")), P("i")),
    # a carry made varying by pcast: its zero tangent must vary too, or psum counts it
    # once per device
    "scan_carry_from_pcast": (lambda l, n, w, x: l.psum(l.scan(
        lambda c, r: (c + r * w, c * r), l.pcast(n.zeros(4), "i", to="varying"), x)[0], "i"),
        (P(), P("i")), P()),
}


@pytest.mark.parametrize("case", CASES)
def test_values_and_gradients_match_jax(meshes, case):
    body, in_specs, out_specs = CASES[case]
    ours, theirs = _pair(meshes, body, in_specs, out_specs)
    _close(ours(W, X), theirs(W, X))

    def loss(f, np_):
        return lambda w, x: np_.sum(np_.cos(f(w, x)))
    _close(fg.grad(loss(ours, fnp), argnums=(0, 1))(W, X),
           jax.grad(loss(theirs, jnp), argnums=(0, 1))(W, X))
    _close(fg.jit(fg.grad(loss(ours, fnp)))(W, X), jax.jit(jax.grad(loss(theirs, jnp)))(W, X))
    t = (np.ones_like(W), np.full_like(X, 0.5))
    _close(fg.jvp(ours, (W, X), t), jax.jvp(theirs, (W, X), t))


def test_in_body_gradient_of_replicated_params_is_summed_like_jax(meshes):
    def body(l, n, grad, w, x):
        g = grad(lambda v: n.sum(n.tanh(x * v)))(w)
        return g, l.pmean(g, "i")
    ours, theirs = _pair(meshes,
                         lambda l, n, w, x: body(l, n, fg.grad if l is lax else jax.grad,
                                                 w, x), (P(), P("i")), (P(), P()))
    got, want = ours(W, X), theirs(W, X)
    _close(got, want)
    # summed over the 4 devices along i: the pmean of a summed value is itself
    _close(got[0], got[1])
    _close(fg.grad(lambda w: fnp.sum(ours(w, X)[0] ** 2))(W),
           jax.grad(lambda w: jnp.sum(theirs(w, X)[0] ** 2))(W))


def test_vmap_over_shard_map_matches_jax(meshes):
    body, in_specs, out_specs = CASES["replicated_w_psum"]
    ours, theirs = _pair(meshes, body, in_specs, out_specs)
    ws = RNG.normal(size=(3, 4)).astype(np.float32)
    _close(fg.vmap(ours, in_axes=(0, None))(ws, X), jax.vmap(theirs, in_axes=(0, None))(ws, X))
    _close(fg.vmap(fg.grad(lambda w, x: fnp.sum(ours(w, x))), in_axes=(0, None))(ws, X),
           jax.vmap(jax.grad(lambda w, x: jnp.sum(theirs(w, x))), in_axes=(0, None))(ws, X))


# --- the out_specs check and pcast -----------------------------------------------------

def test_out_specs_that_claim_replication_raise_like_jax(meshes):
    for body, in_specs, out_specs, axes in [
            (lambda l, n, w, x: w * x, (P(), P("i")), P(), "and not {i}, but"),
            (lambda l, n, w, x: l.all_gather(x, "i"), (P(), P("i", "j")), P(None, None, "j"),
             "across mesh axis 'i', but could not"),
            (lambda l, n, w, x: w + l.axis_index("j"), (P(), P()), P(), "and not {j}, but"),
            (lambda l, n, w, x: l.pcast(w, ("i", "j"), to="varying"), (P(), P()), P("i"),
             "across mesh axis 'j', but could not")]:
        ours, theirs = _pair(meshes, body, in_specs, out_specs)
        with pytest.raises(ValueError) as jerr:
            theirs(W, X)
        with pytest.raises(ValueError) as err:
            ours(W, X)
        for text in (str(err.value), str(jerr.value)):
            assert "require replication which can't be statically inferred" in text
            assert axes in text
    # what psum or pmax made invariant may be left out
    ours, theirs = _pair(meshes, lambda l, n, w, x: (l.psum(w * x, "i"), l.pmax(x, "i")),
                         (P(), P("i")), (P(), P()))
    _close(ours(W, X), theirs(W, X))


def test_pcast_and_psum_reject_what_jax_rejects(meshes):
    for body in (lambda l, n, w, x: l.psum(x, ("i", "j")),
                 lambda l, n, w, x: l.pcast(x, "i", to="varying"),
                 lambda l, n, w, x: l.pcast(x, ("i", "j"), to="varying"),
                 lambda l, n, w, x: l.pcast(w, "i", to="invariant")):
        ours, theirs = _pair(meshes, body, (P(), P("i")), P("i"))
        with pytest.raises(ValueError) as jerr:
            theirs(W, X)
        with pytest.raises(ValueError) as err:
            ours(W, X)
        assert str(err.value)[:20] == str(jerr.value).removeprefix("jax.")[:20]


# --- check_vma=False is left as it was ---------------------------------------------------

@pytest.mark.parametrize("case", ["replicated_w_psum", "pmean", "sharded_w"])
def test_check_vma_false_tracks_nothing_and_matches_jax(meshes, case):
    body, in_specs, out_specs = CASES[case]
    ours, theirs = _pair(meshes, body, in_specs, out_specs, check_vma=False)
    text = str(fg.make_jaxpr(ours)(W, X))
    assert "pvary" not in text and "{V:" not in text
    _close(ours(W, X), theirs(W, X))
    _close(fg.grad(lambda w, x: fnp.sum(fnp.cos(ours(w, x))), argnums=(0, 1))(W, X),
           jax.grad(lambda w, x: jnp.sum(jnp.cos(theirs(w, x))), argnums=(0, 1))(W, X))


def test_check_vma_false_in_body_gradient_is_local_like_jax(meshes):
    def body(l, n, w, x):
        grad = fg.grad if l is lax else jax.grad
        return l.pcast(grad(lambda v: n.sum(n.tanh(x * l.pcast(v, "i", to="varying"))))(w),
                       "j", to="varying")
    ours, theirs = _pair(meshes, body, (P(), P("i")), P("i"), check_vma=False)
    _close(ours(W, X), theirs(W, X))


# --- control flow ------------------------------------------------------------------------

def test_control_flow_in_the_body_varies_like_jax(meshes):
    cases = [  # a branch that varies makes the cond's output vary (a predicate does not)
        (lambda l, n, w, x: l.cond(w[0] > 0, lambda: x, lambda: n.ones_like(x) * w), P("i"),
         {"i"}),
        (lambda l, n, w, x: l.cond(x[0, 0] > 0, lambda: w, lambda: -w), P(), set()),
        (lambda l, n, w, x: l.cond(w[0] > 0, lambda: w, lambda: -w), P(), set()),
        # a carry made varying before the loop
        (lambda l, n, w, x: l.fori_loop(0, 3, lambda k, c: c * 0.5 + x,
                                        x[:, :1] * 0 + w), P("i"), {"i"}),
        # replicated w read by a scan over sharded rows, with a varying carry
        (lambda l, n, w, x: l.scan(lambda c, r: (n.sin(c * r + w), c * w), x[0], x)[1],
         P("i"), {"i"}),
        (lambda l, n, w, x: l.psum(l.scan(lambda c, r: (c + w * w, c), w, x)[0], "i")[None]
         * x[:1], P("i"), set())]
    for body, out_spec, vma in cases:
        ours, theirs = _pair(meshes, body, (P(), P("i")), out_spec)
        _close(ours(W, X), theirs(W, X))
        _close(fg.grad(lambda w: fnp.sum(fnp.sin(ours(w, X))))(W),
               jax.grad(lambda w: jnp.sum(jnp.sin(theirs(w, X))))(W))
        body_jaxpr = fg.make_jaxpr(ours)(W, X).eqns[0].params["jaxpr"].jaxpr
        flow = [e for e in body_jaxpr.eqns if e.prim.name in ("cond", "scan", "while")][-1]
        assert set(flow.outvars[-1].aval.vma) == vma
        if out_spec == P():  # a replicated output is claimed only where jax allows it
            continue
        ours, theirs = _pair(meshes, body, (P(), P("i")), P())
        with pytest.raises(ValueError, match="require replication"):
            theirs(W, X)
        with pytest.raises(ValueError, match="require replication"):
            ours(W, X)


def test_a_carry_that_starts_invariant_and_becomes_varying_is_rejected_like_jax(meshes):
    def body(l, n, w, x):
        return l.fori_loop(0, 3, lambda k, c: c + n.sum(x) * w, w)
    ours, theirs = _pair(meshes, body, (P(), P("i")), P("i"))
    with pytest.raises(TypeError) as jerr:
        theirs(W, X)
    with pytest.raises(TypeError) as err:
        ours(W, X)
    for text in (str(err.value), str(jerr.value)):
        assert "carry input and carry output must have equal types" in text
        assert "manual axis types do not match" in text


def _wrapped_bodies(mod, n, l):
    """Bodies whose replicated w meets the sharded x inside custom_jvp, custom_vjp,
    checkpoint and jit."""
    @mod.custom_jvp
    def sin(a):
        return n.sin(a)

    @sin.defjvp
    def sin_jvp(primals, tangents):
        return sin(primals[0]), n.cos(primals[0]) * tangents[0]

    @mod.custom_vjp
    def cos(a):
        return n.cos(a)
    cos.defvjp(lambda a: (n.cos(a), a), lambda a, ct: (-n.sin(a) * ct,))
    return {"custom_jvp": lambda w, x: l.psum(n.sum(sin(w * x), 0), "i"),
            "custom_vjp": lambda w, x: l.psum(n.sum(cos(w * x), 0), "i"),
            "checkpoint": lambda w, x: l.psum(
                n.sum(mod.checkpoint(lambda a: n.sin(a) * a)(w * x), 0), "i"),
            "jit": lambda w, x: l.psum(n.sum(mod.jit(lambda a, b: n.sin(a) * b)(w, x), 0), "i")}


@pytest.mark.parametrize("kind", ["custom_jvp", "custom_vjp", "checkpoint", "jit"])
def test_gradients_through_calls_in_the_body_match_jax(meshes, kind):
    fm, jm = meshes((4, 2), ("i", "j"))
    ours = fg.shard_map(_wrapped_bodies(fg, fnp, lax)[kind], mesh=fm, in_specs=(P(), P("i")),
                        out_specs=P())
    theirs = jax.shard_map(_wrapped_bodies(jax, jnp, jax.lax)[kind], mesh=jm,
                           in_specs=(JP(), JP("i")), out_specs=JP())
    _close(fg.grad(lambda w: fnp.sum(ours(w, X) ** 2))(W),
           jax.grad(lambda w: jnp.sum(theirs(w, X) ** 2))(W))


def test_a_jitted_function_is_retraced_between_checked_and_unchecked_bodies(meshes):
    fm, jm = meshes((4, 2), ("i", "j"))
    ours_inner = fg.jit(lambda w: w * (lax.axis_index("i") + 1.0))
    theirs_inner = jax.jit(lambda w: w * (jax.lax.axis_index("i") + 1.0))
    for check in (True, False, True):
        ours = fg.shard_map(ours_inner, mesh=fm, in_specs=P(), out_specs=P("i"),
                            check_vma=check)
        theirs = jax.shard_map(theirs_inner, mesh=jm, in_specs=JP(), out_specs=JP("i"),
                               check_vma=check)
        _close(fg.grad(lambda w: fnp.sum(ours(w) ** 2))(W),
               jax.grad(lambda w: jnp.sum(theirs(w) ** 2))(W))


def _mixed_bodies(n, l, mod):
    """Replicated w meeting sharded x (or a device index) in assorted operations."""
    key = mod.random.PRNGKey(0)
    return {"where": lambda w, x: n.where(x > 0, w, x * w),
            "dot": lambda w, x: x @ n.outer(w, w),
            "at_set": lambda w, x: x.at[0].set(w),
            "index_by_device": lambda w, x: w[l.axis_index("i")] * x,
            "dynamic_slice": lambda w, x: l.dynamic_slice(w, (l.axis_index("i"),), (2,))
            * x[:, :2].sum(0),
            "sort": lambda w, x: n.sort(x * w, axis=1),
            "random": lambda w, x: w * mod.random.normal(
                mod.random.fold_in(key, l.axis_index("i")), (2, 4))}


@pytest.mark.parametrize("kind", ["where", "dot", "at_set", "index_by_device",
                                  "dynamic_slice", "sort", "random"])
def test_replicated_values_mixed_with_varying_ones_match_jax(meshes, kind):
    fm, jm = meshes((4, 2), ("i", "j"))
    ours = fg.shard_map(_mixed_bodies(fnp, lax, fg)[kind], mesh=fm, in_specs=(P(), P("i")),
                        out_specs=P("i"))
    theirs = jax.shard_map(_mixed_bodies(jnp, jax.lax, jax)[kind], mesh=jm,
                           in_specs=(JP(), JP("i")), out_specs=JP("i"))
    _close(ours(W, X), theirs(W, X))
    _close(fg.grad(lambda w: fnp.sum(fnp.sin(ours(w, X))))(W),
           jax.grad(lambda w: jnp.sum(jnp.sin(theirs(w, X))))(W))
