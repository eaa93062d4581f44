"""funcgraph.numpy against jax.numpy: eagerly (NumPy path) and under jit, over dtypes,
weak-typed Python scalars, promotion, axis/keepdims variants and error messages."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import dtypes
from tests.util import assert_close, check_against_jax

BF16 = dtypes.bfloat16


def check(fg_fn, jax_fn, *args, scale=1.0):
    """funcgraph eagerly and under jit vs jax.jit (values, dtypes and weak types)."""
    expected = jax.tree_util.tree_leaves(jax.jit(jax_fn)(*args))
    arrays = [fnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    for result in (fg_fn(*arrays), fg.jit(fg_fn)(*args)):
        leaves = fg.tree_util.tree_leaves(result)
        assert len(leaves) == len(expected)
        for r, e in zip(leaves, expected):
            assert_close(r, np.asarray(e), scale=scale)
            assert getattr(r, "weak_type", False) == getattr(e, "weak_type", False), (r, e)


def data(shape, dtype=np.float32, seed=0, low=-3, high=4):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "u":
        return rng.integers(0, high - low, shape).astype(dtype)
    if dtype.kind == "i":
        return rng.integers(low, high, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def variants(f, j, kwargs_list):
    """One function for funcgraph and one for jax returning f(*args, **kw) for every kw."""
    return (lambda *a: tuple(f(*a, **kw) for kw in kwargs_list),
            lambda *a: tuple(j(*a, **kw) for kw in kwargs_list))


def both(name):
    """(funcgraph.numpy.name, jax.numpy.name)."""
    return getattr(fnp, name), getattr(jnp, name)


# --- promotion, including weak-typed Python scalars ---------------------------------------

PROMOTION = [
    (np.int8, np.uint8), (np.float16, np.int32), (np.bool_, np.int32), (np.uint8, np.uint32),
    (BF16, np.float16), (np.int32, np.float32), (np.complex64, np.float16), (np.bool_, BF16),
]
SCALARS = [(np.float16, 2.5), (np.int8, 3), (np.uint8, True), (np.int32, 1.5),
           (BF16, 1), (np.bool_, 2), (np.complex64, 2.0), (np.float32, 1j)]


@pytest.mark.parametrize("da,db", PROMOTION)
def test_binary_promotion(da, db):
    a, b = data((2, 3), da, 1), data((3,), db, 2, low=1)
    for name in ("add", "multiply", "maximum", "equal", "true_divide"):
        check(*both(name), a, b, scale=4)
    check(lambda a, b: fnp.concatenate([a, b[None]]), lambda a, b: jnp.concatenate([a, b[None]]),
          a, b)
    check(lambda a, b: fnp.where(a != 0, a, b), lambda a, b: jnp.where(a != 0, a, b), a, b)
    check(lambda a, b: fnp.stack([a[0], b]), lambda a, b: jnp.stack([a[0], b]), a, b)


@pytest.mark.parametrize("dtype,scalar", SCALARS)
def test_weak_python_scalars(dtype, scalar):
    x = data((3,), dtype, 3)
    check(lambda x, s: fnp.add(x, s), lambda x, s: jnp.add(x, s), x, scalar)
    check(lambda x: x * scalar, lambda x: x * scalar, x)
    check(lambda x: fnp.where(x != 0, scalar, x), lambda x: jnp.where(x != 0, scalar, x), x)


def test_weak_scalars_stay_weak():
    check(lambda s: fnp.add(s, 1), lambda s: jnp.add(s, 1), 2.0)
    check(lambda s: fnp.concatenate([fnp.atleast_1d(s), fnp.atleast_1d(s)]),
          lambda s: jnp.concatenate([jnp.atleast_1d(s), jnp.atleast_1d(s)]), 2.0)


# --- reductions and axis/keepdims variants ------------------------------------------------

AXES = [None, 0, -1, (0, 2), (2, 0)]


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "any", "ptp", "var"])
def test_reductions_axis_keepdims(name):
    x = data((2, 3, 4), np.float32, 4)
    f, j = both(name)
    kws = [dict(axis=axis, keepdims=keepdims) for axis in AXES for keepdims in (False, True)
           if not (name == "ptp" and isinstance(axis, tuple))]
    check(*variants(f, j, kws), x, scale=4)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint32, np.float16, BF16, np.float32])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argminmax(name, dtype):
    x = data((3, 4), dtype, 5)
    f, j = both(name)
    kws = [dict(axis=axis, keepdims=keepdims) for axis in (None, 0, -1) for keepdims in (0, 1)]
    check(*variants(f, j, kws), x)
    check(lambda x: getattr(x, name)(), lambda x: getattr(x, name)(), x)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.float16, np.float32,
                                   np.complex64])
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_cumulative(name, dtype):
    x = data((3, 4), dtype, 6, low=-2, high=3)
    f, j = both(name)
    kws = [dict(axis=None), dict(axis=0), dict(axis=-1)]
    if dtype != np.complex64:  # (complex -> int32 discards the imaginary part, with a warning)
        kws.append(dict(axis=1, dtype=np.int32))
    check(*variants(f, j, kws), x, scale=4)
    check(lambda x: getattr(x, name)(0), lambda x: getattr(x, name)(0), x, scale=4)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint32, BF16, np.float32])
def test_sort_argsort(dtype):
    x = data((3, 5), dtype, 7, low=-2, high=2)  # many ties: stability matters
    kws = [dict(axis=axis, descending=d) for axis in (None, 0, -1) for d in (False, True)]
    check(*variants(fnp.sort, jnp.sort, kws), x)
    check(*variants(fnp.argsort, jnp.argsort, kws), x)
    check(lambda x: x.sort(), lambda x: x.sort(), x)
    check(lambda x: x.argsort(), lambda x: x.argsort(), x)


def test_sort_nan():
    x = np.array([3.0, np.nan, -1.0, np.inf, np.nan, 0.0], np.float32)
    for name in ("sort", "argsort"):
        check(*both(name), x)


# --- joining, splitting, flipping ---------------------------------------------------------

def test_concatenate_stack():
    a, b = data((2, 3), np.float32, 8), data((2, 3), np.int8, 9)
    kws = [dict(axis=axis) for axis in (0, 1, -1, None)]
    check(*variants(lambda a, b, **kw: fnp.concatenate([a, b], **kw),
                    lambda a, b, **kw: jnp.concatenate([a, b], **kw), kws), a, b)
    check(lambda a, b: fnp.concatenate((a, b), dtype=np.int32),
          lambda a, b: jnp.concatenate((a, b), dtype=jnp.int32), a, b)
    check(*variants(lambda a, b, **kw: fnp.stack([a, b], **kw),
                    lambda a, b, **kw: jnp.stack([a, b], **kw),
                    [dict(axis=axis) for axis in (0, 1, 2, -1, -3)]), a, b)
    check(lambda a: fnp.stack(a), lambda a: jnp.stack(a), a)
    check(lambda a: fnp.concatenate(a), lambda a: jnp.concatenate(a), a)
    check(lambda a: fnp.concatenate([a[:, :0], a], 1), lambda a: jnp.concatenate([a[:, :0], a], 1),
          a)


@pytest.mark.parametrize("name", ["hstack", "vstack", "dstack", "column_stack"])
def test_stacking_helpers(name):
    f, j = both(name)
    for shape in [(), (3,), (2, 3), (2, 3, 2)]:
        if name == "column_stack" and len(shape) > 2:
            continue
        a, b = data(shape, np.float32, 10), data(shape, np.int32, 11)
        check(lambda a, b: f([a, b]), lambda a, b: j([a, b]), a, b)


def test_split():
    x = data((6, 4), np.float32, 12)
    for name, sections, axis in [("split", 3, 0), ("split", 2, 1), ("split", [1, 4], 0),
                                 ("split", [0, 3, 3], 0), ("array_split", 4, 0),
                                 ("array_split", 3, 1), ("array_split", [3, 5], 0)]:
        f, j = both(name)
        check(lambda x: f(x, sections, axis), lambda x: j(x, sections, axis), x)


def test_flip():
    x = data((2, 3, 4), np.int32, 13)
    check(*variants(fnp.flip, jnp.flip, [dict(axis=a) for a in (None, 0, -1, (0, 2))]), x)
    check(*both("fliplr"), x)
    check(*both("flipud"), x)


# --- take, repeat, diagonal, trace, nonzero ------------------------------------------------

def test_take():
    x = data((3, 4), np.float32, 14)
    xi = data((3, 4), np.int8, 14)
    idx = np.array([[0, 3], [-1, 7]], np.int32)
    kws = [dict(axis=a, mode=m) for a in (None, 0, 1, -1) for m in (None, "fill", "clip", "wrap")]
    check(*variants(fnp.take, jnp.take, kws), x, idx)
    check(lambda x, i: fnp.take(x, i, axis=1), lambda x, i: jnp.take(x, i, axis=1), xi, idx)
    check(lambda x, i: fnp.take(x, i, axis=0, fill_value=-1),
          lambda x, i: jnp.take(x, i, axis=0, fill_value=-1), xi, idx)
    check(lambda x: x.take(np.array([2, 0]), axis=1), lambda x: x.take(np.array([2, 0]), axis=1),
          x)


def test_take_along_axis():
    x = data((3, 4), np.float32, 15)
    idx = np.array([[0, 3], [1, 2], [5, -1]], np.int32)  # out of bounds: fill (NaN)
    check(lambda x, i: fnp.take_along_axis(x, i, 1), lambda x, i: jnp.take_along_axis(x, i, 1),
          x, idx)
    idx0 = np.array([[0, 2, 1, 1], [2, 2, 0, 1]], np.int32)
    check(lambda x, i: fnp.take_along_axis(x, i, 0), lambda x, i: jnp.take_along_axis(x, i, 0),
          x, idx0)
    check(lambda x, i: fnp.take_along_axis(x, i, None),
          lambda x, i: jnp.take_along_axis(x, i, None), x, idx0.ravel())


def test_repeat():
    x = data((2, 3), np.float32, 16)
    for repeats, axis in [(2, None), (3, 0), (2, 1), (0, 1), (np.array([1, 0, 2]), 1),
                          (np.array([2]), 0), (np.array([1, 2, 0, 1, 1, 3]), None)]:
        check(lambda x: fnp.repeat(x, repeats, axis), lambda x: jnp.repeat(x, repeats, axis), x)
    check(lambda x: x.repeat(2, axis=0), lambda x: x.repeat(2, axis=0), x)
    reps = np.array([1, 0, 2], np.int32)
    for total in (3, 5, 2):
        check(lambda x, r: fnp.repeat(x, r, axis=1, total_repeat_length=total),
              lambda x, r: jnp.repeat(x, r, axis=1, total_repeat_length=total), x, reps)


def test_traced_repeats_need_total_length():
    with pytest.raises(fg.ConcretizationTypeError, match="total_repeat_length"):
        fg.jit(lambda r: fnp.repeat(fnp.arange(3), r))(np.array([1, 2, 3]))


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 2), (2, 3, 4), (0, 3)])
def test_diagonal_trace(shape):
    x = data(shape, np.int8, 17)
    kws = [dict(offset=offset, axis1=i, axis2=j) for offset in (0, 1, -1, 2, -3, 7)
           for i, j in (((0, 1), (1, 0), (-1, 0)) if len(shape) == 3 else ((0, 1), (1, 0)))]
    check(*variants(fnp.diagonal, jnp.diagonal, kws), x)
    check(*variants(fnp.trace, jnp.trace, kws), x)
    check(lambda x: x.trace(dtype=np.float32), lambda x: x.trace(dtype=jnp.float32), x)
    check(lambda x: x.diagonal(1), lambda x: x.diagonal(1), x)


def test_nonzero():
    x = np.array([[0, 2, 0], [3, 0, 4]], np.int32)
    check(lambda x: fnp.nonzero(x, size=4), lambda x: jnp.nonzero(x, size=4), x)
    check(lambda x: fnp.nonzero(x, size=2, fill_value=-1),
          lambda x: jnp.nonzero(x, size=2, fill_value=-1), x)
    check(lambda x: fnp.nonzero(x, size=9, fill_value=(-1, -2)),
          lambda x: jnp.nonzero(x, size=9, fill_value=(-1, -2)), x)
    check(lambda x: fnp.where(x > 1, size=3), lambda x: jnp.where(x > 1, size=3), x)
    check(lambda x: fnp.argwhere(x, size=3), lambda x: jnp.argwhere(x, size=3), x)
    check(lambda x: fnp.flatnonzero(x, size=5), lambda x: jnp.flatnonzero(x, size=5), x)
    # eagerly without size=
    for f, j in [both("nonzero"), both("argwhere"), both("flatnonzero")]:
        for got, want in zip(fg.tree_util.tree_leaves(f(x)), jax.tree_util.tree_leaves(j(x))):
            assert_close(got, np.asarray(want))
    assert_close(fnp.asarray(x).nonzero()[1], np.array([1, 0, 2], np.int32))


def test_unravel_index():
    idx = np.array([0, 5, 11, -1, -12, 12, 40, -50], np.int32)
    for shape in [(3, 4), (2, 3, 2), (12,)]:
        check(lambda i: fnp.unravel_index(i, shape), lambda i: jnp.unravel_index(i, shape), idx)


def test_nonzero_traced_needs_size():
    with pytest.raises(fg.ConcretizationTypeError, match=r"size=\.\.\."):
        fg.jit(fnp.nonzero)(np.array([1, 0, 2]))
    with pytest.raises(fg.ConcretizationTypeError, match="size="):
        fg.jit(lambda x: fnp.where(x))(np.array([1, 0, 2]))


# --- creation -------------------------------------------------------------------------------

def test_tri_and_friends():
    for args in [(3,), (3, 4), (4, 3, 1), (3, 3, -1)]:
        assert_close(fnp.tri(*args), np.asarray(jnp.tri(*args)))
    assert_close(fnp.tri(3, dtype=np.int32), np.asarray(jnp.tri(3, dtype=jnp.int32)))
    x = data((2, 3, 4), np.float32, 18)
    kws = [dict(k=k) for k in (0, 1, -2)]
    check(*variants(fnp.tril, jnp.tril, kws), x)
    check(*variants(fnp.triu, jnp.triu, kws), x)
    check(*variants(fnp.diag, jnp.diag, kws), x[0])
    check(*variants(fnp.diag, jnp.diag, kws), x[0, 0])


def test_meshgrid_linspace():
    a, b = np.arange(3, dtype=np.float32), np.arange(4, dtype=np.int32)
    for indexing in ("xy", "ij"):
        for sparse in (False, True):
            check(lambda a, b: fnp.meshgrid(a, b, indexing=indexing, sparse=sparse),
                  lambda a, b: jnp.meshgrid(a, b, indexing=indexing, sparse=sparse), a, b)
    assert_close(fnp.linspace(0, 1, 5), np.asarray(jnp.linspace(0, 1, 5)))
    assert_close(fnp.linspace(2, 3, 4, endpoint=False), np.asarray(jnp.linspace(2, 3, 4,
                                                                               endpoint=False)))


# --- einsum ----------------------------------------------------------------------------------

EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("i,i", [(5,), (5,)]),
    ("i,i->i", [(5,), (5,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->j", [(2, 3)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->ji", [(3, 3, 2)]),
    ("iii->i", [(2, 2, 2)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bjk->kib", [(2, 3, 4), (2, 4, 5)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("ij,ij,ij->i", [(2, 3), (2, 3), (2, 3)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 5), (5, 2)]),
    ("ij,kl->", [(2, 3), (4, 5)]),
    ("ij,jk->ijk", [(2, 3), (3, 4)]),
    ("ii,ij->j", [(3, 3), (3, 2)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...ij,...jk", [(1, 3, 4), (5, 4, 2)]),
    ("i...,i...->...", [(3, 2, 1), (3, 1, 4)]),
    ("...,...", [(2, 3), (3,)]),
    ("i,->i", [(3,), ()]),
    ("ij,j->i", [(0, 3), (3,)]),
]


@pytest.mark.parametrize("subscripts,shapes", EINSUM, ids=[s for s, _ in EINSUM])
def test_einsum(subscripts, shapes):
    ops = [data(s, np.float32, i) for i, s in enumerate(shapes)]
    check(lambda *o: fnp.einsum(subscripts, *o), lambda *o: jnp.einsum(subscripts, *o), *ops)


@pytest.mark.parametrize("optimize", ["optimal", "greedy", True, False, "auto"])
def test_einsum_optimize_one_dot_per_pair(optimize):
    shapes = [(2, 3), (3, 40), (40, 5), (5, 2)]
    ops = [data(s, np.float32, i) for i, s in enumerate(shapes)]
    fn = lambda *o: fnp.einsum("ab,bc,cd,de->ae", *o, optimize=optimize)  # noqa: E731
    check(fn, lambda *o: jnp.einsum("ab,bc,cd,de->ae", *o, optimize=optimize), *ops)
    assert str(fg.make_jaxpr(fn)(*ops)).count("dot_general") == 3


def test_einsum_dtypes():
    cases = [(np.int8, np.uint8), (np.float16, np.int32), (np.bool_, np.bool_),
             (np.complex64, np.float32), (np.int32, np.int32)]
    for da, db in cases:
        _check_einsum_pair(da, db)
    a, b = data((2, 3), np.int8, 3), data((3, 4), np.int8, 4)
    check(lambda a, b: fnp.einsum("ij,jk", a, b, preferred_element_type=np.int32),
          lambda a, b: jnp.einsum("ij,jk", a, b, preferred_element_type=jnp.int32), a, b)
    check(lambda a: fnp.einsum("ij,->ij", a, 2.5), lambda a: jnp.einsum("ij,->ij", a, 2.5), a)


def _check_einsum_pair(da, db):
    a, b = data((2, 3), da, 1), data((3, 4), db, 2)
    check(lambda a, b: fnp.einsum("ij,jk->ik", a, b), lambda a, b: jnp.einsum("ij,jk->ik", a, b),
          a, b, scale=4)
    check(lambda a: fnp.einsum("ij->i", a), lambda a: jnp.einsum("ij->i", a), a, scale=4)


def test_einsum_bfloat16():
    _check_einsum_pair(BF16, BF16)


def test_einsum_interleaved():
    a, b = data((2, 3), np.float32, 5), data((3, 4), np.float32, 6)
    check(lambda a, b: fnp.einsum(a, [0, 1], b, [1, 2], [0, 2]),
          lambda a, b: jnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), a, b)
    check(lambda a, b: fnp.einsum(a, [Ellipsis, 1], b, [1, 2]),
          lambda a, b: jnp.einsum(a, [Ellipsis, 1], b, [1, 2]), a, b)


def test_einsum_errors():
    with pytest.raises(ValueError, match="einsum"):
        fnp.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(ValueError, match="einsum"):
        fnp.einsum("ijk,jk->i", np.ones((2, 3)), np.ones((3, 4)))


# --- errors name the argument ---------------------------------------------------------------

@pytest.mark.parametrize("fn,match", [
    (lambda: fnp.sum(fnp.ones((2, 3)), axis=2), "axis 2 is out of bounds for an array of "
                                                "dimension 2"),
    (lambda: fnp.argmax(fnp.ones((2, 3)), axis=-3), "axis -3 is out of bounds"),
    (lambda: fnp.cumsum(fnp.ones((2, 3)), axis=5), "axis 5 is out of bounds"),
    (lambda: fnp.sort(fnp.ones(3), axis=1), "axis 1 is out of bounds"),
    (lambda: fnp.concatenate([fnp.ones((2, 3))], axis=2), "axis 2 is out of bounds"),
    (lambda: fnp.stack([fnp.ones((2, 3))], axis=3), "axis 3 is out of bounds"),
    (lambda: fnp.take(fnp.ones((2, 3)), np.array([0]), axis=2), "axis 2 is out of bounds"),
    (lambda: fnp.flip(fnp.ones((2, 3)), 2), "axis 2 is out of bounds"),
    (lambda: fnp.diagonal(fnp.ones((2, 3)), axis2=2), "axis2 2 is out of bounds"),
    (lambda: fnp.split(fnp.ones(4), 2, axis=1), "axis 1 is out of bounds"),
])
def test_axis_errors(fn, match):
    with pytest.raises(ValueError, match=match):
        fn()


@pytest.mark.parametrize("fn,err,match", [
    (lambda: fnp.concatenate([fnp.ones((2, 3)), fnp.ones((2, 4))]), TypeError,
     r"arrays\[0\] has shape \(2, 3\) and arrays\[1\] has shape \(2, 4\)"),
    (lambda: fnp.concatenate([fnp.ones((2, 3)), fnp.ones(3)]), TypeError,
     r"same number of dimensions.*arrays\[1\] has shape \(3,\)"),
    (lambda: fnp.concatenate([fnp.ones(()), fnp.ones(())]), ValueError, "zero-dimensional"),
    (lambda: fnp.concatenate([]), ValueError, "at least one array"),
    (lambda: fnp.stack([fnp.ones(3), fnp.ones(4)]), ValueError,
     r"same shape, but arrays\[0\] has shape \(3,\) and arrays\[1\] has shape \(4,\)"),
    (lambda: fnp.split(fnp.ones(5), 2), ValueError, "equal division"),
    (lambda: fnp.add(fnp.ones((2, 3)), fnp.ones((4,))), ValueError,
     r"Incompatible shapes for broadcasting: shapes=\[\(2, 3\), \(4,\)\]"),
    (lambda: fnp.add(fnp.ones(3), fnp.ones(4)), TypeError,
     r"add got incompatible shapes for broadcasting: \(3,\), \(4,\)\."),
    (lambda: fnp.ones(6).reshape(4), TypeError,
     r"cannot reshape array of shape \(6,\) \(size 6\) into shape \(4,\) \(size 4\)"),
    (lambda: fnp.matmul(fnp.ones((2, 3)), fnp.ones((4, 2))), TypeError, "matmul"),
    (lambda: fnp.argmax(fnp.ones((0, 3))), ValueError, "argmax of an empty sequence"),
    (lambda: fnp.repeat(fnp.ones(3), np.array([1, 2])), ValueError, "repeats must be"),
    (lambda: fnp.diagonal(fnp.ones(3)), ValueError, "at least two dimensions"),
    (lambda: fnp.nonzero(fnp.ones(())), ValueError, "0-d array"),
    (lambda: fnp.take(fnp.ones(3), np.array([0]), mode="raise"), NotImplementedError, "raise"),
    (lambda: fnp.take(fnp.ones(3), np.array([0.5])), ValueError, "integers"),
])
def test_shape_errors(fn, err, match):
    with pytest.raises(err, match=match):
        fn()


def test_every_method_exists():
    from funcgraph.numpy._methods import _METHODS
    x = fnp.arange(6.0).reshape(2, 3)
    for name in _METHODS:
        assert callable(getattr(x, name)), name
    assert_close(x.ptp(), np.float32(5))
    assert_close(x.flatten(), np.arange(6, dtype=np.float32))
    assert_close(fg.jit(lambda x: x.cumsum(1).argmax(1))(x), np.array([2, 2], np.int32))


def test_compiled_eager_path():
    """A few functions through check_against_jax (also runs each primitive compiled)."""
    x = data((3, 4), np.float32, 19)
    check_against_jax(lambda x: fnp.argsort(x, axis=0, descending=True),
                      lambda x: jnp.argsort(x, axis=0, descending=True), x)
    check_against_jax(lambda x: fnp.einsum("ij,kj->ik", x, x), lambda x: jnp.einsum("ij,kj->ik",
                                                                                   x, x), x)
    check_against_jax(lambda x: fnp.diagonal(x, 1), lambda x: jnp.diagonal(x, 1), x)
    check_against_jax(lambda x: fnp.take(x, np.array([5, 0, -1])),
                      lambda x: jnp.take(x, np.array([5, 0, -1])), x)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, fnp.bfloat16],
                         ids=lambda d: np.dtype(d).name)
def test_frexp_ldexp_bits_as_jax(dtype):
    """From x's bits, as jax: the log2-based frexp misplaced 1e-30 and 3.4e38, and
    ldexp as x * 2**k lost exactness (ldexp(1, 100) was not 2**100)."""
    rng = np.random.default_rng(0)
    values = np.concatenate([
        [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-30, -1e-30, 1e30, 3.4e38, -3.4e38,
         np.inf, -np.inf, np.nan, 88.7, 0.9999999, 65504.0, 6e-5],
        rng.standard_normal(100) * 10.0 ** rng.integers(-30, 30, 100)])
    with np.errstate(over="ignore"):
        x = values.astype(dtype)
    exponents = np.concatenate([[100, -126, -127, 1100, 5, -5, 127, 128, 0, 3, 0, 0, 0, 0,
                                 0, 1, -1, -20, 20], rng.integers(-300, 300, 100)]).astype(np.int32)
    bits = f"u{np.dtype(dtype).itemsize}"
    want_m, want_e = jax.jit(jnp.frexp)(x)
    want_x = np.asarray(jax.jit(jnp.ldexp)(x, exponents))
    normal = np.abs(x.astype(np.float64)) >= np.finfo(np.float32).tiny  # eager NumPy keeps
    normal |= (x == 0) | ~np.isfinite(x.astype(np.float64))           # subnormals
    for mode, frexp, ldexp in [("jit", fg.jit(fnp.frexp), fg.jit(fnp.ldexp)),
                               ("eager", fnp.frexp, fnp.ldexp)]:
        keep = slice(None) if mode == "jit" else normal
        m, e = frexp(x)
        np.testing.assert_array_equal(np.asarray(m).view(bits)[keep],
                                      np.asarray(want_m).view(bits)[keep])
        np.testing.assert_array_equal(np.asarray(e)[keep], np.asarray(want_e)[keep])
        got = np.asarray(ldexp(x, exponents))
        if mode == "eager":  # nor subnormal results
            with np.errstate(over="ignore", invalid="ignore"):
                exact = np.abs(x.astype(np.float64) * 2.0 ** exponents)
            keep = normal & ~((exact > 0) & (exact < np.finfo(np.float32).tiny))
        np.testing.assert_array_equal(got.view(bits)[keep], want_x.view(bits)[keep])
    assert float(fg.grad(lambda v: fnp.frexp(v)[0])(3.0)) == 0.25
    with pytest.raises(ValueError, match="ldexp not supported"):
        fnp.ldexp(np.ones(2), np.ones(2))


def test_quantile_nearest_breaks_ties_downward_as_jax():
    x = np.arange(8, dtype=np.float32)  # the median's position is 3.5: jax takes 3
    for q in (0.5, 3 / 14, 0.3, 0.0, 1.0):
        assert float(fnp.quantile(x, q, method="nearest")) == \
            float(jnp.quantile(x, q, method="nearest"))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.complex64, fnp.bfloat16],
                         ids=lambda d: np.dtype(d).name)
def test_round_decimals_is_jaxs_bits(dtype):
    """As jax computes it, eagerly too: float16 through float32, complex part by part, the
    division by 10^d as XLA makes it (a product with the rounded reciprocal)."""
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(200) * 10.0 ** rng.integers(-3, 5, 200)).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * x[::-1]
    bits = f"u{np.dtype(dtype).itemsize // (2 if np.dtype(dtype).kind == 'c' else 1)}"
    for decimals in (0, 1, 2, -1, 3, 40):
        want = np.asarray(jax.jit(lambda v: jnp.round(v, decimals))(x))
        for got in (fg.jit(lambda v: fnp.round(v, decimals))(x), fnp.round(x, decimals)):
            np.testing.assert_array_equal(np.asarray(got).view(bits), want.view(bits))
    with pytest.raises(NotImplementedError, match="decimals < 0"):
        fnp.round(np.arange(3), -1)


def test_fmax_fmin_spacing_special_values_as_jax():
    values = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, np.inf, -np.inf, np.nan, 1e30, 3.0],
                      np.float32)
    x, y = np.meshgrid(values, values)
    with np.errstate(over="ignore"):  # 1e30 is inf in float16
        half = values.astype(np.float16)
    cases = [(fnp.fmax, jnp.fmax, (x, y)), (fnp.fmin, jnp.fmin, (x, y)),
             (fnp.spacing, jnp.spacing, (values,)), (fnp.spacing, jnp.spacing, (half,))]
    for fn, jfn, args in cases:
        want = np.asarray(jax.jit(jfn)(*args))
        for got in (np.asarray(fg.jit(fn)(*args)), np.asarray(fn(*args))):
            same = ((got == want) & (np.signbit(got) == np.signbit(want))) \
                | (np.isnan(got) & np.isnan(want))
            assert same.all(), (fn.__name__, got[~same], want[~same])


def test_where_uses_a_weakly_typed_bool_condition_as_it_is():
    """A comparison of a Python scalar's tracer is a weak bool; as in jax, where takes it
    with no convert_element_type."""
    jaxpr = fg.make_jaxpr(lambda x: fnp.where(x == 0, 0.0, x))(1.0)
    assert [e.primitive.name for e in jaxpr.eqns] == ["eq", "select_n"]
    jax_jaxpr = jax.make_jaxpr(lambda x: jnp.where(x == 0, 0.0, x))(1.0)
    assert "convert_element_type" not in str(jax_jaxpr)
