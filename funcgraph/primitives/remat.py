"""Rematerialization: `name` (checkpoint_name), `optimization_barrier` and `remat2`
(checkpoint), with partial evaluation that saves only what a policy allows."""
import weakref

from funcgraph import core, ir
from funcgraph.interpreters.ad_util import is_zero
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import direct_impls, eval_jaxpr
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.partial_eval import partial_eval_rules
from funcgraph.interpreters.transpose import is_undefined, transpose_rules
from funcgraph.lowering import lower_closed_body
from funcgraph.primitives.call import merge_tangents, pjit_p
from funcgraph.primitives.control_flow import cond_p, scan_p, while_p
from funcgraph.primitives.helpers import declare
from funcgraph.primitives.jaxprs import (
    batch_jaxpr_auto, const_free, jvp_jaxpr, partial_eval_jaxpr,
    transpose_jaxpr)


# --- name: the identity, marking a value for checkpoint policies ---------------------
# params: name (a string that policies such as save_only_these_names look for).

name_p = declare("name", lambda x, name: x, lambda x, name: x,
                 lambda ctx, avals_in, avals_out, x, name: x)


def _name_jvp(primals, tangents, name):
    return name_p.bind(primals[0], name=name), tangents[0]


def _name_transpose(ct, x, name):
    return [ct]


def _name_batch(axis_data, args, dims, name):
    return name_p.bind(args[0], name=name), dims[0]


jvp_rules[name_p] = _name_jvp
transpose_rules[name_p] = _name_transpose
batching_rules[name_p] = _name_batch


# --- optimization_barrier: the identity on several values, which XLA may not move
# computations across (so it cannot CSE a recomputation with the original) -------------

def _barrier_lowering(ctx, avals_in, avals_out, *args):
    if not args:
        return []
    return ctx.op("stablehlo.optimization_barrier", list(args), avals_in, list(avals_out))


optimization_barrier_p = declare("optimization_barrier", lambda *avals: list(avals),
                                 lambda *xs: list(xs), _barrier_lowering,
                                 multiple_results=True)
core.keeps_operand_vma.add(optimization_barrier_p)


def _barrier_nonzero(values):
    """The barrier over the values that are not symbolic zeros (which stay zeros)."""
    outs = iter(optimization_barrier_p.bind(*[v for v in values if not is_zero(v)]))
    return [v if is_zero(v) else next(outs) for v in values]


def _barrier_jvp(primals, tangents):
    return optimization_barrier_p.bind(*primals), _barrier_nonzero(list(tangents))


def _barrier_transpose(cts, *args):
    cts_in = _barrier_nonzero(list(cts))
    return [ct if is_undefined(a) else None for ct, a in zip(cts_in, args, strict=True)]


def _barrier_batch(axis_data, args, dims):
    return optimization_barrier_p.bind(*args), list(dims)


jvp_rules[optimization_barrier_p] = _barrier_jvp
transpose_rules[optimization_barrier_p] = _barrier_transpose
batching_rules[optimization_barrier_p] = _barrier_batch


# --- what a policy answers --------------------------------------------------------------

class Saveable:
    """A policy's answer: save this value for the backward pass (as True)."""


class Recompute:
    """A policy's answer: recompute this value in the backward pass (as False)."""


class Offloadable:
    """A policy's answer: save this value in another memory space (`src` -> `dst`).
    funcgraph saves it in place: offloading is approximated as saving."""
    __slots__ = ("src", "dst")

    def __init__(self, src, dst):
        self.src, self.dst = src, dst

    def __repr__(self):
        return f"Offloadable(src={self.src!r}, dst={self.dst!r})"


def saves(policy, eqn):
    """Whether `policy` lets the outputs of `eqn` be saved (None saves nothing)."""
    if policy is None:
        return False
    answer = policy(eqn.prim, *[x.aval for x in eqn.invars], **eqn.params)
    if answer is Saveable or isinstance(answer, Offloadable):
        return True
    if answer is Recompute:
        return False
    if isinstance(answer, bool):
        return answer
    raise TypeError(f"a checkpoint policy must return a bool, Saveable, Recompute or an "
                    f"Offloadable, got {answer!r} for {eqn.prim.name}")


# --- remat2 (checkpoint): recompute instead of saving residuals --------------------------
# params: jaxpr (const-free ClosedJaxpr), prevent_cse, differentiated (True once JVP'd:
# then the lowering puts an optimization barrier on the inputs, so that XLA cannot merge
# the recomputation with the forward pass), policy (None: save nothing).

def _remat_shape(*avals, jaxpr, prevent_cse, differentiated, policy):
    expected = jaxpr.in_avals
    if len(avals) != len(expected) or not all(map(core.same_type, avals, expected)):
        raise TypeError(f"remat2: argument types {[a.str_short() for a in avals]} do not "
                        f"match {[a.str_short() for a in expected]}")
    return jaxpr.out_avals


def _remat_lowering(ctx, avals_in, avals_out, *args, jaxpr, prevent_cse, differentiated,
                    policy):
    args = list(args)
    if differentiated and prevent_cse:
        args = _barrier_lowering(ctx, avals_in, avals_in, *args)
    return lower_closed_body(ctx, jaxpr, args)


def _remat_eval(*args, jaxpr, prevent_cse, differentiated, policy):
    return eval_jaxpr(jaxpr.jaxpr, [], *args)


remat_p = declare("remat2", _remat_shape, None, _remat_lowering, multiple_results=True)
core.keeps_operand_vma.add(remat_p)
direct_impls[remat_p] = _remat_eval


def _remat_jvp(primals, tangents, jaxpr, prevent_cse, differentiated, policy):
    mask = tuple(not is_zero(t) for t in tangents)
    jvp_closed, out_mask = _cached(jaxpr, ("jvp", mask), lambda: jvp_jaxpr(jaxpr, mask))
    outs = remat_p.bind(*primals, *[t for t in tangents if not is_zero(t)],
                        jaxpr=jvp_closed, prevent_cse=prevent_cse, differentiated=True,
                        policy=policy)
    n = len(jaxpr.out_avals)
    return outs[:n], merge_tangents(outs[n:], out_mask, jaxpr.out_avals)


jvp_rules[remat_p] = _remat_jvp


# Effects that the recomputation runs again (JAX's debug callbacks: they print in the
# forward pass and again in the backward one).  Partial evaluation of a checkpoint with
# any other effect (io_callback) is an error, as in JAX.
recomputed_effects = set()


def _effect_reruns(eqn, policy, available):
    """Whether the recomputation re-runs a known equation with debug effects.  A debug
    callback itself: when the policy does not save it, or when every value it reads is
    there anyway (JAX's debug_callback rule).  Calls and control flow (which JAX splits
    recursively, so the callbacks inside run again): always.  Other equations with
    effects (custom derivatives): never, their outputs are saved."""
    if eqn.prim in ir.effect_rules:
        return not saves(policy, eqn) or all(
            type(x) is ir.Literal or x in available for x in eqn.invars)
    return eqn.prim in _SPLIT_RECURSIVELY


def partial_eval_remat(jaxpr, in_unknowns, policy):
    """Split a jaxpr by unknown inputs, saving only what `policy` allows.

    Returns (known jaxpr: known inputs -> known outputs + residuals,
             unknown jaxpr: residuals + unknown inputs -> unknown outputs,
             out_unknowns, number of residuals).  The split itself is partial
    evaluation (equations with sub-jaxprs split by their own rules); then every residual
    the policy does not save is recomputed inside the unknown jaxpr from the known
    inputs.  Debug effects of the known side run again in the recomputation, as in JAX."""
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(
        ir.ClosedJaxpr(jaxpr, []), in_unknowns)
    known, unknown = known.jaxpr, unknown.jaxpr
    num_known_outs = len(known.outvars) - num_res
    # The unknown jaxpr reads the residuals as the known jaxpr's variables from now on.
    res_vars = dict(zip(unknown.invars[:num_res], known.outvars[num_known_outs:], strict=True))
    unknown_in = unknown.invars[num_res:]
    unknown_eqns = [e.replace(invars=[res_vars.get(x, x) if type(x) is not ir.Literal else x
                                      for x in e.invars]) for e in unknown.eqns]
    recompute = _recomputation(known, policy, {v for v in res_vars.values()
                                                if type(v) is not ir.Literal})
    body = recompute + unknown_eqns
    unknown_outvars = [res_vars.get(v, v) if type(v) is not ir.Literal else v
                       for v in unknown.outvars]
    defined = {v for e in body for v in e.outvars} | set(unknown_in)
    residuals = [v for v in _free_vars(body, unknown_outvars) if v not in defined]
    known_outvars = known.outvars[:num_known_outs] + residuals
    known = ir.Jaxpr([], known.invars, known_outvars, _needed_eqns(known.eqns, known_outvars))
    unknown = ir.Jaxpr([], residuals + unknown_in, unknown_outvars, body)
    known_closed, unknown_closed = ir.ClosedJaxpr(known, []), ir.ClosedJaxpr(unknown, [])
    ir.check(known_closed)
    ir.check(unknown_closed)
    return known_closed, unknown_closed, out_unknowns, len(residuals)


def _recomputation(known, policy, residuals):
    """The known equations the unknown side runs again: those computing the residuals
    the policy does not save (and what they need), and the debug effects."""
    available, saved, rerun = set(known.invars), set(), set()
    for eqn in known.eqns:
        if ir.eqn_effects(eqn):
            if _effect_reruns(eqn, policy, available):
                rerun.add(id(eqn))
                available.update(eqn.outvars)
            else:
                saved.update(eqn.outvars)
        elif saves(policy, eqn):
            saved.update(eqn.outvars)
        else:
            available.update(eqn.outvars)
    needed = set(residuals)
    kept = []
    for eqn in reversed(known.eqns):
        if id(eqn) not in rerun:
            if not any(v in needed for v in eqn.outvars) or any(v in saved for v in eqn.outvars):
                continue
        kept.append(eqn)
        needed.update(x for x in eqn.invars if type(x) is not ir.Literal)
    kept.reverse()
    return kept


def _needed_eqns(eqns, outvars):
    """The equations that outvars depend on, and the effectful ones (the known side
    computes nothing more)."""
    needed = {v for v in outvars if type(v) is not ir.Literal}
    kept = []
    for eqn in reversed(eqns):
        if any(v in needed for v in eqn.outvars) or ir.eqn_effects(eqn):
            kept.append(eqn)
            needed.update(x for x in eqn.invars if type(x) is not ir.Literal)
    kept.reverse()
    return kept


def _free_vars(eqns, outvars):
    """The variables eqns and outvars read, in order of first use."""
    seen, order = set(), []
    for x in [x for e in eqns for x in e.invars] + list(outvars):
        if type(x) is not ir.Literal and x not in seen:
            seen.add(x)
            order.append(x)
    return order


def _remat_partial_eval(trace, args, params):
    """The known part runs now (inline, as in JAX); the unknown part, with the
    recomputation of what the policy does not save, is staged as a remat2."""
    jaxpr, policy = params["jaxpr"], params["policy"]
    unsupported = jaxpr.effects - recomputed_effects
    if unsupported:
        raise NotImplementedError(f"Effects not supported in partial-eval of "
                                  f"`checkpoint`/`remat`: {sorted(unsupported, key=repr)}")
    unknowns = tuple(trace.is_unknown(a) for a in args)
    known, unknown, out_unknowns, num_res = partial_eval_remat(jaxpr.jaxpr, unknowns, policy)
    with core.set_trace(trace.parent):
        known_outs = eval_jaxpr(known.jaxpr, [], *[a for a, u in zip(args, unknowns) if not u])
    split = len(known_outs) - num_res
    residuals, known_outs = known_outs[split:], iter(known_outs[:split])
    staged = iter(trace.stage(
        remat_p, list(residuals) + [a for a, u in zip(args, unknowns) if u],
        dict(params, jaxpr=unknown, differentiated=True)))
    return [next(staged) if u else next(known_outs) for u in out_unknowns]


partial_eval_rules[remat_p] = _remat_partial_eval

_SPLIT_RECURSIVELY = frozenset([pjit_p, cond_p, scan_p, while_p, remat_p])


def _remat_transpose(cts, *args, jaxpr, prevent_cse, differentiated, policy):
    undefined = tuple(is_undefined(a) for a in args)
    ct_mask = tuple(not is_zero(c) for c in cts)
    backward, consts = _cached(jaxpr, ("transpose", undefined, ct_mask),
                               lambda: const_free(transpose_jaxpr(jaxpr, undefined, ct_mask)))
    outs = iter(remat_p.bind(*consts, *[a for a, u in zip(args, undefined) if not u],
                             *[c for c in cts if not is_zero(c)], jaxpr=backward,
                             prevent_cse=prevent_cse, differentiated=True, policy=policy))
    return [next(outs) if u else None for u in undefined]


transpose_rules[remat_p] = _remat_transpose


def _remat_batch(axis_data, args, dims, jaxpr, prevent_cse, differentiated, policy):
    batched = _cached(jaxpr, ("batch", tuple(dims), axis_data.size, axis_data.name,
                                axis_data.spmd_axis_name),
                      lambda: batch_jaxpr_auto(jaxpr, dims, axis_data))
    outs = remat_p.bind(*args, jaxpr=batched[0], prevent_cse=prevent_cse,
                        differentiated=differentiated, policy=policy)
    return outs, [0 if b else None for b in batched[1]]


batching_rules[remat_p] = _remat_batch


# Derived jaxprs (which do not depend on the policy) are cached per (jaxpr, key) while
# the jaxpr lives.
_derived = weakref.WeakKeyDictionary()


def _cached(jaxpr, key, make):
    table = _derived.setdefault(jaxpr.jaxpr, {})
    if key not in table:
        table[key] = make()
    return table[key]
