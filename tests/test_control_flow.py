"""Control flow (lax.cond, switch, while_loop, fori_loop, scan, map) against jax.lax.

Each program is written once as `build(m)`, where `m` is a namespace holding either
funcgraph (fnp, fg.lax, fg.jit, ...) or jax (jnp, jax.lax, jax.jit, ...), so both
frameworks run exactly the same code. The table of cases is crossed with a table of
transformations (eager, jit, jvp, grad, vmap and compositions); values, gradients,
dtypes, shapes and output structures must all match jax's."""
import re
from dataclasses import dataclass
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax
from tests.util import assert_trees_close, to_numpy_tree

FG = SimpleNamespace(name="funcgraph", np=fnp, lax=lax, jit=fg.jit, grad=fg.grad,
                     jvp=fg.jvp, vmap=fg.vmap, checkpoint=fg.checkpoint,
                     value_and_grad=fg.value_and_grad, jacfwd=fg.jacfwd, jacrev=fg.jacrev,
                     leaves=fg.tree_util.tree_leaves)
JX = SimpleNamespace(name="jax", np=jnp, lax=jax.lax, jit=jax.jit, grad=jax.grad,
                     jvp=jax.jvp, vmap=jax.vmap, checkpoint=jax.checkpoint,
                     value_and_grad=jax.value_and_grad, jacfwd=jax.jacfwd, jacrev=jax.jacrev,
                     leaves=jax.tree_util.tree_leaves)

rng = np.random.default_rng(0)
B = 4  # the vmap batch size


def f32(*shape, scale=1.0):
    return (rng.normal(size=shape) * scale).astype(np.float32)


def is_inexact(x):
    return np.issubdtype(np.dtype(x.dtype), np.inexact)


def float_outputs(m, f):
    """f with only its floating-point outputs (as a list), so jvp and grad compare
    only what is differentiable (jax gives float0 tangents to integer outputs)."""
    def g(*args):
        return [leaf for leaf in m.leaves(f(*args)) if is_inexact(leaf)]
    return g


def scalarize(m, f):
    """A scalar loss of all of f's float outputs, with non-uniform cotangents."""
    def loss(*args):
        total = 0.0
        for leaf in float_outputs(m, f)(*args):
            total = total + m.np.sum(m.np.sin(leaf))
        return total
    return loss


def with_fixed(f, args, diff):
    """f as a function of the args at positions `diff` only (the others held fixed)."""
    def g(*d):
        full = list(args)
        for i, x in zip(diff, d, strict=True):
            full[i] = x
        return f(*full)
    return g


# --- the programs: build(m) -> function, for m in (FG, JX) ---

C3 = np.array([0.5, -1.0, 2.0], np.float32)  # a constant captured by branches and bodies


def cond_basic(m):
    def f(x, y):
        return m.lax.cond(m.np.sum(x) > 0,
                          lambda a, b: m.np.sin(a) * b,
                          lambda a, b: m.np.cos(a) + b * b, x, y)
    return f


def cond_closure(m):
    """Branches close over an outer value (w, differentiated) and a numpy constant;
    one cond takes no operands at all."""
    def f(x, w):
        first = m.lax.cond(w > 0.0, lambda a: m.np.tanh(a * w) + C3, lambda a: a * C3 - w, x)
        second = m.lax.cond(m.np.sum(x) < 0.0, lambda: x * w, lambda: first + 1.0)
        return first, second
    return f


def cond_pytree(m):
    def f(x, y):
        def true_fun(ops):
            return {"sum": ops["a"] + ops["b"][0]}, m.np.sum(ops["b"][1]) * 2.0
        def false_fun(ops):
            return {"sum": ops["a"] * ops["b"][0]}, m.np.prod(ops["b"][1])
        return m.lax.cond(y[0] > y[1], true_fun, false_fun, {"a": x, "b": (y[0], y)})
    return f


def switch_basic(m):
    def f(i, x, y):
        branches = [lambda a, b: a * b,
                    lambda a, b: m.np.sin(a) + b,
                    lambda a, b: m.np.exp(-a * a) * b]
        return m.lax.switch(i, branches, x, y)
    return f


def while_basic(m):
    """The trip count depends on the data: a batched predicate under vmap."""
    def f(x):
        def cond_fun(c):
            i, v = c
            return (i < 20) & (m.np.sum(v * v) < 50.0)

        def body(c):
            i, v = c
            return i + 1, v * 1.3 + 0.1
        return m.lax.while_loop(cond_fun, body, (0, x))
    return f


def while_closure(m):
    """cond_fun and body close over outer values (w in the body, limit in cond_fun)."""
    def f(x, w, limit):
        def body(c):
            return c * w + 0.3 * m.np.cos(c) + 0.5  # grows for w >= 1: terminates
        return m.lax.while_loop(lambda c: m.np.max(c) < limit, body, x)
    return f


def fori_static(m):
    def f(x, w):
        def body(i, c):
            return m.np.sin(c) * w + i * 0.1
        return m.lax.fori_loop(0, 6, body, x)
    return f


def fori_static_pytree(m):
    def f(x, y):
        def body(i, c):
            a, b = c
            return (a * 0.9 + m.np.sin(b) * i, b - a * 0.1)
        return m.lax.fori_loop(2, 7, body, (x, y))
    return f


def fori_traced(m):
    """Bounds that are traced values: a while loop (forward only)."""
    def f(n, x):
        return m.lax.fori_loop(1, n, lambda i, c: c * 0.9 + m.np.cos(c) / i, x)
    return f


def make_scan(reverse=False, unroll=1):
    def build(m):
        def f(h0, xs, w):
            def body(h, x):
                h = m.np.tanh(h * w + x)
                return h, h * 2.0 + x
            return m.lax.scan(body, h0, xs, reverse=reverse, unroll=unroll)
        return f
    return build


def scan_pytree(m):
    """A dict carry with an integer counter, a tuple of xs, a dict of ys."""
    def f(h, a, b):
        def body(carry, x):
            xa, xb = x
            h = m.np.sin(carry["h"]) * xb + xa
            return {"h": h, "n": carry["n"] + 1}, {"h": h, "dot": m.np.sum(h * xa)}
        return m.lax.scan(body, {"h": h, "n": 0}, (a, b))
    return f


def scan_no_xs(m):
    def f(c, w):
        return m.lax.scan(lambda c, _: (m.np.cos(c) * w + 0.5, c * C3), c, None, length=5)
    return f


def scan_closure(m):
    """The body closes over an outer differentiated value and a numpy constant."""
    def f(h0, w, u):
        def body(h, x):
            h = m.np.tanh(w @ h + u * x + C3)
            return h, m.np.sum(h)
        return m.lax.scan(body, h0, XS_CLOSURE)
    return f


XS_CLOSURE = f32(6, 3)


def make_map(batch_size=None):
    def build(m):
        def f(xs, w):
            return m.lax.map(lambda x: (m.np.sin(x) * w, m.np.sum(x * x)), xs,
                             batch_size=batch_size)
        return f
    return build


def nested_forward(m):
    """scan inside cond inside while_loop (while: forward only)."""
    def f(x, w):
        def inner_scan(v):
            def body(c, vi):
                c = m.np.sin(c * w) + vi
                return c, c
            c, ys = m.lax.scan(body, v[0], v)
            return v * 0.5 + c + ys * 0.1

        def body(carry):
            i, v = carry
            v = m.lax.cond(i % 2 == 0, inner_scan, lambda v: v * w, v)
            return i + 1, v
        return m.lax.while_loop(lambda c: c[0] < 4, body, (0, x))[1]
    return f


XS_NESTED = np.array([0.3, -0.2, 0.7, -1.1, 0.4], np.float32)


def nested_reverse(m):
    """fori_loop (static) inside cond inside scan: all reverse-differentiable."""
    def f(x, w):
        def body(c, xi):
            def taken(c):
                return m.lax.fori_loop(0, 3, lambda i, a: m.np.sin(a) * w + xi, c)
            c = m.lax.cond(xi > 0, taken, lambda c: c * w - xi, c)
            return c, m.np.sum(c)
        return m.lax.scan(body, x, XS_NESTED)
    return f


@dataclass
class Case:
    name: str
    build: object
    args: tuple
    batched: tuple  # the same arguments with a leading batch axis of size B
    diff: tuple  # argument positions to differentiate
    reverse: bool = True  # reverse mode supported


def batch_of(*args, scale=0.5):
    return tuple(np.stack([a + f32(*np.shape(a), scale=scale) for _ in range(B)]) for a in args)


X4 = f32(4)
CASES = [
    Case("cond_true", cond_basic, (np.abs(X4), np.float32(1.5)),
         (np.stack([np.abs(X4), -np.abs(X4), X4 + 2, X4 - 2]), f32(B)), (0, 1)),
    Case("cond_false", cond_basic, (-np.abs(X4), np.float32(1.5)),
         batch_of(-np.abs(X4) - 1, np.float32(1.5)), (0, 1)),
    Case("cond_closure", cond_closure, (f32(3), np.float32(0.7)),
         (f32(B, 3), np.array([0.7, -0.3, 1.2, -2.0], np.float32)), (0, 1)),
    Case("cond_pytree", cond_pytree, (f32(3), np.array([2.0, 1.0, 0.5], np.float32)),
         (f32(B, 3), f32(B, 3)), (0, 1)),
    Case("switch", switch_basic, (np.int32(1), f32(3), np.float32(0.4)),
         (np.array([0, 1, 2, 1], np.int32),) + batch_of(f32(3), np.float32(0.4)), (1, 2)),
    Case("switch_clamped_high", switch_basic, (np.int32(7), f32(3), np.float32(0.4)),
         (np.array([7, -1, 3, 100], np.int32),) + batch_of(f32(3), np.float32(0.4)), (1, 2)),
    Case("switch_clamped_low", switch_basic, (np.int32(-2), f32(3), np.float32(0.4)),
         (np.array([-2, -100, 0, 2], np.int32),) + batch_of(f32(3), np.float32(0.4)), (1, 2)),
    Case("while", while_basic, (f32(3),),
         (np.stack([f32(3) * s for s in (0.1, 1.0, 3.0, 10.0)]),), (0,), reverse=False),
    Case("while_closure", while_closure, (np.abs(f32(3)), np.float32(1.2), np.float32(5.0)),
         (np.abs(f32(B, 3)), np.array([1.1, 1.2, 1.5, 2.0], np.float32),
          np.array([2.0, 5.0, 10.0, 3.0], np.float32)), (0, 1), reverse=False),
    Case("fori_static", fori_static, (f32(3), np.float32(0.8)),
         batch_of(f32(3), np.float32(0.8)), (0, 1)),
    Case("fori_static_pytree", fori_static_pytree, (f32(2), f32(2)),
         batch_of(f32(2), f32(2)), (0, 1)),
    Case("scan", make_scan(), (f32(3), f32(7, 3), f32(3)),
         batch_of(f32(3), f32(7, 3), f32(3)), (0, 1, 2)),
    Case("scan_reverse", make_scan(reverse=True), (f32(3), f32(7, 3), f32(3)),
         batch_of(f32(3), f32(7, 3), f32(3)), (0, 1, 2)),
    Case("scan_unroll2", make_scan(unroll=2), (f32(3), f32(7, 3), f32(3)),
         batch_of(f32(3), f32(7, 3), f32(3)), (0, 1, 2)),
    Case("scan_unroll3_reverse", make_scan(reverse=True, unroll=3), (f32(3), f32(7, 3), f32(3)),
         batch_of(f32(3), f32(7, 3), f32(3)), (0, 1, 2)),
    Case("scan_pytree", scan_pytree, (f32(2), f32(5, 2), f32(5)),
         batch_of(f32(2), f32(5, 2), f32(5)), (0, 1, 2)),
    Case("scan_no_xs", scan_no_xs, (f32(3), np.float32(0.9)),
         batch_of(f32(3), np.float32(0.9)), (0, 1)),
    Case("scan_closure", scan_closure, (f32(3), f32(3, 3, scale=0.5), f32(3)),
         batch_of(f32(3), f32(3, 3, scale=0.5), f32(3)), (0, 1, 2)),
    Case("map", make_map(), (f32(7, 2), f32(2)), batch_of(f32(7, 2), f32(2)), (0, 1)),
    Case("map_batch3", make_map(batch_size=3), (f32(7, 2), f32(2)),
         batch_of(f32(7, 2), f32(2)), (0, 1)),
    Case("nested_while_cond_scan", nested_forward, (f32(4), np.float32(0.9)),
         batch_of(f32(4), np.float32(0.9)), (0, 1), reverse=False),
    Case("nested_scan_cond_fori", nested_reverse, (f32(3), np.float32(0.6)),
         batch_of(f32(3), np.float32(0.6)), (0, 1)),
]


# --- the transformations: transform(m, case) -> result ---

def tangents_for(case, args):
    t_rng = np.random.default_rng(len(case.name))
    return tuple(t_rng.normal(size=np.shape(args[i])).astype(np.float32) for i in case.diff)


def run_eager(m, case):
    return case.build(m)(*case.args)


def run_eager_xla(m, case):
    """funcgraph's eager path through XLA instead of NumPy (jax: plain eager)."""
    if m is JX:
        return run_eager(m, case)
    fg.config.update("funcgraph_eager_numpy", False)
    try:
        return run_eager(m, case)
    finally:
        fg.config.update("funcgraph_eager_numpy", True)


def run_jit(m, case):
    return m.jit(case.build(m))(*case.args)


def _jvp(m, f, case, args):
    g = with_fixed(float_outputs(m, f), args, case.diff)
    primals = tuple(args[i] for i in case.diff)
    return m.jvp(g, primals, tangents_for(case, args))


def run_jvp(m, case):
    return _jvp(m, case.build(m), case, case.args)


def run_jvp_of_jit(m, case):
    return _jvp(m, m.jit(case.build(m)), case, case.args)


def run_vmap(m, case):
    return m.vmap(case.build(m))(*case.batched)


def run_jit_vmap(m, case):
    return m.jit(m.vmap(case.build(m)))(*case.batched)


def run_vmap_jvp(m, case):
    def one(*args):
        return _jvp(m, case.build(m), case, args)
    return m.vmap(one)(*case.batched)


def _grad(m, case, f):
    return m.grad(scalarize(m, f), argnums=case.diff)


def run_grad(m, case):
    return _grad(m, case, case.build(m))(*case.args)


def run_grad_of_jit(m, case):
    return _grad(m, case, m.jit(case.build(m)))(*case.args)


def run_jit_grad(m, case):
    return m.jit(_grad(m, case, case.build(m)))(*case.args)


def run_vmap_grad(m, case):
    return m.vmap(_grad(m, case, case.build(m)))(*case.batched)


def run_jit_vmap_grad(m, case):
    return m.jit(m.vmap(_grad(m, case, case.build(m))))(*case.batched)


FORWARD = {"eager": run_eager, "eager_xla": run_eager_xla, "jit": run_jit, "jvp": run_jvp,
           "jvp_of_jit": run_jvp_of_jit, "vmap": run_vmap, "jit_vmap": run_jit_vmap,
           "vmap_jvp": run_vmap_jvp}
REVERSE = {"grad": run_grad, "grad_of_jit": run_grad_of_jit, "jit_grad": run_jit_grad,
           "vmap_grad": run_vmap_grad, "jit_vmap_grad": run_jit_vmap_grad}
# compositions that add little over the others: run with the slow tests only
SLOW = {"eager_xla", "vmap_jvp", "jit_vmap", "jit_grad"}


def _params(transforms, reverse_only):
    out = []
    for case in CASES:
        if reverse_only and not case.reverse:
            continue
        for name, fn in transforms.items():
            marks = [pytest.mark.slow] if name in SLOW else []
            out.append(pytest.param(case, fn, id=f"{case.name}-{name}", marks=marks))
    return out


# The jax value each transformation is checked against: compositions that compute the
# same function share one jitted jax oracle (one compile per case, not one per
# composition); funcgraph runs every composition itself.
ORACLE = {run_eager: run_jit, run_eager_xla: run_jit, run_jvp: run_jvp_of_jit,
          run_vmap: run_jit_vmap, run_grad: run_jit_grad, run_grad_of_jit: run_jit_grad,
          run_vmap_grad: run_jit_vmap_grad}
_oracle_values = {}


def jax_value(case, transform):
    oracle = ORACLE.get(transform, transform)
    key = (case.name, oracle.__name__)
    if key not in _oracle_values:
        _oracle_values[key] = to_numpy_tree(oracle(JX, case))
    return _oracle_values[key]


@pytest.mark.parametrize("case,transform", _params(FORWARD, reverse_only=False))
def test_forward_against_jax(case, transform):
    assert_trees_close(transform(FG, case), jax_value(case, transform))


@pytest.mark.parametrize("case,transform", _params(REVERSE, reverse_only=True))
def test_reverse_against_jax(case, transform):
    assert_trees_close(transform(FG, case), jax_value(case, transform))


# --- cond and switch semantics ---

def test_cond_boolean_and_integer_predicates():
    for pred in (True, False, np.bool_(True), np.int32(0), np.int32(3), np.int32(-1), 2):
        got = lax.cond(pred, lambda x: x + 1.0, lambda x: x - 1.0, np.float32(2.0))
        want = jax.lax.cond(pred, lambda x: x + 1.0, lambda x: x - 1.0, np.float32(2.0))
        assert_trees_close(got, want)


@pytest.mark.parametrize("index", [-100, -1, 0, 1, 2, 3, 100])
def test_switch_clamps_out_of_range_index(index):
    def build(m):
        return lambda i, x: m.lax.switch(i, [lambda x: x * 10.0, lambda x: x + 1.0,
                                             lambda x: -x], x)
    x = np.float32(2.0)
    want = build(JX)(np.int32(index), x)
    assert_trees_close(build(FG)(np.int32(index), x), want)
    assert_trees_close(fg.jit(build(FG))(np.int32(index), x), want)
    assert_trees_close(build(FG)(index, x), want)


def test_switch_vmap_batched_index_clamped():
    def build(m):
        return lambda i, x: m.lax.switch(i, [lambda x: x * 10.0, lambda x: x + 1.0,
                                             lambda x: -x], x)
    idx = np.array([-7, 0, 1, 2, 3, 9], np.int32)
    xs = f32(6)
    assert_trees_close(fg.vmap(build(FG))(idx, xs), jax.vmap(build(JX))(idx, xs))
    assert_trees_close(fg.vmap(build(FG), in_axes=(0, None))(idx, xs[0]),
                       jax.vmap(build(JX), in_axes=(0, None))(idx, xs[0]))


def test_switch_single_branch():
    got = lax.switch(np.int32(5), [lambda x: x * 3.0], np.float32(2.0))
    assert_trees_close(got, jax.lax.switch(np.int32(5), [lambda x: x * 3.0], np.float32(2.0)))


def build_cond_unbatched_pred(m):
    def f(p, x):
        return m.lax.cond(p > 0, lambda a: m.np.sin(a) * p, lambda a: a * a, x)
    return f


def test_cond_vmap_unbatched_predicate():
    xs = f32(5, 3)
    for p in (np.float32(1.5), np.float32(-1.5)):
        got = fg.vmap(build_cond_unbatched_pred(FG), in_axes=(None, 0))(p, xs)
        want = jax.vmap(build_cond_unbatched_pred(JX), in_axes=(None, 0))(p, xs)
        assert_trees_close(got, want)
        got = fg.jit(fg.vmap(fg.grad(scalarize(FG, build_cond_unbatched_pred(FG)),
                                     argnums=(0, 1)), in_axes=(None, 0)))(p, xs)
        want = jax.vmap(jax.grad(scalarize(JX, build_cond_unbatched_pred(JX)),
                                 argnums=(0, 1)), in_axes=(None, 0))(p, xs)
        assert_trees_close(got, want)


def test_cond_vmap_batched_predicate_unbatched_operand():
    ps = np.array([1.5, -0.5, 2.0, -3.0], np.float32)
    x = f32(3)
    got = fg.vmap(build_cond_unbatched_pred(FG), in_axes=(0, None))(ps, x)
    want = jax.vmap(build_cond_unbatched_pred(JX), in_axes=(0, None))(ps, x)
    assert_trees_close(got, want)


def test_cond_vmap_batched_predicate_grad_of_untaken_branch_is_zero():
    """Under a batched predicate each lane's gradient comes from its own branch only."""
    def build(m):
        return lambda p, x: m.lax.cond(p, lambda x: x * 3.0, lambda x: x * x * x, x)
    ps = np.array([True, False, True, False])
    xs = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    got = fg.vmap(fg.grad(build(FG), argnums=1))(ps, xs)
    np.testing.assert_allclose(np.asarray(got), [3.0, 12.0, 3.0, 48.0], rtol=1e-6)
    assert_trees_close(got, jax.vmap(jax.grad(build(JX), argnums=1))(ps, xs))


# --- while_loop semantics ---

def build_while_counter(m):
    """A predicate that depends only on an (unbatched) counter."""
    def f(x):
        return m.lax.while_loop(lambda c: c[0] < 5,
                                lambda c: (c[0] + 1, c[1] * 0.5 + m.np.sin(c[1])), (0, x))
    return f


def test_while_vmap_unbatched_predicate():
    xs = f32(B, 3)
    assert_trees_close(fg.vmap(build_while_counter(FG))(xs),
                       jax.vmap(build_while_counter(JX))(xs))
    assert_trees_close(fg.jit(fg.vmap(build_while_counter(FG)))(xs),
                       jax.jit(jax.vmap(build_while_counter(JX)))(xs))


def test_while_vmap_batched_predicate_runs_each_lane_to_its_own_end():
    def build(m):
        return lambda n: m.lax.while_loop(lambda c: c[0] < n,
                                          lambda c: (c[0] + 1, c[1] * 2.0), (0, 1.0))
    ns = np.array([0, 3, 1, 6], np.int32)
    got = fg.vmap(build(FG))(ns)
    np.testing.assert_array_equal(np.asarray(got[0]), [0, 3, 1, 6])
    np.testing.assert_allclose(np.asarray(got[1]), [1.0, 8.0, 2.0, 64.0])
    assert_trees_close(got, jax.vmap(build(JX))(ns))
    assert_trees_close(fg.jit(fg.vmap(build(FG)))(ns), jax.vmap(build(JX))(ns))


def test_while_zero_iterations():
    def build(m):
        return lambda x: m.lax.while_loop(lambda c: m.np.sum(c) > 100.0, lambda c: c * 2.0, x)
    x = f32(3)
    assert_trees_close(build(FG)(x), x)
    assert_trees_close(fg.jit(build(FG))(x), build(JX)(x))


def test_fori_traced_bounds_vmap_batched_upper():
    ns = np.array([1, 4, 2, 7], np.int32)
    xs = f32(B, 3)
    assert_trees_close(fg.vmap(fori_traced(FG))(ns, xs), jax.vmap(fori_traced(JX))(ns, xs))
    assert_trees_close(fg.vmap(fori_traced(FG), in_axes=(0, None))(ns, xs[0]),
                       jax.vmap(fori_traced(JX), in_axes=(0, None))(ns, xs[0]))


def test_fori_zero_and_negative_trip_counts():
    for lower, upper in ((3, 3), (5, 2)):
        got = lax.fori_loop(lower, upper, lambda i, c: c + 1.0, np.float32(7.0))
        assert_trees_close(got, jax.lax.fori_loop(lower, upper, lambda i, c: c + 1.0,
                                                  np.float32(7.0)))
        jitted = fg.jit(lambda lo, hi: lax.fori_loop(lo, hi, lambda i, c: c + 1.0,
                                                     np.float32(7.0)))
        assert_trees_close(jitted(np.int32(lower), np.int32(upper)), np.float32(7.0))


def test_fori_loop_index_values():
    def build(m):
        return lambda x: m.lax.fori_loop(2, 6, lambda i, c: c * 10.0 + i, x)
    x = np.float32(0.0)
    assert_trees_close(build(FG)(x), np.float32(2345.0))
    assert_trees_close(fg.jit(build(FG))(x), build(JX)(x))
    assert_trees_close(fg.grad(build(FG))(x), jax.grad(build(JX))(x))


def test_fori_static_trip_count_grad_matches_finite_differences():
    def f(w):
        return lax.fori_loop(0, 10, lambda i, c: c + 0.1 * fnp.sin(c * w), np.float32(1.0))
    w, eps = 0.7, 1e-3
    fd = (float(f(np.float32(w + eps))) - float(f(np.float32(w - eps)))) / (2 * eps)
    np.testing.assert_allclose(float(fg.grad(f)(np.float32(w))), fd, rtol=2e-2)


def test_while_loop_jvp_only_through_carry():
    """jvp through a while loop whose predicate depends on the primal values."""
    def build(m):
        def f(x):
            return m.lax.while_loop(lambda c: c < 10.0, lambda c: c * c + 1.0, x)
        return f
    for x in (np.float32(0.5), np.float32(1.5), np.float32(20.0)):
        got = fg.jvp(build(FG), (x,), (np.float32(1.0),))
        assert_trees_close(got, jax.jvp(build(JX), (x,), (np.float32(1.0),)))


def test_jacfwd_of_scan_and_while():
    case = next(c for c in CASES if c.name == "scan")
    fg_f = float_outputs(FG, case.build(FG))
    jx_f = float_outputs(JX, case.build(JX))
    assert_trees_close(fg.jacfwd(fg_f, argnums=(0, 2))(*case.args),
                       jax.jacfwd(jx_f, argnums=(0, 2))(*case.args))
    case = next(c for c in CASES if c.name == "while")
    assert_trees_close(fg.jacfwd(float_outputs(FG, case.build(FG)))(*case.args),
                       jax.jacfwd(float_outputs(JX, case.build(JX)))(*case.args))


@pytest.mark.slow
def test_hessian_through_scan_and_cond():
    def build(m):
        def f(x):
            def body(c, xi):
                c = m.lax.cond(xi > 0, lambda c: m.np.sin(c) * xi, lambda c: c * c, c)
                return c, c
            return m.np.sum(m.lax.scan(body, x, XS_NESTED)[1])
        return f
    x = f32(3)
    assert_trees_close(fg.hessian(build(FG))(x), jax.hessian(build(JX))(x), tol=1e-3)


# --- reverse mode of while_loop: a clear error ---

def _grad_error(fun, *args):
    """The error (not an AttributeError from a missing API) grad raises."""
    with pytest.raises(Exception) as info:
        fun(*args)
    assert not isinstance(info.value, AttributeError), info.value
    return str(info.value)


def test_while_loop_grad_error_points_to_scan():
    f = while_closure(FG)
    x, w, limit = np.abs(f32(3)), np.float32(1.2), np.float32(5.0)
    for fun, arg in ((fg.grad(lambda x: fnp.sum(f(x, w, limit))), x),
                     (fg.jit(fg.grad(lambda x: fnp.sum(f(x, w, limit)))), x),
                     (fg.grad(lambda w: fnp.sum(f(x, w, limit))), w)):
        msg = _grad_error(fun, arg)
        assert re.search(r"scan|fori_loop", msg), msg


def test_while_loop_vjp_error_points_to_scan():
    def f(x):
        return lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)
    # As in jax, vjp itself works (linearize runs the loop); its pullback raises.
    assert re.search(r"scan|fori_loop",
                     _grad_error(lambda x: fg.vjp(f, x)[1](x), np.float32(1.0)))


def test_fori_loop_traced_bounds_grad_error():
    def loss(n, x):
        return fnp.sum(fori_traced(FG)(n, x))
    fun = fg.jit(fg.grad(loss, argnums=1))
    assert re.search(r"scan|fori_loop", _grad_error(fun, np.int32(4), f32(3)))


def test_while_loop_grad_without_tangents_through_the_loop():
    """As in jax, reverse mode works when no derivative flows through the loop carry
    (the loop only computes a constant, or x is used only by the predicate)."""
    def build(m):
        def f(x):
            k = m.lax.while_loop(lambda c: c < 5.0, lambda c: c + 1.5, 0.0)
            stop = m.lax.while_loop(lambda c: c < x, lambda c: c + 1.0, 0.0)
            return x * k + stop
        return f
    x = np.float32(3.2)
    assert_trees_close(fg.grad(build(FG))(x), jax.grad(build(JX))(x))


# --- scan and map semantics ---

@pytest.mark.parametrize("unroll", [1, 2, 3, True, 10])
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_unroll_and_reverse(unroll, reverse):
    args = (f32(3), f32(7, 3), f32(3))
    fg_f, jx_f = make_scan(reverse, unroll)(FG), make_scan(reverse, unroll)(JX)
    want = jax.jit(jx_f)(*args)
    assert_trees_close(fg.jit(fg_f)(*args), want)
    assert_trees_close(fg_f(*args), want)


@pytest.mark.parametrize("unroll", [2, 3])
def test_scan_unroll_grad(unroll):
    args = (f32(3), f32(7, 3), f32(3))
    fg_loss = scalarize(FG, make_scan(True, unroll)(FG))
    jx_loss = scalarize(JX, make_scan(True, unroll)(JX))
    assert_trees_close(fg.jit(fg.grad(fg_loss, argnums=(0, 1, 2)))(*args),
                       jax.grad(jx_loss, argnums=(0, 1, 2))(*args))


def test_scan_reverse_order_of_visits():
    def build(m):
        return lambda xs: m.lax.scan(lambda c, x: (c * 10.0 + x, c), 0.0, xs, reverse=True)
    xs = np.array([1.0, 2.0, 3.0], np.float32)
    carry, ys = build(FG)(xs)
    assert float(carry) == 321.0
    np.testing.assert_array_equal(np.asarray(ys), [32.0, 3.0, 0.0])
    assert_trees_close((carry, ys), build(JX)(xs))


def test_scan_xs_none_with_length():
    def build(m):
        return lambda c: m.lax.scan(lambda c, x: (c + 1.0, c * 2.0), c, None, length=4)
    assert_trees_close(build(FG)(np.float32(1.0)), build(JX)(np.float32(1.0)))
    assert_trees_close(fg.jit(build(FG))(np.float32(1.0)), build(JX)(np.float32(1.0)))


def test_scan_length_zero():
    def build(m):
        return lambda c, xs: m.lax.scan(lambda c, x: (c + x, c * x), c, xs)
    c, xs = f32(2), np.zeros((0, 2), np.float32)
    assert_trees_close(build(FG)(c, xs), build(JX)(c, xs))
    assert_trees_close(fg.jit(build(FG))(c, xs), build(JX)(c, xs))


@pytest.mark.parametrize("batch_size", [None, 3])
def test_map_over_empty_xs(batch_size):
    xs = np.zeros((0, 2), np.float32)
    want = jax.lax.map(lambda x: x * 2.0, xs, batch_size=batch_size)
    assert_trees_close(lax.map(lambda x: x * 2.0, xs, batch_size=batch_size), want)


def test_scan_no_outputs_and_empty_carry():
    def build(m):
        def f(xs):
            _, ys = m.lax.scan(lambda c, x: ((), m.np.sin(x)), (), xs)
            carry, none = m.lax.scan(lambda c, x: (c + x, None), 0.0, xs)
            return ys, carry, none
        return f
    xs = f32(5)
    assert_trees_close(build(FG)(xs), build(JX)(xs))
    assert_trees_close(fg.jit(build(FG))(xs), build(JX)(xs))


def test_scan_weak_typed_carry_init():
    """A Python float init with a float32 body output: jax accepts it (weak type)."""
    def build(m):
        return lambda x: m.lax.fori_loop(0, 3, lambda i, c: c + x, 0.0)
    x = np.float32(1.25)
    assert_trees_close(build(FG)(x), build(JX)(x))
    assert_trees_close(fg.jit(build(FG))(x), build(JX)(x))


def test_weak_int_carry_promoted_like_jax():
    """A weakly typed init (Python int 0) whose body makes it a float: jax promotes the
    init to the body's dtype rather than raising."""
    got = lax.fori_loop(0, 3, lambda i, c: c + 1.5, 0)
    assert_trees_close(got, jax.lax.fori_loop(0, 3, lambda i, c: c + 1.5, 0))
    got = lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, 0)
    assert_trees_close(got, jax.lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, 0))


@pytest.mark.parametrize("first_weak", [True, False])
def test_cond_and_switch_output_weak_type_is_the_first_branchs(first_weak):
    """jax types a cond's (switch's) outputs as its first branch's (cond: false_fun):
    equinox's error_if joins a strongly typed pure_callback with a weak value this way."""
    def build(m):
        weak = lambda _: m.np.where(True, 1, -1)
        strong = lambda _: m.np.int32(1)
        first, second = (weak, strong) if first_weak else (strong, weak)
        return (lambda p: m.lax.cond(p, second, first, 0),
                lambda i: m.lax.switch(i, [first, second, second], 0))
    for ours, theirs, arg in zip(build(FG), build(JX), (True, 1)):
        want = jax.jit(theirs)(arg)
        for got in (ours(arg), fg.jit(ours)(arg)):
            assert got.weak_type == want.weak_type == first_weak


@pytest.mark.parametrize("batch_size", [None, 1, 2, 3, 7, 10])
def test_map_batch_size(batch_size):
    xs = f32(7, 2)
    w = f32(2)
    fg_f, jx_f = make_map(batch_size)(FG), make_map(batch_size)(JX)
    want = jx_f(xs, w)
    assert_trees_close(fg_f(xs, w), want)
    assert_trees_close(fg.jit(fg_f)(xs, w), want)


def test_map_pytree_and_grad_with_remainder():
    def build(m):
        def f(xs, w):
            out = m.lax.map(lambda p: {"s": m.np.tanh(p["a"] * w) + p["b"]},
                            {"a": xs, "b": xs[:, 0]}, batch_size=4)
            return m.np.sum(out["s"] ** 2)
        return f
    xs, w = f32(10, 3), f32(3)
    assert_trees_close(build(FG)(xs, w), build(JX)(xs, w))
    assert_trees_close(fg.grad(build(FG), argnums=(0, 1))(xs, w),
                       jax.grad(build(JX), argnums=(0, 1))(xs, w))
    ws = f32(3, 3)
    assert_trees_close(fg.vmap(fg.grad(build(FG), argnums=1), in_axes=(None, 0))(xs, ws),
                       jax.vmap(jax.grad(build(JX), argnums=1), in_axes=(None, 0))(xs, ws))


# --- checkpoint inside a scan body ---

def build_rnn_loss(m, remat):
    def loss(w, u, h0, xs):
        def body(h, x):
            h = m.np.tanh(w @ h + u * x)
            return h, m.np.sum(h * h)
        if remat:
            body = m.checkpoint(body)
        h, ys = m.lax.scan(body, h0, xs)
        return m.np.sum(ys) + m.np.sum(h)
    return loss


def test_checkpoint_in_scan_body_same_gradient():
    args = (f32(4, 4, scale=0.5), f32(4), f32(4), f32(6, 4))
    plain = fg.grad(build_rnn_loss(FG, False), argnums=(0, 1, 2))(*args)
    remat = fg.grad(build_rnn_loss(FG, True), argnums=(0, 1, 2))(*args)
    assert_trees_close(remat, plain, tol=1e-5)
    want = jax.grad(build_rnn_loss(JX, True), argnums=(0, 1, 2))(*args)
    assert_trees_close(remat, want)
    assert_trees_close(fg.jit(fg.grad(build_rnn_loss(FG, True), argnums=(0, 1, 2)))(*args), want)


# --- pytree and closure details ---

def test_closure_over_outer_jit_tracer_in_every_construct():
    def build(m):
        def f(x, s):
            a = m.lax.cond(s > 0, lambda: x * s, lambda: x - s)
            b = m.lax.while_loop(lambda c: c < s * 10.0, lambda c: c + s, 0.0)
            c, ys = m.lax.scan(lambda c, xi: (c + xi * s, c), 0.0, x)
            d = m.lax.fori_loop(0, 3, lambda i, c: c * s, x)
            e = m.lax.map(lambda xi: xi + s, x)
            return a, b, c, ys, d, e
        return f
    x, s = f32(5), np.float32(0.75)
    assert_trees_close(fg.jit(build(FG))(x, s), jax.jit(build(JX))(x, s))
    assert_trees_close(build(FG)(x, s), jax.jit(build(JX))(x, s))


def test_pytree_namedtuple_and_none_in_carry():
    from collections import namedtuple
    State = namedtuple("State", ["pos", "vel", "extra"])

    def build(m):
        def f(x):
            def body(i, s):
                return State(s.pos + 0.1 * s.vel, s.vel - 0.1 * s.pos, None)
            return m.lax.fori_loop(0, 5, body, State(x, m.np.zeros_like(x), None))
        return f
    x = f32(3)
    got = build(FG)(x)
    assert isinstance(got, State) and got.extra is None
    assert_trees_close(got, build(JX)(x))
    assert_trees_close(fg.grad(lambda x: fnp.sum(build(FG)(x).pos))(x),
                       jax.grad(lambda x: jnp.sum(build(JX)(x).pos))(x))


# --- errors ---

def _message(exc_type, fun, *args):
    with pytest.raises(exc_type) as info:
        fun(*args)
    return str(info.value)


def test_cond_branch_dtype_mismatch():
    msg = _message(TypeError, lambda x: lax.cond(True, lambda a: a,
                                                 lambda a: a.astype(fnp.int32), x), f32(3))
    assert "f32[3]" in msg and "i32[3]" in msg, msg
    assert re.search(r"branch|true_fun|false_fun", msg), msg


def test_cond_branch_shape_mismatch_under_jit():
    msg = _message(TypeError, fg.jit(lambda x: lax.cond(x[0] > 0, lambda a: a,
                                                        lambda a: a[:2], x)), f32(3))
    assert "f32[3]" in msg and "f32[2]" in msg, msg


def test_cond_branch_structure_mismatch():
    _message(TypeError, lambda x: lax.cond(True, lambda a: (a, a), lambda a: a, x), f32(3))


def test_switch_branch_mismatch_names_the_branch():
    branches = [lambda a: a, lambda a: a, lambda a: a[:2]]
    msg = _message(TypeError, lambda x: lax.switch(0, branches, x), f32(3))
    assert "f32[3]" in msg and "f32[2]" in msg, msg
    assert "2" in msg.replace("f32[2]", ""), msg


def test_switch_no_branches():
    _message(ValueError, lambda x: lax.switch(0, [], x), f32(3))


def test_cond_non_scalar_predicate():
    _message(TypeError, lambda x: lax.cond(x > 0, lambda a: a, lambda a: -a, x), f32(3))


def test_scan_carry_shape_change_names_component():
    def f(xs):
        return lax.scan(lambda c, x: ({"a": c["a"], "b": fnp.ones(2)}, x),
                        {"a": np.float32(1.0), "b": np.float32(1.0)}, xs)
    msg = _message(TypeError, f, f32(3))
    assert re.search(r"['\"]b['\"]", msg), msg
    assert "f32[]" in msg and "f32[2]" in msg, msg


def test_while_carry_dtype_change_names_component():
    def f(x):
        return lax.while_loop(lambda c: c[0] < 3,
                              lambda c: (c[0] + 1, c[1].astype(fnp.float16)), (0, x))
    msg = _message(TypeError, f, f32(2))
    assert "f32[2]" in msg and "f16[2]" in msg, msg
    assert re.search(r"\[1\]|component 1\b", msg), msg


def test_fori_carry_dtype_change_under_jit():
    f = fg.jit(lambda x: lax.fori_loop(0, 3, lambda i, c: c.astype(fnp.float32) + 1.0, x))
    msg = _message(TypeError, f, np.int32(1))
    assert "i32[]" in msg and "f32[]" in msg, msg


def test_while_cond_fun_must_return_boolean_scalar():
    _message(TypeError, lambda x: lax.while_loop(lambda c: c, lambda c: c * 2.0, x),
             np.float32(1.0))
    _message(TypeError, lambda x: lax.while_loop(lambda c: c > 0, lambda c: c * 2.0, x),
             f32(3))


def test_scan_leading_axis_mismatch():
    _message(ValueError, lambda a, b: lax.scan(lambda c, x: (c, x), 0.0, (a, b)),
             f32(3), f32(4))
    _message(ValueError, lambda a: lax.scan(lambda c, x: (c, x), 0.0, a, length=5), f32(3))


def test_scan_without_xs_or_length():
    _message(ValueError, lambda c: lax.scan(lambda c, x: (c, x), c), np.float32(0.0))


# --- the IR and the lowering ---

def test_printed_ir_nests_cond_branches():
    text = str(fg.make_jaxpr(cond_basic(FG))(X4, np.float32(1.5)))
    assert "cond[" in text, text
    assert "sin" in text and "cos" in text, text
    assert text.count("lambda") >= 3, text  # the outer jaxpr and both branches


def test_printed_ir_nests_while_bodies():
    text = str(fg.make_jaxpr(while_basic(FG))(f32(3)))
    assert "while[" in text, text
    assert "lt" in text and "mul" in text, text
    assert text.count("lambda") >= 3, text  # the outer jaxpr, cond_fun and body


def test_printed_ir_nests_scan_body():
    text = str(fg.make_jaxpr(make_scan(reverse=True)(FG))(f32(3), f32(7, 3), f32(3)))
    assert "scan[" in text and "tanh" in text, text
    assert "reverse=True" in text, text


def test_printed_ir_nested_constructs_in_order():
    text = str(fg.make_jaxpr(nested_forward(FG))(f32(4), np.float32(0.9)))
    w, c, s = text.find("while["), text.find("cond["), text.find("scan[")
    assert 0 <= w < c < s, text
    assert "sin" in text, text


def test_fori_static_is_a_scan_and_traced_is_a_while():
    static = str(fg.make_jaxpr(fori_static(FG))(f32(3), np.float32(0.8)))
    assert "scan[" in static and "while[" not in static, static
    traced = str(fg.make_jaxpr(fori_traced(FG))(np.int32(4), f32(3)))
    assert "while[" in traced, traced


def test_lowering_uses_case_and_while():
    cond_text = fg.jit(cond_basic(FG)).lower(X4, np.float32(1.5)).as_text()
    assert "stablehlo.case" in cond_text, cond_text
    switch_text = fg.jit(switch_basic(FG)).lower(np.int32(1), f32(3), np.float32(0.4)).as_text()
    assert "stablehlo.case" in switch_text, switch_text
    while_text = fg.jit(while_basic(FG)).lower(f32(3)).as_text()
    assert "stablehlo.while" in while_text, while_text
    scan_text = fg.jit(make_scan()(FG)).lower(f32(3), f32(7, 3), f32(3)).as_text()
    assert "stablehlo.while" in scan_text, scan_text


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 13])
def test_associative_scan_matches_jax(n):
    x = np.arange(1, n + 1, dtype=np.float32) / n
    for fn, jfn in ((fg.lax.add, jax.lax.add), (fg.lax.mul, jax.lax.mul)):
        for reverse in (False, True):
            np.testing.assert_allclose(
                fg.lax.associative_scan(fn, x, reverse=reverse),
                jax.lax.associative_scan(jfn, x, reverse=reverse), rtol=1e-6)
    m = np.arange(2 * n, dtype=np.float32).reshape(2, n)
    np.testing.assert_allclose(fg.jit(lambda m: fg.lax.associative_scan(fg.lax.add, m, axis=1))(m),
                               jax.lax.associative_scan(jax.lax.add, m, axis=1))


def test_transpose_rule_closing_over_an_array_inside_a_loop():
    """A backward rule that builds an array constant inside a fori_loop body: the
    transposed body has consts, which the loop's lowering turns into constants."""
    def make(fw):
        @fw.custom_vjp
        def f(x):
            return x * 2.0
        f.defvjp(lambda x: (x * 2.0, None),
                 lambda r, g: (g * np.array([1.0, 2.0, 3.0], np.float32),))
        return lambda x: fw.lax.fori_loop(0, 3, lambda i, c: f(c), x).sum()
    x = np.ones(3, np.float32)
    want = jax.jit(jax.grad(make(jax)))(x)
    np.testing.assert_allclose(fg.grad(make(fg))(x), want)
    np.testing.assert_allclose(fg.jit(fg.grad(make(fg)))(x), want)
