"""funcgraph.export over 8 devices, against jax.export: exports of jit with in/out
shardings (fields, module, serialized shardings), jax running funcgraph's artifacts in
a process without funcgraph, and funcgraph running jax's, eagerly, under jit and grad,
with the arguments placed as the artifact says."""
import json
import os
import re
import subprocess
import sys

import jax
import jax.numpy as jnp
import jax.sharding as js
import numpy as np
import pytest
from jax import export as jexport

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import export
from funcgraph.sharding import Mesh, NamedSharding, PartitionSpec as P

JP = js.PartitionSpec
# jax 0.11's deserialize leaves in/out_shardings_hlo None (as on a fresh export; the
# named shardings carry the layout); 0.10's derived HloShardings from the named ones.
JAX_011 = jax.__version_info__ >= (0, 11)
A = np.arange(32, dtype=np.float32).reshape(8, 4) / 10
B = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)


def _fun(np_):
    def f(a, b):
        return np_.tanh(a @ b).sum(0), a * 2
    return f


def _exports(meshes, in_specs=(("x",), ()), out_specs=(("y",), ("x", "y"))):
    """(funcgraph Exported, jax Exported, funcgraph mesh, jax mesh) of f with the given
    specs (None: unspecified) on a 4x2 mesh."""
    fm, jm = meshes((4, 2), ("x", "y"))

    def shardings(mesh, cls, spec_cls, specs):
        return tuple(None if s is None else cls(mesh, spec_cls(*s)) for s in specs)
    fj = fg.jit(_fun(fnp), in_shardings=shardings(fm, NamedSharding, P, in_specs),
                out_shardings=shardings(fm, NamedSharding, P, out_specs))
    jj = jax.jit(_fun(jnp), in_shardings=shardings(jm, js.NamedSharding, JP, in_specs),
                 out_shardings=shardings(jm, js.NamedSharding, JP, out_specs))
    fexp = export.export(fj)(fg.ShapeDtypeStruct(A.shape, A.dtype),
                             fg.ShapeDtypeStruct(B.shape, B.dtype))
    jexp = jexport.export(jj)(jax.ShapeDtypeStruct(A.shape, A.dtype),
                              jax.ShapeDtypeStruct(B.shape, B.dtype))
    return fexp, jexp, fm, jm


def _main_shardings(text):
    signature = next(line for line in text.splitlines() if "func.func public @main" in line)
    return re.findall(r"sdy\.sharding = (#sdy\.sharding<[^>]*>)", signature)


def _mesh_line(text):
    return re.search(r"sdy\.mesh @\w+ = <[^>]*>", text).group(0)


@pytest.mark.parametrize("in_specs,out_specs", [
    ((("x",), ()), (("y",), ("x", "y"))),
    ((("x",), None), (None, ("x", "y"))),
    ((None, None), (("y",), None)),
])
def test_exported_fields_and_module_match_jax(meshes, in_specs, out_specs):
    fexp, jexp, fm, jm = _exports(meshes, in_specs, out_specs)
    assert fexp.nr_devices == jexp.nr_devices == 8
    assert fexp.in_shardings_hlo == jexp.in_shardings_hlo == (None, None)
    assert fexp.out_shardings_hlo == jexp.out_shardings_hlo == (None, None)
    assert repr(fexp.in_shardings_jax(fm)) == repr(jexp.in_shardings_jax(jm))
    assert repr(fexp.out_shardings_jax(fm)) == repr(jexp.out_shardings_jax(jm))
    ours, theirs = fexp.mlir_module(), jexp.mlir_module()
    assert _main_shardings(ours) == _main_shardings(theirs)
    assert _mesh_line(ours) == _mesh_line(theirs)
    assert "mhlo.num_partitions = 8" in ours


def test_unsharded_export_stays_on_one_device():
    fexp = export.export(fg.jit(lambda a: a * 2))(A)
    assert fexp.nr_devices == 1 and fexp.in_shardings_jax(None) == (None,)
    assert "sdy." not in fexp.mlir_module()


def test_serialized_shardings_read_back_like_jax(meshes):
    fexp, jexp, fm, jm = _exports(meshes, ((("x",), None)), ((("y",), ("x", "y"))))
    for blob in (fexp.serialize(vjp_order=1), jexp.serialize(vjp_order=1)):
        by_jax, by_fg = jexport.deserialize(blob), export.deserialize(blob)
        assert by_fg.nr_devices == by_jax.nr_devices == 8
        assert by_fg.in_shardings_hlo == by_jax.in_shardings_hlo
        assert by_fg.out_shardings_hlo == by_jax.out_shardings_hlo
        if JAX_011:
            assert by_fg.in_shardings_hlo == (None, None)
        else:
            assert str(by_fg.in_shardings_hlo[0]) == "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"
        assert repr(by_jax._in_named_shardings) == repr(jexp._in_named_shardings)
        assert repr(by_fg.in_shardings_jax(fm)) == repr(by_jax.in_shardings_jax(jm))
        assert repr(by_fg.out_shardings_jax(fm)) == repr(by_jax.out_shardings_jax(jm))
        fvjp, jvjp = by_fg.vjp(), by_jax.vjp()
        assert fvjp.nr_devices == jvjp.nr_devices == 8
        assert fvjp.in_shardings_hlo == jvjp.in_shardings_hlo
        assert fvjp.out_shardings_hlo == jvjp.out_shardings_hlo


def test_in_shardings_jax_needs_a_mesh_like_the_exported_one(meshes):
    fexp, jexp, _, _ = _exports(meshes)
    fm, jm = meshes((2, 4), ("x", "y"))
    with pytest.raises(ValueError) as ours:
        fexp.in_shardings_jax(fm)
    with pytest.raises(ValueError) as theirs:
        jexp.in_shardings_jax(jm)
    assert str(ours.value) == str(theirs.value)


_LOAD_WITH_JAX = """
import json, sys
import jax, numpy as np
from jax import export
from jax.sharding import Mesh
blob, a, b = sys.argv[1], np.load(sys.argv[2]), np.load(sys.argv[3])
mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
exp = export.deserialize(bytearray(open(blob, "rb").read()))
args = [jax.device_put(v, s) for v, s in zip((a, b), exp.in_shardings_jax(mesh))]
outs = exp.call(*args)
grad = jax.grad(lambda x: exp.call(x, args[1])[0].sum())(args[0])
assert "funcgraph" not in sys.modules
print(json.dumps({"outs": [np.asarray(o).tolist() for o in outs],
                  "specs": [str(o.sharding.spec) for o in outs],
                  "grad": np.asarray(grad).tolist(), "grad_spec": str(grad.sharding.spec)}))
"""


def test_jax_runs_funcgraph_artifact_without_funcgraph(meshes, tmp_path):
    fexp, _, fm, _ = _exports(meshes)
    blob, a, b = tmp_path / "f.bin", tmp_path / "a.npy", tmp_path / "b.npy"
    blob.write_bytes(fexp.serialize(vjp_order=1))
    np.save(a, A)
    np.save(b, B)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    run = subprocess.run([sys.executable, "-c", _LOAD_WITH_JAX, str(blob), str(a), str(b)],
                         env=env, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.strip().splitlines()[-1])
    want = _fun(np)(A, B)
    np.testing.assert_allclose(got["outs"][0], want[0], rtol=1e-5)
    np.testing.assert_allclose(got["outs"][1], want[1])
    assert got["specs"] == ["P('y',)", "P('x', 'y')"]
    want_grad = (1 - np.tanh(A @ B) ** 2) @ B.T
    np.testing.assert_allclose(got["grad"], want_grad, rtol=1e-5)
    assert got["grad_spec"] == "P('x',)"


def _layouts(arrays):
    return [(repr(x.sharding), [(s.device.id, s.index) for s in x.addressable_shards])
            for x in arrays]


@pytest.mark.parametrize("maker", ["jax", "funcgraph"])
@pytest.mark.parametrize("device_order", ["mesh order", "reversed"])
def test_funcgraph_calls_sharded_artifacts_like_jax(meshes, maker, device_order):
    fexp, jexp, _, _ = _exports(meshes)
    blob = (jexp if maker == "jax" else fexp).serialize(vjp_order=1)
    order = np.array(fg.devices()) if device_order == "mesh order" else np.array(fg.devices())[::-1]
    fm = Mesh(order.reshape(4, 2), ("x", "y"))
    jm = js.Mesh(np.array([jax.devices()[d.id] for d in order]).reshape(4, 2), ("x", "y"))
    ours, theirs = export.deserialize(blob), jexport.deserialize(blob)
    fargs = [fg.device_put(v, s) for v, s in zip((A, B), ours.in_shardings_jax(fm))]
    jargs = [jax.device_put(v, s) for v, s in zip((A, B), theirs.in_shardings_jax(jm))]
    want = theirs.call(*jargs)
    for got in (ours.call(*fargs), fg.jit(ours.call)(*fargs)):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
        assert _layouts(got) == _layouts(want)
    want_grad = jax.grad(lambda x: theirs.call(x, jargs[1])[0].sum())(jargs[0])
    ours_grad = lambda x: ours.call(x, fargs[1])[0].sum()  # noqa: E731
    for got in (fg.grad(ours_grad)(fargs[0]), fg.jit(fg.grad(ours_grad))(fargs[0])):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want_grad), rtol=1e-5)
        assert _layouts([got]) == _layouts([want_grad])


def test_calling_with_arguments_on_one_device_is_jax_error(meshes):
    fexp, jexp, _, _ = _exports(meshes)
    ours = export.deserialize(fexp.serialize())
    theirs = jexport.deserialize(jexp.serialize())
    with pytest.raises(ValueError) as want:
        theirs.call(A, B)
    for call in (ours.call, fg.jit(ours.call)):
        with pytest.raises(ValueError) as got:
            call(A, B)
        assert str(got.value) == str(want.value)


def test_jax_artifact_with_shard_map_and_constraints_inside(meshes):
    fm, jm = meshes((4, 2), ("x", "y"))

    def f(a):
        a = jax.lax.with_sharding_constraint(jnp.sin(a), js.NamedSharding(jm, JP(None, "y")))
        summed = jax.shard_map(lambda x: jax.lax.psum(x, "x"), mesh=jm, in_specs=JP("x"),
                               out_specs=JP())(a)
        return summed * 3
    jj = jax.jit(f, in_shardings=js.NamedSharding(jm, JP("x")))
    blob = jexport.export(jj)(jax.ShapeDtypeStruct(A.shape, A.dtype)).serialize()
    ours, theirs = export.deserialize(blob), jexport.deserialize(blob)
    want = theirs.call(jax.device_put(A, theirs.in_shardings_jax(jm)[0]))
    got = ours.call(fg.device_put(A, ours.in_shardings_jax(fm)[0]))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert _layouts([got]) == _layouts([want])


def test_export_with_sharding_constraints_inside_runs_over_their_mesh(meshes):
    fm, jm = meshes((4, 2), ("x", "y"))
    f = fg.jit(lambda a: fg.lax.with_sharding_constraint(a * 2, NamedSharding(fm, P("x"))) + 1)
    j = jax.jit(lambda a: jax.lax.with_sharding_constraint(a * 2, js.NamedSharding(jm, JP("x")))
                + 1)
    fexp = export.export(f)(fg.ShapeDtypeStruct(A.shape, A.dtype))
    jexp = jexport.export(j)(jax.ShapeDtypeStruct(A.shape, A.dtype))
    assert fexp.nr_devices == jexp.nr_devices == 8
    assert fexp.in_shardings_jax(fm) == (None,) and jexp.in_shardings_jax(jm) == (None,)
    assert _mesh_line(fexp.mlir_module()) == _mesh_line(jexp.mlir_module())
    placed = jax.device_put(A, js.NamedSharding(jm, JP("x")))
    got = jexport.deserialize(fexp.serialize()).call(placed)
    np.testing.assert_allclose(np.asarray(got), A * 2 + 1)


def test_arguments_placed_otherwise_are_laid_out_as_exported(meshes):
    """Arguments on the mesh's devices but laid out otherwise (replicated, split along
    another axis) are constrained to the exported shardings, as jax does."""
    fexp, jexp, fm, jm = _exports(meshes)
    blob = fexp.serialize()
    ours, theirs = export.deserialize(blob), jexport.deserialize(blob)
    fargs = [fg.device_put(A, NamedSharding(fm, P(None, "y"))),
             fg.device_put(B, NamedSharding(fm, P("x")))]
    jargs = [jax.device_put(A, js.NamedSharding(jm, JP(None, "y"))),
             jax.device_put(B, js.NamedSharding(jm, JP("x")))]
    want = theirs.call(*jargs)
    for got in (ours.call(*fargs), fg.jit(ours.call)(*fargs)):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
        assert _layouts(got) == _layouts(want)


def test_unused_sharded_argument_left_out_as_jax(meshes):
    fm, jm = meshes((4, 2), ("x", "y"))
    fj = fg.jit(lambda a, b: a * 2, in_shardings=(NamedSharding(fm, P("x")),
                                                  NamedSharding(fm, P("y"))))
    jj = jax.jit(lambda a, b: a * 2, in_shardings=(js.NamedSharding(jm, JP("x")),
                                                   js.NamedSharding(jm, JP("y"))))
    spec = (A.shape, A.dtype)
    fexp = export.export(fj)(fg.ShapeDtypeStruct(*spec), fg.ShapeDtypeStruct(*spec))
    jexp = jexport.export(jj)(jax.ShapeDtypeStruct(*spec), jax.ShapeDtypeStruct(*spec))
    assert fexp.module_kept_var_idx == jexp.module_kept_var_idx == (0,)
    assert fexp.in_shardings_hlo == jexp.in_shardings_hlo
    assert repr(fexp.in_shardings_jax(fm)) == repr(jexp.in_shardings_jax(jm))
    assert _main_shardings(fexp.mlir_module()) == _main_shardings(jexp.mlir_module())
    result = fexp.call(fg.device_put(A, NamedSharding(fm, P("x"))),
                       fg.device_put(A, NamedSharding(fm, P("y"))))
    want = jexp.call(jax.device_put(A, js.NamedSharding(jm, JP("x"))),
                     jax.device_put(A, js.NamedSharding(jm, JP("y"))))
    np.testing.assert_array_equal(np.asarray(result), np.asarray(want))
    assert repr(result.sharding) == repr(want.sharding)
