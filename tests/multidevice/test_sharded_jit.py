"""jit over a mesh: in/out shardings, propagation from committed inputs, sharding
constraints, transformations under sharded jit and the collectives XLA inserts,
against jax with the same shardings."""
import collections
import re

import jax
import jax.numpy as jnp
import jax.sharding as js
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax
from funcgraph.sharding import NamedSharding, PartitionSpec as P

JP = js.PartitionSpec


def _both(meshes, shape=(4, 2), names=("x", "y")):
    fm, jm = meshes(shape, names)
    return (lambda *s: NamedSharding(fm, P(*s))), (lambda *s: js.NamedSharding(jm, JP(*s)))


def _main_shardings(text):
    """The sdy.sharding attributes of @main's signature, in order."""
    signature = next(line for line in text.splitlines() if "func.func public @main" in line)
    return re.findall(r"sdy\.sharding = (#sdy\.sharding<[^>]*>)", signature)


def test_in_out_shardings_results_and_lowering_match_jax(meshes):
    fs, jsh = _both(meshes)
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    w = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)

    def f(np_, a, b):
        return np_.tanh(a @ b).sum(0), a * 2
    fj = fg.jit(lambda a, b: f(fnp, a, b), in_shardings=(fs("x"), fs()),
                out_shardings=(fs("y"), fs("x", "y")))
    jj = jax.jit(lambda a, b: f(jnp, a, b), in_shardings=(jsh("x"), jsh()),
                 out_shardings=(jsh("y"), jsh("x", "y")))
    got, want = fj(x, w), jj(x, w)
    for g, wv in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(wv), rtol=1e-5)
        assert repr(g.sharding) == repr(wv.sharding)
        assert [s.index for s in g.addressable_shards] == [s.index for s in wv.addressable_shards]
    ours, theirs = fj.lower(x, w).as_text(), jj.lower(x, w).as_text()
    assert _main_shardings(ours) == _main_shardings(theirs)
    assert "mhlo.num_partitions = 8" in ours and "sdy.mesh @mesh" in ours


@pytest.mark.parametrize("name,fun,spec", [
    ("elementwise", lambda np_, a: np_.sin(a) * 2, ("x",)),
    ("elementwise_2d", lambda np_, a: a + 1, ("x", "y")),
    ("transpose", lambda np_, a: a.T * 2, ("x",)),
    ("reduce_replicates", lambda np_, a: a.sum(), ("x",)),
    ("reduce_keeps_other_axis", lambda np_, a: a.sum(1), (None, "y")),
])
def test_shardings_propagate_from_committed_inputs_like_jax(meshes, name, fun, spec):
    fs, jsh = _both(meshes)
    value = np.arange(32, dtype=np.float32).reshape(8, 4)
    x = fg.device_put(value, fs(*spec))
    y = jax.device_put(value, jsh(*spec))
    got = fg.jit(lambda a: fun(fnp, a))(x)
    want = jax.jit(lambda a: fun(jnp, a))(y)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert repr(got.sharding) == repr(want.sharding)
    assert got.committed == want.committed


def test_uncommitted_arguments_join_the_mesh_of_committed_ones(meshes):
    fs, jsh = _both(meshes)
    x = fg.device_put(np.arange(8, dtype=np.float32), fs("x"))
    got = fg.jit(lambda a, b: a * b)(x, np.full(8, 3, np.float32))
    want = jax.jit(lambda a, b: a * b)(jax.device_put(np.arange(8, dtype=np.float32), jsh("x")),
                                       np.full(8, 3, np.float32))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert repr(got.sharding) == repr(want.sharding)


def test_committed_argument_with_other_sharding_is_an_error_as_in_jax(meshes):
    fs, _ = _both(meshes)
    x = fg.device_put(np.ones(8, np.float32), fs("x"))
    with pytest.raises(ValueError, match="does not match the sharding on the respective arg"):
        fg.jit(lambda a: a * 2, in_shardings=fs("y"))(x)


def test_with_sharding_constraint_prints_lowers_and_runs_like_jax(meshes):
    fs, jsh = _both(meshes)
    x = np.arange(32, dtype=np.float32).reshape(8, 4)

    def f(np_, wsc, s, a):
        return wsc(np_.cos(a) * 2, s).sum(0)
    fj = fg.jit(lambda a: f(fnp, lax.with_sharding_constraint, fs(None, "y"), a),
                in_shardings=fs("x"))
    jj = jax.jit(lambda a: f(jnp, jax.lax.with_sharding_constraint, jsh(None, "y"), a),
                 in_shardings=jsh("x"))
    np.testing.assert_allclose(np.asarray(fj(x)), np.asarray(jj(x)), rtol=1e-5)
    assert "sharding_constraint[sharding=NamedSharding(" in str(fg.make_jaxpr(fj)(x))
    ours, theirs = fj.lower(x).as_text(), jj.lower(x).as_text()
    constraint = re.compile(r"sdy\.sharding_constraint %\S+ (<[^>]*>)")
    assert constraint.findall(ours) == constraint.findall(theirs) == ['<@mesh, [{}, {"y"}]>']
    # Eagerly it places the value.
    placed = lax.with_sharding_constraint(fg.device_put(x), fs("x"))
    assert placed.sharding == fs("x")
    np.testing.assert_array_equal(np.asarray(placed), x)


def test_constraint_alone_sets_the_mesh(meshes):
    fs, _ = _both(meshes)
    out = fg.jit(lambda a: lax.with_sharding_constraint(a + 1, fs("x")))(np.zeros(8, np.float32))
    assert out.sharding == fs("x")
    np.testing.assert_array_equal(np.asarray(out), np.ones(8))


def _loss(np_, params, batch):
    (w1, b1, w2, b2), (xs, ys) = params, batch
    h = np_.tanh(xs @ w1 + b1)
    out = h @ w2 + b2
    return ((out - ys) ** 2).mean()


def _params(rng):
    return (rng.normal(size=(16, 32)).astype(np.float32) * 0.3, np.zeros(32, np.float32),
            rng.normal(size=(32, 4)).astype(np.float32) * 0.3, np.zeros(4, np.float32))


def test_grad_under_sharded_jit_matches_jax(meshes):
    fs, jsh = _both(meshes, (8,), ("data",))
    rng = np.random.default_rng(0)
    params = _params(rng)
    batch = (rng.normal(size=(64, 16)).astype(np.float32), rng.normal(size=(64, 4)).astype(np.float32))
    fj = fg.jit(fg.grad(lambda p, b: _loss(fnp, p, b)), in_shardings=(fs(), fs("data")))
    jj = jax.jit(jax.grad(lambda p, b: _loss(jnp, p, b)), in_shardings=(jsh(), jsh("data")))
    for g, w in zip(fj(params, batch), jj(params, batch), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=1e-6)
        assert repr(g.sharding) == repr(w.sharding)
    # grad of a sharded jit: the shardings become constraints around the call.
    inner = fg.jit(lambda p, b: _loss(fnp, p, b), in_shardings=(fs(), fs("data")))
    outer = fg.grad(inner)(params, batch)
    for g, w in zip(outer, jj(params, batch), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=1e-6)


def test_vmap_spmd_axis_name_under_sharded_jit(meshes):
    fs, jsh = _both(meshes, (4, 2), ("b", "m"))
    x = np.arange(4 * 8 * 6, dtype=np.float32).reshape(4, 8, 6)

    def per_example(np_, wsc, s, a):
        return np_.sin(wsc(a * 2, s)).sum(1)
    fv = fg.vmap(lambda a: per_example(fnp, lax.with_sharding_constraint, fs("m"), a),
                 spmd_axis_name="b")
    jv = jax.vmap(lambda a: per_example(jnp, jax.lax.with_sharding_constraint, jsh("m"), a),
                  spmd_axis_name="b")
    fj, jj = fg.jit(fv, in_shardings=fs("b")), jax.jit(jv, in_shardings=jsh("b"))
    np.testing.assert_allclose(np.asarray(fj(x)), np.asarray(jj(x)), rtol=1e-5)
    constraint = re.compile(r"sdy\.sharding_constraint %\S+ (<[^>]*>)")
    assert constraint.findall(fj.lower(x).as_text()) == \
        constraint.findall(jj.lower(x).as_text()) == ['<@mesh, [{"b"}, {"m"}, {}]>']
    assert repr(fj(x).sharding) == repr(jj(x).sharding)


def test_scan_and_cond_under_sharded_jit_match_jax(meshes):
    fs, jsh = _both(meshes, (8,), ("d",))
    xs = np.linspace(-2, 2, 5 * 16, dtype=np.float32).reshape(5, 16)

    def f(np_, lax_, a):
        def body(c, x):
            c = lax_.cond(x.sum() > 0, lambda v: v + np_.sin(x), lambda v: v * 0.5, c)
            return c, c.sum()
        return lax_.scan(body, np_.ones(16, np.float32), a)
    fj = fg.jit(lambda a: f(fnp, lax, a), in_shardings=fs(None, "d"))
    jj = jax.jit(lambda a: f(jnp, jax.lax, a), in_shardings=jsh(None, "d"))
    for g, w in zip(fj(xs), jj(xs), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5)
        assert repr(g.sharding) == repr(w.sharding)


def _train_step(np_, grad):
    def step(params, batch):
        g = grad(lambda p: _loss(np_, p, batch))(params)
        return tuple(p - 0.1 * d for p, d in zip(params, g, strict=True))
    return step


COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "collective-permute",
               "all-to-all")


def _count_collectives(hlo):
    counts = collections.Counter()
    for line in hlo.splitlines():
        for kind in COLLECTIVES:
            if re.search(rf"\s{kind}(-start)?\(", line):
                counts[kind] += 1
    return counts


def test_data_parallel_train_step_has_jax_collectives(meshes):
    fs, jsh = _both(meshes, (8,), ("data",))
    rng = np.random.default_rng(1)
    params = _params(rng)
    batch = (rng.normal(size=(64, 16)).astype(np.float32), rng.normal(size=(64, 4)).astype(np.float32))
    fj = fg.jit(_train_step(fnp, fg.grad), in_shardings=(fs(), fs("data")), out_shardings=fs())
    jj = jax.jit(_train_step(jnp, jax.grad), in_shardings=(jsh(), jsh("data")),
                 out_shardings=jsh())
    ours = _count_collectives(fj.lower(params, batch).compile().as_text())
    theirs = _count_collectives(jj.lower(params, batch).compile().as_text())
    assert ours == theirs and ours["all-reduce"] >= 1
    for g, w in zip(fj(params, batch), jj(params, batch), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=1e-6)


def test_model_parallel_layer_has_jax_collectives(meshes):
    fs, jsh = _both(meshes, (2, 4), ("data", "model"))
    rng = np.random.default_rng(2)
    x = rng.normal(size=(8, 16)).astype(np.float32)
    w1 = rng.normal(size=(16, 32)).astype(np.float32)
    w2 = rng.normal(size=(32, 8)).astype(np.float32)

    def f(np_, a, b, c):
        return np_.tanh(a @ b) @ c
    shardings = (("data", None), (None, "model"), ("model", None))
    fj = fg.jit(lambda a, b, c: f(fnp, a, b, c), in_shardings=tuple(fs(*s) for s in shardings))
    jj = jax.jit(lambda a, b, c: f(jnp, a, b, c), in_shardings=tuple(jsh(*s) for s in shardings))
    np.testing.assert_allclose(np.asarray(fj(x, w1, w2)), np.asarray(jj(x, w1, w2)), rtol=1e-4)
    assert repr(fj(x, w1, w2).sharding) == repr(jj(x, w1, w2).sharding)
    ours = _count_collectives(fj.lower(x, w1, w2).compile().as_text())
    theirs = _count_collectives(jj.lower(x, w1, w2).compile().as_text())
    assert ours == theirs and ours["all-reduce"] >= 1


def test_donate_argnums_with_shardings(meshes):
    fs, _ = _both(meshes, (8,), ("d",))
    x = fg.device_put(np.arange(16, dtype=np.float32), fs("d"))
    out = fg.jit(lambda a: a + 1, in_shardings=fs("d"), out_shardings=fs("d"),
                 donate_argnums=0)(x)
    np.testing.assert_array_equal(np.asarray(out), np.arange(16) + 1)
    assert out.sharding == fs("d")


@pytest.mark.parametrize("name", ["solve", "eigh", "svd", "qr", "cholesky", "eig"])
def test_batched_lapack_calls_keep_a_batch_sharding_as_jaxs(meshes, name):
    """LAPACK's custom calls carry Shardy rules over their batch axes (as jax's do): a
    batch of matrices sharded over a mesh axis stays sharded, with jax's values."""
    fs, js_ = _both(meshes, (8,), ("b",))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 4, 4)).astype(np.float32)
    a = a @ np.swapaxes(a, -1, -2) + 4 * np.eye(4, dtype=np.float32)
    calls = {"solve": lambda m: (lambda x: m.numpy.linalg.solve(x, x[..., :2])),
             "eigh": lambda m: (lambda x: m.numpy.linalg.eigh(x)[0]),
             "svd": lambda m: (lambda x: m.numpy.linalg.svd(x)[1]),
             "qr": lambda m: (lambda x: m.numpy.linalg.qr(x)[1]),
             "cholesky": lambda m: (lambda x: m.numpy.linalg.cholesky(x)),
             "eig": lambda m: (lambda x: m.numpy.linalg.eigvals(x))}
    ours = fg.jit(calls[name](fg))(fg.device_put(a, fs("b")))
    theirs = jax.jit(calls[name](jax))(jax.device_put(a, js_("b")))
    assert ours.sharding.spec == P("b")
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-4, atol=1e-4)
