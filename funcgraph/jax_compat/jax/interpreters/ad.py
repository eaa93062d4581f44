"""`jax.interpreters.ad`: JAX's forward- and reverse-mode rule tables and helpers over
funcgraph's (funcgraph.interpreters.jvp / transpose / ad_util).  primitive_jvps and
primitive_transposes take rules with JAX's signatures, which are funcgraph's:
jvp(primals, tangents, **params) -> (out, tangent_out) with `Zero` tangents, and
transpose(ct, *args, **params) -> cotangents, linear args as `UndefinedPrimal`."""
import numpy as np

from funcgraph import core, dtypes
from funcgraph.interpreters import jvp as _jvp
from funcgraph.interpreters import transpose as _transpose
from funcgraph.interpreters.ad_util import (
    Zero, ad_ops, add_tangents, instantiate, tangent_aval, zeros_of)
from funcgraph.interpreters.jvp import JVPTrace, JVPTracer
from funcgraph.interpreters.transpose import UndefinedPrimal
from funcgraph.jax_compat.rule_tables import RuleTable


def _symbolic(t, out):
    """A JAX rule's tangent as funcgraph's: None and float0 arrays are zeros."""
    if t is None:
        return Zero(tangent_aval(core.get_aval(out)))
    if type(t) is np.ndarray and t.dtype == dtypes.float0:
        return Zero(core.ShapedArray(t.shape, dtypes.float0))
    return t


def _adapt_jvp(prim, rule):
    def jvp(primals, tangents, **params):
        out, t_out = rule(tuple(primals), tuple(tangents), **params)  # JAX's: tuples
        if prim.multiple_results:
            return out, [_symbolic(t, o) for o, t in core.safe_zip(list(out), list(t_out))]
        return out, _symbolic(t_out, out)
    return jvp


def _adapt_transpose(prim, rule):
    def transpose(ct, *args, **params):
        cts = rule(ct, *args, **params)
        if cts is Zero:  # JAX's spelling of "every cotangent is zero"
            return [None] * len(args)
        return [None if c is Zero else c for c in cts]
    return transpose


primitive_jvps = RuleTable(_jvp.jvp_rules, _adapt_jvp)
primitive_transposes = RuleTable(_transpose.transpose_rules, _adapt_transpose)


def is_undefined_primal(x):
    return type(x) is UndefinedPrimal


def instantiate_zeros(tangent):
    """A symbolic zero made an array of zeros; other tangents as they are."""
    return instantiate(tangent) if type(tangent) is Zero else tangent


def zeros_like_aval(aval):
    return zeros_of(aval)


def add_jaxvals(x, y):
    return ad_ops["add"](x, y)


def get_primitive_transpose(prim):
    try:
        return primitive_transposes[prim]
    except KeyError:
        raise core.missing_rule(prim, "transpose (reverse-mode differentiation)") from None


def defjvp(prim, *rules):
    """One rule per operand: rule(tangent, *primals, **params) -> tangent contribution
    (None for an operand without one)."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        total = None
        for rule, t in zip(rules, tangents):
            if rule is None or type(t) is Zero:
                continue
            term = rule(t, *primals, **params)
            total = term if total is None else add_tangents(total, term)
        return out, total
    primitive_jvps[prim] = jvp


def defjvp2(prim, *rules):
    """As defjvp, with the output: rule(tangent, out, *primals, **params)."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        total = None
        for rule, t in zip(rules, tangents):
            if rule is None or type(t) is Zero:
                continue
            term = rule(t, out, *primals, **params)
            total = term if total is None else add_tangents(total, term)
        return out, total
    primitive_jvps[prim] = jvp


def deflinear(prim, transpose_rule):
    """A primitive linear in all its operands: transpose_rule(ct, **params) -> cts."""
    _define_linear(prim, lambda ct, args, params: transpose_rule(ct, **params))


def deflinear2(prim, transpose_rule):
    """As deflinear, the rule also given the operands: transpose_rule(ct, *args, **params)."""
    _define_linear(prim, lambda ct, args, params: transpose_rule(ct, *args, **params))


def _define_linear(prim, call_rule):
    """The JVP of a linear primitive (itself applied to the tangents) and its transpose
    (call_rule(ct, args, params); nothing for a zero cotangent)."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        return out, prim.bind(*[instantiate_zeros(t) for t in tangents], **params)
    primitive_jvps[prim] = jvp

    def transpose(ct, *args, **params):
        if type(ct) is Zero:
            return [None] * len(args)
        return call_rule(ct, args, params)
    primitive_transposes[prim] = transpose


def defbilinear(prim, lhs_rule, rhs_rule):
    """A primitive linear in each of its two operands: lhs_rule(ct, x, y, **params) is
    the cotangent of x (x an UndefinedPrimal), rhs_rule that of y."""
    def jvp(primals, tangents, **params):
        x, y = primals
        tx, ty = tangents
        out = prim.bind(x, y, **params)
        total = None
        if type(tx) is not Zero:
            total = prim.bind(tx, y, **params)
        if type(ty) is not Zero:
            term = prim.bind(x, ty, **params)
            total = term if total is None else add_tangents(total, term)
        return out, total
    primitive_jvps[prim] = jvp

    def transpose(ct, x, y, **params):
        if type(ct) is Zero:
            return [None, None]
        ct_x = lhs_rule(ct, x, y, **params) if is_undefined_primal(x) else None
        ct_y = rhs_rule(ct, x, y, **params) if is_undefined_primal(y) else None
        return [ct_x, ct_y]
    primitive_transposes[prim] = transpose


__all__ = [
    "JVPTrace", "JVPTracer", "UndefinedPrimal", "Zero", "add_jaxvals", "add_tangents",
    "defbilinear", "defjvp", "defjvp2", "deflinear", "deflinear2",
    "get_primitive_transpose", "instantiate_zeros", "is_undefined_primal",
    "primitive_jvps", "primitive_transposes", "zeros_like_aval",
]
