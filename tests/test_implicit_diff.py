"""Implicit differentiation and linear maps against jax: custom_root, custom_linear_solve,
linear_transpose, closure_convert, custom_vmap, custom_gradient and the iterative solvers
of scipy.sparse.linalg."""
import jax
import jax.numpy as jnp
import jax.scipy.sparse.linalg as jsl
import numpy as np
import pytest
from jax.custom_batching import custom_vmap as jax_custom_vmap

import funcgraph as fg
import funcgraph.numpy as fnp
import funcgraph.scipy.sparse.linalg as fsl
from funcgraph import lax
from funcgraph.custom_batching import custom_vmap, sequential_vmap
from funcgraph.custom_derivatives import custom_gradient

RNG = np.random.RandomState(0)
N = 5
_A = RNG.randn(N, N).astype(np.float32)
SPD = (_A @ _A.T + N * np.eye(N)).astype(np.float32)
NONSYM = (_A + N * np.eye(N)).astype(np.float32)
B = RNG.randn(N).astype(np.float32)


def close(x, y, tol=2e-5):
    np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


def tree_close(x, y, tol=2e-5):
    xs, ys = jax.tree_util.tree_leaves(x), jax.tree_util.tree_leaves(y)
    assert len(xs) == len(ys)
    for a, b in zip(xs, ys):
        close(a, b, tol)


# --- custom_root: the Newton square-root example of JAX's documentation ---------------

def _sqrt_cubed(x, lax_mod):
    def f(y):
        return y ** 2 - x ** 3

    def newton(func, x0):
        return lax_mod.fori_loop(0, 30, lambda i, y: y - func(y) / (2 * y), x0)

    return lax_mod.custom_root(f, 1.0, newton, lambda g, y: y / g(1.0))


def test_custom_root_value_and_derivatives():
    fg_f = lambda x: _sqrt_cubed(x, lax)
    jax_f = lambda x: _sqrt_cubed(x, jax.lax)
    close(fg_f(2.0), jax_f(2.0))
    close(fg.grad(fg_f)(2.0), jax.grad(jax_f)(2.0))
    close(fg.jit(fg.grad(fg_f))(2.0), jax.grad(jax_f)(2.0))
    close(fg.grad(fg.grad(fg_f))(2.0), jax.grad(jax.grad(jax_f))(2.0))
    tree_close(fg.jvp(fg_f, (2.0,), (0.5,)), jax.jvp(jax_f, (2.0,), (0.5,)))
    xs = np.array([1.5, 2.0, 3.0], np.float32)
    close(fg.vmap(fg.grad(fg_f))(xs), jax.vmap(jax.grad(jax_f))(xs))


def test_custom_root_pytree_and_aux():
    def run(lax_mod, np_mod, c):
        def f(x):
            return {"a": x["a"] ** 2 - c, "b": x["b"] - 2 * c}

        def solve(func, x0):
            return {"a": np_mod.sqrt(c) + 0 * x0["a"], "b": 2 * c + 0 * x0["b"]}, c * 10

        def tangent_solve(g, y):
            return {"a": y["a"] / g({"a": 1.0, "b": 0.0})["a"], "b": y["b"]}

        x, aux = lax_mod.custom_root(f, {"a": 1.0, "b": 1.0}, solve, tangent_solve,
                                     has_aux=True)
        return x["a"] + x["b"] + aux

    close(run(lax, fnp, 3.0), run(jax.lax, jnp, 3.0))
    close(fg.grad(lambda c: run(lax, fnp, c))(3.0), jax.grad(lambda c: run(jax.lax, jnp, c))(3.0))


def test_custom_root_checks_tree_structure():
    with pytest.raises(TypeError, match="solve\\(\\) output pytree structure"):
        lax.custom_root(lambda x: x, 1.0, lambda f, x: (x, x), lambda g, y: y)


# --- custom_linear_solve ----------------------------------------------------------------

def _linear_solve(np_mod, lax_mod, symmetric, with_transpose):
    def f(a, b):
        return lax_mod.custom_linear_solve(
            lambda x: np_mod.dot(a, x), b,
            lambda matvec, x: np_mod.linalg.solve(a, x),
            (lambda vecmat, x: np_mod.linalg.solve(a.T, x)) if with_transpose else None,
            symmetric=symmetric)
    return f


@pytest.mark.parametrize("symmetric,with_transpose,a", [
    (True, False, SPD), (False, True, NONSYM)])
def test_custom_linear_solve_transforms(symmetric, with_transpose, a):
    fg_f = _linear_solve(fnp, lax, symmetric, with_transpose)
    jax_f = _linear_solve(jnp, jax.lax, symmetric, with_transpose)
    close(fg_f(a, B), jax_f(a, B))
    close(fg.jit(fg_f)(a, B), jax_f(a, B))
    tree_close(fg.jvp(fg_f, (a, B), (0.1 * a, B)), jax.jvp(jax_f, (a, B), (0.1 * a, B)))
    loss = lambda f, np_mod: lambda a, b: np_mod.sum(f(a, b) ** 2)
    tree_close(fg.grad(loss(fg_f, fnp), (0, 1))(a, B), jax.grad(loss(jax_f, jnp), (0, 1))(a, B))
    tree_close(fg.jit(fg.grad(loss(fg_f, fnp), (0, 1)))(a, B),
               jax.grad(loss(jax_f, jnp), (0, 1))(a, B))
    bs = np.stack([B, -2 * B])
    close(fg.vmap(fg_f, (None, 0))(a, bs), jax.vmap(jax_f, (None, 0))(a, bs))
    as_ = np.stack([a, a + np.eye(N, dtype=np.float32)])
    close(fg.vmap(fg_f, (0, None))(as_, B), jax.vmap(jax_f, (0, None))(as_, B))
    close(fg.vmap(fg.grad(loss(fg_f, fnp)), (0, None))(as_, B),
          jax.vmap(jax.grad(loss(jax_f, jnp)), (0, None))(as_, B))
    cube = lambda f, np_mod, g: lambda b: np_mod.sum(g(lambda b: np_mod.sum(f(a, b) ** 3))(b))
    close(fg.grad(cube(fg_f, fnp, fg.grad))(B), jax.grad(cube(jax_f, jnp, jax.grad))(B),
          tol=1e-4)


def test_custom_linear_solve_without_transpose_supports_forward_mode_only():
    fg_f = _linear_solve(fnp, lax, False, False)
    jax_f = _linear_solve(jnp, jax.lax, False, False)
    tree_close(fg.jvp(fg_f, (NONSYM, B), (NONSYM, B)), jax.jvp(jax_f, (NONSYM, B), (NONSYM, B)))
    with pytest.raises(TypeError, match="transpose_solve required"):
        fg.grad(lambda b: fnp.sum(fg_f(NONSYM, b)))(B)


def test_custom_linear_solve_has_aux_and_staging():
    def run(np_mod, lax_mod, b):
        return lax_mod.custom_linear_solve(
            lambda x: 2.0 * x, b, lambda mv, x: (x / 2.0, np_mod.sum(x)),
            symmetric=True, has_aux=True)
    x, aux = run(fnp, lax, B)
    xj, auxj = run(jnp, jax.lax, B)
    close(x, xj)
    close(aux, auxj)
    assert "custom_linear_solve" in str(fg.make_jaxpr(lambda b: run(fnp, lax, b))(B))
    with pytest.raises(ValueError, match="matvec\\(\\) output shapes must match b"):
        lax.custom_linear_solve(lambda x: x[:2], B, lambda mv, x: x)


# --- linear_transpose, closure_convert ------------------------------------------------------

def test_linear_transpose_matches_jax():
    f = lambda x, y: (2.0 * x + y.sum(), 3.0 * y[::-1])
    x = np.ones(3, np.float32)
    ct = (np.arange(3, dtype=np.float32), np.array([1.0, -2.0, 4.0], np.float32))
    tree_close(fg.linear_transpose(f, x, x)(ct), jax.linear_transpose(f, x, x)(ct))
    with pytest.raises(TypeError, match="cotangent tree does not match"):
        fg.linear_transpose(f, x, x)(ct[0])
    with pytest.raises(TypeError, match="linear_transpose only supports"):
        fg.linear_transpose(lambda x: x.astype(np.int32), x)


def test_closure_convert_hoists_traced_values():
    def outer(np_mod, convert, x):
        g = lambda y: np_mod.sin(x * y) + np.float32(1.0)
        converted, consts = convert(g, 1.0)
        return converted(2.0, *consts), len(consts)

    value, n = outer(fnp, fg.closure_convert, 1.5)
    value_j, n_j = outer(jnp, jax.closure_convert, 1.5)
    close(value, value_j)
    assert n == n_j == 0  # nothing to hoist from concrete values
    close(fg.grad(lambda x: outer(fnp, fg.closure_convert, x)[0])(1.5),
          jax.grad(lambda x: outer(jnp, jax.closure_convert, x)[0])(1.5))
    counts = []
    fg.grad(lambda x: counts.append(outer(fnp, fg.closure_convert, x)[1]) or x)(1.5)
    assert counts == [1]


# --- custom_gradient ---------------------------------------------------------------------

def _clip_gradient(cg, np_mod):
    @cg
    def f(x, y):
        return x * y, lambda g: (np_mod.clip(g * y, -1.0, 1.0), 2.0 * g * x)
    return f


def test_custom_gradient_matches_jax():
    fg_f = _clip_gradient(custom_gradient, fnp)
    jax_f = _clip_gradient(jax.custom_gradient, jnp)
    close(fg_f(2.0, 3.0), jax_f(2.0, 3.0))
    tree_close(fg.grad(fg_f, (0, 1))(2.0, 3.0), jax.grad(jax_f, (0, 1))(2.0, 3.0))
    tree_close(fg.jit(fg.grad(fg_f, (0, 1)))(2.0, 0.5), jax.grad(jax_f, (0, 1))(2.0, 0.5))
    xs = np.array([1.0, 2.0, 3.0], np.float32)
    close(fg.vmap(fg.grad(fg_f), (0, None))(xs, 3.0), jax.vmap(jax.grad(jax_f), (0, None))(xs, 3.0))
    assert fg.custom_gradient is custom_gradient

    @custom_gradient
    def square(x):
        return x ** 2, lambda g: g * 10.0   # a single cotangent, not a tuple
    close(fg.grad(lambda x: square(fnp.sin(x)))(1.0), 10.0 * np.cos(1.0))


# --- custom_vmap ----------------------------------------------------------------------------

def _with_rule(cv, np_mod):
    @cv
    def f(x, y):
        return np_mod.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, x, y):
        assert isinstance(axis_size, int)
        return np_mod.cos(x) * y, in_batched[0] or in_batched[1]
    return f


def test_custom_vmap_rule_is_used_under_vmap_and_jvp():
    fg_f, jax_f = _with_rule(custom_vmap, fnp), _with_rule(jax_custom_vmap, jnp)
    xs = np.linspace(0, 1, 4).astype(np.float32)
    close(fg_f(1.0, 2.0), jax_f(1.0, 2.0))
    close(fg.vmap(fg_f, (0, None))(xs, 2.0), jax.vmap(jax_f, (0, None))(xs, 2.0))
    close(fg.jit(fg.vmap(fg_f, (0, None)))(xs, 2.0), jax.vmap(jax_f, (0, None))(xs, 2.0))
    tree_close(fg.jvp(fg_f, (1.0, 2.0), (1.0, 1.0)), jax.jvp(jax_f, (1.0, 2.0), (1.0, 1.0)))
    tree_close(fg.vmap(lambda x: fg.jvp(fg_f, (x, 2.0), (1.0, 1.0)))(xs),
               jax.vmap(lambda x: jax.jvp(jax_f, (x, 2.0), (1.0, 1.0)))(xs))
    tree_close(fg.vmap(lambda t: fg.jvp(fg_f, (1.0, 2.0), (t, 1.0)))(xs),
               jax.vmap(lambda t: jax.jvp(jax_f, (1.0, 2.0), (t, 1.0)))(xs))
    with pytest.raises(TypeError, match="reverse-mode"):
        fg.grad(fg_f)(1.0, 2.0)


def test_custom_vmap_errors_and_sequential_vmap():
    f = custom_vmap(lambda x: x)
    with pytest.raises(AttributeError, match="No batching rule"):
        f(1.0)
    f.def_vmap(lambda n, b, x: ((x, x), b[0]))
    with pytest.raises(ValueError, match="do not match"):
        fg.vmap(f)(np.ones(3, np.float32))
    g = sequential_vmap(lambda x: fnp.sum(x) * 2)
    close(fg.vmap(g)(np.ones((3, 2), np.float32)), np.full(3, 4.0))


# --- scipy.sparse.linalg ------------------------------------------------------------------

def test_cg_matches_jax_with_preconditioner_and_pytrees():
    m = np.diag(1 / np.diag(SPD)).astype(np.float32)
    close(fsl.cg(SPD, B)[0], jsl.cg(SPD, B)[0])
    close(fsl.cg(SPD, B, M=m, tol=1e-6)[0], jsl.cg(SPD, B, M=m, tol=1e-6)[0])
    close(fsl.cg(lambda x: fnp.dot(SPD, x), B, x0=B)[0],
          jsl.cg(lambda x: jnp.dot(SPD, x), B, x0=B)[0])

    def tree_matvec(np_mod):
        def mv(x):
            y = np_mod.dot(SPD, np_mod.concatenate([x["a"], x["b"]]))
            return {"a": y[:2], "b": y[2:]}
        return mv
    b_tree = {"a": B[:2], "b": B[2:]}
    tree_close(fsl.cg(tree_matvec(fnp), b_tree)[0], jsl.cg(tree_matvec(jnp), b_tree)[0])
    with pytest.raises(ValueError, match="matching tree structure"):
        fsl.cg(SPD, B, x0=(B,))


@pytest.mark.parametrize("name", ["cg", "bicgstab",
                                  pytest.param("gmres", marks=pytest.mark.slow)])
def test_iterative_solver_gradients(name):
    fg_solver, jax_solver = getattr(fsl, name), getattr(jsl, name)
    a = SPD if name == "cg" else NONSYM
    loss = lambda solver, np_mod: lambda a, b: np_mod.sum(
        solver(lambda x: np_mod.dot(a, x), b)[0] ** 2)
    close(fg_solver(a, B)[0], jax_solver(a, B)[0])
    tree_close(fg.grad(loss(fg_solver, fnp), (0, 1))(a, B),
               jax.grad(loss(jax_solver, jnp), (0, 1))(a, B), tol=1e-4)
    bs = np.stack([B, 2 * B])
    close(fg.vmap(lambda b: fg_solver(a, b)[0])(bs), jax.vmap(lambda b: jax_solver(a, b)[0])(bs))


@pytest.mark.parametrize("method", ["batched", "incremental"])
def test_gmres_methods_restart_and_preconditioner(method):
    m = np.diag(1 / np.diag(NONSYM)).astype(np.float32)
    x, info = fsl.gmres(NONSYM, B, solve_method=method, restart=2, M=m)
    xj, info_j = jsl.gmres(NONSYM, B, solve_method=method, restart=2, M=m)
    close(x, xj)
    assert int(info) == int(info_j) == 0
    with pytest.raises(ValueError, match="invalid solve_method"):
        fsl.gmres(NONSYM, B, solve_method="qr")
