"""slice, dynamic_slice, dynamic_update_slice, gather and the scatter family against jax
(eager NumPy, eager compiled and jit), plus the lax convenience wrappers and errors."""
import jax
import numpy as np
import pytest

import funcgraph as fg
from funcgraph import dtypes, lax
from tests.util import assert_close, check_against_jax, eager_and_jit, random_array

ALL_DTYPES = [np.bool_, np.int8, np.int32, np.uint8, np.uint32, np.float16, dtypes.bfloat16,
              np.float32, np.complex64]
NUMERIC_DTYPES = ALL_DTYPES[1:]
ORDERED_DTYPES = [d for d in ALL_DTYPES if d is not np.complex64]
INDEX_DTYPES = [np.int8, np.int32, np.uint8, np.uint32]
# Every case runs in these; one representative case per primitive runs in ALL_DTYPES.
FEW_DTYPES = [np.bool_, np.uint8, dtypes.bfloat16, np.float32]


def rand(shape, dtype, seed=0):
    return random_array(shape, dtype, seed, int_high=10)


# --- slice ---------------------------------------------------------------------------

SLICE_CASES = [
    ((), (), (), None),
    ((7,), (2,), (5,), None),
    ((7,), (1,), (7,), (3,)),
    ((7,), (4,), (4,), None),
    ((0, 3), (0, 1), (0, 3), None),
    ((4, 5), (1, 0), (4, 5), (2, 2)),
    ((3, 4, 5), (0, 1, 2), (3, 3, 5), (1, 1, 4)),
]


SLICE_PARAMS = ([(case, d) for case in SLICE_CASES for d in FEW_DTYPES]
                + [(SLICE_CASES[5], d) for d in ALL_DTYPES if d not in FEW_DTYPES])


@pytest.mark.parametrize("case,dtype", SLICE_PARAMS)
def test_slice(case, dtype):
    shape, start, limit, strides = case
    x = rand(shape, dtype)
    check_against_jax(lambda x: lax.slice(x, start, limit, strides),
                      lambda x: jax.lax.slice(x, start, limit, strides), x)


@pytest.mark.parametrize("args", [(1, 3), (None, -1), (-3, None, 2, 1), (0, 0, 1, 1),
                                  (None, None, 2, 0)])
def test_slice_in_dim(args):
    x = rand((5, 4), np.float32)
    check_against_jax(lambda x: lax.slice_in_dim(x, *args),
                      lambda x: jax.lax.slice_in_dim(x, *args), x)


@pytest.mark.parametrize("index,axis,keepdims", [(2, 0, True), (-1, 1, False), (0, 1, True)])
def test_index_in_dim(index, axis, keepdims):
    x = rand((5, 4), np.int32)
    check_against_jax(lambda x: lax.index_in_dim(x, index, axis, keepdims),
                      lambda x: jax.lax.index_in_dim(x, index, axis, keepdims), x)


def test_slice_errors():
    x = np.ones((3, 4), np.float32)
    with pytest.raises(TypeError, match=r"slice: dimension 1 of f32\[3,4\] cannot be sliced "
                                        r"from 1 to 5"):
        lax.slice(x, (0, 1), (3, 5))
    with pytest.raises(TypeError, match="from 2 to 1"):
        lax.slice(x, (2, 0), (1, 4))
    with pytest.raises(TypeError, match="one entry per dimension"):
        lax.slice(x, (0,), (3,))
    with pytest.raises(TypeError, match="positive"):
        lax.slice(x, (0, 0), (3, 4), (1, 0))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        lax.index_in_dim(x, 3)
    with pytest.raises(TypeError, match="static"):
        fg.jit(lambda x, i: lax.slice(x, (i, 0), (3, 4)))(x, 1)


# --- dynamic_slice / dynamic_update_slice ----------------------------------------------

DSLICE_CASES = [
    ((6,), (2,), (3,)),
    ((6,), (5,), (3,)),          # clamped to start 3
    ((6,), (-2,), (2,)),         # negative: counted from the end
    ((6,), (-9,), (2,)),         # clamped to 0 after wrapping
    ((6,), (100,), (0,)),
    ((4, 5), (1, 3), (2, 3)),
    ((4, 5), (-1, 0), (4, 5)),
    ((0, 3), (0, 1), (0, 2)),
    ((), (), ()),
]


DSLICE_PARAMS = ([(*case, d) for case in DSLICE_CASES for d in (np.int32, np.float16)]
                 + [(*DSLICE_CASES[5], d) for d in ALL_DTYPES if d not in (np.int32, np.float16)])


@pytest.mark.parametrize("shape,starts,sizes,dtype", DSLICE_PARAMS)
def test_dynamic_slice_traced_indices(shape, starts, sizes, dtype):
    x = rand(shape, dtype)
    idx = [np.int32(s) for s in starts]
    check_against_jax(lambda x, *i: lax.dynamic_slice(x, i, sizes),
                      lambda x, *i: jax.lax.dynamic_slice(x, i, sizes), x, *idx)


@pytest.mark.parametrize("shape,starts,sizes", DSLICE_CASES)
def test_dynamic_slice_static_indices(shape, starts, sizes):
    x = rand(shape, np.float32)
    check_against_jax(lambda x: lax.dynamic_slice(x, starts, sizes),
                      lambda x: jax.lax.dynamic_slice(x, starts, sizes), x)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES + [np.int16])
def test_dynamic_slice_index_dtypes(index_dtype):
    x = rand((7, 3), np.float32)
    info = np.iinfo(index_dtype)
    starts = [s for s in (3, 120, 255, -1, -7) if info.min <= s <= info.max]
    indices = np.array(starts, index_dtype)
    check_against_jax(lambda x, i: [lax.dynamic_slice(x, (i[k], 0), (2, 3))
                                    for k in range(len(starts))],
                      lambda x, i: [jax.lax.dynamic_slice(x, (i[k], np.array(0, i.dtype)), (2, 3))
                                    for k in range(len(starts))], x, indices)


def test_dynamic_slice_large_unsigned_index_clamps_to_end():
    x = np.arange(5, dtype=np.float32)
    out = lax.dynamic_slice(x, (np.uint32(4_000_000_000),), (2,))
    np.testing.assert_array_equal(np.asarray(out), [3, 4])
    out = fg.jit(lambda x, i: lax.dynamic_slice(x, (i,), (2,)))(x, np.uint32(4_000_000_000))
    np.testing.assert_array_equal(np.asarray(out), [3, 4])


def test_dynamic_slice_array_of_starts():
    x = rand((4, 5), np.float32)
    starts = np.array([1, 2], np.int32)
    check_against_jax(lambda x, s: lax.dynamic_slice(x, s, (2, 2)),
                      lambda x, s: jax.lax.dynamic_slice(x, s, (2, 2)), x, starts)


@pytest.mark.parametrize("shape,starts,sizes,dtype", DSLICE_PARAMS)
def test_dynamic_update_slice(shape, starts, sizes, dtype):
    x = rand(shape, dtype)
    u = rand(sizes, dtype, seed=1)
    idx = [np.int32(s) for s in starts]
    check_against_jax(lambda x, u, *i: lax.dynamic_update_slice(x, u, i),
                      lambda x, u, *i: jax.lax.dynamic_update_slice(x, u, i), x, u, *idx)


def test_dynamic_in_dim_wrappers():
    x = rand((5, 4), np.float32)
    i = np.int32(-2)
    check_against_jax(lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, axis=1),
                      lambda x, i: jax.lax.dynamic_slice_in_dim(x, i, 2, axis=1), x, i)
    check_against_jax(lambda x, i: lax.dynamic_index_in_dim(x, i, 0, keepdims=False),
                      lambda x, i: jax.lax.dynamic_index_in_dim(x, i, 0, keepdims=False), x, i)
    check_against_jax(lambda x, i: lax.dynamic_index_in_dim(x, i, 1),
                      lambda x, i: jax.lax.dynamic_index_in_dim(x, i, 1), x, i)
    u = rand((5, 2), np.float32, seed=2)
    check_against_jax(lambda x, u, i: lax.dynamic_update_slice_in_dim(x, u, i, 1),
                      lambda x, u, i: jax.lax.dynamic_update_slice_in_dim(x, u, i, 1), x, u, i)
    row = rand((4,), np.float32, seed=3)
    check_against_jax(lambda x, r, i: lax.dynamic_update_index_in_dim(x, r, i, 0),
                      lambda x, r, i: jax.lax.dynamic_update_index_in_dim(x, r, i, 0), x, row, i)
    check_against_jax(lambda x, r: lax.dynamic_update_index_in_dim(x, r[None], 7, 0),
                      lambda x, r: jax.lax.dynamic_update_index_in_dim(x, r[None], 7, 0), x, row)


def test_dynamic_slice_errors():
    x = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match=r"got 1 start indices for an operand of shape \(3, 4\)"):
        lax.dynamic_slice(x, (0,), (1, 1))
    with pytest.raises(TypeError, match=r"slice_sizes \(4, 1\)"):
        lax.dynamic_slice(x, (0, 0), (4, 1))
    with pytest.raises(TypeError, match=r"start indices must be integer scalars, got f32\[\]"):
        lax.dynamic_slice(x, (np.float32(0), 0), (1, 1))
    with pytest.raises(TypeError, match=r"update f32\[4,4\] must have the rank of operand "
                                        r"f32\[3,4\] and fit"):
        lax.dynamic_update_slice(x, np.ones((4, 4), np.float32), (0, 0))
    with pytest.raises(TypeError, match="float32, int32"):
        lax.dynamic_update_slice(x, np.ones((1, 1), np.int32), (0, 0))
    with pytest.raises(ValueError, match="allow_negative_indices=False"):
        lax.dynamic_slice(x, (-1, 0), (1, 1), allow_negative_indices=False)


# --- gather ----------------------------------------------------------------------------

def gdn(offset, collapsed, start_map, obatch=(), ibatch=()):
    return dict(offset_dims=offset, collapsed_slice_dims=collapsed, start_index_map=start_map,
                operand_batching_dims=obatch, start_indices_batching_dims=ibatch)


# (operand shape, indices, dimension numbers, slice sizes); indices include out-of-bounds ones.
GATHER_CASES = {
    "take_1d": ((5,), [[0], [4], [2], [7], [-1]], gdn((), (0,), (0,)), (1,)),
    "rows": ((4, 3), [[1], [3], [5]], gdn((1,), (0,), (0,)), (1, 3)),
    "columns": ((4, 3), [[2], [0]], gdn((0,), (1,), (1,)), (4, 1)),
    "points": ((4, 5), [[0, 1], [3, 4], [4, 0], [2, -3]], gdn((), (0, 1), (0, 1)), (1, 1)),
    "windows": ((6, 5), [[0, 0], [4, 3], [5, 1]], gdn((1, 2), (), (0, 1)), (2, 3)),
    "batch_2d_offset_middle": ((5, 4), [[[0], [1], [4]], [[2], [6], [3]]], gdn((1,), (0,), (0,)),
                               (1, 4)),
    "reversed_map": ((4, 5, 2), [[1, 2], [4, 3], [0, 0]], gdn((1,), (0, 1), (1, 0)), (1, 1, 2)),
    "batching": ((3, 5), [[1], [4], [9]], gdn((), (1,), (1,), (0,), (0,)), (1, 1)),
    "batching_window": ((2, 4, 3), np.arange(10).reshape(2, 5, 1) % 6,
                        gdn((2,), (1,), (1,), (0,), (0,)), (1, 1, 3)),
    "batching_second_dim": ((2, 4, 3), np.arange(10).reshape(5, 2, 1) % 5 - 1,
                            gdn((2,), (1,), (1,), (0,), (1,)), (1, 1, 3)),
    "two_batching_dims": ((3, 2, 4), np.arange(6).reshape(2, 3, 1) % 5,
                          gdn((), (2,), (2,), (0, 1), (1, 0)), (1, 1, 1)),
    "empty_index_vector": ((3, 4), np.zeros((2, 0), int), gdn((1, 2), (), ()), (2, 2)),
    "no_indices": ((4, 3), np.zeros((0, 1), int), gdn((1,), (0,), (0,)), (1, 3)),
    "scalar_operand": ((), np.zeros((3, 0), int), gdn((), (), ()), ()),
    "zero_size_window": ((4, 0), [[1], [2]], gdn((1,), (0,), (0,)), (1, 0)),
}
MODES = ["clip", "fill", "promise_in_bounds"]


def _gather_fns(dn, sizes, **kw):
    return (lambda x, i: lax.gather(x, i, lax.GatherDimensionNumbers(**dn), sizes, **kw),
            lambda x, i: jax.lax.gather(x, i, jax.lax.GatherDimensionNumbers(**dn), sizes, **kw))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(GATHER_CASES))
def test_gather_cases(case, mode):
    shape, indices, dn, sizes = GATHER_CASES[case]
    x = rand(shape, np.float32)
    check_against_jax(*_gather_fns(dn, sizes, mode=mode), x, np.asarray(indices, np.int32))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_gather_dtypes(dtype, mode):
    shape, indices, dn, sizes = GATHER_CASES["batch_2d_offset_middle"]
    x = rand(shape, dtype)
    check_against_jax(*_gather_fns(dn, sizes, mode=mode), x, np.asarray(indices, np.int32))


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_gather_index_dtypes(index_dtype, mode):
    x = rand((6, 3), np.float32)
    indices = np.array([[0], [5], [3], [100], [120]], index_dtype)
    check_against_jax(*_gather_fns(gdn((1,), (0,), (0,)), (1, 3), mode=mode), x, indices)


@pytest.mark.parametrize("fill_value", [0.5, -3, None])
def test_gather_fill_value(fill_value):
    x = rand((5, 2), np.float32)
    indices = np.array([[1], [5], [-1], [3]], np.int32)
    check_against_jax(*_gather_fns(gdn((1, 2), (), (0,)), (2, 2), mode="fill",
                                   fill_value=fill_value), x, indices)


@pytest.mark.parametrize("dtype", [np.int8, np.uint32, np.bool_])
def test_gather_default_fill_per_dtype(dtype):
    x = rand((4,), dtype)
    indices = np.array([[1], [4]], np.int32)
    check_against_jax(*_gather_fns(gdn((), (0,), (0,)), (1,), mode="fill"), x, indices)


def test_gather_mode_enum_and_default():
    x = rand((5,), np.float32)
    indices = np.array([[6]], np.int32)
    dn = lax.GatherDimensionNumbers((), (0,), (0,))
    clipped = lax.gather(x, indices, dn, (1,))
    np.testing.assert_array_equal(np.asarray(clipped), x[4:])
    filled = lax.gather(x, indices, dn, (1,), mode=lax.GatherScatterMode.FILL_OR_DROP)
    assert np.isnan(np.asarray(filled)).all()


def test_gather_accepts_lists_in_dimension_numbers():
    x = rand((4, 3), np.float32)
    dn = lax.GatherDimensionNumbers(offset_dims=[1], collapsed_slice_dims=[0],
                                    start_index_map=[0])
    out = fg.jit(lambda x, i: lax.gather(x, i, dn, [1, 3]))(x, np.array([[2]], np.int32))
    np.testing.assert_array_equal(np.asarray(out), x[2:3])


GATHER_ERRORS = [
    (gdn((1,), (0,), (0,)), (1, 2, 3), "one entry per dimension"),
    (gdn((1,), (0,), (0, 1)), (1, 3), r"start_index_map \(0, 1\) has 2 entries but the index "
                                      r"vectors.*have 1"),
    (gdn((1,), (0,), (2,)), (1, 3), r"start_index_map \(2,\) must be dimensions of the operand"),
    (gdn((2,), (0,), (0,)), (1, 3), r"offset_dims \(2,\) must be dimensions of the result"),
    (gdn((1, 0), (), (0,)), (1, 3), "offset_dims .* sorted"),
    (gdn((1,), (0,), (0,)), (2, 3), r"slice_sizes\[0\] = 2 but dimension 0 is collapsed"),
    (gdn((1,), (0,), (0,)), (1, 4), r"slice_sizes\[1\] = 4 is out of range for operand "
                                    r"f32\[4,3\]"),
    (gdn((), (0,), (0,)), (1, 3), "every operand dimension must be an offset dimension"),
    (gdn((1,), (0, 0), (0,)), (1, 3), "collapsed_slice_dims .* repeated"),
    (gdn((), (1,), (1,), (0,), (1,)), (1, 1), "cannot contain the index vector dimension"),
    (gdn((1,), (), (0,), (0,), (0,)), (1, 3), r"operand batching dimensions have sizes \(4,\) "
                                              r"but indices batching dimensions have sizes \(2,\)"),
    (gdn((), (0,), (0,), (0,), (0,)), (1, 3), "must not share"),
]


@pytest.mark.parametrize("dn,sizes,message", GATHER_ERRORS)
def test_gather_errors(dn, sizes, message):
    x = np.ones((4, 3), np.float32)
    indices = np.zeros((2, 1), np.int32)
    with pytest.raises(TypeError, match=message):
        lax.gather(x, indices, lax.GatherDimensionNumbers(**dn), sizes)


def test_gather_index_errors():
    x = np.ones((4, 3), np.float32)
    dn = lax.GatherDimensionNumbers((1,), (0,), (0,))
    with pytest.raises(TypeError, match=r"indices must have an integer dtype, got f32\[2,1\]"):
        lax.gather(x, np.zeros((2, 1), np.float32), dn, (1, 3))
    with pytest.raises(TypeError, match="indices must have rank >= 1"):
        lax.gather(x, np.int32(0), dn, (1, 3))
    with pytest.raises(ValueError, match="unknown gather/scatter mode 'wrap'"):
        lax.gather(x, np.zeros((2, 1), np.int32), dn, (1, 3), mode="wrap")


# --- scatter family -------------------------------------------------------------------

def sdn(window, inserted, to_operand, obatch=(), ibatch=()):
    return dict(update_window_dims=window, inserted_window_dims=inserted,
                scatter_dims_to_operand_dims=to_operand, operand_batching_dims=obatch,
                scatter_indices_batching_dims=ibatch)


# (operand shape, indices, updates shape, dimension numbers, windows distinct in every mode);
# indices include out-of-bounds ones (dropped, or clamped with mode='clip').
SCATTER_CASES = {
    "scalars_1d": ((6,), [[0], [4], [2], [2], [7], [-1]], (6,), sdn((), (0,), (0,)), False),
    "rows": ((4, 3), [[1], [3], [0]], (3, 3), sdn((1,), (0,), (0,)), True),
    "rows_oob": ((4, 3), [[1], [5], [-2]], (3, 3), sdn((1,), (0,), (0,)), False),
    "columns": ((4, 3), [[2], [0]], (4, 2), sdn((0,), (1,), (1,)), True),
    "points": ((4, 5), [[0, 1], [3, 4], [4, 0], [0, 1]], (4,), sdn((), (0, 1), (0, 1)), False),
    "windows": ((6, 5), [[0, 0], [4, 2], [5, 1]], (3, 2, 3), sdn((1, 2), (), (0, 1)), False),
    "windows_distinct": ((6, 5), [[0, 0], [4, 2], [2, 0]], (3, 2, 3), sdn((1, 2), (), (0, 1)),
                         True),
    "batch_2d": ((5, 4), [[[0], [1], [4]], [[2], [3], [6]]], (2, 4, 3), sdn((1,), (0,), (0,)),
                 False),
    "batching": ((3, 5), [[1], [4], [9]], (3,), sdn((), (1,), (1,), (0,), (0,)), False),
    "batching_distinct": ((3, 5), [[1], [4], [2]], (3,), sdn((), (1,), (1,), (0,), (0,)), True),
    "batching_second_dim": ((2, 4, 3), np.arange(10).reshape(5, 2, 1) % 5 - 1, (5, 2, 3),
                            sdn((2,), (1,), (1,), (0,), (1,)), False),
    "two_batching_dims": ((3, 2, 4), np.arange(6).reshape(2, 3, 1) % 5, (2, 3),
                          sdn((), (2,), (2,), (0, 1), (1, 0)), True),
    "empty_index_vector": ((3, 4), np.zeros((2, 0), int), (2, 2, 2), sdn((1, 2), (), ()), False),
    "no_updates": ((4, 3), np.zeros((0, 1), int), (0, 3), sdn((1,), (0,), (0,)), True),
    "zero_size_operand": ((0, 3), [[0], [1]], (2, 0, 3), sdn((1, 2), (), (0,)), False),
}

SCATTERS = {"scatter": (lax.scatter, jax.lax.scatter),
            "scatter_add": (lax.scatter_add, jax.lax.scatter_add),
            "scatter_mul": (lax.scatter_mul, jax.lax.scatter_mul),
            "scatter_min": (lax.scatter_min, jax.lax.scatter_min),
            "scatter_max": (lax.scatter_max, jax.lax.scatter_max)}


def _scatter_fns(name, dn, **kw):
    fg_fn, jax_fn = SCATTERS[name]
    return (lambda x, i, u: fg_fn(x, i, u, lax.ScatterDimensionNumbers(**dn), **kw),
            lambda x, i, u: jax_fn(x, i, u, jax.lax.ScatterDimensionNumbers(**dn), **kw))


def _scatter_params():
    """scatter_add and scatter in every case and mode; the other combiners share the
    indexing code, so a few cases suffice for them."""
    params = []
    for case in sorted(SCATTER_CASES):
        for mode in MODES:
            params.append(("scatter_add", case, mode))
            # With overlapping windows a replacing scatter's result depends on the order
            # XLA applies updates in.
            if SCATTER_CASES[case][4]:
                params.append(("scatter", case, mode))
    for name in ("scatter_mul", "scatter_min", "scatter_max"):
        for case in ("scalars_1d", "windows", "batching"):
            params += [(name, case, "clip"), (name, case, "fill")]
    return params


SCATTER_PARAMS = _scatter_params()


@pytest.mark.parametrize("name,case,mode", SCATTER_PARAMS)
def test_scatter_cases(name, case, mode):
    shape, indices, ushape, dn, _ = SCATTER_CASES[case]
    x = rand(shape, np.float32)
    u = rand(ushape, np.float32, seed=1)
    check_against_jax(*_scatter_fns(name, dn, mode=mode), x, np.asarray(indices, np.int32), u)


def _dtypes_for(name):
    return {"scatter": ALL_DTYPES, "scatter_add": NUMERIC_DTYPES,
            "scatter_mul": NUMERIC_DTYPES}.get(name, ORDERED_DTYPES)


SCATTER_DTYPE_PARAMS = [(name, dtype) for name in SCATTERS for dtype in _dtypes_for(name)]


@pytest.mark.parametrize("name,dtype", SCATTER_DTYPE_PARAMS)
def test_scatter_dtypes(name, dtype):
    mode = "clip" if np.dtype(dtype).kind in "bu" else "fill"
    case = "rows" if name == "scatter" else "batch_2d"
    shape, indices, ushape, dn, _ = SCATTER_CASES[case]
    x = rand(shape, dtype)
    u = rand(ushape, dtype, seed=1)
    check_against_jax(*_scatter_fns(name, dn, mode=mode), x, np.asarray(indices, np.int32), u)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_scatter_add_index_dtypes(index_dtype, mode):
    x = rand((6, 3), np.float32)
    u = rand((5, 2, 3), np.float32, seed=1)
    indices = np.array([[0], [5], [3], [100], [120]], index_dtype)
    check_against_jax(*_scatter_fns("scatter_add", sdn((1, 2), (), (0,)), mode=mode), x,
                      indices, u)


SCALAR_EXPECTED = {"scatter_add": lambda x, u: x + u.sum(),
                   "scatter_mul": lambda x, u: x * u.prod(),
                   "scatter_min": lambda x, u: min(x, u.min()),
                   "scatter_max": lambda x, u: max(x, u.max()),
                   "scatter": lambda x, u: u[-1]}


@pytest.mark.parametrize("name", sorted(SCALAR_EXPECTED))
@pytest.mark.parametrize("mode", MODES)
def test_scatter_into_scalar_operand(name, mode):
    # XLA itself rejects a rank-0 scatter (so jax cannot be the oracle here).
    x = np.float32(1.5)
    u = np.array([2.0, -1.0, 0.5], np.float32)[:1 if name == "scatter" else 3]
    indices = np.zeros((len(u), 0), np.int32)
    fn = _scatter_fns(name, sdn((), (), ()), mode=mode)[0]
    expected = np.float32(SCALAR_EXPECTED[name](x, u))
    for result in eager_and_jit(fn, x, indices, u):
        assert_close(result, expected)


def test_scatter_with_empty_index_vectors_combines_every_update():
    # XLA's CPU scatter drops all but one of these updates; funcgraph's lowering avoids that.
    x = np.zeros(3, np.float32)
    u = np.array([[2.0], [-1.0], [0.5]], np.float32)
    fn = _scatter_fns("scatter_add", sdn((1,), (), ()))[0]
    for result in eager_and_jit(fn, x, np.zeros((3, 0), np.int32), u):
        assert_close(result, np.array([1.5, 0, 0], np.float32))


def test_scatter_flags_and_python_scalar_updates():
    x = np.zeros(4, np.float32)
    dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    out = lax.scatter(x, np.array([[1]], np.int32), np.ones(1, np.float32), dn,
                      indices_are_sorted=True, unique_indices=True)
    np.testing.assert_array_equal(np.asarray(out), [0, 1, 0, 0])
    out = fg.jit(lambda x: lax.scatter_add(x, np.array([[2]], np.int32),
                                           np.ones(1, np.float32) * 3, dn, mode="clip"))(x)
    np.testing.assert_array_equal(np.asarray(out), [0, 0, 3, 0])
    # default mode drops out-of-bounds updates
    out = lax.scatter_add(x, np.array([[4], [0]], np.int32), np.ones(2, np.float32), dn)
    np.testing.assert_array_equal(np.asarray(out), [1, 0, 0, 0])


SCATTER_ERRORS = [
    ((3, 3), sdn((1,), (0,), (0,)), (2, 1), r"scatter_add: the scatter dimensions of updates "
                                            r"f32\[3,3\] have sizes \(3,\) but the batch "
                                            r"dimensions of indices i32\[2,1\] have sizes \(2,\)"),
    ((2,), sdn((1,), (0,), (0,)), (2, 1), r"updates f32\[2\] must have rank 2"),
    ((2, 5), sdn((1,), (0,), (0,)), (2, 1), r"window dimension 1 \(size 5\) is larger than "
                                            r"operand f32\[4,3\] dimension 1"),
    ((2, 3), sdn((1,), (0,), (0, 1)), (2, 1), r"scatter_dims_to_operand_dims \(0, 1\) has 2 "
                                              r"entries"),
    ((2, 3), sdn((1,), (), (0,)), (2, 1), "every operand dimension must be an update window"),
    ((2, 3), sdn((1,), (2,), (0,)), (2, 1), r"inserted_window_dims \(2,\) must be dimensions "
                                            r"of the operand"),
]


@pytest.mark.parametrize("ushape,dn,ishape,message", SCATTER_ERRORS)
def test_scatter_errors(ushape, dn, ishape, message):
    x = np.ones((4, 3), np.float32)
    with pytest.raises(TypeError, match=message):
        lax.scatter_add(x, np.zeros(ishape, np.int32), np.ones(ushape, np.float32),
                        lax.ScatterDimensionNumbers(**dn))


def test_scatter_dtype_errors():
    x = np.ones((4,), np.float32)
    dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    with pytest.raises(TypeError, match="float32, int32"):
        lax.scatter(x, np.zeros((1, 1), np.int32), np.ones(1, np.int32), dn)
    with pytest.raises(TypeError, match="scatter_add does not accept operand of dtype bool"):
        lax.scatter_add(np.ones(4, bool), np.zeros((1, 1), np.int32), np.ones(1, bool), dn)
    with pytest.raises(TypeError, match="scatter_max does not accept operand of dtype complex64"):
        lax.scatter_max(x.astype(np.complex64), np.zeros((1, 1), np.int32),
                        np.ones(1, np.complex64), dn)
