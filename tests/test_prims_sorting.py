"""sort and top_k against jax (eager NumPy, eager compiled, jit)."""
import jax
import numpy as np
import pytest

import funcgraph as fg
from funcgraph import dtypes, lax
from funcgraph.primitives import sorting
from tests.util import check_against_jax, eager_and_jit

BF16 = dtypes.bfloat16
FLOATS = [np.float16, BF16, np.float32]
ALL = [np.bool_, np.int8, np.int32, np.uint32, *FLOATS]
NAN = np.nan


def name_of(value):
    return value if isinstance(value, str) else np.dtype(value).name


def data(shape, dtype, seed=0, distinct=4):
    """Random data with many ties (few distinct values); floats get NaNs, infs and -0.0."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "u":
        return rng.integers(0, distinct, shape).astype(dtype)
    if dtype.kind == "i":
        return rng.integers(-distinct // 2, distinct - distinct // 2, shape).astype(dtype)
    if dtype.kind == "c":
        re = rng.integers(-1, 2, shape) + 0.5 * rng.integers(0, 2, shape)
        return (re + 1j * rng.integers(-1, 2, shape)).astype(dtype)
    special = np.array([NAN, -NAN, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0])
    return special[rng.integers(0, len(special), shape)].astype(dtype)


def check_cases(fg_fn, jax_fn, cases, **tolerance):
    """One check_against_jax over several (operand, params) cases: one jit per side."""
    params = [kw for _, kw in cases]
    check_against_jax(lambda *xs: [fg_fn(x, **kw) for x, kw in zip(xs, params, strict=True)],
                      lambda *xs: [jax_fn(x, **kw) for x, kw in zip(xs, params, strict=True)],
                      *[x for x, _ in cases], **tolerance)


# --- sort --------------------------------------------------------------------------------

SORT_SHAPES = [((9,), -1), ((3, 5), 0), ((2, 3, 4), 1), ((0, 3), 1), ((3, 0), 0)]


@pytest.mark.parametrize("dtype", [*ALL, np.complex64], ids=name_of)
def test_sort_values(dtype):
    cases = [(data(shape, dtype, seed=i), {"dimension": d})
             for i, (shape, d) in enumerate(SORT_SHAPES)]
    check_cases(lax.sort, jax.lax.sort, cases)


@pytest.mark.parametrize("dtype", ALL, ids=name_of)
def test_sort_key_val_is_stable(dtype):
    """The values (positions) show the exact permutation: ties keep their order, -0.0 and
    0.0 tie, and NaNs of either sign go last, in their original order."""
    cases = []
    for i, (shape, d) in enumerate(SORT_SHAPES[:3]):
        keys = data(shape, dtype, seed=i)
        cases.append(((keys, np.arange(keys.size, dtype=np.int32).reshape(shape)), d))
    check_against_jax(
        lambda *kvs: [lax.sort_key_val(k, v, d) for (k, v), (_, d) in zip(kvs, cases)],
        lambda *kvs: [jax.lax.sort_key_val(k, v, d) for (k, v), (_, d) in zip(kvs, cases)],
        *[kv for kv, _ in cases])


@pytest.mark.parametrize("dtype", FLOATS, ids=name_of)
def test_sort_special_floats(dtype):
    keys = np.array([NAN, 1.0, -NAN, -np.inf, 0.0, -0.0, np.inf, 0.0, NAN, -0.0, -1.0], dtype)
    positions = np.arange(keys.size, dtype=np.int32)
    check_against_jax(lax.sort_key_val, jax.lax.sort_key_val, keys, positions)
    out = eager_and_jit(lax.sort_key_val, keys, positions)
    for _, perm in out:
        np.testing.assert_array_equal(perm, [3, 10, 4, 5, 7, 9, 1, 6, 0, 2, 8])


def test_sort_complex_lexicographic():
    keys = np.array([1 + 2j, 1 + 1j, 0 + 5j, NAN + 0j, 1 + NAN * 1j, -1 - 1j, 1 + 1j],
                    np.complex64)
    positions = np.arange(keys.size, dtype=np.int32)
    check_against_jax(lax.sort_key_val, jax.lax.sort_key_val, keys, positions)


@pytest.mark.parametrize("num_keys", [1, 2, 3])
def test_sort_multiple_operands(num_keys):
    rng = np.random.default_rng(num_keys)
    a = rng.integers(0, 3, (4, 12)).astype(np.int8)
    b = data((4, 12), np.float32, seed=num_keys)
    c = rng.integers(0, 2, (4, 12)).astype(np.bool_)
    positions = np.broadcast_to(np.arange(12, dtype=np.int32), (4, 12)).copy()
    check_against_jax(lambda *ops: lax.sort(ops, num_keys=num_keys),
                      lambda *ops: jax.lax.sort(ops, num_keys=num_keys), a, b, c, positions)
    check_against_jax(lambda *ops: lax.sort(ops, dimension=0, num_keys=num_keys),
                      lambda *ops: jax.lax.sort(ops, dimension=0, num_keys=num_keys),
                      a.T.copy(), b.T.copy(), c.T.copy(), positions.T.copy())


def test_sort_unstable_sorts_keys():
    keys = data((5, 16), np.int32, seed=3)
    positions = np.broadcast_to(np.arange(16, dtype=np.int32), (5, 16)).copy()
    expected = np.sort(keys, axis=1)
    for sorted_keys, perm in eager_and_jit(
            lambda k, v: lax.sort_key_val(k, v, is_stable=False), keys, positions):
        np.testing.assert_array_equal(sorted_keys, expected)
        np.testing.assert_array_equal(np.take_along_axis(keys, np.asarray(perm), 1), expected)
        np.testing.assert_array_equal(np.sort(perm, axis=1), positions)


def test_sort_returns_like_its_input():
    x = np.array([3, 1, 2], np.int32)
    assert isinstance(lax.sort(x), fg.Array)
    for seq in ([x], (x,)):
        out = lax.sort(seq)
        assert isinstance(out, tuple) and len(out) == 1
        np.testing.assert_array_equal(out[0], [1, 2, 3])
    out = fg.jit(lambda x: lax.sort([x, -x], num_keys=1))(x)
    assert isinstance(out, tuple) and len(out) == 2


def test_sort_lowering_uses_stablehlo_sort():
    text = fg.jit(lambda x: lax.sort(x)).lower(np.ones(4, np.float32)).as_text()
    assert "stablehlo.sort" in text and "is_stable = true" in text


@pytest.mark.parametrize("operands,kw,err,match", [
    ([np.ones(3), np.ones(4)], {}, TypeError, "one shape"),
    ([np.ones(3)], {"num_keys": 0}, ValueError, "num_keys=0 must be between 1 and"),
    ([np.ones(3), np.ones(3)], {"num_keys": 3}, ValueError, "num_keys=3 must be between 1 and"),
    ([np.ones(3)], {"dimension": 1}, ValueError, "out of bounds"),
    ([np.ones((2, 3))], {"dimension": -3}, ValueError, "out of bounds"),
    ([np.float32(1.0)], {}, ValueError, "out of bounds"),
    ([], {}, TypeError, "at least one operand"),
])
def test_sort_errors(operands, kw, err, match):
    with pytest.raises(err, match=match):
        lax.sort(operands, **kw)


def test_sort_prim_errors():
    x = lax._as_operand(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="dimension 2 is out of bounds"):
        sorting.sort_p.bind(x, dimension=2, is_stable=True, num_keys=1)
    with pytest.raises(TypeError, match="is_stable must be a bool"):
        sorting.sort_p.bind(x, dimension=0, is_stable=1, num_keys=1)


# --- top_k -------------------------------------------------------------------------------

TOP_K_SHAPES = [((9,), 4), ((3, 5), 5), ((2, 3, 4), 2), ((4,), 0), ((0, 3), 2), ((3, 0), 0)]


@pytest.mark.parametrize("dtype", ALL, ids=name_of)
def test_top_k(dtype):
    """Ties (few distinct values) show that equal entries come in index order."""
    cases = [(data(shape, dtype, seed=i), {"k": k}) for i, (shape, k) in enumerate(TOP_K_SHAPES)]
    check_cases(lax.top_k, jax.lax.top_k, cases)


@pytest.mark.parametrize("dtype", FLOATS, ids=name_of)
def test_top_k_total_order(dtype):
    """NaN > inf > ... > 0.0 > -0.0 > ... > -inf > -NaN, ties to the lower index."""
    x = np.array([NAN, 1.0, -NAN, -np.inf, 0.0, -0.0, np.inf, 1.0, 0.0, -0.0], dtype)
    check_against_jax(lax.top_k, jax.lax.top_k, x, k=x.size)
    for _, idx in eager_and_jit(lambda x: lax.top_k(x, x.size), x):
        np.testing.assert_array_equal(idx, [0, 6, 1, 7, 4, 8, 5, 9, 3, 2])


def test_top_k_extreme_ints():
    for dtype in (np.int8, np.uint32):
        info = np.iinfo(dtype)
        x = np.array([info.min, info.max, 0, info.max, info.min], dtype)
        check_against_jax(lax.top_k, jax.lax.top_k, x, k=5)


def test_top_k_axis():
    x = data((4, 3, 5), np.float32, seed=7)
    check_cases(lambda x, k, axis: lax.top_k(x, k, axis=axis),
                lambda x, k, axis: jax.lax.top_k(x, k, axis=axis),
                [(x, {"k": 2, "axis": 0}), (x, {"k": 3, "axis": 1}), (x, {"k": 1, "axis": -1})])


def test_top_k_lowering():
    text = fg.jit(lambda x: lax.top_k(x, 2)).lower(np.ones((3, 4), np.float32)).as_text()
    assert "top_k" in text


@pytest.mark.parametrize("x,k,kw,err,match", [
    (np.ones(3, np.float32), 4, {}, ValueError, "k=4 must be between 0 and the size 3"),
    (np.ones(3, np.float32), -1, {}, ValueError, "k=-1 must be between 0"),
    (np.float32(1.0), 1, {}, ValueError, "rank >= 1"),
    (np.ones(3, np.complex64), 1, {}, TypeError, "top_k does not accept"),
    (np.ones((2, 3), np.float32), 1, {"axis": 2}, ValueError, "out of bounds"),
    (np.ones((2, 3), np.float32), 3, {"axis": 0}, ValueError, "k=3 must be between 0 and the size 2"),
    (np.ones(3, np.float32), 1.5, {}, TypeError, "integer"),
])
def test_top_k_errors(x, k, kw, err, match):
    with pytest.raises(err, match=match):
        lax.top_k(x, k, **kw)
