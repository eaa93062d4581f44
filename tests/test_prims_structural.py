"""rev, pad, concatenate and iota against jax (eager NumPy, eager compiled, jit)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
from funcgraph import dtypes, lax
from tests.util import check_against_jax, random_array

ALL_DTYPES = [np.bool_, np.int8, np.int32, np.uint8, np.uint32, np.float16, dtypes.bfloat16,
              np.float32, np.complex64]
NUMERIC_DTYPES = ALL_DTYPES[1:]


def rand(shape, dtype, seed=0):
    return random_array(shape, dtype, seed, int_high=100)


# --- rev ---------------------------------------------------------------------------

REV_CASES = [((), ()), ((5,), (0,)), ((2, 3), (1,)), ((2, 3), (0, 1)), ((0, 3), (0,)),
             ((2, 3, 4), (0, 2)), ((2, 3), ())]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape,dims", REV_CASES)
def test_rev(dtype, shape, dims):
    x = rand(shape, dtype)
    check_against_jax(lambda x: lax.rev(x, dims), lambda x: jax.lax.rev(x, dims), x)


def test_rev_bad_dimensions():
    with pytest.raises(TypeError, match=r"rev: dimensions \(2,\).*f32\[2,3\]"):
        lax.rev(np.ones((2, 3), np.float32), (2,))
    with pytest.raises(TypeError, match="appear once"):
        lax.rev(np.ones((2, 3), np.float32), (1, 1))


# --- pad ---------------------------------------------------------------------------

PAD_CASES = [
    ((), ()),
    ((3,), ((1, 2, 0),)),
    ((3,), ((0, 0, 2),)),
    ((4,), ((-1, -2, 0),)),
    ((4,), ((-2, 1, 1),)),
    ((3,), ((-5, 0, 1),)),          # everything cropped away: size 0
    ((2, 3), ((1, -1, 1), (-2, 3, 0))),
    ((0, 3), ((1, 1, 3), (0, 0, 0))),
    ((2, 0), ((0, 0, 0), (2, 1, 4))),
    ((2, 3, 1), ((0, 1, 0), (1, 0, 1), (2, 2, 5))),
]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape,config", PAD_CASES)
def test_pad(dtype, shape, config):
    x = rand(shape, dtype)
    v = rand((), dtype, seed=1)
    check_against_jax(lambda x, v: lax.pad(x, v, config),
                      lambda x, v: jax.lax.pad(x, v, config), x, v)


def test_pad_python_scalar_value_adopts_operand_dtype():
    x = rand((3,), np.float16)
    out = lax.pad(x, 7, [(1, 1, 1)])
    assert out.dtype == np.float16
    np.testing.assert_array_equal(
        np.asarray(out), np.asarray(jax.lax.pad(x, np.float16(7), [(1, 1, 1)])))


def test_pad_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(TypeError, match="one \\(low, high, interior\\) triple per dimension"):
        lax.pad(x, np.float32(0), [(1, 1, 0)])
    with pytest.raises(ValueError, match="interior padding must be >= 0"):
        lax.pad(x, np.float32(0), [(0, 0, -1), (0, 0, 0)])
    with pytest.raises(ValueError, match="negative dimension size -2"):
        lax.pad(x, np.float32(0), [(-3, -1, 0), (0, 0, 0)])
    with pytest.raises(TypeError, match="padding_value must be a scalar"):
        lax.pad(x, np.zeros(2, np.float32), [(0, 0, 0), (0, 0, 0)])
    with pytest.raises(TypeError, match="pad.*float32, int32"):
        lax.pad(x, np.int32(0), [(0, 0, 0), (0, 0, 0)])


# --- concatenate --------------------------------------------------------------------

CONCAT_CASES = [
    ([(3,)], 0),
    ([(3,), (2,)], 0),
    ([(2, 3), (2, 1), (2, 0), (2, 4)], 1),
    ([(0, 3), (2, 3)], 0),
    ([(0, 3), (0, 3)], 0),
    ([(2, 1, 3), (2, 2, 3)], 1),
]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shapes,dim", CONCAT_CASES)
def test_concatenate(dtype, shapes, dim):
    xs = [rand(s, dtype, seed=i) for i, s in enumerate(shapes)]
    check_against_jax(lambda *xs: lax.concatenate(xs, dim),
                      lambda *xs: jax.lax.concatenate(xs, dim), *xs)


def test_concatenate_errors():
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    with pytest.raises(TypeError, match=r"f32\[2,3\] and f32\[3,4\]"):
        lax.concatenate([a, b], 1)
    with pytest.raises(TypeError, match=r"f32\[2,3\] and f32\[3\]"):
        lax.concatenate([a, np.ones(3, np.float32)], 0)
    with pytest.raises(TypeError, match="concatenate requires arguments of one dtype.*float32, "
                                        "int32"):
        lax.concatenate([a, np.ones((2, 3), np.int32)], 0)
    with pytest.raises(TypeError, match="dimension 2 is out of bounds"):
        lax.concatenate([a, a], 2)
    with pytest.raises(TypeError, match="scalars cannot be concatenated"):
        lax.concatenate([np.float32(1), np.float32(2)], 0)
    with pytest.raises(ValueError, match="non-empty"):
        lax.concatenate([], 0)


def test_concatenate_under_jit_shows_in_ir():
    f = fg.jit(lambda a, b: lax.concatenate([a, b], 0))
    text = f.lower(np.ones(2, np.float32), np.ones(3, np.float32)).as_text()
    assert "stablehlo.concatenate" in text


# --- iota ---------------------------------------------------------------------------

IOTA_CASES = [((5,), 0), ((0,), 0), ((2, 3), 0), ((2, 3), 1), ((2, 0, 4), 2), ((3, 2, 4), 1)]


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES)
@pytest.mark.parametrize("shape,dim", IOTA_CASES)
def test_broadcasted_iota(dtype, shape, dim):
    check_against_jax(lambda: lax.broadcasted_iota(dtype, shape, dim),
                      lambda: jax.lax.broadcasted_iota(dtype, shape, dim))


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.uint8])
def test_iota(dtype):
    check_against_jax(lambda: lax.iota(dtype, 7), lambda: jax.lax.iota(dtype, 7))


def test_iota_inside_jit_with_arguments():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    check_against_jax(lambda x: x * lax.broadcasted_iota(np.float32, (2, 3), 1),
                      lambda x: x * jax.lax.broadcasted_iota(jnp.float32, (2, 3), 1), x)


def test_iota_errors():
    with pytest.raises(TypeError, match="iota does not accept dtype bool"):
        lax.iota(np.bool_, 3)
    with pytest.raises(TypeError, match=r"dimension 2 is out of bounds for shape \(2, 3\)"):
        lax.broadcasted_iota(np.int32, (2, 3), 2)
    with pytest.raises(ValueError, match="negative dimension"):
        lax.iota(np.int32, -1)
