"""Every primitive has every rule (shape, evaluation, lowering, JVP, batching), or is in
an exemption list below that says why it needs none."""
import pytest

import funcgraph  # noqa: F401  (registers every primitive)
from funcgraph import core
from funcgraph.interpreters.batching import batching_rules, collective_rules
from funcgraph.interpreters.eval import direct_impls, impl_rules
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.lowering import lowering_rules

# funcgraph's own primitives (tests define a few of their own, with rules missing on purpose)
PRIMITIVES = sorted((p for p, rule in core.shape_rules.items()
                     if getattr(rule, "__module__", "").startswith("funcgraph.")),
                    key=lambda p: p.name)

NO_JVP = {
    "iota": "has no operands, so nothing to differentiate",
    "axis_index": "has no operands and an integer result",
    "custom_lin": "stands for a linear map inside reverse mode and is only ever transposed",
    "pmax": "not differentiable, as in JAX",
    "pmin": "not differentiable, as in JAX",
    "zeta": "not differentiable, as in JAX",
    "schur": "not differentiable, as in JAX (jax has no derivative rule for its schur)",
    "geqrf": "not differentiable, as in JAX (qr's derivative belongs to the qr primitive)",
    "householder_product": "not differentiable, as in JAX",
    "ormqr": "not differentiable, as in JAX",
    "hessenberg": "not differentiable, as in JAX",
    "tridiagonal": "not differentiable, as in JAX",
    "igamma_grad_a": "not differentiable, as in JAX",
    "call_exported": "differentiated through the export's VJP function (export.call wraps it "
                     "in a custom_vjp, as jax.export does); forward mode is jax's error",
}
NO_BATCHING = {
    "iota": "has no operands, so it is never batched",
    "dimension_value": "has no operands, so it is never batched",
    "custom_lin": "is transposed (calling the user's bwd) before any batching could see it",
    "linear_call": "not batched, as in JAX (which has no batching rule for it)",
}
NO_LOWERING = {
    "custom_lin": "exists only inside linear jaxprs, which are transposed, never lowered",
}
COMPILED_EAGERLY = {  # no NumPy impl: eager calls run the primitive compiled by XLA
    "erf", "erf_inv", "erfc", "lgamma", "digamma", "polygamma", "zeta",
    "cond", "while", "scan",
    "reduce_precision",  # XLA's rounding to a narrower format
    # lowered by tracing their loop kernels (funcgraph.lax._special)
    "igamma", "igammac", "igamma_grad_a", "regularized_incomplete_beta", "bessel_i0e",
    "bessel_i1e",
    "reduce", "reduce_window", "scatter_apply",  # their monoid (combiner) is a jaxpr
    "call_exported",  # runs a serialized StableHLO module
    # NumPy rounds these differently from XLA: compiled eagerly so eager == jit == jax
    "exp", "exp2", "expm1", "log", "log1p", "logistic", "tanh", "sin", "cos", "tan", "asin",
    "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "rsqrt", "cbrt", "pow", "atan2",
    "fft",  # XLA's float32 transforms round differently from NumPy's
    "cumlogsumexp",  # NumPy's logaddexp rounds otherwise in float64 and bfloat16
}


def ids(p):
    return p.name


@pytest.mark.parametrize("prim", PRIMITIVES, ids=ids)
def test_jvp_rule(prim):
    assert prim in jvp_rules or prim.name in NO_JVP


@pytest.mark.parametrize("prim", PRIMITIVES, ids=ids)
def test_batching_rule(prim):
    assert prim in batching_rules or prim in collective_rules or prim.name in NO_BATCHING


@pytest.mark.parametrize("prim", PRIMITIVES, ids=ids)
def test_lowering_rule(prim):
    assert prim in lowering_rules or prim.name in NO_LOWERING


@pytest.mark.parametrize("prim", PRIMITIVES, ids=ids)
def test_evaluation_rule(prim):
    assert prim in impl_rules or prim in direct_impls or prim.name in COMPILED_EAGERLY


def test_exemptions_are_real_primitives():
    names = {p.name for p in PRIMITIVES}
    for table in (NO_JVP, NO_BATCHING, NO_LOWERING, COMPILED_EAGERLY):
        assert set(table) <= names
