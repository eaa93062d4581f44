"""funcgraph.export against jax.export: funcgraph's artifacts run in a program that
imports only jax (a subprocess), jax's artifacts run in funcgraph (eagerly, under jit
and grad), round trips, and the errors of bad calls."""
import json
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import export, lax

RNG = np.random.default_rng(0)
PARAMS = {"w1": RNG.normal(size=(4, 8)).astype(np.float32),
          "b1": RNG.normal(size=8).astype(np.float32),
          "w2": RNG.normal(size=(8, 3)).astype(np.float32)}
X = RNG.normal(size=(5, 4)).astype(np.float32)
XS = np.linspace(-1, 1, 6).astype(np.float32)


def mlp(params, x):
    h = fnp.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"]
    return {"logits": out, "stats": (fnp.mean(h), fnp.max(out))}


def mlp_loss(params, x):
    out = mlp(params, x)
    return fnp.sum(out["logits"] ** 2) + out["stats"][0]


def control_flow(x, n):
    def body(c, xi):
        c = lax.cond(xi > 0, lambda c: c * 1.5 + xi, lambda c: c - xi, c)
        return c, c * 2
    c, ys = lax.scan(body, 0.0, x)
    return lax.fori_loop(0, n, lambda i, v: v + fnp.sin(v), c), ys


def spec(x):
    return fg.ShapeDtypeStruct(np.shape(x), np.asarray(x).dtype)


def specs(tree):
    return fg.tree_util.tree_map(spec, tree)


@pytest.fixture(scope="module")
def mlp_export():
    return export.export(fg.jit(mlp))(*specs((PARAMS, X)))


def assert_tree_close(a, b, rtol=1e-5, atol=1e-5):
    la, ta = fg.tree_util.tree_flatten(a)
    lb, tb = fg.tree_util.tree_flatten(b)
    assert ta == tb
    for x, y in zip(la, lb, strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


# --- the Exported ------------------------------------------------------------------------

def test_fields_match_jax_export(mlp_export):
    def mlp(params, x):  # jax's twin of the module's mlp
        h = jnp.tanh(x @ params["w1"] + params["b1"])
        out = h @ params["w2"]
        return {"logits": out, "stats": (jnp.mean(h), jnp.max(out))}
    ref = jax.export.export(jax.jit(mlp))(PARAMS, X)
    exp = mlp_export
    assert exp.fun_name == ref.fun_name == "mlp"
    assert [(a.shape, a.dtype) for a in exp.in_avals] == \
        [(a.shape, a.dtype) for a in ref.in_avals]
    assert [(a.shape, a.dtype) for a in exp.out_avals] == \
        [(a.shape, a.dtype) for a in ref.out_avals]
    assert str(exp.in_tree).replace("PyTreeSpec", "PyTreeDef") == str(ref.in_tree)
    assert exp.out_tree == fg.tree_util.tree_structure({"logits": 0, "stats": (0, 0)})
    assert exp.platforms == ref.platforms == (jax.export.default_export_platform(),)
    assert exp.nr_devices == ref.nr_devices == 1
    assert exp.calling_convention_version == ref.calling_convention_version
    assert exp.in_shardings_hlo == ref.in_shardings_hlo == (None,) * 4
    assert exp.out_shardings_hlo == ref.out_shardings_hlo == (None,) * 3
    assert exp.module_kept_var_idx == (0, 1, 2, 3)
    assert not exp.uses_global_constants and not exp.ordered_effects
    text = exp.mlir_module()
    assert "func.func public @main" in text
    assert "jax.uses_shape_polymorphism = false" in text
    assert "mhlo.num_partitions = 1" in text
    assert '{jax.result_info = "result[\'stats\'][0]"}' in text


def test_call_eagerly_under_jit_and_grad(mlp_export):
    expected = fg.jit(mlp)(PARAMS, X)
    assert_tree_close(mlp_export.call(PARAMS, X), expected)
    jitted = fg.jit(lambda p, x: mlp_export.call(p, x)["stats"][1] * 2.0)(PARAMS, X)
    np.testing.assert_allclose(jitted, expected["stats"][1] * 2.0, rtol=1e-6)

    def loss_of_export(params, x):
        out = mlp_export.call(params, x)
        return fnp.sum(out["logits"] ** 2) + out["stats"][0]
    assert_tree_close(fg.grad(loss_of_export, argnums=(0, 1))(PARAMS, X),
                      fg.grad(mlp_loss, argnums=(0, 1))(PARAMS, X), rtol=1e-4)


def test_round_trip_funcgraph_to_funcgraph(mlp_export):
    blob = mlp_export.serialize(vjp_order=1)
    assert isinstance(blob, bytearray)
    back = export.deserialize(blob)
    for field in ("fun_name", "in_tree", "out_tree", "in_avals", "out_avals", "platforms",
                  "nr_devices", "module_kept_var_idx", "calling_convention_version",
                  "mlir_module_serialized", "uses_global_constants"):
        assert getattr(back, field) == getattr(mlp_export, field), field
    assert_tree_close(back.call(PARAMS, X), mlp_export.call(PARAMS, X))
    grads = fg.grad(lambda p: back.call(p, X)["stats"][0])(PARAMS)
    assert_tree_close(grads, fg.grad(lambda p: mlp(p, X)["stats"][0])(PARAMS), rtol=1e-4)
    vjp = back.vjp()
    assert [a.shape for a in vjp.in_avals] == [(8,), (4, 8), (8, 3), (5, 4), (5, 3), (), ()]
    assert [a.shape for a in vjp.out_avals] == [(8,), (4, 8), (8, 3), (5, 4)]


def test_grad_without_serialized_vjp_is_jax_error(mlp_export):
    back = export.deserialize(mlp_export.serialize())
    assert not back.has_vjp()
    with pytest.raises(ValueError, match="No VJP is available"):
        fg.grad(lambda p: back.call(p, X)["stats"][0])(PARAMS)


# --- funcgraph's artifacts in a program with only jax -------------------------------------

JAX_ONLY_PROGRAM = textwrap.dedent("""
    import json, sys
    import numpy as np
    import jax
    from jax import export
    assert not any(m.startswith("funcgraph") for m in sys.modules)
    d = sys.argv[1]
    inputs = np.load(d + "/inputs.npz")
    params = {k: inputs[k] for k in ("w1", "b1", "w2")}
    x, xs = inputs["x"], inputs["xs"]
    out = {}
    mlp = export.deserialize(bytearray(open(d + "/mlp.bin", "rb").read()))
    res = mlp.call(params, x)
    out["logits"], out["mean"], out["max"] = res["logits"], res["stats"][0], res["stats"][1]
    def loss(p, x):
        r = mlp.call(p, x)
        return (r["logits"] ** 2).sum() + r["stats"][0]
    g = jax.jit(jax.grad(loss, argnums=(0, 1)))(params, x)
    out.update({"g_" + k: v for k, v in g[0].items()}, g_x=g[1])
    cf = export.deserialize(bytearray(open(d + "/control_flow.bin", "rb").read()))
    out["cf_w"], out["cf_ys"] = cf.call(xs, np.int32(3))
    multi = export.deserialize(bytearray(open(d + "/multi.bin", "rb").read()))
    out["multi"] = multi.call(xs)
    np.savez(d + "/outputs.npz", **{k: np.asarray(v) for k, v in out.items()})
    print(json.dumps({"platforms": list(multi.platforms),
                      "mlp_in_tree": str(mlp.in_tree), "cf_out": str(cf.out_tree)}))
""")


def test_funcgraph_artifacts_run_in_jax_only_process(tmp_path, mlp_export):
    (tmp_path / "mlp.bin").write_bytes(mlp_export.serialize(vjp_order=1))
    cf = export.export(fg.jit(control_flow))(spec(XS), spec(np.int32(3)))
    (tmp_path / "control_flow.bin").write_bytes(cf.serialize())

    def scaled_sin(x):
        return fnp.sin(x) * 2.0
    multi = export.export(fg.jit(scaled_sin), platforms=("cpu", "cuda"))(spec(XS))
    assert '{jax.global_constant = "_platform_index"}' in multi.mlir_module()
    (tmp_path / "multi.bin").write_bytes(multi.serialize())
    np.savez(tmp_path / "inputs.npz", x=X, xs=XS, **PARAMS)
    script = tmp_path / "run_with_jax.py"
    script.write_text(JAX_ONLY_PROGRAM)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([sys.executable, str(script), str(tmp_path)], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout.strip().splitlines()[-1])
    assert info["platforms"] == ["cpu", "cuda"]
    assert info["mlp_in_tree"] == "PyTreeDef((({'b1': *, 'w1': *, 'w2': *}, *), {}))"
    assert info["cf_out"] == "PyTreeDef((*, *))"
    got = np.load(tmp_path / "outputs.npz")

    expected = fg.jit(mlp)(PARAMS, X)
    np.testing.assert_allclose(got["logits"], expected["logits"], rtol=1e-6)
    np.testing.assert_allclose(got["mean"], expected["stats"][0], rtol=1e-6)
    np.testing.assert_allclose(got["max"], expected["stats"][1], rtol=1e-6)
    g_params, g_x = fg.grad(mlp_loss, argnums=(0, 1))(PARAMS, X)
    for k in PARAMS:
        np.testing.assert_allclose(got["g_" + k], g_params[k], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["g_x"], g_x, rtol=1e-5, atol=1e-5)
    w, ys = fg.jit(control_flow)(XS, 3)
    np.testing.assert_allclose(got["cf_w"], w, rtol=1e-6)
    np.testing.assert_allclose(got["cf_ys"], ys, rtol=1e-6)
    np.testing.assert_allclose(got["multi"], np.sin(XS) * 2.0, rtol=1e-6)
    np.testing.assert_allclose(export.deserialize(multi.serialize()).call(XS),
                               np.sin(XS) * 2.0, rtol=1e-6)


# --- jax's artifacts in funcgraph -------------------------------------------------------

def jax_model(params, x):
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    return {"y": jnp.sin(h @ params["w2"]), "norm": jnp.sum(h ** 2)}


@pytest.fixture(scope="module")
def jax_blob():
    exp = jax.export.export(jax.jit(jax_model))(PARAMS, X)
    return exp.serialize(vjp_order=1)


def test_jax_artifact_called_eagerly_and_under_jit(jax_blob):
    exp = export.deserialize(jax_blob)
    ref = jax.export.deserialize(jax_blob)
    assert exp.fun_name == "jax_model"
    assert [(a.shape, a.dtype) for a in exp.in_avals] == \
        [(a.shape, a.dtype) for a in ref.in_avals]
    expected = ref.call(PARAMS, X)
    assert_tree_close(exp.call(PARAMS, X), expected)
    jitted = fg.jit(lambda p, x: exp.call(p, x)["norm"] + 1.0)(PARAMS, X)
    np.testing.assert_allclose(jitted, expected["norm"] + 1.0, rtol=1e-6)


def test_grad_of_jax_artifact_uses_its_vjp(jax_blob):
    exp = export.deserialize(jax_blob)
    ref = jax.export.deserialize(jax_blob)

    def loss(call):
        return lambda p, x: call(p, x)["y"].sum() * call(p, x)["norm"]
    got = fg.grad(loss(exp.call), argnums=(0, 1))(PARAMS, X)
    want = jax.grad(loss(ref.call), argnums=(0, 1))(PARAMS, X)
    assert_tree_close(got, want, rtol=1e-5)
    got_jit = fg.jit(fg.grad(loss(exp.call)))(PARAMS, X)
    assert_tree_close(got_jit, want[0], rtol=1e-5)


def test_vmap_and_jvp_of_call_are_unsupported_as_in_jax(jax_blob):
    exp = export.deserialize(jax_blob)
    ref = jax.export.deserialize(jax_blob)
    batch = np.stack([X, X])
    with pytest.raises(NotImplementedError, match="Batching rule for 'call_exported'"):
        jax.vmap(ref.call, in_axes=(None, 0))(PARAMS, batch)
    with pytest.raises(NotImplementedError, match="Batching rule for 'call_exported'"):
        fg.vmap(exp.call, in_axes=(None, 0))(PARAMS, batch)
    with pytest.raises(TypeError, match="forward-mode"):
        jax.jvp(lambda x: ref.call(PARAMS, x)["norm"], (X,), (X,))
    with pytest.raises(TypeError, match="forward-mode"):
        fg.jvp(lambda x: exp.call(PARAMS, x)["norm"], (X,), (X,))


# --- errors ------------------------------------------------------------------------------

def _error(fn):
    try:
        fn()
    except Exception as e:  # the type and message are what is compared
        return type(e), str(e)
    raise AssertionError("no error raised")


@pytest.mark.parametrize("bad", [
    {"x": X[:, :3]},                                  # shape
    {"x": X[0]},                                      # rank
    {"x": X.astype(np.int32)},                        # dtype
    {"w2": PARAMS["w2"].astype(np.float16)},          # dtype inside the params dict
    {"b1": PARAMS["b1"][:5]},                         # shape inside the params dict
], ids=["shape", "rank", "dtype", "param-dtype", "param-shape"])
def test_wrong_argument_errors_match_jax(jax_blob, bad):
    exp = export.deserialize(jax_blob)
    ref = jax.export.deserialize(jax_blob)
    params = {k: bad.get(k, v) for k, v in PARAMS.items()}
    x = bad.get("x", X)
    want = _error(lambda: ref.call(params, x))
    assert _error(lambda: exp.call(params, x)) == want
    assert _error(lambda: fg.jit(exp.call)(params, x)) == want


def test_wrong_structure_error(jax_blob):
    exp = export.deserialize(jax_blob)
    ref = jax.export.deserialize(jax_blob)
    prefix = ("The invocation args and kwargs must have the same pytree structure as when "
              "the function 'jax_model' was exported")
    for call in (exp.call, ref.call):
        with pytest.raises(ValueError, match=prefix):
            call(PARAMS)
        with pytest.raises(ValueError, match=prefix):
            call({"w1": PARAMS["w1"]}, X)


def test_export_needs_jit_and_rejects_callbacks():
    with pytest.raises(ValueError, match="must be the result of `jit`"):
        export.export(mlp)(*specs((PARAMS, X)))
    with pytest.raises(ValueError, match="must be the result of `jit`"):
        jax.export.export(jax_model)(PARAMS, X)

    def printing(x):
        fg.debug.print("x={x}", x=x)
        return x * 2
    with pytest.raises(ValueError, match="Cannot export printing: it has effects"):
        export.export(fg.jit(printing))(spec(XS))


def test_platform_mismatch_is_jax_error():
    other = "cuda" if jax.export.default_export_platform() == "cpu" else "cpu"
    exp = export.export(fg.jit(fnp.sin), platforms=(other,))(spec(XS))
    ref = jax.export.export(jax.jit(jnp.sin), platforms=(other,))(XS)
    want = _error(lambda: ref.call(XS))
    got = _error(lambda: exp.call(XS))
    assert got[0] is want[0] is ValueError
    assert got[1] == want[1]


# --- jax's shape-polymorphic artifacts -----------------------------------------------------

def test_call_jax_shape_polymorphic_artifact():
    b = jax.export.symbolic_shape("b, 4")

    def flat_sin(x):
        return (jnp.sin(x) * 2.0).reshape(-1)
    ref = jax.export.export(jax.jit(flat_sin))(jax.ShapeDtypeStruct(b, jnp.float32))
    exp = export.deserialize(ref.serialize(vjp_order=1))
    assert str(exp.in_avals[0].shape) == "('b', 4)" and exp.uses_global_constants
    for n in (2, 5):
        x = RNG.normal(size=(n, 4)).astype(np.float32)
        np.testing.assert_allclose(exp.call(x), ref.call(x), rtol=1e-6)
        jitted = fg.jit(lambda x: exp.call(x) * 3.0)(x)
        assert jitted.shape == (4 * n,)
        np.testing.assert_allclose(jitted, ref.call(x) * 3.0, rtol=1e-6)
        np.testing.assert_allclose(fg.grad(lambda x: exp.call(x).sum())(x),
                                   jax.grad(lambda x: ref.call(x).sum())(x), rtol=1e-6)
    bad = np.ones((3, 5), np.float32)
    assert _error(lambda: exp.call(bad)) == _error(lambda: ref.call(bad))


def test_polymorphic_dimension_variable_errors_match_jax():
    b = jax.export.symbolic_shape("b")
    ref = jax.export.export(jax.jit(jnp.add))(jax.ShapeDtypeStruct(b, jnp.float32),
                                              jax.ShapeDtypeStruct(b, jnp.float32))
    exp = export.deserialize(ref.serialize())
    np.testing.assert_allclose(exp.call(XS, XS), 2 * XS)
    x3, x4 = np.ones(3, np.float32), np.ones(4, np.float32)
    kind, message = _error(lambda: exp.call(x3, x4))
    want_kind, want = _error(lambda: ref.call(x3, x4))
    assert kind is want_kind is ValueError
    assert want.startswith(message)


@pytest.mark.parametrize("keep_unused", [False, True])
def test_unused_arguments_left_out_of_the_module_as_jax(keep_unused):
    a, b, c = np.arange(4, dtype=np.float32), np.ones(3, np.float32), np.float32(2)
    fexp = export.export(fg.jit(lambda x, y, z: x * z, keep_unused=keep_unused))(a, b, c)
    jexp = jax.export.export(jax.jit(lambda x, y, z: x * z, keep_unused=keep_unused))(a, b, c)
    assert fexp.module_kept_var_idx == jexp.module_kept_var_idx
    assert fexp.module_kept_var_idx == ((0, 1, 2) if keep_unused else (0, 2))
    assert len(fexp.in_avals) == 3
    main = next(line for line in fexp.mlir_module().splitlines() if "@main" in line)
    assert main.count("%arg") == len(fexp.module_kept_var_idx)
    np.testing.assert_array_equal(np.asarray(fexp.call(a, b, c)), a * c)
    # each side runs the other's artifact, passing all three arguments
    np.testing.assert_array_equal(np.asarray(jax.export.deserialize(fexp.serialize()).call(
        a, b, c)), a * c)
    np.testing.assert_array_equal(np.asarray(export.deserialize(jexp.serialize()).call(
        a, b, c)), a * c)
    grads = fg.grad(lambda x, y, z: fnp.sum(export.call(fexp)(x, y, z)), argnums=(0, 1))(a, b, c)
    np.testing.assert_array_equal(np.asarray(grads[0]), np.full(4, 2, np.float32))
    np.testing.assert_array_equal(np.asarray(grads[1]), np.zeros(3, np.float32))
    assert fexp.vjp().module_kept_var_idx == jexp.vjp().module_kept_var_idx


def test_symbolic_export_keeps_every_argument_as_jax():
    a = jax.ShapeDtypeStruct(jax.export.symbolic_shape("n"), np.float32)
    fa = fg.ShapeDtypeStruct(export.symbolic_shape("n"), np.float32)
    fexp = export.export(fg.jit(lambda x, y: x * 2))(fa, fa)
    jexp = jax.export.export(jax.jit(lambda x, y: x * 2))(a, a)
    assert fexp.module_kept_var_idx == jexp.module_kept_var_idx == (0, 1)
