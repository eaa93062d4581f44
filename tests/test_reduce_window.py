"""lax.reduce_window (sum, max, min, and a generic monoid) and lax.reduce against jax:
eager, jit, grad (max/avg pooling included), jvp, vmap, finite differences, shapes."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax
from funcgraph.test_util import check_grads
from tests.util import assert_close, eager_and_jit

# (id, window_dimensions, window_strides, padding, base_dilation, window_dilation)
WINDOWS = [
    ("pool_2x2", (1, 2, 2, 1), (1, 2, 2, 1), "VALID", None, None),
    ("same_3x3_stride", (1, 3, 3, 1), (1, 2, 1, 1), "SAME", None, None),
    ("same_lower", (2, 2, 2, 2), (1, 1, 1, 1), "SAME_LOWER", None, None),
    ("explicit_dilated", (1, 2, 3, 1), (1, 1, 2, 1), ((0, 0), (1, 2), (0, -1), (0, 0)),
     (1, 2, 1, 1), (1, 1, 2, 1)),
]
WIDS = [w[0] for w in WINDOWS]
MONOIDS = [("add", 0.0), ("max", -np.inf), ("min", np.inf), ("mul", 1.0)]


def _x(shape=(2, 7, 6, 3), seed=0, dtype=np.float32):
    return np.random.RandomState(seed).randn(*shape).astype(dtype)


def _fns(monoid, init, window):
    _, dims, strides, padding, base, wdil = window

    def make(mod):
        return lambda x: mod.reduce_window(x, init, getattr(mod, monoid), dims, strides,
                                           padding, base, wdil)
    return make(lax), make(jax.lax)


@pytest.mark.parametrize("window", WINDOWS, ids=WIDS)
@pytest.mark.parametrize("monoid, init", MONOIDS, ids=[m for m, _ in MONOIDS])
def test_forward(monoid, init, window):
    x = _x()
    ours, theirs = _fns(monoid, init, window)
    expected = theirs(x)
    for result in eager_and_jit(ours, x):
        assert_close(result, expected, scale=10)


def _differentiable(monoid, window):
    """jax transposes neither a generic reduce_window nor max pooling with window dilation."""
    return monoid != "mul" and not (monoid in ("max", "min") and window[5] is not None)


@pytest.mark.parametrize("window", WINDOWS, ids=WIDS)
@pytest.mark.parametrize("monoid, init", MONOIDS[:3], ids=[m for m, _ in MONOIDS[:3]])
def test_grad(monoid, init, window):
    if not _differentiable(monoid, window):
        pytest.skip("jax has no VJP here either (see test_no_vjp_like_jax)")
    x = _x()
    ours, theirs = _fns(monoid, init, window)
    ct = _x(np.shape(theirs(x)), seed=1)
    expected = jax.grad(lambda x: jnp.sum(theirs(x) * ct))(x)
    loss = lambda x: fnp.sum(ours(x) * ct)  # noqa: E731
    assert_close(fg.grad(loss)(x), expected)
    assert_close(fg.jit(fg.grad(loss))(x), expected)


@pytest.mark.parametrize("window", WINDOWS, ids=WIDS)
@pytest.mark.parametrize("monoid, init", MONOIDS, ids=[m for m, _ in MONOIDS])
def test_jvp_and_vmap(monoid, init, window):
    x, t = _x(), _x(seed=2)
    ours, theirs = _fns(monoid, init, window)
    out, tangent = fg.jvp(ours, (x,), (t,))
    e_out, e_tangent = jax.jvp(theirs, (x,), (t,))
    assert_close(out, e_out, scale=10)
    assert_close(tangent, e_tangent, scale=10)
    xs = _x((2, 7, 3, 6, 3), seed=3)
    assert_close(fg.vmap(ours, 2)(xs), jax.vmap(theirs, 2)(xs), scale=10)


def test_max_pool_ties_follow_xla():
    """Ties go to the first maximum of each window, as XLA's select_and_scatter."""
    x = np.array([[1.0, 1.0, 0.0], [1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], np.float32)
    ours, theirs = _fns("max", -np.inf, ("", (2, 2), (1, 1), "SAME", None, None))
    assert_close(fg.grad(lambda x: fnp.sum(ours(x)))(x),
                 jax.grad(lambda x: jnp.sum(theirs(x)))(x))
    assert_close(fg.jit(fg.grad(lambda x: fnp.sum(ours(x))))(x),
                 jax.grad(lambda x: jnp.sum(theirs(x)))(x))


def test_pooling_gradients_vmapped_and_second_order():
    x = _x((3, 6, 6, 2))
    for monoid, init in MONOIDS[:2]:
        ours, theirs = _fns(monoid, init, WINDOWS[1])
        fl = lambda x: fnp.sum(ours(x[None]) ** 2)  # noqa: E731
        jl = lambda x: jnp.sum(theirs(x[None]) ** 2)  # noqa: E731
        assert_close(fg.vmap(fg.grad(fl))(x), jax.vmap(jax.grad(jl))(x))
        def hv(grad, f, np_mod):  # grad of a gradient's projection: second order
            return grad(lambda x: np_mod.sum(grad(f)(x) * x))(x[0])
        assert_close(hv(fg.grad, fl, fnp), hv(jax.grad, jl, jnp), scale=10)


@pytest.mark.parametrize("monoid, init", MONOIDS[:2], ids=["avg", "max"])
def test_finite_differences(monoid, init):
    x = _x((1, 5, 4, 2)) + np.arange(40, dtype=np.float32).reshape(1, 5, 4, 2) * 0.1
    ours, _ = _fns(monoid, init, WINDOWS[1])
    check_grads(ours, (x,), order=1, modes=("fwd", "rev"), atol=2e-2, rtol=2e-2)


def test_bfloat16_and_integers():
    xb = _x(dtype=jnp.bfloat16)
    for monoid, init in MONOIDS[:3]:
        ours, theirs = _fns(monoid, init, WINDOWS[1])
        for result in eager_and_jit(ours, xb):
            assert_close(result, theirs(xb), scale=2)
    xi = np.arange(24, dtype=np.int32).reshape(2, 3, 4, 1)
    for monoid, init in (("add", 0), ("max", np.iinfo(np.int32).min)):
        ours, theirs = _fns(monoid, init, WINDOWS[2])
        for result in eager_and_jit(ours, xi):
            assert_close(result, theirs(xi))


def test_generic_pytree_reduce_window():
    """A user monoid over a pair of operands: argmax pooling (value, index)."""
    x = _x((8,))
    idx = np.arange(8, dtype=np.int32)

    def pick(a, b):
        take_a = a[0] >= b[0]
        return (jnp.where(take_a, a[0], b[0]), jnp.where(take_a, a[1], b[1]))

    def fg_pick(a, b):
        take_a = a[0] >= b[0]
        return (fnp.where(take_a, a[0], b[0]), fnp.where(take_a, a[1], b[1]))

    init = (-np.inf, np.int32(0))
    expected = jax.lax.reduce_window((x, idx), init, pick, (3,), (2,), "VALID")
    actual = lax.reduce_window((x, idx), init, fg_pick, (3,), (2,), "VALID")
    for a, e in zip(actual, expected, strict=True):
        assert_close(a, e)
    jaxpr = str(fg.make_jaxpr(lambda x: lax.reduce_window(x, 1.0, lax.mul, (2,), (1,)))(x))
    assert "reduce_window[" in jaxpr and "mul" in jaxpr


def test_monoids_take_dedicated_primitives():
    x = _x((4, 4))
    assert "reduce_window_sum" in str(fg.make_jaxpr(
        lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "VALID"))(x))
    assert "reduce_window_max" in str(fg.make_jaxpr(
        lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1), "VALID"))(x))
    # a non-identity init is not the monoid: the generic primitive keeps its value
    assert_close(lax.reduce_window(x, 1.0, lax.add, (2, 2), (1, 1), "VALID"),
                 jax.lax.reduce_window(x, 1.0, jax.lax.add, (2, 2), (1, 1), "VALID"))
    text = fg.jit(lambda x: fg.grad(lambda x: fnp.sum(lax.reduce_window(
        x, -np.inf, lax.max, (2, 2), (2, 2), "VALID")))(x)).lower(x).as_text()
    assert "stablehlo.select_and_scatter" in text


def test_no_vjp_like_jax():
    x = _x((6,))
    with pytest.raises(NotImplementedError):
        fg.grad(lambda x: fnp.sum(lax.reduce_window(x, -np.inf, lax.max, (2,), (1,), "VALID",
                                                   window_dilation=(2,))))(x)


def test_reduce_window_shape_tuple():
    for args in [((7, 6), (2, 3), (1, 2), ((0, 0), (1, 1))),
                 ((7, 6), (2, 3), (2, 1), ((1, 0), (0, -1)), (2, 1), (1, 2))]:
        assert tuple(lax.reduce_window_shape_tuple(*args)) == \
            tuple(jax.lax.reduce_window_shape_tuple(*args))


# --- lax.reduce -----------------------------------------------------------------------

# An init that is not the monoid's identity is applied once by XLA's CPU backend; XLA
# leaves it implementation-defined, and its GPU backend may apply it once per partial
# reduction (on an H100 the gradient below saw it 4 times).
@pytest.mark.parametrize("monoid, init", [("add", 0.0), ("mul", 1.0), ("max", -np.inf),
                                          ("min", np.inf),
                                          pytest.param("add", 2.0, marks=pytest.mark.cpu_only)])
def test_reduce_monoids(monoid, init):
    x = _x((3, 4, 5))
    ours = lambda x: lax.reduce(x, init, getattr(lax, monoid), (0, 2))  # noqa: E731
    theirs = lambda x: jax.lax.reduce(x, init, getattr(jax.lax, monoid), (0, 2))  # noqa: E731
    for result in eager_and_jit(ours, x):
        assert_close(result, theirs(x), scale=10)
    assert_close(fg.grad(lambda x: fnp.sum(ours(x) ** 2))(x),
                 jax.grad(lambda x: jnp.sum(theirs(x) ** 2))(x), scale=10)


def test_reduce_user_monoid_pytree():
    """A monoid over pairs (sum, product): generic reduce, its JVP, VJP and vmap."""
    x = _x((4, 5))

    def make(mod, np_mod):
        def f(x):
            return mod.reduce((x, x * 0.5), (0.0, 1.0),
                              lambda a, b: (a[0] + b[0], a[1] * b[1]), (1,))
        return f, lambda x: np_mod.sum(f(x)[0] ** 2 + f(x)[1])
    (f_ours, l_ours), (f_theirs, l_theirs) = make(lax, fnp), make(jax.lax, jnp)
    for result in eager_and_jit(f_ours, x):
        for a, e in zip(result, f_theirs(x), strict=True):
            assert_close(a, e, scale=10)
    assert_close(fg.grad(l_ours)(x), jax.grad(l_theirs)(x), scale=10)
    assert_close(fg.jit(fg.grad(l_ours))(x), jax.grad(l_theirs)(x), scale=10)
    t = _x((4, 5), seed=5)
    for a, e in zip(fg.jvp(f_ours, (x,), (t,))[1], jax.jvp(f_theirs, (x,), (t,))[1], strict=True):
        assert_close(a, e, scale=10)
    xs = _x((3, 4, 5), seed=6)
    for a, e in zip(fg.vmap(f_ours, 1)(xs), jax.vmap(f_theirs, 1)(xs), strict=True):
        assert_close(a, e, scale=10)
    assert "reduce[" in str(fg.make_jaxpr(f_ours)(x))
