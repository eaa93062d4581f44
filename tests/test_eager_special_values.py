"""Eager NumPy results are XLA's on special values too: signed zeros, infinities and
NaNs through every op that runs on NumPy eagerly, compared bit for bit (the sign of a
zero included) with the same op run compiled.  Known differences, documented in
docs/sharp_edges.md, are left out: max and min of zeros of opposite signs, which NaN
comes out, and subnormal numbers (not among these values)."""
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax
from funcgraph.config import _FlagContext

VALUES = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 0.75, 3.0, -1.0]

OPS = {
    "add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div, "rem": lax.rem,
    "max": lax.max, "min": lax.min, "nextafter": lax.nextafter, "atan2": lax.atan2,
    "eq": lax.eq, "ne": lax.ne, "lt": lax.lt, "le": lax.le, "gt": lax.gt, "ge": lax.ge,
    "abs": lambda a, b: lax.abs(a), "neg": lambda a, b: lax.neg(a),
    "sqrt": lambda a, b: lax.sqrt(a), "floor": lambda a, b: lax.floor(a),
    "ceil": lambda a, b: lax.ceil(a), "round_away": lambda a, b: lax.round(a, 0),
    "round_even": lambda a, b: lax.round(a, 1), "sign": lambda a, b: lax.sign(a),
    "is_finite": lambda a, b: lax.is_finite(a), "square": lambda a, b: lax.integer_pow(a, 2),
    "cube": lambda a, b: lax.integer_pow(a, 3), "inverse": lambda a, b: lax.integer_pow(a, -1),
    "to_int32": lambda a, b: lax.convert_element_type(a, np.int32),
    "to_bool": lambda a, b: lax.convert_element_type(a, np.bool_),
    "to_float16": lambda a, b: lax.convert_element_type(a, np.float16),
    "cumsum": lambda a, b: lax.cumsum(a, 1), "cumsum_reverse": lambda a, b: lax.cumsum(a, 1, True),
    "cumprod": lambda a, b: lax.cumprod(a, 1), "cummax": lambda a, b: lax.cummax(a, 1),
    "cummin": lambda a, b: lax.cummin(a, 1), "cumlogsumexp": lambda a, b: lax.cumlogsumexp(a, 1),
    "sum": lambda a, b: fnp.sum(a, 1), "prod": lambda a, b: fnp.prod(a, 1),
    "reduce_max": lambda a, b: fnp.max(a, 1), "reduce_min": lambda a, b: fnp.min(a, 1),
    "argmax": lambda a, b: fnp.argmax(a, 1), "argmin": lambda a, b: fnp.argmin(a, 1),
    "sort": lambda a, b: fnp.sort(a, 1), "select": lambda a, b: lax.select(a > b, a, b),
    "sin": lambda a, b: lax.sin(a), "cbrt": lambda a, b: lax.cbrt(a),
    "copysign": lambda a, b: fnp.copysign(a, b), "reciprocal": lambda a, b: fnp.reciprocal(a),
}
# Ops whose result for zeros of opposite signs is the NumPy's argument order's, not
# XLA's (IEEE maximum/minimum): those pairs are left out.
ZERO_ORDER = {"max", "min"}


def _grid(dtype):
    values = np.array(VALUES, np.float64).astype(dtype)
    ones = np.ones((len(values), len(values)), dtype)
    return values[:, None] * ones, values[None, :] * ones


def _same(eager, compiled, skip):
    eager, compiled = np.asarray(eager), np.asarray(compiled)
    assert eager.dtype == compiled.dtype and eager.shape == compiled.shape
    if eager.dtype.kind not in "fV":
        return np.argwhere((eager != compiled) & ~skip)
    e, c = eager.astype(np.float64), compiled.astype(np.float64)
    both_nan = np.isnan(e) & np.isnan(c)
    differ = ~both_nan & ((e != c) | (np.signbit(e) != np.signbit(c)))
    return np.argwhere(differ & ~skip)


@pytest.mark.parametrize("dtype", [np.float16, fnp.bfloat16, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_eager_numpy_equals_compiled_on_special_values(dtype):
    with fg.enable_x64(np.dtype(dtype) == np.float64):
        x, y = _grid(dtype)
        opposite_zeros = (x == 0) & (y == 0) & (np.signbit(x) != np.signbit(y))
        failures = []
        for name, op in OPS.items():
            eager = op(fg.device_put(x), fg.device_put(y))
            with _FlagContext("funcgraph_eager_numpy", False):
                compiled = op(fg.device_put(x), fg.device_put(y))
            skip = opposite_zeros if name in ZERO_ORDER else np.zeros(x.shape, bool)
            skip = skip if np.shape(eager) == x.shape else np.zeros(np.shape(eager), bool)
            for index in _same(eager, compiled, skip)[:3]:
                index = tuple(index)
                failures.append(f"{name}{index}: eager {np.asarray(eager)[index]!r}, "
                                f"compiled {np.asarray(compiled)[index]!r}")
        assert not failures, "\n".join(failures)


def _eager_and_compiled(op, *args):
    eager = op(*[fg.device_put(a) for a in args])
    with _FlagContext("funcgraph_eager_numpy", False):
        compiled = op(*[fg.device_put(a) for a in args])
    return np.asarray(eager), np.asarray(compiled)


def _assert_same_bits(eager, compiled):
    e, c = (v.view(v.real.dtype) if v.dtype.kind == "c" else v for v in (eager, compiled))
    same = (e.view(f"u{e.itemsize}") == c.view(f"u{c.itemsize}")) | (np.isnan(e) & np.isnan(c))
    assert same.all(), f"{int((~same).sum())} of {same.size} differ"


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_float_scans_in_xlas_order(name):
    """XLA scans float sums and products in NumPy's order only forward over at most 16
    elements (longer ones are regrouped, reversed ones reduce each window from its
    start): the others run compiled eagerly."""
    rng = np.random.default_rng(0)
    for n in (1, 5, 16, 17, 18, 40):
        x = (rng.standard_normal((8, n)) * 10.0 ** rng.integers(-3, 4, (8, n))).astype(np.float32)
        for reverse in (False, True):
            _assert_same_bits(*_eager_and_compiled(
                lambda v: getattr(lax, name)(v, 1, reverse), x))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64],
                         ids=lambda d: np.dtype(d).name)
def test_integer_pow_multiplies_as_xla(dtype):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(300) * 3).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * x[::-1]
    with fg.enable_x64(np.dtype(dtype) == np.float64):
        for n in (0, 1, 2, 3, 5, 7, 12, -1, -2, -3):
            _assert_same_bits(*_eager_and_compiled(lambda v: lax.integer_pow(v, n), x))


def test_complex_abs_and_sign_on_special_values():
    values = np.array(VALUES + [3e38], np.float32)
    z = np.empty((values.size, values.size), np.complex64)
    z.real, z.imag = values[:, None], values[None, :]  # each pair (x + 1j * y: inf * 0)
    z = z.ravel()
    for op in (lax.abs, lax.sign):
        _assert_same_bits(*_eager_and_compiled(op, z))
