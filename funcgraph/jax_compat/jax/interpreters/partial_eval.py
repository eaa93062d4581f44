"""`jax.interpreters.partial_eval`: PartialVal, trace_to_jaxpr_nounits (run a function
on partly known inputs: what depends only on known inputs is computed now, the rest is
staged into a jaxpr) and trace_to_jaxpr_dynamic (stage a function on abstract inputs),
over funcgraph's PartialEvalTrace and StagingTrace."""
from funcgraph import core
from funcgraph.interpreters.partial_eval import PartialEvalTrace
from funcgraph.interpreters.staging import StagingTrace


class PartialVal(tuple):
    """(aval, None) for an unknown value of type aval; (None, value) for a known one."""

    def __new__(cls, xs):
        pv, const = xs
        return tuple.__new__(cls, (pv, const))

    @classmethod
    def known(cls, const):
        return PartialVal((None, const))

    @classmethod
    def unknown(cls, aval):
        return PartialVal((aval, None))

    def is_known(self):
        return self[0] is None

    def get_known(self):
        """The value if known, else None."""
        return self[1] if self[0] is None else None

    def get_aval(self):
        """The aval of the value, known or not."""
        pv, const = self
        return core.get_aval(const) if pv is None else pv


def _call(fun, args):
    return fun.call_wrapped(*args) if hasattr(fun, "call_wrapped") else fun(*args)


def trace_to_jaxpr_nounits(fun, pvals, instantiate=False):
    """(jaxpr, out_pvals, consts) of fun (a WrappedFun of flat inputs) on pvals: known
    inputs are used as they are and everything computable from them alone is computed
    now (known outputs come back as PartialVal.known); the rest is the jaxpr, whose
    invars are the unknown inputs and whose constvars (values: consts) are the known
    values it reads.  Outputs marked in `instantiate` are staged even when known."""
    trace = PartialEvalTrace(core.current.trace)
    unknown_in, args = [], []
    for pval in pvals:
        aval, const = pval
        if aval is None:
            args.append(const)
        else:
            tracer = trace.new_arg(aval)
            unknown_in.append(tracer)
            args.append(tracer)
    with core.set_trace(trace):
        outs = list(_call(fun, args))
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(outs)
    staged = [trace.is_unknown(o) or bool(force) for o, force in core.safe_zip(outs, instantiate)]
    closed = trace.finish(unknown_in, [o for o, s in zip(outs, staged) if s])
    avals = iter(closed.jaxpr.out_avals)
    out_pvals = [PartialVal.unknown(next(avals)) if s else PartialVal.known(o)
                 for o, s in zip(outs, staged)]
    return closed.jaxpr, out_pvals, list(closed.consts)


def trace_to_jaxpr_dynamic(fun, in_avals, *, keep_inputs=None, lower=False, auto_dce=False):
    """(jaxpr, out_avals, consts) of fun (a WrappedFun of flat inputs) staged on inputs
    of the given avals; keep_inputs drops the inputs marked False from its invars."""
    del lower, auto_dce
    trace = StagingTrace(core.current.trace)
    in_tracers = [trace.new_arg(a) for a in in_avals]
    keep = [True] * len(in_avals) if keep_inputs is None else list(keep_inputs)
    with core.set_trace(trace):
        outs = list(_call(fun, [t for t, k in zip(in_tracers, keep) if k]))
    closed = trace.finish([t for t, k in zip(in_tracers, keep) if k], outs)
    return closed.jaxpr, closed.jaxpr.out_avals, list(closed.consts)


__all__ = ["PartialVal", "trace_to_jaxpr_dynamic", "trace_to_jaxpr_nounits"]
