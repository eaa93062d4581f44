"""custom_vmap_call: a function with a user-defined batching rule (custom_vmap).

params: call (const-free ClosedJaxpr of the function on its flat arguments), rule (flat:
rule(axis_size, in_batched, args) -> (outs, out_batched), with batched arguments' batch
axis at 0), name.  Forward mode batches the rule's JVP; reverse mode is not supported,
as in JAX (wrap the function in custom_vjp)."""
from funcgraph import core, dtypes
from funcgraph.interpreters.ad_util import Zero, instantiate, tangent_aval
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import direct_impls, eval_jaxpr
from funcgraph.interpreters.jvp import jvp_flat, jvp_rules
from funcgraph.interpreters.partial_eval import partial_eval_rules
from funcgraph.lowering import emit_call
from funcgraph.primitives.base import move_batch_dim
from funcgraph.primitives.batching_helpers import broadcast_batched
from funcgraph.primitives.helpers import declare
from funcgraph.primitives.jaxprs import jvp_jaxpr


def _custom_vmap_shape(*avals, call, rule, name):
    return list(call.out_avals)


def _custom_vmap_impl(*args, call, rule, name):
    return list(eval_jaxpr(call.jaxpr, [], *args))


def _custom_vmap_lowering(ctx, avals_in, avals_out, *args, call, rule, name):
    return emit_call(ctx, call, name, args, avals_in, avals_out)


custom_vmap_p = declare("custom_vmap_call", _custom_vmap_shape, None, _custom_vmap_lowering,
                        multiple_results=True)
core.keeps_operand_vma.add(custom_vmap_p)
direct_impls[custom_vmap_p] = _custom_vmap_impl


def _custom_vmap_batch(axis_data, args, dims, call, rule, name):
    args = [a if d is None else move_batch_dim(a, d, 0) for a, d in zip(args, dims, strict=True)]
    outs, out_batched = rule(axis_data.size, [d is not None for d in dims], args)
    return list(outs), [0 if b else None for b in out_batched]


batching_rules[custom_vmap_p] = _custom_vmap_batch


def _jvp_of_rule(rule, n_primals, tangent_mask):
    """The batching rule of the JVP call: the rule's JVP, with a primal and its tangent
    batched alike (whichever is batched, both are)."""
    def jvp_rule(axis_size, in_batched, args):
        primals, tangents = list(args[:n_primals]), list(args[n_primals:])
        p_batched, t_batched = in_batched[:n_primals], iter(in_batched[n_primals:])
        batched, it = [], iter(tangents)
        full_tangents = []
        for i, (p, pb) in enumerate(zip(primals, p_batched, strict=True)):
            tb = next(t_batched) if tangent_mask[i] else False
            t = next(it) if tangent_mask[i] else None
            both = pb or tb
            if both and not pb:
                primals[i] = broadcast_batched(p, axis_size)
            if both and t is not None and not tb:
                t = broadcast_batched(t, axis_size)
            batched.append(both)
            full_tangents.append(t)
        box = {}

        def primal_fn(*ps):
            outs, out_batched = rule(axis_size, batched, list(ps))
            box["out_batched"] = list(out_batched)
            return list(outs)
        diff = [i for i, m in enumerate(tangent_mask) if m]

        def fn_of_diff(*xs):
            full = list(primals)
            for i, x in zip(diff, xs, strict=True):
                full[i] = x
            return primal_fn(*full)
        outs, out_tangents = jvp_flat(fn_of_diff, [primals[i] for i in diff],
                                      [full_tangents[i] for i in diff])
        out_batched = box["out_batched"]
        keep = [dtypes.is_inexact(core.get_aval(o).dtype) for o in outs]
        tangents_out = [instantiate(t) for t, k in zip(out_tangents, keep) if k]
        return (list(outs) + tangents_out,
                out_batched + [b for b, k in zip(out_batched, keep) if k])
    return jvp_rule


def _custom_vmap_jvp(primals, tangents, call, rule, name):
    mask = tuple(dtypes.is_inexact(core.get_aval(p).dtype) for p in primals)
    n_out = len(call.out_avals)
    force = [dtypes.is_inexact(a.dtype) for a in call.out_avals]
    jvp_call, _ = jvp_jaxpr(call, mask, force=force)
    tangents_in = [instantiate(t) for t, m in zip(tangents, mask) if m]
    outs = custom_vmap_p.bind(*primals, *tangents_in, call=jvp_call,
                              rule=_jvp_of_rule(rule, len(primals), mask), name=name)
    out_tangents = iter(outs[n_out:])
    return outs[:n_out], [next(out_tangents) if f else Zero(tangent_aval(a))
                          for f, a in zip(force, call.out_avals, strict=True)]


jvp_rules[custom_vmap_p] = _custom_vmap_jvp


def _custom_vmap_partial_eval(trace, args, params):
    raise TypeError(f"reverse-mode differentiation (grad, vjp) of the custom_vmap function "
                    f"{params['name']} is not supported (as in JAX); define its derivative "
                    f"with custom_vjp around it, or use forward mode (jvp, jacfwd)")


partial_eval_rules[custom_vmap_p] = _custom_vmap_partial_eval
