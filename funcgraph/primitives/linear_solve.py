"""linear_solve: x = solve(b) for a user-given linear map A (lax.custom_linear_solve).

Differentiation never looks inside `solve`: x = A^-1 b, so dx = A^-1 (db - dA x), where
dA x is matvec's tangent at x with its closed-over values perturbed, and the transpose
of b -> A^-1 b is b -> A^-T b, solved by `transpose_solve` with `vecmat` (x -> A^T x).

operands: *matvec_consts, *vecmat_consts, *solve_consts, *transpose_solve_consts, *b
params: const_lengths (four ints, one per jaxpr), matvec, vecmat, solve, transpose_solve
(const-free ClosedJaxprs taking (consts..., vector leaves...); vecmat and transpose_solve
are None when no transpose is known), num_aux (outputs of solve after x: its aux data).
"""
from funcgraph import core
from funcgraph.interpreters.ad_util import Zero, instantiate, is_zero, tangent_aval
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import direct_impls, eval_jaxpr
from funcgraph.interpreters.jvp import jvp_flat, jvp_rules
from funcgraph.interpreters.transpose import is_undefined, transpose_rules
from funcgraph.lowering import emit_call
from funcgraph.primitives.batching_helpers import batch_at
from funcgraph.primitives.base import move_batch_dim
from funcgraph.primitives.elementwise import sub_p
from funcgraph.primitives.helpers import declare
from funcgraph.primitives.jaxprs import batch_jaxpr

_ROLES = ("matvec", "vecmat", "solve", "transpose_solve")


def split_operands(args, const_lengths):
    """(the four const groups, the vector leaves b)."""
    groups, start = [], 0
    for n in const_lengths:
        groups.append(list(args[start:start + n]))
        start += n
    return groups, list(args[start:])


def _num_x(params):
    return len(params["solve"].out_avals) - params["num_aux"]


def _linear_solve_shape(*avals, const_lengths, matvec, vecmat, solve, transpose_solve,
                        num_aux):
    _, b = split_operands(avals, const_lengths)
    x_avals = solve.out_avals[:len(solve.out_avals) - num_aux]
    types = [a.str_short() for a in b]
    if [a.str_short() for a in x_avals] != types:
        raise TypeError(f"custom_linear_solve: solve must return a value of b's type {types}, "
                        f"got {[a.str_short() for a in x_avals]}")
    if [a.str_short() for a in matvec.out_avals] != types:
        raise TypeError(f"custom_linear_solve: matvec must return a value of b's type {types}, "
                        f"got {[a.str_short() for a in matvec.out_avals]}")
    return list(solve.out_avals)


def _linear_solve_impl(*args, const_lengths, solve, **params):
    groups, b = split_operands(args, const_lengths)
    return list(eval_jaxpr(solve.jaxpr, [], *groups[2], *b))


def _linear_solve_lowering(ctx, avals_in, avals_out, *args, const_lengths, solve, **params):
    groups, b = split_operands(args, const_lengths)
    group_avals, b_avals = split_operands(avals_in, const_lengths)
    return emit_call(ctx, solve, "linear_solve", groups[2] + b, group_avals[2] + b_avals,
                     avals_out)


linear_solve_p = declare("custom_linear_solve", _linear_solve_shape, None,
                         _linear_solve_lowering, multiple_results=True)
core.keeps_operand_vma.add(linear_solve_p)
direct_impls[linear_solve_p] = _linear_solve_impl


def _bind(groups, b, params):
    return linear_solve_p.bind(*[c for g in groups for c in g], *b, **params)


def _matvec_tangent(matvec, consts, const_tangents, x):
    """dA x: matvec's tangent at x when only its consts move."""
    x_tangents = [Zero(tangent_aval(core.get_aval(v))) for v in x]
    _, out = jvp_flat(lambda *xs: eval_jaxpr(matvec.jaxpr, [], *xs), list(consts) + list(x),
                      list(const_tangents) + x_tangents)
    return out


def _linear_solve_jvp(primals, tangents, **params):
    outs = linear_solve_p.bind(*primals, **params)
    nx = _num_x(params)
    x = outs[:nx]
    groups, _ = split_operands(primals, params["const_lengths"])
    const_tangents, b_tangents = split_operands(tangents, params["const_lengths"])
    rhs = [instantiate(t) for t in b_tangents]
    if any(not is_zero(t) for t in const_tangents[0]):
        dA_x = _matvec_tangent(params["matvec"], groups[0], const_tangents[0], x)
        rhs = [r if is_zero(d) else sub_p.bind(r, d) for r, d in zip(rhs, dA_x, strict=True)]
    dx = _bind(groups, rhs, params)[:nx]
    aux_tangents = [Zero(tangent_aval(core.get_aval(a))) for a in outs[nx:]]
    return outs, dx + aux_tangents


def _linear_solve_transpose(cts, *args, **params):
    groups, b = split_operands(args, params["const_lengths"])
    if any(is_undefined(c) for g in groups for c in g):
        raise TypeError("custom_linear_solve is linear in b only: the values its matvec and "
                        "solve close over cannot be transposed")
    if params["transpose_solve"] is None:
        raise TypeError("transpose_solve required for backwards mode automatic "
                        "differentiation of custom_linear_solve")
    nx = _num_x(params)
    ct_x = list(cts)[:nx]
    if all(is_zero(c) for c in ct_x):
        return [None] * sum(params["const_lengths"]) + [Zero(v.aval) for v in b]
    swapped = dict(params, matvec=params["vecmat"], vecmat=params["matvec"],
                   solve=params["transpose_solve"], transpose_solve=params["solve"],
                   const_lengths=tuple(params["const_lengths"][i] for i in (1, 0, 3, 2)),
                   num_aux=len(params["transpose_solve"].out_avals) - nx)
    swapped_groups = [groups[i] for i in (1, 0, 3, 2)]
    ct_b = _bind(swapped_groups, [instantiate(c) for c in ct_x], swapped)[:nx]
    return [None] * sum(params["const_lengths"]) + ct_b


jvp_rules[linear_solve_p] = _linear_solve_jvp
transpose_rules[linear_solve_p] = _linear_solve_transpose


def _linear_solve_batch(axis_data, args, dims, **params):
    """Batched consts and every vector move to axis 0; each jaxpr is batched alike."""
    size = axis_data.size
    lengths = params["const_lengths"]
    groups, b = split_operands(args, lengths)
    group_dims, b_dims = split_operands(dims, lengths)
    groups = [[c if d is None else move_batch_dim(c, d, 0) for c, d in zip(g, gd, strict=True)]
              for g, gd in zip(groups, group_dims, strict=True)]
    b = [batch_at(v, d, size) for v, d in zip(b, b_dims, strict=True)]
    new = dict(params)
    for role, gd in zip(_ROLES, group_dims, strict=True):
        if params[role] is not None:
            in_dims = [None if d is None else 0 for d in gd] + [0] * len(b)
            new[role] = batch_jaxpr(params[role], in_dims, axis_data)
    outs = _bind(groups, b, new)
    return outs, [0] * len(outs)


batching_rules[linear_solve_p] = _linear_solve_batch
