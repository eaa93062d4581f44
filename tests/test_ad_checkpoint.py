"""funcgraph.ad_checkpoint against jax.ad_checkpoint: checkpoint_name and every
checkpoint policy (same gradients, the saved residuals print_saved_residuals lists), the
remat2 equation and optimization_barrier of the backward pass, lax.optimization_barrier,
and named_scope / named_call name stacks in printed jaxprs and StableHLO locations."""
import re

import jax
import jax.ad_checkpoint  # noqa: F401  (jax does not import it by itself)
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import ad_checkpoint
from tests.util import assert_close

X = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
W = np.linspace(-0.5, 0.7, 9, dtype=np.float32).reshape(3, 3)

FG = dict(cp=fg.checkpoint, name=ad_checkpoint.checkpoint_name, np=fnp, jit=fg.jit,
          grad=fg.grad, vmap=fg.vmap, jvp=fg.jvp, policies=fg.checkpoint_policies,
          print_saved_residuals=ad_checkpoint.print_saved_residuals)
JAX = dict(cp=jax.checkpoint, name=jax.ad_checkpoint.checkpoint_name, np=jnp, jit=jax.jit,
           grad=jax.grad, vmap=jax.vmap, jvp=jax.jvp, policies=jax.checkpoint_policies,
           print_saved_residuals=jax.ad_checkpoint.print_saved_residuals)


def model(m):
    def f(x, w):
        h = m["name"](m["np"].sin(x @ w), "y")
        z = m["name"](m["np"].tanh(h @ w), "z")
        return m["np"].sum(m["np"].cos(z) * h)
    return f


POLICIES = {
    "default": lambda p: None,
    "everything_saveable": lambda p: p.everything_saveable,
    "nothing_saveable": lambda p: p.nothing_saveable,
    "dots_saveable": lambda p: p.dots_saveable,
    "checkpoint_dots": lambda p: p.checkpoint_dots,
    "dots_with_no_batch_dims_saveable": lambda p: p.dots_with_no_batch_dims_saveable,
    "checkpoint_dots_with_no_batch_dims": lambda p: p.checkpoint_dots_with_no_batch_dims,
    "save_only_these_names": lambda p: p.save_only_these_names("y"),
    "save_any_names_but_these": lambda p: p.save_any_names_but_these("y"),
    "save_anything_except_these_names": lambda p: p.save_anything_except_these_names("y"),
    "save_from_both_policies": lambda p: p.save_from_both_policies(
        p.dots_with_no_batch_dims_saveable, p.save_only_these_names("z")),
    "save_and_offload_only_these_names": lambda p: p.save_and_offload_only_these_names(
        names_which_can_be_saved=["y"], names_which_can_be_offloaded=["z"],
        offload_src="device", offload_dst="pinned_host"),
    "offload_dot_with_no_batch_dims": lambda p: p.offload_dot_with_no_batch_dims(
        "device", "pinned_host"),
}
# The policy classes jax 0.11 added to checkpoint_policies (jax 0.10 has only the
# functions that build them); funcgraph has them whichever jax is installed.
POLICY_CLASSES = {"SaveOnlyTheseNames", "SaveAnyNamesButThese", "SaveAndOffloadOnlyTheseNames"}


def test_checkpoint_policies_has_every_jax_entry():
    public = lambda ns: {n for n in vars(ns) if not n.startswith("_")}
    assert public(jax.checkpoint_policies) <= public(fg.checkpoint_policies)
    assert public(fg.checkpoint_policies) - public(jax.checkpoint_policies) <= POLICY_CLASSES
    assert POLICY_CLASSES <= public(fg.checkpoint_policies)
    assert set(POLICIES) - {"default"} == public(jax.checkpoint_policies) - POLICY_CLASSES
    assert fg.ad_checkpoint.checkpoint_policies is fg.checkpoint_policies
    jax_names = {n for n in dir(jax.ad_checkpoint) if not n.startswith("_")}
    assert jax_names <= set(dir(ad_checkpoint))
    assert ad_checkpoint.checkpoint is fg.checkpoint and ad_checkpoint.remat is fg.remat


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_policy_gradients_match_jax(policy):
    expected = jax.grad(model(JAX), argnums=(0, 1))(X, W)
    remat_jax = jax.grad(JAX["cp"](model(JAX), policy=POLICIES[policy](JAX["policies"])),
                         argnums=(0, 1))(X, W)
    f = fg.checkpoint(model(FG), policy=POLICIES[policy](fg.checkpoint_policies))
    for got in (fg.grad(f, argnums=(0, 1))(X, W), fg.jit(fg.grad(f, argnums=(0, 1)))(X, W)):
        for g, e, r in zip(got, expected, remat_jax, strict=True):
            assert_close(g, e)
            assert_close(g, r)


def _printed(capsys, m, f, *args):
    m["print_saved_residuals"](f, *args)
    # jax writes file:line:column (qualified function name), funcgraph file:line (name)
    text = re.sub(r"(:\d+):\d+ \(", r"\1 (", capsys.readouterr().out)
    return re.sub(r"\([\w.<>]*\.(\w+)\)", r"(\1)", text).splitlines()


COMPARABLE = ["default", "nothing_saveable", "dots_saveable", "checkpoint_dots",
              "dots_with_no_batch_dims_saveable", "save_only_these_names",
              "save_any_names_but_these", "save_from_both_policies"]


@pytest.mark.parametrize("policy", COMPARABLE)
def test_print_saved_residuals_matches_jax(policy, capsys):
    fg_lines = _printed(capsys, FG, fg.checkpoint(
        model(FG), policy=POLICIES[policy](fg.checkpoint_policies)), X, W)
    jax_lines = _printed(capsys, JAX, jax.checkpoint(
        model(JAX), policy=POLICIES[policy](jax.checkpoint_policies)), X, W)
    assert fg_lines == jax_lines
    assert fg_lines[:2] == ["f32[2,3] from the argument x", "f32[3,3] from the argument w"]


def test_print_saved_residuals_lists_what_each_policy_saves(capsys):
    def lines(policy):
        return _printed(capsys, FG, fg.checkpoint(model(FG), policy=policy), X, W)
    p = fg.checkpoint_policies
    assert len(lines(None)) == 2  # the arguments only
    names = lines(p.save_only_these_names("y", "z"))
    assert [re.sub(" from .*", "", s) for s in names[2:]] == \
        ["f32[2,3] named 'y'", "f32[2,3] named 'z'"]
    dots = lines(p.dots_saveable)
    assert len(dots) == 4 and all("output of dot_general" in s for s in dots[2:])
    # everything_saveable saves what plain reverse mode saves
    assert lines(p.everything_saveable) == _printed(capsys, FG, model(FG), X, W)
    # offloading is approximated as saving
    offload = lines(POLICIES["save_and_offload_only_these_names"](p))
    assert offload == names
    assert lines(POLICIES["offload_dot_with_no_batch_dims"](p)) == dots


def test_policy_classes_are_what_the_name_policies_build(capsys):
    p = fg.checkpoint_policies
    only = p.SaveOnlyTheseNames(frozenset({"y"}))
    assert only == p.save_only_these_names("y") and hash(only) == hash(p.save_only_these_names("y"))
    assert p.save_any_names_but_these("y") == p.SaveAnyNamesButThese(frozenset({"y"}))
    offload = p.SaveAndOffloadOnlyTheseNames(frozenset({"y"}), frozenset({"z"}), "device",
                                             "pinned_host")
    assert offload == POLICIES["save_and_offload_only_these_names"](p)
    saved = _printed(capsys, FG, fg.checkpoint(model(FG), policy=only), X, W)
    assert [re.sub(" from .*", "", s) for s in saved[2:]] == ["f32[2,3] named 'y'"]
    if POLICY_CLASSES <= set(vars(jax.checkpoint_policies)):  # jax >= 0.11
        theirs = jax.checkpoint_policies.SaveOnlyTheseNames(frozenset({"y"}))
        assert saved == _printed(capsys, JAX, jax.checkpoint(model(JAX), policy=theirs), X, W)


def test_save_and_offload_names_must_be_disjoint():
    for m in (fg, jax):
        with pytest.raises(ValueError, match="should not intersect"):
            m.checkpoint_policies.save_and_offload_only_these_names(
                names_which_can_be_saved=["a"], names_which_can_be_offloaded=["a"],
                offload_src="device", offload_dst="pinned_host")


def test_save_from_both_policies_wants_bools():
    p = fg.checkpoint_policies
    both = p.save_from_both_policies(p.offload_dot_with_no_batch_dims("a", "b"),
                                     p.nothing_saveable)
    with pytest.raises(ValueError, match="should be a boolean"):
        fg.grad(lambda x: fnp.sum(fg.checkpoint(lambda x: x @ W, policy=both)(x)))(X)


def test_checkpoint_name_is_a_name_equation():
    text = str(fg.make_jaxpr(lambda x: ad_checkpoint.checkpoint_name(fnp.sin(x), "y"))(X))
    assert "name[name=y]" in text
    assert "name[name=y]" in str(jax.make_jaxpr(
        lambda x: jax.ad_checkpoint.checkpoint_name(jnp.sin(x), "y"))(X))
    tree = ad_checkpoint.checkpoint_name({"a": X, "b": (W,)}, "t")
    assert_close(tree["a"], X) and assert_close(tree["b"][0], W)
    f = lambda x: fnp.sum(ad_checkpoint.checkpoint_name(x * x, "sq"))
    assert_close(fg.grad(f)(X), 2 * X)
    assert_close(fg.vmap(lambda x: ad_checkpoint.checkpoint_name(x * 2, "v"))(X), 2 * X)
    assert_close(fg.jvp(lambda x: ad_checkpoint.checkpoint_name(x, "j"), (X,), (W[:2],))[1],
                 W[:2])


def _structure(jaxpr, sub):
    """[(primitive name, differentiated, structure of its sub-jaxpr)] of a jaxpr."""
    out = []
    for eqn in jaxpr.eqns:
        inner = eqn.params.get("jaxpr")
        prim = getattr(eqn, "primitive", None) or eqn.prim
        out.append((prim.name, eqn.params.get("differentiated"),
                    _structure(sub(inner), sub) if inner is not None else None))
    return out


def test_grad_of_checkpoint_jaxpr_matches_jax():
    def f(m):
        return m["cp"](lambda x: m["np"].sin(m["np"].sin(x)))
    got = fg.make_jaxpr(fg.grad(f(FG)))(1.0)
    want = jax.make_jaxpr(jax.grad(f(JAX)))(1.0)
    structure = _structure(got.jaxpr, lambda j: j.jaxpr)
    assert structure == _structure(want.jaxpr, lambda j: j)
    assert structure[-1][:2] == ("remat2", True)  # the recomputation, in the backward part
    forward = fg.make_jaxpr(f(FG))(1.0)
    assert _structure(forward.jaxpr, lambda j: j.jaxpr) == \
        _structure(jax.make_jaxpr(f(JAX))(1.0).jaxpr, lambda j: j)
    assert "remat2[differentiated=False" in str(forward)


def test_backward_recomputation_behind_optimization_barrier():
    f = lambda x: fnp.sum(fnp.sin(fnp.sin(x)))
    x = np.linspace(0, 1, 4, dtype=np.float32)
    lowered = fg.jit(fg.grad(fg.checkpoint(f))).lower(x).as_text()
    assert "stablehlo.optimization_barrier" in lowered
    jf = lambda x: jnp.sum(jnp.sin(jnp.sin(x)))
    assert "stablehlo.optimization_barrier" in jax.jit(jax.grad(jax.checkpoint(jf))).lower(
        x).as_text()
    # as in jax: no barrier without differentiation, nor with prevent_cse=False
    assert "optimization_barrier" not in fg.jit(fg.checkpoint(f)).lower(x).as_text()
    assert "optimization_barrier" not in fg.jit(fg.grad(fg.checkpoint(
        f, prevent_cse=False))).lower(x).as_text()
    assert_close(fg.jit(fg.grad(fg.checkpoint(f)))(x), jax.grad(jf)(x))


def test_checkpoint_under_jvp_vmap_and_hessian():
    def f(m):
        return m["cp"](lambda x: m["np"].sin(x) * m["np"].cos(2 * x))
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    for a, b in zip(fg.jvp(f(FG), (x,), (x,)), jax.jvp(f(JAX), (x,), (x,)), strict=True):
        assert_close(a, b)
    assert_close(fg.vmap(fg.grad(lambda s: f(FG)(s)))(x), jax.vmap(jax.grad(f(JAX)))(x))
    assert_close(fg.grad(fg.grad(f(FG)))(0.3), jax.grad(jax.grad(f(JAX)))(0.3))
    assert_close(fg.jit(fg.grad(fg.grad(f(FG))))(0.3), jax.grad(jax.grad(f(JAX)))(0.3))


def test_checkpoint_static_argnums_and_kwargs():
    def f(x, n, scale=1.0):
        for _ in range(n):
            x = fnp.sin(x) * scale
        return fnp.sum(x)
    g = fg.grad(lambda x: fg.checkpoint(f, static_argnums=1)(x, 3, scale=2.0))(X)
    def jf(x, n, scale=1.0):
        for _ in range(n):
            x = jnp.sin(x) * scale
        return jnp.sum(x)
    assert_close(g, jax.grad(lambda x: jax.checkpoint(jf, static_argnums=1)(x, 3,
                                                                         scale=2.0))(X))


# --- lax.optimization_barrier -----------------------------------------------------------

def _barrier(m, lax):
    def f(x, y):
        a, b = lax.optimization_barrier((m["np"].sin(x), y * 2))
        return m["np"].sum(a * b)
    return f


def test_optimization_barrier_matches_jax():
    f, jf = _barrier(FG, fg.lax), _barrier(JAX, jax.lax)
    y = X + 1
    assert_close(f(X, y), jf(X, y))
    assert_close(fg.jit(f)(X, y), jf(X, y))
    for a, b in zip(fg.grad(f, argnums=(0, 1))(X, y), jax.grad(jf, argnums=(0, 1))(X, y),
                    strict=True):
        assert_close(a, b)
    for a, b in zip(fg.jit(fg.grad(f, argnums=(0, 1)))(X, y),
                    jax.grad(jf, argnums=(0, 1))(X, y), strict=True):
        assert_close(a, b)
    assert_close(fg.vmap(f)(X, y), jax.vmap(jf)(X, y))
    assert_close(fg.vmap(f, in_axes=(1, None))(X, y[:, 0]), jax.vmap(jf, in_axes=(1, None))(
        X, y[:, 0]))
    for a, b in zip(fg.jvp(f, (X, y), (y, X)), jax.jvp(jf, (X, y), (y, X)), strict=True):
        assert_close(a, b)
    text = fg.jit(f).lower(X, y).as_text()
    assert "stablehlo.optimization_barrier" in text
    assert "optimization_barrier" in str(fg.make_jaxpr(f)(X, y))
    backward = str(fg.make_jaxpr(fg.grad(f))(X, y))
    assert backward.count("optimization_barrier") == 2  # the primal one and its transpose
    assert fg.lax.optimization_barrier(()) == ()


# --- named_scope and named_call ---------------------------------------------------------

def _scoped(m, named_scope):
    def f(x):
        with named_scope("outer"):
            y = m["np"].sin(x)
            with named_scope("inner"):
                z = y * 2
        return z + 1
    return f


def test_named_scope_printed_as_jax_prints_name_stacks():
    got = fg.make_jaxpr(_scoped(FG, fg.named_scope))(1.0)
    want = jax.make_jaxpr(_scoped(JAX, jax.named_scope))(1.0)
    assert got.pretty_print(name_stack=True) == want.jaxpr.pretty_print(name_stack=True)
    assert str(got) == str(want)  # the default print shows no names, as jax's
    assert "# [outer/inner]" in got.pretty_print(name_stack=True)


def test_named_scope_in_stablehlo_locations():
    f = _scoped(FG, fg.named_scope)
    lowered = fg.jit(f).lower(1.0)
    debug = lowered.as_text(debug_info=True)
    assert 'loc("outer/sin"' in debug and 'loc("outer/inner/mul"' in debug
    assert "outer" not in lowered.as_text()
    hlo = lowered.compile().as_text()
    assert 'op_name="outer/inner/mul"' in hlo
    assert_close(fg.jit(f)(1.0), np.float32(np.sin(1.0) * 2 + 1))


def test_names_of_nested_jaxprs_are_relative_and_compose_in_lowering():
    inner = fg.jit(lambda x: fnp.cos(x) * 3)

    def f(x):
        with fg.named_scope("outer"):
            return inner(fnp.sin(x))
    jaxpr = fg.make_jaxpr(f)(1.0)
    call = [e for e in jaxpr.jaxpr.eqns if e.prim.name == "pjit"][0]
    assert call.name_stack == ("outer",)
    assert all(e.name_stack == () for e in call.params["jaxpr"].jaxpr.eqns)
    assert 'loc("outer/cos"' in fg.jit(f).lower(1.0).as_text(debug_info=True)


def test_named_scope_survives_grad():
    text = fg.make_jaxpr(fg.grad(_scoped(FG, fg.named_scope)))(1.0).pretty_print(
        name_stack=True)
    assert "cos a" in text and "# [outer]" in text and "# [outer/inner]" in text


def test_named_call_matches_jax():
    f = fg.named_call(lambda x: fnp.sin(x) * 2, name="myfn")
    jf = jax.named_call(lambda x: jnp.sin(x) * 2, name="myfn")
    got, want = fg.make_jaxpr(f)(1.0), jax.make_jaxpr(jf)(1.0)
    # jax 0.10's named_call adds a name-stack entry, no call equation
    assert [e.prim.name for e in got.jaxpr.eqns] == [e.primitive.name for e in want.jaxpr.eqns]
    assert all(e.name_stack == ("myfn",) for e in got.jaxpr.eqns)
    assert 'loc("myfn/sin"' in fg.jit(f).lower(1.0).as_text(debug_info=True)
    assert_close(f(1.0), jf(1.0))

    def named_fn(x):
        return x + 1
    assert fg.make_jaxpr(fg.named_call(named_fn))(1.0).jaxpr.eqns[0].name_stack == \
        ("named_fn",)


def test_named_scope_needs_a_string():
    with pytest.raises(TypeError, match="must be a string"):
        fg.named_scope(3)
    with pytest.raises(TypeError, match="must be a string"):
        jax.named_scope(3)
