"""jax compatibility for equinox and diffrax: jax-style lowering rules that emit only
mlir.emit_python_callback (equinox's noinline), ShapeDtypeStructs closed over by
eval_shape (lineax's closure conversion), donation that aliases outputs as jax does
(Array.unsafe_buffer_pointer), XLA's JaxRuntimeError for a bad compiler option and for a
failing eager callback, callbacks handed strong-typed arrays, jax.dtypes.bfloat16 as a
scalar type, batching that keeps unbatched values unbatched through calls, conds and
custom_jvp (equinox's error_if under vmap), and LU of empty or x64 matrices."""
import os
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
import funcgraph.scipy.linalg as fsl
from funcgraph import lax
from tests.util import run_under_jax_and_alias

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

run_both = run_under_jax_and_alias


def test_equinox_noinline_through_emit_python_callback(tmp_path):
    pytest.importorskip("equinox")
    jax_out, fg_out = run_both("""
        import jax, jax.numpy as jnp, numpy as np
        import equinox as eqx

        @eqx.internal.noinline
        def g(args):
            x, y = args
            return jnp.sin(x) * y

        x, y = jnp.arange(3.0), jnp.float32(2.0)
        show = lambda a: print(np.round(np.asarray(a), 5))
        show(eqx.filter_jit(g)((x, y)))
        show(eqx.filter_jit(jax.grad(lambda x: jnp.sum(g((x, y)))))(x))
        show(eqx.filter_jit(jax.vmap(lambda x: g((x, y))))(jnp.ones((2, 3))))
    """, tmp_path)
    assert fg_out == jax_out


def test_jax_style_rule_other_than_callbacks_is_a_clear_error(tmp_path):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent("""
        import jax, jax.numpy as jnp
        from jax.interpreters import mlir
        p = jax.extend.core.Primitive("builds_mlir")
        p.def_impl(lambda x: x)
        p.def_abstract_eval(lambda x: x)
        mlir.register_lowering(p, lambda ctx, x: [x.owner.result])
        try:
            jax.jit(p.bind)(jnp.ones(2))
        except Exception as e:
            print(type(e).__name__, "written against jax's MLIR builder" in str(e))
    """))
    done = subprocess.run([sys.executable, "-m", "funcgraph", "run", str(path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.stdout.strip() == "MissingRuleError True", done.stderr[-2000:]


def test_shape_dtype_struct_closed_over():
    s = fg.ShapeDtypeStruct((3,), np.float32)
    out = fg.eval_shape(lambda: (s, {"a": fg.ShapeDtypeStruct((), np.int32)}))
    assert out == (s, {"a": fg.ShapeDtypeStruct((), np.int32)})
    assert str(fg.make_jaxpr(lambda: s)()).count("f32[3]") == 1
    with pytest.raises(TypeError, match="A ShapeDtypeStruct does not have a value"):
        fg.jit(lambda: s)()


def test_donated_input_aliases_its_output():
    f = fg.jit(lambda x: (fnp.int32(0), x + 1), donate_argnums=0)
    x = fnp.array(0.0)
    pointer = x.unsafe_buffer_pointer()
    _, y = f(x)
    assert x.is_deleted() and y.unsafe_buffer_pointer() == pointer
    text = fg.jit(lambda x: (fnp.int32(0), x + 1), donate_argnums=0).lower(
        fnp.array(0.0)).as_text()
    assert "tf.aliasing_output = 1 : i32" in text


def test_bad_compiler_option_is_jax_runtime_error():
    lowered = fg.jit(lambda x: x * 2).lower(fnp.ones(2))
    with pytest.raises(jax.errors.JaxRuntimeError, match="No such compile option"):
        lowered.compile(compiler_options={"an option that does not make sense": "bad"})


def test_eager_pure_callback_error_and_strong_arguments():
    seen = []

    def record(x):
        seen.append(x.aval.weak_type)
        return np.asarray(x)

    fg.pure_callback(record, fg.ShapeDtypeStruct((), np.float32), fnp.array(1.0))
    fg.jit(lambda x: fg.pure_callback(record, fg.ShapeDtypeStruct((), np.float32), x))(
        fnp.array(1.0))
    assert seen == [False, False]  # as jax: what the device hands over is not weak

    def boom(x):
        raise ValueError("boom")
    with pytest.raises(jax.errors.JaxRuntimeError, match="boom"):
        fg.pure_callback(boom, fg.ShapeDtypeStruct((), np.float32), fnp.array(1.0))


def test_jax_dtypes_bfloat16_is_a_scalar_type(tmp_path):
    jax_out, fg_out = run_both("""
        import jax, jax.numpy as jnp, numpy as np
        z = jax.dtypes.bfloat16(1)
        print(type(z).__name__, z, np.dtype(jax.dtypes.bfloat16), jnp.bfloat16(1.5))
        print(jnp.zeros(2, jax.dtypes.bfloat16).dtype, jnp.asarray(z).dtype)
    """, tmp_path)
    assert fg_out == jax_out


def test_vmap_keeps_unbatched_outputs_of_calls_and_custom_jvp():
    @fg.custom_jvp
    def keep(x, flag):
        return x, flag

    keep.defjvp(lambda p, t: (keep(*p), t))

    @fg.jit
    def inner(x, n):
        y, flag = keep(x, n > 2)
        return y * 2, n + 1, flag

    closed = fg.make_jaxpr(fg.vmap(inner, in_axes=(0, None)))(fnp.ones((4, 3)), 3)
    call = closed.jaxpr.eqns[0]
    assert [v.aval.shape for v in call.outvars] == [(4, 3), (), ()]
    out = fg.vmap(inner, in_axes=(0, None), out_axes=(0, None, None))(fnp.ones((4, 3)), 3)
    assert out[1] == 4 and bool(out[2])


def test_cond_with_unbatched_index_keeps_unbatched_outputs():
    def f(x, n):
        return lax.cond(n > 0, lambda x, n: (x + 1, n), lambda x, n: (x - 1, n + 1), x, n)
    out = fg.vmap(f, in_axes=(0, None), out_axes=(0, None))(fnp.ones(3), 2)
    assert out[1] == 2


def test_lu_of_empty_and_x64_strict_matrices():
    lu, piv = fsl.lu_factor(fnp.zeros((0, 0), np.float32))
    assert lu.shape == (0, 0) and piv.shape == (0,)
    with fg.enable_x64(True), fg.numpy_dtype_promotion("strict"):
        fg.config.update("jax_numpy_rank_promotion", "raise")
        try:
            a = fnp.array([[4.0, 1.0], [2.0, 3.0]])
            x = fsl.lu_solve(fsl.lu_factor(a), fnp.array([1.0, 2.0]))
        finally:
            fg.config.update("jax_numpy_rank_promotion", "allow")
    np.testing.assert_allclose(np.asarray(a) @ np.asarray(x), [1.0, 2.0], rtol=1e-6)
