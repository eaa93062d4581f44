"""What flax needs of `jax` under install_as_jax: jax.extend.linear_util, jax.api_util,
jax.interpreters.partial_eval, jax.extend.source_info_util, jax._src.tree_util._registry,
jax.experimental.layout/mesh_utils, and the engine behaviour flax's linen relies on.  Each
script runs twice, on the real jax (plain python) and on funcgraph (python -m funcgraph
run), and the two must print the same lines."""
import pytest

from tests.util import run_under_jax_and_alias


def same_as_jax(script, tmp_path):
    real, alias = run_under_jax_and_alias(script, tmp_path, cwd=tmp_path)
    assert alias.splitlines() == real.splitlines()
    return alias.splitlines()


def test_linear_util_api_util_partial_eval(tmp_path):
    lines = same_as_jax("""
        import numpy as np
        import jax, jax.numpy as jnp
        from jax.extend import linear_util as lu
        from jax.interpreters import partial_eval as pe

        def f(x, y):
            a = jnp.sin(x) * 2
            return {"a": a, "b": a + y, "c": 3}

        args = (jnp.arange(3.0), jnp.ones(3))
        leaves, tree = jax.tree_util.tree_flatten((args, {}))
        dbg = jax.api_util.debug_info("test", f, args, {})
        print(dbg.traced_for, dbg.func_src_info.split(" ")[0], dbg.arg_names)
        ff, out_tree = jax.api_util.flatten_fun(lu.wrap_init(f, debug_info=dbg), tree)
        pvals = [pe.PartialVal.known(leaves[0]),
                 pe.PartialVal.unknown(jax.core.ShapedArray((3,), np.dtype("float32")))]
        jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(ff, pvals)
        out = [("K", np.round(np.asarray(c), 5).tolist()) if pv is None else ("U", str(pv))
               for pv, c in out_pvals]
        print(jax.tree_util.tree_unflatten(out_tree(), out))
        print(len(jaxpr.invars), len(jaxpr.outvars), len(consts))
        ff, _ = jax.api_util.flatten_fun(lu.wrap_init(f, debug_info=dbg), tree)
        _, out_pvals, _ = pe.trace_to_jaxpr_nounits(ff, pvals, instantiate=True)
        print([pv is None for pv, _ in out_pvals])

        @lu.transformation
        def scale(k, *args):
            out = yield args, {}
            yield [o * k for o in out]

        @lu.transformation_with_aux
        def count(*args):
            out = yield args, {}
            yield out, len(out)

        g, aux = count(scale(lu.wrap_init(lambda *xs: [x + 1 for x in xs], debug_info=dbg), 10))
        print(g.call_wrapped(1, 2), aux())
        print(jax.api_util.rebase_donate_argnums((3, 4), (0, 1)))
        print(jax.api_util.flatten_axes(
            "in_axes", jax.tree_util.tree_structure(((1, 2), {"a": 3})), (0, None)))
        print(jax.api_util.donation_vector(
            (1,), ("k",), jax.tree_util.tree_structure(((1, (2, 3)), {"k": 3, "j": [1, 2]}))))
        fp, dyn = jax.api_util.argnums_partial(
            lu.wrap_init(lambda a, b, c: a * 100 + b * 10 + c, debug_info=dbg), (0, 2), (1, 2, 3))
        print(fp.call_wrapped(*dyn), dyn)
    """, tmp_path)
    assert lines[-1] == "123 (1, 3)"


def test_source_info_registry_layout_mesh_utils(tmp_path):
    same_as_jax("""
        import jax, jax.numpy as jnp
        from jax.extend import source_info_util as siu
        from jax._src.tree_util import _registry
        from jax._src import traceback_util
        from jax.experimental.layout import Format, Layout
        from jax.experimental import mesh_utils
        from jax.sharding import PartitionSpec as P

        with siu.extend_name_stack("outer"):
            with siu.transform_name_stack("jvp"):
                with siu.extend_name_stack("inner"):
                    print(str(siu.current_name_stack()))
        print(repr(str(siu.current_name_stack())))
        print(tuple in _registry, int in _registry, dict in _registry, type(None) in _registry)
        print(traceback_util.api_boundary(lambda x: x + 1)(1))
        print(Format(None, None) == Format(), Layout((1, 0)) == Layout((1, 0)))
        print(mesh_utils.create_device_mesh((len(jax.devices()), 1)).shape)
        print(P("a", P.UNCONSTRAINED, None), P("a", None).index(None), P("a") + ("b",))
        print(jax.sharding.get_abstract_mesh().empty)
        print(jax.eval_shape(lambda x: x * 2, jax.core.ShapedArray((2,), jnp.float32)))
        print(jnp.shape(jax.ShapeDtypeStruct((3, 2), jnp.float32)))
        print(jax.version.__version_info__ > (0, 4, 25))
    """, tmp_path)


def test_engine_pieces_flax_uses(tmp_path):
    same_as_jax("""
        import functools
        import numpy as np
        import jax, jax.numpy as jnp
        from jax import lax

        # einsum: one dot_general accumulating in the result dtype, _dot_general hook
        jaxpr = jax.make_jaxpr(lambda a, b: jnp.einsum("ij,jk->ik", a, b))(
            jnp.ones((2, 3)), jnp.ones((3, 4)))
        print([(e.primitive.name, str(e.params["preferred_element_type"])) for e in jaxpr.eqns])
        calls = []
        def dg(*args, **kwargs):
            calls.append(kwargs["preferred_element_type"])
            return lax.dot_general(*args, **kwargs)
        print(jnp.einsum("ij,jk->ik", jnp.ones((2, 3)), jnp.ones((3, 4)), _dot_general=dg).sum(),
              calls)

        # custom_vjp/custom_jvp called with keywords and defaults
        @functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
        def f(x, k=3.0):
            return x * k
        f.defvjp(lambda x, k: (f(x, k), x), lambda k, r, g: (g * k,))
        print(f(2.0), f(2.0, k=4.0), jax.grad(f)(2.0))

        # locally connected convolution
        rng = np.random.RandomState(0)
        x = rng.randn(2, 7, 6, 3).astype(np.float32)
        w = rng.randn(5, 5, 3 * 6, 4).astype(np.float32)
        y = lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (3, 2),
                                           dimension_numbers=("NHWC", "HWIO", "NHWC"))
        print(y.shape, round(float(np.asarray(y).sum()), 3))

        # complex variance_scaling draws jax's bits
        for dist in ["uniform", "truncated_normal"]:
            init = jax.nn.initializers.variance_scaling(1.0, "fan_avg", dist)
            v = np.asarray(init(jax.random.key(0), (3, 4), jnp.complex64))
            print(dist, v.dtype, np.round(v.ravel()[:2], 5))

        # mixed narrow floats in an eager dot
        a = jnp.ones((2, 3), jnp.float8_e4m3fn)
        print(lax.dot_general(a, a.T, (((1,), (0,)), ((), ()))).dtype)
        print(jax.vmap(lambda v: lax.pmean(v, "i", axis_index_groups=None),
                       axis_name="i")(jnp.arange(4.0)))
    """, tmp_path)


@pytest.mark.parametrize("case", ["lazy_init", "scan_broadcast"])
def test_flax_linen_runs(tmp_path, case):
    pytest.importorskip("flax")
    same_as_jax("""
        import jax, jax.numpy as jnp
        import flax.linen as nn

        case = %r
        if case == "lazy_init":
            model = nn.Dense(3)
            v = model.lazy_init(jax.random.key(0), jax.ShapeDtypeStruct((2, 4), jnp.float32))
            print(jax.tree_util.tree_map(lambda a: (a.shape, str(a.dtype)), v))
            print(float(jnp.round(v["params"]["kernel"].sum(), 4)))
        else:
            class Body(nn.Module):
                @nn.compact
                def __call__(self, c, x):
                    c = nn.Dense(4)(c) + x
                    return c, c.sum()

            Scan = nn.scan(Body, variable_broadcast="params", split_rngs={"params": False},
                           in_axes=0, out_axes=0)
            xs = jnp.ones((5, 4))
            v = Scan().init(jax.random.key(0), jnp.zeros(4), xs)
            c, ys = Scan().apply(v, jnp.zeros(4), xs)
            print(c.shape, ys.shape, round(float(ys.sum()), 3))
    """ % case, tmp_path)
