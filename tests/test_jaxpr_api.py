"""The jaxpr object API as `jax.extend.core` offers it, checked against jax: closed
jaxprs, jaxprs, equations, variables, literals, primitives, the `lax.*_p` objects."""
import importlib
import pkgutil
import re

import jax
import jax.extend.core as jcore
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
import funcgraph.primitives
from funcgraph import core as fg_core
from funcgraph import lax
from funcgraph.extend import core
from funcgraph.util import safe_map

C = np.arange(3.0, dtype=np.float32)


def both(make):
    """(jax's closed jaxpr, funcgraph's) of the function `make(numpy module)` returns."""
    jax_closed = jax.make_jaxpr(make(jnp))(jnp.ones(3))
    fg_closed = fg.make_jaxpr(make(fnp))(fnp.ones(3))
    return jax_closed, fg_closed


def test_closed_jaxpr_has_jaxpr_consts_and_literals():
    for closed in both(lambda np_: lambda x: x * np_.asarray(C)):
        assert len(closed.consts) == 1 and closed.literals is closed.consts
        np.testing.assert_array_equal(np.asarray(closed.consts[0]), C)
        jaxpr = closed.jaxpr
        assert len(jaxpr.constvars) == 1 and jaxpr.constvars[0].aval.shape == (3,)
        assert closed.constvars == jaxpr.constvars and closed.invars == jaxpr.invars
        assert closed.outvars == jaxpr.outvars and closed.eqns == jaxpr.eqns
        assert closed.effects == jaxpr.effects and not jaxpr.effects


def test_equations_have_primitive_invars_outvars_params():
    jax_closed, fg_closed = both(lambda np_: lambda x: np_.sum(np_.sin(x) * 2.0))
    for closed, prims in ((jax_closed, jax.lax), (fg_closed, lax)):
        eqns = closed.jaxpr.eqns
        assert [e.primitive.name for e in eqns] == ["sin", "mul", "reduce_sum"]
        sin, mul, total = eqns
        assert sin.primitive is prims.sin_p and mul.primitive is prims.mul_p
        assert sin.invars == closed.jaxpr.invars and mul.invars[0] is sin.outvars[0]
        assert type(mul.invars[1]) is not type(sin.outvars[0])
        assert float(mul.invars[1].val) == 2.0 and mul.invars[1].aval.shape == ()
        assert tuple(total.params["axes"]) == (0,)
        assert total.outvars == closed.jaxpr.outvars
        assert total.outvars[0].aval.shape == () and total.outvars[0].aval.dtype == np.float32
        assert not sin.effects


def test_literals_and_vars_are_the_extend_core_types():
    closed = fg.make_jaxpr(lambda x: x + 1)(5)
    eqn = closed.jaxpr.eqns[0]
    var, lit = eqn.invars
    assert type(var) is core.Var and type(lit) is core.Literal
    assert isinstance(eqn, core.JaxprEqn) and isinstance(closed, core.ClosedJaxpr)
    assert isinstance(closed.jaxpr, core.Jaxpr)
    assert int(lit.val) == 1 and lit.aval.dtype == np.int32 and lit.aval.weak_type
    jax_var = jax.make_jaxpr(lambda x: x + 1)(5).jaxpr.invars[0]
    assert var.aval.dtype == jax_var.aval.dtype and var.aval.weak_type == jax_var.aval.weak_type


def test_primitive_bind_name_and_multiple_results():
    assert isinstance(lax.exp_p, core.Primitive)
    assert lax.exp_p.name == "exp" and not lax.exp_p.multiple_results
    np.testing.assert_allclose(np.asarray(lax.exp_p.bind(fnp.float32(1.0))), np.e, rtol=1e-6)
    closed = fg.make_jaxpr(lambda x: lax.sort((x, -x), num_keys=1))(fnp.ones(3))
    assert closed.jaxpr.eqns[-1].primitive is lax.sort_p and lax.sort_p.multiple_results
    assert jax.lax.sort_p.multiple_results


def test_a_new_primitive_binds_under_make_jaxpr_with_its_shape_rule():
    twice_p = core.Primitive("twice")
    fg_core.shape_rules[twice_p] = lambda x: x
    closed = fg.make_jaxpr(lambda x: twice_p.bind(x))(fnp.ones((2, 3)))
    (eqn,) = closed.jaxpr.eqns
    assert eqn.primitive is twice_p and eqn.outvars[0].aval.shape == (2, 3)


def test_jaxpr_as_fun_runs_a_closed_jaxpr():
    x = np.linspace(-1, 1, 3).astype(np.float32)
    for ext, closed in zip((jcore, core), both(lambda np_: lambda x: np_.tanh(x) * np_.asarray(C)),
                           strict=True):
        (out,) = ext.jaxpr_as_fun(closed)(x)
        np.testing.assert_allclose(np.asarray(out), np.tanh(x) * C, rtol=1e-6)
        (out,) = ext.jaxpr_as_fun(closed, x)()
        np.testing.assert_allclose(np.asarray(out), np.tanh(x) * C, rtol=1e-6)


def test_new_jaxpr_eqn_builds_a_jaxpr_that_checks_and_runs():
    aval = fg_core.ShapedArray((3,), np.dtype(np.float32))
    make_var = core.gensym()
    a, b, c = make_var(aval), make_var(aval), make_var(aval)
    eqns = [core.new_jaxpr_eqn([a], [b], lax.sin_p, {}, core.no_effects),
            core.new_jaxpr_eqn([b, a], [c], lax.mul_p, {}, core.no_effects)]
    closed = core.ClosedJaxpr(core.Jaxpr([], [a], [c], eqns), [])
    core.check_jaxpr(closed.jaxpr)
    (out,) = core.jaxpr_as_fun(closed)(C)
    np.testing.assert_allclose(np.asarray(out), np.sin(C) * C, rtol=1e-6)
    assert [line.split("=")[1].split()[0] for line in str(closed).splitlines()[1:3]] == \
        ["sin", "mul"]
    bad = core.Jaxpr([], [a], [c], [eqns[1]])
    with pytest.raises(core.JaxprTypeError, match="read before it is bound"):
        core.check_jaxpr(bad)


def test_subjaxprs_and_jaxprs_in_params_unwrap_closed_jaxprs():
    def f(np_, cond):
        return lambda x: cond(x[0] > 0, np_.sin, np_.cos, x)
    jax_closed = jax.make_jaxpr(f(jnp, jax.lax.cond))(jnp.ones(3))
    fg_closed = fg.make_jaxpr(f(fnp, lax.cond))(fnp.ones(3))
    for ext, closed in ((jcore, jax_closed), (core, fg_closed)):
        subs = list(ext.subjaxprs(closed.jaxpr))
        assert len(subs) == 2 and all(isinstance(s, ext.Jaxpr) for s in subs)
        assert sorted(s.eqns[0].primitive.name for s in subs) == ["cos", "sin"]


def test_small_helpers_match_jax():
    assert core.primal_dtype_to_tangent_dtype(np.int32) == jcore.primal_dtype_to_tangent_dtype(
        np.int32) == fg.dtypes.float0
    assert core.primal_dtype_to_tangent_dtype(np.float32) == np.float32
    for value in (1.0, np.ones(2), "text", object()):
        assert core.valid_jaxtype(value) == jcore.valid_jaxtype(value), value
    assert core.valid_jaxtype(fnp.ones(2)) and jcore.valid_jaxtype(jnp.ones(2))
    assert core.concrete_or_error(int, fnp.int32(3)) == 3
    with pytest.raises(fg.ConcretizationTypeError, match="the loop bound"):
        fg.jit(lambda x: core.concrete_or_error(int, x, "the loop bound"))(3)
    aval = fg_core.ShapedArray((4, 5), np.dtype(np.float32))
    assert core.mapped_aval(5, 1, aval).shape == (4,)
    assert core.unmapped_aval(7, 0, aval).shape == (7, 4, 5)


def test_extend_core_has_jax_names():
    expected = {"ClosedJaxpr", "DropVar", "Effect", "Effects", "Jaxpr", "JaxprEqn",
                "JaxprTypeError", "Literal", "Primitive", "Var", "array_types", "check_jaxpr",
                "concrete_or_error", "gensym", "jaxpr_as_fun", "jaxprs_in_params",
                "mapped_aval", "new_jaxpr_eqn", "no_effects", "primal_dtype_to_tangent_dtype",
                "subjaxprs", "unmapped_aval", "valid_jaxtype"}
    assert expected <= set(dir(jcore)), expected - set(dir(jcore))
    assert expected <= set(dir(core)), expected - set(dir(core))
    assert fg.extend.core is core


def _funcgraph_primitives_by_variable():
    found = {}
    for info in pkgutil.iter_modules(funcgraph.primitives.__path__):
        module = importlib.import_module(f"funcgraph.primitives.{info.name}")
        for name, value in vars(module).items():
            if type(value) is fg_core.Primitive and re.fullmatch(r"[a-z0-9_]+_p", name):
                found.setdefault(name, value)
    return found


def test_every_primitive_with_a_jax_lax_name_is_in_funcgraph_lax():
    jax_names = {n for n in dir(jax.lax) if n.endswith("_p")}
    ours = _funcgraph_primitives_by_variable()
    missing = sorted(n for n in ours if n in jax_names and getattr(lax, n, None) is not ours[n])
    assert not missing, f"funcgraph.lax lacks {missing}"
    for name in ("exp_p", "add_p", "mul_p", "sin_p", "cos_p", "log_p", "dot_general_p",
                 "reduce_sum_p", "broadcast_in_dim_p", "conv_general_dilated_p", "while_p",
                 "scan_p", "cond_p"):
        assert getattr(lax, name).name == getattr(jax.lax, name).name, name
    assert lax.linalg.cholesky_p.name == "cholesky"
    assert lax.linalg.triangular_solve_p.name == "triangular_solve"


def test_every_exported_primitive_has_its_jax_name():
    # A primitive exported as lax.X_p is named X, as in JAX (so printed jaxprs agree),
    # except that JAX spells the scatter family "scatter-add", funcgraph "scatter_add".
    for name in dir(lax):
        value = getattr(lax, name)
        if name.endswith("_p") and type(value) is fg_core.Primitive and hasattr(jax.lax, name):
            assert value.name == getattr(jax.lax, name).name.replace("-", "_"), name


def test_safe_map_refuses_lists_of_different_lengths():
    assert safe_map(lambda a, b: a + b, [1, 2], [3, 4]) == [4, 6]
    with pytest.raises(ValueError):
        safe_map(lambda a, b: a + b, [1, 2], [3])
