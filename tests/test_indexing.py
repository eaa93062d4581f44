"""NumPy indexing (x[idx]) and x.at[idx] updates against NumPy and jax.numpy, eagerly and
under jit (with the index arrays static and traced)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import dtypes
from funcgraph.numpy._indexing import NonConcreteBooleanIndexError
from tests.util import assert_close, check_against_jax, random_array


def check(fg_fn, jax_fn, *args):
    """funcgraph eagerly (NumPy path) and under jit vs jax.jit; the compiled eager path
    (each primitive through XLA) is covered by check_against_jax in a few tests below."""
    expected = jax.tree_util.tree_leaves(jax.jit(jax_fn)(*args))
    for result in (fg_fn(*args), fg.jit(fg_fn)(*args)):
        leaves = fg.tree_util.tree_leaves(result)
        assert len(leaves) == len(expected)
        for r, e in zip(leaves, expected):
            assert_close(r, np.asarray(e))

A = np.array
I = Ellipsis

# (shape, index): every index is in bounds, so NumPy is an oracle too
CASES = [
    ((5,), 2),
    ((5,), -1),
    ((3, 4), (1, -2)),
    ((3, 4), ()),
    ((3, 4), I),
    ((5,), slice(1, 4)),
    ((7,), slice(None, None, 2)),
    ((7,), slice(None, None, -1)),
    ((7,), slice(5, 0, -2)),
    ((7,), slice(-2, None, -3)),
    ((7,), slice(4, 2)),
    ((7,), slice(10, 20)),
    ((3, 4), (slice(None), 1)),
    ((3, 4, 5), (I, 1)),
    ((3, 4, 5), (1, I, slice(None, None, -2))),
    ((3, 4), None),
    ((3, 4), (None, 1, None, slice(1, 3))),
    ((3, 4), (I, None)),
    ((5,), A([0, 4, -1, 2])),
    ((3, 4), A([[0, 1], [2, 0]])),
    ((3, 4), (A([0, 2]), A([1, 3]))),
    ((3, 4), (A([[0], [2]]), A([1, 3, 0]))),          # broadcasting index arrays
    ((3, 4, 5), (slice(None), A([0, 2]), A([1, 3]))),  # adjacent: stays in place
    ((3, 4, 5), (A([0, 2]), slice(None), A([1, 3]))),  # separated: goes first
    ((3, 4, 5), (0, slice(None), A([1, 3]))),          # an int counts as an array
    ((3, 4, 5), (slice(None), 0, A([1, 3]))),
    ((3, 4, 5), (A([1, 2]), I, A([0, 4]))),
    ((3, 4, 5), (slice(None), A([1, 2]), None, A([0, 4]))),
    ((3, 4, 5), (slice(1, None), A([[1], [2]]), slice(None, None, -1))),
    ((3, 4), A([], np.int32)),
    ((3, 4), (slice(None), A([], np.int64))),
    ((3, 4), A([True, False, True])),
    ((3, 4), A([[True, False, True, False]] * 3)),
    ((3, 4), (slice(None), A([False, True, True, False]))),
    ((3, 4), (A([True, False, True]), A([0, 3]))),
    ((3, 4), True),
    ((3, 4), (1, False)),
    ((3, 4), (A([0, 1]), 2)),
    ((2, 3), (A(1, np.int8), A([0, 2], np.uint8))),
    ((0, 3), (slice(None), 1)),
    ((0, 3), A([], np.int32)),
]


def _ids(cases):
    return [f"{s}-{i!r}".replace(" ", "") for s, i in cases]


def data(shape, dtype=np.float32, seed=0):
    return random_array(shape, dtype, seed, int_high=100)


def split_arrays(index):
    """The integer arrays of an index (the traced tests pass them as jit arguments)."""
    items = index if isinstance(index, tuple) else (index,)
    return [i for i in items if isinstance(i, np.ndarray) and i.dtype != np.bool_]


def rebuild(index, arrays):
    """`index` with its integer arrays replaced by `arrays` (in order)."""
    it = iter(arrays)
    if not isinstance(index, tuple):
        return next(it) if isinstance(index, np.ndarray) and index.dtype != np.bool_ else index
    return tuple(next(it) if isinstance(i, np.ndarray) and i.dtype != np.bool_ else i
                 for i in index)


@pytest.mark.parametrize("shape,index", CASES, ids=_ids(CASES))
def test_getitem_static_index(shape, index):
    x = data(shape)
    expected = x[index]
    got = fnp.asarray(x)[index]
    assert_close(got, expected)
    check(lambda x: fnp.asarray(x)[index], lambda x: x[index], x)


ARRAY_CASES = [(s, i) for s, i in CASES if split_arrays(i)]


@pytest.mark.parametrize("shape,index", ARRAY_CASES, ids=_ids(ARRAY_CASES))
def test_getitem_traced_index_arrays(shape, index):
    arrays = split_arrays(index)
    x = data(shape)
    got = fg.jit(lambda x, *a: x[rebuild(index, a)])(x, *arrays)
    assert_close(got, x[index])
    expected = jax.jit(lambda x, *a: x[rebuild(index, a)])(x, *arrays)
    assert_close(got, np.asarray(expected))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint32, np.float16, dtypes.bfloat16,
                                   np.complex64])
def test_getitem_dtypes(dtype):
    x = data((4, 5), dtype)
    for index in [(1, slice(None, None, -2)), (A([3, 0]), A([1, 4])), A([True, False, True, True])]:
        check_against_jax(lambda x: fnp.asarray(x)[index], lambda x: x[index], x)


def test_traced_scalar_index_uses_dynamic_slice():
    x = data((4, 5))
    for i in [0, 3, -1, -4, 7, -9]:  # out of bounds clamps, as in JAX
        check(lambda x, i: fnp.asarray(x)[i], lambda x, i: x[i], x, np.int32(i))
        check(lambda x, i: fnp.asarray(x)[1:, i], lambda x, i: x[1:, i], x,
                          np.int32(i))
    text = str(fg.make_jaxpr(lambda x, i: x[i])(x, np.int32(1)))
    assert "dynamic_slice" in text and "gather" not in text
    text = str(fg.make_jaxpr(lambda x: x[1, ::2])(x))
    assert "slice" in text and "gather" not in text


def test_out_of_bounds_reads_clamp_like_jax():
    x = data((5,))
    for index in [A([7, -9, 2]), 10, -10]:
        check(lambda x: fnp.asarray(x)[index], lambda x: x[index], x)
    for index in [-10, 7, (A([1]), -9), (A([1]), 6)]:
        check(lambda x: fnp.asarray(x).at[index].get(mode="fill", fill_value=-5.0),
              lambda x: x.at[index].get(mode="fill", fill_value=-5.0), x.reshape(5, 1) + 0 * x)
    idx = A([7, -9, 2, -1])
    for mode, fill in [("fill", None), ("fill", 3.0), ("clip", None), ("promise_in_bounds", None)]:
        check(lambda x: fnp.asarray(x).at[idx].get(mode=mode, fill_value=fill),
                          lambda x: x.at[idx].get(mode=mode, fill_value=fill), x)


def test_traced_boolean_mask_raises():
    x = data((3,))
    mask = A([True, False, True])
    with pytest.raises(NonConcreteBooleanIndexError, match=r"fnp\.where.*size="):
        fg.jit(lambda x, m: x[m])(x, mask)
    with pytest.raises(TypeError, match="boolean indices must be concrete"):
        fg.jit(lambda x, m: x.at[m].set(0.0))(x, mask)
    # a concrete mask is fine under jit (it is a constant there)
    assert_close(fg.jit(lambda x: x[mask])(x), x[mask])


@pytest.mark.parametrize("index,err,match", [
    ((0, 0, 0), IndexError, "too many indices for array: array is 2-dimensional, but 3"),
    ((I, 0, I), IndexError, "single ellipsis"),
    ([0, 1], TypeError, "non-tuple sequence"),
    (1.5, TypeError, "indexer must be an integer"),
    (A([0.5]), TypeError, "integer or boolean type"),
    (A([True, False]), IndexError, "boolean index did not match indexed array along axis 0"),
    ((A([0, 1]), A([0, 1, 2])), IndexError, "could not be broadcast together"),
    ((slice(0, 1), slice(None, None, 0)), ValueError, "slice step cannot be zero"),
])
def test_index_errors(index, err, match):
    x = fnp.zeros((3, 4))
    with pytest.raises(err, match=match):
        x[index]


def test_traced_slice_bounds_raise():
    with pytest.raises(IndexError, match="slice indices must be static.*dynamic_slice"):
        fg.jit(lambda x, i: x[i:i + 2])(np.zeros(5, np.float32), 1)


# --- x.at[...] -------------------------------------------------------------------------------

UPDATE_CASES = [
    ((5,), 2, ()),
    ((5,), -1, ()),
    ((3, 4), 1, (4,)),
    ((3, 4), (slice(None), 1), (3,)),
    ((3, 4), (slice(1, None), slice(None, None, 2)), (2, 2)),
    ((7,), slice(None, None, -2), (4,)),
    ((7,), slice(5, 1, -1), ()),
    ((3, 4), (None, slice(None), 2), (1, 3)),
    ((3, 4), I, (4,)),
    ((5,), A([0, 3, -1]), (3,)),
    ((5,), A([1, 1, 3, 1]), (4,)),        # repeated indices accumulate for add/mul/min/max
    ((3, 4), (A([0, 2]), A([1, 3])), (2,)),
    ((3, 4), (A([[0], [2]]), A([1, 3, 0])), (2, 3)),
    ((3, 4, 5), (A([0, 2]), slice(None), A([1, 3])), (2, 4)),
    ((3, 4, 5), (slice(None), 0, A([1, 3])), (3, 2)),
    ((3, 4, 5), (0, slice(None), A([1, 3])), (2, 4)),
    ((3, 4, 5), (slice(1, 3), A([2, 0]), slice(None, None, -1)), (2, 2, 5)),
    ((3, 4), A([True, False, True]), (1, 4)),
    ((3, 4), (slice(None), A([], np.int32)), ()),
    ((5,), A([9, -9, 1]), (3,)),          # out of bounds updates are dropped
    ((5,), 9, ()),
    ((5,), -9, ()),
    ((3, 4), (A([1, 0]), -7), (2,)),
]

UPDATE_METHODS = ["set", "add", "multiply", "min", "max", "subtract"]


@pytest.mark.parametrize("shape,index,vshape", UPDATE_CASES, ids=_ids([(s, i) for s, i, _ in
                                                                        UPDATE_CASES]))
def test_at_updates(shape, index, vshape):
    x = data(shape, seed=1)
    v = data(vshape, seed=2)
    check(lambda x, v: all_updates(fnp.asarray(x).at[index], v),
                      lambda x, v: all_updates(x.at[index], v), x, v)
    arrays = split_arrays(index)
    if arrays:  # the same with traced index arrays
        got = fg.jit(lambda x, v, *a: all_updates(x.at[rebuild(index, a)], v))(x, v, *arrays)
        want = jax.jit(lambda x, v, *a: all_updates(x.at[rebuild(index, a)], v))(x, v, *arrays)
        for g, w in zip(got, want, strict=True):
            assert_close(g, np.asarray(w))


def all_updates(ref, v, methods=UPDATE_METHODS):
    return tuple(getattr(ref, m)(v) for m in methods)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.float16, dtypes.bfloat16,
                                   np.complex64])
def test_at_dtypes(dtype):
    x = data((4, 3), dtype, seed=3)
    v = data((2, 3), dtype, seed=4)
    idx = A([3, 0])
    methods = ["set", "max"] if dtype == np.bool_ else ["set", "add", "multiply", "min", "max"]
    if dtype == np.complex64:
        methods = ["set", "add", "multiply"]
    check_against_jax(lambda x, v: all_updates(fnp.asarray(x).at[idx], v, methods),
                      lambda x, v: all_updates(x.at[idx], v, methods), x, v)


def test_at_values_weak_and_cast():
    x = np.arange(6, dtype=np.int8)
    check(lambda x: fnp.asarray(x).at[2].set(100), lambda x: x.at[2].set(100), x)
    check(lambda x: fnp.asarray(x).at[A([1, 2])].add(3),
                      lambda x: x.at[A([1, 2])].add(3), x)
    y = np.linspace(0, 1, 5).astype(np.float16)
    check(lambda y: fnp.asarray(y).at[1:3].set(2.5), lambda y: y.at[1:3].set(2.5), y)


def test_at_divide_power_apply_get():
    x = data((5,), seed=5)
    xi = np.arange(5, dtype=np.int32)
    idx = A([0, 3])
    check(lambda x: fnp.asarray(x).at[idx].divide(2.0),
                      lambda x: x.at[idx].divide(2.0), x)
    check(lambda x: fnp.asarray(x).at[idx].divide(2), lambda x: x.at[idx].divide(2), xi)
    check(lambda x: fnp.asarray(x).at[idx].power(2), lambda x: x.at[idx].power(2), xi)
    check(lambda x: fnp.asarray(x).at[1:].power(3), lambda x: x.at[1:].power(3), x)
    check(lambda x: fnp.asarray(x).at[idx].apply(fnp.sin),
                      lambda x: x.at[idx].apply(jnp.sin), x)
    check(lambda x: fnp.asarray(x).at[idx].get(), lambda x: x.at[idx].get(), x)
    check(lambda x: fnp.asarray(x).at[2:].get(), lambda x: x.at[2:].get(), x)


def test_at_apply_repeated_static_indices():
    x = data((4,), seed=6)
    idx = A([1, 1, 3])
    check(lambda x: fnp.asarray(x).at[idx].apply(lambda v: v * 2),
                      lambda x: x.at[idx].apply(lambda v: v * 2), x)


def test_at_modes():
    x = data((5,), seed=7)
    v = data((3,), seed=8)
    idx = A([7, -9, 2])
    for mode in ["drop", "clip", "fill"]:
        check(lambda x, v: fnp.asarray(x).at[idx].set(v, mode=mode),
                          lambda x, v: x.at[idx].set(v, mode=mode), x, v)
    idx = A([4, 0])
    out = fnp.asarray(x).at[idx].add(v[:2], indices_are_sorted=False, unique_indices=True)
    assert_close(out, np.asarray(jnp.asarray(x).at[idx].add(v[:2])))


def test_at_update_ir_uses_one_scatter():
    x = np.zeros((3, 4), np.float32)
    text = str(fg.make_jaxpr(lambda x, i: x.at[i, 1:3].add(1.0))(x, A([0, 2])))
    assert text.count("= scatter") == 1 and "gather" not in text
    text = str(fg.make_jaxpr(lambda x: x.at[1:3].set(1.0))(x))
    assert "scatter[" in text and "unique_indices=True" in text


def test_at_errors():
    x = fnp.zeros((3, 4))
    with pytest.raises(ValueError, match=r"values of shape \(3,\) cannot be broadcast to the "
                                         r"indexed shape \(4,\)"):
        x.at[0].set(fnp.ones(3))
    with pytest.raises(ValueError, match="unknown gather/scatter mode"):
        x.at[0].set(1.0, mode="wrap")
    with pytest.raises(IndexError, match="too many indices"):
        x.at[0, 0, 0].set(1.0)


def test_iteration_and_len_use_getitem():
    x = fnp.arange(6).reshape(3, 2)
    rows = list(x)
    assert len(rows) == 3
    assert_close(rows[2], np.array([4, 5], np.int32))
    out = fg.jit(lambda x: [r.sum() for r in x])(np.arange(6, dtype=np.float32).reshape(3, 2))
    assert_close(out[1], np.float32(5))
