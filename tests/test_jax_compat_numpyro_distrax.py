"""jax compatibility for numpyro and distrax (with tfp's jax substrate): the shims they
import (jax.extend.core.primitives, jax.interpreters.xla's tables, jax._src.core's
trace_state_clean) and the jax semantics their code relies on (jnp.shape/ndim/size of
None and lists, the five-argument lax.cond, boolean times inf, config contexts as
decorators), each compared with the real jax."""
import warnings

import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax
from tests.util import run_under_jax_and_alias

run_both = run_under_jax_and_alias


def test_shape_ndim_size_of_non_arrays_as_jax():
    for value, shape in [(None, ()), (3.0, ()), ("a", ()), ([1, 2], (2,)),
                         ([[1, 2]], (1, 2))]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert fnp.shape(value) == shape
            assert fnp.ndim(value) == len(shape)
            assert fnp.size(value) == int(np.prod(shape))
        warned = any(issubclass(w.category, DeprecationWarning) for w in caught)
        assert warned == (value is None or isinstance(value, list))
    x = fnp.ones((2, 3, 4))
    assert fnp.size(x, axis=1) == 3 and fnp.size(x, axis=(0, 2)) == 8
    assert fnp.shape(fg.ShapeDtypeStruct((2, 5), np.float32)) == (2, 5)


def test_five_argument_cond():
    def f(p):
        return lax.cond(p, 1.0, lambda x: x + 1, 2.0, lambda x: x * 10)
    assert float(f(True)) == 2.0 and float(f(False)) == 20.0
    assert float(fg.jit(f)(False)) == 20.0
    with pytest.raises(TypeError):
        lax.cond(True, 1.0, 2.0)


def test_bool_times_inf_is_zero_as_under_xla():
    inf = fnp.array(np.inf, np.float32)
    assert float(inf * fnp.array(False)) == 0.0
    assert float(fnp.array(False) * inf) == 0.0
    assert float(fnp.multiply(np.inf, fnp.array(False))) == 0.0
    np.testing.assert_array_equal(
        fnp.array([np.nan, 1.0]) * fnp.array([False, True]), [0.0, 1.0])
    assert np.isnan(float(fnp.nan * fnp.array(True)))
    assert float(fg.grad(lambda a: a * fnp.array(True))(2.0)) == 1.0
    assert float(fg.grad(lambda a: a * fnp.array(False))(np.inf)) == 0.0
    # both boolean: logical and; neither: a plain product
    assert fnp.multiply(fnp.array(True), fnp.array(False)).dtype == np.bool_
    assert np.isnan(float(inf * fnp.array(0.0)))


def test_config_context_is_a_decorator():
    @fg.numpy_rank_promotion("raise")
    def f(a, b):
        return a + b
    with pytest.raises(ValueError):
        f(fnp.ones(3), fnp.ones((2, 3)))
    assert fg.config.jax_numpy_rank_promotion == "allow"
    f(fnp.ones(3), fnp.ones(3))


def test_semantics_match_jax(tmp_path):
    jax_out, fg_out = run_both("""
        import warnings; warnings.simplefilter("ignore")
        import numpy as np
        import jax, jax.numpy as jnp
        from jax import lax
        print(jnp.shape(None), jnp.ndim(None), jnp.size(None), jnp.shape([[1, 2]]))
        print(lax.cond(False, 1., lambda x: x + 1, 2., lambda x: x * 10))
        print(jnp.inf * jnp.array(False), jnp.array([jnp.nan, 1.]) * jnp.array([False, True]))
        s = jax.ShapeDtypeStruct((2, 3), jnp.float32)
        print(jnp.zeros_like(s).shape, jnp.full_like(s, 2.).dtype)
        print(jax.eval_shape(lambda x: x * 2, jax.core.ShapedArray((2, 3), jnp.float32)))
        print(jax.interpreters.xla.canonicalize_dtype_handlers[np.ndarray](
            np.ones(2, np.float64)).dtype)
        print(jax.core.pytype_aval_mappings[np.ndarray](np.ones((2,), np.float32)))
        from jax._src.core import trace_state_clean
        print(trace_state_clean(), jax.jit(lambda x: (x, trace_state_clean())[0])(1.))
        from jax.extend.core import primitives as P
        print(P.jit_p.call_primitive, P.call_p.call_primitive, P.add_p.call_primitive)
        print(jax.make_jaxpr(lambda x: jax.jit(jnp.sin)(x))(1.).eqns[0].primitive is P.jit_p)
    """, tmp_path)
    assert jax_out == fg_out


def test_numpyro_and_distrax_run(tmp_path):
    jax_out, fg_out = run_both("""
        import warnings; warnings.simplefilter("ignore")
        import jax, jax.numpy as jnp
        import numpyro, numpyro.distributions as dist
        from numpyro.ops.provenance import eval_provenance
        from numpyro.distributions.util import binary_cross_entropy_with_logits as bce
        import distrax
        print(eval_provenance(lambda x, y, z: x + jax.jit(jnp.sin)(y), x=1., y=2., z=3.)
              == frozenset({"x", "y"}))
        print(bce(-jnp.inf, 0), bce(jnp.inf, 1))
        print(round(float(dist.Normal(0., 1.).log_prob(0.5)), 5))
        print(round(float(distrax.Normal(0., 1.).log_prob(0.5)), 5))
        print(distrax.Block(lambda x: x, 1).is_constant_jacobian)
        print(round(float(distrax.Tanh().forward_log_det_jacobian(0.3)), 5))
    """, tmp_path)
    assert jax_out == fg_out


def test_enable_custom_prng_makes_typed_keys():
    assert fg.random.PRNGKey(0).dtype == np.uint32
    with fg.enable_custom_prng():
        assert fg.dtypes.issubdtype(fg.random.PRNGKey(0).dtype, fg.dtypes.prng_key)
        assert fg.dtypes.issubdtype(fg.random.split(np.zeros(2, np.uint32)).dtype,
                                    fg.dtypes.prng_key)
        assert fg.random.normal(fg.random.PRNGKey(0), (2,)).shape == (2,)
    assert fg.random.PRNGKey(0).dtype == np.uint32 and not fg.enable_custom_prng.value


def test_small_jax_spellings():
    assert fnp.expand_dims(fnp.ones(2), np.int32(1)).shape == (2, 1)
    assert fg.config.x64_enabled == fg.config.jax_enable_x64
    assert fg.typeof(fnp.ones(2, np.int32)).at_least_vspace().dtype == fg.dtypes.float0
    assert fg.typeof(fnp.float32(1)).at_least_vspace() == fg.typeof(fnp.float32(1))


def test_scalar_zeros_under_jit_are_new_objects():
    # tfp's bijector caches key on identity: a shared constant would hand back a tracer
    # of an earlier trace
    seen = []

    @fg.jit
    def f(x):
        seen.extend([fnp.zeros(()), fnp.zeros(()), fnp.ones(()), fnp.full((), 2.0)])
        return x
    f(1.0)
    assert len(set(map(id, seen))) == len(seen)
