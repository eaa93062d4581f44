"""Automatic differentiation: the grad family, compositions, custom rules, checkpointing,
residual reports and errors, against jax and finite differences."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax
from funcgraph.test_util import check_grads


def f_both(np_mod):
    def f(x, y):
        return np_mod.sum(np_mod.sin(x) * y + np_mod.exp(x * 0.5) / (1.0 + y * y))
    return f


X = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(2, 3)
Y = np.linspace(0.5, 2.0, 6, dtype=np.float32).reshape(2, 3)


def close(a, b, tol=2e-5):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


def test_grad_matches_jax():
    close(fg.grad(f_both(fnp))(X, Y), jax.grad(f_both(jnp))(X, Y))
    close(fg.grad(f_both(fnp), argnums=(0, 1))(X, Y),
          jax.grad(f_both(jnp), argnums=(0, 1))(X, Y))


def test_value_and_grad_and_has_aux():
    def f(x):
        return fnp.sum(x ** 2), {"mean": fnp.mean(x)}
    (value, aux), g = fg.value_and_grad(f, has_aux=True)(X)
    np.testing.assert_allclose(value, np.sum(X ** 2), rtol=1e-6)
    # XLA's float32 sum (jax's bits), not NumPy's pairwise one: X's mean is about 0
    np.testing.assert_array_equal(aux["mean"], jnp.mean(X))
    close(g, 2 * X)
    g2, aux2 = fg.grad(f, has_aux=True)(X)
    close(g2, 2 * X)


def test_jvp_and_linearize_match_jax():
    t = (np.ones_like(X), np.full_like(Y, 0.5))
    close(fg.jvp(f_both(fnp), (X, Y), t), jax.jvp(f_both(jnp), (X, Y), t))
    out, f_jvp = fg.linearize(f_both(fnp), X, Y)
    close(f_jvp(*t), jax.jvp(f_both(jnp), (X, Y), t)[1])
    close(out, f_both(jnp)(X, Y))


def test_vjp_of_vector_function():
    f = lambda x: fnp.tanh(x) * x
    out, pullback = fg.vjp(f, X)
    ct = np.arange(6, dtype=np.float32).reshape(2, 3)
    close(pullback(ct), jax.vjp(lambda x: jnp.tanh(x) * x, X)[1](ct))


def test_pytree_inputs():
    params = {"w": np.ones((3, 2), np.float32), "b": np.zeros(2, np.float32)}

    def loss(p, x):
        return fnp.sum(fnp.tanh(x @ p["w"] + p["b"]) ** 2)

    def loss_jax(p, x):
        return jnp.sum(jnp.tanh(x @ p["w"] + p["b"]) ** 2)
    close(fg.grad(loss)(params, X), jax.grad(loss_jax)(params, X))


def test_higher_order():
    f = lambda x: fnp.sin(x) * x ** 3
    fj = lambda x: jnp.sin(x) * x ** 3
    x = np.float32(0.7)
    close(fg.grad(fg.grad(fg.grad(f)))(x), jax.grad(jax.grad(jax.grad(fj)))(x), 1e-4)


def test_forward_over_reverse_and_reverse_over_forward():
    f = lambda x: fnp.sum(fnp.sin(x) ** 2)
    fj = lambda x: jnp.sum(jnp.sin(x) ** 2)
    v = np.ones(3, np.float32)
    x = np.array([0.1, 0.5, 1.0], np.float32)
    hvp_fwd_rev = fg.jvp(fg.grad(f), (x,), (v,))[1]
    expected = jax.jvp(jax.grad(fj), (x,), (v,))[1]
    close(hvp_fwd_rev, expected, 1e-5)
    hvp_rev_fwd = fg.grad(lambda x: fnp.vdot(fg.jvp(f, (x,), (v,))[1], 1.0))(x)
    close(hvp_rev_fwd, expected, 1e-5)


def test_no_perturbation_confusion():
    def f(x):
        return x * fg.grad(lambda y: x * y)(3.0)
    # d/dx [x * x] = 2x
    np.testing.assert_allclose(fg.grad(f)(2.0), 4.0)
    np.testing.assert_allclose(fg.jvp(f, (2.0,), (1.0,))[1], 4.0)


def test_grad_of_jit_and_jit_of_grad():
    f = f_both(fnp)
    expected = jax.grad(f_both(jnp))(X, Y)
    close(fg.grad(fg.jit(f))(X, Y), expected)
    close(fg.jit(fg.grad(f))(X, Y), expected)
    close(fg.jit(fg.grad(fg.jit(f)))(X, Y), expected)


def test_differentiation_through_nested_jit_keeps_calls():
    inner = fg.jit(lambda x: fnp.sin(x) * x)
    f = lambda x: fnp.sum(inner(x) + inner(2 * x))
    jaxpr = fg.make_jaxpr(fg.grad(f))(X)
    assert any(e.prim.name == "pjit" for e in jaxpr.eqns)
    close(fg.grad(f)(X), jax.grad(lambda x: jnp.sum(jnp.sin(x) * x + jnp.sin(2 * x) * 2 * x))(X))


def test_stop_gradient():
    f = lambda x: fnp.sum(x * lax.stop_gradient(x))
    close(fg.grad(f)(X), X)


def test_integer_inputs_get_float0_tangents():
    f = lambda x, n: x * n
    out, tangent = fg.jvp(f, (np.float32(2), np.int32(3)),
                          (np.float32(1), np.zeros((), jax.dtypes.float0)))
    assert float(tangent) == 3.0
    g = fg.grad(lambda x, n: (x * n).sum(), argnums=1, allow_int=True)(X, np.int32(2))
    assert np.asarray(g).dtype == jax.dtypes.float0


def test_check_grads_on_a_composite():
    check_grads(lambda x, y: fnp.sum(fnp.tanh(x) * fnp.exp(-y * y)), (X.astype(np.float64),
                                                                     Y.astype(np.float64)),
                order=2)


def test_jacobians_and_hessian_match_jax():
    f = lambda x: fnp.sin(x) * fnp.sum(x ** 2)
    fj = lambda x: jnp.sin(x) * jnp.sum(x ** 2)
    x = np.array([0.3, -0.2, 0.9], np.float32)
    close(fg.jacfwd(f)(x), jax.jacfwd(fj)(x), 1e-5)
    close(fg.jacrev(f)(x), jax.jacrev(fj)(x), 1e-5)
    h = lambda x: fnp.sum(fnp.sin(x) * x ** 2)
    close(fg.hessian(h)(x), jax.hessian(lambda x: jnp.sum(jnp.sin(x) * x ** 2))(x), 1e-4)
    g = lambda x, y: {"a": x * y, "b": fnp.sum(x)}
    gj = lambda x, y: {"a": x * y, "b": jnp.sum(x)}
    close(fg.jacrev(g, argnums=(0, 1))(x, x), jax.jacrev(gj, argnums=(0, 1))(x, x), 1e-5)
    close(fg.jacfwd(g, argnums=1)(x, x), jax.jacfwd(gj, argnums=1)(x, x), 1e-5)


# --- custom rules -------------------------------------------------------------------

def test_custom_jvp():
    @fg.custom_jvp
    def safe_log1pexp(x):
        return fnp.log1p(fnp.exp(x))

    @safe_log1pexp.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return safe_log1pexp(x), t * lax.logistic(x)

    x = np.array([-3.0, 0.0, 50.0], np.float32)
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(safe_log1pexp(x)))(x),
                               1 / (1 + np.exp(-x)), rtol=1e-6)
    np.testing.assert_allclose(fg.jit(fg.grad(lambda x: fnp.sum(safe_log1pexp(x))))(x),
                               1 / (1 + np.exp(-x)), rtol=1e-6)
    np.testing.assert_allclose(safe_log1pexp(x), np.log1p(np.exp(x)), rtol=1e-6)


def test_custom_jvp_defjvps_and_nondiff_argnums():
    @fg.custom_jvp
    def f(x, y):
        return x * y

    f.defjvps(lambda t, out, x, y: t * y * 10, lambda t, out, x, y: t * x)
    assert float(fg.grad(f)(2.0, 3.0)) == 30.0

    from functools import partial

    @partial(fg.custom_jvp, nondiff_argnums=(0,))
    def app(g, x):
        return g(x)

    @app.defjvp
    def _(g, primals, tangents):
        return app(g, primals[0]), 7.0 * tangents[0]

    assert float(fg.grad(lambda x: app(fnp.sin, x))(1.0)) == 7.0


def test_custom_vjp():
    @fg.custom_vjp
    def clip_gradient(x):
        return x

    def fwd(x):
        return x, None

    def bwd(_, g):
        return (fnp.clip(g, -1.0, 1.0),)

    clip_gradient.defvjp(fwd, bwd)
    g = fg.grad(lambda x: fnp.sum(clip_gradient(x) * 5.0))(X)
    close(g, np.ones_like(X))
    close(fg.jit(fg.grad(lambda x: fnp.sum(clip_gradient(x) * 5.0)))(X), np.ones_like(X))


def test_custom_vjp_with_residuals_and_none_cotangent():
    @fg.custom_vjp
    def f(x, y):
        return fnp.sin(x) * y

    def fwd(x, y):
        return f(x, y), (fnp.cos(x), y)

    def bwd(res, g):
        cos_x, y = res
        return (cos_x * y * g, None)

    f.defvjp(fwd, bwd)
    gx, gy = fg.grad(lambda x, y: fnp.sum(f(x, y)), argnums=(0, 1))(X, Y)
    close(gx, np.cos(X) * Y)
    close(gy, np.zeros_like(Y))


def _scaled_by(m):
    """f(x, w) = w * sin(x) with a hand-written vjp, built with library m."""
    @m.custom_vjp
    def f(x, w):
        return w * m.numpy.sin(x), m.numpy.sum(w) * 2.0

    def fwd(x, w):
        return f(x, w), (m.numpy.cos(x), x, w)

    def bwd(res, cts):
        cos_x, x, w = res
        g, h = cts
        return g * w * cos_x, g * m.numpy.sin(x) + 2.0 * h

    f.defvjp(fwd, bwd)
    return f


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0)])
def test_custom_vjp_under_vmap_keeps_unbatched_inputs_and_outputs(in_axes):
    """As jax: an output that does not depend on the batch stays unbatched (out_axes None
    is accepted), and an unbatched input's cotangent sums over the batch."""
    rng = np.random.default_rng(0)
    batched, single = rng.normal(size=(3, 2)).astype(np.float32), np.float32([0.5, -1.5])
    args = [batched if a == 0 else single for a in in_axes]
    out_axes = (0, 0 if in_axes[1] == 0 else None)

    def build(m):
        f = _scaled_by(m)
        loss = lambda x, w: m.numpy.sum(m.vmap(f, in_axes, out_axes)(x, w)[0] ** 2)
        return m.vmap(f, in_axes, out_axes), m.grad(loss, argnums=(0, 1))
    (fv, fg_grad), (jv, jax_grad) = build(fg), build(jax)
    for got, want in zip(fv(*args), jv(*args), strict=True):
        close(got, want)
    for got, want in zip(fg_grad(*args), jax_grad(*args), strict=True):
        close(got, want)
    for got, want in zip(fg.jit(fg_grad)(*args), jax_grad(*args), strict=True):
        close(got, want)


def test_custom_vjp_bad_backward_structure_is_a_clear_error():
    @fg.custom_vjp
    def f(x):
        return x * 2

    f.defvjp(lambda x: (x * 2, None), lambda res, g: (g, g))
    with pytest.raises(TypeError, match="one cotangent per differentiable argument"):
        fg.grad(lambda x: fnp.sum(f(x)))(X)
    f.defvjp(lambda x: (x * 2, None), lambda res, g: (fnp.ones(7),))
    with pytest.raises(ValueError, match="cotangent 0 has shape \\(7,\\)"):
        fg.grad(lambda x: fnp.sum(f(x)))(X)


def test_custom_vjp_under_forward_mode_is_an_error():
    @fg.custom_vjp
    def f(x):
        return x * 2

    f.defvjp(lambda x: (x * 2, None), lambda res, g: (g * 2,))
    with pytest.raises(TypeError, match="forward-mode"):
        fg.jvp(f, (1.0,), (1.0,))


# --- checkpointing and residuals ------------------------------------------------------

def _deep(x):
    for _ in range(4):
        x = fnp.sin(x) * 1.5
    return x


def residual_bytes(f, *args):
    return sum(r.nbytes for r in fg.vjp(f, *args)[1].residuals)


def test_checkpoint_policies_keep_gradients_and_reduce_residuals():
    x = np.linspace(0, 1, 64, dtype=np.float32)
    loss = lambda x: fnp.sum(_deep(x))
    expected = jax.grad(lambda x: jnp.sum(_deep_jax(x)))(x)
    base = residual_bytes(loss, x)
    for policy in (None, fg.checkpoint_policies.nothing_saveable,
                   fg.checkpoint_policies.everything_saveable):
        remat_loss = lambda x: fnp.sum(fg.checkpoint(_deep, policy=policy)(x))
        close(fg.grad(remat_loss)(x), expected, 1e-5)
        close(fg.jit(fg.grad(remat_loss))(x), expected, 1e-5)
    saved_nothing = residual_bytes(lambda x: fnp.sum(fg.checkpoint(_deep)(x)), x)
    assert saved_nothing < base


def _deep_jax(x):
    for _ in range(4):
        x = jnp.sin(x) * 1.5
    return x


def test_dots_saveable_policy():
    w = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)

    def layer(x):
        return fnp.tanh(fnp.tanh(x @ w) @ w)

    x = np.ones((2, 4), np.float32)
    expected = jax.grad(lambda x: jnp.sum(jnp.tanh(jnp.tanh(x @ w) @ w)))(x)
    dots = fg.checkpoint(layer, policy=fg.checkpoint_policies.dots_saveable)
    close(fg.grad(lambda x: fnp.sum(dots(x)))(x), expected, 1e-5)
    nothing = fg.checkpoint(layer)
    assert residual_bytes(lambda x: fnp.sum(nothing(x)), x) <= \
        residual_bytes(lambda x: fnp.sum(dots(x)), x) <= residual_bytes(
            lambda x: fnp.sum(layer(x)), x)


def test_residual_report_names_source_lines():
    def f(x):
        y = fnp.sin(x)  # the line of the residual
        return fnp.sum(y * y)
    residuals = fg.vjp(f, X)[1].residuals
    assert residuals, "sin(x) * sin(x) must save values for the backward pass"
    lines = {r.source[1] for r in residuals if r.source}
    import inspect
    src_lines = inspect.getsourcelines(f)
    sin_line = src_lines[1] + 1
    assert sin_line in lines
    assert all(r.nbytes == 24 for r in residuals)


# --- errors ------------------------------------------------------------------------

def test_grad_of_non_scalar_is_an_error():
    with pytest.raises(TypeError, match="scalar output.*f32\\[2,3\\].*vjp or jacrev"):
        fg.grad(lambda x: x * 2)(X)


def test_grad_of_integer_input_is_an_error():
    with pytest.raises(TypeError, match="float or complex.*i32\\[\\]"):
        fg.grad(lambda x: x * 2.0)(np.int32(3))


def test_argnums_out_of_range_is_an_error():
    with pytest.raises(TypeError, match="argnums=2 is out of range"):
        fg.grad(lambda x, y: x * y, argnums=2)(1.0, 2.0)


def test_missing_jvp_rule_names_primitive():
    from funcgraph import core
    from funcgraph.interpreters.eval import impl_rules
    prim = core.Primitive("no_jvp_yet")
    core.shape_rules[prim] = lambda x: x
    impl_rules[prim] = lambda x: x
    with pytest.raises(core.MissingRuleError, match="'no_jvp_yet' has no JVP"):
        fg.grad(lambda x: prim.bind(x))(1.0)


def test_pullback_prints_residual_legend():
    def f(x):
        return fnp.sum(fnp.sin(x) * fnp.exp(x))
    text = repr(fg.vjp(f, X)[1])
    assert text.startswith("# residuals kept for the backward pass:")
    assert "a:f32[2,3]  24 B  from test_autodiff.py:" in text
    assert "{ lambda a:f32[2,3]" in text


def test_jit_returns_float0_cotangents_of_integer_inputs():
    f = lambda x, n: (x * n).sum()
    gx, gn = fg.jit(fg.grad(f, argnums=(0, 1), allow_int=True))(X, np.int32(2))
    close(gx, np.full_like(X, 2.0))
    assert np.asarray(gn).dtype == jax.dtypes.float0 and np.shape(gn) == ()


class _Doubler:
    def __call__(self, x):
        return x * 2.0


class _NamedOddly(_Doubler):
    """A callable whose __name__ is not a string (equinox modules rebuilt by a scan)."""
    __name__ = object()


def _wrapped_chain(f):
    seen = []
    while hasattr(f, "__wrapped__"):
        f = f.__wrapped__
        seen.append(f)
    return seen


@pytest.mark.parametrize("transform", ["grad", "vmap", "value_and_grad", "jacfwd",
                                       "jacrev", "hessian", "checkpoint"])
def test_transformed_functions_wrap_any_callable_as_jax(transform):
    """As jax's, a transformed function keeps the callable in its __wrapped__ chain
    (equinox walks it to warn about transformed callables stored in modules), and a
    callable whose __name__ cannot be copied is transformed all the same."""
    fun = _Doubler()
    assert fun in _wrapped_chain(getattr(fg, transform)(fun))
    assert fun in _wrapped_chain(getattr(jax, transform)(fun))
    odd = _NamedOddly()
    x = np.float32(1.5) if transform in ("grad", "value_and_grad", "hessian") else \
        np.ones(3, np.float32)
    close(fg.tree_util.tree_leaves(getattr(fg, transform)(odd)(x)),
          jax.tree_util.tree_leaves(getattr(jax, transform)(odd)(x)))
