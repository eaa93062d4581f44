"""The same program as jax: make_jaxpr of funcgraph's call against jax's, for the
products first (issue 29: a batched `a @ w` must contract w as it is, never broadcast
it).  Each row's program must have no more equations than jax's and no primitive jax's
lacks; the equations' output types are compared too."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp


def _f32(*shape):
    return np.ones(shape, np.float32)


ACT, WEIGHT = _f32(8, 64, 128), _f32(128, 512)

CASES = {
    "matmul batched activation x weight": (lambda m: m.matmul, (ACT, WEIGHT)),
    "matmul 2d": (lambda m: m.matmul, (_f32(3, 4), _f32(4, 5))),
    "matmul vector x matrix": (lambda m: m.matmul, (_f32(4), _f32(4, 5))),
    "matmul matrix x vector": (lambda m: m.matmul, (_f32(3, 4), _f32(4))),
    "matmul vector x vector": (lambda m: m.matmul, (_f32(4), _f32(4))),
    "matmul vector x batch": (lambda m: m.matmul, (_f32(5), _f32(2, 5, 4))),
    "matmul batch x vector": (lambda m: m.matmul, (_f32(7, 3, 4), _f32(4))),
    "matmul equal batches": (lambda m: m.matmul, (_f32(2, 3, 4), _f32(2, 4, 5))),
    "matmul batch of one x batch": (lambda m: m.matmul, (_f32(1, 3, 4), _f32(2, 4, 5))),
    "matmul batch x batch of one": (lambda m: m.matmul, (_f32(2, 3, 4), _f32(1, 4, 5))),
    "matmul broadcast batches": (lambda m: m.matmul, (_f32(2, 1, 3, 4), _f32(5, 4, 6))),
    "matmul crossed size-1 batches": (lambda m: m.matmul, (_f32(2, 1, 3, 4), _f32(1, 5, 4, 2))),
    "@ operator": (lambda m: lambda a, b: a @ b, (ACT, WEIGHT)),
    "dot 2d": (lambda m: m.dot, (_f32(3, 4), _f32(4, 5))),
    "dot nd": (lambda m: m.dot, (_f32(2, 3, 4), _f32(5, 4, 6))),
    "tensordot": (lambda m: lambda a, b: m.tensordot(a, b, axes=([2], [0])), (ACT, WEIGHT)),
    "inner": (lambda m: m.inner, (_f32(3, 4), _f32(5, 4))),
    "vdot": (lambda m: m.vdot, (_f32(3, 4), _f32(3, 4))),
    "outer": (lambda m: m.outer, (_f32(3), _f32(4))),
    "vecdot": (lambda m: m.vecdot, (_f32(3, 4), _f32(3, 4))),
    "linalg.vecdot": (lambda m: m.linalg.vecdot, (_f32(3, 4), _f32(3, 4))),
    "linalg.matmul": (lambda m: m.linalg.matmul, (ACT, WEIGHT)),
    "einsum bsd,de->bse": (lambda m: lambda a, b: m.einsum("bsd,de->bse", a, b), (ACT, WEIGHT)),
    "einsum bhqd,bhkd->bhqk": (lambda m: lambda a, b: m.einsum("bhqd,bhkd->bhqk", a, b),
                               (_f32(2, 4, 8, 16), _f32(2, 4, 8, 16))),
}


def _equations(closed):
    """(primitive name, output types) of each top-level equation."""
    out = []
    for eqn in closed.jaxpr.eqns:
        prim = eqn.primitive if hasattr(eqn, "primitive") else eqn.prim
        types = tuple((tuple(v.aval.shape), str(v.aval.dtype)) for v in eqn.outvars)
        out.append((prim.name, types))
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_products_emit_jaxs_program(name):
    make, args = CASES[name]
    ours = _equations(fg.make_jaxpr(make(fnp))(*args))
    theirs = _equations(jax.make_jaxpr(make(jnp))(*args))
    assert len(ours) <= len(theirs), f"funcgraph: {ours}\njax:       {theirs}"
    assert {p for p, _ in ours} <= {p for p, _ in theirs}, f"funcgraph: {ours}\njax: {theirs}"
    contractions = [e for e in ours if e[0] == "dot_general"]
    assert contractions == [e for e in theirs if e[0] == "dot_general"]
    np.testing.assert_allclose(make(fnp)(*args), make(jnp)(*args), rtol=1e-5)


def test_weight_gradient_of_a_batched_matmul_is_one_contraction():
    """The weight's gradient of sum(a @ w) is one dot_general over the activation's batch
    and row axes, as jax's (not a batched product and a reduction)."""
    grad = fg.make_jaxpr(fg.grad(lambda w, a: fnp.sum(a @ w)))(WEIGHT, ACT)
    names = [e.prim.name for e in grad.jaxpr.eqns]
    assert names.count("dot_general") == 2 and "reduce_sum" in names[:2]
    assert names.count("reduce_sum") == 1
    np.testing.assert_allclose(
        fg.grad(lambda w, a: fnp.sum(a @ w))(WEIGHT, ACT),
        jax.grad(lambda w, a: jnp.sum(a @ w))(WEIGHT, ACT), rtol=1e-5)


def test_matmul_errors_are_jaxs():
    with pytest.raises(ValueError, match=r"Incompatible types for matmul arguments: "
                                         r"float32\[2,3,4\] and float32\[3,4,5\]"):
        fnp.matmul(_f32(2, 3, 4), _f32(3, 4, 5))
    with pytest.raises(ValueError, match="Incompatible types for matmul arguments"):
        jnp.matmul(_f32(2, 3, 4), _f32(3, 4, 5))
