"""Primitives that shape differentiation: stop_gradient, custom_jvp_call and
custom_vjp_call (with its linear companion custom_lin); checkpoint is in remat.py."""
import numpy as np

from funcgraph import core, dtypes, ir
from funcgraph.core import Primitive
from funcgraph.interpreters.ad_util import Zero, instantiate, is_zero, tangent_aval
from funcgraph.interpreters.batching import batch_flat, batching_rules
from funcgraph.interpreters.eval import direct_impls, eval_jaxpr
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.staging import staging_rules, trace_flat
from funcgraph.interpreters.transpose import transpose_rules
from funcgraph.lowering import emit_call, lower_closed_body
from funcgraph.primitives.base import reduce_sum_p
from funcgraph.primitives.batching_helpers import batch_at, place_outputs, vmap_flat
from funcgraph.primitives.call import transpose_call
from funcgraph.primitives.helpers import declare
from funcgraph.primitives.jaxprs import batch_jaxpr, batch_jaxpr_auto, const_free


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
    core.symbolic_dims_supported.add(prim)  # lowered inline in symbolic exports
    core.keeps_operand_vma.add(prim)
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
core.symbolic_dims_supported.add(stop_gradient_p)


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
    arg_tangents = tangents[num_consts:]
    if not getattr(jvp, "symbolic_zeros", False):  # else the rule sees zeros as such
        arg_tangents = [instantiate(t) for t in arg_tangents]
    outs, out_tangents = jvp(list(args), list(arg_tangents))
    # A float0 tangent (of an integer output) is a symbolic zero for the rules after.
    return outs, [Zero(tangent_aval(core.get_aval(o)))
                  if not is_zero(t) and core.get_aval(t).dtype == dtypes.float0 else t
                  for o, t in core.safe_zip(outs, out_tangents)]


jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp


def _custom_jvp_call_batch(axis_data, args, dims, call_jaxpr, jvp, num_consts, name):
    if isinstance(call_jaxpr, ir.ClosedJaxpr):
        return _custom_jvp_call_batch_staged(axis_data, args, dims, call_jaxpr, jvp,
                                             num_consts, name)
    args = _all_at_front(axis_data, args, dims)
    batched_call = _batched_call(call_jaxpr, axis_data, len(args))

    def batched_jvp(primals, tangents):
        n = len(primals)
        tangents = [instantiate(t) for t in tangents]

        def flat(*xs):
            outs, out_tangents = jvp(list(xs[:n]), list(xs[n:]))
            return list(outs) + list(out_tangents)
        res = _vmapped(flat, axis_data, 2 * n)(*primals, *tangents)
        return res[:len(res) // 2], res[len(res) // 2:]

    outs = custom_jvp_call_p.bind(*args, call_jaxpr=batched_call, jvp=batched_jvp,
                                  num_consts=num_consts, name=name)
    return outs, [0] * len(outs)


def _custom_jvp_call_batch_staged(axis_data, args, dims, call_jaxpr, jvp, num_consts, name):
    """As in JAX, unbatched inputs stay unbatched, and so do the outputs that do not
    depend on the batch (equinox's error_if keeps an unbatched predicate this way)."""
    in_dims = [None if d is None else 0 for d in dims]
    args = [a if d is None else batch_at(a, d, axis_data.size) for a, d in zip(args, dims)]
    batched_call, out_batched = batch_jaxpr_auto(call_jaxpr, in_dims, axis_data)
    out_dims = [0 if b else None for b in out_batched]
    arg_dims = in_dims[num_consts:]

    def batched_jvp(primals, tangents):
        n = len(primals)
        tangents = [instantiate(t) for t in tangents]

        def flat(*xs):
            outs, out_tangents = jvp(list(xs[:n]), list(xs[n:]))
            return list(outs) + list(out_tangents)
        res = vmap_flat(flat, list(primals) + tangents, arg_dims * 2, axis_data.size,
                        axis_data.name, out_dims * 2)
        return res[:len(res) // 2], res[len(res) // 2:]

    outs = custom_jvp_call_p.bind(*args, call_jaxpr=batched_call, jvp=batched_jvp,
                                  num_consts=num_consts, name=name)
    return outs, out_dims


batching_rules[custom_jvp_call_p] = _custom_jvp_call_batch


def _custom_jvp_call_transpose(cts, *args, call_jaxpr, jvp, num_consts, name):
    """linear_transpose of a function that calls a custom_jvp one (lineax transposes
    operators built this way): the custom rule plays no part in a linear function, so
    the call transposes as its jaxpr does, as in jax (whose partial evaluation of a
    linear function inlines the call)."""
    return transpose_call(cts, args, call_jaxpr, f"custom_jvp({name})")


transpose_rules[custom_jvp_call_p] = _custom_jvp_call_transpose


# --- custom_vjp_call: a function with user-defined forward and backward passes --------
# params: call_jaxpr (as for custom_jvp_call), fwd (flat: args -> (outs, residuals)),
# bwd (flat: (residuals, cotangents) -> argument cotangents), num_consts, name.

custom_vjp_call_p = _declare_call("custom_vjp_call")
_stage_custom_call(custom_vjp_call_p)

def _custom_vjp_call_jvp(primals, tangents, call_jaxpr, fwd, bwd, num_consts, name):
    if any(not is_zero(t) for t in tangents[:num_consts]):
        raise _closed_over_error("custom_vjp", name)
    args = primals[num_consts:]
    if getattr(fwd, "symbolic_zeros", False):  # fwd is told which inputs are perturbed
        outs, residuals = fwd(list(args), [not is_zero(t) for t in tangents[num_consts:]])
    else:
        outs, residuals = fwd(list(args))
    arg_tangents = [instantiate(t) for t in tangents[num_consts:]]
    out_avals = tuple(tangent_aval(core.get_aval(o)) for o in outs)
    out_tangents = custom_lin_p.bind(*residuals, *arg_tangents, num_res=len(residuals),
                                     bwd=bwd, out_avals=out_avals, name=name)
    return outs, out_tangents


jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp


def _custom_vjp_call_batch(axis_data, args, dims, call_jaxpr, fwd, bwd, num_consts, name):
    """As in JAX, unbatched inputs stay unbatched, and so do the outputs that do not
    depend on the batch (equinox's checkpointed while loop keeps its step counter
    unbatched this way); residuals are batched; cotangents of unbatched inputs are
    summed over the batch."""
    size = axis_data.size
    in_dims = [None if d is None else 0 for d in dims]
    args = [a if d is None else batch_at(a, d, size) for a, d in zip(args, dims)]
    if not isinstance(call_jaxpr, ir.ClosedJaxpr):
        avals = [core.get_aval(a) for a in args]
        call_jaxpr = trace_flat(call_jaxpr, [a if d is None else a.update(shape=a.shape[1:])
                                             for a, d in zip(avals, in_dims)])
    batched_call, out_batched = batch_jaxpr_auto(call_jaxpr, in_dims, axis_data)
    out_dims = [0 if b else None for b in out_batched]

    def batched_fwd(primals, perturbed=None):
        def flat(*xs):
            outs, residuals = (fwd(list(xs)) if perturbed is None
                               else fwd(list(xs), perturbed))
            return list(outs) + list(residuals)
        vals, found = batch_flat(flat, list(primals), in_dims, size, axis_data.name)
        n = len(out_dims)
        outs = place_outputs(vals[:n], found[:n], out_dims, size)
        return outs, place_outputs(vals[n:], found[n:], [0] * (len(vals) - n), size)
    batched_fwd.symbolic_zeros = getattr(fwd, "symbolic_zeros", False)

    def batched_bwd(residuals, cts):
        n = len(residuals)
        cts = [instantiate(c) for c in cts]
        vals, found = batch_flat(lambda *xs: bwd(list(xs[:n]), list(xs[n:])),
                                 [*residuals, *cts], [0] * n + out_dims, size, axis_data.name)
        return [_unbatched_cotangent(v, d) if want is None else
                place_outputs([v], [d], [0], size)[0]
                for v, d, want in core.safe_zip(vals, found, in_dims)]

    outs = custom_vjp_call_p.bind(*args, call_jaxpr=batched_call, fwd=batched_fwd,
                                  bwd=batched_bwd, num_consts=num_consts, name=name)
    return outs, out_dims


def _unbatched_cotangent(ct, dim):
    """The cotangent of an unbatched input: summed over the batch where it has one."""
    if dim is None:
        return ct
    aval = core.get_aval(ct)
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape[:dim] + aval.shape[dim + 1:], dtypes.float0)
    return reduce_sum_p.bind(ct, axes=(dim,))


batching_rules[custom_vjp_call_p] = _custom_vjp_call_batch


# custom_lin(residuals..., tangents...) stands for the linear map whose transpose is
# the user's bwd.  It has no forward evaluation: JAX's rule that a custom_vjp
# function supports reverse mode only.
custom_lin_p = Primitive("custom_lin", multiple_results=True)
core.keeps_operand_vma.add(custom_lin_p)


def _custom_lin_shape(*avals, num_res, bwd, out_avals, name):
    return list(out_avals)


def _custom_lin_eval(*args, num_res, bwd, out_avals, name):
    raise TypeError(f"can't apply forward-mode differentiation (jvp, jacfwd) to the custom_vjp "
                    f"function {name}; define it with custom_jvp to support forward mode")


core.shape_rules[custom_lin_p] = _custom_lin_shape
direct_impls[custom_lin_p] = _custom_lin_eval


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals, name):
    residuals = args[:num_res]
    if not getattr(bwd, "symbolic_zeros", False):  # else bwd sees zeros as such
        cts = [instantiate(c) for c in cts]
    cts_in = bwd(list(residuals), list(cts))
    return [None] * num_res + list(cts_in)


transpose_rules[custom_lin_p] = _custom_lin_transpose


# --- linear_call: a function linear in its linear operands, with a user-given transpose ---
# operands: *callee_consts, *transpose_consts, *residuals, *linear; params: callee
# (const-free: (callee consts, residuals, linear) -> outputs), transpose (const-free:
# (transpose consts, residuals, output cotangents) -> linear cotangents), num_callee_consts,
# num_transpose_consts, num_res.  Its transpose is a linear_call of transpose, with callee
# as the transpose's transpose.

def _linear_call_parts(args, num_callee_consts, num_transpose_consts, num_res):
    """(callee consts, transpose consts, residuals, linear operands)."""
    first = num_callee_consts + num_transpose_consts
    return (list(args[:num_callee_consts]), list(args[num_callee_consts:first]),
            list(args[first:first + num_res]), list(args[first + num_res:]))


def _linear_call_shape(*avals, callee, transpose, **counts):
    consts, _, res, lin = _linear_call_parts(avals, **counts)
    expected = callee.in_avals
    given = consts + res + lin
    if len(given) != len(expected) or not all(map(core.same_type, given, expected)):
        raise TypeError(f"linear_call: argument types {[a.str_short() for a in given]} do not "
                        f"match {[a.str_short() for a in expected]}")
    return callee.out_avals


def _linear_call_eval(*args, callee, transpose, **counts):
    consts, _, res, lin = _linear_call_parts(args, **counts)
    return list(eval_jaxpr(callee.jaxpr, [], *consts, *res, *lin))


def _linear_call_lowering(ctx, avals_in, avals_out, *args, callee, transpose, **counts):
    consts, _, res, lin = _linear_call_parts(args, **counts)
    return lower_closed_body(ctx, callee, consts + res + lin)


linear_call_p = declare("linear_call", _linear_call_shape, None, _linear_call_lowering,
                        multiple_results=True)
direct_impls[linear_call_p] = _linear_call_eval


def _linear_call_jvp(primals, tangents, **params):
    fixed = sum(params[k] for k in ("num_callee_consts", "num_transpose_consts", "num_res"))
    if any(not is_zero(t) for t in tangents[:fixed]):
        raise ValueError("linear_call is linear in its linear_args only: its residual_args "
                         "(and the values fun and fun_transpose close over) must not be "
                         "differentiated; pass them through lax.stop_gradient")
    outs = linear_call_p.bind(*primals, **params)
    if all(is_zero(t) for t in tangents[fixed:]):
        return outs, [Zero(tangent_aval(core.get_aval(o))) for o in outs]
    lin_tangents = [instantiate(t) for t in tangents[fixed:]]
    return outs, linear_call_p.bind(*primals[:fixed], *lin_tangents, **params)


jvp_rules[linear_call_p] = _linear_call_jvp


def _linear_call_transpose(cts, *args, callee, transpose, num_callee_consts,
                           num_transpose_consts, num_res):
    consts, t_consts, res, lin = _linear_call_parts(
        args, num_callee_consts, num_transpose_consts, num_res)
    cts = [instantiate(c) for c in cts]
    lin_cts = linear_call_p.bind(*t_consts, *consts, *res, *cts, callee=transpose,
                                 transpose=callee, num_callee_consts=num_transpose_consts,
                                 num_transpose_consts=num_callee_consts, num_res=num_res)
    return [None] * (len(consts) + len(t_consts) + len(res)) + list(lin_cts)


transpose_rules[linear_call_p] = _linear_call_transpose
