"""Partial evaluation of lax.while_loop (linearize through a loop), against jax.

As in JAX: the carries that never depend on an unknown input come from a known loop
run now; the unknown ones from the whole loop staged with the known inputs as
residuals; reverse mode through a while is jax's error; and batching keeps a loop
counter unbatched next to batched carries, also through calls and conds."""
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax
from funcgraph.primitives.control_flow import while_p
from funcgraph.primitives.jaxprs import partial_eval_jaxpr
from tests.util import assert_trees_close

FG = SimpleNamespace(np=fnp, lax=lax, jit=fg.jit, grad=fg.grad, jvp=fg.jvp, vmap=fg.vmap,
                     linearize=fg.linearize, jacfwd=fg.jacfwd, make_jaxpr=fg.make_jaxpr)
JX = SimpleNamespace(np=jnp, lax=jax.lax, jit=jax.jit, grad=jax.grad, jvp=jax.jvp,
                     vmap=jax.vmap, linearize=jax.linearize, jacfwd=jax.jacfwd,
                     make_jaxpr=jax.make_jaxpr)

X = np.array([0.3, -0.2, 0.5], np.float32)
W = np.float32(0.9)
N = np.int32(4)


def fori(m):
    """A fori_loop with a traced trip count (a while loop), closing over w."""
    def f(x, w, n):
        return m.lax.fori_loop(0, n, lambda i, c: m.np.sin(c) * w + 0.1 * i, x)
    return f


def two_carries(m):
    """A while whose second carry never depends on x: it stays known."""
    def f(x, w):
        def body(s):
            k, c, acc = s
            return k + 1, c * w + m.np.cos(c), acc * 1.5 + 1.0
        return m.lax.while_loop(lambda s: s[0] < 5, body, (0, x, W))
    return f


@pytest.mark.parametrize("jit", [False, True])
def test_linearize_through_traced_fori(jit):
    def run(m):
        def lin(x, w, n):
            y, f_lin = m.linearize(lambda x, w: fori(m)(x, w, n), x, w)
            return y, f_lin(np.ones(3, np.float32), np.float32(0.5)), \
                f_lin(X, np.float32(-1.0))
        return m.jit(lin)(X, W, N) if jit else lin(X, W, N)
    assert_trees_close(run(FG), run(JX))


@pytest.mark.parametrize("argnums", [0, 1])
def test_jvp_and_jacfwd_of_linearized_loop(argnums):
    def run(m):
        def g(x, w):
            _, f_lin = m.linearize(lambda x, w: fori(m)(x, w, N), x, w)
            return m.np.sum(f_lin(x, w) ** 2)
        return m.jit(m.jacfwd(g, argnums=argnums))(X, W)
    assert_trees_close(run(FG), run(JX))


def test_known_carry_computed_by_known_loop():
    def run(m):
        y, f_lin = m.linearize(lambda x: two_carries(m)(x, W), X)
        return y, f_lin(X)
    assert_trees_close(run(FG), run(JX))


def test_linearize_program_matches_jax():
    """jax's program: the known (primal) loop, then the whole JVP loop per application."""
    def counts(m):
        def lin(x, w, n):
            y, f_lin = m.linearize(lambda x: fori(m)(x, w, n), x)
            return y, f_lin(x)
        closed = m.make_jaxpr(lin)(X, W, N)
        whiles = [e for e in closed.jaxpr.eqns if e.primitive.name == "while"]
        return len(whiles), [len(e.params["body_jaxpr"].jaxpr.eqns) for e in whiles]
    fg_n, fg_body = counts(FG)
    jx_n, jx_body = counts(JX)
    assert fg_n == jx_n == 2
    assert fg_body[0] <= jx_body[0] + 1  # the known loop drops the tangent's residuals


def test_unknown_predicate_stages_the_whole_loop():
    closed = fg.make_jaxpr(lambda x, lim: lax.while_loop(
        lambda c: c[0] < lim, lambda c: (c[0] + 1.0, c[1] * 2.0), (x, x)))(
        np.float32(0.0), np.float32(3.0))
    known, unknown, out_unknowns, _ = partial_eval_jaxpr(closed, [False, True])
    assert out_unknowns == [True, True]
    assert not [e for e in known.jaxpr.eqns if e.prim is while_p]
    assert len([e for e in unknown.jaxpr.eqns if e.prim is while_p]) == 1


def test_grad_through_while_is_jax_error():
    def traced_bounds(x, w, n):
        return FG.np.sum(fori(FG)(x, w, n))

    def data_dependent(x, w, n):  # eager: the loop runs until the carry is large
        return FG.np.sum(lax.while_loop(lambda c: FG.np.max(c) < 5.0,
                                        lambda c: c * 1.5 + w, x))
    for fun in (fg.jit(fg.grad(traced_bounds)), fg.grad(data_dependent),
                fg.grad(data_dependent, argnums=1)):
        with pytest.raises(ValueError, match="Reverse-mode differentiation does not work "
                                             "for lax.while_loop or lax.fori_loop"):
            fun(np.abs(X) + 0.1, W, N)


def test_grad_through_static_fori_still_works():
    def run(m):
        return m.grad(lambda x, w: m.np.sum(m.lax.fori_loop(
            0, 4, lambda i, c: m.np.sin(c) * w, x)), argnums=(0, 1))(X, W)
    assert_trees_close(run(FG), run(JX))


def test_vmap_keeps_loop_counter_unbatched_through_calls():
    """The counter only meets batched values inside a jitted call and a cond: the
    batching rules (not a dataflow pass) decide it stays unbatched, as in jax."""
    def build(m):
        @m.jit
        def step(k, c):
            return k + 1, c * 2.0

        def f(x):
            def body(s):
                k, c = step(*s)
                c = m.lax.cond(k > 2, lambda c: c + 1.0, lambda c: c, c)
                return k, c
            return m.lax.while_loop(lambda s: s[0] < 4, body, (0, x))
        return f
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert_trees_close(fg.vmap(build(FG))(xs), jax.vmap(build(JX))(xs))
    closed = fg.make_jaxpr(fg.vmap(build(FG)))(xs)
    (loop,) = [e for e in closed.jaxpr.eqns if e.prim is while_p]
    assert loop.outvars[0].aval.shape == ()  # the counter
    assert loop.outvars[1].aval.shape == (2, 3)
