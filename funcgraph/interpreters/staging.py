"""Staging: trace a Python function into a jaxpr.

Every primitive bound while a StagingTrace is current becomes an equation.
Values from outside (NumPy arrays, concrete Arrays, tracers of enclosing
transformations) become constvars; Python and 0-d scalars become literals.

staging_rules[prim](trace, args, params) stages primitives whose parameters change
when staged (custom derivatives bind a Python function and stage its jaxpr).
"""
import numpy as np

from funcgraph import core, ir
from funcgraph.array import Array
from funcgraph.core import PYTHON_SCALARS as _PYTHON_SCALARS
from funcgraph.core import Tracer, aval_of_python_scalar, user_source_info
from funcgraph.ir import Eqn, Jaxpr, Literal, Var

staging_rules = {}


class DebugInfo:
    """What error messages say about a traced function: its name, where it is defined,
    and the name of each flat input (e.g. "params['w']")."""
    __slots__ = ("what", "fun_name", "fun_source", "arg_names")

    def __init__(self, what, fun_name, fun_source, arg_names):
        self.what = what
        self.fun_name = fun_name
        self.fun_source = fun_source
        self.arg_names = arg_names


class StagingTracer(Tracer):
    __slots__ = ("var",)

    def __init__(self, trace, var):
        self._trace = trace
        self.var = var

    @property
    def aval(self):
        return self.var.aval

    def origin(self):
        return self._trace.describe_origin(self.var)


class StagingTrace(core.Trace):
    description = "jit/make_jaxpr tracing"

    def __init__(self, parent, debug=None):
        super().__init__(parent)
        self.debug = debug
        if debug is not None:
            self.description = f"{debug.what} of {debug.fun_name}"
        self.invars = []
        self.eqns = []
        self.constvars = []
        self.consts = []
        self._const_ids = {}
        # Equations record the named_scope names entered after this trace began.
        self.base_names = core.current.name_stack

    def new_arg(self, aval):
        var = Var(aval)
        self.invars.append(var)
        return StagingTracer(self, var)

    def describe_origin(self, var):
        """Which arguments of the traced function `var` depends on, as a sentence."""
        if self.debug is None:
            return ""
        producers = {v: eqn for eqn in self.eqns for v in eqn.outvars}
        seen, stack, args = set(), [var], set()
        while stack:
            v = stack.pop()
            if v in seen or type(v) is Literal:
                continue
            seen.add(v)
            eqn = producers.get(v)
            if eqn is not None:
                stack.extend(eqn.invars)
        names = self.debug.arg_names
        args = [names[i] if names and i < len(names) else f"argument {i}"
                for i, v in enumerate(self.invars) if v in seen]
        where = f"while tracing the function {self.debug.fun_name}"
        if self.debug.fun_source:
            where += f" defined at {self.debug.fun_source}"
        where += f" for {self.debug.what}"
        if not args:
            return f"The error occurred {where}."
        return (f"The error occurred {where}: the value depends on "
                f"{'the argument ' if len(args) == 1 else 'the arguments '}"
                f"{', '.join(args)}.")

    def to_var(self, x):
        if type(x) is StagingTracer and x._trace is self:
            return x.var
        t = type(x)
        if t in _PYTHON_SCALARS:
            aval = aval_of_python_scalar(x)
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
            if isinstance(x, Tracer) or type(x) is Array:
                aval = x.aval
            elif isinstance(x, np.ndarray):
                x = core.canonical_numpy(x)
                aval = core.aval_of_numpy(x)
            elif isinstance(getattr(x, "aval", None), core.ShapedArray):
                aval = x.aval  # a ShapeDtypeStruct: a constant only abstract tracing can use
            else:
                raise TypeError(f"value of type {type(x).__name__} is not a valid "
                                f"funcgraph array: {x!r}")
            var = Var(aval)
            self._const_ids[id(x)] = var
            self.constvars.append(var)
            self.consts.append(x)
        return var

    def process_primitive(self, prim, args, params):
        if prim in staging_rules:
            return staging_rules[prim](self, args, params)
        return self.stage(prim, args, params)

    def stage(self, prim, args, params):
        """Record one equation of prim applied to args; its outputs' tracers."""
        invars = [self.to_var(a) for a in args]
        out = core.abstract_eval(prim, [v.aval for v in invars], params)
        source = user_source_info()
        names = core.current.name_stack
        if names:
            names = self._relative(names)
        if prim.multiple_results:
            outvars = [Var(a) for a in out]
            self.eqns.append(Eqn(prim, invars, outvars, params, source, names))
            return [StagingTracer(self, v) for v in outvars]
        var = Var(out)
        self.eqns.append(Eqn(prim, invars, [var], params, source, names))
        return StagingTracer(self, var)

    def _relative(self, names):
        base = self.base_names
        return names[len(base):] if names[:len(base)] == base else names

    def finish(self, in_tracers, outs):
        """The ClosedJaxpr from the traced inputs and outputs."""
        outvars = [self.to_var(o) for o in outs]
        jaxpr = Jaxpr(self.constvars, [t.var for t in in_tracers], outvars, self.eqns)
        self.alive = False
        closed = ir.ClosedJaxpr(jaxpr, self.consts)
        ir.check(closed)
        return closed


def trace_flat(fun, in_avals, debug=None):
    """Trace `fun(*flat_args) -> flat list` with inputs of the given avals."""
    parent = core.current.trace
    trace = StagingTrace(parent, debug)
    in_tracers = [trace.new_arg(a) for a in in_avals]
    with core.collections_deferred(), core.set_trace(trace):
        outs = fun(*in_tracers)
    return trace.finish(in_tracers, outs)
