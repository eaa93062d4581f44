"""Derivatives of the reductions, cumulative ops, sort and top_k (JVP and transpose
rules), through their lax wrappers, against jax.jvp / jax.vjp and finite differences.

Each case is fn(lax, *float_args, *int_args): the float arguments are differentiated,
the integer ones are held fixed.  The same fn runs with funcgraph.lax and jax.lax.
Cases with ties (max/min/sort/top_k) or infinities are compared with jax only: their
derivative there is a convention (ties share the tangent), not a limit."""
from typing import Callable, NamedTuple

import jax
import numpy as np
import pytest

import funcgraph as fg
from funcgraph import dtypes, lax
from funcgraph.interpreters.ad_util import Zero, is_zero
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.primitives import reductions
from funcgraph.test_util import check_grads


class Case(NamedTuple):
    name: str
    fn: Callable
    floats: tuple
    ints: tuple = ()
    finite_differences: bool = True   # False at ties and infinities


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def distinct(*shape, seed=0):
    """Values at least 0.25 apart, so extrema and orders survive small perturbations."""
    n = int(np.prod(shape))
    values = np.random.default_rng(seed).permutation(n).astype(np.float32) * 0.25 - n / 8
    return values.reshape(shape)


def with_zeros(*shape, at, seed=0):
    x = rand(*shape, seed=seed)
    for index in at:
        x[index] = 0.0
    return x


def f32(rows):
    return np.array(rows, np.float32)


# Rows with ties: all equal, a tie at the maximum, ties at both ends.
TIES = f32([[1, 3, 3, 2, 3, 0, 3], [2, 2, 2, 2, 2, 2, 2], [5, -1, 5, 4, -1, -1, 0]])
# One zero in row 0, two in row 1, none in row 2 (and one in row 3).
PROD_ZEROS = with_zeros(4, 5, at=[(0, 1), (1, 0), (1, 3), (3, 4)])

CASES = [
    Case("reduce_sum", lambda L, x: L.reduce_sum(x, (1,)), (rand(3, 4),)),
    Case("reduce_sum_axes_0_2", lambda L, x: L.reduce_sum(x, (0, 2)), (rand(2, 3, 4),)),
    Case("reduce_sum_all", lambda L, x: L.reduce_sum(x, (0, 1)), (rand(3, 4),)),
    Case("reduce_sum_no_axes", lambda L, x: L.reduce_sum(x, ()), (rand(3, 4),)),
    Case("reduce_prod", lambda L, x: L.reduce_prod(x, (1,)), (rand(3, 4),)),
    Case("reduce_prod_axes_0_2", lambda L, x: L.reduce_prod(x, (0, 2)), (rand(2, 3, 4),)),
    Case("reduce_prod_zeros", lambda L, x: L.reduce_prod(x, (1,)), (PROD_ZEROS,)),
    Case("reduce_prod_zeros_axis0", lambda L, x: L.reduce_prod(x, (0,)), (PROD_ZEROS,)),
    Case("reduce_prod_zeros_all", lambda L, x: L.reduce_prod(x, (0, 1)),
         (with_zeros(2, 3, at=[(1, 2)]),)),
    Case("reduce_prod_empty", lambda L, x: L.reduce_prod(x, (0,)), (rand(0, 3),)),
    Case("reduce_max", lambda L, x: L.reduce_max(x, (1,)), (distinct(3, 5),)),
    Case("reduce_max_axes_0_2", lambda L, x: L.reduce_max(x, (0, 2)), (distinct(2, 3, 4),)),
    Case("reduce_max_ties", lambda L, x: L.reduce_max(x, (1,)), (TIES,),
         finite_differences=False),
    Case("reduce_max_ties_all", lambda L, x: L.reduce_max(x, (0, 1)), (TIES,),
         finite_differences=False),
    Case("reduce_min", lambda L, x: L.reduce_min(x, (0,)), (distinct(4, 3),)),
    Case("reduce_min_ties", lambda L, x: L.reduce_min(x, (1,)), (TIES,),
         finite_differences=False),
    Case("cumsum", lambda L, x: L.cumsum(x, axis=0), (rand(5, 3),)),
    Case("cumsum_reverse", lambda L, x: L.cumsum(x, axis=1, reverse=True), (rand(3, 6),)),
    Case("cumprod", lambda L, x: L.cumprod(x, axis=0), (rand(7, 3),)),
    Case("cumprod_reverse", lambda L, x: L.cumprod(x, axis=1, reverse=True), (rand(2, 8),)),
    Case("cumprod_zeros", lambda L, x: L.cumprod(x, axis=1), (PROD_ZEROS,)),
    Case("cumprod_zeros_reverse", lambda L, x: L.cumprod(x, axis=1, reverse=True),
         (PROD_ZEROS,)),
    Case("cumprod_length_1", lambda L, x: L.cumprod(x, axis=0), (rand(1, 3),)),
    Case("cummax", lambda L, x: L.cummax(x, axis=0), (distinct(6, 3),)),
    Case("cummax_reverse", lambda L, x: L.cummax(x, axis=1, reverse=True), (distinct(3, 5),)),
    Case("cummax_ties", lambda L, x: L.cummax(x, axis=1), (TIES,), finite_differences=False),
    Case("cummax_ties_reverse", lambda L, x: L.cummax(x, axis=1, reverse=True), (TIES,),
         finite_differences=False),
    Case("cummin", lambda L, x: L.cummin(x, axis=1), (distinct(2, 9),)),
    Case("cummin_ties_reverse", lambda L, x: L.cummin(x, axis=1, reverse=True), (TIES,),
         finite_differences=False),
    Case("cumlogsumexp", lambda L, x: L.cumlogsumexp(x, axis=0), (rand(6, 2),)),
    Case("cumlogsumexp_reverse", lambda L, x: L.cumlogsumexp(x, axis=1, reverse=True),
         (rand(2, 5),)),
    Case("cumlogsumexp_infinities", lambda L, x: L.cumlogsumexp(x, axis=0),
         (f32([-np.inf, 0.5, -np.inf, 2.0, -1.0]),), finite_differences=False),
    Case("sort", lambda L, x: L.sort(x), (distinct(7),)),
    Case("sort_dimension_0", lambda L, x: L.sort(x, dimension=0), (distinct(4, 3),)),
    Case("sort_key_val", lambda L, k, v: L.sort_key_val(k, v), (distinct(3, 5), rand(3, 5))),
    Case("sort_two_keys_with_ties", lambda L, a, b, c: L.sort((a, b, c), num_keys=2),
         (f32([1, 0, 1, 0, 2, 1]), f32([3, 2, 1, 2, 0, 3]), rand(6)),
         finite_differences=False),
    Case("sort_values_only", lambda L, v, k: L.sort_key_val(k, v, dimension=0),
         (rand(5, 2),), (np.array([[3, 1], [0, 2], [4, 4], [1, 0], [2, 3]], np.int32),)),
    Case("sort_int_values", lambda L, k, v: L.sort_key_val(k, v), (distinct(6),),
         (np.arange(6, dtype=np.int32),)),
    Case("top_k", lambda L, x: tuple(L.top_k(x, 3)), (distinct(4, 6),)),
    Case("top_k_axis_0", lambda L, x: tuple(L.top_k(x, 2, axis=0)), (distinct(5, 3),)),
    Case("top_k_ties", lambda L, x: tuple(L.top_k(x, 4)), (TIES,), finite_differences=False),
]
IDS = [c.name for c in CASES]


def bind(case, L):
    """The case as a function of its float arguments (the integer ones fixed)."""
    return lambda *floats: case.fn(L, *floats, *case.ints)


def is_float(x):
    return dtypes.is_inexact(np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype)


def random_like(tree, seed):
    """Random values shaped like tree's leaves; float0 zeros for integer leaves."""
    rng = np.random.default_rng(seed)

    def one(x):
        x = np.asarray(x)
        if not is_float(x):
            return np.zeros(x.shape, dtypes.float0)
        return rng.standard_normal(x.shape).astype(x.dtype)
    return jax.tree_util.tree_map(one, tree)


def close(actual, expected, tol=2e-5):
    actual, expected = jax.tree_util.tree_leaves(actual), jax.tree_util.tree_leaves(expected)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        a, e = np.asarray(a), np.asarray(e)
        assert a.shape == e.shape and a.dtype == e.dtype, (a.shape, a.dtype, e.shape, e.dtype)
        if a.dtype != dtypes.float0:
            np.testing.assert_allclose(a, e, rtol=tol, atol=tol)


def weighted_sum(L, out, weights):
    """sum(out * weights) over the float leaves, as contractions."""
    total = 0.0
    for o, w in zip(jax.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(weights)):
        if is_float(w):
            n = int(np.prod(np.shape(w)))
            total = total + L.dot_general(L.reshape(o, (n,)), w.reshape(n),
                                          (((0,), (0,)), ((), ())))
    return total


class Inputs(NamedTuple):
    tangents: tuple
    ct_leaves: list     # the output cotangent's leaves (float0 for integer outputs)
    ct_tree: object
    weights: object     # of the weighted sum whose gradient is taken


def cached(fn):
    """fn(case) computed once per case (cases hold arrays, so key them by name)."""
    results = {}

    def get(case):
        if case.name not in results:
            results[case.name] = fn(case)
        return results[case.name]
    return get


@cached
def inputs(case):
    out = jax.eval_shape(bind(case, jax.lax), *case.floats)
    out = jax.tree_util.tree_map(lambda s: np.zeros(s.shape, s.dtype), out)
    ct_leaves, ct_tree = jax.tree_util.tree_flatten(random_like(out, 2))
    return Inputs(random_like(case.floats, 1), ct_leaves, ct_tree, random_like(out, 3))


def derivatives(L, jvp, vjp, grad, case):
    """A function of (floats, ints, float cotangents) giving the primal output, the jvp's
    float tangents, the pullback of the cotangent, and the gradient of a weighted sum.
    Float0 values stay inside (as constants, or dropped): jit does not pass them."""
    data = inputs(case)
    nf = len(case.floats)

    def run(floats, ints, float_cts):
        it = iter(float_cts)
        ct = data.ct_tree.unflatten([next(it) if is_float(c) else c for c in data.ct_leaves])
        f = lambda *fl: case.fn(L, *fl, *ints)  # noqa: E731
        out, t_out = jvp(f, floats, data.tangents)
        float_t_out = [t for t in jax.tree_util.tree_leaves(t_out) if is_float(t)]
        loss = lambda *fl: weighted_sum(L, f(*fl), data.weights)  # noqa: E731
        return out, float_t_out, vjp(f, *floats)[1](ct), grad(loss, tuple(range(nf)))(*floats)
    return run


def call(fn, case):
    float_cts = [c for c in inputs(case).ct_leaves if is_float(c)]
    return fn(case.floats, case.ints, float_cts)


@cached
def expected(case):
    """jax's answers, computed in one compiled call per case."""
    return call(jax.jit(derivatives(jax.lax, jax.jvp, jax.vjp, jax.grad, case)), case)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jvp_matches_jax(case):
    out, t_out = fg.jvp(bind(case, lax), case.floats, inputs(case).tangents)
    expected_out, expected_t, _, _ = expected(case)
    close(out, expected_out)
    close([t for t in jax.tree_util.tree_leaves(t_out) if is_float(t)], expected_t)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_vjp_matches_jax(case):
    data = inputs(case)
    out, pullback = fg.vjp(bind(case, lax), *case.floats)
    close(out, expected(case)[0])
    close(pullback(data.ct_tree.unflatten(data.ct_leaves)), expected(case)[2])


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jit_matches_jax(case):
    """jvp, vjp and grad under jit, with the integer arguments traced."""
    got = call(fg.jit(derivatives(lax, fg.jvp, fg.vjp, fg.grad, case)), case)
    close(got, expected(case))




FD_CASES = [c for c in CASES if c.finite_differences]


@pytest.mark.parametrize("case", FD_CASES, ids=[c.name for c in FD_CASES])
def test_check_grads_order_2(x64, case):
    floats = tuple(np.asarray(x, np.float64) for x in case.floats)

    def float_outputs(*args):  # integer outputs (indices) have no derivative to check
        return [o for o in jax.tree_util.tree_leaves(bind(case, lax)(*args)) if is_float(o)]
    check_grads(float_outputs, floats, order=2)


# --- rules in particular -----------------------------------------------------------

def test_reduce_max_ties_share_the_tangent():
    x = f32([1, 3, 3, -2])
    _, t = fg.jvp(lambda x: lax.reduce_max(x, (0,)), (x,), (f32([10, 1, 2, 100]),))
    assert np.asarray(t) == 1.5
    np.testing.assert_array_equal(fg.grad(lambda x: lax.reduce_max(x, (0,)))(x),
                                  [0, 0.5, 0.5, 0])


@pytest.mark.parametrize("x, expected", [([2, 0, 3], [0, 6, 0]), ([0, 0, 3], [0, 0, 0]),
                                         ([2, 5, 3], [15, 6, 10])])
def test_reduce_prod_grad_with_zeros(x, expected):
    grad = fg.grad(lambda x: lax.reduce_prod(x, (0,)))(f32(x))
    np.testing.assert_array_equal(grad, f32(expected))


@pytest.mark.parametrize("name", ["reduce_prod", "cumprod"])
def test_hessian_at_zeros_matches_jax(name):
    """Second derivatives stay exact where the operand has zeros (no division by x)."""
    def f(L, x):
        if name == "reduce_prod":
            return L.reduce_prod(x, (0,))
        return L.reduce_sum(L.cumprod(x, axis=0), (0,))
    # Hessian-vector products (forward over reverse), one column at a time.
    hvp = fg.jit(lambda x, v: fg.jvp(fg.grad(lambda x: f(lax, x)), (x,), (v,))[1])
    expected = jax.jit(jax.hessian(lambda x: f(jax.lax, x)))
    for x in (f32([2.0, 0.0, -1.5, 0.0, 3.0]), f32([2.0, 0.0, -1.5, 0.5, 3.0])):
        hessian = np.stack([hvp(x, v) for v in np.eye(5, dtype=np.float32)], axis=1)
        np.testing.assert_allclose(hessian, expected(x), rtol=1e-6)
        assert np.count_nonzero(hessian) > 0


@pytest.mark.parametrize("prim", ["argmax", "argmin"])
def test_argmax_argmin_have_float0_tangents(prim):
    x = distinct(3, 4)

    def f(L, x):
        return getattr(L, prim)(x, 1, np.int32), L.reduce_max(x, (1,))
    (i, m), (t_i, t_m) = fg.jvp(lambda x: f(lax, x), (x,), (rand(3, 4),))
    assert np.asarray(t_i).dtype == dtypes.float0 and np.shape(t_i) == (3,)
    _, pullback = fg.vjp(lambda x: f(lax, x), x)
    ct = (np.zeros((3,), dtypes.float0), rand(3, seed=1))
    _, expected_pullback = jax.vjp(lambda x: f(jax.lax, x), x)
    close(pullback(ct), expected_pullback(ct))


@pytest.mark.parametrize("prim", ["reduce_and", "reduce_or"])
def test_reduce_and_or_have_no_tangent(prim):
    x = np.array([[True, False], [True, True]])
    _, t = fg.jvp(lambda x: getattr(lax, prim)(x, (1,)), (x,),
                  (np.zeros((2, 2), dtypes.float0),))
    assert np.asarray(t).dtype == dtypes.float0 and np.shape(t) == (2,)
    # The rule itself (called directly: the JVP trace skips all-zero tangents).
    rule = jvp_rules[getattr(reductions, f"{prim}_p")]
    _, t = rule([x], [Zero(fg.core.ShapedArray((2, 2), dtypes.float0))], axes=(1,))
    assert is_zero(t) and t.aval.dtype == dtypes.float0 and t.aval.shape == (2,)


@pytest.mark.parametrize("fn", [lambda x: lax.reduce_sum(x, (0, 2)),
                                lambda x: lax.cumsum(x, axis=1, reverse=True)],
                         ids=["reduce_sum", "cumsum"])
def test_linear_rules_leave_no_residuals(fn):
    _, pullback = fg.vjp(fn, rand(2, 3, 4))
    assert pullback.residuals == []


@pytest.mark.parametrize("name", ["cumprod", "cummax", "cumlogsumexp"])
def test_cumulative_jvp_on_empty_and_unit_axes(name):
    for shape in [(0, 3), (3, 0), (1, 4)]:
        x, t = rand(*shape), rand(*shape, seed=1)
        out, t_out = fg.jvp(lambda x: getattr(lax, name)(x, axis=1), (x,), (t,))
        _, expected = jax.jvp(lambda x: getattr(jax.lax, name)(x, axis=1), (x,), (t,))
        close(t_out, expected)
