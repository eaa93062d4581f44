"""Whole-jaxpr transformations that rules of primitives with sub-jaxprs (calls,
control flow, custom derivatives) share: a jaxpr's JVP, its split into known and
unknown parts, its batched form, and closure conversion."""
from funcgraph import core, dtypes, ir
from funcgraph.interpreters.ad_util import Zero, instantiate, tangent_aval
from funcgraph.interpreters.batching import batch_flat
from funcgraph.interpreters.eval import eval_jaxpr
from funcgraph.interpreters.jvp import jvp_flat
from funcgraph.interpreters.partial_eval import PartialEvalTrace
from funcgraph.interpreters.staging import StagingTrace, trace_flat
from funcgraph.interpreters.transpose import backward_pass
from funcgraph.ir import Literal
from funcgraph.primitives.batching_helpers import place_outputs


def const_free(closed):
    """(const-free ClosedJaxpr taking the consts as leading inputs, the consts)."""
    if not closed.consts:
        return closed, []
    jaxpr = closed.jaxpr
    converted = ir.ClosedJaxpr(
        ir.Jaxpr([], jaxpr.constvars + jaxpr.invars, jaxpr.outvars, jaxpr.eqns), [])
    ir.check(converted)
    return converted, list(closed.consts)


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


def batch_jaxpr(closed, in_dims, axis_data, out_batched=None):
    """A jaxpr taking the arguments with batch axes at in_dims (None: unbatched) and
    returning its outputs batched along axis 0, except those out_batched marks False,
    which must not depend on the batch (an error otherwise)."""
    in_avals = []
    for aval, d in core.safe_zip(closed.in_avals, in_dims):
        if d is None:
            in_avals.append(aval)
        else:
            in_avals.append(aval.update(shape=aval.shape[:d] + (axis_data.size,) + aval.shape[d:]))
    out_dims = [0] * len(closed.out_avals) if out_batched is None else \
        [0 if b else None for b in out_batched]

    def batched(*args):
        vals, dims = batch_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                list(args), list(in_dims), axis_data.size, axis_data.name,
                                axis_data.spmd_axis_name)
        return place_outputs(vals, dims, out_dims, axis_data.size)
    return trace_flat(batched, in_avals)


def batch_jaxpr_auto(closed, in_dims, axis_data):
    """batch_jaxpr whose outputs are batched (along axis 0) only where they depend on the
    batch, as the batching rules say (as in JAX: a loop counter or a call's unbatched
    result stays unbatched): (jaxpr, which outputs are batched)."""
    in_avals = []
    for aval, d in core.safe_zip(closed.in_avals, in_dims):
        if d is None:
            in_avals.append(aval)
        else:
            in_avals.append(aval.update(shape=aval.shape[:d] + (axis_data.size,) + aval.shape[d:]))
    found = []

    def batched(*args):
        vals, dims = batch_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                list(args), list(in_dims), axis_data.size, axis_data.name,
                                axis_data.spmd_axis_name)
        found[:] = [d is not None for d in dims]
        return place_outputs(vals, dims, [0 if b else None for b in found], axis_data.size)
    return trace_flat(batched, in_avals), found


def batched_outputs(jaxpr, in_batched):
    """Which outputs of a jaxpr depend on its batched inputs (a forward dataflow pass;
    equations with sub-jaxprs count as depending on all their inputs)."""
    batched = {v for v, b in core.safe_zip(jaxpr.invars, in_batched) if b}
    for eqn in jaxpr.eqns:
        if any(type(x) is not Literal and x in batched for x in eqn.invars):
            batched.update(eqn.outvars)
    return [type(v) is not Literal and v in batched for v in jaxpr.outvars]


def transpose_jaxpr(closed, undefined, ct_mask):
    """A jaxpr taking (the defined inputs, the nonzero output cotangents) to the
    cotangents of the undefined (linear) inputs; what is not linear is recomputed inside
    it from the defined inputs."""
    inner = closed.jaxpr
    variant = ir.Jaxpr([v for v, u in zip(inner.invars, undefined, strict=True) if not u],
                       [v for v, u in zip(inner.invars, undefined, strict=True) if u],
                       inner.outvars, inner.eqns)
    n_defined = len(variant.constvars)

    def backward(*xs):
        it = iter(xs[n_defined:])
        cts = [next(it) if m else Zero(a)
               for a, m in zip(closed.out_avals, ct_mask, strict=True)]
        return [instantiate(c) for c in backward_pass(variant, list(xs[:n_defined]), cts)]
    in_avals = [v.aval for v in variant.constvars] + \
        [a for a, m in zip(closed.out_avals, ct_mask, strict=True) if m]
    return trace_flat(backward, in_avals)
