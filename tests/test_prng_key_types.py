"""Typed PRNG key arrays (random.key, key<fry>) on funcgraph's own API, checked against
jax's bits; and mutable refs (funcgraph.new_ref)."""
import jax
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import dtypes, lax, random

kd = random.key_data


def _same(a, b):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_key_is_typed():
    k = random.key(0)
    assert k.shape == () and k.dtype == dtypes.threefry_key and str(k.dtype) == "key<fry>"
    assert fnp.issubdtype(k.dtype, dtypes.prng_key)
    assert fnp.issubdtype(k.dtype, dtypes.extended)
    assert not fnp.issubdtype(np.float32, dtypes.prng_key)
    assert random.PRNGKey(0).dtype == np.uint32 and random.PRNGKey(0).shape == (2,)
    assert repr(k) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"
    assert str(fg.typeof(k)) == "key<fry>[]"
    with pytest.raises(TypeError, match="PRNGKey dtype cannot be converted"):
        np.asarray(k)


def test_split_fold_in_and_samplers_match_jax():
    k, jk = random.key(7), jax.random.key(7)
    _same(kd(random.split(k, 3)), jax.random.key_data(jax.random.split(jk, 3)))
    _same(kd(random.fold_in(k, 5)), jax.random.key_data(jax.random.fold_in(jk, 5)))
    _same(random.normal(random.split(k)[1], (4,)), jax.random.normal(jax.random.split(jk)[1], (4,)))
    _same(random.bits(k, (3,)), jax.random.bits(jk, (3,)))


def test_wrap_key_data_roundtrip():
    data = np.array([[1, 2], [3, 4]], np.uint32)
    keys = random.wrap_key_data(data)
    assert keys.shape == (2,)
    _same(kd(keys), data)
    with pytest.raises(TypeError):
        random.wrap_key_data(np.zeros((3,), np.float32))


def test_keys_under_jit_vmap_scan_cond():
    k, jk = random.key(0), jax.random.key(0)
    ks, jks = random.split(k, 4), jax.random.split(jk, 4)
    _same(kd(fg.vmap(random.split)(ks)), jax.random.key_data(jax.vmap(jax.random.split)(jks)))
    _same(fg.vmap(lambda x: random.normal(x, (2,)))(ks),
          jax.vmap(lambda x: jax.random.normal(x, (2,)))(jks))
    _same(kd(fg.jit(lambda x: x[::2])(ks)), jax.random.key_data(jks[::2]))
    _same(kd(fg.jit(lambda x, i: x[i])(ks, 1)), jax.random.key_data(jks[1]))
    _same(kd(fg.jit(lambda x: x.reshape(2, 2).T)(ks)), jax.random.key_data(jks.reshape(2, 2).T))
    _same(kd(fg.jit(lambda x: fnp.concatenate([x, x[:1]]))(ks)),
          jax.random.key_data(jax.numpy.concatenate([jks, jks[:1]])))
    pred = np.array([True, False, True, False])
    _same(kd(fg.jit(lambda x: fnp.where(pred, x, x[::-1]))(ks)),
          jax.random.key_data(jax.numpy.where(pred, jks, jks[::-1])))
    c, ys = lax.scan(lambda c, x: (random.fold_in(c, 1), random.split(x)), k, ks)
    jc, jys = jax.lax.scan(lambda c, x: (jax.random.fold_in(c, 1), jax.random.split(x)), jk, jks)
    _same(kd(c), jax.random.key_data(jc))
    _same(kd(ys), jax.random.key_data(jys))
    out = lax.cond(True, lambda a: random.split(a)[1], lambda a: a, k)
    _same(kd(out), jax.random.key_data(jax.random.split(jk)[1]))


def test_key_equality_and_eval_shape():
    ks = random.split(random.key(1), 3)
    _same(ks == ks[::-1], np.array([False, True, False]))
    out = fg.eval_shape(lambda: random.key(0))
    assert out.shape == () and out.dtype == dtypes.threefry_key


def test_key_grad_has_no_tangent():
    k = random.key(0)
    g = fg.grad(lambda x, key: (x * random.normal(key)).sum())(1.0, k)
    np.testing.assert_allclose(g, jax.grad(lambda x, key: (x * jax.random.normal(key)).sum())(
        1.0, jax.random.key(0)), rtol=1e-6)


def test_refs_eager_and_inside_jit():
    r = fg.new_ref(fnp.arange(3.0))
    assert str(fg.typeof(r)) == "Ref{float32[3]}"
    r[...] = r[...] + 1
    r[1] = 10.0
    _same(r[...], [1.0, 10.0, 3.0])

    @fg.jit
    def f(x):
        ref = fg.new_ref(x)
        ref[...] += 2
        return ref[...]
    _same(f(fnp.ones(2)), [3.0, 3.0])
    with pytest.raises(ValueError, match="shape"):
        r[...] = fnp.zeros(2)
    _same(fg.freeze(r), [1.0, 10.0, 3.0])


def test_astype_of_a_key_array_to_its_own_dtype_is_a_no_op_as_jax():
    """optax's MultiSteps keeps a key in its state: jnp.astype(jnp.where(emit, new, old),
    old.dtype).  Other conversions of keys are jax's ValueError."""
    for mod in (fg, jax):
        key = mod.random.key(3)
        kept = mod.numpy.astype(mod.numpy.where(True, key, key), key.dtype)
        assert kept.dtype == key.dtype
        np.testing.assert_array_equal(mod.random.key_data(kept), mod.random.key_data(key))
        for value, dtype in ((key, np.float32), (mod.numpy.ones(2), key.dtype)):
            with pytest.raises(ValueError, match="Cannot convert_element_type from"):
                mod.numpy.astype(value, dtype)


def test_key_arrays_are_written_by_index_like_jax():
    """x.at[i].set(key) on a key array (flax's while_loop test stores keys in a state
    array): eagerly, under jit and under vmap, the same key data as jax."""
    def build(mod):
        write = lambda ks, k, i: ks.at[i].set(k)  # noqa: E731
        ks, k = mod.random.split(mod.random.key(0), 4), mod.random.key(7)
        return [write(ks, k, 2), mod.jit(write)(ks, k, 2),
                mod.vmap(write, (None, 0, None))(ks, mod.random.split(k, 3), 1),
                ks.at[1:3].set(mod.random.split(k, 2))]
    for mine, theirs in zip(build(fg), build(jax), strict=True):
        assert mine.dtype == fg.random.key(0).dtype
        np.testing.assert_array_equal(random.key_data(mine), jax.random.key_data(theirs))
