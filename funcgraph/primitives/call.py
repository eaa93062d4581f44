"""pjit: a call of a jaxpr (a nested `jit`).  Its param `jaxpr` is a ClosedJaxpr
without consts (closed-over values are passed as leading arguments)."""
import weakref

from funcgraph import core
from funcgraph.interpreters.ad_util import Zero, is_zero, tangent_aval
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import compiled_eval, direct_impls
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.partial_eval import partial_eval_rules
from funcgraph.interpreters.transpose import is_undefined, transpose_rules
from funcgraph.lowering import emit_call
from funcgraph.primitives.helpers import declare
from funcgraph.primitives.jaxprs import (
    batch_jaxpr_auto, const_free, jvp_jaxpr, partial_eval_jaxpr,
    transpose_jaxpr)


def _pjit_shape(*avals, jaxpr, name):
    expected = jaxpr.in_avals
    if len(avals) != len(expected) or not all(map(core.same_type, avals, expected)):
        got = ", ".join(a.str_short() for a in avals)
        want = ", ".join(a.str_short() for a in expected)
        raise TypeError(f"pjit {name}: called with ({got}), its jaxpr takes ({want})")
    return jaxpr.out_avals


def _pjit_direct(*args, jaxpr, name):
    return compiled_eval["jaxpr"](jaxpr, args)


def _pjit_lowering(ctx, avals_in, avals_out, *args, jaxpr, name):
    return emit_call(ctx, jaxpr, name, args, avals_in, avals_out)


pjit_p = declare("pjit", _pjit_shape, None, _pjit_lowering, multiple_results=True)
core.symbolic_dims_supported.add(pjit_p)  # lowered inline in symbolic exports
core.keeps_operand_vma.add(pjit_p)
direct_impls[pjit_p] = _pjit_direct


def bind_call(closed, args, name):
    """Call a ClosedJaxpr as a pjit equation (its consts become leading arguments)."""
    call_jaxpr, consts = const_free(closed)
    return pjit_p.bind(*consts, *args, jaxpr=call_jaxpr, name=name)


# Derived jaxprs are cached per (jaxpr, mask) while the jaxpr lives.
_derived = weakref.WeakKeyDictionary()


def _cached(jaxpr, key, make):
    table = _derived.setdefault(jaxpr.jaxpr, {})
    if key not in table:
        table[key] = make()
    return table[key]


def _pjit_jvp(primals, tangents, jaxpr, name):
    mask = tuple(not is_zero(t) for t in tangents)
    jvp_closed, out_mask = _cached(jaxpr, ("jvp", mask), lambda: jvp_jaxpr(jaxpr, mask))
    outs = bind_call(jvp_closed, list(primals) + [t for t in tangents if not is_zero(t)],
                     f"jvp({name})")
    n = len(jaxpr.out_avals)
    return outs[:n], merge_tangents(outs[n:], out_mask, jaxpr.out_avals)


def merge_tangents(tangents, mask, avals):
    """Tangent outputs for the masked positions; symbolic zeros elsewhere."""
    it = iter(tangents)
    return [next(it) if m else Zero(tangent_aval(a)) for m, a in core.safe_zip(mask, avals)]


def _pjit_partial_eval(trace, args, params):
    """Known inputs run the known part of the call now; the rest is staged."""
    jaxpr, name = params["jaxpr"], params["name"]
    unknowns = tuple(trace.is_unknown(a) for a in args)
    known, unknown, out_unknowns, num_res = _cached(
        jaxpr, ("partial_eval", unknowns), lambda: partial_eval_jaxpr(jaxpr, unknowns))
    with core.set_trace(trace.parent):
        known_outs = bind_call(known, [a for a, u in zip(args, unknowns) if not u], name)
    residuals = known_outs[len(known_outs) - num_res:]
    known_outs = iter(known_outs[:len(known_outs) - num_res])
    staged = trace.stage(
        pjit_p, list(residuals) + [a for a, u in zip(args, unknowns) if u],
        dict(jaxpr=unknown, name=name))
    staged = iter(staged)
    return [next(staged) if u else next(known_outs) for u in out_unknowns]


def transpose_call(cts, args, jaxpr, name):
    """The cotangents of a call's undefined (linear) arguments: its jaxpr transposed,
    called as a pjit equation (None for the defined arguments)."""
    undefined = tuple(is_undefined(a) for a in args)
    ct_mask = tuple(not is_zero(c) for c in cts)

    backward_jaxpr = _cached(jaxpr, ("transpose", undefined, ct_mask),
                             lambda: transpose_jaxpr(jaxpr, undefined, ct_mask))
    outs = iter(bind_call(backward_jaxpr,
                          [a for a, u in zip(args, undefined) if not u] +
                          [c for c in cts if not is_zero(c)], f"transpose({name})"))
    return [next(outs) if u else None for u in undefined]


def _pjit_transpose(cts, *args, jaxpr, name):
    return transpose_call(cts, args, jaxpr, name)


def _pjit_batch(axis_data, args, dims, jaxpr, name):
    batched = _cached(jaxpr, ("batch", tuple(dims), axis_data.size, axis_data.name,
                                axis_data.spmd_axis_name),
                      lambda: batch_jaxpr_auto(jaxpr, dims, axis_data))
    outs = bind_call(batched[0], args, name)
    return outs, [0 if b else None for b in batched[1]]


jvp_rules[pjit_p] = _pjit_jvp
partial_eval_rules[pjit_p] = _pjit_partial_eval
transpose_rules[pjit_p] = _pjit_transpose
batching_rules[pjit_p] = _pjit_batch
