"""optax, unmodified, on funcgraph (`python -m funcgraph run`) against the real jax: the
same script runs under both and its numbers agree.  It walks through the optax paths that
needed funcgraph fixes: ShapeDtypeStruct in *_like (factorized), jnp.bool_ on traced
values (ntxent), softmax where= (masked cross entropy), round() of arrays (clipping),
cond operand= (apply_if_finite), lax.broadcast_shapes' error, jax.typeof(x).sharding
(add_noise), and the HLO dialect of Lowered."""
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("optax")

SCRIPT = """
import pickle, sys
import jax, jax.numpy as jnp
import numpy as np
import optax
from optax._src import factorized, utils
from optax.losses import _self_supervised

out = {}
params = {"w": jnp.array([[1.0, -2.0], [0.5, 3.0]]), "b": jnp.array([0.1, -0.2])}

def loss(p):
    return jnp.sum((p["w"] @ jnp.array([1.0, 2.0]) + p["b"]) ** 2)

def train(opt, steps=5):
    state = opt.init(params)
    p = params
    for _ in range(steps):
        grads = jax.grad(loss)(p)
        updates, state = opt.update(grads, state, p)
        p = optax.apply_updates(p, updates)
    return jax.tree.map(np.asarray, p)

out["adam"] = train(optax.adam(1e-2))
out["clip"] = train(optax.chain(optax.clip_by_global_norm(1.0), optax.sgd(0.1)))
out["adafactor"] = train(factorized.scale_by_factored_rms())
out["finite"] = train(optax.apply_if_finite(optax.sgd(0.1), 3))
out["noise"] = train(optax.chain(optax.add_noise(0.01, 0.55, 0), optax.sgd(0.1)))
out["round"] = np.asarray(round(jnp.array(2.5)))
emb = jnp.array([[1.0, 2.0], [2.0, 1.0], [-1.0, 0.5], [0.3, -0.7]])
out["ntxent"] = np.asarray(jax.jit(_self_supervised.ntxent)(emb, jnp.array([0, 0, 1, 1])))
logits = jnp.array([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0]])
labels = jax.nn.one_hot(jnp.array([1, 2]), 3)
where = jnp.array([[True, True, False], [True, False, True]])
out["xent"] = np.asarray(optax.softmax_cross_entropy(logits, labels, where=where))
try:
    utils.multi_normal(jnp.zeros(2), jnp.zeros(3))
except ValueError as e:
    out["broadcast"] = str(e).split(":")[0]
hlo = jax.jit(lambda x: x * 2).lower(jnp.ones(3)).compiler_ir(dialect="hlo").as_hlo_text()
out["hlo"] = "ENTRY" in hlo
pickle.dump(out, open(sys.argv[1], "wb"))
"""


def _run(runner, tmp_path):
    script = tmp_path / "optax_paths.py"
    script.write_text(textwrap.dedent(SCRIPT))
    out = tmp_path / f"out_{len(runner)}.pkl"
    done = subprocess.run([sys.executable, *runner, str(script), str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    return pickle.load(open(out, "rb"))


def _compare(ours, theirs, path=""):
    if isinstance(theirs, dict):
        assert set(ours) == set(theirs), path
        for key in theirs:
            _compare(ours[key], theirs[key], f"{path}/{key}")
    elif isinstance(theirs, np.ndarray):
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, path
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6, err_msg=path)
    else:
        assert ours == theirs, path


def test_optax_paths_match_jax(tmp_path):
    ours = _run(["-m", "funcgraph", "run"], tmp_path)
    theirs = _run([], tmp_path)
    _compare(ours, theirs)
