"""vmap of the elementwise primitives that have their own batching rules (not made by
the unary/binary families): round, abs, conj, integer_pow, pow, select_n, clamp,
convert_element_type, bitcast_convert_type and copy.  Batch axis at 0, 1 and -1,
unbatched and rank-0 operands, against jax.vmap and a Python loop, under jit and nested
vmap, and checks that unbatched rank-0 operands stay rank 0 in the IR."""
import jax
import numpy as np
import pytest

import funcgraph as fg
from tests.util import assert_same, batched_arrays
from funcgraph import lax
from funcgraph.primitives import elementwise as ew

# Casting complex to real (convert_element_type) is intended here.
pytestmark = pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")

rng = np.random.default_rng(0)
B = 3  # the mapped axis size
F = "float32"


def make(shape, kind):
    """A random array; kind: a dtype name, or ("idx", n) for int32 values in [0, n)."""
    if isinstance(kind, tuple):
        return rng.integers(0, kind[1], size=shape).astype(np.int32)
    if kind == "bool":
        return rng.random(shape) < 0.5
    dtype = np.dtype(kind)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
    if dtype.kind == "c":
        return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)
    # Halves included, so both rounding methods meet ties.
    return (np.round(rng.normal(size=shape) * 6) / 4).astype(dtype)


def batched_args(specs, in_axes):
    return batched_arrays(specs, in_axes, B, make)


def loop(f, args, in_axes, size=B):
    """Per-example results of the unmapped f, stacked along axis 0."""
    outs = []
    for i in range(size):
        lane = [a if ax is None else np.take(a, i, axis=ax % np.ndim(a))
                for a, ax in zip(args, in_axes)]
        outs.append(np.asarray(f(*lane)))
    return np.stack(outs)


def jax_vmap(jax_fn, args, in_axes):
    """jax.vmap with every batch axis moved to the front first (jax's bitcast_convert_type
    cannot batch along the trailing axis that a bitcast to a wider dtype consumes)."""
    moved = [a if ax is None else np.moveaxis(a, ax, 0) for a, ax in zip(args, in_axes)]
    axes = [None if ax is None else 0 for ax in in_axes]
    return np.asarray(jax.vmap(jax_fn, in_axes=axes)(*moved))


def same(actual, expected):
    assert_same(actual, expected, tol=2e-6)


X = ((3, 4), F)
SCALAR = ((), F)
ONE_AXES = [(0,), (1,), (-1,)]


def both(name, *args, **kwargs):
    """The same lax call with funcgraph.lax and jax.lax."""
    return (lambda *xs: getattr(lax, name)(*xs, *args, **kwargs),
            lambda *xs: getattr(jax.lax, name)(*xs, *args, **kwargs))


def convert(dtype):
    return both("convert_element_type", dtype)


def bitcast(dtype):
    return both("bitcast_convert_type", dtype)


CASES = [  # name, funcgraph fn, jax fn, argument specs, list of in_axes
    ("round", *both("round"), [X], ONE_AXES),
    ("round_even", *both("round", lax.RoundingMethod.TO_NEAREST_EVEN), [X], ONE_AXES),
    ("abs_float", *both("abs"), [X], ONE_AXES),
    ("abs_int8", *both("abs"), [((3, 4), "int8")], ONE_AXES),
    ("abs_complex", *both("abs"), [((3, 4), "complex64")], ONE_AXES),
    ("conj_complex", *both("conj"), [((3, 4), "complex64")], ONE_AXES),
    ("conj_real", *both("conj"), [X], ONE_AXES),
    ("integer_pow_3", *both("integer_pow", 3), [X], ONE_AXES),
    ("integer_pow_neg2", *both("integer_pow", -2), [X], ONE_AXES),
    ("integer_pow_int", *both("integer_pow", 2), [((3, 4), "int32")], ONE_AXES),
    ("integer_pow_scalar", *both("integer_pow", 3), [SCALAR], [(0,)]),
    ("pow", *both("pow"), [X, X], [(0, 0), (1, None), (None, -1), (0, 1), (-1, 0)]),
    ("pow_scalar_exponent", *both("pow"), [X, SCALAR], [(0, None), (None, 0), (1, 0), (-1, 0)]),
    ("pow_scalar_base", *both("pow"), [SCALAR, X], [(0, None), (None, 1), (0, -1)]),
    ("pow_int_exponent", *both("pow"), [X, ((3, 4), ("idx", 4))],
     [(0, None), (None, 0), (1, -1)]),
    ("pow_scalar_int_exponent", *both("pow"), [X, ((), ("idx", 4))],
     [(1, None), (None, 0), (0, 0)]),
    ("select_n_bool", *both("select_n"), [((3, 4), "bool"), X, X],
     [(0, None, None), (None, 0, None), (None, None, 1), (1, 0, -1), (-1, None, 0)]),
    ("select_n_scalar_pred", *both("select_n"), [((), "bool"), X, X],
     [(0, None, None), (None, 0, None), (0, 1, None), (None, -1, 0), (0, 0, 0)]),
    ("select_n_int3", *both("select_n"), [((3, 4), ("idx", 3)), X, X, X],
     [(0, None, None, None), (None, 1, None, -1), (1, 0, 0, 0)]),
    ("select_n_scalar_lanes", *both("select_n"), [((), ("idx", 3)), SCALAR, SCALAR, SCALAR],
     [(0, None, None, None), (None, 0, None, None), (0, None, 0, 0)]),
    ("select_n_one_case", *both("select_n"), [((3, 4), ("idx", 1)), X], [(0, None), (None, 1)]),
    ("clamp_scalar_bounds", *both("clamp"), [SCALAR, X, SCALAR],
     [(None, 0, None), (0, None, None), (None, None, 0), (0, 1, -1), (0, None, 0)]),
    ("clamp_array_bounds", *both("clamp"), [X, X, X],
     [(0, None, None), (None, 1, None), (None, None, -1), (1, 0, -1)]),
    ("clamp_mixed_bounds", *both("clamp"), [SCALAR, X, X], [(0, None, 1), (None, -1, 0)]),
    ("clamp_scalar_operand", *both("clamp"), [SCALAR, SCALAR, SCALAR],
     [(None, 0, None), (0, None, None), (0, 0, 0)]),
    ("clamp_int", *both("clamp"), [((), "int32"), ((3, 4), "int32"), ((), "int32")],
     [(0, 1, None)]),
    ("convert_f32_i32", *convert(np.int32), [X], ONE_AXES),
    ("convert_i8_f32", *convert(np.float32), [((3, 4), "int8")], ONE_AXES),
    ("convert_c64_f32", *convert(np.float32), [((3, 4), "complex64")], ONE_AXES),
    ("convert_f32_bool", *convert(np.bool_), [X], ONE_AXES),
    ("bitcast_same_width", *bitcast(np.int32), [X], ONE_AXES),
    # to a narrower dtype: a trailing axis of 2 appears after the lane's axes
    ("bitcast_narrower", *bitcast(np.uint16), [X], ONE_AXES),
    # to a wider dtype: the lane's trailing axis (4 bytes) is consumed, never the batch axis
    ("bitcast_wider", *bitcast(np.int32), [((3, 4), "uint8")], ONE_AXES + [(2,)]),
    ("bitcast_wider_vector", *bitcast(np.int32), [((2,), "int16")], [(0,), (1,)]),
    ("copy", lambda x: ew.copy_p.bind(x), lambda x: x, [((3, 4), "int8")], ONE_AXES),
]


@pytest.mark.parametrize("name,fg_fn,jax_fn,specs,axes_list", CASES,
                         ids=[c[0] for c in CASES])
def test_vmap_matches_jax_loop_and_jit(name, fg_fn, jax_fn, specs, axes_list):
    all_args, expected = [], []
    for in_axes in axes_list:
        args = batched_args(specs, in_axes)
        want = jax_vmap(jax_fn, args, in_axes)
        got = fg.vmap(fg_fn, in_axes=in_axes)(*args)
        same(got, want)
        same(got, loop(fg_fn, args, in_axes))
        all_args.append(args)
        expected.append(want)
    # every in_axes variant of this primitive in one compiled program
    jitted = fg.jit(lambda arg_lists: [fg.vmap(fg_fn, in_axes=ax)(*a)
                                       for ax, a in zip(axes_list, arg_lists)])(all_args)
    for got, want in zip(jitted, expected):
        same(got, want)


NESTED = [  # name, funcgraph fn, specs, inner in_axes, outer in_axes (outer size 2, inner 3)
    ("pow", both("pow")[0], [((2, 3, 4), F), ((3, 2), F)], (0, 0), (0, 1)),
    ("select_n", both("select_n")[0], [((2,), "bool"), ((3, 2, 4), F), ((2, 4), F)],
     (None, 0, None), (0, 1, 0)),
    ("clamp", both("clamp")[0], [((2, 3), F), ((3, 5, 2), F), ((), F)],
     (0, 0, None), (0, 2, None)),
    ("bitcast_wider", bitcast(np.int32)[0], [((3, 4, 2), "uint8")], (0,), (-1,)),
]


@pytest.mark.parametrize("name,fg_fn,specs,inner,outer", NESTED, ids=[c[0] for c in NESTED])
def test_nested_vmap(name, fg_fn, specs, inner, outer):
    args = [make(shape, kind) for shape, kind in specs]
    got = fg.vmap(fg.vmap(fg_fn, in_axes=inner), in_axes=outer)(*args)
    same(got, loop(lambda *lane: loop(fg_fn, lane, inner), args, outer, size=2))


def eqn_types(jaxpr, prim_name):
    """(input shapes) of each equation of the primitive in a jaxpr."""
    return [tuple(v.aval.shape for v in e.invars) for e in jaxpr.jaxpr.eqns
            if e.prim.name == prim_name]


def test_unbatched_scalar_operands_stay_rank_0():
    x = make((B, 3, 4), F)
    pred, lo, hi, y = np.bool_(True), np.float32(-0.5), np.float32(0.5), np.float32(2)
    jaxpr = fg.make_jaxpr(fg.vmap(lambda x: lax.select_n(pred, x, lax.neg(x))))(x)
    assert eqn_types(jaxpr, "select_n") == [((), (B, 3, 4), (B, 3, 4))]
    jaxpr = fg.make_jaxpr(fg.vmap(lambda x: lax.clamp(lo, x, hi)))(x)
    assert eqn_types(jaxpr, "clamp") == [((), (B, 3, 4), ())]
    jaxpr = fg.make_jaxpr(fg.vmap(lambda x: lax.pow(x, y)))(x)
    assert eqn_types(jaxpr, "pow") == [((B, 3, 4), ())]
    assert not [e for e in jaxpr.jaxpr.eqns if e.prim.name in ("broadcast_in_dim", "transpose")]


def test_batch_axis_kept_in_place():
    """Elementwise rules leave a batch axis where it is: no transposes in the IR."""
    x = make((3, B, 4), F)
    for fn in (lax.abs, lambda x: lax.round(x), lambda x: lax.integer_pow(x, 2),
               lambda x: lax.convert_element_type(x, np.int32),
               lambda x: lax.bitcast_convert_type(x, np.uint16)):
        jaxpr = fg.make_jaxpr(fg.vmap(fn, in_axes=1, out_axes=1))(x)
        assert not [e for e in jaxpr.jaxpr.eqns if e.prim.name == "transpose"], jaxpr


def test_vmap_of_grad_through_elementwise_rules():
    """Batching the JVP/transpose rules' output (select_n, clamp, pow, abs)."""
    xs = make((B, 4), F) + np.float32(0.1)

    def f(L):
        return lambda x: L.reduce_sum(
            L.clamp(np.float32(-1), L.pow(L.abs(x), np.float32(1.5)), np.float32(1))
            + L.select_n(L.gt(x, np.float32(0)), L.sin(x), L.integer_pow(x, 3)), (0,))
    got = fg.vmap(fg.grad(f(lax)))(xs)
    same(got, jax.vmap(jax.grad(f(jax.lax)))(xs))
