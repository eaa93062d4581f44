"""vmap of the structural and slicing primitives: every batching rule with the batch
axis at several positions and with unbatched operands, against jax.vmap and against a
Python loop; under jit and nested vmap; and checks that the rules add no needless
transposes or broadcasts to the IR."""
import jax
import ml_dtypes
import numpy as np
import pytest

import funcgraph as fg
from tests.util import assert_same, batched_arrays
from funcgraph import lax

rng = np.random.default_rng(0)
B = 3  # the mapped axis size

GD = lax.GatherDimensionNumbers
SD = lax.ScatterDimensionNumbers
JGD = jax.lax.GatherDimensionNumbers
JSD = jax.lax.ScatterDimensionNumbers


# --- argument makers: (lane shape, kind) -> a batched array for a given axis ---------

def make(shape, kind):
    """A random array; kind: a dtype name, or ("idx", high) for int32 indices in [0, high)."""
    if isinstance(kind, tuple) and kind[0] == "distinct_idx":
        return distinct_indices(shape, kind[1])
    if isinstance(kind, tuple):
        _, high = kind
        return rng.integers(0, high, size=shape).astype(np.int32)
    if kind == "bool":
        return rng.random(shape) < 0.5
    if kind == "bfloat16":
        return rng.normal(size=shape).astype(ml_dtypes.bfloat16)
    dtype = np.dtype(kind)
    if dtype.kind in "iu":
        return rng.integers(-5 if dtype.kind == "i" else 0, 9, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


def distinct_indices(shape, high):
    """int32 indices in [0, high) (a prime, above every dimension) that differ along every
    axis: sum_d c_d i_d + offset mod high, with distinct c_d coprime to high.  Whichever
    axis is the batch axis, each example's index vectors differ, as unique_indices says
    (duplicates under it are undefined, and a GPU's scatter then races)."""
    coefficients = rng.permutation(np.arange(1, high))[:len(shape)]
    offset = rng.integers(0, high)
    return ((np.tensordot(coefficients, np.indices(shape), 1) + offset) % high).astype(np.int32)


def batched_args(specs, in_axes):
    return batched_arrays(specs, in_axes, B, make)


def loop(f, args, in_axes):
    """Per-example results of the unmapped f, stacked along axis 0."""
    outs = []
    for i in range(B):
        lane = [a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)]
        outs.append(np.asarray(f(*lane)))
    return np.stack(outs)


def same(actual, expected):
    assert_same(actual, expected, tol=1e-6)


# --- the table: name, funcgraph function, jax function, argument specs, in_axes -------

F = "float32"
X34, X234, X56 = ((3, 4), F), ((2, 3, 4), F), ((5, 6), F)
SCALAR_F = ((), F)


def idx(high):
    return ((), ("idx", high))


def gather_fns(dn, slice_sizes, **kw):
    jdn = JGD(**dn._asdict())
    return (lambda x, i: lax.gather(x, i, dn, slice_sizes, **kw),
            lambda x, i: jax.lax.gather(x, i, jdn, slice_sizes, **kw))


def scatter_fns(name, dn, **kw):
    jdn = JSD(**dn._asdict())
    fg_op, jax_op = getattr(lax, name), getattr(jax.lax, name)
    return (lambda x, i, u: fg_op(x, i, u, dn, **kw),
            lambda x, i, u: jax_op(x, i, u, jdn, **kw))


def dyn_slice_fns(sizes):
    return (lambda x, i, j: lax.dynamic_slice(x, (i, j), sizes, allow_negative_indices=False),
            lambda x, i, j: jax.lax.dynamic_slice(x, (i, j), sizes))


def dyn_update_fns():
    return (lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j),
                                                        allow_negative_indices=False),
            lambda x, u, i, j: jax.lax.dynamic_update_slice(x, u, (i, j)))


# gather: rows of a matrix (jnp-style x[i]); 2-d index vectors with 2-d windows and an
# unsorted start_index_map; a gather that already has batching dimensions.
ROWS = GD(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
WINDOWS = GD(offset_dims=(1, 3), collapsed_slice_dims=(), start_index_map=(1, 0))
PAIRED = GD(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
            operand_batching_dims=(0,), start_indices_batching_dims=(0,))
ROWS_S = SD(update_window_dims=(1,), inserted_window_dims=(0,),
            scatter_dims_to_operand_dims=(0,))
WINDOWS_S = SD(update_window_dims=(1, 2), inserted_window_dims=(),
               scatter_dims_to_operand_dims=(0, 1))
PAIRED_S = SD(update_window_dims=(), inserted_window_dims=(1,),
              scatter_dims_to_operand_dims=(1,), operand_batching_dims=(0,),
              scatter_indices_batching_dims=(0,))
SCALAR_S = SD(update_window_dims=(), inserted_window_dims=(), scatter_dims_to_operand_dims=())

ONE_AXES = [(0,), (1,), (-1,)]
GATHER_AXES = [(0, None), (1, None), (-1, None), (None, 0), (None, 1), (None, -1), (0, 0),
               (1, 1), (-1, -1), (1, 0)]
SCATTER_AXES = [(0, None, None), (1, None, None), (-1, None, None), (None, None, 0),
                (None, None, -1), (1, None, 1), (None, 0, None), (None, -1, 0), (0, 0, 0),
                (1, -1, -1), (-1, 1, 0), (0, 1, None)]

CASES = [
    ("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1,)),
     lambda x: jax.lax.broadcast_in_dim(x, (2, 3, 4), (1,)), [((3,), F)], [(0,), (1,)]),
    ("broadcast_in_dim_stretch", lambda x: lax.broadcast_in_dim(x, (3, 5, 2), (0, 1)),
     lambda x: jax.lax.broadcast_in_dim(x, (3, 5, 2), (0, 1)), [((3, 1), "int8")],
     ONE_AXES),
    ("broadcast_in_dim_scalar", lambda x: lax.broadcast_in_dim(x, (2, 3), ()),
     lambda x: jax.lax.broadcast_in_dim(x, (2, 3), ()), [((), "bool")], [(0,)]),
    ("reshape", lambda x: lax.reshape(x, (6, 4)), lambda x: jax.lax.reshape(x, (6, 4)),
     [X234], ONE_AXES),
    ("reshape_split", lambda x: lax.reshape(x, (2, 1, 3)),
     lambda x: jax.lax.reshape(x, (2, 1, 3)), [((6,), "int32")], [(0,), (1,)]),
    ("transpose", lambda x: lax.transpose(x, (2, 0, 1)),
     lambda x: jax.lax.transpose(x, (2, 0, 1)), [X234], ONE_AXES + [(2,)]),
    ("squeeze", lambda x: lax.squeeze(x, (0, 2)), lambda x: jax.lax.squeeze(x, (0, 2)),
     [((1, 3, 1), "bfloat16")], ONE_AXES + [(2,)]),
    ("expand_dims", lambda x: lax.expand_dims(x, (0, 2)),
     lambda x: jax.lax.expand_dims(x, (0, 2)), [((2, 3), F)], ONE_AXES),
    ("expand_dims_last", lambda x: lax.expand_dims(x, (2,)),
     lambda x: jax.lax.expand_dims(x, (2,)), [((2, 3), F)], ONE_AXES),
    ("expand_dims_scalar", lambda x: lax.expand_dims(x, (0,)),
     lambda x: jax.lax.expand_dims(x, (0,)), [SCALAR_F], [(0,)]),
    ("rev", lambda x: lax.rev(x, (0, 2)), lambda x: jax.lax.rev(x, (0, 2)),
     [((2, 3, 4), "int8")], ONE_AXES),
    ("pad", lambda x, v: lax.pad(x, v, ((1, 2, 1), (-1, 0, 0))),
     lambda x, v: jax.lax.pad(x, v, ((1, 2, 1), (-1, 0, 0))), [X34, SCALAR_F],
     [(0, None), (1, None), (-1, None), (0, 0), (None, 0), (1, 0), (-1, 0)]),
    ("concatenate", lambda a, b, c: lax.concatenate([a, b, c], 0),
     lambda a, b, c: jax.lax.concatenate([a, b, c], 0),
     [((2, 3), "bool"), ((4, 3), "bool"), ((1, 3), "bool")],
     [(0, 0, 0), (1, 0, None), (None, -1, 1), (None, None, 0), (1, 1, -1)]),
    ("concatenate_dim1", lambda a, b: lax.concatenate([a, b], 1),
     lambda a, b: jax.lax.concatenate([a, b], 1), [((3, 2), "float16"), ((3, 4), "float16")],
     [(1, 1), (0, 2), (None, 1), (-1, None)]),
    ("slice", lambda x: lax.slice(x, (1, 0), (4, 6), (2, 3)),
     lambda x: jax.lax.slice(x, (1, 0), (4, 6), (2, 3)), [X56], ONE_AXES),
    ("slice_unit_strides", lambda x: lax.slice(x, (1, 2), (4, 5)),
     lambda x: jax.lax.slice(x, (1, 2), (4, 5)), [((5, 6), "complex64")], ONE_AXES),
    # start indices up to 5 in a dimension of 5 or 6: some are clamped
    ("dynamic_slice", *dyn_slice_fns((2, 3)), [X56, idx(6), idx(6)],
     [(0, None, None), (1, None, None), (-1, None, None), (0, 0, None), (None, 0, 0),
      (1, None, 0), (-1, 0, 0), (None, 0, None)]),
    ("dynamic_slice_1d", lambda x, i: lax.dynamic_slice(x, (i,), (2,),
                                                         allow_negative_indices=False),
     lambda x, i: jax.lax.dynamic_slice(x, (i,), (2,)), [((5,), "uint8"), idx(6)],
     [(0, None), (0, 0), (None, 0)]),
    ("dynamic_update_slice", *dyn_update_fns(), [X56, ((2, 3), F), idx(6), idx(6)],
     [(0, None, None, None), (None, 0, None, None), (1, -1, None, None),
      (0, 0, 0, None), (None, None, 0, 0), (None, 0, None, 0), (1, 0, 0, 0),
      (-1, None, 0, None)]),
    ("gather_rows", *gather_fns(ROWS, (1, 4)), [((5, 4), F), ((3, 1), ("idx", 5))],
     GATHER_AXES),
    ("gather_windows", *gather_fns(WINDOWS, (2, 3), mode="clip"),
     [X56, ((2, 3, 2), ("idx", 6))], GATHER_AXES),
    ("gather_fill", *gather_fns(WINDOWS, (2, 3), mode="fill"),
     [((5, 6), "int32"), ((2, 3, 2), ("idx", 6))], GATHER_AXES),
    ("gather_paired", *gather_fns(PAIRED, (1, 1)), [((4, 5), F), ((4, 1), ("idx", 5))],
     GATHER_AXES + [(2, 0)]),
    ("scatter", *scatter_fns("scatter", ROWS_S, unique_indices=True),
     [((5, 4), F), ((3, 1), ("distinct_idx", 5)), ((3, 4), F)], SCATTER_AXES),
    ("scatter_add", *scatter_fns("scatter_add", ROWS_S),
     [((5, 4), F), ((3, 1), ("idx", 5)), ((3, 4), F)], SCATTER_AXES),
    ("scatter_mul", *scatter_fns("scatter_mul", ROWS_S),
     [((5, 4), F), ((3, 1), ("idx", 5)), ((3, 4), F)], SCATTER_AXES),
    ("scatter_min", *scatter_fns("scatter_min", ROWS_S),
     [((5, 4), "int32"), ((3, 1), ("idx", 5)), ((3, 4), "int32")], SCATTER_AXES),
    ("scatter_max", *scatter_fns("scatter_max", ROWS_S),
     [((5, 4), F), ((3, 1), ("idx", 5)), ((3, 4), F)], SCATTER_AXES),
    ("scatter_add_windows_clip", *scatter_fns("scatter_add", WINDOWS_S, mode="clip"),
     [X56, ((2, 2), ("idx", 6)), ((2, 2, 3), F)], SCATTER_AXES),
    ("scatter_add_windows_drop", *scatter_fns("scatter_add", WINDOWS_S, mode="drop"),
     [X56, ((2, 2), ("idx", 6)), ((2, 2, 3), F)], SCATTER_AXES),
    ("scatter_add_paired", *scatter_fns("scatter_add", PAIRED_S),
     [((4, 5), F), ((4, 2, 1), ("idx", 5)), ((4, 2), F)],
     SCATTER_AXES + [(2, 2, 2), (None, 2, 1)]),
    ("scatter_add_scalar", *scatter_fns("scatter_add", SCALAR_S),
     [SCALAR_F, ((3, 0), ("idx", 1)), ((3,), F)],
     [(0, None, None), (None, None, 0), (0, 1, 1), (None, 0, -1), (0, None, 0)]),
]


# jax's own vmap of these does not compile on XLA's GPU backend (a RET_CHECK on the empty
# constant s32[3,0] jax emits); their oracle is jax on the CPU.
JAX_ON_CPU = {"scatter_add_scalar"}


def jax_oracle_device(name):
    return jax.devices("cpu")[0] if name in JAX_ON_CPU else None


@pytest.mark.parametrize("name,fg_fn,jax_fn,specs,axes_list", CASES,
                         ids=[c[0] for c in CASES])
def test_vmap_matches_jax_loop_and_jit(name, fg_fn, jax_fn, specs, axes_list):
    all_args, expected = [], []
    for in_axes in axes_list:
        args = batched_args(specs, in_axes)
        with jax.default_device(jax_oracle_device(name)):
            want = np.asarray(jax.vmap(jax_fn, in_axes=in_axes)(*args))
        got = fg.vmap(fg_fn, in_axes=in_axes)(*args)
        same(got, want)
        same(got, loop(fg_fn, args, [None if a is None else a % np.ndim(x)
                                     for a, x in zip(in_axes, args)]))
        all_args.append(args)
        expected.append(want)
    # every in_axes variant of this primitive in one compiled program
    jitted = fg.jit(lambda arg_lists: [fg.vmap(fg_fn, in_axes=ax)(*a)
                                       for ax, a in zip(axes_list, arg_lists)])(all_args)
    for got, want in zip(jitted, expected):
        same(got, want)


# --- nested vmap: both rules' dims are rewritten twice -------------------------------

NESTED = [  # (name, fg fn, jax fn, specs, inner in_axes, outer in_axes)
    ("transpose", lambda x: lax.transpose(x, (1, 0)), lambda x: jax.lax.transpose(x, (1, 0)),
     [((2, 3, 4, 5), F)], (1,), (-1,)),
    ("pad", lambda x, v: lax.pad(x, v, ((1, 0, 1),)),
     lambda x, v: jax.lax.pad(x, v, ((1, 0, 1),)), [((4, 2, 3), F), ((3,), F)], (1, None),
     (2, 0)),
    ("concatenate", lambda a, b: lax.concatenate([a, b], 0),
     lambda a, b: jax.lax.concatenate([a, b], 0), [((2, 4, 3), F), ((2, 3), F)], (1, None),
     (0, 0)),
    ("dynamic_slice", *dyn_slice_fns((2, 2)),
     [((2, 3, 5, 6), F), ((3, 2), ("idx", 6)), ((2,), ("idx", 6))], (0, 0, 0), (1, 0, None)),
    ("dynamic_update_slice", *dyn_update_fns(),
     [((2, 3, 5, 6), F), ((3, 2, 3), F), ((3,), ("idx", 6)), ((2, 3), ("idx", 6))],
     (0, None, None, 0), (1, 0, 0, 1)),
    ("gather", *gather_fns(ROWS, (1, 4)), [((2, 5, 4, 3), F), ((3, 2, 3, 1), ("idx", 5))],
     (-1, 0), (0, 1)),
    ("scatter_add", *scatter_fns("scatter_add", ROWS_S),
     [((5, 4, 2, 3), F), ((3, 1), ("idx", 5)), ((3, 2, 4, 3), F)], (-1, None, 1),
     (-1, None, -1)),
]


@pytest.mark.parametrize("name,fg_fn,jax_fn,specs,inner,outer", NESTED,
                         ids=[c[0] for c in NESTED])
def test_nested_vmap(name, fg_fn, jax_fn, specs, inner, outer):
    args = [make(shape, kind) for shape, kind in specs]
    want = jax.vmap(jax.vmap(jax_fn, in_axes=inner), in_axes=outer)(*args)
    same(fg.vmap(fg.vmap(fg_fn, in_axes=inner), in_axes=outer)(*args), want)


# --- the IR: no needless transposes or broadcasts ------------------------------------

def eqn_names(f, *args):
    return [e.prim.name for e in fg.make_jaxpr(f)(*args).jaxpr.eqns]


def rule_only(f, in_axes, out_axes, *args):
    """Equations of vmap(f) with the output left where the rule put it."""
    return eqn_names(fg.vmap(f, in_axes=in_axes, out_axes=out_axes), *args)


X = np.zeros((2, 3, 4), np.float32)


def test_ir_axis_rewriting_rules_keep_the_batch_axis_in_place():
    assert rule_only(lambda x: lax.transpose(x, (1, 0)), 1, 1, X) == ["transpose"]
    jaxpr = fg.make_jaxpr(fg.vmap(lambda x: lax.transpose(x, (1, 0)), in_axes=1,
                                  out_axes=1))(X)
    assert jaxpr.jaxpr.eqns[0].params["permutation"] == (2, 1, 0)
    assert rule_only(lambda x: lax.rev(x, (1,)), 1, 1, X) == ["rev"]
    assert rule_only(lambda x: lax.slice(x, (0, 1), (2, 4)), 1, 1, X) == ["slice"]
    assert rule_only(lambda x: lax.squeeze(x, (0,)), 0, 0, X[:, :1]) == ["squeeze"]
    assert rule_only(lambda x: lax.expand_dims(x, (0,)), 1, 2, X) == ["expand_dims"]
    assert rule_only(lambda x: lax.broadcast_in_dim(x, (2, 5, 4), (0, 2)), 1, 1, X) == [
        "broadcast_in_dim"]
    assert rule_only(lambda x: lax.pad(x, np.float32(0), ((1, 1, 0), (0, 2, 1))), 1, 1,
                     X) == ["pad"]


def test_ir_dynamic_slice_with_unbatched_starts_stays_a_dynamic_slice():
    names = rule_only(lambda x: lax.dynamic_slice(x, (1, 2), (1, 2)), 1, 1, X)
    assert names == ["dynamic_slice"]
    i, u = np.int32(1), np.zeros((1, 2), np.float32)
    names = eqn_names(fg.vmap(lambda x, u, i: lax.dynamic_update_slice(x, u, (i, i)),
                              in_axes=(1, None, None), out_axes=1), X, u, i)
    assert "dynamic_update_slice" in names and "scatter" not in names
    assert "transpose" not in names


def test_ir_concatenate_moves_only_what_differs():
    a, b = np.zeros((2, 4, 3), np.float32), np.zeros((3, 3), np.float32)
    names = eqn_names(fg.vmap(lambda a, b, c: lax.concatenate([a, b, c], 0),
                              in_axes=(1, None, 1), out_axes=1), a, b, a)
    assert names == ["broadcast_in_dim", "concatenate"]
    names = eqn_names(fg.vmap(lambda a, c: lax.concatenate([a, c], 0),
                              in_axes=(1, 1), out_axes=1), a, a)
    assert names == ["concatenate"]


def test_ir_gather_and_scatter_move_nothing_when_they_need_not():
    x = np.zeros((5, 4), np.float32)
    xb = np.zeros((5, 3, 4), np.float32)
    i = np.zeros((3, 1), np.int32)
    ib = np.zeros((3, 3, 1), np.int32)
    ub = np.zeros((3, 3, 4), np.float32)
    g = gather_fns(ROWS, (1, 4))[0]
    # operand only: its batch axis becomes an offset axis and keeps its place
    assert rule_only(g, (1, None), 1, xb, i) == ["gather"]
    assert rule_only(g, (None, 1), 1, x, ib) == ["gather"]           # indices only
    assert rule_only(g, (1, 0), 0, xb, ib) == ["gather"]             # both
    s = scatter_fns("scatter_add", ROWS_S)[0]
    assert rule_only(s, (1, None, 1), 1, xb, i, ub) == ["scatter_add"]
    assert rule_only(s, (1, 0, 0), 1, xb, ib, ub) == ["scatter_add"]
    # unbatched operand: the one broadcast that cannot be avoided
    assert rule_only(s, (None, 0, 0), 0, x, ib, ub) == ["broadcast_in_dim", "scatter_add"]
    assert rule_only(s, (None, None, 1), 0, x, i, ub) == ["broadcast_in_dim", "scatter_add"]
    # batched start indices: one gather / scatter per lane window, no transposes
    names = eqn_names(fg.vmap(dyn_slice_fns((2, 2))[0], in_axes=(1, 0, None), out_axes=1),
                      xb, np.zeros(3, np.int32), np.int32(0))
    assert "gather" in names and "transpose" not in names and "dynamic_slice" not in names


def test_ir_batched_pad_value_uses_select():
    x = np.zeros((3, 4), np.float32)
    v = np.zeros(3, np.float32)
    names = rule_only(lambda x, v: lax.pad(x, v, ((1, 1, 0),)), (0, 0), 0, x, v)
    assert names.count("pad") == 2 and "select_n" in names and "transpose" not in names
