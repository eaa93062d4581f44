"""flax.nnx on funcgraph (`python -m funcgraph run`): typed keys through jax's names,
refs, and a small nnx model, compared with the same script under the real jax."""
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("flax")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = textwrap.dedent("""
    import jax, jax.numpy as jnp
    k = jax.random.key(0)
    print(repr(k))
    print(jax.typeof(k), jnp.issubdtype(k.dtype, jax.dtypes.prng_key))
    ks = jax.random.split(k, 3)
    print(jax.random.key_data(jax.vmap(jax.random.split)(ks))[1])
    print(jax.random.key_data(jax.jit(lambda x: x[::2])(ks)))
    r = jax.new_ref(jnp.arange(3.0))
    r[1] = 5.0
    print(jax.typeof(r), r[...])
    from flax import nnx
    model = nnx.Linear(3, 2, rngs=nnx.Rngs(0))
    print(model.kernel[...])
    @nnx.jit
    def step(m, x):
        return m(x).sum()
    print(step(model, jnp.ones((4, 3))))
    rngs = nnx.Rngs(params=1, dropout=2)
    print(jax.random.key_data(rngs.dropout()), rngs.dropout.count[...])
    drop = nnx.Dropout(0.5, rngs=nnx.Rngs(dropout=3))
    print(drop(jnp.ones((6,))))
""")


def _run(args, script_path):
    return subprocess.run([sys.executable, *args, script_path], capture_output=True,
                          text=True, timeout=600, cwd=ROOT)


def test_nnx_script_matches_jax(tmp_path):
    path = tmp_path / "nnx_script.py"
    path.write_text(SCRIPT)
    real = _run([], str(path))
    assert real.returncode == 0, real.stderr
    ours = _run(["-m", "funcgraph", "run"], str(path))
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == real.stdout
