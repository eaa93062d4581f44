"""Partial evaluation: split a computation into what is known now and what is not.

A PartialEvalTrace evaluates (at its parent) every primitive whose inputs are
all known, and stages the others into a jaxpr.  Known values read by staged
equations become that jaxpr's constvars: the *residuals*.  Under a JVP trace
with known primals and unknown tangents this is `linearize`: the primal
computation runs now and the staged jaxpr is the linear tangent map.

partial_eval_rules[prim](trace, args, params) handles primitives that hold
sub-jaxprs (calls, control flow) by splitting the sub-jaxpr itself."""
import weakref

from funcgraph import core
from funcgraph.interpreters.staging import StagingTrace, StagingTracer

partial_eval_rules = {}


class PartialEvalTrace(StagingTrace):
    description = "linearize/grad"

    def __init__(self, parent):
        super().__init__(parent)
        # id(known value) -> (source line of the equation that computed it, weakref);
        # entries leave when their value is freed, so ids are never confused.
        self.known_sources = {}

    def is_unknown(self, x):
        return type(x) is StagingTracer and x._trace is self

    def process_primitive(self, prim, args, params):
        if not any(type(a) is StagingTracer and a._trace is self for a in args):
            source = core.user_source_info()
            with core.set_trace(self.parent):
                out = prim.bind(*args, **params)
            self._remember_source(out, source)
            return out
        rule = partial_eval_rules.get(prim)
        if rule is not None:
            return rule(self, args, params)
        return super().process_primitive(prim, args, params)

    def _remember_source(self, out, source):
        sources = self.known_sources
        for value in (out if isinstance(out, (list, tuple)) else [out]):
            key = id(value)
            try:
                ref = weakref.ref(value, lambda _, key=key: sources.pop(key, None))
            except TypeError:
                continue
            sources[key] = (source, ref)

    def residual_sources(self):
        """Source line of each residual (constvar), in constvar order."""
        return [self.known_sources.get(id(c), (None, None))[0] for c in self.consts]
