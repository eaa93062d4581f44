"""Control flow primitives: cond (also lax.switch), while and scan.

Their params hold const-free ClosedJaxprs (closed-over values are passed as
leading operands).  Each block holds the primitive's rules: shape rule,
lowering to StableHLO `case`/`while`, JVP, partial evaluation and transpose
(reverse mode; while's is an error, as in JAX) and batching.  With no NumPy impl,
eager calls run compiled."""
import numpy as np

from funcgraph import core, dtypes, ir
from funcgraph.core import ShapedArray
from funcgraph.interpreters.ad_util import Zero, instantiate, is_zero, zeros_of
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import eval_jaxpr
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.partial_eval import partial_eval_rules
from funcgraph.interpreters.staging import trace_flat
from funcgraph.interpreters.transpose import backward_pass, is_undefined, transpose_rules
from funcgraph.lowering import TOKEN, has_ordered_effects, lower_closed_body
from funcgraph.primitives.base import broadcast_in_dim_p
from funcgraph.primitives.batching_helpers import batch_at
from funcgraph.primitives.call import merge_tangents
from funcgraph.primitives.elementwise import add_p, select_n_p
from funcgraph.primitives.helpers import declare
from funcgraph.primitives.jaxprs import (
    batch_jaxpr, batch_jaxpr_auto, const_free, jvp_jaxpr, partial_eval_jaxpr)
from funcgraph.primitives.reductions import reduce_or_p

INT32_SCALAR = ShapedArray((), dtypes.int32)


# --- shared helpers -------------------------------------------------------------------

def trace_joined(fns, in_avals):
    """Trace several functions over the same inputs into const-free jaxprs that share one
    operand list: (jaxprs, consts); each jaxpr takes (all consts..., inputs...)."""
    traced = [const_free(trace_flat(fn, in_avals)) for fn in fns]
    consts = [c for _, cs in traced for c in cs]
    const_avals = [core.get_aval(c) for c in consts]
    joined, offset = [], 0
    for jaxpr, cs in traced:
        mine = range(offset, offset + len(cs))
        offset += len(cs)

        def call(*args, jaxpr=jaxpr, mine=mine):
            own = [args[i] for i in mine]
            return eval_jaxpr(jaxpr.jaxpr, [], *own, *args[len(consts):])
        joined.append(const_free(trace_flat(call, const_avals + list(in_avals)))[0])
    return joined, consts


def describe_mismatch(what, names, avals_lists):
    lines = []
    for i in range(max(len(a) for a in avals_lists)):
        types = [a[i].str_short() if i < len(a) else "<missing>" for a in avals_lists]
        if len(set(types)) > 1:
            lines.extend(f"  {name} output {i}: {t}" for name, t in zip(names, types))
    return f"{what} must have identical types, got\n" + "\n".join(lines)


def _variant(closed, defined):
    """The jaxpr with its defined (non-linear) inputs as constvars, for backward_pass."""
    inner = closed.jaxpr
    return ir.Jaxpr([v for v, d in zip(inner.invars, defined) if d],
                    [v for v, d in zip(inner.invars, defined) if not d], inner.outvars, inner.eqns)


def _region_body(closed, operand_names, token=None):
    """A region running `closed` on names of the enclosing body; given the enclosing
    ordered-effects `token`, it threads it and returns the new one last."""
    def body(ctx, args):
        ctx.token = token
        outs = lower_closed_body(ctx, closed, list(operand_names) + list(args))
        if token is None:
            return outs, closed.out_avals
        return outs + [ctx.token], list(closed.out_avals) + [TOKEN]
    return body


def _threaded_token(ctx, *closed):
    """The token to thread through control flow whose bodies have ordered effects (so
    they keep their order with those before and after it), else None."""
    if any(has_ordered_effects(c.jaxpr) for c in closed):
        return ctx.effect_token()
    return None


# --- cond: run branches[index](*operands) ----------------------------------------------
# operands: index (int32 scalar), *ops; params: branches (tuple of const-free ClosedJaxprs)

def _cond_shape(index, *ops, branches):
    if index.shape != () or index.dtype != dtypes.int32:
        raise TypeError(f"cond: the branch index must be an int32 scalar, got "
                        f"{index.str_short()}")
    for i, b in enumerate(branches):
        if len(b.in_avals) != len(ops) or not all(map(core.same_type, b.in_avals, ops)):
            raise TypeError(f"cond: branch {i} takes {[a.str_short() for a in b.in_avals]}, "
                            f"called with {[a.str_short() for a in ops]}")
    return list(branches[0].out_avals)


def _cond_lowering(ctx, avals_in, avals_out, index, *ops, branches):
    token = _threaded_token(ctx, *branches)
    regions = [ctx.region([], _region_body(b, ops, token)) for b in branches]
    outs = ctx.op("stablehlo.case", [index], [avals_in[0]],
                  list(avals_out) + ([TOKEN] if token else []), regions=regions)
    if token:
        ctx.token, outs = outs[-1], outs[:-1]
    return outs


cond_p = declare("cond", _cond_shape, None, _cond_lowering, multiple_results=True)
core.keeps_operand_vma.add(cond_p)


def _cond_jvp(primals, tangents, branches):
    index, ops = primals[0], primals[1:]
    op_tangents = tangents[1:]
    mask = tuple(not is_zero(t) for t in op_tangents)
    # Every branch must output the same tangents: force the union.
    masks = [jvp_jaxpr(b, mask)[1] for b in branches]
    union = [any(m[i] for m in masks) for i in range(len(branches[0].out_avals))]
    new = tuple(jvp_jaxpr(b, mask, force=union)[0] for b in branches)
    outs = cond_p.bind(index, *ops, *[t for t in op_tangents if not is_zero(t)], branches=new)
    n = len(branches[0].out_avals)
    return outs[:n], merge_tangents(outs[n:], union, branches[0].out_avals)


def _cond_partial_eval(trace, args, params):
    branches = params["branches"]
    index, ops = args[0], args[1:]
    if trace.is_unknown(index):
        return trace.stage(cond_p, list(args), params)
    unknowns = [trace.is_unknown(a) for a in ops]
    n_out = len(branches[0].out_avals)
    first = [partial_eval_jaxpr(b, unknowns) for b in branches]
    out_unknowns = [any(s[2][i] for s in first) for i in range(n_out)]
    splits = [partial_eval_jaxpr(b, unknowns, instantiate=out_unknowns) for b in branches]
    res_avals = [s[0].out_avals[len(s[0].out_avals) - s[3]:] for s in splits]
    all_res = [a for avals in res_avals for a in avals]
    known_ops = [a for a, u in zip(ops, unknowns) if not u]
    unknown_ops = [a for a, u in zip(ops, unknowns) if u]

    def known_fn(i):
        known, _, _, num_res = splits[i]

        def fn(*xs):
            outs = eval_jaxpr(known.jaxpr, known.consts, *xs)
            mine = outs[len(outs) - num_res:]
            res = [zeros_of(a) for avals in res_avals[:i] for a in avals] + list(mine) + \
                [zeros_of(a) for avals in res_avals[i + 1:] for a in avals]
            return list(outs[:len(outs) - num_res]) + res
        return fn

    def unknown_fn(i):
        _, unknown, _, num_res = splits[i]
        start = sum(len(a) for a in res_avals[:i])

        def fn(*xs):
            res, rest = xs[:len(all_res)], xs[len(all_res):]
            return eval_jaxpr(unknown.jaxpr, [], *res[start:start + num_res], *rest)
        return fn

    known_branches, known_consts = trace_joined(
        [known_fn(i) for i in range(len(branches))], [core.get_aval(a) for a in known_ops])
    with core.set_trace(trace.parent):
        known_outs = cond_p.bind(index, *known_consts, *known_ops,
                                 branches=tuple(known_branches))
    split = len(known_outs) - len(all_res)
    residuals, known_outs = known_outs[split:], iter(known_outs[:split])
    unknown_branches, unknown_consts = trace_joined(
        [unknown_fn(i) for i in range(len(branches))],
        all_res + [a.aval for a in unknown_ops])
    staged = iter(trace.stage(
        cond_p, [index] + unknown_consts + list(residuals) + unknown_ops,
        dict(branches=tuple(unknown_branches))))
    return [next(staged) if u else next(known_outs) for u in out_unknowns]


def _cond_transpose(cts, index, *ops, branches):
    if is_undefined(index):
        raise TypeError("cond: cannot transpose with respect to the branch index")
    defined = [not is_undefined(o) for o in ops]
    ct_mask = [not is_zero(c) for c in cts]
    res = [o for o, d in zip(ops, defined) if d]
    out_avals = branches[0].out_avals

    def backward(b):
        variant = _variant(b, defined)

        def fn(*xs):
            it = iter(xs[len(res):])
            full = [next(it) if m else Zero(a) for a, m in zip(out_avals, ct_mask)]
            return [instantiate(c) for c in backward_pass(variant, list(xs[:len(res)]), full)]
        return fn

    in_avals = [core.get_aval(r) for r in res] + [a for a, m in zip(out_avals, ct_mask) if m]
    bwd, consts = trace_joined([backward(b) for b in branches], in_avals)
    outs = iter(cond_p.bind(index, *consts, *res, *[c for c in cts if not is_zero(c)],
                            branches=tuple(bwd)))
    return [None] + [None if d else next(outs) for d in defined]


def _cond_batch(axis_data, args, dims, branches):
    index, ops = args[0], args[1:]
    index_dim, op_dims = dims[0], dims[1:]
    if index_dim is None:  # outputs unbatched in every branch stay unbatched
        found = [batch_jaxpr_auto(b, op_dims, axis_data)[1] for b in branches]
        out_b = [any(f[i] for f in found) for i in range(len(found[0]))]
        batched = [batch_jaxpr(b, op_dims, axis_data, out_b) for b in branches]
        outs = cond_p.bind(index, *ops, branches=tuple(batched))
        return outs, [0 if b else None for b in out_b]
    batched = [batch_jaxpr(b, op_dims, axis_data) for b in branches]
    # A batched predicate: every branch runs, and each lane selects its own result.
    index = batch_at(index, index_dim, axis_data.size)
    results = [eval_jaxpr(b.jaxpr, [], *ops) for b in batched]
    outs = []
    for j, first in enumerate(results[0]):
        shape = core.get_aval(first).shape
        which = broadcast_in_dim_p.bind(index, shape=shape, broadcast_dimensions=(0,))
        outs.append(select_n_p.bind(which, *[r[j] for r in results]))
    return outs, [0] * len(outs)


jvp_rules[cond_p] = _cond_jvp
partial_eval_rules[cond_p] = _cond_partial_eval
transpose_rules[cond_p] = _cond_transpose
batching_rules[cond_p] = _cond_batch


# --- while: while cond(consts, carry): carry = body(consts, carry) ----------------------
# operands: *cond_consts, *body_consts, *init; params: cond_jaxpr, body_jaxpr,
# cond_nconsts, body_nconsts.

def _while_shape(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    carry = args[cond_nconsts + body_nconsts:]
    outs = body_jaxpr.out_avals
    if len(outs) != len(carry) or not all(map(core.same_type, outs, carry)):
        raise TypeError(describe_mismatch("while_loop body input and output",
                                          ["carry", "body"], [carry, outs]))
    pred = cond_jaxpr.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != dtypes.bool_:
        raise TypeError(f"while_loop cond_fun must return a boolean scalar, got "
                        f"{[a.str_short() for a in pred]}")
    return list(carry)


def _while_lowering(ctx, avals_in, avals_out, *args, cond_jaxpr, body_jaxpr, cond_nconsts,
                    body_nconsts):
    """Consts travel through the loop unchanged, so regions capture nothing."""
    nc, nb = cond_nconsts, body_nconsts
    token = _threaded_token(ctx, cond_jaxpr, body_jaxpr)
    state, state_avals = list(args), list(avals_in)
    if token:  # the last value of the loop's state
        state, state_avals = state + [token], state_avals + [TOKEN]

    def cond_body(rctx, xs):
        rctx.token = xs[-1] if token else None
        xs = xs[:len(args)]
        pred = lower_closed_body(rctx, cond_jaxpr, list(xs[:nc]) + list(xs[nc + nb:]))
        return pred, cond_jaxpr.out_avals

    def loop_body(rctx, xs):
        rctx.token = xs[-1] if token else None
        xs = xs[:len(args)]
        new = lower_closed_body(rctx, body_jaxpr, list(xs[nc:nc + nb]) + list(xs[nc + nb:]))
        return list(xs[:nc + nb]) + new + ([rctx.token] if token else []), state_avals

    outs = ctx.op("stablehlo.while", state, state_avals, state_avals,
                  regions=[ctx.region(state_avals, cond_body),
                           ctx.region(state_avals, loop_body)])
    if token:
        ctx.token = outs.pop()
    return outs[nc + nb:len(args)]


while_p = declare("while", _while_shape, None, _while_lowering, multiple_results=True)
core.keeps_operand_vma.add(while_p)


def _carry_fixpoint(step, init):
    """Smallest set (as bools) containing init and closed under step."""
    current = list(init)
    while True:
        new = [a or b for a, b in zip(current, step(current))]
        if new == current:
            return current
        current = new


def _while_jvp(primals, tangents, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    const_mask = [not is_zero(t) for t in tangents[nc:nc + nb]]
    inexact = [dtypes.is_inexact(a.dtype) for a in body_jaxpr.out_avals]
    carry_init = [not is_zero(t) for t in tangents[nc + nb:]]
    carry_mask = _carry_fixpoint(
        lambda cm: jvp_jaxpr(body_jaxpr, tuple(const_mask + cm), force=cm)[1], carry_init)
    carry_mask = [m and i for m, i in zip(carry_mask, inexact)]
    body_jvp, _ = jvp_jaxpr(body_jaxpr, tuple(const_mask + carry_mask), force=carry_mask)
    n_carry = len(carry_mask)
    n_tan_consts = sum(const_mask)

    # Reorder (consts, const tangents, carry, carry tangents) to the jvp jaxpr's order.
    def body(*xs):
        consts, ct = xs[:nb], xs[nb:nb + n_tan_consts]
        carry, carry_t = xs[nb + n_tan_consts:nb + n_tan_consts + n_carry], \
            xs[nb + n_tan_consts + n_carry:]
        return eval_jaxpr(body_jvp.jaxpr, [], *consts, *carry, *ct, *carry_t)

    tan_avals = [a for a, m in zip(body_jaxpr.out_avals, carry_mask) if m]
    const_avals = body_jaxpr.in_avals[:nb]
    body_new = trace_flat(body, list(const_avals) +
                          [a for a, m in zip(const_avals, const_mask) if m] +
                          list(body_jaxpr.out_avals) + tan_avals)

    def cond(*xs):
        return eval_jaxpr(cond_jaxpr.jaxpr, [], *xs[:nc], *xs[nc:nc + n_carry])

    cond_new = trace_flat(cond, list(cond_jaxpr.in_avals) + tan_avals)
    carry = primals[nc + nb:]
    carry_t = [instantiate(t) for t, m in zip(tangents[nc + nb:], carry_mask) if m]
    const_t = [t for t, m in zip(tangents[nc:nc + nb], const_mask) if m]
    outs = while_p.bind(*primals[:nc], *primals[nc:nc + nb], *const_t, *carry, *carry_t,
                        cond_jaxpr=cond_new, body_jaxpr=body_new, cond_nconsts=nc,
                        body_nconsts=nb + n_tan_consts)
    return outs[:n_carry], merge_tangents(outs[n_carry:], carry_mask, body_jaxpr.out_avals)


def _while_partial_eval(trace, args, params):
    """As in JAX: the known carries (those that never depend on an unknown input) come
    from a loop of the known part of the body, run now; the unknown ones from the whole
    loop, staged with the known inputs as residuals (it recomputes the known carries).
    With an unknown predicate, or every carry unknown, the whole loop is staged."""
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    unknowns = [trace.is_unknown(a) for a in args]
    cond_uk, body_uk, carry_init_uk = unknowns[:nc], unknowns[nc:nc + nb], unknowns[nc + nb:]
    carry_uk = _carry_fixpoint(
        lambda cu: partial_eval_jaxpr(body_jaxpr, body_uk + cu, instantiate=cu)[2],
        carry_init_uk)
    if all(carry_uk):
        return trace.stage(while_p, list(args), params)
    cond_split = partial_eval_jaxpr(cond_jaxpr, cond_uk + carry_uk)
    if cond_split[2][0]:
        return trace.stage(while_p, list(args), params)
    cond_known, cond_consts = _known_part(cond_split)
    body_known, body_consts = _known_part(
        partial_eval_jaxpr(body_jaxpr, body_uk + carry_uk, instantiate=carry_uk))
    known = [a for a, u in zip(args, cond_uk + body_uk + carry_uk) if not u]
    n_cond = nc - sum(cond_uk)
    n_body = n_cond + nb - sum(body_uk)
    with core.set_trace(trace.parent):
        known_outs = iter(while_p.bind(
            *cond_consts, *known[:n_cond], *body_consts, *known[n_cond:],
            cond_jaxpr=cond_known, body_jaxpr=body_known,
            cond_nconsts=len(cond_consts) + n_cond,
            body_nconsts=len(body_consts) + n_body - n_cond))
    staged = trace.stage(while_p, list(args), params)
    return [s if u else next(known_outs) for s, u in zip(staged, carry_uk)]


def _known_part(split):
    """From partial_eval_jaxpr's split, the known jaxpr without its residual outputs
    (and the equations only they need), const-free: (jaxpr, its leading consts)."""
    known, _, _, num_res = split
    jaxpr = known.jaxpr
    outvars = jaxpr.outvars[:len(jaxpr.outvars) - num_res]
    live = {v for v in outvars if type(v) is not ir.Literal}
    eqns = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.outvars) or ir.eqn_effects(eqn):
            eqns.append(eqn)
            live.update(x for x in eqn.invars if type(x) is not ir.Literal)
    pruned = ir.ClosedJaxpr(ir.Jaxpr(jaxpr.constvars, jaxpr.invars, outvars, eqns[::-1]),
                            known.consts)
    ir.check(pruned)
    return const_free(pruned)


def _while_transpose(cts, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    raise ValueError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
        "with dynamic start/stop values: the number of iterations is not known, so the "
        "values the backward pass needs cannot be stored. Try using lax.scan, or "
        "lax.fori_loop with static (Python int) start/stop, which is implemented with "
        "scan; forward mode (jvp, jacfwd, linearize) works.")


def _batched_by_rules(closed, in_batched, axis_data):
    """Which outputs of closed depend on the batch (inputs batched at axis 0), asked of
    the batching rules as JAX does: a dataflow pass would batch every output of an
    equation with a sub-jaxpr, such as a loop counter next to a batched carry."""
    return batch_jaxpr_auto(closed, [0 if b else None for b in in_batched], axis_data)[1]


def _while_batch(axis_data, args, dims, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    cdims, bdims, carry_dims = dims[:nc], dims[nc:nc + nb], dims[nc + nb:]
    const_b = [d is not None for d in bdims]
    carry_b = _carry_fixpoint(
        lambda cb: _batched_by_rules(body_jaxpr, const_b + cb, axis_data),
        [d is not None for d in carry_dims])
    pred_b = _batched_by_rules(cond_jaxpr, [d is not None for d in cdims] + carry_b,
                               axis_data)[0]
    if pred_b:
        carry_b = [True] * len(carry_b)
    carry = [batch_at(a, d, axis_data.size) if b else a
             for a, d, b in zip(args[nc + nb:], carry_dims, carry_b)]
    carry_in_dims = [0 if b else None for b in carry_b]
    body_b = batch_jaxpr(body_jaxpr, list(bdims) + carry_in_dims, axis_data, carry_b)
    cond_b = batch_jaxpr(cond_jaxpr, list(cdims) + carry_in_dims, axis_data, [pred_b])
    if not pred_b:
        outs = while_p.bind(*args[:nc + nb], *carry, cond_jaxpr=cond_b, body_jaxpr=body_b,
                            cond_nconsts=nc, body_nconsts=nb)
        return outs, carry_in_dims
    # A batched predicate: loop while any lane runs; finished lanes keep their carry.
    carry_avals = [core.get_aval(c) for c in carry]

    def any_lane(*xs):
        (pred,) = eval_jaxpr(cond_b.jaxpr, [], *xs)
        return [reduce_or_p.bind(pred, axes=(0,))]

    def masked_body(*xs):
        c_consts, b_consts, state = xs[:nc], xs[nc:nc + nb], xs[nc + nb:]
        (pred,) = eval_jaxpr(cond_b.jaxpr, [], *c_consts, *state)
        new = eval_jaxpr(body_b.jaxpr, [], *b_consts, *state)
        out = []
        for old, fresh, aval in zip(state, new, carry_avals):
            which = broadcast_in_dim_p.bind(pred, shape=aval.shape, broadcast_dimensions=(0,))
            out.append(select_n_p.bind(which, old, fresh))
        return out

    const_avals = [core.get_aval(a) for a in args[:nc + nb]]
    cond_any = trace_flat(any_lane, const_avals[:nc] + carry_avals)
    body_all = trace_flat(masked_body, const_avals + carry_avals)
    outs = while_p.bind(*args[:nc], *args[:nc], *args[nc:nc + nb], *carry,
                        cond_jaxpr=cond_any, body_jaxpr=body_all, cond_nconsts=nc,
                        body_nconsts=nc + nb)
    return outs, [0] * len(outs)


jvp_rules[while_p] = _while_jvp
partial_eval_rules[while_p] = _while_partial_eval
transpose_rules[while_p] = _while_transpose
batching_rules[while_p] = _while_batch


# --- scan: carry, ys = loop over xs of body(consts, carry, x) -> (carry, y) -------------
# operands: *consts, *init, *xs; params: jaxpr, num_consts, num_carry, length, reverse,
# unroll.

def _scan_shape(*args, jaxpr, num_consts, num_carry, length, reverse, unroll):
    consts, carry = args[:num_consts], args[num_consts:num_consts + num_carry]
    xs = args[num_consts + num_carry:]
    for i, x in enumerate(xs):
        if not x.shape or x.shape[0] != length:
            raise TypeError(f"scan: xs[{i}] of type {x.str_short()} needs a leading axis of "
                            f"length {length}")
    expected = list(consts) + list(carry) + [x.update(shape=x.shape[1:]) for x in xs]
    if not all(map(core.same_type, jaxpr.in_avals, expected)):
        raise TypeError(f"scan: body takes {[a.str_short() for a in jaxpr.in_avals]}, got "
                        f"{[a.str_short() for a in expected]}")
    outs = jaxpr.out_avals
    carry_out, ys = outs[:num_carry], outs[num_carry:]
    if not all(map(core.same_type, carry_out, carry)):
        raise TypeError(describe_mismatch("scan body carry input and carry output",
                                          ["carry input", "carry output"],
                                          [list(carry), list(carry_out)]))
    return list(carry) + [y.update(shape=(length,) + y.shape) for y in ys]


def _scan_lowering(ctx, avals_in, avals_out, *args, jaxpr, num_consts, num_carry, length,
                   reverse, unroll):
    """A while loop over i; each iteration slices xs at i, runs the body and writes ys at
    i.  With unroll=k the loop body holds k steps, and the length % k steps left over
    follow the loop; a loop that would run once is left out."""
    nc, nk = num_consts, num_carry
    consts, init, xs = args[:nc], args[nc:nc + nk], args[nc + nk:]
    xs_avals, ys_avals = avals_in[nc + nk:], avals_out[nk:]
    if length == 0:
        return list(init) + [_zeros(ctx, a) for a in ys_avals]
    k = min(max(int(unroll), 1), length)
    state_avals = [INT32_SCALAR] + list(avals_in[:nc + nk]) + list(ys_avals) + list(xs_avals)
    state = [ctx.constant(np.int32(0), INT32_SCALAR)] + list(consts) + list(init) + \
        [_zeros(ctx, a) for a in ys_avals] + list(xs)

    def steps(sctx, st, count):
        i, cs = st[0], st[1:1 + nc]
        carry = list(st[1 + nc:1 + nc + nk])
        ys = list(st[1 + nc + nk:1 + nc + nk + len(ys_avals)])
        xs_now = st[1 + nc + nk + len(ys_avals):]
        for _ in range(count):
            index = i
            if reverse:
                last = sctx.constant(np.int32(length - 1), INT32_SCALAR)
                index = sctx.op("stablehlo.subtract", [last, i], [INT32_SCALAR] * 2,
                                INT32_SCALAR)
            x_t = [_index_row(sctx, x, a, index) for x, a in zip(xs_now, xs_avals)]
            outs = lower_closed_body(sctx, jaxpr, list(cs) + carry + x_t)
            carry = outs[:nk]
            ys = [_update_row(sctx, y, a, v, index) for y, a, v in zip(ys, ys_avals, outs[nk:])]
            one = sctx.constant(np.int32(1), INT32_SCALAR)
            i = sctx.op("stablehlo.add", [i, one], [INT32_SCALAR] * 2, INT32_SCALAR)
        return [i] + list(cs) + carry + ys + list(xs_now)

    looped = (length // k) * k
    if looped == k:  # the loop would run once: no loop, all steps in line
        state = steps(ctx, state, length)
        return state[1 + nc:1 + nc + nk] + state[1 + nc + nk:1 + nc + nk + len(ys_avals)]

    def cond(rctx, st):
        bound = rctx.constant(np.int32(looped), INT32_SCALAR)
        pred = rctx.op("stablehlo.compare", [st[0], bound], [INT32_SCALAR] * 2,
                       ShapedArray((), dtypes.bool_),
                       {"comparison_direction": "#stablehlo<comparison_direction LT>",
                        "compare_type": "#stablehlo<comparison_type SIGNED>"})
        return [pred], [ShapedArray((), dtypes.bool_)]

    token = _threaded_token(ctx, jaxpr)
    if token:  # the last value of the loop's state
        state, state_avals = state + [token], state_avals + [TOKEN]

    def loop_body(rctx, st):
        if not token:
            return steps(rctx, st, k), state_avals
        rctx.token = st[-1]
        new = steps(rctx, st[:-1], k)
        return new + [rctx.token], state_avals

    state = ctx.op("stablehlo.while", state, state_avals, state_avals,
                   regions=[ctx.region(state_avals, cond), ctx.region(state_avals, loop_body)])
    if token:
        ctx.token = state.pop()
    state = steps(ctx, state, length - looped)
    return state[1 + nc:1 + nc + nk] + state[1 + nc + nk:1 + nc + nk + len(ys_avals)]


def _zeros(ctx, aval):
    zero = ctx.constant(np.zeros((), aval.dtype), aval.update(shape=(), weak_type=False))
    return ctx.op("stablehlo.broadcast_in_dim", [zero], [aval.update(shape=())], aval,
                  {"broadcast_dimensions": "array<i64>"})


def _row_indices(ctx, aval, index):
    zero = ctx.constant(np.int32(0), INT32_SCALAR)
    return [index] + [zero] * (aval.ndim - 1)


def _index_row(ctx, x, aval, index):
    row = aval.update(shape=(1,) + aval.shape[1:])
    sizes = "array<i64: " + ", ".join(str(d) for d in row.shape) + ">"
    sliced = ctx.op("stablehlo.dynamic_slice", [x] + _row_indices(ctx, aval, index),
                    [aval] + [INT32_SCALAR] * aval.ndim, row, {"slice_sizes": sizes})
    return ctx.op("stablehlo.reshape", [sliced], [row], aval.update(shape=aval.shape[1:]))


def _update_row(ctx, ys, aval, y, index):
    row = aval.update(shape=(1,) + aval.shape[1:])
    y_row = ctx.op("stablehlo.reshape", [y], [aval.update(shape=aval.shape[1:])], row)
    return ctx.op("stablehlo.dynamic_update_slice", [ys, y_row] + _row_indices(ctx, aval, index),
                  [aval, row] + [INT32_SCALAR] * aval.ndim, aval)


scan_p = declare("scan", _scan_shape, None, _scan_lowering, multiple_results=True)
core.keeps_operand_vma.add(scan_p)


def _scan_params(params, **updates):
    new = dict(params)
    new.update(updates)
    return new


def _scan_jvp(primals, tangents, jaxpr, num_consts, num_carry, length, reverse, unroll):
    nc, nk = num_consts, num_carry
    nx = len(primals) - nc - nk
    const_mask = [not is_zero(t) for t in tangents[:nc]]
    xs_mask = [not is_zero(t) for t in tangents[nc + nk:]]
    inexact = [dtypes.is_inexact(a.dtype) for a in jaxpr.out_avals[:nk]]

    def step(cm):
        return jvp_jaxpr(jaxpr, tuple(const_mask + cm + xs_mask),
                         force=cm + [False] * (len(jaxpr.out_avals) - nk))[1][:nk]
    carry_mask = _carry_fixpoint(step, [not is_zero(t) for t in tangents[nc:nc + nk]])
    carry_mask = [m and i for m, i in zip(carry_mask, inexact)]
    body_jvp, out_mask = jvp_jaxpr(jaxpr, tuple(const_mask + carry_mask + xs_mask),
                                   force=carry_mask + [False] * (len(jaxpr.out_avals) - nk))
    ys_mask = out_mask[nk:]
    n_ct, n_kt = sum(const_mask), sum(carry_mask)

    # Scan operand order: (consts, const tangents), (carry, carry tangents), (xs, xs tangents).
    def body(*a):
        consts, ct = a[:nc], a[nc:nc + n_ct]
        carry, kt = a[nc + n_ct:nc + n_ct + nk], a[nc + n_ct + nk:nc + n_ct + nk + n_kt]
        xs, xt = a[nc + n_ct + nk + n_kt:nc + n_ct + nk + n_kt + nx], a[nc + n_ct + nk + n_kt + nx:]
        outs = eval_jaxpr(body_jvp.jaxpr, [], *consts, *carry, *xs, *ct, *kt, *xt)
        primal, tan = outs[:len(jaxpr.out_avals)], outs[len(jaxpr.out_avals):]
        return list(primal[:nk]) + list(tan[:n_kt]) + list(primal[nk:]) + list(tan[n_kt:])

    in_avals = jaxpr.in_avals
    avals = (list(in_avals[:nc]) + [a for a, m in zip(in_avals[:nc], const_mask) if m] +
             list(in_avals[nc:nc + nk]) + [a for a, m in zip(in_avals[nc:nc + nk], carry_mask) if m] +
             list(in_avals[nc + nk:]) + [a for a, m in zip(in_avals[nc + nk:], xs_mask) if m])
    new_body = trace_flat(body, avals)
    ct = [t for t, m in zip(tangents[:nc], const_mask) if m]
    kt = [instantiate(t) for t, m in zip(tangents[nc:nc + nk], carry_mask) if m]
    xt = [t for t, m in zip(tangents[nc + nk:], xs_mask) if m]
    outs = scan_p.bind(*primals[:nc], *ct, *primals[nc:nc + nk], *kt, *primals[nc + nk:], *xt,
                       jaxpr=new_body, num_consts=nc + n_ct, num_carry=nk + n_kt,
                       length=length, reverse=reverse, unroll=unroll)
    carry, carry_t = outs[:nk], outs[nk:nk + n_kt]
    ys, ys_t = outs[nk + n_kt:nk + n_kt + len(ys_mask)], outs[nk + n_kt + len(ys_mask):]
    ys_avals = [a.update(shape=(length,) + a.shape) for a in jaxpr.out_avals[nk:]]
    return (list(carry) + list(ys),
            merge_tangents(carry_t, carry_mask, jaxpr.out_avals[:nk]) +
            merge_tangents(ys_t, ys_mask, ys_avals))


def _scan_partial_eval(trace, args, params):
    """Known iterations run now and stack the residuals each iteration produces (as
    extra ys); the unknown scan reads them back as extra xs."""
    jaxpr, nc, nk = params["jaxpr"], params["num_consts"], params["num_carry"]
    unknown = [trace.is_unknown(a) for a in args]
    const_u, xs_u = unknown[:nc], unknown[nc + nk:]
    ny = len(jaxpr.out_avals) - nk

    def step(cu):
        return partial_eval_jaxpr(jaxpr, const_u + cu + xs_u,
                                  instantiate=cu + [False] * ny)[2][:nk]
    carry_u = _carry_fixpoint(step, unknown[nc:nc + nk])
    known, unk, out_u, num_res = partial_eval_jaxpr(jaxpr, const_u + carry_u + xs_u,
                                                    instantiate=carry_u + [False] * ny)
    known_in = [a for a, u in zip(args, const_u + carry_u + xs_u) if not u]
    known_const_n = nc - sum(const_u)
    known_carry_n = nk - sum(carry_u)
    known_jaxpr, known_consts = const_free(known)
    # A residual that is a loop-invariant input (a const) stays a const, one that is a
    # slice of a known xs is that xs itself; the others are stacked, one per iteration.
    invariant_values = list(known_consts) + known_in[:known_const_n]
    invariant_vars = known_jaxpr.jaxpr.invars[:len(invariant_values)]
    known_xs = known_in[known_const_n + known_carry_n:]
    xs_vars = known_jaxpr.jaxpr.invars[len(invariant_values) + known_carry_n:]
    res_vars = known_jaxpr.jaxpr.outvars[len(known_jaxpr.jaxpr.outvars) - num_res:]
    forwarded = [any(v is w for w in invariant_vars) for v in res_vars]
    xs_forwarded = [next((x for w, x in zip(xs_vars, known_xs, strict=True) if v is w), None)
                    for v in res_vars]
    computed = [not f and x is None for f, x in zip(forwarded, xs_forwarded)]
    n_known_out = len(known_jaxpr.out_avals) - num_res

    def known_body(*a):
        outs = eval_jaxpr(known_jaxpr.jaxpr, [], *a)
        res = outs[n_known_out:]
        return list(outs[:n_known_out]) + [r for r, c in zip(res, computed) if c]

    body_avals = known_jaxpr.in_avals
    known_body_jaxpr = trace_flat(known_body, body_avals)
    with core.set_trace(trace.parent):
        outs = scan_p.bind(*known_consts, *known_in[:known_const_n],
                           *known_in[known_const_n:known_const_n + known_carry_n], *known_xs,
                           **_scan_params(params, jaxpr=known_body_jaxpr,
                                          num_consts=len(known_consts) + known_const_n,
                                          num_carry=known_carry_n))
    known_carry, rest = outs[:known_carry_n], outs[known_carry_n:]
    n_known_ys = n_known_out - known_carry_n
    known_ys, computed_res = rest[:n_known_ys], iter(rest[n_known_ys:])
    stacked = [next(computed_res) if c else x
               for c, x, f in zip(computed, xs_forwarded, forwarded) if not f]
    res_const_values = [invariant_values[[w is v for w in invariant_vars].index(True)]
                        for v, f in zip(res_vars, forwarded) if f]
    res_avals = unk.in_avals[:num_res]

    # The unknown scan: consts (forwarded residuals, unknown consts), carry, xs (stacked
    # residuals, unknown xs); the body puts them back in the unknown jaxpr's order.
    n_fwd = sum(forwarded)
    u_consts = [a for a, u in zip(args[:nc], const_u) if u]
    u_carry = [a for a, u in zip(args[nc:nc + nk], carry_u) if u]
    u_xs = [a for a, u in zip(args[nc + nk:], xs_u) if u]

    def unknown_body(*a):
        fwd, uc = a[:n_fwd], a[n_fwd:n_fwd + len(u_consts)]
        carry = a[n_fwd + len(u_consts):n_fwd + len(u_consts) + len(u_carry)]
        rest = a[n_fwd + len(u_consts) + len(u_carry):]
        stacked_now, ux = rest[:num_res - n_fwd], rest[num_res - n_fwd:]
        f_it, s_it = iter(fwd), iter(stacked_now)
        res = [next(f_it) if f else next(s_it) for f in forwarded]
        return eval_jaxpr(unk.jaxpr, [], *res, *uc, *carry, *ux)

    u_in = unk.in_avals[num_res:]
    body_avals = ([a for a, f in zip(res_avals, forwarded) if f] + list(u_in[:len(u_consts)]) +
                  list(u_in[len(u_consts):len(u_consts) + len(u_carry)]) +
                  [a for a, f in zip(res_avals, forwarded) if not f] +
                  list(u_in[len(u_consts) + len(u_carry):]))
    unknown_body_jaxpr = trace_flat(unknown_body, body_avals)
    staged = trace.stage(
        scan_p, res_const_values + u_consts + u_carry + list(stacked) + u_xs,
        _scan_params(params, jaxpr=unknown_body_jaxpr, num_consts=n_fwd + len(u_consts),
                     num_carry=len(u_carry)))
    staged_carry, staged_ys = iter(staged[:len(u_carry)]), iter(staged[len(u_carry):])
    known_carry, known_ys = iter(known_carry), iter(known_ys)
    carry_out = [next(staged_carry) if u else next(known_carry) for u in carry_u]
    ys_out = [next(staged_ys) if u else next(known_ys) for u in out_u[nk:]]
    return carry_out + ys_out


def _scan_transpose(cts, *args, jaxpr, num_consts, num_carry, length, reverse, unroll):
    """The transposed scan runs backwards: cotangents of the carry flow from the last
    iteration to the first, those of the linear consts are summed in the carry, and
    those of the linear xs come out as ys."""
    nc, nk = num_consts, num_carry
    consts, carry, xs = args[:nc], args[nc:nc + nk], args[nc + nk:]
    # Every carry is linear in the loop; one whose initial value is known is a zero
    # tangent instantiated by the JVP rule, so its cotangent is simply dropped.
    const_lin = [is_undefined(c) for c in consts]
    xs_lin = [is_undefined(x) for x in xs]
    res_consts = [c for c, lin in zip(consts, const_lin) if not lin]
    res_xs = [x for x, lin in zip(xs, xs_lin) if not lin]
    carry_cts = [instantiate(c) for c in cts[:nk]]
    ys_avals = jaxpr.out_avals[nk:]
    # Zero cotangents of ys stay symbolic: they are not scanned over.
    ys_known = [not is_zero(c) for c in cts[nk:]]
    ys_cts = [c for c, k in zip(cts[nk:], ys_known) if k]
    defined = [not lin for lin in const_lin] + [False] * nk + [not lin for lin in xs_lin]
    variant = _variant(jaxpr, defined)
    lin_const_avals = [a for a, lin in zip(jaxpr.in_avals[:nc], const_lin) if lin]
    n_rc, n_lc, n_rx = len(res_consts), len(lin_const_avals), len(res_xs)

    def body(*a):
        rc, acc = a[:n_rc], a[n_rc:n_rc + n_lc]
        ct_carry = a[n_rc + n_lc:n_rc + n_lc + nk]
        rx, ct_y = a[n_rc + n_lc + nk:n_rc + n_lc + nk + n_rx], iter(a[n_rc + n_lc + nk + n_rx:])
        ct_y = [next(ct_y) if k else Zero(av) for k, av in zip(ys_known, ys_avals)]
        cts_in = [instantiate(c) for c in backward_pass(variant, list(rc) + list(rx),
                                                        list(ct_carry) + ct_y)]
        ct_lc, ct_k, ct_x = cts_in[:n_lc], cts_in[n_lc:n_lc + nk], cts_in[n_lc + nk:]
        return [add_p.bind(s, c) for s, c in zip(acc, ct_lc)] + list(ct_k) + list(ct_x)

    in_avals = jaxpr.in_avals
    res_x_avals = [a for a, lin in zip(in_avals[nc + nk:], xs_lin) if not lin]
    body_jaxpr = trace_flat(body, [core.get_aval(c) for c in res_consts] + lin_const_avals +
                            list(in_avals[nc:nc + nk]) + res_x_avals +
                            [a for a, k in zip(ys_avals, ys_known) if k])
    acc0 = [zeros_of(a) for a in lin_const_avals]
    outs = scan_p.bind(*res_consts, *acc0, *carry_cts, *res_xs, *ys_cts, jaxpr=body_jaxpr,
                       num_consts=n_rc, num_carry=n_lc + nk, length=length,
                       reverse=not reverse, unroll=unroll)
    ct_consts, ct_carry, ct_xs = iter(outs[:n_lc]), outs[n_lc:n_lc + nk], iter(outs[n_lc + nk:])
    return ([next(ct_consts) if lin else None for lin in const_lin] +
            [ct if is_undefined(c) else None for ct, c in zip(ct_carry, carry)] +
            [next(ct_xs) if lin else None for lin in xs_lin])


def _scan_batch(axis_data, args, dims, jaxpr, num_consts, num_carry, length, reverse, unroll):
    """Batched xs carry their batch axis at position 1 (after the scanned axis); consts
    and carry at 0.  Carry components stay unbatched when they can."""
    nc, nk = num_consts, num_carry
    const_dims, carry_dims, xs_dims = dims[:nc], dims[nc:nc + nk], dims[nc + nk:]
    const_b = [d is not None for d in const_dims]
    xs_b = [d is not None for d in xs_dims]
    carry_b = _carry_fixpoint(
        lambda cb: _batched_by_rules(jaxpr, const_b + cb + xs_b, axis_data)[:nk],
        [d is not None for d in carry_dims])
    ys_b = _batched_by_rules(jaxpr, const_b + carry_b + xs_b, axis_data)[nk:]
    consts = [batch_at(a, d, axis_data.size) if d is not None else a
              for a, d in zip(args[:nc], const_dims)]
    carry = [batch_at(a, d, axis_data.size) if b else a
             for a, d, b in zip(args[nc:nc + nk], carry_dims, carry_b)]
    xs = [batch_at(a, d, axis_data.size, 1) if d is not None else a
          for a, d in zip(args[nc + nk:], xs_dims)]
    in_dims = [0 if b else None for b in const_b + carry_b + xs_b]
    body = batch_jaxpr(jaxpr, in_dims, axis_data, carry_b + ys_b)
    outs = scan_p.bind(*consts, *carry, *xs, jaxpr=body, num_consts=nc, num_carry=nk,
                       length=length, reverse=reverse, unroll=unroll)
    return outs, [0 if b else None for b in carry_b] + [1 if b else None for b in ys_b]


jvp_rules[scan_p] = _scan_jvp
partial_eval_rules[scan_p] = _scan_partial_eval
transpose_rules[scan_p] = _scan_transpose
batching_rules[scan_p] = _scan_batch

