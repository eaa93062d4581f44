"""Reverse mode: transposing a linear jaxpr (the backward pass).

transpose_rules[prim](cotangent_out, *args, **params) -> cotangents of args.
Linear inputs arrive as `UndefinedPrimal(aval)`; the others (residuals,
literals) as values.  A rule returns one entry per argument: a cotangent for
each UndefinedPrimal and None for the rest.  Cotangents may be `Zero`.
For primitives with several outputs, cotangent_out is a list."""
import sys

from funcgraph import core
from funcgraph.interpreters.ad_util import Zero, add_tangents
from funcgraph.interpreters.eval import literal_value
from funcgraph.ir import Literal

transpose_rules = {}


class UndefinedPrimal:
    """Marks a linear input of an equation being transposed."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined(x):
    return type(x) is UndefinedPrimal


def backward_pass(jaxpr, consts, cotangents_out):
    """Cotangents of jaxpr's inputs given cotangents of its outputs.

    Every invar of `jaxpr` is linear; constvars hold residual values.  Equations
    whose inputs are all non-linear (possible inside transposed sub-jaxprs) are
    evaluated forward first."""
    scope = core.replay_scope
    saved = scope.frame, scope.source
    scope.frame = sys._getframe()
    try:
        return _backward_pass(jaxpr, consts, cotangents_out, scope)
    finally:
        scope.frame, scope.source = saved


def _transposed_source(eqn):
    """The source the transpose of eqn is staged with: eqn's user line."""
    if eqn.source is None:
        return None
    return core.SourceInfo(eqn.source, f"transpose of {eqn.prim.name}")


def _backward_pass(jaxpr, consts, cotangents_out, scope):
    primal_env = {}
    linear = set(jaxpr.invars)
    for v, c in core.safe_zip(jaxpr.constvars, consts):
        primal_env[v] = c
    linear_eqns = []
    for eqn in jaxpr.eqns:
        if any(type(x) is not Literal and x in linear for x in eqn.invars):
            linear.update(eqn.outvars)
            linear_eqns.append(eqn)
        else:
            args = [literal_value(x) if type(x) is Literal else primal_env[x]
                    for x in eqn.invars]
            scope.source = eqn.source
            outs = eqn.prim.bind(*args, **eqn.params)
            outs = outs if eqn.prim.multiple_results else [outs]
            for v, o in core.safe_zip(eqn.outvars, outs):
                primal_env[v] = o

    ct_env = {}

    def write_ct(v, ct):
        if ct is None or type(v) is Literal or v not in linear:
            return
        ct_env[v] = add_tangents(ct_env[v], ct) if v in ct_env else ct

    for v, ct in core.safe_zip(jaxpr.outvars, cotangents_out):
        write_ct(v, ct)

    for eqn in reversed(linear_eqns):
        cts_out = [ct_env.pop(v, None) for v in eqn.outvars]
        cts_out = [Zero(v.aval) if ct is None else ct for v, ct in zip(eqn.outvars, cts_out)]
        if all(type(ct) is Zero for ct in cts_out):
            continue
        args = [UndefinedPrimal(x.aval) if type(x) is not Literal and x in linear
                else (literal_value(x) if type(x) is Literal else primal_env[x])
                for x in eqn.invars]
        rule = transpose_rules.get(eqn.prim)
        if rule is None:
            raise core.missing_rule(eqn.prim, "transpose (reverse-mode differentiation)",
                                    "it is not linear, or its transpose is not written yet")
        ct_arg = cts_out if eqn.prim.multiple_results else cts_out[0]
        scope.source = _transposed_source(eqn)
        with core.equation_context(eqn.name_stack):
            cts_in = rule(ct_arg, *args, **eqn.params)
        for x, ct in core.safe_zip(eqn.invars, list(cts_in)):
            if type(x) is not Literal:
                write_ct(x, ct)

    return [ct_env.pop(v, Zero(v.aval)) for v in jaxpr.invars]
