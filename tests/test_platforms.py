"""Platforms as jax chooses them (jax_platforms, devices(backend), default_backend,
default_device), compiled eager keeping buffers on the device, donation, and the matmul
precision (lax.Precision, jax_default_matmul_precision) in the lowered StableHLO."""
import os
import re
import subprocess
import sys

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import backend, lax
from funcgraph.backend import spmd
from funcgraph.interpreters import eval as eval_mod

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _jax_error(fn, *args):
    with pytest.raises(RuntimeError) as info:
        fn(*args)
    return str(info.value)


@pytest.fixture
def restore_config():
    names = ("jax_platforms", "jax_default_device", "funcgraph_eager_numpy",
             "jax_default_matmul_precision")
    saved = {n: getattr(fg.config, n) for n in names}
    yield
    for n, v in saved.items():
        fg.config.update(n, v)


# --- platform selection ---------------------------------------------------------------

def test_devices_and_default_backend_match_jax():
    assert fg.default_backend() == jax.default_backend()
    assert [d.id for d in fg.devices()] == [d.id for d in jax.devices()]
    assert fg.devices("cpu") == fg.local_devices(backend="cpu")
    assert [d.platform for d in fg.devices("cpu")] == ["cpu"] * fg.device_count("cpu")


@pytest.mark.cpu_only
@pytest.mark.parametrize("name", ["gpu", "cuda", "rocm", "no_such_platform"])
def test_missing_platform_raises_jax_error(name):
    expected = _jax_error(jax.devices, name)
    assert _jax_error(fg.devices, name) == expected
    assert _jax_error(fg.device_count, name) == expected


@pytest.mark.cpu_only
def test_gpu_error_text_is_jaxs():
    message = _jax_error(fg.devices, "gpu")
    assert message.startswith("Unknown backend: 'gpu' requested, but no platforms that are "
                              "instances of gpu are present.")


@pytest.mark.cpu_only
def test_config_jax_platforms_picks_the_default_backend(restore_config):
    fg.config.update("jax_platforms", "cpu")
    assert fg.default_backend() == "cpu"
    assert fg.devices() == fg.devices("cpu")
    # the first platform listed that is present, as jax with JAX_PLATFORMS=cuda,cpu
    fg.config.update("jax_platforms", "gpu,cpu")
    assert fg.default_backend() == "cpu"
    fg.config.update("jax_platforms", "gpu")
    assert _jax_error(fg.default_backend) == _jax_error(jax.devices, "gpu")
    assert _jax_error(fg.devices) == _jax_error(jax.devices, "gpu")
    with pytest.raises(RuntimeError, match="Unknown backend: 'gpu' requested"):
        fg.jit(lambda x: x + 1)(1.0)


def test_default_device_by_platform_name(restore_config):
    cpu = fg.devices("cpu")[0]
    with fg.default_device("cpu"):
        assert fg.numpy.ones(3).device == cpu
        assert fg.jit(lambda x: x + 1)(np.ones(2, np.float32)).device == cpu
    fg.config.update("jax_default_device", "gpu")
    if not any(d.platform == "gpu" for d in jax.devices()):
        with pytest.raises(RuntimeError, match="Unknown backend: 'gpu' requested"):
            fg.numpy.ones(3).device


def test_programs_for_devices_compile_on_their_platform(monkeypatch, restore_config):
    """A program placed on devices compiles with their platform's client, not the default
    backend's (with cuda,cpu, default_device("cpu") programs compiled for cuda crashed)."""
    def default_client():
        raise AssertionError("compiled with the default backend's client")
    monkeypatch.setattr(spmd, "_client", default_client)
    cpu = fg.devices("cpu")[0]
    sharding = fg.sharding.NamedSharding(fg.sharding.Mesh([cpu], ("d",)),
                                         fg.sharding.PartitionSpec())
    out = fg.jit(lambda x: x * 3 + 2, out_shardings=sharding)(np.ones(2, np.float32))
    assert out.devices() == {cpu}
    np.testing.assert_array_equal(out, np.full(2, 5, np.float32))


def _run_python(code, **env):
    environ = {k: v for k, v in os.environ.items() if k not in ("JAX_PLATFORMS",
                                                                  "FUNCGRAPH_PLATFORMS")}
    environ.update(env, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.cpu_only
def test_funcgraph_platforms_environment_variable():
    """FUNCGRAPH_PLATFORMS sets config jax_platforms and is what jax initializes; a
    platform that is not there fails as it does in jax with JAX_PLATFORMS."""
    ok = _run_python("import funcgraph as fg, jax; print(fg.config.jax_platforms, "
                     "fg.default_backend(), jax.config.jax_platforms)",
                     FUNCGRAPH_PLATFORMS="cpu")
    assert ok.stdout.split() == ["cpu", "cpu", "cpu"], ok.stderr
    code = "import {m}; print({m}.default_backend(), {m}.devices())"
    ours = _run_python(code.format(m="funcgraph"), FUNCGRAPH_PLATFORMS="cuda,cpu")
    theirs = _run_python(code.format(m="jax"), JAX_PLATFORMS="cuda,cpu")
    assert theirs.stdout.strip(), theirs.stderr
    assert ours.stdout.strip() == theirs.stdout.strip(), ours.stderr


# --- eager: NumPy only on a CPU default device; compiled eager stays on the device -----

class _FakeGpu:
    platform = "gpu"


@pytest.mark.cpu_only
def test_numpy_eager_only_when_the_default_device_is_a_cpu(monkeypatch):
    eval_mod.eager_mode.key = None
    assert eval_mod.eager_mode.uses_numpy()
    monkeypatch.setattr(eval_mod, "default_device", lambda: _FakeGpu())
    eval_mod.eager_mode.key = None
    assert not eval_mod.eager_mode.uses_numpy()
    monkeypatch.undo()
    eval_mod.eager_mode.key = None
    assert eval_mod.eager_mode.uses_numpy()


def test_compiled_eager_keeps_values_on_the_device(monkeypatch, restore_config):
    copies = []
    to_numpy = backend.to_numpy
    monkeypatch.setattr(backend, "to_numpy", lambda buf: copies.append(buf) or to_numpy(buf))
    fg.config.update("funcgraph_eager_numpy", False)
    x_np = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    x = fg.device_put(x_np)
    y = fnp.sin(x) * 2.0 + x
    z = fnp.sum(y @ y.T, axis=0)
    w = fnp.maximum(z, 0.5).reshape(3, 1)[1:]
    assert copies == []
    assert all(a._np is None and a._buf is not None for a in (y, z, w))
    expected = jnp.maximum(jnp.sum((jnp.sin(x_np) * 2.0 + x_np) @ (jnp.sin(x_np) * 2.0
                                                                   + x_np).T, axis=0), 0.5)
    np.testing.assert_allclose(np.asarray(w), np.asarray(expected).reshape(3, 1)[1:],
                               rtol=1e-6)
    assert len(copies) == 1  # np.asarray copies back once


def test_compiled_eager_reads_deleted_arrays_as_jax_does(restore_config):
    fg.config.update("funcgraph_eager_numpy", False)
    x = fg.device_put(np.ones(3, np.float32))
    fg.jit(lambda v: v * 2, donate_argnums=0)(x)
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        fnp.sin(x)


# --- donation -----------------------------------------------------------------------------

def test_donated_argument_is_deleted_with_jaxs_error():
    def f(a, b):
        return a * 2 + b
    x = fg.device_put(np.arange(6, dtype=np.float32).reshape(2, 3))
    keep = fg.device_put(np.ones((2, 3), np.float32))
    out = fg.jit(f, donate_argnums=0)(x, keep)
    np.testing.assert_array_equal(out, np.arange(6).reshape(2, 3) * 2 + 1)
    assert x.is_deleted() and not keep.is_deleted()
    jx = jnp.arange(6, dtype=jnp.float32).reshape(2, 3)
    jax.jit(f, donate_argnums=0)(jx, jnp.ones((2, 3), jnp.float32))
    assert jx.is_deleted()
    for read in (np.asarray, repr, lambda a: a + 1):
        assert _jax_error(read, x) == _jax_error(read, jx)


def test_donation_reuses_the_input_buffer():
    """XLA writes the output into the donated input's memory (the point of donating)."""
    x = fg.device_put(np.ones(1024, np.float32))
    address = x._buf.unsafe_buffer_pointer()
    out = fg.jit(lambda a: a + 1, donate_argnums=0)(x)
    assert out._buf.unsafe_buffer_pointer() == address
    y = fg.device_put(np.ones(1024, np.float32))
    kept = fg.jit(lambda a: a + 1)(y)
    assert kept._buf.unsafe_buffer_pointer() != y._buf.unsafe_buffer_pointer()


def test_donated_pytree_argument():
    tree = {"w": fg.device_put(np.ones(3, np.float32)), "b": fg.device_put(np.zeros(3,
                                                                                   np.float32))}
    out = fg.jit(lambda t, s: {k: v * s for k, v in t.items()}, donate_argnums=0)(tree, 3.0)
    np.testing.assert_array_equal(out["w"], [3, 3, 3])
    assert tree["w"].is_deleted() and tree["b"].is_deleted()


def test_only_donations_an_output_can_reuse_are_taken_with_jaxs_warning():
    """jax's rule: a donated input is donated where an output of its shape and dtype can
    take its buffer (each output once); the others stay alive, with jax's warning."""
    for mod in (fg, jax):
        x, y = (mod.device_put(np.ones((2, 3), np.float32)) for _ in range(2))
        with pytest.warns(UserWarning, match="Some donated buffers were not usable"):
            out = mod.jit(lambda a, b: a + b, donate_argnums=(0, 1))(x, y)
        np.testing.assert_array_equal(out, np.full((2, 3), 2.0))
        assert x.is_deleted() and not y.is_deleted()
    small = fg.device_put(np.ones(3, np.float32))
    with pytest.warns(UserWarning, match=r"not usable: f32\[3\]"):
        fg.jit(lambda a: a.sum(), donate_argnums=0)(small)
    assert not small.is_deleted()


def test_donation_next_to_closed_over_constants():
    """The donated argument, not a constant of the program, is the buffer donor: the
    program's constants survive calls."""
    c = np.arange(1000, dtype=np.float32)
    f = fg.jit(lambda x: x * 2 + c, donate_argnums=0)
    main = next(line for line in f.lower(np.ones(1000, np.float32)).as_text().splitlines()
                if "@main" in line)
    assert main.count("tf.aliasing_output") == 1 and "%arg1: tensor<1000xf32> {tf" in main
    for _ in range(3):
        x = fg.device_put(np.ones(1000, np.float32))
        np.testing.assert_array_equal(f(x), 2 + c)
        assert x.is_deleted()


def test_compiled_functions_take_donated_buffers_too():
    compiled = fg.jit(lambda a, b: a * b, donate_argnums=0).lower(
        np.ones(3, np.float32), np.ones(3, np.float32)).compile()
    x, y = fg.device_put(np.ones(3, np.float32)), fg.device_put(np.ones(3, np.float32))
    np.testing.assert_array_equal(compiled(x, y), [1, 1, 1])
    assert x.is_deleted() and not y.is_deleted()


# --- precision ----------------------------------------------------------------------------

def _precisions(text):
    """The operand precisions of each dot_general and convolution in StableHLO text."""
    found = re.findall(r"precision = \[(\w+), (\w+)\]", text)
    found += re.findall(r"precision_config = \[#stablehlo<precision (\w+)>, "
                        r"#stablehlo<precision (\w+)>\]", text)
    return found


def _matmul_cases():
    a32 = np.ones((4, 4), np.float32)
    x = np.ones((1, 2, 5, 5), np.float32)
    w = np.ones((3, 2, 2, 2), np.float32)
    return [
        ((lambda a, b: a @ b), (lambda a, b: a @ b), (a32, a32)),
        ((lambda a, b: fnp.einsum("ij,jk->ik", a, b)),
         (lambda a, b: jnp.einsum("ij,jk->ik", a, b)), (a32, a32)),
        ((lambda x, w: lax.conv(x, w, (1, 1), "SAME")),
         (lambda x, w: jax.lax.conv(x, w, (1, 1), "SAME")), (x, w)),
    ]


@pytest.mark.parametrize("setting", [None, "bfloat16", "tensorfloat32", "float32", "highest",
                                     "high", "default"])
@pytest.mark.parametrize("case", range(3))
def test_default_matmul_precision_lowers_as_jax(setting, case):
    fg_fn, jax_fn, args = _matmul_cases()[case]
    with fg.default_matmul_precision(setting), jax.default_matmul_precision(setting):
        ours = fg.jit(fg_fn).lower(*args).as_text()
        theirs = jax.jit(jax_fn).lower(*args).as_text()
    assert _precisions(ours) == _precisions(theirs) != []


def test_config_flag_and_explicit_precision(restore_config):
    a = np.ones((3, 3), np.float32)
    fg.config.update("jax_default_matmul_precision", "float32")
    assert _precisions(fg.jit(lambda a: a @ a).lower(a).as_text()) == [("HIGHEST", "HIGHEST")]
    # an explicit precision wins over the flag, as in jax
    text = fg.jit(lambda a: fnp.dot(a, a, precision=lax.Precision.HIGH)).lower(a).as_text()
    assert _precisions(text) == [("HIGH", "HIGH")]
    fg.config.update("jax_default_matmul_precision", None)
    pair = (lax.Precision.DEFAULT, lax.Precision.HIGHEST)
    text = fg.jit(lambda a: lax.dot(a, a, precision=pair)).lower(a).as_text()
    jtext = jax.jit(lambda a: jax.lax.dot(a, a, precision=(jax.lax.Precision.DEFAULT,
                                                          jax.lax.Precision.HIGHEST))
                    ).lower(a).as_text()
    assert _precisions(text) == _precisions(jtext) == [("DEFAULT", "HIGHEST")]
    with pytest.raises(ValueError, match="Precision"):
        lax.dot(a, a, precision="not_a_precision")


def test_precision_in_the_jaxpr_and_its_gradient():
    a = np.ones((2, 2), np.float32)
    with fg.default_matmul_precision("float32"), jax.default_matmul_precision("float32"):
        ours = str(fg.make_jaxpr(lambda a: a @ a)(a))
        theirs = str(jax.make_jaxpr(lambda a: a @ a)(a))
        grad_text = fg.jit(fg.grad(lambda a: fnp.sum(a @ a))).lower(a).as_text()
    assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in ours
    assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in theirs
    # the transposed dots of the backward pass keep the precision
    assert _precisions(grad_text) and all(p == ("HIGHEST", "HIGHEST")
                                          for p in _precisions(grad_text))


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16])
def test_half_precision_matmul_matches_jax(dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 16)).astype(dtype)
    b = rng.standard_normal((16, 4)).astype(dtype)
    ours = fg.jit(lambda a, b: a @ b)(a, b)
    theirs = jax.jit(lambda a, b: a @ b)(a, b)
    assert ours.dtype == theirs.dtype == dtype
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    eager = fnp.matmul(a, b)  # the NumPy path on the CPU accumulates in float32 too
    np.testing.assert_allclose(np.asarray(eager, np.float32), np.asarray(theirs, np.float32),
                               rtol=1e-2, atol=1e-2)
