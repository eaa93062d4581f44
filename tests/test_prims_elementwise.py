"""Every primitive of funcgraph/primitives/elementwise.py, called through funcgraph.lax and
compared with jax.lax (the oracle) on funcgraph's three paths: eager NumPy, eager compiled
and fg.jit (tests/util.check_against_jax).

Each (op, dtype) case runs one vector: random values in the op's domain plus edge values
(NaN, +-inf, -0, values outside the domain such as log of a negative, integer extremes,
division by zero, shifts past the bit width; binary ops take every pair of edge values).
Each op also runs the shapes (), (3,), (2, 3), (0, 4) and, for binary ops, a rank-0
operand meeting a shaped one, in one representative dtype.  XLA compiles dominate the
time, so cases are packed into few calls; the default run takes one dtype of each kind
(FAST), and the other dtypes, the 64-bit ones and the slowest-compiling cases are @slow.
"""
import dataclasses
import warnings

import jax
import numpy as np
import pytest
from jax._src.lax import lax as jax_lax_internal

import funcgraph as fg
from funcgraph import dtypes, lax
from funcgraph.primitives import elementwise as ew
from tests.util import assert_close, check_against_jax, eager_and_jit

BOOL, I8, I32, U8, U32 = (np.dtype(t) for t in (np.bool_, np.int8, np.int32, np.uint8, np.uint32))
F16, F32, C64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.complex64)
BF16 = dtypes.bfloat16
F64, I64, U64, C128 = (np.dtype(t) for t in (np.float64, np.int64, np.uint64, np.complex128))

SIGNED, UNSIGNED = [I8, I32], [U8, U32]
INTS = SIGNED + UNSIGNED
FLOATS = [F16, BF16, F32]
COMPLEX = [C64]
INEXACT = FLOATS + COMPLEX
NUMBER = INTS + INEXACT
INTEGRAL = [BOOL] + INTS
ORDERED = [BOOL] + INTS + FLOATS
ANY = [BOOL] + NUMBER
ALL_32 = ANY

# One dtype of each kind runs by default; the rest are @slow.
FAST = {BOOL, I8, U32, F32, C64}
SHAPES = [(), (3,), (2, 3), (0, 4)]

# Domains of random inputs (edge values add the points outside them).
REAL, WIDE, UNIT, POS, GE1 = (-3, 3), (-20, 20), (-0.95, 0.95), (0.05, 5), (1.05, 5)


# --- inputs -------------------------------------------------------------------------------

def is_float(dtype):
    return dtypes.is_float(np.dtype(dtype))


def random_values(dtype, shape, domain=REAL, seed=0):
    """Deterministic random values of dtype: floats and complex parts uniform in domain,
    integers over the whole range of the dtype, booleans half true."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtypes.is_int(dtype):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, endpoint=True, dtype=dtype)
    lo, hi = domain
    if dtypes.is_complex(dtype):
        return (rng.uniform(lo, hi, shape) + 1j * rng.uniform(lo, hi, shape)).astype(dtype)
    return rng.uniform(lo, hi, shape).astype(dtype)


def small_ints(dtype, shape, seed=0):
    """Integers in [-9, 9] (clipped to the dtype): exercise cases that full-range values
    rarely hit, like equal operands and small divisors."""
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    return np.clip(rng.integers(-9, 10, shape), info.min, info.max).astype(dtype)


FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -7.0, 0.3, 1e-3, -1e3,
               np.inf, -np.inf, np.nan]
# Complex edges stay finite and off the branch cuts: XLA's complex functions follow their
# own formulas at infinities and on the cuts, which NumPy's C99 Annex G answers don't match.
COMPLEX_EDGES = [0, 1 + 1j, -0.5 + 2j, 0.3 - 0.2j, 3j, -2, 0.5 - 1.5j]


def edge_values(dtype, huge=True, nan=True):
    """A vector of the special values of dtype."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return np.array([False, True])
    if dtypes.is_int(dtype):
        info = np.iinfo(dtype)
        values = [0, 1, 2, 7, 8, 31, info.max, info.max - 1, info.min, info.min + 1]
        if info.min < 0:
            values += [-1, -2, -7]
        return wrap(values, dtype)
    if dtypes.is_complex(dtype):
        return np.array(COMPLEX_EDGES, dtype)
    values = [v for v in FLOAT_EDGES if nan or not np.isnan(v)]
    if huge:
        big = float(dtypes.finfo(dtype).max)
        values += [big, -big, float(dtypes.finfo(dtype).tiny)]
    return np.array(values, np.float64).astype(dtype)


def wrap(values, dtype):
    """Python ints as dtype, wrapping modulo 2**bits (so -1 is all ones when unsigned)."""
    dtype = np.dtype(dtype)
    unsigned = np.dtype(f"u{dtype.itemsize}")
    return np.array([v % 2 ** (8 * dtype.itemsize) for v in values], object).astype(
        unsigned).view(dtype)


def param(name, dtype, *rest, fast=None):
    """A pytest param, marked slow unless dtype is one of the FAST ones."""
    fast = np.dtype(dtype) in FAST if fast is None else fast
    return pytest.param(name, np.dtype(dtype), *rest, id=f"{name}-{np.dtype(dtype).name}",
                        marks=() if fast else pytest.mark.slow)


def on_cpu():
    return fg.default_backend() == "cpu"


# --- unary ops ------------------------------------------------------------------------------

@dataclasses.dataclass
class Unary:
    name: str
    fg: object
    jax: object
    dtypes: list
    domain: tuple = REAL
    huge: bool = True      # include +-max(dtype) among the edge values
    slow: tuple = ()       # dtypes whose lowering takes XLA seconds to compile: @slow


def _round(method):
    return (lambda x: lax.round(x, method)), (lambda x: jax.lax.round(x, method))


UNARY = [
    Unary("neg", lax.neg, jax.lax.neg, NUMBER),
    Unary("sign", lax.sign, jax.lax.sign, NUMBER),
    Unary("floor", lax.floor, jax.lax.floor, FLOATS),
    Unary("ceil", lax.ceil, jax.lax.ceil, FLOATS),
    Unary("round_afz", *_round(0), FLOATS, WIDE),
    Unary("round_even", *_round(1), FLOATS, WIDE),
    Unary("is_finite", lax.is_finite, jax.lax.is_finite, FLOATS),
    Unary("exp", lax.exp, jax.lax.exp, INEXACT),
    Unary("exp2", lax.exp2, jax.lax.exp2, INEXACT),
    Unary("log", lax.log, jax.lax.log, INEXACT, POS),
    Unary("log1p", lax.log1p, jax.lax.log1p, INEXACT, (-0.9, 5)),
    Unary("expm1", lax.expm1, jax.lax.expm1, INEXACT),
    Unary("tanh", lax.tanh, jax.lax.tanh, INEXACT),
    Unary("logistic", lax.logistic, jax.lax.logistic, INEXACT),
    # Argument reduction of huge inputs to sin/cos/tan differs between libm and XLA.
    Unary("sin", lax.sin, jax.lax.sin, INEXACT, huge=False),
    Unary("cos", lax.cos, jax.lax.cos, INEXACT, huge=False),
    Unary("tan", lax.tan, jax.lax.tan, INEXACT, (-1.4, 1.4), huge=False),
    Unary("asin", lax.asin, jax.lax.asin, INEXACT, UNIT, slow=(C64,)),
    Unary("acos", lax.acos, jax.lax.acos, INEXACT, UNIT, slow=(C64,)),
    Unary("atan", lax.atan, jax.lax.atan, INEXACT),
    Unary("sinh", lax.sinh, jax.lax.sinh, INEXACT),
    Unary("cosh", lax.cosh, jax.lax.cosh, INEXACT),
    Unary("asinh", lax.asinh, jax.lax.asinh, INEXACT, slow=(C64,)),
    Unary("acosh", lax.acosh, jax.lax.acosh, INEXACT, GE1, slow=(C64,)),
    Unary("atanh", lax.atanh, jax.lax.atanh, INEXACT, UNIT),
    Unary("sqrt", lax.sqrt, jax.lax.sqrt, INEXACT, POS),
    Unary("rsqrt", lax.rsqrt, jax.lax.rsqrt, INEXACT, POS),
    Unary("cbrt", lax.cbrt, jax.lax.cbrt, FLOATS),
    Unary("abs", lax.abs, jax.lax.abs, SIGNED + INEXACT),
    Unary("erf", lax.erf, jax.lax.erf, FLOATS),
    Unary("erf_inv", lax.erf_inv, jax.lax.erf_inv, FLOATS, UNIT),
    Unary("erfc", lax.erfc, jax.lax.erfc, FLOATS),
    Unary("lgamma", lax.lgamma, jax.lax.lgamma, FLOATS, POS),
    Unary("digamma", lax.digamma, jax.lax.digamma, FLOATS, POS),
    Unary("real", lax.real, jax.lax.real, COMPLEX),
    Unary("imag", lax.imag, jax.lax.imag, COMPLEX),
    Unary("conj", lax.conj, jax.lax.conj, [F32, C64]),
    Unary("not", lax.bitwise_not, jax.lax.bitwise_not, INTEGRAL),
    Unary("population_count", lax.population_count, jax.lax.population_count, INTS),
    Unary("copy", lax.copy_p_bind, jax.lax.copy_p.bind, ANY),
]
UNARY_BY_NAME = {op.name: op for op in UNARY}


def unary_input(op, dtype, seed=0):
    """Edge values followed by random values in the op's domain, as one vector."""
    return np.concatenate([edge_values(dtype, huge=op.huge),
                           random_values(dtype, (24,), op.domain, seed)])


def check_unary(op, dtype):
    check_against_jax(op.fg, op.jax, unary_input(op, dtype))


def check_each(fn, jax_fn, args, **options):
    """fn on each argument, all in one check (one compile per path)."""
    check_against_jax(lambda *xs: [fn(x) for x in xs], lambda *xs: [jax_fn(x) for x in xs],
                      *args, **options)


def representative(dtypes_):
    """The dtype an op's shape sweep uses."""
    for dtype in (F32, C64, I32, U32, BOOL):
        if dtype in dtypes_:
            return dtype


@pytest.mark.parametrize("name,dtype", [param(op.name, d, fast=d in FAST and d not in op.slow)
                                        for op in UNARY for d in op.dtypes])
def test_unary(name, dtype):
    check_unary(UNARY_BY_NAME[name], dtype)


# Shape sweeps of the ops whose rules are their own (impl or lowering beyond the `unary`
# helper's) run by default; the rest share the helper's code and are @slow.
OWN_RULES = {"neg", "sign", "round_afz", "round_even", "is_finite", "exp2", "abs", "erf",
             "real", "conj", "population_count", "copy", "logistic", "rsqrt",
             "add", "div", "rem", "max", "pow", "atan2", "lt", "eq", "and",
             "shift_right_arithmetic", "shift_right_logical"}


@pytest.mark.parametrize("name", [pytest.param(op.name, marks=() if op.name in OWN_RULES
                                               else pytest.mark.slow) for op in UNARY])
def test_unary_shapes(name):
    op = UNARY_BY_NAME[name]
    dtype = representative(op.dtypes)
    xs = [random_values(dtype, shape, op.domain, seed=i) for i, shape in enumerate(SHAPES)]
    check_each(op.fg, op.jax, xs, compiled_eager=False)  # test_unary runs it per dtype


X64_UNARY = {"neg": [I64, F64, C128], "sign": [I64, U64, F64], "round_afz": [F64],
             "is_finite": [F64], "exp": [F64, C128], "log": [F64, C128], "sin": [F64, C128],
             "atanh": [F64], "sqrt": [F64, C128], "abs": [I64, F64, C128], "erf_inv": [F64],
             "lgamma": [F64], "digamma": [F64], "real": [C128], "conj": [F64, C128],
             "not": [I64, U64], "population_count": [I64, U64], "cbrt": [F64]}


@pytest.mark.parametrize("name,dtype", [param(n, d, fast=(n in ("exp", "abs")))
                                        for n, ds in X64_UNARY.items() for d in ds])
def test_unary_x64(x64, name, dtype):
    check_unary(UNARY_BY_NAME[name], dtype)


SIGNED_ZERO_OPS = ["neg", "abs", "sign", "floor", "ceil", "round_afz", "round_even", "sqrt",
                   "cbrt", "sin", "tan", "atan", "sinh", "tanh", "asinh", "atanh", "asin",
                   "expm1", "log1p", "erf", "copy"]


@pytest.mark.parametrize("dtype", [F32, pytest.param(F16, marks=pytest.mark.slow)])
def test_unary_signed_zero(dtype):
    """assert_close ignores the sign of zero; these ops must keep it as XLA does."""
    ops = [UNARY_BY_NAME[name] for name in SIGNED_ZERO_OPS]
    x = np.array([0.0, -0.0], dtype)
    expected = jax.jit(lambda v: [op.jax(v) for op in ops])(x)
    for results in eager_and_jit(lambda v: [op.fg(v) for op in ops], x):
        for op, got, want in zip(ops, results, expected):
            np.testing.assert_array_equal(np.signbit(np.asarray(got, np.float32)),
                                          np.signbit(np.asarray(want, np.float32)), op.name)


DOMAIN_ERRORS = [  # (op, input, expected result), all compared with jax too
    ("log", -1.0, np.nan), ("log", 0.0, -np.inf), ("log", -0.0, -np.inf), ("log", np.inf, np.inf),
    ("log1p", -1.0, -np.inf), ("log1p", -2.0, np.nan), ("sqrt", -1.0, np.nan),
    ("rsqrt", 0.0, np.inf), ("rsqrt", -1.0, np.nan), ("asin", 2.0, np.nan),
    ("acos", -1.5, np.nan), ("acosh", 0.5, np.nan), ("atanh", 1.0, np.inf),
    ("atanh", -1.0, -np.inf), ("atanh", 2.0, np.nan), ("erf_inv", 1.0, np.inf),
    ("erf_inv", -1.0, -np.inf), ("erf_inv", 1.5, np.nan), ("lgamma", 0.0, np.inf),
    ("lgamma", -2.0, np.inf), ("exp", 1000.0, np.inf), ("exp", -np.inf, 0.0),
    ("sin", np.inf, np.nan), ("cos", -np.inf, np.nan), ("tan", np.inf, np.nan),
]


def test_domain_errors():
    ops = [UNARY_BY_NAME[name] for name, _, _ in DOMAIN_ERRORS]
    xs = [np.array(x, F32) for _, x, _ in DOMAIN_ERRORS]

    def run(v, which):
        return [getattr(op, which)(x) for op, x in zip(ops, v)]
    check_against_jax(lambda *v: run(v, "fg"), lambda *v: run(v, "jax"), *xs)
    for results in eager_and_jit(lambda *v: run(v, "fg"), *xs):
        for (name, x, expected), got in zip(DOMAIN_ERRORS, results):
            np.testing.assert_array_equal(np.asarray(got), np.array(expected, F32), (name, x))


# --- binary ops -----------------------------------------------------------------------------

@dataclasses.dataclass
class Binary:
    name: str
    fg: object
    jax: object
    dtypes: list
    domain: tuple = REAL
    small_ints: bool = False  # integer operands in [-9, 9] rather than over the whole range
    slow: tuple = ()


BINARY = [
    Binary("add", lax.add, jax.lax.add, NUMBER),
    Binary("sub", lax.sub, jax.lax.sub, NUMBER),
    Binary("mul", lax.mul, jax.lax.mul, NUMBER),
    Binary("div", lax.div, jax.lax.div, NUMBER, small_ints=True),
    Binary("rem", lax.rem, jax.lax.rem, INTS + FLOATS, small_ints=True),
    Binary("max", lax.max, jax.lax.max, ANY, small_ints=True),
    Binary("min", lax.min, jax.lax.min, ANY, small_ints=True),
    Binary("pow", lax.pow, jax.lax.pow, INEXACT, (0.1, 3)),
    Binary("atan2", lax.atan2, jax.lax.atan2, INEXACT, slow=(C64,)),
    Binary("nextafter", lax.nextafter, jax.lax.nextafter, FLOATS),
    Binary("eq", lax.eq, jax.lax.eq, ANY, small_ints=True),
    Binary("ne", lax.ne, jax.lax.ne, ANY, small_ints=True),
    Binary("lt", lax.lt, jax.lax.lt, ORDERED, small_ints=True),
    Binary("le", lax.le, jax.lax.le, ORDERED, small_ints=True),
    Binary("gt", lax.gt, jax.lax.gt, ORDERED, small_ints=True),
    Binary("ge", lax.ge, jax.lax.ge, ORDERED, small_ints=True),
    # comparisons in total order (searchsorted's): no public name in either library
    Binary("eq_to", ew.eq_to_p.bind, jax_lax_internal.eq_to_p.bind, ORDERED, small_ints=True),
    Binary("lt_to", ew.lt_to_p.bind, jax_lax_internal.lt_to_p.bind, ORDERED, small_ints=True),
    Binary("le_to", ew.le_to_p.bind, jax_lax_internal.le_to_p.bind, ORDERED, small_ints=True),
    Binary("and", lax.bitwise_and, jax.lax.bitwise_and, INTEGRAL),
    Binary("or", lax.bitwise_or, jax.lax.bitwise_or, INTEGRAL),
    Binary("xor", lax.bitwise_xor, jax.lax.bitwise_xor, INTEGRAL),
    Binary("shift_left", lax.shift_left, jax.lax.shift_left, INTS),
    Binary("shift_right_arithmetic", lax.shift_right_arithmetic,
           jax.lax.shift_right_arithmetic, INTS),
    Binary("shift_right_logical", lax.shift_right_logical, jax.lax.shift_right_logical, INTS),
]
BINARY_BY_NAME = {op.name: op for op in BINARY}
SHIFTS = {"shift_left", "shift_right_arithmetic", "shift_right_logical"}


def binary_operand(op, dtype, shape, seed):
    if op.small_ints and dtypes.is_int(np.dtype(dtype)):
        return small_ints(dtype, shape, seed)
    if op.name in SHIFTS:  # shift amounts around the bit width matter most
        bits = np.dtype(dtype).itemsize * 8
        amounts = np.random.default_rng(seed).integers(0, bits + 3, shape)
        return amounts.astype(dtype) if seed % 2 else random_values(dtype, shape, seed=seed)
    return random_values(dtype, shape, op.domain, seed)


def binary_edges(op, dtype):
    """Every pair of edge values (x, y), flattened."""
    values = edge_values(dtype)
    if op.name in SHIFTS:
        bits = np.dtype(dtype).itemsize * 8
        amounts = wrap([0, 1, bits - 1, bits, bits + 1, 2 * bits, 255, -1, -bits], dtype)
        xs, ys = np.meshgrid(values, amounts)
        return xs.ravel(), ys.ravel()
    if op.name == "atan2" and dtypes.is_complex(np.dtype(dtype)):
        # atan2 of complex values lands on log's branch cut where x == 0; XLA picks +pi or
        # -pi there depending on rounding, so only points off the cut are compared.
        values = values[values != 0]
    xs, ys = np.meshgrid(values, values)
    return xs.ravel(), ys.ravel()


def binary_input(op, dtype):
    """Every pair of edge values followed by random pairs, as two vectors."""
    xs, ys = binary_edges(op, dtype)
    return (np.concatenate([xs, binary_operand(op, dtype, (24,), 0)]),
            np.concatenate([ys, binary_operand(op, dtype, (24,), 1)]))


def pairwise(fn):
    return lambda *a: [fn(a[i], a[i + 1]) for i in range(0, len(a), 2)]


def check_binary(op, dtype):
    check_against_jax(op.fg, op.jax, *binary_input(op, dtype))


@pytest.mark.parametrize("name,dtype", [param(op.name, d, fast=d in FAST and d not in op.slow)
                                        for op in BINARY for d in op.dtypes])
def test_binary(name, dtype):
    check_binary(BINARY_BY_NAME[name], dtype)


@pytest.mark.parametrize("name", [pytest.param(op.name, marks=() if op.name in OWN_RULES
                                               else pytest.mark.slow) for op in BINARY])
def test_binary_shapes(name):
    """Each shape, and a rank-0 operand meeting a shaped one (either side)."""
    op = BINARY_BY_NAME[name]
    dtype = representative(op.dtypes)
    pairs = [(binary_operand(op, dtype, s, 2 * i), binary_operand(op, dtype, s, 2 * i + 1))
             for i, s in enumerate(SHAPES)]
    scalar, full = binary_operand(op, dtype, (), 10), binary_operand(op, dtype, (2, 3), 11)
    pairs += [(scalar, full), (full, scalar)]
    check_against_jax(pairwise(op.fg), pairwise(op.jax), *[v for p in pairs for v in p],
                      compiled_eager=False)  # test_binary runs it per dtype


X64_BINARY = {"add": [I64, U64, F64, C128], "mul": [I64, C128], "div": [I64, U64, F64],
              "rem": [I64, F64], "max": [I64, F64, C128], "pow": [F64, C128], "atan2": [F64],
              "nextafter": [F64], "lt": [I64, U64, F64], "eq": [C128], "and": [I64, U64],
              "shift_left": [I64, U64], "shift_right_arithmetic": [I64, U64],
              "shift_right_logical": [I64, U64]}


@pytest.mark.parametrize("name,dtype", [param(n, d, fast=(n in ("div", "shift_right_logical")))
                                        for n, ds in X64_BINARY.items() for d in ds])
def test_binary_x64(x64, name, dtype):
    check_binary(BINARY_BY_NAME[name], dtype)


def test_complex_max_min_are_lexicographic():
    """max/min order complex values by (real, imag), as JAX lowers them."""
    x = np.array([0, 3j, 1 + 1j, 1 - 1j, 2, -1 + 5j], C64)
    y = np.array([3j, 0, 1 - 1j, 1 + 1j, 1 + 9j, -1 + 5j], C64)
    check_against_jax(lambda a, b: [lax.max(a, b), lax.min(a, b)],
                      lambda a, b: [jax.lax.max(a, b), jax.lax.min(a, b)], x, y)
    for result in eager_and_jit(lax.max, x, y):
        np.testing.assert_array_equal(result, [3j, 3j, 1 + 1j, 1 + 1j, 2, -1 + 5j])


# XLA's CPU compiler drops NaNs in max/min unless it is given compile options (as
# funcgraph.backend.compile now does).
@pytest.mark.parametrize("dtype", [F32, pytest.param(F16, marks=pytest.mark.slow),
                                   pytest.param(BF16, marks=pytest.mark.slow)])
def test_max_min_clamp_propagate_nan(dtype):
    x = np.array([np.nan, 1.0, np.nan, -np.inf, 0.0], dtype)
    y = np.array([1.0, np.nan, np.nan, np.nan, -0.0], dtype)
    lo, hi = np.array(0, dtype), np.array(1, dtype)

    def run(module):
        return lambda a, b: [module.max(a, b), module.min(a, b), module.clamp(lo, a, hi),
                             module.clamp(a, b, hi)]
    check_against_jax(run(lax), run(jax.lax), x, y)


def div_rem(module):
    return lambda a, b: [module.div(a, b), module.rem(a, b)]


@pytest.mark.parametrize("dtype", INTS + [pytest.param(I64, marks=pytest.mark.slow)])
def test_integer_division_edges(dtype, request):
    """x / 0 is -1 (all ones), x % 0 is x, INT_MIN / -1 wraps to INT_MIN, INT_MIN % -1 is 0."""
    if dtype == I64:
        request.getfixturevalue("x64")
    info = np.iinfo(dtype)
    x = np.array([7, -7, 0, info.min, info.max, info.min, info.min, 5, -5], dtype=object)
    y = np.array([0, 0, 0, 0, 0, -1, 1, -2, 2], dtype=object)
    if info.min == 0:  # unsigned: -7, -1, -2 wrap to large values
        x, y = x % (info.max + 1), y % (info.max + 1)
    x, y = x.astype(dtype), y.astype(dtype)
    check_against_jax(div_rem(lax), div_rem(jax.lax), x, y)
    all_ones = np.array(-1).astype(dtype)
    for q, r in eager_and_jit(div_rem(lax), x, y):
        q, r = np.asarray(q), np.asarray(r)
        np.testing.assert_array_equal(q[:5], all_ones)
        np.testing.assert_array_equal(r[:5], x[:5])
        if info.min < 0:
            np.testing.assert_array_equal(q[5:], [info.min, info.min, -2, -2])
            np.testing.assert_array_equal(r[5:], [0, 0, 1, -1])


@pytest.mark.parametrize("dtype", [F32, pytest.param(F16, marks=pytest.mark.slow),
                                   pytest.param(BF16, marks=pytest.mark.slow)])
def test_float_division_by_zero(dtype):
    x = np.array([1.0, -1.0, 0.0, 1.0, np.inf, 5.5], dtype)
    y = np.array([0.0, 0.0, 0.0, -0.0, 0.0, 0.0], dtype)
    check_against_jax(div_rem(lax), div_rem(jax.lax), x, y)
    for q, r in eager_and_jit(div_rem(lax), x, y):
        np.testing.assert_array_equal(np.asarray(q, np.float32),
                                      [np.inf, -np.inf, np.nan, -np.inf, np.inf, np.inf])
        assert np.isnan(np.asarray(r, np.float32)).all()


@pytest.mark.parametrize("dtype", INTS + [pytest.param(I64, marks=pytest.mark.slow),
                                          pytest.param(U64, marks=pytest.mark.slow)])
def test_shifts_past_the_bit_width(dtype, request):
    """Shift amounts >= the bit width (or negative) shift everything out."""
    if dtype in (I64, U64):
        request.getfixturevalue("x64")
    bits = dtype.itemsize * 8
    signed = np.dtype(f"i{dtype.itemsize}")
    values = np.array([5, -5, -1, 1], signed)
    x = np.tile(values, 4).view(dtype)
    y = np.repeat(np.array([bits, bits + 1, 2 * bits, -1], signed), 4).view(dtype)

    def shifts(module):
        return lambda a, b: [getattr(module, name)(a, b) for name in sorted(SHIFTS)]
    check_against_jax(shifts(lax), shifts(jax.lax), x, y)
    # The arithmetic shift copies the top bit in, for unsigned types too.
    filled = np.tile(np.where(values < 0, -1, 0).astype(signed), 4).view(dtype)
    for left, arith, logical in eager_and_jit(shifts(lax), x, y):
        np.testing.assert_array_equal(left, np.zeros(16, dtype))
        np.testing.assert_array_equal(logical, np.zeros(16, dtype))
        np.testing.assert_array_equal(arith, filled)


@pytest.mark.parametrize("base,exponent", [(F32, I32), (F32, U8), (F16, I8), (C64, I32),
                                           (BF16, U32)], ids=lambda d: d.name)
def test_pow_integer_exponent(base, exponent):
    """pow takes an exponent of any integer dtype (converted to the base's dtype)."""
    x = random_values(base, (2, 3), (0.1, 3), seed=1)
    y = small_ints(exponent, (2, 3), seed=2)
    check_against_jax(pairwise(lax.pow), pairwise(jax.lax.pow), x, y, x, y[0, 0], x[0, 0], y)


def test_complex_pow_of_zero():
    """XLA's 0 ** y: 1 for y == 0, 0 for real y > 0, nan otherwise (NumPy: 0 for Re y > 0)."""
    y = np.array([0, 1, 2, 0.5, -1, 1j, 1 + 1j, 2 - 1j, -0.5 + 2j], C64)
    check_against_jax(lax.pow, jax.lax.pow, np.zeros_like(y), y)


# --- integer_pow ------------------------------------------------------------------------------

def _integer_pows(exponents, module):
    return lambda v: [module.integer_pow(v, n) for n in exponents]


@pytest.mark.parametrize("name,dtype", [param("integer_pow", d) for d in NUMBER])
def test_integer_pow(name, dtype):
    exponents = [0, 1, 2, 3, 5, 8] + ([] if dtypes.is_int(dtype) else [-1, -2, -3])
    x = (small_ints(dtype, (16,), seed=1) if dtypes.is_int(dtype)
         else random_values(dtype, (16,), (-2, 2), seed=1))
    x = np.concatenate([edge_values(dtype, huge=False), x])
    check_against_jax(_integer_pows(exponents, lax), _integer_pows(exponents, jax.lax), x)


def test_integer_pow_shapes():
    xs = [random_values(F32, shape, (-2, 2), seed=i) for i, shape in enumerate(SHAPES)]
    check_each(_integer_pows([3, -2], lax), _integer_pows([3, -2], jax.lax), xs)


# --- select_n and clamp -------------------------------------------------------------------------

def _select_inputs(dtype, shape, n, seed):
    return [random_values(dtype, shape, seed=seed + i) for i in range(n)]


@pytest.mark.parametrize("name,dtype", [param("select_n", d) for d in ALL_32])
def test_select_n(name, dtype):
    shape = (2, 3)
    rng = np.random.default_rng(0)
    bool_pred = rng.random(shape) < 0.5
    int_pred = rng.integers(0, 3, shape).astype(np.int32)
    five_pred = rng.integers(0, 5, shape)
    cases = [
        (bool_pred, *_select_inputs(dtype, shape, 2, 1)),
        (int_pred, *_select_inputs(dtype, shape, 3, 3)),
        (five_pred.astype(np.int8), *_select_inputs(dtype, shape, 5, 6)),
        (five_pred.astype(np.uint32), *_select_inputs(dtype, shape, 5, 11)),
        (np.array(True), *_select_inputs(dtype, shape, 2, 16)),   # rank-0 predicate
        (np.array(2, np.int32), *_select_inputs(dtype, shape, 3, 18)),
        (int_pred * 0, *_select_inputs(dtype, shape, 1, 21)),   # a single case
        (np.zeros((0, 4), bool), *_select_inputs(dtype, (0, 4), 2, 22)),
        (np.array(False), *_select_inputs(dtype, (), 2, 24)),
    ]
    check_against_jax(lambda *cs: [lax.select_n(*c) for c in cs],
                      lambda *cs: [jax.lax.select_n(*c) for c in cs], *cases)


@pytest.mark.parametrize("name,dtype", [param("clamp", d) for d in ORDERED])
def test_clamp(name, dtype):
    x = (small_ints(dtype, (2, 3), seed=1) if dtypes.is_int(dtype)
         else random_values(dtype, (2, 3), seed=1))
    lo = np.array(False if dtype == BOOL else 2 if dtypes.is_int(dtype) else -1, dtype)
    hi = np.array(True if dtype == BOOL else 6 if dtypes.is_int(dtype) else 2, dtype)
    edges = edge_values(dtype, nan=False)
    cases = [(lo, x, hi), (hi, x, lo),                          # scalar bounds, also lo > hi
             (random_values(dtype, (2, 3), seed=2), x, hi),      # array lower bound
             (lo, x, random_values(dtype, (2, 3), seed=3)),
             (lo, edges, hi), (lo, x[0, 0], hi), (lo, np.zeros((0, 4), dtype), hi)]
    check_against_jax(lambda *cs: [lax.clamp(*c) for c in cs],
                      lambda *cs: [jax.lax.clamp(*c) for c in cs], *cases)


# --- convert_element_type and bitcast_convert_type ---------------------------------------------

def conversion_input(dtype):
    """Values that stress conversions (fractions, negatives, big and out-of-range values),
    then random ones."""
    dtype = np.dtype(dtype)
    if dtypes.is_complex(dtype):
        edges = np.array([0, 1.5 - 2j, -3.7 + 0.5j, 2j, 300 + 1j, -1e10 + 1j], dtype)
    else:
        edges = edge_values(dtype)
    if is_float(dtype) and not on_cpu():  # see the comment of test_convert_element_type
        edges = edges[np.isfinite(edges) & (np.abs(edges.astype(np.float64)) < 100)]
    return np.concatenate([edges, random_values(dtype, (16,), WIDE)])


def _converters(targets):
    def fg_fn(x):
        return [lax.convert_element_type(x, t) for t in targets]

    def jax_fn(x):
        return [jax.lax.convert_element_type(x, t) for t in targets]
    return fg_fn, jax_fn


# StableHLO leaves float -> int conversion of NaN and of out-of-range values
# implementation-defined; XLA (CPU) maps NaN to 0 and saturates, and funcgraph's NumPy path
# mirrors it.  Those values are compared on the CPU backend only.
@pytest.mark.parametrize("name,dtype", [param("convert_from", d) for d in ALL_32])
def test_convert_element_type(name, dtype):
    fg_fn, jax_fn = _converters(ALL_32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)  # jax warns complex->real
        check_against_jax(fg_fn, jax_fn, conversion_input(dtype))


@pytest.mark.parametrize("name,dtype", [param("convert_shapes", d) for d in (F32, C64)])
def test_convert_element_type_shapes(name, dtype):
    fg_fn, jax_fn = _converters([BOOL, I8, U32, F16, C64])
    xs = [random_values(dtype, shape, WIDE, seed=i) for i, shape in enumerate(SHAPES)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        check_each(fg_fn, jax_fn, xs, compiled_eager=False)


@pytest.mark.cpu_only  # out-of-range float -> int is implementation-defined
@pytest.mark.parametrize("dtype", [F32, pytest.param(F16, marks=pytest.mark.slow),
                                   pytest.param(BF16, marks=pytest.mark.slow)])
def test_convert_float_to_int_out_of_range(dtype):
    """NaN -> 0, +-inf and out-of-range values saturate (XLA's CPU choice; see above)."""
    with np.errstate(over="ignore"):  # 1e10 is inf in float16
        x = np.array([np.nan, np.inf, -np.inf, 1e10, -1e10, 2.0**31, -2.0**31, 2.0**32, 300,
                      -300, 255.9, 256, -0.9, -1, 127.5, -128.5], np.float64).astype(dtype)
    fg_fn, jax_fn = _converters(INTS)
    check_against_jax(fg_fn, jax_fn, x)
    for result in eager_and_jit(lambda v: lax.convert_element_type(v, np.int8), x):
        np.testing.assert_array_equal(np.asarray(result)[:5], [0, 127, -128, 127, -128])


@pytest.mark.cpu_only  # out-of-range float -> int is implementation-defined
def test_convert_x64(x64):
    x = np.array([np.nan, np.inf, -np.inf, 2.0**63, -2.0**63, 2.0**64, -1.5, 1e300, 0.3,
                  2.0**53 + 2], np.float64)
    fg_fn, jax_fn = _converters([I64, U64, I32, F32, F16, C128, BOOL])
    check_against_jax(fg_fn, jax_fn, x)
    ints = np.array([0, -1, 2**62, -2**63, 2**63 - 1, 2**53 + 1], np.int64)
    fg_fn, jax_fn = _converters([F64, F32, I8, U64, U32, BOOL, C128, BF16])
    check_against_jax(fg_fn, jax_fn, ints)


def test_convert_complex_to_bool_uses_the_real_part():
    """As in JAX: complex -> real drops the imaginary part, for bool too."""
    x = np.array([1j, 0, 1, 2 + 3j, -0.0 + 5j], C64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        check_against_jax(lambda v: lax.convert_element_type(v, np.bool_),
                          lambda v: jax.lax.convert_element_type(v, np.bool_), x)
    for result in eager_and_jit(lambda v: lax.convert_element_type(v, np.bool_), x):
        np.testing.assert_array_equal(result, [False, False, True, True, False])


BITCAST_DTYPES = INTS + FLOATS + [np.dtype(np.int16), np.dtype(np.uint16)]


@pytest.mark.parametrize("name,dtype", [param("bitcast_from", d, fast=d in (F32, I8, BF16))
                                        for d in BITCAST_DTYPES])
def test_bitcast_convert_type(name, dtype):
    """Same-width casts keep the shape (rank 0 too); narrower ones add a last axis, wider
    ones use it up."""
    targets, xs = [], []
    for target in BITCAST_DTYPES:
        ratio = target.itemsize // dtype.itemsize
        shape = (2, ratio) if ratio > 1 else (2, 3)
        if is_float(dtype):
            x = np.resize(edge_values(dtype), shape)
        else:
            x = random_values(dtype, shape, seed=ratio)
        targets.append(target)
        xs.append(x)
        if ratio == 1:
            targets.append(target)
            xs.append(x[0, 0])

    check_against_jax(bitcasts(lax, targets), bitcasts(jax.lax, targets), *xs)


def bitcasts(module, targets):
    return lambda *v: [module.bitcast_convert_type(x, t) for x, t in zip(v, targets)]


def test_bitcast_x64(x64):
    targets = [I64, U64, I32, U8, F32, F16, F64]
    xs = [edge_values(F64)] * 6 + [random_values(U32, (3, 2), seed=4)]
    check_against_jax(bitcasts(lax, targets), bitcasts(jax.lax, targets), *xs)


# --- which dtypes each op accepts: exactly JAX's ----------------------------------------------

def _raises_type_error(fn, *args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*args)
    except TypeError:
        return True
    return False


ACCEPTANCE = ([(op.name, op.fg, op.jax, 1) for op in UNARY]
              + [(op.name, op.fg, op.jax, 2) for op in BINARY]
              + [("clamp", lax.clamp, jax.lax.clamp, 3),
                 ("integer_pow", lambda x: lax.integer_pow(x, 2),
                  lambda x: jax.lax.integer_pow(x, 2), 1)])


# Deliberate differences: XLA clamps complex values by their real parts alone (not in the
# (real, imag) order of the StableHLO spec), so funcgraph refuses complex clamp.
REFUSED_ON_PURPOSE = {("clamp", C64)}


@pytest.mark.parametrize("name,fg_fn,jax_fn,arity", ACCEPTANCE, ids=[a[0] for a in ACCEPTANCE])
def test_accepted_dtypes_match_jax(name, fg_fn, jax_fn, arity):
    """For every dtype, funcgraph raises TypeError exactly when jax does (abstractly)."""
    for dtype in ALL_32:
        if (name, dtype) in REFUSED_ON_PURPOSE:
            with pytest.raises(TypeError, match=f"{name} does not accept"):
                fg.eval_shape(fg_fn, *[fg.ShapeDtypeStruct((3,), dtype)] * arity)
            continue
        args = [jax.ShapeDtypeStruct((3,), dtype)] * arity
        fg_args = [fg.ShapeDtypeStruct((3,), dtype)] * arity
        jax_refuses = _raises_type_error(jax.eval_shape, jax_fn, *args)
        fg_refuses = _raises_type_error(fg.eval_shape, fg_fn, *fg_args)
        assert fg_refuses == jax_refuses, (name, dtype.name, "jax refuses:", jax_refuses)


@pytest.mark.parametrize("src", ALL_32, ids=lambda d: d.name)
def test_bitcast_accepted_dtypes_match_jax(src):
    for dst in ALL_32:
        ratio = dst.itemsize // src.itemsize
        shape = (3, ratio) if ratio > 1 else (3,)
        jax_refuses = _raises_type_error(jax.eval_shape, lambda v: jax.lax.bitcast_convert_type(
            v, dst), jax.ShapeDtypeStruct(shape, src))
        fg_refuses = _raises_type_error(fg.eval_shape, lambda v: lax.bitcast_convert_type(
            v, dst), fg.ShapeDtypeStruct(shape, src))
        assert fg_refuses == jax_refuses, (src.name, dst.name, "jax refuses:", jax_refuses)


# --- errors for bad input ---------------------------------------------------------------------

F32_3, F32_2, I32_3 = np.ones(3, F32), np.ones(2, F32), np.ones(3, I32)

ERRORS = [
    ("sin_int", lambda: lax.sin(I32_3), TypeError, r"sin does not accept .*int32.*i32\[3\]"),
    ("exp_bool", lambda: lax.exp(np.ones(3, bool)), TypeError, "exp does not accept .*bool"),
    ("floor_int", lambda: lax.floor(I32_3), TypeError, "floor does not accept .*int32"),
    ("abs_unsigned", lambda: lax.abs(np.ones(3, U8)), TypeError, "abs does not accept .*uint8"),
    ("real_float", lambda: lax.real(F32_3), TypeError, "real does not accept .*float32"),
    ("conj_f16", lambda: lax.conj(np.ones(3, F16)), TypeError, "conj does not accept .*float16"),
    ("not_float", lambda: lax.bitwise_not(F32_3), TypeError, "not does not accept .*float32"),
    ("popcnt_float", lambda: lax.population_count(F32_3), TypeError,
     "population_count does not accept .*float32"),
    ("add_dtypes", lambda: lax.add(F32_3, I32_3), TypeError,
     "add requires arguments of one dtype, got float32, int32"),
    ("add_shapes", lambda: lax.add(F32_3, F32_2), TypeError,
     r"add got incompatible shapes for broadcasting: \(3,\), \(2,\)\."),
    ("mul_shapes_2d", lambda: lax.mul(np.ones((2, 3), F32), np.ones((3, 2), F32)), TypeError,
     r"mul got incompatible shapes for broadcasting: \(2, 3\), \(3, 2\)\."),
    ("mul_ranks", lambda: lax.mul(np.ones((2, 3), F32), np.ones(3, F32)), TypeError,
     r"mul: arrays must have the same number of dimensions, got \{1, 2\}"),
    ("lt_complex", lambda: lax.lt(F32_3.astype(C64), F32_3.astype(C64)), TypeError,
     "lt does not accept .*complex64"),
    ("rem_complex", lambda: lax.rem(F32_3.astype(C64), F32_3.astype(C64)), TypeError,
     "rem does not accept .*complex64"),
    ("shift_float", lambda: lax.shift_left(F32_3, F32_3), TypeError,
     "shift_left does not accept .*float32"),
    ("and_float", lambda: lax.bitwise_and(F32_3, F32_3), TypeError, "and does not accept"),
    ("pow_int_base", lambda: lax.pow(I32_3, I32_3), TypeError, "pow does not accept .*int32"),
    ("pow_mixed_floats", lambda: lax.pow(F32_3, F32_3.astype(F16)), TypeError,
     r"pow needs an exponent .*f32\[3\] .*f16\[3\]"),
    ("integer_pow_int_negative", lambda: lax.integer_pow(I32_3, -1), TypeError,
     r"integer_pow of an integer array \(i32\[3\]\) needs a non-negative exponent, got -1"),
    ("select_n_float_pred", lambda: lax.select_n(F32_3, F32_3, F32_3), TypeError,
     "select_n predicate must be bool or an integer, got float32"),
    ("select_n_bool_3_cases", lambda: lax.select_n(F32_3 > 0, F32_3, F32_3, F32_3), TypeError,
     "boolean predicate takes at most two cases"),
    ("select_n_pred_shape", lambda: lax.select_n(np.ones(2, bool), F32_3, F32_3), TypeError,
     r"predicate shape \(2,\) must be \(\) or the cases' shape \(3,\)"),
    ("select_n_case_dtypes", lambda: lax.select_n(F32_3 > 0, F32_3, I32_3), TypeError,
     "one dtype, got float32, int32"),
    ("select_n_case_shapes", lambda: lax.select_n(np.array(True), F32_3, F32_2), TypeError,
     r"one shape, got \(3,\), \(2,\)"),
    ("clamp_min_shape", lambda: lax.clamp(np.zeros(2, F32), F32_3, np.float32(1)), TypeError,
     r"clamp min must be a scalar or of the operand's shape \(3,\), got shape \(2,\)"),
    ("clamp_max_shape", lambda: lax.clamp(np.float32(0), F32_3, np.ones((3, 1), F32)),
     TypeError, r"clamp max must be a scalar .*got shape \(3, 1\)"),
    ("clamp_array_dtypes", lambda: lax.clamp(np.zeros(3, I32), F32_3, F32_3), TypeError,
     "clamp requires arguments of one dtype"),
    ("clamp_complex", lambda: lax.clamp(np.complex64(0), F32_3.astype(C64), np.complex64(1)),
     TypeError, "clamp does not accept .*complex64"),
    ("bitcast_bool", lambda: lax.bitcast_convert_type(np.ones(3, bool), np.int8), TypeError,
     "bitcast_convert_type does not accept dtype bool"),
    ("bitcast_complex", lambda: lax.bitcast_convert_type(F32_3.astype(C64), np.int64),
     TypeError, "bitcast_convert_type does not accept dtype complex64"),
    ("bitcast_last_dim", lambda: lax.bitcast_convert_type(np.ones(3, I8), np.int32), TypeError,
     r"needs a last dimension of 4, got shape \(3,\)"),
    ("convert_unsupported", lambda: lax.convert_element_type(F32_3, np.str_), TypeError,
     "does not support the dtype"),
]


@pytest.mark.parametrize("name,fn,err,match", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(name, fn, err, match):
    with pytest.raises(err, match=match):
        fn()


@pytest.mark.parametrize("name,fn,err,match", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_under_jit(name, fn, err, match):
    """The same checks fire while tracing (the shape rule, not the NumPy impl, raises)."""
    with pytest.raises(err, match=match):
        fg.jit(fn)()


# --- weak types and Python scalars: as in JAX --------------------------------------------------

def _describe(fn, *args):
    """(dtype, weak_type, shape, value) of fn(*args), or the exception type it raised."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(*args)
    except (TypeError, ValueError) as e:
        return type(e)
    return np.dtype(r.dtype), bool(r.weak_type), tuple(r.shape), np.asarray(r)


def assert_same_as_jax(fg_fn, jax_fn, *args):
    expected = _describe(jax_fn, *args)
    results = [_describe(fg_fn, *args), _describe(fg.jit(fg_fn), *args)]
    for got in results:
        if isinstance(expected, type):
            assert isinstance(got, type), f"jax raised {expected.__name__}, funcgraph gave {got}"
            continue
        assert not isinstance(got, type), f"funcgraph raised {got.__name__}, jax gave {expected}"
        assert got[:3] == expected[:3], (got[:3], expected[:3])
        assert_close(got[3], expected[3])


def _pair(name):
    return getattr(lax, name), getattr(jax.lax, name)


F16_3, U8_3, C64_3 = np.ones(3, F16), np.full(3, 3, U8), np.ones(3, C64)

SCALAR_CASES = [  # (id, lax name, args)
    ("add_f32_pyfloat", "add", (F32_3, 1.5)),
    ("add_pyfloat_f32", "add", (2.5, F32_3)),
    ("add_i32_pyint", "add", (I32_3, 3)),
    ("add_pyfloats", "add", (1.0, 2.0)),
    ("mul_pyints", "mul", (2, 3)),
    ("sub_pycomplex", "sub", (1j, C64_3)),
    ("eq_pyfloats", "eq", (1.0, 2.0)),
    ("lt_f32_pyfloat", "lt", (F32_3, 0.5)),
    ("max_rank0_array", "max", (F32_3, np.float32(2))),
    ("and_pybools", "bitwise_and", (True, False)),
    ("shift_left_pyints", "shift_left", (1, 3)),
    ("sin_pyfloat", "sin", (0.5,)),
    ("neg_pyint", "neg", (2,)),
    ("sign_pyint", "sign", (-3,)),
    ("abs_pyint", "abs", (-2,)),
    ("abs_pycomplex", "abs", (3 + 4j,)),
    ("conj_pyfloat", "conj", (1.5,)),
    ("round_pyfloat", "round", (2.5,)),
    ("pow_pyfloat_pyint", "pow", (2.0, 3)),
    ("pow_f32_pyint", "pow", (F32_3, 2)),
]


# Scalars whose default dtype differs from the other operand's: jax.lax raises, and so
# must funcgraph.lax (no silent conversion).
SCALAR_MISMATCHES = [
    ("add_i32_pyfloat", "add", (I32_3, 1.5)),
    ("add_f16_pyfloat", "add", (F16_3, 1.5)),
    ("add_f32_pyint", "add", (F32_3, 1)),
    ("add_u8_pyint", "add", (U8_3, 1)),
    ("add_pyfloat_pyint", "add", (1.0, 2)),
    ("max_pybool_pyint", "max", (True, 2)),
    ("pow_pyfloat_i32", "pow", (1.5, I32_3)),
    ("integer_pow_float_exponent", "integer_pow", (F32_3, 2.5)),
    ("is_finite_pyfloat", "is_finite", (1.5,)),
    ("real_pycomplex", "real", (1 + 2j,)),
    ("imag_pycomplex", "imag", (1 + 2j,)),
]


@pytest.mark.parametrize("name,args", [pytest.param(n, a, id=i)
                                       for i, n, a in SCALAR_CASES + SCALAR_MISMATCHES])
def test_python_scalars_as_in_jax(name, args):
    assert_same_as_jax(*_pair(name), *args)


@pytest.mark.parametrize("bounds", [
    pytest.param((0.0, 2.5), id="pyfloats"),
    pytest.param((0, 2.5), id="pyint_pyfloat"),
    pytest.param((np.int32(0), np.float32(2)), id="i32_bound"),
])
def test_clamp_scalar_bounds_as_in_jax(bounds):
    lo, hi = bounds
    assert_same_as_jax(lambda x: lax.clamp(lo, x, hi), lambda x: jax.lax.clamp(lo, x, hi),
                       np.linspace(-1, 3, 5, dtype=F32))


def test_select_n_without_cases():
    """jax.lax.select_n raises ValueError, and so does funcgraph.lax."""
    with pytest.raises(ValueError, match="at least one case"):
        lax.select_n(np.array([True, False]))


def test_select_n_python_scalar_cases():
    pred = np.array([True, False, True])
    assert_same_as_jax(lax.select_n, jax.lax.select_n, pred, F32_3, F32_3 * 2)
    assert_same_as_jax(lax.select_n, jax.lax.select_n, True, 1.0, 2.0)


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    g, w = (v.view(v.real.dtype) if v.dtype.kind == "c" else v for v in (got, want))
    assert np.all((g.view(f"u{g.itemsize}") == w.view(f"u{w.itemsize}"))
                  | (np.isnan(g) & np.isnan(w))), (got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_complex_keeps_each_part(x64, dtype):
    """lax.complex is a primitive (stablehlo.complex), as jax's: x + 1j * y made
    inf * 0 = NaN real parts and lost the sign of -0 imaginary parts."""
    x = np.array([1.0, np.inf, -0.0, 2.0, np.nan, -np.inf], dtype)
    y = np.array([np.inf, -0.0, -0.0, 3.0, 1.0, np.inf], dtype)
    for result in eager_and_jit(lax.complex, x, y):
        _same_bits(result, jax.lax.complex(x, y))
    _same_bits(lax.complex(dtype(2), y), jax.lax.complex(dtype(2), y))
    assert str(fg.make_jaxpr(lax.complex)(x, y)).count("complex") == 1


def test_complex_derivatives_as_jax():
    a, b = np.array([0.3, -1.2], np.float32), np.array([2.0, 0.5], np.float32)

    def loss(lib, np_):
        return lambda a, b: np_.sum(np_.abs(lib.complex(a, b) * lib.complex(b, -a)) ** 2
                                    + lib.complex(a, b).imag)
    want = jax.grad(loss(jax.lax, jax.numpy), (0, 1))(a, b)
    for got in (fg.grad(loss(lax, fg.numpy), (0, 1))(a, b),
                fg.jit(fg.grad(loss(lax, fg.numpy), (0, 1)))(a, b)):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    tangent = fg.jvp(lax.complex, (a, b), (np.ones(2, np.float32), 2 * np.ones(2, np.float32)))[1]
    np.testing.assert_array_equal(np.asarray(tangent), np.full(2, 1 + 2j, np.complex64))
    np.testing.assert_array_equal(np.asarray(fg.vmap(lax.complex, (0, None))(a, b[0])),
                                  a + 1j * b[0])


@pytest.mark.parametrize("name", ["log10", "log2"])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_log10_log2_as_jax_computes_them(name, dtype):
    values = np.array([0.0, -0.0, 0.5, 1.0, 3.0, 7.0, 1e30, 1e-30, np.inf, -np.inf, np.nan,
                       -2.5, 0.001, 1000.0], np.float32)
    x = values
    if np.dtype(dtype).kind == "c":  # every pair of parts (x + 1j * y would give inf * 0)
        x = np.empty((values.size, values.size), dtype)
        x.real, x.imag = values[:, None], values[None, :]
        x = x.ravel()
    fn, jfn = getattr(fg.numpy, name), jax.jit(getattr(jax.numpy, name))
    _same_bits(fg.jit(fn)(x), jfn(x))
    if np.dtype(dtype).kind == "f":  # eagerly op by op; XLA fuses jax's complex one
        _same_bits(fn(x), jfn(x))


@pytest.mark.parametrize("name", ["add", "mul", "pow", "atan2", "max", "lt", "nextafter",
                                  "igamma", "complex"])
def test_binary_broadcasts_size_one_dimensions_as_jax(name):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 2, (3, 1)).astype(np.float32)
    y = rng.uniform(0.5, 2, (1, 4)).astype(np.float32)
    want = np.asarray(getattr(jax.lax, name)(x, y))
    for result in eager_and_jit(getattr(lax, name), x, y):
        assert result.shape == want.shape == (3, 4)
        assert_close(result, want, scale=4.0)
    if name in ("add", "mul", "atan2"):
        grads = fg.grad(lambda a, b: fg.numpy.sum(getattr(lax, name)(a, b)), (0, 1))(x, y)
        want_grads = jax.grad(lambda a, b: jax.numpy.sum(getattr(jax.lax, name)(a, b)),
                              (0, 1))(x, y)
        for g, w in zip(grads, want_grads, strict=True):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5)


@pytest.mark.parametrize("dtype", [dtypes.bfloat16, np.float16, np.float32, np.complex64],
                         ids=lambda d: np.dtype(d).name)
def test_logistic_lowers_as_jax(dtype):
    """1 / (1 + exp(-x)) op by op, as jax: XLA's own logistic of a bfloat16 rounded once
    (logistic(3) was 0.953125, jax's 0.957031)."""
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(500) * 8).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * x[::-1]
    want = jax.jit(jax.lax.logistic)(x)
    for result in eager_and_jit(lax.logistic, x):
        _same_bits(result, want)
