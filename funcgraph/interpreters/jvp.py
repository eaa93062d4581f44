"""Forward mode: the JVP interpreter.

jvp_rules[prim](primals, tangents, **params) -> (primal_out, tangent_out), where
tangents may be symbolic zeros (`Zero`), which rules propagate without
materializing.  Rules run with the JVP trace's parent current, so the ops they
bind belong to the enclosing computation (eager, staged, or another
transformation)."""
import numpy as np

from funcgraph import core, dtypes
from funcgraph.core import ShapedArray, Tracer

jvp_rules = {}


class Zero:
    """A tangent (or cotangent) known to be zero, of the given type."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"


def tangent_aval(aval):
    """Tangents of inexact values have the same type; others have float0 (no tangent)."""
    if dtypes.is_inexact(aval.dtype):
        return aval
    return ShapedArray(aval.shape, dtypes.float0)


def zeros_of(aval):
    """A materialized zero of type aval (float0 zeros are NumPy arrays, as in JAX)."""
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    from funcgraph import lax
    zero = core_scalar(0, aval.dtype, aval.weak_type)
    return lax.broadcast_in_dim(zero, aval.shape, ()) if aval.shape else zero


def core_scalar(value, dtype, weak_type=False):
    from funcgraph.array import Array
    return Array(np.array(value, dtype), core.scalar_aval(dtype, weak_type))


def instantiate(t):
    return zeros_of(t.aval) if type(t) is Zero else t


def is_zero(t):
    return type(t) is Zero


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        return core.get_aval(self.primal)


class JVPTrace(core.Trace):
    description = "jvp/grad"

    def lift(self, x):
        if type(x) is JVPTracer and x._trace is self:
            return x.primal, x.tangent
        if isinstance(x, Tracer) and not x._trace.alive:
            raise core.leaked_tracer_error(x)
        return x, Zero(tangent_aval(core.get_aval(x)))

    def process_primitive(self, prim, args, params):
        primals, tangents = [], []
        for a in args:
            p, t = self.lift(a)
            primals.append(p)
            tangents.append(t)
        if all(type(t) is Zero for t in tangents):
            with core.set_trace(self.parent):
                return prim.bind(*primals, **params)
        rule = jvp_rules.get(prim)
        if rule is None:
            raise core.missing_rule(prim, "JVP (differentiation)")
        with core.set_trace(self.parent):
            primal_out, tangent_out = rule(primals, tangents, **params)
        if prim.multiple_results:
            return [JVPTracer(self, p, t) for p, t in core.safe_zip(primal_out, tangent_out)]
        return JVPTracer(self, primal_out, tangent_out)


def jvp_flat(fun, primals, tangents):
    """Run fun(*flat inputs) -> flat outputs with tangents; returns (primals, tangents)."""
    trace = JVPTrace(core.current.trace)
    ins = [JVPTracer(trace, p, t) for p, t in core.safe_zip(primals, tangents)]
    with core.set_trace(trace):
        outs = fun(*ins)
    out_primals, out_tangents = [], []
    for o in outs:
        p, t = trace.lift(o)
        out_primals.append(p)
        out_tangents.append(t)
    trace.alive = False
    return out_primals, out_tangents
