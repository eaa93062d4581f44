"""Derivatives of the structural and slicing primitives (JVP and transpose rules),
through their lax wrappers, against jax.jvp / jax.vjp and finite differences.

Each case is fn(lax, *float_args, *int_args): the float arguments are differentiated,
the integer ones (indices) are held fixed.  The same fn runs with funcgraph.lax and
jax.lax."""
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
from funcgraph import lax
from funcgraph.test_util import check_grads


class Case(NamedTuple):
    name: str
    fn: Callable
    floats: tuple
    ints: tuple = ()
    finite_differences: bool = True   # False where the function has ties (kinks)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def distinct(*shape, seed=0):
    """Values 0.25 apart, offset by seed / 10, so arrays made with different seeds share
    no value either: min/max have no ties, even under small perturbations."""
    n = int(np.prod(shape))
    values = np.random.default_rng(seed).permutation(n) * 0.25 - n / 8 + seed / 10
    return values.reshape(shape).astype(np.float32)


def idx(*rows):
    return np.array(rows, np.int32)


def gather_dn(L, offset, collapsed, start_map, obatch=(), ibatch=()):
    return L.GatherDimensionNumbers(offset_dims=offset, collapsed_slice_dims=collapsed,
                                    start_index_map=start_map, operand_batching_dims=obatch,
                                    start_indices_batching_dims=ibatch)


def scatter_dn(L, window, inserted, to_operand, obatch=(), ibatch=()):
    return L.ScatterDimensionNumbers(update_window_dims=window, inserted_window_dims=inserted,
                                     scatter_dims_to_operand_dims=to_operand,
                                     operand_batching_dims=obatch,
                                     scatter_indices_batching_dims=ibatch)


# Scatter into (5, 6) at (row, col) pairs, one scalar update each.
POINT_DN = ((), (0, 1), (0, 1))
# Scatter rows of length 6 into (5, 6) at row indices.
ROW_DN = ((1,), (0,), (0,))

CASES = [
    Case("broadcast_in_dim", lambda L, x: L.broadcast_in_dim(x, (2, 3, 4), (1, 2)),
         (rand(3, 1),)),
    Case("broadcast_in_dim_scalar", lambda L, x: L.broadcast_in_dim(x, (2, 3), ()),
         (np.float32(1.5),)),
    Case("broadcast_in_dim_unit_kept", lambda L, x: L.broadcast_in_dim(x, (1, 4, 3), (0, 2)),
         (rand(1, 3),)),
    Case("reshape", lambda L, x: L.reshape(x, (4, 6)), (rand(2, 3, 4),)),
    Case("transpose", lambda L, x: L.transpose(x, (2, 0, 1)), (rand(2, 3, 4),)),
    Case("squeeze", lambda L, x: L.squeeze(x, (1, 3)), (rand(3, 1, 4, 1),)),
    Case("expand_dims", lambda L, x: L.expand_dims(x, (0, 2)), (rand(3, 4),)),
    Case("rev", lambda L, x: L.rev(x, (0, 1)), (rand(3, 4),)),
    Case("pad_interior", lambda L, x, v: L.pad(x, v, ((1, 2, 1), (-1, 2, 2))),
         (rand(4, 5), np.float32(0.5))),
    Case("pad_negative", lambda L, x, v: L.pad(x, v, ((-2, -1, 1), (0, -3, 0))),
         (rand(4, 5), np.float32(-1.0))),
    Case("pad_crop_all", lambda L, x, v: L.pad(x, v, ((-3, 3, 0),)),
         (rand(3), np.float32(2.0))),
    Case("pad_operand_only", lambda L, x: L.pad(x, 0.0, ((1, 1, 1), (0, 0, 0))),
         (rand(2, 3),)),
    Case("concatenate", lambda L, a, b, c: L.concatenate([a, b, c], 1),
         (rand(2, 3), rand(2, 1, seed=1), rand(2, 2, seed=2))),
    Case("concatenate_with_constant", lambda L, a: L.concatenate(
        [a, np.ones((1, 3), a.dtype), a], 0), (rand(2, 3),)),
    Case("slice", lambda L, x: L.slice(x, (1, 2), (6, 9)), (rand(7, 9),)),
    Case("slice_strided", lambda L, x: L.slice(x, (1, 2), (6, 9), (2, 3)), (rand(7, 9),)),
    Case("slice_empty", lambda L, x: L.slice(x, (2, 0), (2, 3), (1, 2)), (rand(4, 3),)),
    Case("dynamic_slice", lambda L, x, i, j: L.dynamic_slice(x, (i, j), (3, 2)),
         (rand(5, 6),), (np.int32(1), np.int32(5))),     # j clamps to 4
    Case("dynamic_slice_negative", lambda L, x, i: L.dynamic_slice(x, (i, 0), (2, 6)),
         (rand(5, 6),), (np.int32(-2),)),
    Case("dynamic_update_slice", lambda L, x, u, i, j: L.dynamic_update_slice(x, u, (i, j)),
         (rand(5, 6), rand(2, 3, seed=1)), (np.int32(3), np.int32(5))),
    Case("dynamic_update_slice_update_only",
         lambda L, u, i: L.dynamic_update_slice(np.zeros((4,), u.dtype), u, (i,)),
         (rand(2),), (np.int32(1),)),
    Case("gather_points", lambda L, x, i: L.gather(
        x, i, gather_dn(L, (1,), (0, 1), (0, 1)), (1, 1, 3), mode="promise_in_bounds"),
        (rand(5, 6, 3),), (idx([0, 1], [4, 5], [0, 1], [2, 3]),)),
    Case("gather_windows_clip", lambda L, x, i: L.gather(
        x, i, gather_dn(L, (1, 2), (1,), (0, 1)), (2, 1, 3), mode="clip"),
        (rand(5, 6, 3),), (idx([4, 1], [-3, 2], [1, 9]),)),
    Case("gather_fill", lambda L, x, i: L.gather(
        x, i, gather_dn(L, (2,), (0,), (0,)), (1, 6), mode="fill", fill_value=7.0),
        (rand(5, 6),), (idx([[1], [7]], [[4], [-1]]),)),
    Case("gather_batching", lambda L, x, i: L.gather(
        x, i, gather_dn(L, (2,), (1,), (1,), (0,), (0,)), (1, 1, 2), mode="clip"),
        (rand(3, 5, 2),), (np.array([[[0], [4], [4], [2]]] * 3, np.int32),)),
    Case("scatter_add_duplicates", lambda L, x, u, i: L.scatter_add(
        x, i, u, scatter_dn(L, *POINT_DN)),
        (rand(5, 6), rand(4, seed=1)), (idx([0, 1], [3, 2], [0, 1], [4, 5]),)),
    Case("scatter_add_rows_clip", lambda L, x, u, i: L.scatter_add(
        x, i, u, scatter_dn(L, *ROW_DN), mode="clip"),
        (rand(5, 6), rand(3, 6, seed=1)), (idx([1], [7], [1]),)),
    Case("scatter_add_drop", lambda L, x, u, i: L.scatter_add(
        x, i, u, scatter_dn(L, *ROW_DN), mode="fill"),
        (rand(5, 6), rand(3, 6, seed=1)), (idx([1], [7], [-1]),)),
    Case("scatter_add_updates_only", lambda L, u, i: L.scatter_add(
        np.zeros((5, 6), u.dtype), i, u, scatter_dn(L, *POINT_DN)),
        (rand(4, seed=1),), (idx([0, 1], [3, 2], [0, 1], [4, 5]),)),
    Case("scatter_unique", lambda L, x, u, i: L.scatter(
        x, i, u, scatter_dn(L, *POINT_DN), unique_indices=True),
        (rand(5, 6), rand(3, seed=1)), (idx([0, 1], [3, 2], [4, 5]),)),
    Case("scatter_duplicates", lambda L, x, u, i: L.scatter(
        x, i, u, scatter_dn(L, *ROW_DN)),
        (rand(5, 6), rand(4, 6, seed=1)), (idx([1], [3], [1], [3]),)),
    Case("scatter_drop", lambda L, x, u, i: L.scatter(
        x, i, u, scatter_dn(L, *POINT_DN), mode="fill"),
        (rand(5, 6), rand(3, seed=1)), (idx([0, 1], [9, 2], [4, 5]),)),
    Case("scatter_mul_unique", lambda L, x, u, i: L.scatter_mul(
        x, i, u, scatter_dn(L, *POINT_DN), unique_indices=True),
        (rand(5, 6), rand(3, seed=1)), (idx([0, 1], [3, 2], [4, 5]),)),
    Case("scatter_mul_operand_only", lambda L, x, i: L.scatter_mul(
        x, i, np.array([2.0, -3.0, 0.5], x.dtype), scatter_dn(L, *POINT_DN)),
        (rand(5, 6),), (idx([0, 1], [3, 2], [0, 1]),)),
    Case("scatter_min", lambda L, x, u, i: L.scatter_min(
        x, i, u, scatter_dn(L, *ROW_DN)),
        (distinct(5, 6), distinct(3, 6, seed=1)), (idx([1], [3], [1]),)),
    Case("scatter_max_points", lambda L, x, u, i: L.scatter_max(
        x, i, u, scatter_dn(L, *POINT_DN), mode="clip"),
        (distinct(5, 6), distinct(4, seed=1)), (idx([0, 1], [3, 2], [0, 1], [4, 5]),)),
    # Ties between updates and with the kept operand: tangents are averaged.
    Case("scatter_max_ties", lambda L, x, u, i: L.scatter_max(
        x, i, u, scatter_dn(L, *POINT_DN)),
        (np.array([[1.0, 2.0], [3.0, 4.0]], np.float32),
         np.array([5.0, 5.0, 3.0, 0.0], np.float32)), (idx([0, 0], [0, 0], [1, 0], [1, 1]),),
        finite_differences=False),
]
IDS = [c.name for c in CASES]


def bind(case, L):
    """The case as a function of its float arguments (indices fixed)."""
    return lambda *floats: case.fn(L, *floats, *case.ints)


def random_like(tree, seed):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(np.shape(x)).astype(np.asarray(x).dtype) for x in tree)


def close(actual, expected, tol=2e-5):
    actual, expected = jax.tree_util.tree_leaves(actual), jax.tree_util.tree_leaves(expected)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        a, e = np.asarray(a), np.asarray(e)
        assert a.shape == e.shape and a.dtype == e.dtype, (a.shape, a.dtype, e.shape, e.dtype)
        np.testing.assert_allclose(a, e, rtol=tol, atol=tol)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jvp_matches_jax(case):
    tangents = random_like(case.floats, 1)
    out, t_out = fg.jvp(bind(case, lax), case.floats, tangents)
    expected_out, expected_t = jax.jvp(bind(case, jax.lax), case.floats, tangents)
    close(out, expected_out)
    close(t_out, expected_t)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_vjp_matches_jax(case):
    out, pullback = fg.vjp(bind(case, lax), *case.floats)
    expected_out, expected_pullback = jax.vjp(bind(case, jax.lax), *case.floats)
    (ct,) = random_like([expected_out], 2)
    close(out, expected_out)
    close(pullback(ct), expected_pullback(ct))


def weighted_sum(L, out, weights):
    """sum(out * weights) as a contraction (so only these rules and dot_general's are used)."""
    n = int(np.prod(np.shape(weights)))
    return L.dot_general(L.reshape(out, (n,)), weights.reshape(n), (((0,), (0,)), ((), ())))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jit_grad_matches_jax(case):
    """grad under jit, with the indices as traced arguments of the jitted function."""
    expected_out = bind(case, jax.lax)(*case.floats)
    (weights,) = random_like([expected_out], 3)
    argnums = tuple(range(len(case.floats)))

    def loss(L, *args):
        return weighted_sum(L, case.fn(L, *args), weights)

    nf = len(case.floats)
    grads = fg.jit(lambda *a: fg.grad(lambda *f: loss(lax, *f, *a[nf:]), argnums)(*a[:nf]))(
        *case.floats, *case.ints)
    expected = jax.jit(lambda *a: jax.grad(lambda *f: loss(jax.lax, *f, *a[nf:]), argnums)(
        *a[:nf]))(*case.floats, *case.ints)
    close(grads, expected)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jit_pullback_matches_jax(case):
    out, _ = jax.vjp(bind(case, jax.lax), *case.floats)
    (ct,) = random_like([out], 4)
    nf = len(case.floats)

    def pullback(L, vjp, *a):
        return vjp(lambda *f: case.fn(L, *f, *a[nf:-1]), *a[:nf])[1](a[-1])
    got = fg.jit(lambda *a: pullback(lax, fg.vjp, *a))(*case.floats, *case.ints, ct)
    expected = jax.jit(lambda *a: pullback(jax.lax, jax.vjp, *a))(*case.floats, *case.ints, ct)
    close(got, expected)




# Which duplicate wins a scatter is implementation-defined: XLA's CPU backend applies the
# updates in order, a GPU's race, and may pick another winner in each evaluation that
# finite differences make.
WINNER_DEPENDS_ON_BACKEND = {"scatter_duplicates"}


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.name,
                 marks=[pytest.mark.cpu_only] if c.name in WINNER_DEPENDS_ON_BACKEND else [])
    for c in CASES if c.finite_differences])
def test_check_grads_order_2(x64, case):
    floats = tuple(np.asarray(x, np.float64) for x in case.floats)
    check_grads(bind(case, lax), floats, order=2)


# --- rules in particular -----------------------------------------------------------

def test_scatter_mul_updates_with_repeated_indices_is_refused():
    def f(u):
        return lax.scatter_mul(np.ones((3,), np.float32), idx([0], [0]), u,
                               scatter_dn(lax, (), (0,), (0,)))
    with pytest.raises(NotImplementedError, match="unique_indices=True"):
        fg.jvp(f, (np.ones(2, np.float32),), (np.ones(2, np.float32),))
    with pytest.raises(NotImplementedError, match="unique_indices=True"):
        fg.grad(lambda u: lax.reduce_sum(f(u), (0,)))(np.ones(2, np.float32))


def test_scatter_duplicates_winner_gets_the_cotangent():
    """Only the update that won an element receives that element's cotangent."""
    x = np.zeros((3,), np.float32)
    u = np.array([1.0, 2.0, 3.0], np.float32)
    i = idx([1], [1], [2])
    dn = scatter_dn(lax, (), (0,), (0,))
    out, pullback = fg.vjp(lambda x, u: lax.scatter(x, i, u, dn), x, u)
    ct_x, ct_u = pullback(np.array([10.0, 20.0, 30.0], np.float32))
    winner = 1 if np.asarray(out)[1] == u[1] else 0
    np.testing.assert_array_equal(ct_x, [10.0, 0.0, 0.0])
    expected_u = np.array([0.0, 0.0, 30.0], np.float32)
    expected_u[winner] = 20.0
    np.testing.assert_array_equal(ct_u, expected_u)


def test_scatter_transpose_with_repeated_indices():
    """Transposing scatter itself (not only its JVP) handles repeated indices."""
    from funcgraph.interpreters.transpose import UndefinedPrimal, transpose_rules
    from funcgraph.primitives.slicing import scatter_p
    x_aval = fg.core.ShapedArray((4,), np.dtype(np.float32))
    u_aval = fg.core.ShapedArray((3,), np.dtype(np.float32))
    i = idx([2], [0], [2])
    ct = fg.numpy.asarray(np.array([1.0, 2.0, 3.0, 4.0], np.float32))
    params = dict(dimension_numbers=lax.ScatterDimensionNumbers((), (0,), (0,)),
                  indices_are_sorted=False, unique_indices=False,
                  mode=lax.GatherScatterMode.FILL_OR_DROP)
    ct_x, ct_i, ct_u = transpose_rules[scatter_p](ct, UndefinedPrimal(x_aval), i,
                                                  UndefinedPrimal(u_aval), **params)
    assert ct_i is None
    np.testing.assert_array_equal(ct_x, [0.0, 2.0, 0.0, 4.0])
    ct_u = np.asarray(ct_u)
    assert ct_u[1] == 1.0 and sorted([ct_u[0], ct_u[2]]) == [0.0, 3.0]


def test_linear_rules_leave_no_residuals():
    """Structural ops are linear: their pullbacks keep nothing of the primal alive."""
    x = rand(4, 5)
    _, pullback = fg.vjp(lambda x: lax.rev(lax.pad(lax.transpose(x, (1, 0)), 0.0,
                                                   ((1, 1, 1), (0, 0, 0))), (0,)), x)
    assert pullback.residuals == []


def test_gather_fill_tangent_is_zero():
    """Out-of-bounds gathered windows hold the fill value, whose tangent is 0."""
    x = rand(3)
    f = lambda x: lax.gather(x, idx([5]), gather_dn(lax, (), (0,), (0,)), (1,), mode="fill",
                             fill_value=2.0)
    out, t = fg.jvp(f, (x,), (np.ones(3, np.float32),))
    np.testing.assert_array_equal(out, [2.0])
    np.testing.assert_array_equal(t, [0.0])


def test_scatter_max_clipped_indices():
    """A clipped index acts as the in-bounds one it clips to.  (jax.lax.scatter_max's own
    JVP gives NaN here: it gathers in fill mode while the scatter clips.)"""
    x, u = distinct(5, 6), distinct(4, seed=1)
    dn = scatter_dn(lax, *POINT_DN)

    def f(i):
        return lambda x, u: lax.scatter_max(x, i, u, dn, mode="clip")
    clipped = f(idx([0, 1], [4, 9], [-2, 1], [3, 2]))
    inside = f(idx([0, 1], [4, 5], [0, 1], [3, 2]))
    tangents = random_like((x, u), 5)
    close(fg.jvp(clipped, (x, u), tangents), fg.jvp(inside, (x, u), tangents))
    ct = rand(5, 6, seed=6)
    close(fg.vjp(clipped, x, u)[1](ct), fg.vjp(inside, x, u)[1](ct))
    assert np.all(np.isfinite(fg.vjp(clipped, x, u)[1](ct)[1]))


def test_integer_operands_get_float0_cotangents():
    i = np.int32(2)
    x = rand(5)
    _, pullback = fg.vjp(lambda x, i: lax.dynamic_slice(x, (i,), (2,)), x, i)
    ct_x, ct_i = pullback(np.ones(2, np.float32))
    np.testing.assert_array_equal(ct_x, [0, 0, 1, 1, 0])
    assert np.asarray(ct_i).dtype == jax.dtypes.float0
    expected = jax.vjp(lambda x, i: jax.lax.dynamic_slice(x, (i,), (2,)), x, i)[1](
        jnp.ones(2, jnp.float32))
    close(ct_x, expected[0])


@pytest.mark.parametrize("dtype", [np.float16, jnp.bfloat16, np.complex64])
def test_composition_in_other_dtypes(dtype):
    """The rules are dtype-generic: a chain of them in half precision and complex."""
    def f(L, x, v):
        y = L.pad(L.rev(x, (1,)), v, ((1, 0, 1), (0, -1, 0)))
        y = L.slice(y, (0, 0), (6, 3), (2, 1))
        z = L.gather(y, idx([0, 2], [2, 1]), gather_dn(L, (1,), (0,), (0, 1)), (1, 2),
                     mode="clip")
        return L.concatenate([L.reshape(z, (4,)), L.dynamic_slice(y, (1, 0), (1, 3))[0]], 0)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4)).astype(dtype)
    v = np.asarray(0.5, dtype)
    if dtype == np.complex64:
        x = x + 1j * rng.standard_normal((3, 4)).astype(np.float32)
    ct = np.arange(7).astype(dtype)
    out, pullback = fg.vjp(lambda x, v: f(lax, x, v), x, v)
    expected_out, expected_pullback = jax.vjp(lambda x, v: f(jax.lax, x, v), x, v)
    tol = 1e-5 if dtype == np.complex64 else 2e-2
    close(out, expected_out, tol)
    close(pullback(ct), expected_pullback(ct), tol)
    t = (np.ones_like(x), np.asarray(1, dtype))
    close(fg.jvp(lambda x, v: f(lax, x, v), (x, v), t),
          jax.jvp(lambda x, v: f(jax.lax, x, v), (x, v), t), tol)
