"""Derivatives of the elementwise primitives (JVP and transpose rules), through their
lax wrappers, against jax.jvp / jax.vjp and finite differences.

Each case is fn(lax, *float_args, *fixed_args): the float (or complex) arguments are
differentiated, the fixed ones (predicates, integer exponents) are held constant.  The
same fn runs with funcgraph.lax and jax.lax, at points where the function is smooth."""
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
from funcgraph import dtypes, lax
from funcgraph.primitives import elementwise as ew
from funcgraph.test_util import check_grads

# Casting complex to real (convert_element_type) is intended here.
pytestmark = pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")


class Case(NamedTuple):
    name: str
    fn: Callable
    floats: tuple
    fixed: tuple = ()
    finite_differences: bool = True   # False where JAX's rule is not the numerical slope
    tol: float = 2e-5


def uniform(lo, hi, *shape, seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(np.float32)


def rand(*shape, seed=0):
    return uniform(-2, 2, *shape, seed=seed)


def positive(*shape, seed=0):
    return uniform(0.3, 3, *shape, seed=seed)


def unit(*shape, seed=0):
    """Inside (-0.8, 0.8): where asin, acos, atanh and erf_inv are smooth."""
    return uniform(-0.8, 0.8, *shape, seed=seed)


def off_integers(*shape, seed=0):
    """Values at least 0.2 from any integer (and from the .5 ties of round)."""
    rng = np.random.default_rng(seed)
    frac = rng.choice([0.25, 0.3, 0.7, 0.75], shape)
    return (rng.integers(-3, 3, shape) + frac).astype(np.float32)


def nonzero(*shape, seed=0):
    x = uniform(0.3, 2, *shape, seed=seed)
    return np.where(np.arange(x.size).reshape(shape) % 2 == 0, x, -x).astype(np.float32)


def crand(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(0.3, 1.5, shape) + 1j * rng.uniform(-1, 1, shape)).astype(np.complex64)


S = (2, 3)


def unary_cases():
    domains = {
        "neg": rand, "exp": rand, "exp2": rand, "expm1": rand, "tanh": rand,
        "logistic": rand, "sin": rand, "cos": rand, "atan": rand, "sinh": rand, "cosh": rand,
        "asinh": rand, "erf": rand, "erfc": rand, "log": positive, "log1p": positive, "sqrt": positive,
        "rsqrt": positive, "asin": unit, "acos": unit, "atanh": unit, "erf_inv": unit,
        "cbrt": nonzero, "abs": nonzero, "sign": nonzero, "floor": off_integers,
        "ceil": off_integers, "lgamma": positive, "digamma": positive,
    }
    cases = [Case(name, lambda L, x, name=name: getattr(L, name)(x), (domain(*S),))
             for name, domain in domains.items()]
    cases += [
        Case("tan", lambda L, x: L.tan(x), (unit(*S),)),
        Case("acosh", lambda L, x: L.acosh(x), (uniform(1.3, 3, *S),)),
        Case("round_away", lambda L, x: L.round(x), (off_integers(*S),)),
        Case("round_even", lambda L, x: L.round(x, L.RoundingMethod.TO_NEAREST_EVEN),
             (off_integers(*S),)),
        Case("scalar_exp", lambda L, x: L.exp(x), (np.float32(0.7),)),
    ]
    cases += [Case(f"integer_pow_{y}", lambda L, x, y=y: L.integer_pow(x, y), (nonzero(*S),))
              for y in (0, 1, 2, 3, -1, -3)]
    return cases


BINARY_DOMAINS = {
    "add": (rand, rand), "sub": (rand, rand), "mul": (rand, rand), "div": (rand, nonzero),
    "atan2": (nonzero, nonzero), "pow": (positive, rand), "max": (rand, rand),
    "min": (rand, rand),
}


def binary_cases():
    cases = [Case(name, lambda L, x, y, name=name: getattr(L, name)(x, y),
                  (fx(*S), fy(*S, seed=1)))
             for name, (fx, fy) in BINARY_DOMAINS.items()]
    # A rank-0 operand next to a shaped one: its cotangent is summed.
    for name in ("add", "sub", "mul", "div", "pow", "max", "atan2"):
        fx, fy = BINARY_DOMAINS[name]
        if name == "atan2":
            fx, fy = positive, positive
        op = lambda L, x, y, name=name: getattr(L, name)(x, y)
        cases.append(Case(f"{name}_scalar_x", op, (fx(seed=2), fy(*S, seed=3))))
        cases.append(Case(f"{name}_scalar_y", op, (fx(*S, seed=4), fy(seed=5))))
    x, y = off_integers(*S), uniform(1.2, 1.9, *S, seed=1)
    y = np.where(np.abs(np.fmod(x / y, 1)) < 0.1, y + 0.3, y).astype(np.float32)
    cases += [
        Case("rem", lambda L, x, y: L.rem(x, y), (x, y)),
        Case("rem_negative_y", lambda L, x, y: L.rem(x, y), (x, -y)),
        # JAX splits the tangent equally between tied operands: not a numerical slope.
        Case("max_ties", lambda L, x, y: L.max(x, y),
             (np.array([1., 2., -3.], np.float32), np.array([1., 0., -3.], np.float32)),
             finite_differences=False),
        Case("min_ties", lambda L, x, y: L.min(x, y),
             (np.array([1., 2., -3.], np.float32), np.array([1., 5., -3.], np.float32)),
             finite_differences=False),
        Case("pow_int_exponent", lambda L, x, n: L.pow(x, n), (nonzero(*S),),
             (np.array([[0, 1, 2], [3, -1, -2]], np.int32),)),
        Case("pow_int_exponent_scalar", lambda L, x, n: L.pow(x, n), (nonzero(*S),),
             (np.int32(3),)),
        Case("pow_zero_base", lambda L, x, y: L.pow(x, y),
             (np.array([0., 0., 2.], np.float32), np.array([2., 3., 0.5], np.float32)),
             finite_differences=False),
    ]
    return cases


def bounds(L, v):
    """jax.lax.clamp cannot differentiate rank-0 bounds (its JVP selects between shapes
    () and the operand's): the oracle gets them broadcast, funcgraph keeps them rank 0."""
    return v if L is lax else jnp.broadcast_to(v, S)


def complex_of(x):
    return np.complex128 if x.dtype == np.float64 else np.complex64


def real_of(x):
    return np.float64 if x.dtype == np.complex128 else np.float32


def other_cases():
    lo, hi = np.float32(-0.5), np.float32(0.6)
    bounds_lo = np.array([[-1.7, 0.45, 0.1], [-0.5, -1.1, 0.4]], np.float32)
    bounds_hi = np.array([[-0.2, 1.5, 0.8], [0.2, -0.75, 1.0]], np.float32)
    which3 = np.array([[0, 1, 2], [2, 1, 0]], np.int32)
    return [
        Case("select_n_bool", lambda L, a, b, p: L.select_n(p, a, b), (rand(*S), rand(*S, seed=1)),
             (np.array([[True, False, True], [False, False, True]]),)),
        Case("select_n_int3", lambda L, a, b, c, p: L.select_n(p, a, b, c),
             (rand(*S), rand(*S, seed=1), rand(*S, seed=2)), (which3,)),
        Case("select_n_scalar_pred", lambda L, a, b, p: L.select_n(p, a, b),
             (rand(*S), rand(*S, seed=1)), (np.bool_(True),)),
        Case("select_n_one_case_linear", lambda L, a, p: L.select_n(p, a, np.ones(S, a.dtype)),
             (rand(*S),), (np.array([[True, False, True], [False, False, True]]),)),
        Case("clamp_scalar_bounds", lambda L, lo, x, hi: L.clamp(bounds(L, lo), x, bounds(L, hi)),
             (lo, np.array([[-1.2, -0.3, 0.1], [0.55, 0.9, 2.0]], np.float32), hi)),
        Case("clamp_array_bounds", lambda L, lo, x, hi: L.clamp(lo, x, hi),
             (bounds_lo, np.array([[-1.2, 1.0, 0.3], [-1.0, 0.3, 0.5]], np.float32),
              bounds_hi)),
        Case("clamp_operand_only", lambda L, x: L.clamp(x.dtype.type(-0.5), x, x.dtype.type(0.6)),
             (np.array([[-1.2, -0.3, 0.1], [0.55, 0.9, 2.0]], np.float32),)),
        Case("convert_f32_f16", lambda L, x: L.convert_element_type(x, jnp.float16),
             (rand(*S),), finite_differences=False, tol=2e-3),
        Case("convert_real_to_complex", lambda L, x: L.convert_element_type(x, complex_of(x)),
             (rand(*S),)),
        Case("convert_complex_to_real", lambda L, x: L.convert_element_type(x, real_of(x)),
             (crand(*S),)),
        # (jax.lax.convert_element_type takes no weak_type.)
        Case("convert_weak", lambda L, x: L.mul(L.convert_element_type(
            x, x.dtype, **({"weak_type": True} if L is lax else {})), x), (rand(*S),)),
        Case("copy", lambda L, x: L.mul(ew.copy_p.bind(x) if L is lax else jax.lax.copy_p.bind(x),
                                        x), (rand(*S),)),
        Case("chain", lambda L, x, y: L.div(L.sin(L.mul(x, y)), L.add(L.exp(x), y)),
             (rand(*S), positive(*S, seed=1))),
    ]


def complex_cases():
    z, w = crand(*S), crand(*S, seed=1)
    cases = [Case(f"complex_{name}", lambda L, x, name=name: getattr(L, name)(x), (z,))
             for name in ("neg", "exp", "log", "sin", "cos", "tanh", "sqrt", "real", "imag",
                          "conj", "abs", "expm1", "log1p", "rsqrt", "sinh", "cosh")]
    cases += [Case(f"complex_{name}", lambda L, x, y, name=name: getattr(L, name)(x, y), (z, w))
              for name in ("add", "sub", "mul", "div", "pow")]
    cases += [
        Case("complex_integer_pow", lambda L, x: L.integer_pow(x, 3), (z,)),
        Case("complex_mul_scalar", lambda L, x, y: L.mul(x, y), (np.complex64(0.5 - 1j), w)),
        Case("conj_of_real", lambda L, x: L.conj(x), (rand(*S),)),
        Case("abs_complex_zero", lambda L, x: L.abs(x),
             (np.array([0j, 1 + 1j], np.complex64),), finite_differences=False),
    ]
    return cases


CASES = unary_cases() + binary_cases() + other_cases() + complex_cases()
IDS = [c.name for c in CASES]


def bind(case, L):
    return lambda *floats: case.fn(L, *floats, *case.fixed)


def random_like(tree, seed):
    rng = np.random.default_rng(seed)
    out = []
    for x in tree:
        x = np.asarray(x)
        value = rng.standard_normal(x.shape)
        if x.dtype.kind == "c":
            value = value + 1j * rng.standard_normal(x.shape)
        out.append(value.astype(x.dtype))
    return tuple(out)


def close(actual, expected, tol=2e-5):
    actual, expected = jax.tree_util.tree_leaves(actual), jax.tree_util.tree_leaves(expected)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        a, e = np.asarray(a), np.asarray(e)
        assert a.shape == e.shape and a.dtype == e.dtype, (a.shape, a.dtype, e.shape, e.dtype)
        if a.dtype == dtypes.float0:
            continue
        np.testing.assert_allclose(a, e, rtol=tol, atol=tol)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jvp_matches_jax(case):
    tangents = random_like(case.floats, 1)
    out, t_out = fg.jvp(bind(case, lax), case.floats, tangents)
    expected_out, expected_t = jax.jvp(bind(case, jax.lax), case.floats, tangents)
    close(out, expected_out, case.tol)
    close(t_out, expected_t, case.tol)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_vjp_matches_jax(case):
    out, pullback = fg.vjp(bind(case, lax), *case.floats)
    expected_out, expected_pullback = jax.vjp(bind(case, jax.lax), *case.floats)
    (ct,) = random_like([expected_out], 2)
    close(out, expected_out, case.tol)
    close(pullback(ct), expected_pullback(ct), case.tol)


def widen(x):
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return x.astype(np.complex128)
    return x.astype(np.float64) if x.dtype.kind == "f" else x


def fd_param(case):
    return pytest.param(case, id=case.name)


FD_CASES = [fd_param(c) for c in CASES if c.finite_differences]


@pytest.mark.parametrize("case", FD_CASES)
def test_second_order_finite_differences_f64(case, x64):
    floats = tuple(widen(x) for x in case.floats)
    check_grads(bind(case, lax), floats, order=2)


def test_x64_fixture_widens():
    """The finite-difference checks really run in float64."""
    fg.config.update("jax_enable_x64", True)
    try:
        assert lax.exp(np.float64(1.0)).dtype == np.float64
    finally:
        fg.config.update("jax_enable_x64", False)


def total(L, fns, x):
    return sum(L.reduce_sum(f(L, x), (0, 1)) for f in fns)


JIT_FNS = [
    lambda L, x: L.mul(L.sin(x), L.exp(x)),
    lambda L, x: L.div(L.tanh(x), L.add(L.integer_pow(x, 2), np.float32(1))),
    lambda L, x: L.atan2(x, L.logistic(x)),
    lambda L, x: L.max(L.abs(x), L.sqrt(L.abs(x))),
    lambda L, x: L.select_n(L.gt(x, np.float32(0)), L.log1p(L.abs(x)), L.expm1(x)),
    lambda L, x: L.clamp(np.float32(-0.5), L.cos(x), np.float32(0.5)),
    lambda L, x: L.pow(L.abs(x), np.float32(1.5)),
    lambda L, x: L.erf(L.asinh(x)),
]


def test_jit_of_grad_and_hessian_diagonal():
    """Several primitives in one compiled gradient (and second derivative)."""
    x = nonzero(*S)
    grad = fg.jit(fg.grad(lambda x: total(lax, JIT_FNS, x)))
    expected = jax.grad(lambda x: total(jax.lax, JIT_FNS, x))(x)
    close(grad(x), expected, 1e-4)
    v = random_like([x], 7)[0]
    hvp = fg.jit(lambda x: fg.jvp(fg.grad(lambda x: total(lax, JIT_FNS, x)), (x,), (v,))[1])
    expected_hvp = jax.jvp(jax.grad(lambda x: total(jax.lax, JIT_FNS, x)), (x,), (v,))[1]
    close(hvp(x), expected_hvp, 1e-4)


def test_jit_grad_of_special_functions():
    x = positive(*S)
    fns = [lambda L, x: L.lgamma(x), lambda L, x: L.digamma(x), lambda L, x: L.cbrt(x),
           lambda L, x: L.erf_inv(L.div(x, np.float32(4)))]
    grad = fg.jit(fg.grad(lambda x: total(lax, fns, x)))
    close(grad(x), jax.grad(lambda x: total(jax.lax, fns, x))(x), 1e-4)


def test_complex_grad_holomorphic():
    z = crand(*S)
    f = lambda L: lambda z: L.reduce_sum(L.mul(L.exp(z), L.sin(z)), (0, 1))
    close(fg.grad(f(lax), holomorphic=True)(z), jax.grad(f(jax.lax), holomorphic=True)(z))


def test_grad_through_real_and_abs_of_complex():
    z = crand(*S)
    f = lambda L: lambda z: L.reduce_sum(L.add(L.abs(L.mul(z, z)), L.imag(L.exp(z))), (0, 1))
    close(fg.grad(f(lax))(z), jax.grad(f(jax.lax))(z), 5e-5)
    close(fg.jit(fg.grad(f(lax)))(z), jax.grad(f(jax.lax))(z), 5e-5)


# --- tangents of integer and boolean results (float0) -----------------------------

FLOAT0_CASES = {
    "eq": lambda L, x, y: L.eq(x, y), "ne": lambda L, x, y: L.ne(x, y),
    "lt": lambda L, x, y: L.lt(x, y), "le": lambda L, x, y: L.le(x, y),
    "gt": lambda L, x, y: L.gt(x, y), "ge": lambda L, x, y: L.ge(x, y),
    "is_finite": lambda L, x, y: L.is_finite(x),
    "convert_to_int": lambda L, x, y: L.convert_element_type(x, jnp.int32),
    "convert_to_bool": lambda L, x, y: L.convert_element_type(x, jnp.bool_),
    "bitcast_to_int": lambda L, x, y: L.bitcast_convert_type(x, jnp.int32),
}


@pytest.mark.parametrize("name", list(FLOAT0_CASES))
def test_integer_outputs_have_float0_tangents(name):
    fn = FLOAT0_CASES[name]
    x, y = rand(*S), rand(*S, seed=1)
    out, t = fg.jvp(lambda x, y: fn(lax, x, y), (x, y), random_like((x, y), 1))
    expected_out, expected_t = jax.jvp(lambda x, y: fn(jax.lax, x, y), (x, y),
                                       random_like((x, y), 1))
    close(out, expected_out)
    assert np.asarray(t).dtype == dtypes.float0 and np.shape(t) == S
    assert np.asarray(expected_t).dtype == jax.dtypes.float0


def test_grad_through_comparison_and_rounding_is_zero_there():
    """Comparisons feed only the predicate; floor/sign/bitcast pass no tangent."""
    x = off_integers(*S)

    def f(L, x):
        flags = L.convert_element_type(L.lt(x, np.float32(0)), jnp.float32)
        bits = L.bitcast_convert_type(L.bitcast_convert_type(x, jnp.int32), jnp.float32)
        return L.reduce_sum(L.mul(flags, x) + L.floor(x) * x + L.sign(x) + bits, (0, 1))
    close(fg.grad(lambda x: f(lax, x))(x), jax.grad(lambda x: f(jax.lax, x))(x))


def test_integer_operands_of_bit_ops_give_zero_tangents():
    i, j = np.array([3, 5, 7], np.int32), np.array([1, 2, 1], np.int32)
    fns = [lambda L, a, b: L.bitwise_and(a, b), lambda L, a, b: L.shift_left(a, b),
           lambda L, a, b: L.population_count(a), lambda L, a, b: L.bitwise_not(a)]
    for fn in fns:
        # jvp with respect to a float argument that the integer computation ignores.
        out, t = fg.jvp(lambda x: (fn(lax, i, j), x), (np.float32(1.0),), (np.float32(1.0),))
        np.testing.assert_array_equal(out[0], fn(jax.lax, i, j))
        assert np.asarray(t[0]).dtype == dtypes.float0


# --- digamma's derivative: the polygamma primitive ---------------------------------

def test_polygamma_values_and_derivatives():
    m = np.array([1., 1., 2., 3.], np.float32)
    x = np.array([0.5, 2.0, 3.0, 1.5], np.float32)
    f = lambda x: ew.polygamma_p.bind(m, x)
    close(f(x), jax.lax.polygamma(m, x), 1e-5)
    close(fg.jit(f)(x), jax.lax.polygamma(m, x), 1e-5)
    t = np.ones_like(x)
    close(fg.jvp(f, (x,), (t,))[1], jax.jvp(lambda x: jax.lax.polygamma(m, x), (x,), (t,))[1],
          1e-4)
    # digamma'' through polygamma's own rule.
    d2 = fg.grad(fg.grad(lambda x: lax.digamma(x)))(np.float32(1.5))
    close(d2, jax.grad(jax.grad(jax.lax.digamma))(np.float32(1.5)), 1e-4)


def test_nextafter_has_zero_derivative():
    """JAX defines no derivative for nextafter; funcgraph gives it a zero one (its
    output moves by one ulp at most)."""
    x, y = rand(*S), rand(*S, seed=1)
    out, t = fg.jvp(lax.nextafter, (x, y), (np.ones_like(x), np.ones_like(y)))
    close(out, jax.lax.nextafter(x, y))
    np.testing.assert_array_equal(t, np.zeros_like(x))
    np.testing.assert_array_equal(fg.grad(lambda x: lax.reduce_sum(
        lax.nextafter(x, y), (0, 1)))(x), np.zeros_like(x))


def test_polygamma_order_is_not_differentiable():
    with pytest.raises(ValueError, match="not differentiable with respect to m"):
        fg.grad(lambda m: ew.polygamma_p.bind(m, np.float32(2.0)))(np.float32(1.0))


# --- transposes directly: linear_transpose-style use through vjp -------------------

def test_transposes_of_linear_maps():
    """vjp of purely linear functions exercises each transpose rule alone."""
    x, y = rand(*S), rand(*S, seed=1)
    z = crand(*S)
    linear = [
        (lambda L, x, y: L.neg(L.sub(x, y)), (x, y)),
        (lambda L, x, y: L.add(L.mul(x, np.float32(3)), L.div(y, np.float32(2))), (x, y)),
        (lambda L, x, y: L.add(L.real(L.convert_element_type(x, jnp.complex64)),
                               L.imag(L.mul(L.conj(L.convert_element_type(y, jnp.complex64)),
                                            np.complex64(2 - 1j)))), (x, y)),
        (lambda L, z: L.add(L.real(z), L.imag(L.conj(z))), (z,)),
        (lambda L, x, y: L.select_n(L.gt(x, y), x, y), (x, y)),
    ]
    for fn, args in linear:
        out, pullback = fg.vjp(lambda *a: fn(lax, *a), *args)
        expected_out, expected_pullback = jax.vjp(lambda *a: fn(jax.lax, *a), *args)
        (ct,) = random_like([expected_out], 3)
        close(out, expected_out)
        close(pullback(ct), expected_pullback(ct))
