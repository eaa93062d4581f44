"""Forward mode: the JVP interpreter.

jvp_rules[prim](primals, tangents, **params) -> (primal_out, tangent_out), where
tangents may be symbolic zeros (`Zero`), which rules propagate without
materializing.  Rules run with the JVP trace's parent current, so the ops they
bind belong to the enclosing computation (eager, staged, or another
transformation).  Outside jit that parent computes concrete values, so a JVP
tracer knows its primal value and Python control flow on it works, as in JAX."""
from funcgraph import core
from funcgraph.core import Tracer
from funcgraph.interpreters.ad_util import Zero, tangent_aval

jvp_rules = {}


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        return core.get_aval(self.primal)

    def to_concrete_value(self):
        return core.concrete_value(self.primal)

    def origin(self):
        return core.origin_of(self.primal)


class JVPTrace(core.Trace):
    description = "jvp/grad"

    def lift(self, x):
        if type(x) is JVPTracer and x._trace is self:
            return x.primal, x.tangent
        if isinstance(x, Tracer) and not x._trace.alive:
            raise core.leaked_tracer_error(x)
        return x, Zero(tangent_aval(core.get_aval(x)))

    def _lift_all(self, args):
        primals, tangents = [], []
        for a in args:
            p, t = self.lift(a)
            primals.append(p)
            tangents.append(t)
        return primals, tangents

    def process_primitive(self, prim, args, params):
        primals, tangents = self._lift_all(args)
        if all(type(t) is Zero for t in tangents):
            with core.set_trace(self.parent):
                return prim.bind(*primals, **params)
        rule = jvp_rules.get(prim)
        if rule is None:
            raise core.missing_rule(prim, "JVP (differentiation)")
        with core.set_trace(self.parent):
            primal_out, tangent_out = rule(primals, tangents, **params)
        if prim.multiple_results:
            return [self.wrap(p, t) for p, t in core.safe_zip(primal_out, tangent_out)]
        return self.wrap(primal_out, tangent_out)

    def wrap(self, primal, tangent):
        """A value with a zero tangent is a constant to this trace: no tracer needed."""
        return primal if type(tangent) is Zero else JVPTracer(self, primal, tangent)


def jvp_flat(fun, primals, tangents):
    """Run fun(*flat inputs) -> flat outputs with tangents; returns (primals, tangents)."""
    trace = JVPTrace(core.current.trace)
    ins = [trace.wrap(p, t) for p, t in core.safe_zip(primals, tangents)]
    with core.set_trace(trace):
        outs = fun(*ins)
    out_primals, out_tangents = [], []
    for o in outs:
        p, t = trace.lift(o)
        out_primals.append(p)
        out_tangents.append(t)
    trace.alive = False
    return out_primals, out_tangents
