"""Behaviours found by running JAX's documentation pages (docs/*.md, docs/new_docs) with
their imports changed to funcgraph: each test is one difference from jax, now the same."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax


def _same_repr(fg_value, jax_value):
    assert repr(fg_value) == repr(jax_value)


@pytest.mark.parametrize("case", [
    lambda L, n: L.lax.fori_loop(0, 10, lambda i, x: x + i, 0),
    lambda L, n: L.lax.fori_loop(0, 3, lambda i, x: x + 1.0, 0.0),
    lambda L, n: L.lax.fori_loop(0, 3, lambda i, x: x + 1.0, n.float32(0.0)),
    lambda L, n: L.lax.fori_loop(0, 3, lambda i, x: x + i * 0.5, 0),
    lambda L, n: L.lax.while_loop(lambda x: x < 5, lambda x: x + 1, 0),
    lambda L, n: L.lax.while_loop(lambda x: x < 5, lambda x: x + np.int32(1), 0),
    lambda L, n: L.lax.while_loop(lambda x: x < 5, lambda x: x + 0.5, 0),
    lambda L, n: L.lax.cond(True, lambda x: x, lambda x: x + 1, 1.0),
    lambda L, n: L.lax.cond(True, lambda x: x, lambda x: x + np.float32(1), 1.0),
    lambda L, n: L.lax.scan(lambda c, x: (c + 1.0, c), 0.0, None, length=3),
    lambda L, n: L.grad(lambda x: x ** 2)(3.0),
    lambda L, n: L.grad(L.grad(lambda x: n.sin(x) * x))(3.0),
    lambda L, n: L.value_and_grad(lambda x: x ** 2)(3.0),
    lambda L, n: L.vjp(lambda x: n.pi * x, 4.0)[1](1.0),
    lambda L, n: L.grad(lambda x: x ** 2)(n.float32(3.0)),
    lambda L, n: L.jit(L.grad(lambda x: x ** 2))(3.0),
    lambda L, n: L.grad(lambda x: x * np.float32(2))(3.0),
    lambda L, n: L.jacrev(lambda x: x ** 3)(3.0),
    lambda L, n: L.jacfwd(lambda x: x ** 3)(3.0),
    lambda L, n: L.jacfwd(lambda x: x * np.float32(3))(3.0),
    lambda L, n: L.hessian(lambda x: x ** 3)(3.0),
])
def test_weak_types_survive_control_flow_and_differentiation(case):
    """Control flow and gradients keep Python scalars' weak types, as jax (a bfloat16
    parameter times such a gradient stays bfloat16)."""
    _same_repr(case(fg, fnp), case(jax, jnp))


def test_a_weak_gradient_keeps_a_bfloat16_product_bfloat16():
    g = fg.grad(lambda x: x * 2.0)(1.0)
    assert (fnp.ones(3, fnp.bfloat16) * g).dtype == fnp.bfloat16
    assert (lax.fori_loop(0, 10, lambda i, x: x + i, 0) + fnp.int8(1)).dtype == fnp.int8


@pytest.mark.parametrize("axis", [0, 1, (0, 1), None])
def test_eager_float_sums_along_any_axis_keep_their_digits(axis):
    """NumPy adds in sequence along a strided axis (the mean over axis 0 of a million
    float32 0.1s was 0.10096): eagerly, as under jit, the result is within a few ulp."""
    x = np.full((1_000_000, 2), 0.1, np.float32)
    expected = np.mean(x.astype(np.float64), axis=axis)
    eager = np.asarray(fnp.mean(fg.device_put(x), axis=axis))
    np.testing.assert_allclose(eager, expected, rtol=3e-7)
    np.testing.assert_allclose(eager, fg.jit(lambda v: fnp.mean(v, axis=axis))(x), rtol=3e-7)
    small = np.full((100_000, 4), 0.1, np.float32)
    assert float(fnp.std(small, 0).max()) < 1e-7  # jax: 7.45e-9; it was 1.4e-5


def test_python_control_flow_on_tracers_raises_jax_s_error_classes():
    @fg.jit
    def f(x):
        return x if x > 0 else -x
    with pytest.raises(fg.errors.TracerBoolConversionError):
        f(1.0)
    with pytest.raises(fg.errors.ConcretizationTypeError):  # the parent class, as in jax
        f(1.0)
    with pytest.raises(fg.errors.TracerIntegerConversionError):
        fg.jit(lambda x: [1, 2][x])(1)
    with pytest.raises(fg.errors.TracerIntegerConversionError):
        fg.jit(lambda x: int(x))(1)
    assert issubclass(jax.errors.TracerBoolConversionError, jax.errors.ConcretizationTypeError)


@pytest.mark.parametrize("value", [[1, 2, 3], []])
def test_bool_of_an_array_without_exactly_one_element_is_numpy_s_value_error(value):
    with pytest.raises(ValueError) as theirs:
        bool(jnp.array(value) > 0)
    with pytest.raises(ValueError) as ours:
        bool(fnp.array(value) > 0)
    assert str(ours.value) == str(theirs.value)
    assert bool(fnp.array([[True]])) and not bool(fnp.float32(0))


def test_shape_dtype_struct_like():
    for make in (lambda n: n.arange(5.0), lambda n: np.ones(3), lambda n: 1.0,
                 lambda n: n.int8(3)):
        ours = fg.ShapeDtypeStruct.like(make(fnp))
        theirs = jax.ShapeDtypeStruct.like(make(jnp))
        assert (ours.shape, ours.dtype, ours.weak_type) == (
            theirs.shape, theirs.dtype, theirs.weak_type)
    assert fg.ShapeDtypeStruct.like(fg.ShapeDtypeStruct((2,), "float32")).shape == (2,)

    def f(x):  # the external-callbacks page's use
        return fg.pure_callback(np.sin, fg.ShapeDtypeStruct.like(x), x)
    np.testing.assert_allclose(fg.jit(f)(fnp.arange(3.0)), np.sin(np.arange(3.0)), rtol=1e-6)


def test_custom_vjp_bwd_sees_arrays_and_its_vjp_returns_arrays():
    seen = []

    def fwd(x):
        return fnp.sin(x), fnp.cos(x)

    def bwd(c, g):
        seen.append(type(c))
        return (c * g,)

    f = fg.custom_vjp(lambda x: fnp.sin(x))
    f.defvjp(fwd, bwd)
    _, f_vjp = fg.vjp(f, 3.0)
    (ct,) = f_vjp(1.0)
    assert type(ct) is fg.Array and seen == [fg.Array]
    np.testing.assert_allclose(ct, np.cos(3.0), rtol=1e-6)


def test_scipy_submodules_are_attributes_of_funcgraph_scipy():
    import funcgraph.scipy as jsp
    np.testing.assert_allclose(jsp.stats.norm.logpdf(0.0), -0.9189385, rtol=1e-6)
    assert jsp.special.erf is not None and jsp.linalg.det is not None


def test_typing_array_like_and_dtype_like():
    from funcgraph.typing import ArrayLike, DTypeLike
    assert fg.typing.ArrayLike is ArrayLike
    for ok in (fnp.ones(2), np.ones(2), np.float32(1), 1, 2.0, True, 1j):
        assert isinstance(ok, ArrayLike)
    for bad in ([1], (1,), "a", None):
        assert not isinstance(bad, ArrayLike)
    def f(x: ArrayLike, dtype: DTypeLike = "float32") -> fg.Array:  # annotations, as in jax
        return fnp.asarray(x, dtype)
    assert f(3).dtype == np.float32
    assert isinstance("float32", DTypeLike) == isinstance("float32", jax.typing.DTypeLike)


def test_jax_num_cpu_devices_sets_the_cpu_device_count_before_the_backend_starts():
    """The sharding pages start with config.update('jax_num_cpu_devices', 8); jax refuses
    the option once its backends have started, and so does funcgraph."""
    import os
    import subprocess
    import sys
    code = (
        "import funcgraph as fg\n"
        "fg.config.update('jax_num_cpu_devices', 8)\n"
        "print(len(fg.devices()))\n"
        "try:\n"
        "    fg.config.update('jax_num_cpu_devices', 4)\n"
        "except RuntimeError as e:\n"
        "    print('refused', fg.config.jax_num_cpu_devices)\n")
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["8", "refused", "8"]


@pytest.mark.parametrize("case", [
    lambda L, n: L.tree.map(lambda v: v, {"b": 1, "a": 2}),
    lambda L, n: L.tree.unflatten(*reversed(L.tree.flatten({"b": 2, "a": {"d": 1, "c": 0}}))),
    lambda L, n: list(L.grad(lambda p: p["w"] * p["b"])({"w": 2.0, "b": 1.0})),
    lambda L, n: L.jit(lambda d: d)({"b": 1.0, "a": 2.0}),
    lambda L, n: L.vmap(lambda d: d)({"b": n.ones(2), "a": n.zeros(2)}),
    lambda L, n: L.tree.map(lambda x, y: x + y, {"b": 1, "a": 2}, {"a": 10, "b": 20}),
    lambda L, n: L.tree_util.tree_map_with_path(lambda p, x: x, {"b": 1, "a": 2}),
])
def test_dicts_are_rebuilt_with_their_keys_sorted(case):
    """As jax (its pytrees page): a dict comes back with its keys in sorted order, the
    order of its leaves, whatever order it was built in."""
    assert repr(case(fg, fnp)) == repr(case(jax, jnp))


def test_dict_keys_that_do_not_sort_are_an_error():
    for tree_map in (jax.tree.map, fg.tree.map):
        with pytest.raises(ValueError, match="sorting pytree dictionary keys"):
            tree_map(lambda x: x + 1, {1: 7, "y": 42})


def test_a_pullback_shows_the_arguments_it_keeps_as_jax_s_vjp_object():
    """The vjp-objects page: f_vjp.args_res holds the arguments the backward pass keeps
    verbatim (x @ W keeps both), opaque_residuals what the forward pass computed."""
    def layer(m, W, x):
        return m.tanh(x @ W)

    W, x = np.ones((3, 3), np.float32), np.ones((2, 3), np.float32)
    _, ours = fg.vjp(lambda W, x: layer(fnp, W, x), fnp.asarray(W), fnp.asarray(x))
    _, theirs = jax.vjp(lambda W, x: layer(jnp, W, x), jnp.asarray(W), jnp.asarray(x))
    assert [a.shape for a in ours.args_res] == [a.shape for a in theirs.args_res]
    np.testing.assert_array_equal(ours.args_res[0], W)
    assert len(ours.opaque_residuals) == len(theirs.opaque_residuals)
    _, unused = fg.vjp(lambda v, w: fnp.sin(v) * 2.0 + w, fnp.ones(3), fnp.ones(3))
    assert repr(unused.args_res) == "[NotNeeded(), NotNeeded()]"
    jitted = fg.jit(lambda W, x: fg.vjp(lambda W, x: layer(fnp, W, x), W, x)[1])(W, x)
    assert [a.shape for a in jitted.args_res] == [(3, 3), (2, 3)]


def test_jax_dump_ir_to_writes_each_compiled_module(tmp_path):
    """The slow-compilation page's jax_dump_ir_to: every real compile's module, as text,
    named as jax names its dumps."""
    import os
    def scaled_sine(x):
        return fnp.sin(x) * 3.0 + 0.25

    fg.config.update("jax_dump_ir_to", str(tmp_path))
    try:
        f = fg.jit(scaled_sine)
        f(np.ones(5, np.float32))
        f(np.ones(5, np.float32))  # cached: no new compile, no new file
    finally:
        fg.config.update("jax_dump_ir_to", None)
    fg.jit(lambda x: x - 7.0)(np.ones(5, np.float32))  # off again
    names = sorted(os.listdir(tmp_path))
    assert names == ["jax_ir0000_jit_scaled_sine_compile.mlir"] or (
        len(names) == 1 and names[0].endswith("_jit_scaled_sine_compile.mlir"))
    text = (tmp_path / names[0]).read_text()
    assert "stablehlo.sine" in text and "tensor<5xf32>" in text


def test_jax_logging_level_shows_compiles_at_debug(caplog):
    import logging
    fg.config.update("jax_logging_level", "DEBUG")
    try:
        with caplog.at_level(logging.DEBUG, logger="funcgraph"):
            fg.jit(lambda x: x * 2.0 + 17.0)(np.ones(3, np.float32))
    finally:
        fg.config.update("jax_logging_level", None)
    assert any("Finished compiling" in r.getMessage() and r.levelno == logging.DEBUG
               for r in caplog.records)
    assert logging.getLogger("funcgraph").level == logging.NOTSET
    with pytest.raises(ValueError, match="jax_logging_level"):
        fg.config.update("jax_logging_level", "LOUD")


def test_modules_are_named_as_jax_names_them():
    """jit(f)'s module is @jit_f (XLA's dumps and the profiler's traces show the name)."""
    def my_step(x):
        return x + 1

    for f in (my_step, lambda x: x):
        ours = fg.jit(f).lower(1.0).as_text().splitlines()[0].split()[1]
        theirs = jax.jit(f).lower(1.0).as_text().splitlines()[0].split()[1]
        assert ours == theirs


def test_gradients_at_complex_points_are_strong_unless_holomorphic():
    for f, kwargs in [(lambda z: z.real, {}), (lambda z: abs(z), {}),
                      (lambda z: z * z, {"holomorphic": True})]:
        assert repr(fg.grad(f, **kwargs)(3.0 + 4j)) == repr(jax.grad(f, **kwargs)(3.0 + 4j))


def test_shaped_array_repr_is_jax_s():
    for value in (np.ones(3, np.int32), 1.0, np.ones((2, 3), jnp.bfloat16)):
        assert repr(fg.typeof(value)) == repr(jax.typeof(value))
        assert str(fg.typeof(value)) == str(jax.typeof(value))


def test_a_symbolic_dimension_s_scope_makes_dimensions_that_mix_with_it():
    a, = fg.export.symbolic_shape("a,", constraints=("a >= 8",))
    b, = fg.export.symbolic_shape("b,", scope=a.scope)
    assert str(a + b) == "b + a" and a.scope is b.scope


def test_an_exported_function_keeps_weak_types_until_serialized():
    ours = fg.export.export(fg.jit(lax.cos))(1.0)
    theirs = jax.export.export(jax.jit(jax.lax.cos))(1.0)
    assert repr(ours.in_avals) == repr(theirs.in_avals)
    assert repr(ours.out_avals) == repr(theirs.out_avals)
    assert repr(ours.call(1.0)) == repr(theirs.call(1.0))
    ours_back = fg.export.deserialize(ours.serialize())
    theirs_back = jax.export.deserialize(theirs.serialize())
    assert repr(ours_back.in_avals) == repr(theirs_back.in_avals)
    assert repr(ours_back.call(1.0)) == repr(theirs_back.call(1.0))


def test_stax_pooling_layers_take_a_batch_size_of_minus_one():
    """The differentially-private SGD example initializes with input shape (-1, ...)."""
    from jax.example_libraries import stax as jax_stax

    from funcgraph.example_libraries import stax
    for name, args, kwargs in [("MaxPool", ((2, 2), (1, 1)), {}), ("AvgPool", ((2, 2),), {}),
                               ("SumPool", ((2, 2),), {"padding": "SAME"})]:
        ours = getattr(stax, name)(*args, **kwargs)[0](fg.random.PRNGKey(0), (-1, 14, 14, 16))
        theirs = getattr(jax_stax, name)(*args, **kwargs)[0](jax.random.PRNGKey(0),
                                                            (-1, 14, 14, 16))
        assert ours[0] == theirs[0]
    shape = ((3, 14, 14, 16), (1, 20, 2, 1), (1, 1, 1, 1), ((0, 0),) * 4)
    assert lax.reduce_window_shape_tuple(*shape) == jax.lax.reduce_window_shape_tuple(*shape)


def test_reshard_imports_from_funcgraph_sharding():
    from funcgraph.sharding import reshard  # the spmd MNIST example's import
    assert reshard is fg.reshard


def test_compiling_logs_nothing_of_jax_s_own(caplog):
    import logging
    with caplog.at_level(logging.INFO):
        fg.jit(lambda x: x * 3.0 + 11.0)(np.ones(2, np.float32))
    assert not [r for r in caplog.records if "AutoFDO" in r.getMessage()]


def test_export_of_library_functions_and_of_a_returned_dimension():
    """The export pages: export(jnp.cos) (jax's library functions are jitted ones), and a
    function returning x.shape[0] of a symbolic dimension gives its value."""
    exp = fg.export.export(fnp.cos)(1.0)
    assert float(exp.call(0.5)) == pytest.approx(np.cos(0.5))
    with pytest.raises(ValueError, match="must be the result of `jit`"):
        fg.export.export(lambda x: x)(1.0)
    a, = fg.export.symbolic_shape("a")
    ours = fg.export.export(fg.jit(lambda x: x.shape[0]))(fg.ShapeDtypeStruct((a,), np.int32))
    ja, = jax.export.symbolic_shape("a")
    theirs = jax.export.export(jax.jit(lambda x: x.shape[0]))(
        jax.ShapeDtypeStruct((ja,), np.int32))
    assert repr(ours.out_avals) == repr(theirs.out_avals)
    x = np.ones(9, np.int32)
    assert repr(ours.call(x)) == repr(theirs.call(x))


_LIST = [1.0, 2.0, 3.0]
_LIST_CASES = {
    "sum": lambda n: n.sum(_LIST), "mean": lambda n: n.mean(_LIST),
    "sin": lambda n: n.sin(_LIST), "add": lambda n: n.add(n.ones(3), _LIST),
    "reshape": lambda n: n.reshape(_LIST, (3, 1)), "where": lambda n: n.where(True, _LIST, 0.0),
    "concatenate of lists": lambda n: n.concatenate([_LIST, _LIST]),
    "concatenate of arrays": lambda n: n.concatenate([n.ones(2), n.ones(2)]),
    "stack of arrays": lambda n: n.stack([n.ones(2), n.ones(2)]),
    "array": lambda n: n.array(_LIST), "asarray": lambda n: n.asarray(_LIST),
    "dot": lambda n: n.dot(_LIST, _LIST), "cumsum": lambda n: n.cumsum(_LIST),
    "sort": lambda n: n.sort(_LIST), "zeros_like": lambda n: n.zeros_like(_LIST),
    "array_equal": lambda n: n.array_equal(_LIST, _LIST), "max": lambda n: n.max(_LIST),
    "clip": lambda n: n.clip(_LIST, 0, 1), "pad": lambda n: n.pad(_LIST, 1),
    "linalg.norm": lambda n: n.linalg.norm(_LIST), "linalg.det": lambda n: n.linalg.det([_LIST] * 3),
    "polyval": lambda n: n.polyval(_LIST, 2.0), "cov": lambda n: n.cov([_LIST, _LIST]),
}


@pytest.mark.parametrize("case", list(_LIST_CASES))
def test_lists_are_arrays_only_where_jax_takes_them(case):
    """Common Gotchas: jnp.sum([1, 2, 3]) is a TypeError in jax (lists are taken by
    array(), asarray() and the like), with the same message in funcgraph."""
    def outcome(numpy_module):
        try:
            _LIST_CASES[case](numpy_module)
            return "ok"
        except TypeError as e:
            return str(e)
    assert outcome(fnp) == outcome(jnp)
