"""What flax.nnx's transforms need of `jax` under install_as_jax: AbstractMesh and
NamedSharding over it (jax.typeof(x).sharding, get_abstract_mesh, use_abstract_mesh),
eager shard_map result shardings, cond's passthrough outputs, vmap's out_axes error,
scan's trace cache, custom_vjp cotangents given as a tree prefix, grad's aux rebuilt
outside the trace, pytree aux data kept as given, Refs passed to jit, jnp.copy.  Each
script runs twice, on the real jax (plain python) and on funcgraph (python -m funcgraph
run), and the two must print the same lines."""
from tests.util import run_under_jax_and_alias


def same_as_jax(script, tmp_path):
    real, alias = run_under_jax_and_alias(script, tmp_path, cwd=tmp_path)
    assert alias.splitlines() == real.splitlines()
    return alias.splitlines()


def test_abstract_mesh_and_named_sharding_over_it(tmp_path):
    lines = same_as_jax("""
        import jax, jax.numpy as jnp
        from jax.sharding import AbstractMesh, AxisType, NamedSharding, PartitionSpec as P
        print(jax.typeof(jnp.ones((2, 3))).sharding.spec, jax.sharding.get_abstract_mesh().empty)
        mesh = jax.make_mesh((1, 1), ('a', 'b'), axis_types=(AxisType.Auto,) * 2)
        with jax.set_mesh(mesh):
            am = jax.sharding.get_abstract_mesh()
            print(type(am).__name__, am.axis_names, am.axis_sizes, am == mesh.abstract_mesh)
            print(am.are_all_axes_auto, am.are_all_axes_explicit, am.empty, am.size)
            s = NamedSharding(am, P('a', 'b'))
            print(s.mesh is am, s.spec, s.num_devices, s.is_fully_replicated)
            print(s == NamedSharding(mesh, P('a', 'b')), s == NamedSharding(am, P('a', 'b')))
            try:
                s.device_set
            except ValueError:
                print("no devices")
            x = jax.lax.with_sharding_constraint(jnp.ones((2, 3)), s)
            print(x.sharding.spec, type(x.sharding.mesh).__name__)
            sh = jax.typeof(x).sharding
            print(type(sh.mesh).__name__, sh.spec)
            f = jax.jit(lambda x: (jax.lax.with_sharding_constraint(x * 2, s),
                                   str(jax.typeof(x).sharding.spec))[0])
            print(f(x).shape)
        print(AbstractMesh((2,), ('x',)).shape_tuple)
        with jax.sharding.use_abstract_mesh(AbstractMesh((2,), ('x',))):
            print(jax.sharding.get_abstract_mesh().axis_names)
        print(jax.sharding.get_abstract_mesh().empty)
    """, tmp_path)
    assert lines[0] == "P(None, None) True"


def test_eager_shard_map_keeps_out_specs(tmp_path):
    same_as_jax("""
        import jax, jax.numpy as jnp
        from jax.sharding import PartitionSpec as P
        mesh = jax.sharding.Mesh(jax.local_devices()[:1], ('model',))
        for spec in (P(None), P(), P('model', None)):
            f = jax.shard_map(lambda x: x * 2, mesh=mesh, in_specs=P(None), out_specs=spec)
            print(f(jnp.ones((4, 2))).sharding.spec)
        print(jax.jit(f)(jnp.ones((4, 2))).sharding.spec)
    """, tmp_path)


def test_cond_passthrough_and_vmap_out_axes_error(tmp_path):
    same_as_jax("""
        import jax, jax.numpy as jnp
        def f(p, x, y):
            return jax.lax.cond(p, lambda x, y: (x, y + 1), lambda x, y: (x, y), x, y)
        print(len(jax.make_jaxpr(f)(True, 1., 2.).eqns[-1].outvars))
        out = jax.vmap(f, in_axes=(0, None, 0), out_axes=(None, 0))(
            jnp.array([True, False]), 1., jnp.array([2., 3.]))
        print([o.tolist() for o in out])
        print(jax.grad(lambda x: f(True, x, x)[0] + f(False, x, x)[1])(1.))
        try:
            jax.vmap(lambda x, y: ({'b': x * y}, [y]), in_axes=(None, 0),
                     out_axes=({'b': None}, 0))(1., jnp.ones(3))
        except ValueError as e:
            print(str(e).split(':')[0].split(' but')[0])
    """, tmp_path)


def test_scan_traces_a_body_once(tmp_path):
    lines = same_as_jax("""
        import jax, jax.numpy as jnp
        n = 0
        def body(c, x):
            global n
            n += 1
            return c + 1, x ** 2
        for _ in range(2):
            c, y = jax.lax.scan(body, jnp.array(0), jnp.arange(5))
            print(n, int(c), y.tolist())
        jax.lax.scan(lambda c, x: body(c, x), jnp.array(0), jnp.arange(5))
        print(n)
        c, _ = jax.lax.scan(body, jnp.array(0.5), jnp.arange(5.0))
        print(n, float(c))
    """, tmp_path)
    assert lines[:2] == ["1 5 [0, 1, 4, 9, 16]", "1 5 [0, 1, 4, 9, 16]"]


def test_custom_vjp_cotangent_tree_prefix_and_grad_aux(tmp_path):
    same_as_jax("""
        import dataclasses, functools
        import jax, jax.numpy as jnp
        import jax.extend.core

        @functools.partial(jax.tree_util.register_dataclass, data_fields=['v'],
                           meta_fields=[])
        @dataclasses.dataclass
        class Box:
            v: object

        @jax.custom_vjp
        def f(d):
            return jnp.sin(d['x'].v) * d['y'].v
        def f_fwd(d):
            return f(d), (jnp.cos(d['x'].v), jnp.sin(d['x'].v), d['y'].v)
        def f_bwd(res, g):
            c, s, y = res
            return ({'x': c * g * y, 'y': None},)  # raw arrays for Box nodes, None: zeros
        f.defvjp(f_fwd, f_bwd)
        g = jax.grad(f)({'x': Box(jnp.array(1.0)), 'y': Box(jnp.array(2.0))})
        print(type(g['x']).__name__, round(float(g['x'].v), 5), float(g['y'].v))

        made_in = []
        class Tagged:
            def __init__(self, v):
                self.v = v
                made_in.append(jax.extend.core.get_opaque_trace_state())
        jax.tree_util.register_pytree_node(Tagged, lambda t: ((t.v,), None),
                                           lambda _, c: Tagged(*c))
        outer = jax.extend.core.get_opaque_trace_state()
        _, aux = jax.grad(lambda x: (x * 2, Tagged(x)), has_aux=True)(1.0)
        print(type(aux).__name__, made_in[-1] == outer)
    """, tmp_path)


def test_pytree_aux_data_kept_as_given(tmp_path):
    same_as_jax("""
        import dataclasses, functools, jax

        class Opaque:  # equal to every Opaque, as flax.nnx's
            def __init__(self, value):
                self.value = value
            def __eq__(self, other):
                return type(self) == type(other)
            def __hash__(self):
                return 0

        @functools.partial(jax.tree_util.register_dataclass, data_fields=['s'],
                           meta_fields=['p'])
        @dataclasses.dataclass(frozen=True)
        class T:
            s: object
            p: Opaque

        for name in ('first', 'second'):
            t = T({'b': 1, 'a': 2}, Opaque(name))
            print(jax.tree.map(lambda x: x, t).p.value,
                  jax.tree.map_with_path(lambda p, x: x, t).p.value)
    """, tmp_path)


def test_refs_passed_to_jit_are_written_back(tmp_path):
    same_as_jax("""
        import jax, jax.numpy as jnp

        @jax.jit
        def g(x, r):
            r[...] = r[...] + x
            return x * 2
        r = jax.new_ref(jnp.zeros(3))
        print(g(jnp.ones(3), r).tolist(), r[...].tolist())
        print(g(jnp.ones(3), r).tolist(), r[...].tolist())

        def h(x):
            ref = jax.new_ref(x)
            g(x, ref)
            return ref[...]
        print(jax.jit(h)(jnp.ones(3)).tolist(), jax.grad(lambda x: h(x).sum())(jnp.ones(3)).tolist())
        print(jax.vmap(lambda x: g(x, jax.new_ref(jnp.zeros(()))))(jnp.arange(3.)).tolist())

        @jax.jit
        def returns_ref(m):
            m[...] += 1.0
            return m
        try:
            returns_ref(jax.new_ref(jnp.array(1.0)))
        except ValueError as e:
            print('mutable array references cannot be returned' in str(e),
                  'reference of type Ref{float32[]}, but' in str(e))
        try:
            jax.jit(lambda m: (1.0, m))(jax.new_ref(jnp.array(1.0)))
        except ValueError as e:
            print('Ref{float32[]} at output tree path result[1], but' in str(e))
    """, tmp_path)


def test_copy_outlives_a_donated_argument(tmp_path):
    same_as_jax("""
        import jax, jax.numpy as jnp
        a = jnp.ones(3) * 2
        b, c, d = jnp.copy(a), jnp.array(a), jnp.asarray(a, copy=True)
        jax.jit(lambda a: a + 1, donate_argnums=0)(a)
        print(b.is_deleted(), c.is_deleted(), d.is_deleted(), b.tolist())
    """, tmp_path)
