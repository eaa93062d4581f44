"""funcgraph.Array: operators, conversions, repr, device buffers."""
import pickle

import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp


def test_metadata_and_conversion():
    x = fnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert (x.shape, x.ndim, x.size, x.dtype, x.nbytes) == ((2, 3), 2, 6, np.float32, 24)
    np.testing.assert_array_equal(np.asarray(x), np.arange(6).reshape(2, 3))
    assert x.T.shape == (3, 2)
    assert x.astype(np.int32).dtype == np.int32
    assert x.reshape(3, 2).shape == (3, 2) and x.reshape((6,)).shape == (6,)
    assert float(x.sum()) == 15.0 and int(x.max()) == 5
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert len(x) == 2


def test_scalar_conversions():
    x = fnp.asarray(np.float32(2.5))
    assert float(x) == 2.5 and int(x) == 2 and bool(x) and complex(x) == 2.5
    assert f"{x:.1f}" == "2.5"
    with pytest.raises(TypeError, match="one element"):
        float(fnp.ones(3))
    assert [1, 2, 3][fnp.asarray(np.int32(1))] == 2
    with pytest.raises(TypeError, match="integer scalar"):
        [1, 2][fnp.asarray(np.float32(1))]


def test_operators_match_numpy():
    a = np.array([1.5, -2.0, 3.0], np.float32)
    b = np.array([2.0, 4.0, -1.0], np.float32)
    x, y = fnp.asarray(a), fnp.asarray(b)
    for op in ["__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__",
               "__pow__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"]:
        expected = getattr(a, op)(b)
        np.testing.assert_allclose(np.asarray(getattr(x, op)(y)), expected, rtol=1e-6,
                                   err_msg=op)
    np.testing.assert_allclose(-x, -a)
    np.testing.assert_allclose(abs(x), abs(a))
    np.testing.assert_allclose(2 - x, 2 - a)
    np.testing.assert_allclose(x @ y, a @ b, rtol=1e-6)
    i = fnp.asarray(np.array([1, 6, 3], np.int32))
    np.testing.assert_array_equal(i & 3, np.array([1, 6, 3]) & 3)
    np.testing.assert_array_equal(i << 1, np.array([2, 12, 6]))
    np.testing.assert_array_equal(~i, ~np.array([1, 6, 3], np.int32))


def test_repr_and_str():
    x = fnp.asarray(np.array([1.0, 2.0], np.float32))
    assert repr(x) == "Array([1., 2.], dtype=float32)"
    assert repr(fnp.ones(2) + 1 == 2) == "Array([ True,  True], dtype=bool)"
    assert "weak_type=True" in repr(fg.jit(lambda: 1.0)())
    assert str(x) == "[1. 2.]"


def test_device_buffers_and_numpy_round_trip():
    x = fg.device_put(np.arange(4, dtype=np.float32))
    assert x._buf is not None
    y = fg.jit(lambda a: a * 2)(x)
    assert y._np is None  # stays on the device until asked for
    np.testing.assert_array_equal(np.asarray(y), [0, 2, 4, 6])
    assert y.block_until_ready() is y
    assert y.device is not None
    assert np.from_dlpack(y).tolist() == [0, 2, 4, 6]


def test_pickle_round_trip():
    x = fnp.arange(3.0)
    y = pickle.loads(pickle.dumps(x))
    assert isinstance(y, fg.Array) and y.tolist() == [0, 1, 2]


def test_arrays_are_unhashable():
    with pytest.raises(TypeError, match="unhashable"):
        hash(fnp.ones(2))


def test_iteration():
    rows = list(fnp.asarray(np.arange(6).reshape(3, 2)))
    assert [r.tolist() for r in rows] == [[0, 1], [2, 3], [4, 5]]
