"""`import jax` means funcgraph: install_as_jax, `python -m funcgraph run`, the
environment for tools that start Python themselves, and the backend's real jax kept
apart from the alias."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

import funcgraph


def run(args, code=None, env=None, tmp_path=None):
    """Run `python -m funcgraph <args>` (with a script made of `code` if given);
    (returncode, stdout, stderr)."""
    if code is not None:
        script = tmp_path / "program.py"
        script.write_text(textwrap.dedent(code))
        args = [*args, str(script)]
    environment = dict(os.environ, **(env or {}))
    environment.pop("FUNCGRAPH_AS_JAX", None)
    done = subprocess.run([sys.executable, "-m", "funcgraph", *args], capture_output=True,
                          text=True, timeout=180, env=environment)
    return done.returncode, done.stdout, done.stderr


def python(code):
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=180)
    return done.returncode, done.stdout, done.stderr


REPORT = """
    import json, sys
    import jax, jax.numpy as jnp
    import funcgraph
    x = jnp.arange(3.0)
    print(json.dumps(dict(
        jax=jax.__name__, version=jax.__version__, version_info=list(jax.__version_info__),
        own_version=funcgraph.__version__, numpy_is_funcgraph=jnp is funcgraph.numpy,
        array_type=type(x).__module__,
        value=float(jax.jit(jax.grad(lambda v: (jnp.sin(v) ** 2).sum()))(x)[1]),
        argv=sys.argv[1:])))
"""


def test_run_script_makes_jax_funcgraph(tmp_path):
    code, out, err = run(["run"], REPORT, tmp_path=tmp_path)
    assert code == 0, err
    report = json.loads(out)
    assert report["jax"] == "jax" and report["numpy_is_funcgraph"]
    assert report["version"] == funcgraph.jax_compat.JAX_VERSION == "0.10.2"
    assert report["version_info"] == [0, 10, 2]
    assert report["own_version"] == funcgraph.__version__
    assert report["array_type"].startswith("funcgraph")
    import numpy as np
    assert report["value"] == pytest.approx(np.sin(2.0))  # d/dx sin(x)^2 at 1 = sin(2)


def test_run_passes_arguments_and_runs_modules(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(REPORT))
    code, out, err = run(["run", str(script), "--flag", "7"])
    assert code == 0, err
    assert json.loads(out)["argv"] == ["--flag", "7"]
    (tmp_path / "jax_program_module.py").write_text(textwrap.dedent(REPORT))
    code, out, err = run(["run", "-m", "jax_program_module", "a"], env={"PYTHONPATH": str(tmp_path)})
    assert code == 0, err
    assert json.loads(out)["argv"] == ["a"] and json.loads(out)["jax"] == "jax"


def test_subprocesses_inherit_the_alias(tmp_path):
    code, out, err = run(["run"], """
        import subprocess, sys
        child = subprocess.run([sys.executable, "-c",
            "import jax, funcgraph; print(jax.numpy is funcgraph.numpy)"],
            capture_output=True, text=True)
        print(child.stdout.strip(), child.stderr[-500:])
    """, tmp_path=tmp_path)
    assert code == 0, err
    assert out.split()[0] == "True", out


def test_env_prints_the_variables_for_other_tools():
    code, out, err = run(["env"])
    assert code == 0, err
    assert "FUNCGRAPH_AS_JAX" in out and "PYTHONPATH" in out
    startup = os.path.join(os.path.dirname(funcgraph.__file__), "jax_compat", "startup")
    assert startup in out


def test_usage_error():
    code, out, err = run(["run"])
    assert code != 0 and "usage: python -m funcgraph run" in err


def test_install_as_jax_in_a_program():
    code, out, err = python("""
        import funcgraph; funcgraph.install_as_jax()
        import jax, jax.numpy as jnp
        from jax import flatten_util, tree_util, lax
        print(jax.__version__, jnp is funcgraph.numpy, tree_util is funcgraph.tree_util,
              flatten_util.ravel_pytree({"a": jnp.ones(2)})[0].shape)
    """)
    assert code == 0, err
    assert out.split() == ["0.10.2", "True", "True", "(2,)"]


def test_a_jax_imported_before_is_set_aside():
    """Real jax imported first: afterwards, `jax` is funcgraph for the program, and the
    backend still compiles with the real one."""
    code, out, err = python("""
        import jax as real
        import funcgraph; funcgraph.install_as_jax()
        import jax, jax.numpy as jnp
        print(jax is not real, jnp is funcgraph.numpy, float(jax.jit(lambda x: x * 2)(3.0)))
    """)
    assert code == 0, err
    assert out.split() == ["True", "True", "6.0"]


def test_process_count_under_the_alias():
    """backend/spmd.py re-imported `jax` after the alias and got funcgraph:
    process_count() recursed forever."""
    code, out, err = python("""
        import funcgraph; funcgraph.install_as_jax()
        import jax
        print(jax.process_count(), funcgraph.process_count(), jax.process_index())
    """)
    assert code == 0, err
    assert out.split() == ["1", "1", "0"]


def test_unknown_jax_modules_are_a_clear_error():
    code, out, err = python("""
        import funcgraph; funcgraph.install_as_jax()
        try:
            import jax.not_a_module
        except ModuleNotFoundError as e:
            print(e.name, "|", e)
    """)
    assert code == 0, err
    name, message = out.split(" | ")
    assert name == "jax.not_a_module"
    assert "funcgraph's jax compatibility layer" in message


def test_funcgraph_modules_keep_their_own_names():
    code, out, err = python("""
        import funcgraph, funcgraph.numpy
        spec = funcgraph.numpy.__spec__
        funcgraph.install_as_jax()
        import jax.numpy
        print(jax.numpy.__name__, jax.numpy.__spec__ is spec)
    """)
    assert code == 0, err
    assert out.split() == ["funcgraph.numpy", "True"]


def test_shim_packages_hold_their_shim_children():
    """`from jax.X import child` finds a shim child through the parent's __name__: a
    folder of shims must itself be a shim package, never stand on a funcgraph module."""
    shims = os.path.join(os.path.dirname(funcgraph.__file__), "jax_compat", "jax")
    for folder, _, files in os.walk(shims):
        if "__pycache__" in folder:
            continue
        assert "__init__.py" in files, f"{folder} holds shims but is no shim package"


def test_the_real_jax_lazy_imports_see_the_real_jax():
    """jax imports some modules inside functions; under the alias they still get the
    real modules, and leave none where the program's `import jax...` would find it."""
    code, out, err = python("""
        import sys
        import funcgraph; funcgraph.install_as_jax()
        import jax.numpy
        from funcgraph.backend import jax_modules
        builtins = jax_modules._real_modules["jax._src.api"].__dict__["__builtins__"]
        namespace = {"__builtins__": builtins}
        exec("def lazy():\\n    import jax.numpy as jnp\\n    from jax._src import dlpack\\n"
             "    return jnp, dlpack", namespace)
        jnp, dlpack = namespace["lazy"]()
        print(jax_modules.is_real_jax_module("jax.numpy", jnp),
              jax_modules.is_real_jax_module("jax._src.dlpack", dlpack),
              sys.modules["jax.numpy"] is funcgraph.numpy, "jax._src.dlpack" in sys.modules)
    """)
    assert code == 0, err
    assert out.split() == ["True", "True", "True", "False"]
