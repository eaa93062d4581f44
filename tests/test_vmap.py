"""vmap: in_axes/out_axes semantics, errors, collectives, chunking and compositions
with jit and autodiff, against jax and Python loops."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax

rng = np.random.default_rng(0)
A = rng.normal(size=(4, 3)).astype(np.float32)
B = rng.normal(size=(3, 5)).astype(np.float32)


def close(a, b, tol=1e-5):
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        assert np.shape(x) == np.shape(y), (np.shape(x), np.shape(y))
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


def loop(f, *args, in_axes=0):
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    n = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
    outs = [f(*[a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, axes)])
            for i in range(n)]
    return jax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *outs)


def matvec(m, v):
    return lax.dot_general(m, v, (((1,), (0,)), ((), ())))


def test_in_axes_positions_and_none():
    v = rng.normal(size=(3, 7)).astype(np.float32)
    close(fg.vmap(matvec, in_axes=(None, 1))(A, v), loop(matvec, A, v, in_axes=(None, 1)))
    close(fg.vmap(matvec, in_axes=(None, -1))(A, v), loop(matvec, A, v, in_axes=(None, 1)))
    m = rng.normal(size=(6, 4, 3)).astype(np.float32)
    w = rng.normal(size=(6, 3)).astype(np.float32)
    close(fg.vmap(matvec)(m, w), loop(matvec, m, w))


def test_out_axes():
    v = rng.normal(size=(7, 3)).astype(np.float32)
    out = fg.vmap(matvec, in_axes=(None, 0), out_axes=1)(A, v)
    close(out, loop(matvec, A, v, in_axes=(None, 0)).T)
    both = fg.vmap(lambda v: (matvec(A, v), A), in_axes=0, out_axes=(0, None))(v)
    close(both[1], A)


def test_pytree_in_axes_prefix():
    params = {"w": A, "b": np.zeros(4, np.float32)}
    xs = rng.normal(size=(5, 3)).astype(np.float32)

    def apply(p, x):
        return matvec(p["w"], x)
    out = fg.vmap(apply, in_axes=({"w": None, "b": None}, 0))(params, xs)
    close(out, loop(lambda x: matvec(A, x), xs))
    out = fg.vmap(apply, in_axes=(None, 0))(params, xs)
    close(out, loop(lambda x: matvec(A, x), xs))


def test_axis_size_with_no_mapped_inputs():
    out = fg.vmap(lambda: lax.axis_index("i"), axis_size=3, axis_name="i")()
    assert np.asarray(out).tolist() == [0, 1, 2]


def test_vmap_of_vmap():
    m = rng.normal(size=(2, 6, 4, 3)).astype(np.float32)
    v = rng.normal(size=(2, 6, 3)).astype(np.float32)
    close(fg.vmap(fg.vmap(matvec))(m, v), jax.vmap(jax.vmap(lambda a, b: a @ b))(m, v))


def test_jit_of_vmap_and_vmap_of_jit():
    v = rng.normal(size=(7, 3)).astype(np.float32)
    expected = loop(lambda x: matvec(A, x), v)
    close(fg.jit(fg.vmap(lambda x: matvec(A, x)))(v), expected)
    close(fg.vmap(fg.jit(lambda x: matvec(A, x)))(v), expected)


def test_chunk_size_gives_the_same_result():
    v = rng.normal(size=(10, 3)).astype(np.float32)
    full = fg.vmap(lambda x: matvec(A, x))(v)
    for chunk in (1, 3, 4, 10, 20):
        close(fg.vmap(lambda x: matvec(A, x), chunk_size=chunk)(v), full)


def test_collectives():
    x = rng.normal(size=(4, 3)).astype(np.float32)
    jf = lambda f: jax.vmap(f, axis_name="i")
    ff = lambda f: fg.vmap(f, axis_name="i")
    close(ff(lambda a: lax.psum(a, "i"))(x), jf(lambda a: jax.lax.psum(a, "i"))(x))
    close(ff(lambda a: lax.pmean(a, "i"))(x), jf(lambda a: jax.lax.pmean(a, "i"))(x))
    close(ff(lambda a: lax.pmax(a, "i"))(x), jf(lambda a: jax.lax.pmax(a, "i"))(x))
    close(ff(lambda a: lax.pmin(a, "i"))(x), jf(lambda a: jax.lax.pmin(a, "i"))(x))
    close(ff(lambda a: lax.all_gather(a, "i"))(x), jf(lambda a: jax.lax.all_gather(a, "i"))(x))
    close(ff(lambda a: lax.all_gather(a, "i", axis=1))(x),
          jf(lambda a: jax.lax.all_gather(a, "i", axis=1))(x))
    close(ff(lambda a: lax.axis_index("i"))(x), jf(lambda a: jax.lax.axis_index("i"))(x))
    close(ff(lambda a: lax.psum(1.0, "i"))(x), jf(lambda a: jax.lax.psum(1.0, "i"))(x))


def test_nested_named_axes():
    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    f = lambda a: lax.psum(a, ("i", "j"))
    jfn = lambda a: jax.lax.psum(a, ("i", "j"))
    out = fg.vmap(fg.vmap(f, axis_name="j"), axis_name="i")(x)
    close(out, jax.vmap(jax.vmap(jfn, axis_name="j"), axis_name="i")(x))
    inner_only = fg.vmap(fg.vmap(lambda a: lax.psum(a, "i"), axis_name="j"), axis_name="i")(x)
    close(inner_only, jax.vmap(jax.vmap(lambda a: jax.lax.psum(a, "i"), axis_name="j"),
                               axis_name="i")(x))


def test_collective_inside_jit_inside_vmap():
    x = rng.normal(size=(4, 3)).astype(np.float32)
    out = fg.vmap(fg.jit(lambda a: lax.psum(a, "i")), axis_name="i")(x)
    close(out, np.broadcast_to(x.sum(0), x.shape))


def test_unbound_axis_name_is_an_error():
    with pytest.raises(NameError, match="unbound axis name: 'k'"):
        fg.vmap(lambda a: lax.psum(a, "k"), axis_name="i")(A)


# --- errors ----------------------------------------------------------------------

def test_mismatched_sizes_name_the_arguments():
    with pytest.raises(ValueError, match="(?s)inconsistent sizes.*axis 0 of m.*size 4.*"
                                         "axis 0 of v.*size 3"):
        fg.vmap(lambda m, v: m)(A, np.ones(3, np.float32))


def test_in_axes_structure_mismatch():
    with pytest.raises(ValueError, match="one entry per positional argument"):
        fg.vmap(lambda a, b: a, in_axes=(0, 0, 0))(A, A)
    with pytest.raises(ValueError, match="tree prefix"):
        fg.vmap(lambda p: p["a"], in_axes=({"a": 0, "b": 0},))({"a": A})


def test_in_axes_beyond_rank():
    with pytest.raises(ValueError, match="along axis 2.*rank 2"):
        fg.vmap(lambda a: a, in_axes=2)(A)


def test_out_axes_none_for_batched_output():
    with pytest.raises(ValueError, match="out_axes is None for output 0"):
        fg.vmap(lambda a: matvec(A, a), out_axes=None)(rng.normal(size=(2, 3)).astype(np.float32))


def test_no_mapped_axis_without_axis_size():
    with pytest.raises(ValueError, match="at least one non-None"):
        fg.vmap(lambda a: a, in_axes=None)(A)


# --- compositions with autodiff ------------------------------------------------------

def loss(w, x):
    return fnp.sum(fnp.tanh(w @ x) ** 2)


def loss_jax(w, x):
    return jnp.sum(jnp.tanh(w @ x) ** 2)


def test_per_example_gradients():
    xs = rng.normal(size=(8, 3)).astype(np.float32)
    expected = jax.vmap(jax.grad(loss_jax), in_axes=(None, 0))(A, xs)
    close(fg.vmap(fg.grad(loss), in_axes=(None, 0))(A, xs), expected)
    close(fg.jit(fg.vmap(fg.grad(loss), in_axes=(None, 0)))(A, xs), expected)


def test_grad_of_vmap():
    xs = rng.normal(size=(8, 3)).astype(np.float32)
    f = lambda w: fnp.sum(fg.vmap(loss, in_axes=(None, 0))(w, xs))
    fj = lambda w: jnp.sum(jax.vmap(loss_jax, in_axes=(None, 0))(w, xs))
    close(fg.grad(f)(A), jax.grad(fj)(A))


def test_vmap_of_jvp_and_of_pullback():
    xs = rng.normal(size=(5, 3)).astype(np.float32)
    f = lambda x: fnp.sin(x) * fnp.sum(x)
    fj = lambda x: jnp.sin(x) * jnp.sum(x)
    x0 = np.array([0.1, 0.2, 0.3], np.float32)
    close(fg.vmap(lambda t: fg.jvp(f, (x0,), (t,))[1])(xs),
          jax.vmap(lambda t: jax.jvp(fj, (x0,), (t,))[1])(xs))
    _, pullback = fg.vjp(f, x0)
    _, pullback_jax = jax.vjp(fj, x0)
    close(fg.vmap(pullback)(xs), jax.vmap(pullback_jax)(xs))


def test_jacobians_use_vmap_results():
    f = lambda x: fnp.sin(x) * fnp.sum(x ** 2)
    fj = lambda x: jnp.sin(x) * jnp.sum(x ** 2)
    x = np.array([0.3, -0.2, 0.9], np.float32)
    close(fg.jacfwd(f)(x), jax.jacfwd(fj)(x))
    close(fg.jacrev(f)(x), jax.jacrev(fj)(x))
    close(fg.vmap(fg.hessian(lambda x: fnp.sum(fnp.sin(x) * x)))(np.stack([x, 2 * x])),
          jax.vmap(jax.hessian(lambda x: jnp.sum(jnp.sin(x) * x)))(np.stack([x, 2 * x])), 1e-4)


def test_custom_rules_under_vmap():
    @fg.custom_jvp
    def f(x):
        return fnp.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), 2.0 * t[0]))

    @fg.custom_vjp
    def g(x):
        return x * 3.0

    g.defvjp(lambda x: (x * 3.0, x), lambda res, ct: (ct * res,))
    xs = np.array([0.1, 0.5, 1.0], np.float32)
    close(fg.vmap(fg.grad(f))(xs), np.full(3, 2.0, np.float32))
    close(fg.vmap(fg.grad(g))(xs), xs)
    close(fg.vmap(f)(xs), np.sin(xs))
    close(fg.grad(lambda x: fnp.sum(fg.vmap(g)(x)))(xs), xs)
