"""XLA's rewrites that change bits, followed by funcgraph's eager path: jax's eager and
jitted results are what XLA computes after its algebraic simplifier, so funcgraph's
eager results (NumPy) must compute the same, and its jitted ones (XLA) do."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp

RNG = np.random.default_rng(0)
X = (RNG.normal(size=(64, 32)) * 10).astype(np.float32)

# (x, divisor): a divisor broadcast against x is divided once (1/divisor) and multiplied
# (A / broadcast(B) -> A * broadcast(1/B)), up to 1 ulp from the rounded quotient in
# about a third of the elements; same shapes, or a broadcast dividend, divide exactly.
DIVISIONS = {
    "by a Python float": (X, 100.0),
    "by a Python int": (X, 7),
    "by a 0-d array": (X, np.float32(3.0)),
    "by a column": (X, RNG.normal(size=(64, 1)).astype(np.float32)),
    "by a row": (X, RNG.normal(size=(32,)).astype(np.float32)),
    "same shapes": (X, X + 1.0),
    "a scalar by an array": (np.float32(3.0), X),
    "float16": (X.astype(np.float16), 3.0),
    "float64 (x64)": (X.astype(np.float64), 3.0),
    "zeros and infinities": (X[:, :4], np.float32([0.0, -0.0, np.inf, -np.inf])),
    "integers": (np.arange(12, dtype=np.int32).reshape(3, 4), 5),
}


def _operand(mod, v):
    return mod.numpy.asarray(v) if isinstance(v, (np.ndarray, np.generic)) else v


@pytest.mark.parametrize("name", sorted(DIVISIONS))
def test_division_gives_xlas_bits_eagerly_and_under_jit(name):
    x, y = DIVISIONS[name]
    with fg.enable_x64(x.dtype == np.float64), jax.enable_x64(x.dtype == np.float64):
        want = np.asarray(_operand(jax, x) / _operand(jax, y))
        for got in (_operand(fg, x) / _operand(fg, y),
                    fnp.divide(_operand(fg, x), _operand(fg, y)),
                    fg.jit(lambda a, b: a / b, static_argnums=() if isinstance(y, np.ndarray)
                           else (1,))(_operand(fg, x), y)):
            got = np.asarray(got)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


def test_the_division_stays_a_division_in_the_program():
    """The rewrite is XLA's, not the program's: make_jaxpr shows jax's div."""
    names = [e.prim.name for e in fg.make_jaxpr(lambda a: a / 3.0)(X).jaxpr.eqns]
    assert names == ["div"]


# --- XLA's CPU floating-point mode: subnormals flushed -----------------------------------

SUBNORMAL = np.float32([1e-40, -1e-40, 3e-39, 1.0, -2.5, 0.0])


@pytest.mark.parametrize("name,call", [
    ("multiply", lambda m, x: x * 1.0),
    ("add", lambda m, x: x + x),
    ("maximum", lambda m, x: m.maximum(x, -1.0)),
    ("sign", lambda m, x: m.sign(x)),
    ("reciprocal of a huge value", lambda m, x: 1.0 / (x * 1e38)),
    ("float64", lambda m, x: x.astype(m.float64) * 1e-300),
])
def test_subnormals_flush_to_zero_as_in_xlas_cpu_code(name, call):
    """XLA's CPU code runs with the x86 DAZ and FTZ bits set: subnormal inputs read as
    zero and subnormal results become zero.  funcgraph's eager NumPy ops run in the
    same mode (and leave the caller's mode as it was)."""
    with fg.enable_x64(True), jax.enable_x64(True):
        want = np.asarray(call(jnp, jnp.asarray(SUBNORMAL)))
        got = np.asarray(call(fnp, fnp.asarray(SUBNORMAL)))
        # under jit x * 1.0 is x (XLA's simplifier): subnormals pass, in jax's too
        want_jit = np.asarray(jax.jit(lambda x: call(jnp, x))(SUBNORMAL))
        jitted = np.asarray(fg.jit(lambda x: call(fnp, x))(SUBNORMAL))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(jitted, want_jit)
    assert SUBNORMAL[0] * np.float32(1.0) != 0  # NumPy outside keeps IEEE subnormals


# --- XLA's CPU code generator: fused multiply-adds inside one program --------------------

def test_a_fused_multiply_add_rounds_once_under_jit():
    """Fused into one loop, a product feeding a sum becomes one FMA (rounded once): a
    jitted x * y + z is jax's jitted bits, not the bits of NumPy's two ops."""
    x, y, z = (RNG.normal(size=4096).astype(np.float32) for _ in range(3))
    ours = np.asarray(fg.jit(lambda a, b, c: a * b + c)(x, y, z))
    np.testing.assert_array_equal(ours, np.asarray(jax.jit(lambda a, b, c: a * b + c)(x, y, z)))
    assert (ours != x * y + z).any()
    # eagerly, jax and funcgraph run the two ops one by one: no FMA
    eager = np.asarray(fnp.asarray(x) * y + z)
    np.testing.assert_array_equal(eager, np.asarray(jnp.asarray(x) * y + z))


def test_library_functions_run_as_one_program_eagerly():
    """jax's hypot is a jitted function: eagerly one XLA program with FMAs in it.
    funcgraph runs it compiled as one program too (numpy/_compiled.py)."""
    a, b = ((RNG.normal(size=4096) * 3).astype(np.float32) for _ in range(2))
    np.testing.assert_array_equal(np.asarray(fnp.hypot(a, b)), np.asarray(jnp.hypot(a, b)))
    names = [e.prim.name for e in fg.make_jaxpr(fnp.hypot)(a, b).jaxpr.eqns]
    assert "pjit" not in names  # traced inline under transformations


# --- sums, products and contractions in XLA's order --------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("name,call", [
    ("sum", lambda m, x: m.sum(x)),
    ("sum over rows", lambda m, x: m.sum(x, axis=0)),
    ("mean over columns", lambda m, x: m.mean(x, axis=1)),
    ("prod", lambda m, x: m.prod(x[:4], axis=1)),
    ("matmul", lambda m, x: x @ x.T),
    ("dot of vectors", lambda m, x: m.dot(x[0], x[1])),
])
def test_reductions_and_contractions_give_xlas_bits_eagerly(dtype, name, call):
    """XLA adds float32 and float64 sums and products in its own order; eagerly they run
    compiled, so an eager result is jax's (narrow floats accumulate in float32 and round
    once, the same bits from NumPy).  Under jit XLA may fuse more (x @ x.T contracts x
    with itself, without the transpose eager runs first): jax's jitted bits then."""
    x = (RNG.normal(size=(30, 20)) * 10).astype(dtype)
    with fg.enable_x64(dtype == np.float64), jax.enable_x64(dtype == np.float64):
        want = np.asarray(call(jnp, jnp.asarray(x)))
        np.testing.assert_array_equal(np.asarray(call(fnp, fnp.asarray(x))), want)
        np.testing.assert_array_equal(np.asarray(fg.jit(lambda v: call(fnp, v))(x)),
                                      np.asarray(jax.jit(lambda v: call(jnp, v))(x)))


# --- XLA's simplifier: a bool converted and multiplied is a select ------------------------

def test_masking_by_a_converted_bool_is_a_select():
    """convert(mask) * -inf is select(mask, -inf, 0) after XLA's simplifier: 0 where the
    mask is false, eagerly and under jit when the mask is computed; NaN (0 * -inf) where
    jax folds a NumPy constant itself."""
    m = np.tril(np.ones((4, 4), np.float32))
    for lib, np_ in ((fg, fnp), (jax, jnp)):
        eager = np.asarray((np_.asarray(m) == 0) * float("-inf"))
        traced = np.asarray(lib.jit(lambda: (np_.tril(np_.ones((4, 4))) == 0) * float("-inf"))())
        with np.errstate(invalid="ignore"):
            captured = np.asarray(lib.jit(lambda: (m == 0) * float("-inf"))())
        if lib is jax:
            np.testing.assert_array_equal(ours, (eager, traced, captured))
        ours = (eager, traced, captured)
    assert ours[0][0, 0] == 0 and np.isnan(ours[2][0, 0])


def test_division_by_a_scalar_inside_a_library_function():
    """log2 is log(x) / log(2): the division by a broadcast scalar is XLA's reciprocal
    multiplication, eagerly too (the div primitive's eager rule follows the rewrite)."""
    x = np.abs(RNG.normal(size=4096) * 10).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(fnp.log2(x)), np.asarray(jnp.log2(x)))
    np.testing.assert_array_equal(np.asarray(fg.lax.div(fnp.asarray(x), np.float32(3.0))),
                                  np.asarray(jax.lax.div(jnp.asarray(x), np.float32(3.0))))


# Complex arithmetic: XLA's products contract into fused multiply-adds, its quotients and
# square roots have their own formulas, and jax squares by chlo.square and cubes as
# (x * x) * x.  NumPy's rounds otherwise in a third or more of the elements, so eager
# complex ops run compiled and the lowerings follow jax's.
COMPLEX_OPS = {
    "multiply": lambda m, x, y: x * y,
    "divide": lambda m, x, y: x / y,
    "divide by a scalar": lambda m, x, y: x / (2 - 1j),
    "reciprocal": lambda m, x, y: 1 / x,
    "sqrt": lambda m, x, y: m.numpy.sqrt(x),
    "square": lambda m, x, y: m.numpy.square(x),
    "x ** 2": lambda m, x, y: x ** 2,
    "x ** 3": lambda m, x, y: x ** 3,
    "x ** 5": lambda m, x, y: x ** 5,
    "x ** -3": lambda m, x, y: x ** -3,
}


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", sorted(COMPLEX_OPS))
def test_complex_arithmetic_gives_xlas_bits_eagerly_and_under_jit(name, dtype):
    op = COMPLEX_OPS[name]
    rng = np.random.default_rng(1)
    x, y = ((rng.normal(size=2000) + 1j * rng.normal(size=2000)).astype(dtype)
            for _ in range(2))
    x64 = dtype == np.complex128
    with fg.enable_x64(x64), jax.enable_x64(x64):
        expected = np.asarray(op(jax, jnp.asarray(x), jnp.asarray(y)))
        eager = np.asarray(op(fg, fnp.asarray(x), fnp.asarray(y)))
        # (jitted, a constant divisor is a literal XLA may fold into a reciprocal: jax's
        # eager and jitted quotients by a complex scalar differ, and each is followed)
        expected_jitted = np.asarray(jax.jit(lambda a, b: op(jax, a, b))(x, y))
        jitted = np.asarray(fg.jit(lambda a, b: op(fg, a, b))(x, y))
    assert eager.dtype == expected.dtype
    np.testing.assert_array_equal(eager, expected)
    np.testing.assert_array_equal(jitted, expected_jitted)
