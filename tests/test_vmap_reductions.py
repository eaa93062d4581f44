"""vmap of the reductions, cumulative ops, sort and top_k: every batching rule with the
batch axis at several positions (and unbatched sort operands), against jax.vmap and
against a Python loop; under jit and nested vmap; and checks that the rules rewrite
axes instead of moving the batch axis (no needless transposes or broadcasts)."""
import jax
import ml_dtypes
import numpy as np
import pytest

import funcgraph as fg
from funcgraph import lax
from tests.util import assert_close, batched_arrays

rng = np.random.default_rng(0)
B = 3  # the mapped axis size


def make(shape, kind):
    """A random array of dtype `kind`; integers are small, so ties are common."""
    if kind == "bool":
        return rng.random(shape) < 0.5
    if kind == "bfloat16":
        return rng.normal(size=shape).astype(ml_dtypes.bfloat16)
    dtype = np.dtype(kind)
    if dtype.kind in "iu":
        return rng.integers(-3 if dtype.kind == "i" else 0, 4, size=shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


def make_positive(shape):
    return rng.uniform(0.5, 1.5, size=shape).astype(np.float32)


def batched_args(specs, in_axes):
    return batched_arrays(specs, in_axes, B, lambda shape, kind: make_positive(shape)
                          if kind == "positive" else make(shape, kind))


def leaves(x):
    return [np.asarray(v) for v in jax.tree_util.tree_leaves(x)]


def loop(f, args, in_axes):
    """Per-example results of the unmapped f, each output stacked along axis 0."""
    lanes = []
    for i in range(B):
        lane = [a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)]
        lanes.append(leaves(f(*lane)))
    return [np.stack(outs) for outs in zip(*lanes)]


def same(actual, expected):
    actual, expected = leaves(actual), leaves(expected)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert_close(a, e)


# --- the table: name, funcgraph function, jax function, argument specs, in_axes list --

F = "float32"
ONE_AXES = [(0,), (1,), (-1,)]
RANK3_AXES = ONE_AXES + [(2,)]


def reducer(name, axes):
    return (lambda x: getattr(lax, name)(x, axes),
            lambda x: getattr(jax.lax, name)(x, axes))


def arg(name, axis, index_dtype=np.int32):
    return (lambda x: getattr(lax, name)(x, axis, index_dtype),
            lambda x: getattr(jax.lax, name)(x, axis, index_dtype))


def cumulative(name, axis, reverse=False):
    return (lambda x: getattr(lax, name)(x, axis=axis, reverse=reverse),
            lambda x: getattr(jax.lax, name)(x, axis=axis, reverse=reverse))


def sorter(dimension, num_keys=1):
    def fg_fn(*xs):
        return lax.sort(xs if len(xs) > 1 else xs[0], dimension=dimension, num_keys=num_keys)

    def jax_fn(*xs):
        return jax.lax.sort(xs if len(xs) > 1 else xs[0], dimension=dimension,
                            num_keys=num_keys)
    return fg_fn, jax_fn


def top_k(k):
    return lambda x: lax.top_k(x, k), lambda x: jax.lax.top_k(x, k)


X34, X234 = ((3, 4), F), ((2, 3, 4), F)
SORT3 = [((3, 4), "int8"), ((3, 4), "int32"), ((3, 4), F)]

CASES = [
    ("reduce_sum", *reducer("reduce_sum", (0,)), [X34], ONE_AXES),
    ("reduce_sum_two_axes", *reducer("reduce_sum", (0, 2)), [((2, 3, 4), "int32")],
     RANK3_AXES),
    ("reduce_sum_unsorted_axes", *reducer("reduce_sum", (2, 0)), [X234], RANK3_AXES),
    ("reduce_sum_all", *reducer("reduce_sum", (0, 1)), [((3, 4), "complex64")], ONE_AXES),
    ("reduce_sum_none", *reducer("reduce_sum", ()), [X34], ONE_AXES),
    ("reduce_prod", *reducer("reduce_prod", (1,)), [((2, 3, 4), "positive")], RANK3_AXES),
    ("reduce_max", *reducer("reduce_max", (1,)), [((3, 4), "bfloat16")], ONE_AXES),
    ("reduce_max_int8", *reducer("reduce_max", (0, 1)), [((2, 3, 4), "int8")], RANK3_AXES),
    ("reduce_min", *reducer("reduce_min", (0,)), [((3, 4), "uint8")], ONE_AXES),
    ("reduce_and", *reducer("reduce_and", (1,)), [((3, 4), "bool")], ONE_AXES),
    ("reduce_or", *reducer("reduce_or", (0, 1)), [((3, 4), "int32")], ONE_AXES),
    ("reduce_and_empty", *reducer("reduce_and", (0,)), [((0, 4), "bool")], ONE_AXES),
    ("argmax", *arg("argmax", 1), [X234], RANK3_AXES),
    ("argmax_bool", *arg("argmax", 0), [((4, 3), "bool")], ONE_AXES),
    ("argmin_ties", *arg("argmin", 0, np.uint8), [((5, 3), "int8")], ONE_AXES),
    ("argmin_last", *arg("argmin", 2), [((2, 3, 4), "float16")], RANK3_AXES),
    ("cumsum", *cumulative("cumsum", 0), [X34], ONE_AXES),
    ("cumsum_reverse", *cumulative("cumsum", 2, True), [((2, 3, 4), "int32")], RANK3_AXES),
    ("cumprod", *cumulative("cumprod", 1), [((2, 3, 4), "positive")], RANK3_AXES),
    ("cummax", *cumulative("cummax", 1, True), [((3, 4), "int8")], ONE_AXES),
    ("cummin", *cumulative("cummin", 0), [((3, 4), F)], ONE_AXES),
    ("cumlogsumexp", *cumulative("cumlogsumexp", 1), [X234], RANK3_AXES),
    ("sort_last", *sorter(1), [X34], ONE_AXES),
    ("sort_first", *sorter(0), [((3, 4), "int32")], ONE_AXES),
    ("sort_middle", *sorter(1), [X234], RANK3_AXES),
    ("sort_key_val", *sorter(1), SORT3[:2],
     [(0, 0), (1, 1), (-1, -1), (0, None), (None, 1), (1, 0), (-1, 0)]),
    ("sort_two_keys", *sorter(0, num_keys=2), SORT3,
     [(0, 0, 0), (1, None, 1), (None, None, -1), (0, 1, 1), (None, 0, None),
      (-1, 0, None)]),
    ("top_k", *top_k(2), [((5,), F)], [(0,), (1,), (-1,)]),
    ("top_k_rank2", *top_k(3), [((3, 4), "int8")], ONE_AXES),
    ("top_k_rank3", *top_k(1), [((2, 3, 4), F)], RANK3_AXES),
]


def normalized(in_axes, args):
    return [None if a is None else a % np.ndim(x) for a, x in zip(in_axes, args)]


@pytest.mark.parametrize("name,fg_fn,jax_fn,specs,axes_list", CASES,
                         ids=[c[0] for c in CASES])
def test_vmap_matches_jax_loop_and_jit(name, fg_fn, jax_fn, specs, axes_list):
    all_args, expected = [], []
    for in_axes in axes_list:
        args = batched_args(specs, in_axes)
        want = jax.vmap(jax_fn, in_axes=in_axes)(*args)
        got = fg.vmap(fg_fn, in_axes=in_axes)(*args)
        same(got, want)
        same(got, loop(fg_fn, args, normalized(in_axes, args)))
        all_args.append(args)
        expected.append(want)
    # every in_axes variant of this primitive in one compiled program
    jitted = fg.jit(lambda arg_lists: [fg.vmap(fg_fn, in_axes=ax)(*a)
                                       for ax, a in zip(axes_list, arg_lists)])(all_args)
    for got, want in zip(jitted, expected):
        same(got, want)


def test_vmap_out_axes_other_than_zero():
    x = make((2, B, 4), F)
    got = fg.vmap(lambda x: lax.cumsum(x, axis=1), in_axes=1, out_axes=1)(x)
    same(got, jax.vmap(lambda x: jax.lax.cumsum(x, axis=1), in_axes=1, out_axes=1)(x))
    got = fg.vmap(lambda x: lax.top_k(x, 2), in_axes=1, out_axes=-1)(x)
    same(got, jax.vmap(lambda x: jax.lax.top_k(x, 2), in_axes=1, out_axes=-1)(x))


# --- nested vmap: each rule renumbers axes around two batch axes ---------------------

NESTED = [  # (name, fg fn, jax fn, specs, inner in_axes, outer in_axes)
    ("reduce_sum", *reducer("reduce_sum", (0, 1)), [((2, 3, 4, 5), F)], (1,), (-1,)),
    ("reduce_max", *reducer("reduce_max", (1,)), [((2, 3, 4, 5), "int32")], (0,), (2,)),
    ("argmax", *arg("argmax", 0), [((2, 3, 4, 5), F)], (2,), (0,)),
    ("cumsum", *cumulative("cumsum", 1, True), [((2, 3, 4, 5), F)], (-1,), (1,)),
    ("sort", *sorter(0, num_keys=1), [((2, 3, 4, 5), "int8"), ((3, 5, 2), F)],
     (1, None), (0, 2)),
    ("sort_two_keys", *sorter(0, num_keys=2), [((4, 2), "int8"), ((3, 4), "int8")],
     (None, 0), (-1, None)),
    ("top_k", *top_k(2), [((2, 3, 4, 5), F)], (-1,), (0,)),
    ("top_k_lane_last", *top_k(2), [((3, 2, 5), F)], (0,), (0,)),
]


@pytest.mark.parametrize("name,fg_fn,jax_fn,specs,inner,outer", NESTED,
                         ids=[c[0] for c in NESTED])
def test_nested_vmap(name, fg_fn, jax_fn, specs, inner, outer):
    args = [make(shape, kind) for shape, kind in specs]
    want = jax.vmap(jax.vmap(jax_fn, in_axes=inner), in_axes=outer)(*args)
    same(fg.vmap(fg.vmap(fg_fn, in_axes=inner), in_axes=outer)(*args), want)


def test_nested_vmap_under_jit():
    x = make((2, 3, 4, 5), F)

    def body(x):
        total = lax.reduce_sum(x, (1,))
        values, _ = lax.top_k(lax.cumsum(x, axis=0), 2)
        return total, lax.sort(x, dimension=0), values, lax.argmin(x, 1, np.int32)

    def jax_body(x):
        total = jax.lax.reduce_sum(x, (1,))
        values, _ = jax.lax.top_k(jax.lax.cumsum(x, axis=0), 2)
        return total, jax.lax.sort(x, dimension=0), values, jax.lax.argmin(x, 1, np.int32)

    want = jax.vmap(jax.vmap(jax_body, in_axes=1), in_axes=-1)(x)
    same(fg.jit(fg.vmap(fg.vmap(body, in_axes=1), in_axes=-1))(x), want)


# --- the IR: axes are renumbered, the batch axis is left where it is -----------------

def jaxpr_of(f, in_axes, out_axes, *args):
    return fg.make_jaxpr(fg.vmap(f, in_axes=in_axes, out_axes=out_axes))(*args).jaxpr


def eqn_names(f, in_axes, out_axes, *args):
    return [e.prim.name for e in jaxpr_of(f, in_axes, out_axes, *args).eqns]


X = np.zeros((2, 3, 4), np.float32)


def test_ir_reduce_sum_with_batch_axis_1_is_one_reduction():
    x = np.zeros((4, 3), np.float32)
    jaxpr = fg.make_jaxpr(fg.vmap(lambda x: lax.reduce_sum(x, (0,)), in_axes=1))(x).jaxpr
    assert [e.prim.name for e in jaxpr.eqns] == ["reduce_sum"]
    assert jaxpr.eqns[0].params["axes"] == (0,)


@pytest.mark.parametrize("name", ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"])
def test_ir_reductions_renumber_axes(name):
    fn = reducer(name, (0, 2))[0]
    jaxpr = jaxpr_of(fn, 1, 0, np.zeros((2, 5, 3, 4), np.float32))
    assert [e.prim.name for e in jaxpr.eqns] == [name]
    assert jaxpr.eqns[0].params["axes"] == (0, 3)
    # the batch axis ends up where the reduced axes before it leave it
    jaxpr = jaxpr_of(fn, -1, 1, np.zeros((2, 3, 4, 5), np.float32))
    assert [e.prim.name for e in jaxpr.eqns] == [name]
    assert jaxpr.eqns[0].params["axes"] == (0, 2)


def test_ir_reduce_and_or_argminmax_renumber_axes():
    b = np.zeros((2, 3, 4), bool)
    assert eqn_names(lambda x: lax.reduce_and(x, (1,)), 1, 1, b) == ["reduce_and"]
    assert eqn_names(lambda x: lax.reduce_or(x, (0,)), 2, 1, b) == ["reduce_or"]
    jaxpr = jaxpr_of(lambda x: lax.argmax(x, 0, np.int32), 0, 0, X)
    assert [e.prim.name for e in jaxpr.eqns] == ["argmax"]
    assert jaxpr.eqns[0].params["axes"] == (1,)
    jaxpr = jaxpr_of(lambda x: lax.argmin(x, 1, np.int32), 1, 1, X)
    assert [e.prim.name for e in jaxpr.eqns] == ["argmin"]
    assert jaxpr.eqns[0].params["axes"] == (2,)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"])
def test_ir_cumulative_ops_shift_the_axis(name):
    fn = cumulative(name, 1, True)[0]
    jaxpr = jaxpr_of(fn, 1, 1, X)
    assert [e.prim.name for e in jaxpr.eqns] == [name]
    assert jaxpr.eqns[0].params["axis"] == 2
    assert jaxpr.eqns[0].params["reverse"] is True
    assert jaxpr_of(fn, 2, 2, X).eqns[0].params["axis"] == 1


def test_ir_sort_moves_only_what_differs():
    a = np.zeros((3, 2, 4), np.float32)
    fn = sorter(1, num_keys=1)[0]
    jaxpr = jaxpr_of(fn, (1, 1), 1, a, a)
    assert [e.prim.name for e in jaxpr.eqns] == ["sort"]
    assert jaxpr.eqns[0].params["dimension"] == 2
    assert eqn_names(lambda x: lax.sort(x, dimension=0), 2, 2, a) == ["sort"]
    # the unbatched operand must be broadcast (sort needs equal shapes); nothing moves
    assert eqn_names(fn, (1, None), 1, a, np.zeros((3, 4), np.float32)) == [
        "broadcast_in_dim", "sort"]
    # three operands, two batched along axis 1: only the third is transposed
    names = eqn_names(lambda x, y, z: lax.sort((x, y, z), dimension=0, num_keys=1),
                      (1, 0, 1), 1, a, np.zeros((2, 3, 4), np.float32), a)
    assert names == ["transpose", "sort"]


def test_ir_top_k_is_jaxs():
    """top_k takes the axis it reduces, as jax's: the batch axis stays where it is and
    only out_axes moves it (a transpose per output)."""
    ours, theirs = top_k(2)
    for in_axes, out_axes in ((0, 0), (1, 1), (2, 0)):
        want = [e.primitive.name for e in jax.make_jaxpr(
            jax.vmap(theirs, in_axes=in_axes, out_axes=out_axes))(X).eqns]
        assert eqn_names(ours, in_axes, out_axes, X) == want
