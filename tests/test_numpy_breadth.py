"""funcgraph.numpy breadth (issue 6): elementwise math, statistics, manipulation, set
operations, norms. Each table runs eagerly case by case and under ONE fg.jit holding all
its cases, against jax.numpy under one jax.jit; transformations on a sample per group."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph.numpy._linalg_norm import norm as fg_norm

from tests.util import assert_close

jax.config.update("jax_enable_x64", False)

rng = np.random.RandomState(0)
F = rng.randn(3, 4).astype(np.float32)
F5 = rng.randn(5).astype(np.float32)
V7 = rng.randn(7).astype(np.float32)
I = rng.randint(-5, 6, size=(3, 4)).astype(np.int32)
POS = (rng.rand(3, 4) + 0.1).astype(np.float32)
NAN = F.copy()
NAN[0, 1] = np.nan
NAN[2, :] = np.nan
SPECIAL = np.array([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, 3.0], np.float32)
C = (rng.randn(3, 4) + 1j * rng.randn(3, 4)).astype(np.complex64)
B = rng.rand(3, 4) > 0.5
CUBE = rng.randn(2, 3, 4).astype(np.float32)


def _split(args):
    """NumPy arrays are traced inputs; Python numbers and the like stay static."""
    traced = [a for a in args if isinstance(a, np.ndarray)]
    return traced, lambda t: _merge(args, t)


class Static:
    """An array argument kept static (a compile-time constant) under jit."""

    def __init__(self, value):
        self.value = value


def _merge(args, traced):
    it = iter(traced)
    return [next(it) if isinstance(a, np.ndarray) else a.value if isinstance(a, Static) else a
            for a in args]


def run_table(cases, scale=10.0):
    """cases: (name, fg_fn, jnp_fn, args). Eager per case, then one jit for the table."""
    names = [c[0] for c in cases]
    args = [tuple(c[3]) for c in cases]
    traced = [_split(a)[0] for a in args]

    def all_cases(which, ts):
        return [c[which](*_merge(x, t)) for c, x, t in zip(cases, args, ts)]

    expected = jax.jit(lambda ts: all_cases(2, ts))(traced)
    jitted = fg.jit(lambda ts: all_cases(1, ts))(traced)
    for name, case, x, t, exp, jit_out in zip(names, cases, args, traced, expected, jitted):
        try:
            eager = case[1](*_merge(x, t))
        except Exception as err:
            raise AssertionError(f"{name} (eager): {err!r}") from err
        for label, got in (("eager", eager), ("jit", jit_out)):
            got_l = fg.tree_util.tree_leaves(got)
            exp_l = jax.tree_util.tree_leaves(exp)
            assert len(got_l) == len(exp_l), (name, label)
            for g, e in zip(got_l, exp_l):
                try:
                    assert_close(g, np.asarray(e), scale=scale)
                except AssertionError as err:
                    raise AssertionError(f"{name} ({label}): {err}") from None


def same(name, *args, **kw):
    """A case whose function has the same name in fnp and jnp."""
    f, j = getattr(fnp, name), getattr(jnp, name)
    return (f"{name}{kw or ''}", lambda *a: f(*a, **kw), lambda *a: j(*a, **kw), args)


ELEMENTWISE = [
    same("power", POS, F), same("power", I, 2), same("float_power", POS, F),
    same("hypot", F, POS), same("logaddexp", F, POS), same("logaddexp", SPECIAL, SPECIAL[::-1]),
    same("logaddexp2", F, POS), same("sinc", SPECIAL[:4]), same("sinc", F),
    same("deg2rad", F), same("rad2deg", I), same("degrees", F), same("radians", I),
    same("heaviside", SPECIAL, np.float32(0.5)), same("fmod", F, POS), same("fmod", I, 3),
    same("mod", F, POS), same("mod", I, 3), same("floor_divide", F, POS),
    same("floor_divide", I, 3), same("divmod", I, 4), same("divmod", F, POS),
    same("copysign", F, -POS), same("exp2", F), same("log2", POS), same("log10", POS),
    same("sign", F), same("sign", I), ("fix", fnp.fix, jnp.trunc, (F * 3,)), same("modf", F * 3),
    same("fmax", SPECIAL, SPECIAL[::-1]), same("fmin", SPECIAL, SPECIAL[::-1]),
    same("isfinite", SPECIAL), same("isnan", SPECIAL), same("isinf", SPECIAL),
    same("isposinf", SPECIAL), same("isneginf", SPECIAL), same("nan_to_num", SPECIAL),
    same("nan_to_num", SPECIAL, nan=1.0, posinf=9.0, neginf=-9.0), same("nan_to_num", I),
    same("round", F * 10, decimals=1), same("around", F * 10), same("clip", F, -0.5, 0.5),
    same("isclose", F, F + 1e-6), same("isclose", SPECIAL, SPECIAL),
    same("isclose", SPECIAL, SPECIAL, equal_nan=True), same("allclose", F, F + 1e-3),
    same("allclose", F, F + 1e-7), same("array_equal", F, F), same("array_equal", F, F5),
    same("array_equal", NAN, NAN, equal_nan=True), same("array_equiv", F, F[:1]),
    same("array_equiv", F, F5), same("count_nonzero", I), same("count_nonzero", I, axis=0),
    ("astype", lambda x: fnp.astype(x, np.int8), lambda x: jnp.astype(x, np.int8), (F * 10,)),
    ("select", lambda x: fnp.select([x < -0.5, x > 0.5], [x, x * 2], -1.0),
     lambda x: jnp.select([x < -0.5, x > 0.5], [x, x * 2], -1.0), (F,)),
    same("interp", np.linspace(-2, 3, 11, dtype=np.float32), np.sort(F5), V7[:5]),
    same("interp", F5, np.sort(F5), V7[:5], left=-1.0, right=2.0),
    same("logspace", 0.0, 2.0, 5), same("logspace", 0.0, 3.0, 4, base=2.0, endpoint=False),
    same("geomspace", 1.0, 1000.0, 4), same("geomspace", -1.0, -16.0, 5),
    same("vander", F5), same("vander", F5, 3, increasing=True),
]


def test_elementwise_table():
    run_table(ELEMENTWISE)


STATS = [
    same("all", B), same("any", B, axis=1), same("mean", F, axis=0),
    same("var", F, ddof=1), same("std", F, axis=1, ddof=1, keepdims=True),
    same("median", F), same("median", F, axis=1), same("median", CUBE, axis=(0, 2)),
    same("median", I, keepdims=True, axis=0),
    same("quantile", F, 0.3), same("quantile", F, np.array([0.1, 0.5, 0.9], np.float32), axis=1),
    same("quantile", CUBE, 0.25, axis=-1, keepdims=True),
    same("quantile", F, 0.3, method="lower"), same("quantile", F, 0.3, method="higher"),
    same("quantile", F, 0.3, method="nearest"), same("quantile", F, 0.3, method="midpoint"),
    same("quantile", NAN, 0.3, axis=1),
    same("percentile", F, 40.0), same("percentile", F, np.array([10.0, 75.0], np.float32), axis=0),
    same("nanmax", NAN, axis=1), same("nanmin", NAN), same("nansum", NAN, axis=0),
    same("nanprod", NAN, axis=1), same("nanmean", NAN, axis=0), same("nanmean", NAN),
    same("nanvar", NAN, axis=1), same("nanstd", NAN, axis=0, ddof=1),
    same("nanmedian", NAN, axis=1), same("nanquantile", NAN, 0.7, axis=1),
    same("nanpercentile", NAN, 30.0), same("nanargmax", NAN, axis=1),
    same("nanargmin", NAN[:2], axis=1), same("nancumsum", NAN, axis=1),
    same("average", F), same("average", F, 1, F5[:4] ** 2),
    same("average", F, None, POS, True), same("average", F, 0, POS[:, 0], True, True),
    same("cumsum", F, axis=1), same("cumsum", B), same("cumprod", F, axis=0),
    same("diff", F), same("diff", F, 2, 0), same("diff", F, 1, 1, np.float32(0.0), F[:, :2]),
    same("diff", B), same("ediff1d", F5, to_begin=np.float32(1.0)),
    ("histogram", lambda x: fnp.histogram(x, 5), lambda x: jnp.histogram(x, 5), (V7,)),
    ("histogram_range", lambda x: fnp.histogram(x, 4, (-1.0, 1.0)),
     lambda x: jnp.histogram(x, 4, (-1.0, 1.0)), (V7,)),
    ("histogram_edges", lambda x: fnp.histogram(x, np.array([-2.0, 0.0, 0.5, 3.0], np.float32),
                                                density=True),
     lambda x: jnp.histogram(x, np.array([-2.0, 0.0, 0.5, 3.0], np.float32), density=True),
     (V7,)),
    ("histogram_w", lambda x, w: fnp.histogram(x, 3, weights=w),
     lambda x, w: jnp.histogram(x, 3, weights=w), (V7, V7 ** 2)),
    ("bincount", lambda x: fnp.bincount(x, length=8), lambda x: jnp.bincount(x, length=8),
     (np.array([0, 1, 1, 3, 7, 9, -1], np.int32),)),
    ("bincount_w", lambda x, w: fnp.bincount(x, w, length=4),
     lambda x, w: jnp.bincount(x, w, length=4), (np.array([0, 1, 1, 3], np.int32), F5[:4])),
    same("digitize", V7, np.array([-1.0, 0.0, 1.0], np.float32)),
    same("digitize", V7, np.array([1.0, 0.0, -1.0], np.float32), True),
    same("convolve", F5, V7[:3]), same("convolve", F5, V7[:3], "same"),
    same("convolve", F5, V7[:3], "valid"), same("convolve", V7[:3], F5, "same"),
    same("convolve", V7[:4], F5, "same"), same("convolve", V7[:4], F5, "valid"),
    same("correlate", F5, V7[:3]), same("correlate", F5, V7[:3], "full"),
    same("correlate", V7[:3], F5, "full"), same("correlate", V7[:3], F5, "same"),
    same("correlate", V7[:4], F5, "same"), same("correlate", C[0], C[1, :3], "full"),
]


def test_stats_table():
    run_table(STATS)


MANIPULATION = [
    same("tile", F5, 2), same("tile", F, (2, 1, 3)), same("repeat", F, 2, axis=1),
    same("repeat", F, Static(np.array([1, 0, 2])), axis=0), same("flip", F), same("flip", CUBE, (0, 2)),
    same("roll", F, 2), same("roll", F, -1, 1), same("roll", CUBE, (1, -2), (0, 2)),
    same("roll", CUBE, 5, (1, 2)), same("rot90", F), same("rot90", CUBE, 3, (2, 0)),
    same("pad", F, 2), same("pad", F, ((1, 2), (0, 3)), constant_values=((1.0, 2.0), (3.0, 4.0))),
    same("pad", F, ((2, 1), (3, 2)), mode="edge"), same("pad", F, ((2, 1), (3, 5)), mode="reflect"),
    same("pad", F, ((2, 4), (3, 5)), mode="symmetric"), same("pad", F, ((2, 7), (3, 1)), mode="wrap"),
    same("pad", I, (1, 2), mode="reflect"), same("pad", CUBE, ((0, 0), (1, 1), (2, 0)), mode="wrap"),
    same("take", F, np.array([0, 2, -1]), axis=1), same("take", F, np.array([[0, 5], [11, 3]])),
    same("take", F, np.array([0, 7]), axis=1, mode="clip"),
    same("take", F, np.array([0, 7]), axis=1, mode="wrap"),
    same("take_along_axis", F, np.argsort(F, axis=1), 1),
    same("triu", F), same("triu", F, 1), same("tril", F, -1), same("tril", CUBE, 2),
    same("diag", F5), same("diag", F5, -2), same("diag", F, 1), same("diagonal", CUBE, 1, 1, 2),
    same("trace", F), same("trace", F, -1), same("trace", CUBE, 0, 0, 2),
    ("meshgrid", lambda x, y: fnp.meshgrid(x, y), lambda x, y: jnp.meshgrid(x, y), (F5, V7)),
    ("meshgrid_ij", lambda x, y, z: fnp.meshgrid(x, y, z, indexing="ij"),
     lambda x, y, z: jnp.meshgrid(x, y, z, indexing="ij"), (F5, V7, V7[:2])),
    same("kron", F[:2, :3], I[:2, :2]), same("kron", F5, F5[:2]),
    same("cross", CUBE[:, :, :3], CUBE[:, :, 1:]), same("cross", F5[:3], F5[2:]),
    same("cross", F5[:2], F5[3:]), same("cross", F5[:2], F5[:3]),
    same("cross", CUBE[:, :, :3], F5[:3], axisc=0), same("cross", F[:, :3], F[:, 1:], axis=0),
    same("inner", F, F), same("outer", F5, V7), same("append", F, F5[:4]),
    same("append", F, F[:1], axis=0), same("delete", F, 1, axis=1),
    same("delete", F, Static(np.array([0, 2]))), same("insert", F5, 2, np.float32(9.0)),
    same("insert", F, 1, F5[:3], axis=1), same("insert", F5, Static(np.array([0, 5])), V7[:2]),
]


def test_manipulation_table():
    run_table(MANIPULATION)


SETOPS = [
    ("unique_size", lambda x: fnp.unique(x, size=8), lambda x: jnp.unique(x, size=8),
     (np.array([3, 1, 3, 2, 1, 7], np.int32),)),
    ("unique_all", lambda x: fnp.unique(x, True, True, True, size=5, fill_value=-1),
     lambda x: jnp.unique(x, True, True, True, size=5, fill_value=-1),
     (np.array([[3, 1, 3], [2, 1, 7]], np.int32),)),
    ("unique_trunc", lambda x: fnp.unique(x, return_counts=True, size=2),
     lambda x: jnp.unique(x, return_counts=True, size=2),
     (np.array([3, 1, 3, 2, 1, 7], np.int32),)),
    ("unique_nan", lambda x: fnp.unique(x, size=6), lambda x: jnp.unique(x, size=6),
     (np.array([np.nan, 1.0, np.nan, 0.5, 1.0], np.float32),)),
    ("nonzero", lambda x: fnp.nonzero(x, size=5, fill_value=-1),
     lambda x: jnp.nonzero(x, size=5, fill_value=-1), (B,)),
    ("argwhere", lambda x: fnp.argwhere(x, size=9), lambda x: jnp.argwhere(x, size=9), (B,)),
    ("flatnonzero", lambda x: fnp.flatnonzero(x, size=3), lambda x: jnp.flatnonzero(x, size=3),
     (I,)),
    same("searchsorted", np.sort(V7), F), same("searchsorted", np.sort(V7), F5, "right"),
    same("searchsorted", np.array([1, 2, 2, 2, 5], np.int32), np.arange(7, dtype=np.int32)),
    same("searchsorted", np.array([1, 2, 2, 2, 5], np.int32), np.arange(7, dtype=np.int32),
         side="right"),
    same("searchsorted", np.array([], np.float32), F5),
    same("searchsorted", np.array([0.0, 1.0, np.nan], np.float32), SPECIAL),
    ("searchsorted_sorter", lambda a, v: fnp.searchsorted(a, v, sorter=fnp.argsort(a)),
     lambda a, v: jnp.searchsorted(a, v, sorter=jnp.argsort(a)), (V7, F5)),
    same("isin", I, np.array([1, 2, -3], np.int32)),
    same("isin", I, np.array([1, 2, -3], np.int32), invert=True),
    ("union1d", lambda a, b: fnp.union1d(a, b, size=9), lambda a, b: jnp.union1d(a, b, size=9),
     (np.array([3, 1, 3], np.int32), np.array([2, 1, 7], np.int32))),
    ("intersect1d", lambda a, b: fnp.intersect1d(a, b, size=3, fill_value=0),
     lambda a, b: jnp.intersect1d(a, b, size=3, fill_value=0),
     (np.array([3, 1, 3, 5, 2], np.int32), np.array([2, 1, 7], np.int32))),
    ("setdiff1d", lambda a, b: fnp.setdiff1d(a, b, size=3, fill_value=0),
     lambda a, b: jnp.setdiff1d(a, b, size=3, fill_value=0),
     (np.array([3, 1, 3, 5, 2], np.int32), np.array([2, 1, 7], np.int32))),
]


def test_setops_table():
    run_table(SETOPS)


def test_unique_eager_without_size():
    x = np.array([[3, 1, 3], [2, 1, 7]], np.int32)
    got = fnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    exp = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for g, e in zip(got, exp):
        assert_close(g, np.asarray(e))
    assert_close(fnp.nonzero(B)[1], np.asarray(jnp.nonzero(B)[1]))


NORMS = [
    ("norm", lambda x: fg_norm(x), lambda x: jnp.linalg.norm(x), (F,)),
    *[(f"norm_vec_{o}", lambda x, o=o: fg_norm(x, o), lambda x, o=o: jnp.linalg.norm(x, o),
       (F5,)) for o in (None, 1, 2, np.inf, -np.inf, 0, 3, 0.5, -1)],
    *[(f"norm_mat_{o}", lambda x, o=o: fg_norm(x, o), lambda x, o=o: jnp.linalg.norm(x, o),
       (F,)) for o in ("fro", 1, -1, np.inf, -np.inf)],
    ("norm_axis", lambda x: fg_norm(x, axis=1, keepdims=True),
     lambda x: jnp.linalg.norm(x, axis=1, keepdims=True), (CUBE,)),
    ("norm_axes", lambda x: fg_norm(x, 1, axis=(2, 0)),
     lambda x: jnp.linalg.norm(x, 1, axis=(2, 0)), (CUBE,)),
    ("norm_axes_inf", lambda x: fg_norm(x, np.inf, axis=(0, 2), keepdims=True),
     lambda x: jnp.linalg.norm(x, np.inf, axis=(0, 2), keepdims=True), (CUBE,)),
    ("norm_complex", lambda x: fg_norm(x), lambda x: jnp.linalg.norm(x), (C,)),
    ("norm_int", lambda x: fg_norm(x, 1, axis=0), lambda x: jnp.linalg.norm(x, 1, axis=0), (I,)),
]


def test_norm_table():
    run_table(NORMS)


H = (rng.randn(3, 4) * 3).astype(np.float16)
BF = (rng.randn(3, 4) * 3).astype(jnp.bfloat16)
U8 = rng.randint(0, 6, size=(10,)).astype(np.uint8)
I8 = rng.randint(-9, 9, size=(3, 4)).astype(np.int8)
EMPTY = np.zeros((0, 3), np.float32)

DTYPES = [
    same("logaddexp", H, H.T[:3, :3].mean() + H), same("logaddexp", BF, BF),
    same("sinc", BF), same("heaviside", I8, I8), same("median", H, axis=1),
    same("quantile", BF, 0.25), same("nanmax", H), same("nan_to_num", H),
    same("diff", U8), same("diff", I8, axis=0), same("cumsum", I8, axis=1),
    same("pad", I8, 1, mode="symmetric"), same("pad", B, 2), same("pad", B, 1, mode="edge"),
    same("tile", I8, (1, 2)), same("roll", U8, 3), same("kron", I8[:2, :2], I8[:2, :2]),
    ("unique_u8", lambda x: fnp.unique(x, size=7, return_counts=True),
     lambda x: jnp.unique(x, size=7, return_counts=True), (U8,)),
    same("searchsorted", np.sort(U8), U8), same("searchsorted", np.sort(I8.ravel()), I8, "right"),
    ("histogram_int", lambda x: fnp.histogram(x, 4, (0, 6)), lambda x: jnp.histogram(x, 4, (0, 6)),
     (U8.astype(np.int32),)),
    ("bincount_u8", lambda x: fnp.bincount(x, length=7), lambda x: jnp.bincount(x, length=7),
     (U8,)),
    same("count_nonzero", I8, axis=1, keepdims=True), same("isclose", I8, I8.T[:3, :3].sum()),
    same("average", I8, 0), same("cross", I8[:, :3], I8[:, 1:]),
    # zero-size operands
    same("diff", EMPTY), same("diff", EMPTY, axis=0), same("pad", EMPTY, 1),
    same("tile", EMPTY, 2), same("roll", EMPTY, 1, 1), same("nansum", EMPTY, axis=0),
    same("cumsum", EMPTY, axis=0), same("searchsorted", F5[:3], EMPTY),
    same("take", F, np.zeros((0,), np.int32), axis=1),
]


def test_dtypes_and_empty_table():
    run_table(DTYPES)


# --- transformations: a sample per group ---------------------------------------------------

def _grad_check(fg_f, jax_f, *args, argnums=0):
    got = fg.grad(fg_f, argnums=argnums)(*args)
    exp = jax.grad(jax_f, argnums=argnums)(*args)
    assert_close(got, np.asarray(exp), scale=10)
    t = tuple(np.ones_like(a) * 0.3 for a in args)
    got_jvp = fg.jvp(fg_f, args, t)
    exp_jvp = jax.jvp(jax_f, args, t)
    for g, e in zip(got_jvp, exp_jvp):
        assert_close(g, np.asarray(e), scale=10)


GRAD_CASES = [
    ("logaddexp", lambda m: lambda x: m.sum(m.logaddexp(x, x[::-1] * 2)), (F5,)),
    ("sinc", lambda m: lambda x: m.sum(m.sinc(x)), (F5,)),
    ("hypot", lambda m: lambda x: m.sum(m.hypot(x, 2.0)), (F5,)),
    ("median", lambda m: lambda x: m.sum(m.median(x, axis=1)), (F,)),
    ("quantile", lambda m: lambda x: m.sum(m.quantile(x, np.array([0.2, 0.7]), axis=0)), (F,)),
    ("nanmean", lambda m: lambda x: m.nanmean(x * m.array([1.0, np.nan, 2.0, 3.0, 1.0])), (F5,)),
    ("nanvar", lambda m: lambda x: m.nanvar(x, ddof=1), (F5,)),
    ("average", lambda m: lambda x: m.average(x, 1, m.arange(4.0) + 1).sum(), (F,)),
    ("std", lambda m: lambda x: m.std(x, ddof=1), (F,)),
    ("pad_reflect", lambda m: lambda x: m.sum(m.pad(x, ((1, 2), (2, 3)), mode="reflect") ** 2),
     (F,)),
    ("pad_wrap", lambda m: lambda x: m.sum(m.pad(x, 3, mode="wrap") * m.arange(10.0)), (F[0],)),
    ("pad_const", lambda m: lambda x: m.sum(m.pad(x, 1, constant_values=2.0) ** 2), (F,)),
    ("roll_tile", lambda m: lambda x: m.sum(m.roll(m.tile(x, (2, 1)), 3, 0) * m.arange(24.0)
                                            .reshape(6, 4)), (F,)),
    ("diff_cumsum", lambda m: lambda x: m.sum(m.diff(m.cumsum(x) ** 2, prepend=1.0)), (F5,)),
    ("kron_cross", lambda m: lambda x: m.sum(m.kron(x[:2], x[1:]) ** 2) + m.sum(m.cross(x[:3], x[2:]) ** 2),
     (F5,)),
    ("convolve", lambda m: lambda x: m.sum(m.convolve(x, x[:3] ** 2, "same") ** 2), (F5,)),
    ("interp", lambda m: lambda x: m.sum(m.interp(x, np.array([-1.0, 0.0, 2.0]),
                                                    np.array([1.0, 3.0, 2.0]))), (F5,)),
    ("unique_size", lambda m: lambda x: m.sum(m.unique(m.round(x), size=4) * m.arange(4.0)),
     (F5 * 2,)),
]


@pytest.mark.parametrize("name,make,args", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_grad_jvp(name, make, args):
    _grad_check(make(fnp), make(jnp), *args)


def test_norm_grad_jvp():
    for o in (None, 1, np.inf, 3):
        _grad_check(lambda x, o=o: fg_norm(x, o), lambda x, o=o: jnp.linalg.norm(x, o), F5)
    _grad_check(lambda x: fg_norm(x, "fro"), lambda x: jnp.linalg.norm(x, "fro"), F)


VMAP_CASES = [
    ("median", lambda m: lambda x: m.median(x), (F,)),
    ("nanmax", lambda m: lambda x: m.nanmax(x), (NAN,)),
    ("pad_edge", lambda m: lambda x: m.pad(x, (2, 1), mode="edge"), (F,)),
    ("roll", lambda m: lambda x: m.roll(x, 2), (F,)),
    ("diff", lambda m: lambda x: m.diff(x, 2), (F,)),
    ("unique", lambda m: lambda x: m.unique(x, size=4, return_counts=True), (I,)),
    ("nonzero", lambda m: lambda x: m.nonzero(x, size=3)[0], (B,)),
    ("searchsorted", lambda m: lambda v: m.searchsorted(np.sort(F5), v), (F,)),
    ("histogram", lambda m: lambda x: m.histogram(x, 3, (-1.0, 1.0))[0], (F,)),
    ("norm", lambda m: lambda x: (fg_norm if m is fnp else jnp.linalg.norm)(x, 1), (F,)),
    ("convolve", lambda m: lambda x: m.convolve(x, np.array([1.0, 2.0, 0.5])), (F,)),
    ("nanmean", lambda m: lambda x: m.nanmean(x), (NAN,)),
    ("pad_reflect_both", lambda m: lambda x, y: m.pad(x * y, (3, 2), mode="reflect"), (F, F)),
    ("quantile_q", lambda m: lambda q: m.quantile(F5, q), (np.array([0.1, 0.9], np.float32),)),
    ("logaddexp", lambda m: lambda x: m.logaddexp(x, 1.0), (F,)),
    ("average_w", lambda m: lambda w: m.average(F, 1, w, True), (POS,)),
    ("isin", lambda m: lambda x: m.isin(x, np.array([1, 2])), (I,)),
]


@pytest.mark.parametrize("name,make,args", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap(name, make, args):
    got = fg.vmap(make(fnp))(*args)
    exp = jax.vmap(make(jnp))(*args)
    for g, e in zip(fg.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(exp)):
        assert_close(g, np.asarray(e), scale=10)


def test_traced_shift_roll_under_jit():
    got = fg.jit(lambda x, s: fnp.roll(x, s, axis=1))(F, np.int32(3))
    assert_close(got, np.roll(F, 3, axis=1))


# --- errors --------------------------------------------------------------------------------------

ERRORS = [
    (ValueError, "axis 2 is out of bounds", lambda: fnp.diff(F, axis=2)),
    (ValueError, "order n must be non-negative", lambda: fnp.diff(F, -1)),
    (ValueError, "at least one dimensional", lambda: fnp.diff(np.float32(1))),
    (ValueError, "pad_width can't contain negative", lambda: fnp.pad(F, -1)),
    (ValueError, "pad_width .* cannot be broadcast", lambda: fnp.pad(F, ((1, 2, 3),))),
    (TypeError, "pad_width must be integers", lambda: fnp.pad(F, 1.5)),
    (NotImplementedError, "mode 'median'", lambda: fnp.pad(F, 1, mode="median")),
    (ValueError, "can't extend empty axis", lambda: fnp.pad(np.zeros((0, 2)), 1, mode="wrap")),
    (ValueError, "side must be 'left' or 'right'", lambda: fnp.searchsorted(F5, 1.0, "up")),
    (ValueError, "a must be one-dimensional", lambda: fnp.searchsorted(F, 1.0)),
    (ValueError, "q must be in the range", lambda: fnp.quantile(F, 1.5)),
    (ValueError, "method must be one of", lambda: fnp.quantile(F, 0.5, method="cubic")),
    (TypeError, "axis must be specified", lambda: fnp.average(F, weights=F5[:4])),
    (ValueError, "length of weights", lambda: fnp.average(F, 0, weights=F5[:4])),
    (TypeError, "bincount: x must have an integer type", lambda: fnp.bincount(F5)),
    (ValueError, "minlength must be non-negative", lambda: fnp.bincount(I[0], minlength=-1)),
    (ValueError, "inputs cannot be empty", lambda: fnp.convolve(F5, np.zeros(0))),
    (ValueError, "mode must be 'full', 'same' or 'valid'", lambda: fnp.convolve(F5, F5, "x")),
    (ValueError, "incompatible dimensions for cross", lambda: fnp.cross(F, F)),
    (ValueError, "shift and axis must have the same length",
     lambda: fnp.roll(CUBE, (1, 2), (0, 1, 2))),
    (ValueError, "condlist and choicelist must have the same length",
     lambda: fnp.select([B], [F, F])),
    (TypeError, r"condlist\[0\] must be a boolean", lambda: fnp.select([I], [F])),
    (ValueError, "invalid norm order 'fro' for vectors", lambda: fg_norm(F5, "fro")),
    (ValueError, "improper number of dimensions", lambda: fg_norm(CUBE, 2, axis=(0, 1, 2))),
    (NotImplementedError, "singular value", lambda: fg_norm(F, "nuc")),
    (ValueError, "axis 3 is out of bounds", lambda: fg_norm(F, axis=3)),
    (ValueError, "tile: reps must be non-negative", lambda: fnp.tile(F, -1)),
    (ValueError, "interp: xp and fp must have the same length",
     lambda: fnp.interp(F5, F5, F5[:3])),
    (ValueError, "bins must be a positive integer", lambda: fnp.histogram(F5, 0)),
    (ValueError, "max must be larger than min", lambda: fnp.histogram(F5, 3, (2.0, 1.0))),
    (IndexError, "delete: index out of bounds", lambda: fnp.delete(F5, 7)),
]


@pytest.mark.parametrize("exc,match,fn", ERRORS, ids=[e[1][:30] for e in ERRORS])
def test_errors(exc, match, fn):
    with pytest.raises(exc, match=match):
        fn()


def test_data_dependent_sizes_need_size_under_jit():
    for fn in (lambda x: fnp.unique(x), lambda x: fnp.nonzero(x),
               lambda x: fnp.bincount(x), lambda x: fnp.argwhere(x)):
        with pytest.raises(fg.core.ConcretizationTypeError, match="size=|length="):
            fg.jit(fn)(I[0])


def test_boolean_mask_under_jit_is_a_clear_error():
    with pytest.raises(Exception, match="(?i)boolean|size"):
        fg.jit(lambda x: x[x > 0])(F)


INDEXING = [
    ("neg", lambda x: x[-1, -2:]), ("ellipsis", lambda x: x[..., 1]),
    ("none", lambda x: x[None, :, None, 1]), ("steps", lambda x: x[::-2, 1::2]),
    ("int_arrays", lambda x: x[np.array([0, 2, -1]), np.array([1, 1, 3])]),
    ("mixed", lambda x: x[1:, np.array([[0], [3]])]),
    ("bool_concrete", lambda x: x[np.array([True, False, True])]),
]


def test_indexing_gaps():
    # the same functions on both sides: x is an fg array or a jax array
    for name, f in INDEXING:
        exp = np.asarray(jax.jit(f)(F))
        assert_close(f(fnp.asarray(F)), exp)
        if name != "bool_concrete":
            assert_close(fg.jit(f)(F), exp)
