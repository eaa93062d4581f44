"""Exporting with symbolic (shape-polymorphic) dimensions, against jax.export: the
dimension expressions and their syntax, tracing and lowering with a symbolic batch
dimension, and artifacts that jax and funcgraph call for several batch sizes."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import core, export, nn
from tests.util import on_cpu

RNG = np.random.default_rng(0)


def _f32(*shape):
    return RNG.normal(size=shape).astype(np.float32)


def _spec(text, dtype=np.float32):
    return fg.ShapeDtypeStruct(export.symbolic_shape(text), dtype)


def _jspec(text, dtype=np.float32):
    return jax.ShapeDtypeStruct(jax.export.symbolic_shape(text), dtype)


# --- dimension expressions ------------------------------------------------------------

EXPRESSIONS = [
    lambda b, c: 2 * b + 1, lambda b, c: b - 1, lambda b, c: 1 - b, lambda b, c: b * c,
    lambda b, c: c * b + b + 3 * c, lambda b, c: b * b, lambda b, c: b // 2,
    lambda b, c: b % 2, lambda b, c: (2 * b) // 2, lambda b, c: (2 * b + 4) // 2,
    lambda b, c: b // c, lambda b, c: -b, lambda b, c: 3 * (b + 1),
    lambda b, c: (b + 1) * (b - 1), lambda b, c: c + b, lambda b, c: c * 2 * b,
    lambda b, c: b - c, lambda b, c: c * c * b + b * b * c, lambda b, c: (-b) // 2,
]


@pytest.mark.parametrize("i", range(len(EXPRESSIONS)))
def test_expression_text_is_jaxs(i):
    ours = EXPRESSIONS[i](*export.symbolic_shape("b, c"))
    theirs = EXPRESSIONS[i](*jax.export.symbolic_shape("b, c"))
    assert str(ours) == str(theirs)


def test_constant_results_are_ints_and_equality_is_structural():
    b, c = export.symbolic_shape("b, c")
    assert b - b == 0 and type(b - b) is int
    assert type(b * 0) is int
    assert (2 * b) // 2 == b and hash((2 * b) // 2) == hash(b)
    assert b != c and not (b == 1) and b * c == c * b
    assert {b + 1: "x"}[1 + b] == "x"


COMPARISONS = [
    ("b >= 1", lambda b, c: b >= 1), ("b > 0", lambda b, c: b > 0),
    ("b < 0", lambda b, c: b < 0), ("b - 1 >= 0", lambda b, c: b - 1 >= 0),
    ("b >= 2", lambda b, c: b >= 2), ("b < c", lambda b, c: b < c),
    ("b <= b*c", lambda b, c: b <= b * c), ("2*b > b", lambda b, c: 2 * b > b),
    ("mod(b, 3) < 3", lambda b, c: b % 3 < 3), ("b*c >= 1", lambda b, c: b * c >= 1),
]


@pytest.mark.parametrize("name", [n for n, _ in COMPARISONS])
def test_comparison_decided_or_inconclusive_as_jax(name):
    fn = dict(COMPARISONS)[name]
    try:
        expected = fn(*jax.export.symbolic_shape("b, c"))
    except Exception as e:  # jax's InconclusiveDimensionOperation
        assert type(e).__name__ == "InconclusiveDimensionOperation"
        with pytest.raises(fg.errors.InconclusiveDimensionOperation, match="inconclusive"):
            fn(*export.symbolic_shape("b, c"))
        return
    assert fn(*export.symbolic_shape("b, c")) == expected


def test_int_of_a_symbolic_dimension_is_inconclusive():
    (b,) = export.symbolic_shape("b")
    with pytest.raises(fg.errors.InconclusiveDimensionOperation, match="requires a constant"):
        int(b)
    with pytest.raises(fg.errors.InconclusiveDimensionOperation):
        range(b)


def test_constraints_bound_comparisons():
    (b,) = export.symbolic_shape("b", constraints=["b >= 16"])
    assert b >= 8 and b > 15
    with pytest.raises(fg.errors.InconclusiveDimensionOperation, match="b >= 16"):
        b >= 17
    (c,) = export.symbolic_shape("c", constraints=["c <= 4"])
    assert not c > 4


def test_scopes_do_not_mix():
    (b1,), (b2,) = export.symbolic_shape("b"), export.symbolic_shape("b")
    assert b1 != b2
    with pytest.raises(ValueError, match="mixing of symbolic scopes"):
        b1 + b2
    scope = export.SymbolicScope()
    (x,), (y,) = export.symbolic_shape("b", scope=scope), export.symbolic_shape("b", scope=scope)
    assert x == y


@pytest.mark.parametrize("spec", ["b, 2*b, 784", "(b, c)", "b,", "b^2, b*c, - b + 5",
                                  "mod(b, 3), floordiv(b, 2)", "3"])
def test_parse_as_jax(spec):
    assert [str(d) for d in export.symbolic_shape(spec)] == \
        [str(d) for d in jax.export.symbolic_shape(spec)]


@pytest.mark.parametrize("spec", ["b, , 3", "b + * 3", "b $ 2"])
def test_parse_errors_as_jax(spec):
    with pytest.raises(ValueError):
        jax.export.symbolic_shape(spec)
    with pytest.raises(ValueError, match="syntax error in symbolic shape"):
        export.symbolic_shape(spec)


def test_symbolic_args_specs_as_jax():
    args = (np.zeros((3, 4), np.float32), {"w": np.zeros((5,), np.int32)})
    for specs in ["b, _", ("b, _", None), ("b, 4", {"w": "c"})]:
        if specs == "b, _":
            args_ = (args[0], np.zeros((2, 7)))
        else:
            args_ = args
        ours = export.symbolic_args_specs(args_, specs)
        theirs = jax.export.symbolic_args_specs(args_, specs)
        # jax 0.11 keeps a NumPy argument's dtype (float64) in the spec and canonicalizes
        # it when exporting; jax 0.10, and funcgraph, canonicalize it here (float32).
        assert [(tuple(map(str, o.shape)), o.dtype) for o in fg.tree_util.tree_leaves(ours)] == \
            [(tuple(map(str, t.shape)), jax.dtypes.canonicalize_dtype(t.dtype))
             for t in jax.tree_util.tree_leaves(theirs)]


# --- exporting a model with a symbolic batch ------------------------------------------

def _mlp(np_, nn_):
    def mlp(params, x):
        (w1, b1), (w2, b2) = params
        h = nn_.relu(x @ w1 + b1)
        logits = np.float32(0.5) * (h @ w2 + b2)
        mean_log_probs = np_.mean(nn_.log_softmax(logits), axis=0)
        return {"logits": logits, "loss": -mean_log_probs.sum() + logits.mean(),
                "count": x.shape[0] + np_.zeros((), np.float32)}
    return mlp


PARAMS = [(_f32(4, 8), _f32(8)), (_f32(8, 3), _f32(3))]
PARAM_SPECS = [tuple(fg.ShapeDtypeStruct(a.shape, a.dtype) for a in layer) for layer in PARAMS]


@pytest.fixture(scope="module")
def mlp_export():
    return export.export(fg.jit(_mlp(fnp, nn)))(PARAM_SPECS, _spec("b, 4"))


def test_mlp_export_signature(mlp_export):
    assert [str(a) for a in mlp_export.in_avals][-1] == "float32[b,4]"
    assert sorted(str(a) for a in mlp_export.out_avals) == ["float32[]", "float32[]", "float32[b,3]"]
    assert not core.symbolic_tracing.is_active()
    text = mlp_export.mlir_module()
    assert "jax.uses_shape_polymorphism = true" in text
    assert "tensor<?x4xf32>" in text and "tensor<?x3xf32>" in text
    assert "stablehlo.get_dimension_size" in text and "@shape_assertion" in text
    assert '@_wrapped_jax_export_main(%arg0: tensor<i32> {jax.global_constant = "b"}' in text
    assert "stablehlo.dynamic_broadcast_in_dim" in text


@pytest.mark.parametrize("batch", [1, 3, 8])
def test_mlp_called_by_jax_and_funcgraph_for_every_batch(mlp_export, batch):
    x = _f32(batch, 4)
    want = jax.jit(_mlp(jnp, jax.nn))(PARAMS, x)
    from_jax = jax.export.deserialize(mlp_export.serialize()).call(PARAMS, x)
    ours = mlp_export.call(PARAMS, x)
    for k in want:
        np.testing.assert_allclose(from_jax[k], want[k], rtol=2e-6, atol=2e-6)
        np.testing.assert_allclose(ours[k], want[k], rtol=2e-6, atol=2e-6)
    assert from_jax["logits"].shape == (batch, 3)


def test_jax_rejects_a_batch_of_zero(mlp_export):
    exp = jax.export.deserialize(mlp_export.serialize())
    with pytest.raises(Exception, match="Expected value >= 1 for dimension variable 'b'"):
        exp.call(PARAMS, np.zeros((0, 4), np.float32))


def test_jax_and_funcgraph_reject_a_wrong_constant_dimension(mlp_export):
    with pytest.raises(ValueError, match="Shape mismatch"):
        mlp_export.call(PARAMS, np.zeros((2, 5), np.float32))
    with pytest.raises(ValueError):
        jax.export.deserialize(mlp_export.serialize()).call(PARAMS, np.zeros((2, 5), np.float32))


# --- the shape operations that need the dimension's value --------------------------------

def _pair(f_fg, f_jax, spec_text, batches=(1, 2, 5), cols=4):
    """Export f_fg with a symbolic spec; call it through jax and funcgraph against jax's
    numbers for f_jax."""
    exp = export.export(fg.jit(f_fg))(_spec(spec_text))
    loaded = jax.export.deserialize(exp.serialize())
    for batch in batches:
        x = _f32(batch, cols)
        want = jax.jit(f_jax)(x)
        np.testing.assert_allclose(loaded.call(x), want, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(exp.call(x), want, rtol=1e-6, atol=1e-6)
    return exp


def test_reshape_and_arange_of_a_symbolic_length():
    exp = _pair(lambda x: x.reshape(x.shape[0] * 2, 2) + fnp.arange(x.shape[0] * 2,
                                                                   dtype=np.float32)[:, None],
                lambda x: x.reshape(x.shape[0] * 2, 2) + jnp.arange(x.shape[0] * 2,
                                                                   dtype=np.float32)[:, None],
                "b, 4")
    text = exp.mlir_module()
    assert "stablehlo.dynamic_reshape" in text and "stablehlo.dynamic_iota" in text
    assert str(exp.out_avals[0]) == "float32[2*b,2]"


def test_reshape_with_minus_one():
    _pair(lambda x: fnp.reshape(x, (-1,)) * 2.0, lambda x: jnp.reshape(x, (-1,)) * 2.0, "b, 4")


def test_transpose_concatenate_select_argmax():
    _pair(lambda x: fnp.concatenate([x, fnp.where(x > 0, x, 0.1 * x)], axis=1).T,
          lambda x: jnp.concatenate([x, jnp.where(x > 0, x, 0.1 * x)], axis=1).T, "b, 4")
    _pair(lambda x: x.max(axis=0) + fnp.argmax(x, axis=1).sum() + x.min(),
          lambda x: x.max(axis=0) + jnp.argmax(x, axis=1).sum() + x.min(), "b, 4")


def test_dimension_values_with_floordiv_and_mod():
    _pair(lambda x: x.sum() * (x.shape[0] // 2) + x.shape[0] % 3 + fnp.mean(x),
          lambda x: x.sum() * (x.shape[0] // 2) + x.shape[0] % 3 + jnp.mean(x), "b, 4",
          batches=(1, 2, 3, 7))


def test_two_variables_and_a_repeated_one():
    def f(x, y):
        return (x @ y).sum(axis=0) + y.shape[0]
    exp = export.export(fg.jit(f))(*export.symbolic_args_specs(
        (np.zeros((2, 3), np.float32), np.zeros((3, 3), np.float32)), ("a, b", "b, b")))
    loaded = jax.export.deserialize(exp.serialize())
    for a, b in [(1, 1), (4, 2), (2, 5)]:
        x, y = _f32(a, b), _f32(b, b)
        np.testing.assert_allclose(loaded.call(x, y), f(x, y), rtol=1e-5)
        np.testing.assert_allclose(exp.call(x, y), f(x, y), rtol=1e-5)
    with pytest.raises(Exception, match="inconsistency"):
        loaded.call(_f32(2, 3), _f32(3, 4))


def test_constraint_is_asserted_when_called():
    exp = export.export(fg.jit(lambda x: x * 2.0))(
        fg.ShapeDtypeStruct(export.symbolic_shape("b, 2", constraints=["b >= 3"]), np.float32))
    assert "Expected value >= 3 for dimension variable 'b'" in exp.mlir_module()
    loaded = jax.export.deserialize(exp.serialize())
    np.testing.assert_allclose(loaded.call(np.ones((3, 2), np.float32)), 2.0)
    np.testing.assert_allclose(exp.call(np.ones((4, 2), np.float32)), 2.0)
    # jax reports a violated constraint of its own exports the same way: the shape
    # refinement, which evaluates the assertions, fails.
    with pytest.raises(ValueError, match="Error refining shapes"):
        loaded.call(np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match="Expected value >= 3 for dimension variable 'b'"):
        exp.call(np.ones((2, 2), np.float32))
    upper = export.export(fg.jit(lambda x: x * 2.0))(
        fg.ShapeDtypeStruct(export.symbolic_shape("b", constraints=["b <= 4"]), np.float32))
    np.testing.assert_allclose(upper.call(np.ones(4, np.float32)), 2.0)
    with pytest.raises(ValueError, match="constraint b <= 4"):
        upper.call(np.ones(5, np.float32))


# --- the VJP --------------------------------------------------------------------------

def test_vjp_of_a_symbolic_export():
    def loss(w, x):
        return fnp.mean(fnp.tanh(x @ w) ** 2)

    def jax_loss(w, x):
        return jnp.mean(jnp.tanh(x @ w) ** 2)
    exp = export.export(fg.jit(loss))(fg.ShapeDtypeStruct((4, 3), np.float32), _spec("b, 4"))
    loaded = jax.export.deserialize(exp.serialize(vjp_order=1))
    w = _f32(4, 3)
    for batch in (1, 6):
        x = _f32(batch, 4)
        want = jax.grad(jax_loss, argnums=(0, 1))(w, x)
        got = jax.grad(loaded.call, argnums=(0, 1))(w, x)
        ours = fg.grad(exp.call, argnums=(0, 1))(w, x)
        for g, o, t in zip(got, ours, want, strict=True):
            np.testing.assert_allclose(g, t, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)


# --- what is not supported says so --------------------------------------------------------

def test_unsupported_primitive_is_named():
    with pytest.raises(NotImplementedError, match="primitive 'cumsum' does not support "
                                                  "symbolic dimensions"):
        export.export(fg.jit(lambda x: fnp.cumsum(x, axis=0)))(_spec("b, 4"))
    assert not core.symbolic_tracing.is_active()


def test_concatenate_along_a_symbolic_dimension():
    exp = _pair(lambda x: fnp.concatenate([x, 2 * x], axis=0),
                lambda x: jnp.concatenate([x, 2 * x], axis=0), "b, 4")
    assert str(exp.out_avals[0]) == "float32[2*b,4]"
    _pair(lambda x: fg.grad(lambda y: (fnp.concatenate([y[:-1], 2 * y]) ** 2).sum())(x),
          lambda x: jax.grad(lambda y: (jnp.concatenate([y[:-1], 2 * y]) ** 2).sum())(x),
          "b, 4")


def test_slicing_constant_dimensions():
    _pair(lambda x: x[:, :2] * 2 + x[:, 2:] + x[:, 1:2], lambda x: x[:, :2] * 2 + x[:, 2:]
          + x[:, 1:2], "b, 4")
    exp = _pair(lambda x: x[:, 1] + x[:, ::2].sum(axis=1), lambda x: x[:, 1]
                + x[:, ::2].sum(axis=1), "b, 4")
    assert "stablehlo.real_dynamic_slice" in exp.mlir_module()


def test_slicing_a_symbolic_dimension_within_its_bounds():
    """x[1:] and x[:-1] of a dimension b (at least 1) have length b - 1 for every b, as in
    jax; their gradients pad back with stablehlo.dynamic_pad."""
    for f in (lambda x: x[1:], lambda x: x[:-1] * x.shape[0], lambda x: x[1:, 1:3]):
        _pair(f, f, "b, 4")
    _pair(lambda x: fg.lax.slice(x, (1, 0), (x.shape[0], 4)),
          lambda x: jax.lax.slice(x, (1, 0), (x.shape[0], 4)), "b, 4")
    exp = _pair(lambda x: fg.grad(lambda y: (y[1:] ** 2).sum())(x),
                lambda x: jax.grad(lambda y: (y[1:] ** 2).sum())(x), "b, 4")
    assert "stablehlo.dynamic_pad" in exp.mlir_module()


def test_slicing_a_symbolic_dimension_by_its_value_is_refused():
    """jax gives x[:16] of a dimension b the length min(b, 16); funcgraph's dimensions
    have no min or max, so slices whose clamping depends on b are refused."""
    for f in (lambda x: x[:16], lambda x: x[1:-1], lambda x: x[-2:]):
        with pytest.raises(NotImplementedError, match="depends on the value of b"):
            export.export(fg.jit(f))(_spec("b, 4"))
    with pytest.raises(NotImplementedError, match="step 1 only"):
        export.export(fg.jit(lambda x: x[::2]))(_spec("b, 4"))


def test_a_variable_only_inside_a_nonlinear_expression_is_refused():
    with pytest.raises(NotImplementedError, match="non-linear or multi-variable"):
        export.export(fg.jit(lambda x: x * 2.0))(_spec("b*c, 4"))


def test_a_variable_solved_from_a_linear_dimension():
    exp = export.export(fg.jit(lambda x: x.reshape(-1) * x.shape[0] + x.shape[0] // 2))(
        _spec("2*b + 1, 4"))
    assert str(exp.out_avals[0]) == "float32[8*b + 4]"
    loaded = jax.export.deserialize(exp.serialize())

    def f(x):
        return x.reshape(-1) * x.shape[0] + x.shape[0] // 2
    for n in (3, 7):
        x = _f32(n, 4)
        np.testing.assert_allclose(loaded.call(x), f(x), rtol=1e-6)
        np.testing.assert_allclose(exp.call(x), f(x), rtol=1e-6)
    with pytest.raises(ValueError, match="Division had remainder 1 when computing the value "
                                         "of 'b'"):
        loaded.call(np.ones((4, 4), np.float32))
    with pytest.raises(ValueError, match="Expected value >= 1 for dimension variable 'b'"):
        loaded.call(np.ones((1, 4), np.float32))


def test_dimension_value_has_no_eager_value():
    (b,) = export.symbolic_shape("b")
    with pytest.raises(NotImplementedError, match="no value outside"):
        fnp.add(b, 1)
    fg.config.update("funcgraph_eager_numpy", False)  # eager as off the CPU: compiled
    try:
        with pytest.raises(NotImplementedError, match="no value outside"):
            fnp.add(b, 1)
    finally:
        fg.config.update("funcgraph_eager_numpy", True)


def test_vjp_through_slices_of_constant_dimensions():
    def f(w, x):
        return (fnp.tanh(x[:, :2] @ w) * x[:, 3:]).sum()

    def jax_f(w, x):
        return (jnp.tanh(x[:, :2] @ w) * x[:, 3:]).sum()
    exp = export.export(fg.jit(f))(fg.ShapeDtypeStruct((2, 1), np.float32), _spec("b, 4"))
    loaded = jax.export.deserialize(exp.serialize(vjp_order=1))
    w = _f32(2, 1)
    for batch in (1, 5):
        x = _f32(batch, 4)
        want = jax.grad(jax_f, argnums=(0, 1))(w, x)
        for got in (jax.grad(loaded.call, argnums=(0, 1))(w, x),
                    fg.grad(exp.call, argnums=(0, 1))(w, x)):
            for g, t in zip(got, want, strict=True):
                np.testing.assert_allclose(g, t, rtol=1e-5, atol=1e-6)


# --- symbolic shapes outside export ------------------------------------------------------

def test_eval_shape_with_symbolic_dimensions_as_jax():
    w = np.ones((4, 3), np.float32)
    ours = fg.eval_shape(lambda x: (x @ w).reshape(-1), _spec("b, 4"))
    theirs = jax.eval_shape(lambda x: (x @ w).reshape(-1), _jspec("b, 4"))
    assert str(ours.shape) == str(theirs.shape) == "(3*b,)"
    assert str(_spec("b, 4").size) == "4*b"
    with pytest.raises(NotImplementedError, match="'cumsum'"):
        fg.eval_shape(lambda x: fnp.cumsum(x, 0), _spec("b, 4"))
    assert "f32[b,4]" in str(fg.make_jaxpr(lambda x: x.sum(0))(_spec("b, 4")))


def test_symbolic_export_for_several_platforms():
    def f(x):
        return fnp.tanh(x).sum(axis=0) / x.shape[0]
    exp = export.export(fg.jit(f), platforms=("cpu", "cuda"))(_spec("b, 4"))
    text = exp.mlir_module()
    assert '@main(%arg0: tensor<i32> {jax.global_constant = "_platform_index"}' in text
    assert ('@_wrapped_jax_export_main(%arg0: tensor<i32> {jax.global_constant = '
            '"_platform_index"}, %arg1: tensor<i32> {jax.global_constant = "b"}') in text
    loaded = jax.export.deserialize(exp.serialize())
    x = _f32(5, 4)
    want = jnp.tanh(x).sum(axis=0) / 5
    rtol = 1e-6 if on_cpu() else 1e-5  # a GPU's tanh and sum round differently
    np.testing.assert_allclose(loaded.call(x), want, rtol=rtol)
    np.testing.assert_allclose(exp.call(x), want, rtol=rtol)


def test_integer_labels_with_one_hot_and_gather_named():
    def loss(w, x, y):
        return -(nn.log_softmax(x @ w) * nn.one_hot(y, 3)).sum(axis=1).mean()

    def jax_loss(w, x, y):
        return -(jax.nn.log_softmax(x @ w) * jax.nn.one_hot(y, 3)).sum(axis=1).mean()
    args = (np.zeros((4, 3), np.float32), np.zeros((2, 4), np.float32), np.zeros(2, np.int32))
    specs = export.symbolic_args_specs(args, (None, "b, 4", "b"))
    exp = export.export(fg.jit(loss))(*specs)
    loaded = jax.export.deserialize(exp.serialize())
    w = _f32(4, 3)
    for n in (1, 6):
        x, y = _f32(n, 4), RNG.integers(0, 3, n).astype(np.int32)
        np.testing.assert_allclose(loaded.call(w, x, y), jax_loss(w, x, y), rtol=1e-6)
        np.testing.assert_allclose(exp.call(w, x, y), jax_loss(w, x, y), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="primitive 'gather'"):
        export.export(fg.jit(lambda x, y: fnp.take_along_axis(x, y[:, None], axis=1)))(
            *specs[1:])


def test_a_dimension_with_a_float_or_in_an_array_is_its_value():
    """As jax: x.shape[0] + 1.0, x / x.shape[0] and jnp.array(x.shape[0]) use the
    dimension's value (an int32 computed from the argument's shape when it runs)."""
    for fg_f, jax_f in [
            (lambda x: x.shape[0] + 1.0 + fnp.sum(x), lambda x: x.shape[0] + 1.0 + jnp.sum(x)),
            (lambda x: x / x.shape[0], lambda x: x / x.shape[0]),
            (lambda x: 2.5 * x.shape[0] - x, lambda x: 2.5 * x.shape[0] - x),
            (lambda x: x.shape[0] / 2 + x, lambda x: x.shape[0] / 2 + x),
            (lambda x: fnp.array(x.shape[0]) + x, lambda x: jnp.array(x.shape[0]) + x),
            (lambda x: fnp.array([x.shape[0], 2]).sum() * x, lambda x: jnp.array([x.shape[0], 2]).sum() * x)]:
        _pair(fg_f, jax_f, "b, 4")
