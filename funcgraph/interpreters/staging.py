"""Staging: trace a Python function into a jaxpr.

Every primitive bound while a StagingTrace is current becomes an equation.
Values from outside (NumPy arrays, concrete Arrays, tracers of enclosing
transformations) become constvars; Python and 0-d scalars become literals.
"""
import numpy as np

from funcgraph import core, ir
from funcgraph.array import Array
from funcgraph.core import Tracer, user_source_info
from funcgraph.ir import Eqn, Jaxpr, Literal, Var


class StagingTracer(Tracer):
    __slots__ = ("var",)

    def __init__(self, trace, var):
        self._trace = trace
        self.var = var

    @property
    def aval(self):
        return self.var.aval


class StagingTrace(core.Trace):
    description = "jit/make_jaxpr tracing"

    def __init__(self, parent):
        super().__init__(parent)
        self.eqns = []
        self.constvars = []
        self.consts = []
        self._const_ids = {}

    def new_arg(self, aval):
        return StagingTracer(self, Var(aval))

    def to_var(self, x):
        if type(x) is StagingTracer and x._trace is self:
            return x.var
        t = type(x)
        if t in (float, int, bool, complex):
            aval = core.aval_of_python_scalar(x)
            return Literal(np.array(x, aval.dtype), aval)
        if t is Array and not x.aval.shape:
            return Literal(x._value, x.aval)
        if isinstance(x, np.generic) or (t is np.ndarray and not x.shape):
            x = core.canonical_numpy(x)
            return Literal(x, core.aval_of_numpy(x))
        if isinstance(x, Tracer) and not x._trace.alive:
            raise core.leaked_tracer_error(x)
        var = self._const_ids.get(id(x))
        if var is None:
            if isinstance(x, (Tracer, Array)):
                aval = x.aval
            elif isinstance(x, np.ndarray):
                x = core.canonical_numpy(x)
                aval = core.aval_of_numpy(x)
            else:
                raise TypeError(f"value of type {type(x).__name__} is not a valid "
                                f"funcgraph array: {x!r}")
            var = Var(aval)
            self._const_ids[id(x)] = var
            self.constvars.append(var)
            self.consts.append(x)
        return var

    def process_primitive(self, prim, args, params):
        invars = [self.to_var(a) for a in args]
        out = core.abstract_eval(prim, [v.aval for v in invars], params)
        source = user_source_info()
        if prim.multiple_results:
            outvars = [Var(a) for a in out]
            self.eqns.append(Eqn(prim, invars, outvars, params, source))
            return [StagingTracer(self, v) for v in outvars]
        var = Var(out)
        self.eqns.append(Eqn(prim, invars, [var], params, source))
        return StagingTracer(self, var)

    def finish(self, in_tracers, outs):
        """The ClosedJaxpr from the traced inputs and outputs."""
        outvars = [self.to_var(o) for o in outs]
        jaxpr = Jaxpr(self.constvars, [t.var for t in in_tracers], outvars, self.eqns)
        self.alive = False
        closed = ir.ClosedJaxpr(jaxpr, self.consts)
        ir.check(closed)
        return closed


def trace_flat(fun, in_avals):
    """Trace `fun(*flat_args) -> flat list` with inputs of the given avals."""
    parent = core.current.trace
    trace = StagingTrace(parent)
    in_tracers = [trace.new_arg(a) for a in in_avals]
    with core.set_trace(trace):
        outs = fun(*in_tracers)
    return trace.finish(in_tracers, outs)
