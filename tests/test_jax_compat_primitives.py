"""Primitives defined the way JAX libraries define them (Primitive.def_impl /
def_abstract_eval, jax.interpreters.ad / batching / mlir tables), run on funcgraph
under `python -m funcgraph run` and compared with the real jax; plus the config flags
and small semantics libraries rely on (strict dtype promotion, rank promotion, Effect(),
named_scope as a decorator, symbolic zeros in custom_jvp / custom_vjp)."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest


def _run(code, tmp_path, alias):
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(code))
    env = dict(os.environ)
    env.pop("FUNCGRAPH_AS_JAX", None)
    args = [sys.executable, "-m", "funcgraph", "run", str(script)] if alias \
        else [sys.executable, str(script)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def both(code, tmp_path):
    """(result under real jax, result under funcgraph) of a script printing JSON."""
    return _run(code, tmp_path, alias=False), _run(code, tmp_path, alias=True)


PRIMITIVE = """
    import json
    import jax, jax.numpy as jnp
    import jax.extend.core
    import jax.core
    import jax.interpreters.ad as ad
    import jax.interpreters.batching as batching
    import jax.interpreters.mlir as mlir

    # scale(x, c) = c * x, linear in x: a primitive with every rule given JAX's way
    scale_p = jax.extend.core.Primitive("scale")
    scale_p.def_impl(lambda x, *, c: c * x)
    scale_p.def_abstract_eval(lambda x, *, c: jax.core.ShapedArray(x.shape, x.dtype))
    mlir.register_lowering(scale_p, mlir.lower_fun(lambda x, *, c: c * x,
                                                   multiple_results=False))

    def scale_jvp(primals, tangents, *, c):
        (x,), (t,) = primals, tangents
        assert type(primals) is tuple
        return scale_p.bind(x, c=c), scale_p.bind(ad.instantiate_zeros(t), c=c)

    def scale_transpose(ct, x, *, c):
        assert ad.is_undefined_primal(x)
        return [None if type(ct) is ad.Zero else scale_p.bind(ct, c=c)]

    def scale_batch(args, dims, *, c):
        assert type(dims) is tuple
        return scale_p.bind(args[0], c=c), dims[0]

    ad.primitive_jvps[scale_p] = scale_jvp
    ad.primitive_transposes[scale_p] = scale_transpose
    batching.primitive_batchers[scale_p] = scale_batch

    # pair(x) = (x + 1, 2 * x): multiple results, batching through the axis-size table
    pair_p = jax.extend.core.Primitive("pair")
    pair_p.multiple_results = True
    pair_p.def_impl(lambda x: (x + 1, 2 * x))
    pair_p.def_abstract_eval(lambda x: (x, x))
    mlir.register_lowering(pair_p, mlir.lower_fun(lambda x: (x + 1, 2 * x)))

    def pair_batch(size, name, trace_type, args, dims):
        return pair_p.bind(*args), [dims[0], dims[0]]

    batching.axis_primitive_batchers[pair_p] = pair_batch
    ad.primitive_jvps[pair_p] = lambda p, t: (pair_p.bind(*p), [t[0], 2 * t[0]])

    f = lambda x: jnp.sum(scale_p.bind(jnp.sin(x), c=3.0))
    g = lambda x: sum(jnp.sum(o) for o in pair_p.bind(x))
    x = jnp.arange(4.0)
    out = dict(
        eager=scale_p.bind(x, c=2.0).tolist(),
        jit=jax.jit(lambda x: scale_p.bind(x, c=2.0))(x).tolist(),
        vmap=jax.vmap(lambda x: scale_p.bind(x, c=2.0), in_axes=1, out_axes=1)(
            x.reshape(2, 2)).tolist(),
        jvp=jax.jvp(lambda x: scale_p.bind(x, c=2.0), (x,), (jnp.ones(4),))[1].tolist(),
        grad=jax.grad(f)(x).tolist(),
        jit_grad=jax.jit(jax.grad(f))(x).tolist(),
        vmap_grad=jax.vmap(jax.grad(f))(x.reshape(2, 2)).tolist(),
        pair=[o.tolist() for o in pair_p.bind(x)],
        pair_jit=[o.tolist() for o in jax.jit(pair_p.bind)(x)],
        pair_vmap=[o.tolist() for o in jax.vmap(pair_p.bind)(x.reshape(2, 2))],
        pair_jvp=jax.jvp(g, (x,), (jnp.ones(4),))[1].tolist(),
        in_table=scale_p in ad.primitive_jvps,
        zero=repr(ad.Zero(jax.core.ShapedArray((2,), jnp.float32))),
        tangent_aval=str(jax.typeof(jnp.ones(2, jnp.int32)).to_tangent_aval()),
    )
    print(json.dumps(out))
"""


def test_primitive_defined_as_in_jax(tmp_path):
    expected, got = both(PRIMITIVE, tmp_path)
    assert got == expected


SEMANTICS = """
    import json
    import jax, jax.numpy as jnp
    import jax.core
    from jax._src.dtypes import TypePromotionError

    out = {}
    with jax.numpy_dtype_promotion("strict"):
        out["weak_ok"] = str((jnp.ones(2, jnp.float32) * 2).dtype)
        out["int_weak_float_ok"] = str((jnp.ones(2, jnp.float32) + 1).dtype)
        for name, (a, b) in dict(f32_i32=(jnp.float32, jnp.int32),
                                 f16_f32=(jnp.float16, jnp.float32)).items():
            try:
                jnp.ones(2, a) + jnp.ones(2, b)
                out[name] = "ok"
            except TypePromotionError:
                out[name] = "TypePromotionError"
    jax.config.update("jax_numpy_rank_promotion", "raise")
    try:
        jnp.ones(3) + jnp.ones((2, 3))
        out["rank"] = "ok"
    except ValueError as e:
        out["rank"] = str(e)
    out["rank_scalar"] = (jnp.ones(3) + jnp.ones(())).tolist()
    jax.config.update("jax_numpy_rank_promotion", "allow")
    out["rank_allow"] = list((jnp.ones(3) + jnp.ones((2, 3))).shape)

    class MyEffect(jax.core.Effect):
        pass
    out["effect"] = isinstance(MyEffect(), jax.core.Effect)

    @jax.named_scope("outer")
    def h(x):
        return jnp.sin(x) * 2
    out["named_scope"] = h(jnp.ones(2)).tolist()
    print(json.dumps(out))
"""


def test_config_and_semantics(tmp_path):
    expected, got = both(SEMANTICS, tmp_path)
    assert got == expected


SYMBOLIC_ZEROS = """
    import json
    import jax, jax.numpy as jnp
    from jax.custom_derivatives import SymbolicZero, CustomVJPPrimal

    seen = {}

    @jax.custom_jvp
    def f(x, y):
        return x * y

    def f_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        seen["jvp"] = [type(t) is SymbolicZero for t in tangents]
        t = (0.0 if type(tx) is SymbolicZero else tx * y) + \\
            (0.0 if type(ty) is SymbolicZero else x * ty)
        return f(x, y), t
    f.defjvp(f_jvp, symbolic_zeros=True)

    @jax.custom_vjp
    def g(x, y):
        return x * y

    def g_fwd(x, y):
        seen["fwd"] = [type(x) is CustomVJPPrimal, x.perturbed, y.perturbed]
        return x.value * y.value, (x.value, y.value)

    def g_bwd(res, ct):
        x, y = res
        seen["bwd_zero"] = type(ct) is SymbolicZero
        return ct * y, None
    g.defvjp(g_fwd, g_bwd, symbolic_zeros=True)

    out = dict(
        jvp=float(jax.jvp(lambda x: f(x, 3.0), (2.0,), (1.0,))[1]),
        grad=float(jax.grad(lambda x: g(x, 3.0))(2.0)),
    )
    out.update(seen)
    print(json.dumps(out))
"""


def test_symbolic_zeros(tmp_path):
    expected, got = both(SYMBOLIC_ZEROS, tmp_path)
    assert got == expected


def test_primitive_methods_in_funcgraph():
    """def_impl / def_abstract_eval on funcgraph's own Primitive, without the alias."""
    import funcgraph as fg
    from funcgraph.core import Primitive, ShapedArray
    p = Primitive("double_it")
    p.def_impl(lambda x: x * 2)
    p.def_abstract_eval(lambda x: ShapedArray(list(x.shape), np.float32))
    assert np.allclose(p.bind(fg.numpy.ones(3)), 2.0)
    assert p.impl(3.0) == 6.0
    aval, effects = p.abstract_eval(ShapedArray((3,), np.dtype(np.float32)))
    assert aval.shape == (3,) and not effects
    jaxpr = fg.make_jaxpr(lambda x: p.bind(x))(fg.numpy.ones(3))
    assert jaxpr.out_avals[0].shape == (3,)  # a list shape from the rule made a tuple
    missing = Primitive("no_rules")
    with pytest.raises(NotImplementedError, match="no_rules"):
        missing.impl(1.0)
