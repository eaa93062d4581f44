"""Reductions, argmax/argmin and cumulative ops against jax (eager NumPy, eager compiled, jit)."""
import jax
import numpy as np
import pytest

import funcgraph as fg
from funcgraph import dtypes, lax
from funcgraph.primitives import reductions as red
from tests.util import check_against_jax, eager_and_jit

BF16 = dtypes.bfloat16
INTS = [np.int8, np.int32, np.uint32]


def name_of(value):
    """Readable test ids: dtype names (bfloat16, not dtype27) and strings as they are."""
    return value if isinstance(value, str) else np.dtype(value).name


def pairs(table):
    """(name, dtype) for each dtype listed under each name."""
    return [(name, dtype) for name, dtypes_ in table.items() for dtype in dtypes_]
FLOATS = [np.float16, BF16, np.float32]


def data(shape, dtype, seed=0, low=-3, high=4, ties=False):
    """Random test data: small integers (many ties) or normal floats."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "u":
        return rng.integers(0, high - low, shape).astype(dtype)
    if dtype.kind == "i" or ties:
        return rng.integers(low, high, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def check_cases(fg_fn, jax_fn, cases, **options):
    """One check_against_jax over several (array, params) cases: one jit per side (the
    sweeps over all shapes skip the compiled-eager path: their fast versions run it)."""
    params = [kw for _, kw in cases]
    check_against_jax(lambda *xs: [fg_fn(x, **kw) for x, kw in zip(xs, params, strict=True)],
                      lambda *xs: [jax_fn(x, **kw) for x, kw in zip(xs, params, strict=True)],
                      *[x for x, _ in cases], **options)


# --- reduce_sum / prod / max / min / and / or --------------------------------------------

SHAPES_AXES = [((), ()), ((5,), (0,)), ((3, 4), (1,)), ((3, 4), (0, 1)), ((2, 3, 4), (0, 2)),
               ((0, 3), (0,)), ((0, 3), (1,)), ((3, 4), ())]
FAST_SHAPES_AXES = [((), ()), ((3, 4), (1,)), ((2, 3, 4), (0, 2)), ((0, 3), (0,))]

REDUCERS = {
    "reduce_sum": [np.int8, np.int32, np.uint32, np.float16, BF16, np.float32, np.complex64],
    "reduce_prod": [np.int8, np.int32, np.uint32, np.float16, BF16, np.float32, np.complex64],
    "reduce_max": [np.bool_, np.int8, np.int32, np.uint32, np.float16, BF16, np.float32],
    "reduce_min": [np.bool_, np.int8, np.int32, np.uint32, np.float16, BF16, np.float32],
    "reduce_and": [np.bool_, np.int8, np.uint32],
    "reduce_or": [np.bool_, np.int8, np.uint32],
}
FAST_REDUCERS = {
    "reduce_sum": [np.int8, np.uint32, BF16, np.float32, np.complex64],
    "reduce_prod": [np.int32, np.float16, np.complex64],
    "reduce_max": [np.bool_, np.int8, BF16, np.float32],
    "reduce_min": [np.uint32, np.float16],
    "reduce_and": [np.bool_, np.int8],
    "reduce_or": [np.bool_, np.uint32],
}


def _reduction_cases(dtype, shapes_axes):
    return [(data(shape, dtype, seed=i, low=-2, high=3), {"axes": axes})
            for i, (shape, axes) in enumerate(shapes_axes)]


@pytest.mark.parametrize("name,dtype", pairs(FAST_REDUCERS), ids=name_of)
def test_reductions(name, dtype):
    check_cases(getattr(lax, name), getattr(jax.lax, name),
                _reduction_cases(dtype, FAST_SHAPES_AXES))


@pytest.mark.slow
@pytest.mark.parametrize("name,dtype", pairs(REDUCERS), ids=name_of)
def test_reductions_all(name, dtype):
    check_cases(getattr(lax, name), getattr(jax.lax, name), _reduction_cases(dtype, SHAPES_AXES),
                compiled_eager=False)


def test_reduce_max_nan_propagates():
    x = np.array([[1.0, np.nan, 3.0], [-np.inf, 2.0, 0.0]], np.float32)
    for name in ("reduce_max", "reduce_min"):
        check_against_jax(getattr(lax, name), getattr(jax.lax, name), x, axes=(1,))


@pytest.mark.parametrize("fn,x,axes,err,match", [
    (lax.reduce_sum, np.ones((2, 3), np.float32), (2,), ValueError, r"axes \(2,\) are invalid"),
    (lax.reduce_sum, np.ones((2, 3), np.float32), (0, 0), ValueError, "appear once"),
    (lax.reduce_sum, np.ones(3, np.bool_), (0,), TypeError, "reduce_sum does not accept"),
    (lax.reduce_and, np.ones(3, np.float32), (0,), TypeError, "reduce_and does not accept"),
])
def test_reduction_errors(fn, x, axes, err, match):
    with pytest.raises(err, match=match):
        fn(x, axes)


# --- argmax / argmin ----------------------------------------------------------------------

ARG_SHAPES = [((5,), 0), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), 1), ((0, 3), 1), ((1,), 0)]
FAST_ARG_SHAPES = [((2, 3, 4), 1), ((0, 3), 1), ((1,), 0)]


def _arg_cases(dtype, shapes):
    return [(data(shape, dtype, seed=i, ties=ties), {"axis": axis, "index_dtype": np.int32})
            for i, (shape, axis) in enumerate(shapes) for ties in (False, True)]


@pytest.mark.parametrize("dtype", [np.bool_, *INTS, *FLOATS], ids=name_of)
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argminmax(name, dtype):
    check_cases(getattr(lax, name), getattr(jax.lax, name), _arg_cases(dtype, FAST_ARG_SHAPES))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.bool_, *INTS, *FLOATS], ids=name_of)
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argminmax_all_shapes(name, dtype):
    check_cases(getattr(lax, name), getattr(jax.lax, name), _arg_cases(dtype, ARG_SHAPES),
                compiled_eager=False)


def test_argminmax_index_dtypes():
    x = data((3, 5), np.float32)
    cases = [(x, {"axis": 1, "index_dtype": d}) for d in (np.int8, np.uint8, np.int32, np.uint32)]
    for name in ("argmax", "argmin"):
        check_cases(getattr(lax, name), getattr(jax.lax, name), cases)


NAN = np.nan
NAN_CASES = [
    [1.0, NAN, 3.0, NAN],
    [NAN, NAN, NAN],
    [-np.inf, -np.inf, -np.inf],
    [np.inf, 2.0, np.inf, -NAN],
    [-NAN, np.inf, -np.inf],
    [0.0, -0.0, 0.0],
    [-0.0, 0.0, -1.0],
    [3.0, 3.0, 1.0, 1.0],
]


@pytest.mark.parametrize("dtype", FLOATS, ids=name_of)
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argminmax_nan_first_wins(name, dtype):
    params = {"axis": 0, "index_dtype": np.int32}
    cases = [(np.array(case, dtype), params) for case in NAN_CASES]
    # Several rows at once: NaNs in different positions, reduced along axis 1 (and 0).
    width = max(len(c) for c in NAN_CASES)
    rows = np.array([c + [-np.inf] * (width - len(c)) for c in NAN_CASES], dtype)
    cases += [(rows, {"axis": 1, "index_dtype": np.int32}), (rows, params)]
    check_cases(getattr(lax, name), getattr(jax.lax, name), cases)


def test_argminmax_extreme_ints():
    cases = []
    for dtype in (np.int8, np.uint32):
        info = np.iinfo(dtype)
        cases += [(x, {"axis": 0, "index_dtype": np.int32}) for x in (
            np.full(4, info.min, dtype), np.full(4, info.max, dtype),
            np.array([info.max, info.min, info.max, info.min], dtype))]
    for name in ("argmax", "argmin"):
        check_cases(getattr(lax, name), getattr(jax.lax, name), cases)


def test_argmax_negative_axis():
    x = data((3, 4), np.float32)
    for result in eager_and_jit(lambda x: lax.argmax(x, -1, np.int32), x):
        np.testing.assert_array_equal(result, np.argmax(x, axis=1))


@pytest.mark.parametrize("x,axis,index_dtype,err,match", [
    (np.ones((2, 3), np.float32), 2, np.int32, ValueError, "out of bounds"),
    (np.ones((2, 3), np.float32), -3, np.int32, ValueError, "out of bounds"),
    (np.float32(1.0), 0, np.int32, ValueError, "out of bounds"),
    (np.ones((0, 3), np.float32), 0, np.int32, ValueError, "non-empty reduced dimension"),
    (np.ones((2, 3), np.float32), 1, np.float32, TypeError, "index_dtype must be an integer"),
    (np.ones(300, np.float32), 0, np.int8, ValueError, "cannot hold the indices"),
    (np.ones(3, np.complex64), 0, np.int32, TypeError, "argmax does not accept"),
])
def test_argmax_errors(x, axis, index_dtype, err, match):
    with pytest.raises(err, match=match):
        lax.argmax(x, axis, index_dtype)


def test_argmax_prim_errors():
    x = lax._as_operand(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="must be one axis"):
        red.argmax_p.bind(x, axes=(0, 1), index_dtype=np.dtype(np.int32))


# --- cumulative ops -----------------------------------------------------------------------

CUM_SHAPES = [((5,), 0), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), 2), ((0, 3), 0), ((0, 3), 1),
              ((3, 0), 0), ((1,), 0)]
FAST_CUM_SHAPES = [((3, 4), 0), ((2, 3, 4), 2), ((0, 3), 1)]

CUMULATIVE = {
    "cumsum": [*INTS, *FLOATS, np.complex64],
    "cumprod": [*INTS, *FLOATS, np.complex64],
    "cummax": [*INTS, *FLOATS],
    "cummin": [*INTS, *FLOATS],
    "cumlogsumexp": FLOATS,
}


def cum_data(name, shape, dtype, seed):
    if name == "cumprod" and np.dtype(dtype).kind in "fV":
        # Factors near 1 keep float16 products in range.
        rng = np.random.default_rng(seed)
        return rng.uniform(0.5, 1.5, shape).astype(dtype)
    return data(shape, dtype, seed=seed, low=-2, high=3)


def _cum_cases(name, dtype, shapes):
    # Forward and reverse alternate over the shapes (all shapes get both in the slow test).
    return [(cum_data(name, shape, dtype, seed=i), {"axis": axis, "reverse": reverse})
            for i, (shape, axis) in enumerate(shapes) for reverse in (False, True)
            if len(shapes) == len(CUM_SHAPES) or reverse == bool(i % 2)]


@pytest.mark.parametrize("name,dtype", pairs(CUMULATIVE), ids=name_of)
def test_cumulative(name, dtype):
    check_cases(getattr(lax, name), getattr(jax.lax, name),
                _cum_cases(name, dtype, FAST_CUM_SHAPES), scale=2.0)


@pytest.mark.slow
@pytest.mark.parametrize("name,dtype", pairs(CUMULATIVE), ids=name_of)
def test_cumulative_all_shapes(name, dtype):
    check_cases(getattr(lax, name), getattr(jax.lax, name),
                _cum_cases(name, dtype, CUM_SHAPES), scale=2.0, compiled_eager=False)


@pytest.mark.parametrize("name", ["cumsum", "cummax", "cummin", "cumlogsumexp"])
def test_cumulative_nan_inf_and_ties(name):
    # Equal finite values meet too: compiled cumlogsumexp once gave max(a, a) for them.
    x = np.array([[1.0, NAN, 3.0, -1.0], [-np.inf, -np.inf, 2.0, np.inf],
                  [np.inf, np.inf, -np.inf, 0.0], [-np.inf, 5.0, -np.inf, -np.inf],
                  [1.0, 1.0, 2.0, 2.0]], np.float32)
    cases = [(x, {"axis": a, "reverse": r}) for a in (0, 1) for r in (False, True)]
    check_cases(getattr(lax, name), getattr(jax.lax, name), cases)


def test_cumulative_default_axis_and_negative_axis():
    x = data((3, 4), np.int32)
    for result in eager_and_jit(lambda x: lax.cumsum(x), x):
        np.testing.assert_array_equal(result, np.cumsum(x, axis=0))
    for result in eager_and_jit(lambda x: lax.cummax(x, -1, reverse=True), x):
        np.testing.assert_array_equal(result, np.flip(np.maximum.accumulate(x[:, ::-1], 1), 1))


def test_cumsum_long_axis():
    x = data((3, 2000), np.float32, seed=3)
    check_against_jax(lax.cumsum, jax.lax.cumsum, x, axis=1, scale=20.0)


@pytest.mark.parametrize("fn,x,axis,err,match", [
    (lax.cumsum, np.ones((2, 3), np.float32), 2, ValueError, "out of bounds"),
    (lax.cumsum, np.float32(1.0), 0, ValueError, "out of bounds"),
    (lax.cumsum, np.ones(3, np.bool_), 0, TypeError, "cumsum does not accept"),
    (lax.cummax, np.ones(3, np.complex64), 0, TypeError, "cummax does not accept"),
    (lax.cumlogsumexp, np.ones(3, np.int32), 0, TypeError, "cumlogsumexp does not accept"),
])
def test_cumulative_errors(fn, x, axis, err, match):
    with pytest.raises(err, match=match):
        fn(x, axis)


def test_cumulative_prim_errors():
    x = lax._as_operand(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="out of bounds"):
        red.cumsum_p.bind(x, axis=-1, reverse=False)
    with pytest.raises(TypeError, match="reverse must be a bool"):
        red.cumsum_p.bind(x, axis=0, reverse=1)


def test_cumsum_lowers_to_reduce_window():
    x = np.ones((2, 5), np.float32)
    text = fg.jit(lambda x: lax.cumsum(x, 1, reverse=True)).lower(x).as_text()
    assert "reduce_window" in text
    assert "[[0, 0], [0, 4]]" in text
