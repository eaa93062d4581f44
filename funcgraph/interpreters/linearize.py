"""linearize = JVP under partial evaluation; vjp = linearize + transpose.

`linearize_flat(fun, primals)` runs fun once: the primal computation happens
now (at the current trace) and the tangent computation is staged into a
linear jaxpr whose constvars are the residuals.  The returned LinearMap can be
applied (forward mode) or transposed (reverse mode)."""
from funcgraph import core, dtypes, ir
from funcgraph.interpreters.eval import eval_jaxpr
from funcgraph.interpreters.jvp import Zero, instantiate, jvp_flat, tangent_aval, zeros_of
from funcgraph.interpreters.partial_eval import PartialEvalTrace
from funcgraph.interpreters.staging import StagingTrace
from funcgraph.interpreters.transpose import backward_pass


class Residual:
    """A value the backward pass keeps alive: its type, size and where it was made."""
    __slots__ = ("aval", "source")

    def __init__(self, aval, source):
        self.aval = aval
        self.source = source

    @property
    def nbytes(self):
        return self.aval.size * self.aval.dtype.itemsize

    def __repr__(self):
        where = f"{self.source[0]}:{self.source[1]} ({self.source[2]})" if self.source else "?"
        return f"Residual({self.aval.str_short()}, {self.nbytes} bytes, {where})"


class LinearMap:
    """The linear tangent map of a function at a point.

    in_avals/out_avals are the tangent types; inputs and outputs without a
    tangent (float0) or known to be zero are not part of the jaxpr."""

    def __init__(self, closed, in_avals, in_mask, out_avals, out_mask, sources):
        self.jaxpr = closed
        self.in_avals = in_avals
        self.in_mask = in_mask      # which inputs are jaxpr invars
        self.out_avals = out_avals
        self.out_mask = out_mask    # which outputs are jaxpr outvars (others are zero)
        self.residuals = [Residual(core.get_aval(c), s)
                          for c, s in core.safe_zip(closed.consts, sources)]

    def __call__(self, tangents):
        ins = [t for t, m in core.safe_zip(tangents, self.in_mask) if m]
        outs = iter(eval_jaxpr(self.jaxpr.jaxpr, self.jaxpr.consts, *ins))
        return [next(outs) if m else zeros_of(a) for a, m in
                core.safe_zip(self.out_avals, self.out_mask)]

    def transpose(self, cotangents, instantiate_zeros=True):
        cts = [c for c, m in core.safe_zip(cotangents, self.out_mask) if m]
        cts_in = iter(backward_pass(self.jaxpr.jaxpr, self.jaxpr.consts, cts))
        result = []
        for aval, m in core.safe_zip(self.in_avals, self.in_mask):
            ct = next(cts_in) if m else Zero(aval)
            result.append(instantiate(ct) if instantiate_zeros else ct)
        return result


def linearize_flat(fun, primals):
    """(primal outputs, LinearMap) of fun(*primals) -> flat list of outputs."""
    pe = PartialEvalTrace(core.current.trace)
    in_avals = [tangent_aval(core.get_aval(p)) for p in primals]
    in_mask = [a.dtype != dtypes.float0 for a in in_avals]
    tangent_tracers = [pe.new_arg(a) for a, m in zip(in_avals, in_mask) if m]
    it = iter(tangent_tracers)
    tangents = [next(it) if m else Zero(a) for a, m in zip(in_avals, in_mask)]
    with core.set_trace(pe):
        out_primals, out_tangents = jvp_flat(fun, primals, tangents)
    out_avals = [tangent_aval(core.get_aval(p)) for p in out_primals]
    out_mask = [type(t) is not Zero and a.dtype != dtypes.float0
                for t, a in core.safe_zip(out_tangents, out_avals)]
    closed = pe.finish(tangent_tracers, [t for t, m in zip(out_tangents, out_mask) if m])
    return out_primals, LinearMap(closed, in_avals, in_mask, out_avals, out_mask,
                                  pe.residual_sources())


def jvp_jaxpr(closed, tangent_mask, force=None):
    """A jaxpr computing (primal outputs, tangent outputs) from (primals, the tangents
    marked in tangent_mask), and which outputs have a tangent there.

    An output gets a tangent when it is inexact and its tangent is not known to be
    zero, or when `force` marks it (then a zero tangent is materialized)."""
    in_avals = closed.in_avals
    tangent_avals = [tangent_aval(a) for a, m in zip(in_avals, tangent_mask) if m]
    force = force or [False] * len(closed.out_avals)
    out_mask = []

    def fun(*args):
        primals, tangents_in = args[:len(in_avals)], iter(args[len(in_avals):])
        tangents = [next(tangents_in) if m else Zero(tangent_aval(a))
                    for a, m in zip(in_avals, tangent_mask)]
        outs, out_tangents = jvp_flat(
            lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs), list(primals), tangents)
        out_mask[:] = [dtypes.is_inexact(core.get_aval(o).dtype) and
                       (type(t) is not Zero or bool(f))
                       for o, t, f in core.safe_zip(outs, out_tangents, force)]
        return list(outs) + [instantiate(t) for t, m in zip(out_tangents, out_mask) if m]

    from funcgraph.interpreters.staging import trace_flat
    return trace_flat(fun, list(in_avals) + tangent_avals), list(out_mask)


def partial_eval_jaxpr(closed, in_unknowns, instantiate=None):
    """Split a jaxpr by which inputs are unknown.

    Returns (known, unknown, out_unknowns, num_residuals): `known` maps the known
    inputs to (known outputs..., residuals...); `unknown` maps (residuals...,
    unknown inputs...) to the unknown outputs.  Both are const-free.  Outputs marked
    in `instantiate` are unknown even when computable now (their value then
    travels as a residual), so that callers can make several jaxprs agree."""
    known_trace = StagingTrace(core.current.trace)
    pe = PartialEvalTrace(known_trace)
    args, known_in, unknown_in = [], [], []
    for aval, unknown in core.safe_zip(closed.in_avals, in_unknowns):
        if unknown:
            t = pe.new_arg(aval)
            unknown_in.append(t)
        else:
            t = known_trace.new_arg(aval)
            known_in.append(t)
        args.append(t)
    with core.set_trace(pe):
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    instantiate = instantiate or [False] * len(outs)
    out_unknowns = [pe.is_unknown(o) or bool(force)
                    for o, force in core.safe_zip(outs, instantiate)]
    unknown_closed = pe.finish(unknown_in, [o for o, u in zip(outs, out_unknowns) if u])
    residuals = unknown_closed.consts
    known_closed = known_trace.finish(
        known_in, [o for o, u in zip(outs, out_unknowns) if not u] + list(residuals))
    unknown_jaxpr = unknown_closed.jaxpr
    unknown_closed = ir.ClosedJaxpr(
        ir.Jaxpr([], unknown_jaxpr.constvars + unknown_jaxpr.invars, unknown_jaxpr.outvars,
                 unknown_jaxpr.eqns), [])
    ir.check(unknown_closed)
    return known_closed, unknown_closed, out_unknowns, len(residuals)
