"""Primitives that shape differentiation: stop_gradient, custom_jvp_call,
custom_vjp_call (with its linear companion custom_lin) and checkpoint (remat)."""
from funcgraph import core, ir
from funcgraph.core import Primitive
from funcgraph.interpreters.ad_util import Zero, instantiate, is_zero, tangent_aval
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import direct_impls, eval_jaxpr
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.partial_eval import partial_eval_rules
from funcgraph.interpreters.staging import staging_rules, trace_flat
from funcgraph.interpreters.transpose import backward_pass, is_undefined, transpose_rules
from funcgraph.lowering import emit_call
from funcgraph.primitives.batching_helpers import batch_at, vmap_flat
from funcgraph.primitives.call import merge_tangents
from funcgraph.primitives.helpers import declare
from funcgraph.primitives.jaxprs import batch_jaxpr, const_free, jvp_jaxpr


def _call_lowering(ctx, avals_in, avals_out, *args, call_jaxpr, name, **params):
    return emit_call(ctx, call_jaxpr, name, args, avals_in, avals_out)


def _call_shape(*avals, call_jaxpr, **params):
    expected = call_jaxpr.in_avals
    if len(avals) != len(expected) or not all(map(core.same_type, avals, expected)):
        raise TypeError(f"{params.get('name', 'call')}: argument types "
                        f"{[a.str_short() for a in avals]} do not match "
                        f"{[a.str_short() for a in expected]}")
    return call_jaxpr.out_avals


def _as_fun(call):
    """A call's function: the user's flat Python function (custom derivatives, before
    staging) or the evaluation of its jaxpr."""
    if isinstance(call, ir.ClosedJaxpr):
        return lambda *args: eval_jaxpr(call.jaxpr, call.consts, *args)
    return call


def _eval_call(*args, call_jaxpr, **params):
    return list(_as_fun(call_jaxpr)(*args))


def _declare_call(name):
    prim = declare(name, _call_shape, None, _call_lowering, multiple_results=True)
    direct_impls[prim] = _eval_call
    return prim


def _stage_custom_call(prim):
    """Custom derivatives bind the user's Python function, so that outside jit it runs on
    concrete values; staging traces it into a const-free jaxpr, and the values it closes
    over become the num_consts leading operands."""
    def rule(trace, args, params):
        call = params["call_jaxpr"]
        if isinstance(call, ir.ClosedJaxpr):
            return trace.stage(prim, args, params)
        closed = trace_flat(lambda *xs: list(call(*xs)), [core.get_aval(a) for a in args])
        jaxpr, consts = const_free(closed)
        return trace.stage(prim, list(consts) + list(args),
                           dict(params, call_jaxpr=jaxpr, num_consts=len(consts)))
    staging_rules[prim] = rule


def _closed_over_error(kind, name):
    return TypeError(
        f"{kind} function {name} closes over a value that is being differentiated. Pass "
        f"that value as an explicit argument of the function instead")


# Batching: every argument moves to batch axis 0, and user rules are vmapped.
def _all_at_front(axis_data, args, dims):
    return [batch_at(a, d, axis_data.size) for a, d in zip(args, dims)]


def _vmapped(fn, axis_data, n_in):
    """fn(list of n_in flat values) -> list, mapped over axis 0 of every input and output."""
    def mapped(*xs):
        return vmap_flat(lambda *ys: list(fn(*ys)), list(xs), [0] * n_in, axis_data.size,
                         axis_data.name)
    return mapped


def _batched_call(call, axis_data, n_in):
    """The call's function (or jaxpr) mapped over axis 0 of its n_in inputs."""
    if isinstance(call, ir.ClosedJaxpr):
        return batch_jaxpr(call, [0] * n_in, axis_data)
    return _vmapped(call, axis_data, n_in)


# --- stop_gradient -----------------------------------------------------------------

stop_gradient_p = declare("stop_gradient", lambda x: x, lambda x: x, lambda ctx, ai, ao, x: x)


def _stop_gradient_jvp(primals, tangents):
    (x,) = primals
    return stop_gradient_p.bind(x), Zero(tangent_aval(core.get_aval(x)))


jvp_rules[stop_gradient_p] = _stop_gradient_jvp


def _stop_gradient_batch(axis_data, args, dims):
    return stop_gradient_p.bind(args[0]), dims[0]


batching_rules[stop_gradient_p] = _stop_gradient_batch


# --- custom_jvp_call: a function with a user-defined JVP ----------------------------
# params: call_jaxpr (the user's flat Python function when bound; once staged a
# const-free jaxpr), jvp (flat: (primals, tangents) -> (outs, tangent outs)), num_consts
# (leading operands the function closes over, 0 until staged), name.

custom_jvp_call_p = _declare_call("custom_jvp_call")
_stage_custom_call(custom_jvp_call_p)


def _custom_jvp_call_jvp(primals, tangents, call_jaxpr, jvp, num_consts, name):
    if any(not is_zero(t) for t in tangents[:num_consts]):
        raise _closed_over_error("custom_jvp", name)
    args = primals[num_consts:]
    arg_tangents = [instantiate(t) for t in tangents[num_consts:]]
    outs, out_tangents = jvp(list(args), arg_tangents)
    return outs, out_tangents


jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp


def _custom_jvp_call_batch(axis_data, args, dims, call_jaxpr, jvp, num_consts, name):
    args = _all_at_front(axis_data, args, dims)
    batched_call = _batched_call(call_jaxpr, axis_data, len(args))

    def batched_jvp(primals, tangents):
        n = len(primals)

        def flat(*xs):
            outs, out_tangents = jvp(list(xs[:n]), list(xs[n:]))
            return list(outs) + list(out_tangents)
        res = _vmapped(flat, axis_data, 2 * n)(*primals, *tangents)
        return res[:len(res) // 2], res[len(res) // 2:]

    outs = custom_jvp_call_p.bind(*args, call_jaxpr=batched_call, jvp=batched_jvp,
                                  num_consts=num_consts, name=name)
    return outs, [0] * len(outs)


batching_rules[custom_jvp_call_p] = _custom_jvp_call_batch


# --- custom_vjp_call: a function with user-defined forward and backward passes --------
# params: call_jaxpr (as for custom_jvp_call), fwd (flat: args -> (outs, residuals)),
# bwd (flat: (residuals, cotangents) -> argument cotangents), num_consts, name.

custom_vjp_call_p = _declare_call("custom_vjp_call")
_stage_custom_call(custom_vjp_call_p)

def _custom_vjp_call_jvp(primals, tangents, call_jaxpr, fwd, bwd, num_consts, name):
    if any(not is_zero(t) for t in tangents[:num_consts]):
        raise _closed_over_error("custom_vjp", name)
    args = primals[num_consts:]
    outs, residuals = fwd(list(args))
    arg_tangents = [instantiate(t) for t in tangents[num_consts:]]
    out_avals = tuple(tangent_aval(core.get_aval(o)) for o in outs)
    out_tangents = custom_lin_p.bind(*residuals, *arg_tangents, num_res=len(residuals),
                                     bwd=bwd, out_avals=out_avals, name=name)
    return outs, out_tangents


jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp


def _custom_vjp_call_batch(axis_data, args, dims, call_jaxpr, fwd, bwd, num_consts, name):
    args = _all_at_front(axis_data, args, dims)
    batched_call = _batched_call(call_jaxpr, axis_data, len(args))
    counts = {}

    def batched_fwd(primals):
        def flat(*xs):
            outs, residuals = fwd(list(xs))
            counts["outs"] = len(outs)
            return list(outs) + list(residuals)
        res = _vmapped(flat, axis_data, len(primals))(*primals)
        return res[:counts["outs"]], res[counts["outs"]:]

    def batched_bwd(residuals, cts):
        n = len(residuals)
        return _vmapped(lambda *xs: bwd(list(xs[:n]), list(xs[n:])), axis_data,
                        n + len(cts))(*residuals, *cts)

    outs = custom_vjp_call_p.bind(*args, call_jaxpr=batched_call, fwd=batched_fwd,
                                  bwd=batched_bwd, num_consts=num_consts, name=name)
    return outs, [0] * len(outs)


batching_rules[custom_vjp_call_p] = _custom_vjp_call_batch


# custom_lin(residuals..., tangents...) stands for the linear map whose transpose is
# the user's bwd.  It has no forward evaluation: JAX's rule that a custom_vjp
# function supports reverse mode only.
custom_lin_p = Primitive("custom_lin", multiple_results=True)


def _custom_lin_shape(*avals, num_res, bwd, out_avals, name):
    return list(out_avals)


def _custom_lin_eval(*args, num_res, bwd, out_avals, name):
    raise TypeError(f"can't apply forward-mode differentiation (jvp, jacfwd) to the custom_vjp "
                    f"function {name}; define it with custom_jvp to support forward mode")


core.shape_rules[custom_lin_p] = _custom_lin_shape
direct_impls[custom_lin_p] = _custom_lin_eval


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals, name):
    residuals = args[:num_res]
    cts = [instantiate(c) for c in cts]
    cts_in = bwd(list(residuals), cts)
    return [None] * num_res + list(cts_in)


transpose_rules[custom_lin_p] = _custom_lin_transpose


# --- checkpoint (remat): recompute instead of saving residuals -------------------------
# params: call_jaxpr (const-free), policy (which equations' outputs may be saved),
# prevent_cse, name.

checkpoint_p = _declare_call("checkpoint")


def _checkpoint_jvp(primals, tangents, call_jaxpr, policy, prevent_cse, name):
    mask = tuple(not is_zero(t) for t in tangents)
    jvp_closed, out_mask = jvp_jaxpr(call_jaxpr, mask)
    outs = checkpoint_p.bind(*primals, *[t for t in tangents if not is_zero(t)],
                             call_jaxpr=jvp_closed, policy=policy, prevent_cse=prevent_cse,
                             name=name)
    n = len(call_jaxpr.out_avals)
    return outs[:n], merge_tangents(outs[n:], out_mask, call_jaxpr.out_avals)


jvp_rules[checkpoint_p] = _checkpoint_jvp


def _saveable(policy, eqn):
    return policy is not None and policy(eqn.prim, *[x.aval for x in eqn.invars], **eqn.params)


def partial_eval_remat(jaxpr, in_unknowns, policy):
    """Split a jaxpr by unknown inputs, saving only what `policy` allows.

    Returns (known jaxpr: known inputs -> known outputs + residuals,
             unknown jaxpr: residuals + unknown inputs -> unknown outputs,
             out_unknowns, number of residuals).  Known values the policy does not
    save are recomputed inside the unknown jaxpr from the known inputs."""
    unknown_vars = {v for v, u in core.safe_zip(jaxpr.invars, in_unknowns) if u}
    known_eqns, known_ids, saved = [], set(), set()
    for eqn in jaxpr.eqns:
        if any(type(x) is not ir.Literal and x in unknown_vars for x in eqn.invars):
            unknown_vars.update(eqn.outvars)
        else:
            known_eqns.append(eqn)
            known_ids.add(id(eqn))
            if _saveable(policy, eqn):
                saved.update(eqn.outvars)
    out_unknowns = [type(v) is not ir.Literal and v in unknown_vars for v in jaxpr.outvars]
    # The unknown side: unknown equations plus known ones that are not saved (recomputed),
    # keeping only what the unknown outputs need.
    needed = {v for v, u in zip(jaxpr.outvars, out_unknowns) if u}
    body = []
    for eqn in reversed(jaxpr.eqns):
        if not any(v in needed for v in eqn.outvars):
            continue
        if id(eqn) in known_ids and all(v in saved for v in eqn.outvars):
            continue
        body.append(eqn)
        needed.update(x for x in eqn.invars if type(x) is not ir.Literal)
    body.reverse()
    defined_in_body = {v for e in body for v in e.outvars}
    known_in = [v for v, u in zip(jaxpr.invars, in_unknowns) if not u]
    unknown_in = [v for v, u in zip(jaxpr.invars, in_unknowns) if u]
    residuals = [v for v in _ordered_free_vars(body, jaxpr.outvars, out_unknowns)
                 if v not in defined_in_body and v not in unknown_in]
    known = ir.Jaxpr([], known_in, [v for v, u in zip(jaxpr.outvars, out_unknowns) if not u]
                     + residuals, known_eqns)
    unknown = ir.Jaxpr([], residuals + unknown_in,
                       [v for v, u in zip(jaxpr.outvars, out_unknowns) if u], body)
    known_closed, unknown_closed = ir.ClosedJaxpr(known, []), ir.ClosedJaxpr(unknown, [])
    ir.check(known_closed)
    ir.check(unknown_closed)
    return known_closed, unknown_closed, out_unknowns, len(residuals)


def _ordered_free_vars(eqns, outvars, out_unknowns):
    seen, order = set(), []
    for eqn in eqns:
        for x in eqn.invars:
            if type(x) is not ir.Literal and x not in seen:
                seen.add(x)
                order.append(x)
    for v, u in zip(outvars, out_unknowns):
        if u and type(v) is not ir.Literal and v not in seen:
            seen.add(v)
            order.append(v)
    return order


def _checkpoint_partial_eval(trace, args, params):
    call_jaxpr, policy = params["call_jaxpr"], params["policy"]
    unknowns = [trace.is_unknown(a) for a in args]
    known, unknown, out_unknowns, num_res = partial_eval_remat(call_jaxpr.jaxpr, unknowns,
                                                                policy)
    with core.set_trace(trace.parent):
        known_outs = eval_jaxpr(known.jaxpr, [], *[a for a, u in zip(args, unknowns) if not u])
    split = len(known_outs) - num_res
    residuals, known_outs = known_outs[split:], iter(known_outs[:split])
    staged = iter(trace.stage(
        checkpoint_p, list(residuals) + [a for a, u in zip(args, unknowns) if u],
        dict(params, call_jaxpr=unknown)))
    return [next(staged) if u else next(known_outs) for u in out_unknowns]


partial_eval_rules[checkpoint_p] = _checkpoint_partial_eval


def _checkpoint_transpose(cts, *args, call_jaxpr, policy, prevent_cse, name):
    undefined = [is_undefined(a) for a in args]
    inner = call_jaxpr.jaxpr
    variant = ir.Jaxpr([v for v, u in zip(inner.invars, undefined) if not u],
                       [v for v, u in zip(inner.invars, undefined) if u],
                       inner.outvars, inner.eqns)
    cts_in = iter(backward_pass(variant, [a for a, u in zip(args, undefined) if not u],
                                list(cts)))
    return [next(cts_in) if u else None for u in undefined]


transpose_rules[checkpoint_p] = _checkpoint_transpose


def _checkpoint_batch(axis_data, args, dims, call_jaxpr, policy, prevent_cse, name):
    batched = batch_jaxpr(call_jaxpr, dims, axis_data)
    outs = checkpoint_p.bind(*args, call_jaxpr=batched, policy=policy,
                             prevent_cse=prevent_cse, name=name)
    return outs, [0] * len(outs)


batching_rules[checkpoint_p] = _checkpoint_batch


# --- policies: which values a checkpointed function may save ---------------------------

def everything_saveable(prim, *avals, **params):
    return True


def nothing_saveable(prim, *avals, **params):
    return False


def dots_saveable(prim, *avals, **params):
    return prim.name == "dot_general"


def dots_with_no_batch_dims_saveable(prim, *avals, **params):
    return prim.name == "dot_general" and not params["dimension_numbers"][1][0]
