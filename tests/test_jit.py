"""jit: caching, retracing, static arguments, pytrees, nesting, stages, donation."""
import logging

import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import backend, core
from funcgraph.lowering import LoweringContext, ModuleBuilder
from funcgraph.transforms import jit as jit_module


def counting(fn):
    """fn wrapped so that the number of traces is observable."""
    calls = []

    def wrapped(*args, **kwargs):
        calls.append(1)
        return fn(*args, **kwargs)
    wrapped.calls = calls
    return wrapped


def test_result_matches_eager():
    f = lambda x, y: fnp.sum(fnp.tanh(x) * y) + 2.0
    x, y = np.linspace(-1, 1, 5, dtype=np.float32), np.arange(5, dtype=np.float32)
    np.testing.assert_allclose(fg.jit(f)(x, y), f(x, y), rtol=1e-6)


def test_cache_hit_and_retrace_on_new_shape_or_dtype():
    f = counting(lambda x: x * 2)
    jf = fg.jit(f)
    jf(np.ones(3, np.float32))
    jf(np.zeros(3, np.float32))
    assert len(f.calls) == 1
    jf(np.ones(4, np.float32))
    assert len(f.calls) == 2
    jf(np.ones(4, np.int32))
    assert len(f.calls) == 3
    jf(fg.device_put(np.ones(4, np.int32)))
    assert len(f.calls) == 3  # same abstract value as the NumPy int32 array


def test_weak_type_is_part_of_the_key():
    f = counting(lambda x: x + 1)
    jf = fg.jit(f)
    assert jf(1.0).weak_type
    assert not jf(np.float32(1.0)).weak_type
    assert len(f.calls) == 2


def test_static_argnums_and_argnames():
    f = counting(lambda x, n, scale=1.0: x * n * scale)
    jf = fg.jit(f, static_argnums=1, static_argnames="scale")
    x = np.ones(2, np.float32)
    np.testing.assert_allclose(jf(x, 3), [3, 3])
    np.testing.assert_allclose(jf(x, 3, scale=2.0), [6, 6])
    np.testing.assert_allclose(jf(x, 4, scale=2.0), [8, 8])
    jf(x, 4, scale=2.0)
    assert len(f.calls) == 3


def test_static_arg_used_as_shape():
    jf = fg.jit(lambda n: fnp.zeros((n, 2)), static_argnums=0)
    assert jf(3).shape == (3, 2)


def test_unhashable_static_argument_is_a_clear_error():
    jf = fg.jit(lambda x, shape: x, static_argnums=1)
    with pytest.raises(ValueError, match="static argument 1.*unhashable type list.*tuple"):
        jf(1.0, [2, 3])


def test_pytree_arguments_and_outputs():
    def f(params, x):
        return {"out": params["w"] * x + params["b"], "aux": (x, None)}
    params = {"w": np.float32(2), "b": np.ones(3, np.float32)}
    out = fg.jit(f)(params, np.arange(3, dtype=np.float32))
    np.testing.assert_allclose(out["out"], [1, 3, 5])
    assert out["aux"][1] is None


def test_keyword_arguments():
    jf = fg.jit(lambda x, y=2.0: x - y)
    np.testing.assert_allclose(jf(np.float32(5), y=np.float32(1)), 4)


def test_closed_over_constants_become_arguments():
    table = np.arange(6, dtype=np.float32).reshape(2, 3)
    jf = fg.jit(lambda x: x @ table)
    np.testing.assert_allclose(jf(np.ones((1, 2), np.float32)), [[3, 5, 7]])
    text = jf.lower(np.ones((1, 2), np.float32)).as_text()
    assert "tensor<2x3xf32>" in text.split("->")[0]


def test_nested_jit_is_a_pjit_equation():
    inner = fg.jit(lambda x: fnp.sin(x) * 2)
    outer = lambda x: inner(x) + inner(x + 1)
    jaxpr = fg.make_jaxpr(outer)(np.ones(3, np.float32))
    assert [e.prim.name for e in jaxpr.eqns].count("pjit") == 2
    x = np.linspace(0, 1, 3, dtype=np.float32)
    np.testing.assert_allclose(fg.jit(outer)(x), outer(x), rtol=1e-6)
    np.testing.assert_allclose(outer(x), 2 * np.sin(x) + 2 * np.sin(x + 1), rtol=1e-6)


def test_nested_jit_closing_over_outer_tracer():
    def outer(x):
        y = x * 3
        return fg.jit(lambda z: z + y)(x)
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(fg.jit(outer)(x), 4 * x)


def test_stages_trace_lower_compile():
    f = lambda x: fnp.exp(x).sum()
    x = np.ones(4, np.float32)
    traced = fg.jit(f).trace(x)
    assert "exp" in str(traced.jaxpr)
    lowered = traced.lower()
    text = lowered.as_text()
    assert "stablehlo.exponential" in text and "func.func public @main" in text
    compiled = lowered.compile()
    np.testing.assert_allclose(compiled(x), 4 * np.e, rtol=1e-6)
    assert "exponential" in compiled.as_text()
    costs = compiled.cost_analysis()
    assert costs["transcendentals"] == 4
    assert compiled.memory_analysis() is not None
    with pytest.raises(TypeError, match="compiled for f32\\[4\\]"):
        compiled(np.ones(5, np.float32))


def test_modules_differing_only_in_name_share_one_compile(monkeypatch):
    """An eager op compiled alone (module jit_sin) and a jitted lambda of that op (module
    jit__lambda) are one program: XLA compiles it once, and each shows its own name."""
    compiles = []
    real = backend.compile_and_load
    monkeypatch.setattr(backend, "compile_and_load",
                        lambda *a, **k: compiles.append(a[1]) or real(*a, **k))
    x = np.linspace(0, 1, 35, dtype=np.float32).reshape(5, 7)
    fg.config.update("funcgraph_eager_numpy", False)
    try:
        eager = fnp.sin(x)
    finally:
        fg.config.update("funcgraph_eager_numpy", True)
    compiled = fg.jit(lambda a: fnp.sin(a)).lower(x).compile()
    np.testing.assert_array_equal(np.asarray(compiled(x)), np.asarray(eager))
    assert len(compiles) == 1 and compiles[0].startswith("module @jit_sin ")
    assert compiled.as_text().startswith("HloModule jit__lambda,")
    other = fg.jit(lambda a: fnp.cos(a)).lower(x).compile()
    assert len(compiles) == 2 and other.as_text().startswith("HloModule jit__lambda,")


def test_lower_with_shape_dtype_structs():
    lowered = fg.jit(lambda x: x + 1).lower(fg.ShapeDtypeStruct((2, 3), np.float32))
    assert "tensor<2x3xf32>" in lowered.as_text()


def test_eval_shape_and_make_jaxpr_agree():
    f = lambda x: (x @ x.T, x.sum(axis=0))
    x = np.ones((3, 5), np.float32)
    shapes = fg.eval_shape(f, x)
    assert shapes[0].shape == (3, 3) and shapes[1].shape == (5,)
    assert [a.shape for a in fg.make_jaxpr(f)(x).out_avals] == [(3, 3), (5,)]


def test_explain_cache_misses(caplog):
    fg.config.update("jax_explain_cache_misses", True)
    try:
        jf = fg.jit(lambda x, n: x * n, static_argnums=1)
        with caplog.at_level(logging.WARNING, logger="funcgraph.jit"):
            jf(np.ones(3, np.float32), 2)
            jf(np.ones(4, np.float32), 2)
            jf(np.ones(4, np.float32), 3)
    finally:
        fg.config.update("jax_explain_cache_misses", False)
    messages = jit_module.retrace_log[-3:]
    assert "first time" in messages[0]
    assert "argument args[0] changed from f32[3] to f32[4]" in messages[1]
    assert "static argument 1 changed from 2 to 3" in messages[2]
    assert any("retraced" in r.message for r in caplog.records)


def test_python_control_flow_on_traced_value_is_a_clear_error():
    def f(x):
        if x > 0:
            return x
        return -x
    with pytest.raises(fg.ConcretizationTypeError, match="bool\\[\\].*jit.*lax.cond.*static_argnums"):
        fg.jit(f)(1.0)


def test_compiled_eager_mode_matches_numpy_mode():
    x = fnp.asarray(np.linspace(0.1, 1, 4, dtype=np.float32))
    expected = fnp.log(x) * x
    fg.config.update("funcgraph_eager_numpy", False)
    try:
        compiled = fnp.log(x) * x
    finally:
        fg.config.update("funcgraph_eager_numpy", True)
    np.testing.assert_allclose(compiled, expected, rtol=1e-6)


def test_jit_as_decorator_with_options():
    @fg.jit
    def f(x):
        return x + 1

    @fg.jit(static_argnames=("n",))
    def g(x, n):
        return x * n
    assert float(f(1.0)) == 2.0
    assert float(g(2.0, n=3)) == 6.0


def test_donate_argnums_is_accepted():
    jf = fg.jit(lambda x: x * 2, donate_argnums=0)
    x = fg.device_put(np.ones(3, np.float32))
    np.testing.assert_allclose(jf(x), [2, 2, 2])


def test_donate_argnames_donates_positional_and_keyword_arguments():
    """As jax.jit: a named parameter is donated however it is passed, and donate_argnums
    and donate_argnames name the same parameters."""
    step = lambda params, grads, lr=0.1: fg.tree_util.tree_map(lambda p, g: p - lr * g,
                                                               params, grads)
    f = fg.jit(step, donate_argnames="params")
    assert (f.donate_argnums, f.donate_argnames) == ((0,), ("params",))
    assert fg.jit(step, donate_argnums=1).donate_argnames == ("grads",)
    for call in (lambda p, g: f(p, g), lambda p, g: f(params=p, grads=g),
                 lambda p, g: f(p, grads=g)):
        p = {"w": fg.device_put(np.ones(3, np.float32))}
        g = {"w": fg.device_put(np.ones(3, np.float32))}
        np.testing.assert_allclose(call(p, g)["w"], [0.9] * 3, rtol=1e-6)
        assert p["w"].is_deleted() and not g["w"].is_deleted()
    with pytest.raises(ValueError, match=r"donate_argnames names \['y'\]"):
        fg.jit(lambda x: x, donate_argnames="y")


def test_inline_puts_the_equations_in_the_enclosing_program():
    inner = fg.jit(lambda y: y * 2.0, inline=True)
    jaxpr = fg.make_jaxpr(lambda x: inner(x) + 1.0)(1.0)
    assert [e.prim.name for e in jaxpr.jaxpr.eqns] == ["mul", "add"]
    assert [e.prim.name for e in fg.make_jaxpr(lambda x: fg.jit(lambda y: y * 2.0)(x))(
        1.0).jaxpr.eqns] == ["pjit"]
    assert float(inner(3.0)) == 6.0  # called eagerly it is compiled as usual
    assert float(fg.grad(fg.jit(lambda y: fnp.sin(y) * 2, inline=True))(0.0)) == 2.0


def _main_signature(text):
    return next(line for line in text.splitlines() if "func.func public @main" in line)


def test_unused_arguments_are_dropped_unless_keep_unused():
    """As jax.jit: by default the program takes only the arguments it reads (after
    optimization); the others are neither transferred nor passed, and not donated;
    keep_unused=True keeps them all."""
    import jax
    f = lambda x, y, z: x * 2.0 + z
    assert _main_signature(fg.jit(f).lower(1.0, 2.0, 3.0).as_text()).count("%arg") == 2
    assert _main_signature(jax.jit(f).lower(1.0, 2.0, 3.0).as_text()).count("%arg") == 2
    kept = fg.jit(f, keep_unused=True).lower(1.0, 2.0, 3.0).as_text()
    assert _main_signature(kept).count("%arg") == 3
    dead = fg.device_put(np.ones(3, np.float32))
    dead.delete()
    spec = fg.ShapeDtypeStruct((3,), np.float32)
    for jitted in (fg.jit(f), fg.jit(f).lower(1.0, spec, 3.0).compile()):
        assert float(jitted(1.0, dead, 3.0)) == 5.0  # the dropped argument is never read
    assert float(fg.jit(f, keep_unused=True)(1.0, 2.0, 3.0)) == 5.0
    with pytest.raises(RuntimeError, match="deleted"):
        fg.jit(f, keep_unused=True)(1.0, dead, 3.0)
    # keyword arguments and containers
    h = fg.jit(lambda p, *, scale, unused: p["w"] * scale)
    np.testing.assert_allclose(h({"w": np.ones(2), "b": np.zeros(2)}, scale=3.0,
                                 unused=np.ones(1000)), [3.0, 3.0])
    # donated but unused: not deleted (jax keeps it too); the used one is
    d = fg.jit(lambda a, b: a + 1.0, donate_argnums=(0, 1))
    a, b = fg.device_put(np.ones(3, np.float32)), fg.device_put(np.ones(3, np.float32))
    np.testing.assert_allclose(d(a, b), [2, 2, 2])
    assert a.is_deleted() and not b.is_deleted()


def test_programs_over_devices_keep_their_unused_arguments():
    device = fg.devices()[0]
    f = fg.jit(lambda x, y: x * 2.0, out_shardings=fg.sharding.SingleDeviceSharding(device))
    assert _main_signature(f.lower(1.0, 2.0).as_text()).count("%arg") == 2
    assert float(f(1.0, 2.0)) == 2.0


def test_device_and_backend_place_the_program_with_jaxs_deprecation():
    device = fg.devices()[0]
    for options in (dict(device=device), dict(backend=device.platform)):
        with pytest.warns(DeprecationWarning, match="backend and device argument on jit"):
            f = fg.jit(lambda x: x * 2, **options)
        out = f(np.ones(2, np.float32))
        np.testing.assert_allclose(out, [2, 2])
        assert out.sharding == fg.sharding.SingleDeviceSharding(device)
    with pytest.warns(DeprecationWarning), \
            pytest.raises(ValueError, match="can't specify both a device and a backend"):
        fg.jit(lambda x: x, device=device, backend="cpu")
    with pytest.warns(DeprecationWarning), \
            pytest.raises(ValueError, match="then out_shardings should not be specified"):
        fg.jit(lambda x: x, device=device,
               out_shardings=fg.sharding.SingleDeviceSharding(device))


def test_compiler_options_reach_xla():
    """XLA options per jit (and per Lowered.compile), with XLA's own error for a bad one."""
    import jax
    import jax.numpy as jnp
    x = np.linspace(-30, 30, 4001, dtype=np.float32)
    fast = {"xla_cpu_enable_fast_math": True}
    f = fg.jit(lambda v: fnp.tanh(v) / (1 + fnp.exp(-v)), compiler_options=fast)
    want = jax.jit(lambda v: jnp.tanh(v) / (1 + jnp.exp(-v)), compiler_options=fast)(x)
    np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(want))
    assert not np.array_equal(np.asarray(f(x)), np.asarray(fg.jit(f.fun)(x)))  # it mattered
    assert f.compiler_options == (("xla_cpu_enable_fast_math", True),)
    g = fg.jit(lambda v: v * 2.0)
    assert float(g.lower(3.0).compile(compiler_options={"xla_backend_optimization_level": 0})(
        3.0)) == 6.0
    with pytest.raises(RuntimeError, match="No such compile option: 'bogus_option'"):
        fg.jit(lambda v: v + 1.0, compiler_options={"bogus_option": True})(1.0)
    with pytest.raises(TypeError, match="compiler_options must be a dict"):
        fg.jit(lambda v: v, compiler_options=["xla_cpu_enable_fast_math"])


def test_stages_describe_the_function_as_jax_stages_do():
    """Traced, Lowered and Compiled carry jax's descriptions: the argument and output
    trees and types, which arguments are donated, shardings, the MLIR module and the
    runtime executable."""
    import jax
    fun = lambda x, y, *, z: (x * 2, {"a": y + z})
    args, kwargs = (np.ones(3, np.float32), 1.0), dict(z=np.float32(2))
    stages = []
    for mod in (fg, jax):
        traced = mod.jit(fun, donate_argnums=1).trace(*args, **kwargs)
        stages.append((traced, traced.lower(), traced.lower().compile()))
    (t, lo, c), (jt, jlo, jc) = stages
    assert t.fun_name == jt.fun_name == "<lambda>"
    for ours, theirs in [(t, jt), (lo, jlo), (c, jc)]:
        assert ours.donate_argnums == theirs.donate_argnums == (1,)
        flat = fg.tree_util.tree_leaves(ours.args_info)
        want = jax.tree_util.tree_leaves(theirs.args_info)
        assert [(a.shape, a.dtype, a.donated) for a in flat] == \
            [(a.shape, a.dtype, a.donated) for a in want]
        assert [(a.shape, a.dtype) for a in fg.tree_util.tree_leaves(ours.out_info)] == \
            [(a.shape, a.dtype) for a in jax.tree_util.tree_leaves(theirs.out_info)]
    for ours, theirs in [(t.in_avals, jt.in_avals), (t.out_avals, jt.out_avals),
                         (lo.in_avals, jlo.in_avals)]:
        assert str(fg.tree_util.tree_structure(ours)).replace("PyTreeSpec", "") == \
            str(jax.tree_util.tree_structure(theirs)).replace("PyTreeDef", "")
        assert [a.shape for a in fg.tree_util.tree_leaves(ours)] == \
            [a.shape for a in jax.tree_util.tree_leaves(theirs)]
    assert lo.in_tree.num_leaves == 3 and c.out_tree.num_leaves == 2
    assert "func.func public @main" in str(lo.compiler_ir("stablehlo"))
    assert lo.cost_analysis()["flops"] == jlo.cost_analysis()["flops"] == 4.0
    assert "ENTRY" in lo.compiler_ir("hlo").as_hlo_text()
    with pytest.raises(ValueError, match="unknown dialect"):
        lo.compiler_ir("mhlo")
    device = fg.devices()[0]
    assert fg.tree_util.tree_leaves(c.input_shardings) == \
        [fg.sharding.SingleDeviceSharding(device)] * 3
    assert fg.tree_util.tree_leaves(c.output_shardings) == \
        [fg.sharding.SingleDeviceSharding(device)] * 2
    assert hasattr(c.runtime_executable(), "execute_sharded")
    out = c(*args, **kwargs)
    np.testing.assert_allclose(out[0], [2, 2, 2])


def test_compiled_functions_take_the_dynamic_arguments_only():
    """As in JAX's AOT guide: static arguments given to lower are part of the program;
    the compiled function takes the others, and cannot be transformed."""
    f = lambda x, y: 2 * x + y
    compiled = fg.jit(f, static_argnums=0).lower(7, 8).compile()
    assert int(compiled(5)) == 19
    g = fg.jit(lambda x, *, n: x * n, static_argnames="n").lower(2.0, n=3).compile()
    assert float(g(4.0)) == 12.0
    plain = fg.jit(f).lower(3, 4).compile()
    with pytest.raises(TypeError, match="Cannot apply transformations to a function lowered "
                                        "and compiled"):
        fg.vmap(plain)(np.ones(3, np.int32), np.ones(3, np.int32))
    with pytest.raises(TypeError, match="argument 0 has type f32"):
        plain(np.ones(3, np.float32), 1)


def test_zero_outputs_and_constant_outputs():
    assert fg.jit(lambda x: ())(1.0) == ()
    out = fg.jit(lambda x: (x, 3.0))(np.float32(1))
    assert float(out[1]) == 3.0 and out[1].weak_type


def test_method_jit():
    class Model:
        scale = 3.0

        @fg.jit
        def apply(self, x):
            return x * self.scale
    with pytest.raises(TypeError):
        Model().apply(np.ones(2, np.float32))  # self is not an array: JAX errors too


def test_constants_without_elements_lower_as_broadcast_scalars():
    """XLA's GPU backend rejects a constant with no elements (s32[3,0]): such constants
    (closed-over values of bodies, lowering rules' tables) are a broadcast scalar."""
    ctx = LoweringContext(ModuleBuilder())
    i32 = np.dtype(np.int32)
    ctx.constant(np.zeros((3, 0), i32), core.ShapedArray((3, 0), i32))
    ctx.constant(np.arange(3, dtype=i32), core.ShapedArray((3,), i32))
    constants = [line for line in ctx.lines if "stablehlo.constant" in line]
    assert [c.split(" : ")[-1] for c in constants] == ["() -> tensor<i32>",
                                                     "() -> tensor<3xi32>"]
    assert any("broadcast_in_dim" in line and "tensor<3x0xi32>" in line for line in ctx.lines)


def test_jit_made_again_of_one_function_shares_its_traces():
    """As in jax (its Common Gotchas page): `jit(f)(x)` written in a loop traces once,
    and a global the function reads keeps its traced value; other options, or another
    function, trace anew; the caches go when the function does."""
    import gc
    import weakref
    traces = []

    def f(x):
        traces.append(1)
        return x * 2

    for _ in range(3):
        fg.jit(f)(1.0)
    assert len(traces) == 1
    fg.jit(f, donate_argnums=0)(np.ones(2, np.float32))
    assert len(traces) == 2
    fg.jit(f).clear_cache()
    fg.jit(f)(1.0)
    assert len(traces) == 3

    offset = {"value": 0.0}

    def g(x):
        return x + offset["value"]

    assert float(fg.jit(g)(4.0)) == 4.0
    offset["value"] = 10.0
    assert float(fg.jit(g)(5.0)) == 5.0  # jax gives 5.0 too

    ref = weakref.ref(g)
    del g
    gc.collect()
    assert ref() is None
