"""Helpers shared by batching rules: moving and adding batch dimensions, the
elementwise batcher, and batching of sub-jaxprs."""
from funcgraph import core
from funcgraph.interpreters.batching import batch_flat
from funcgraph.interpreters.eval import eval_jaxpr
from funcgraph.interpreters.staging import trace_flat
from funcgraph.ir import Literal


def move_batch_dim(x, src, dst):
    """x with its axis `src` moved to position `dst`."""
    if src == dst:
        return x
    from funcgraph.primitives.structural import transpose_p
    ndim = core.get_aval(x).ndim
    perm = list(range(ndim))
    perm.pop(src)
    perm.insert(dst, src)
    return transpose_p.bind(x, permutation=tuple(perm))


def broadcast_batched(x, size, dim=0):
    """An unbatched x given a batch axis of `size` at position `dim`."""
    from funcgraph.primitives.structural import broadcast_in_dim_p
    aval = core.get_aval(x)
    shape = aval.shape[:dim] + (size,) + aval.shape[dim:]
    dims = tuple(i for i in range(len(shape)) if i != dim)
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims)


def batch_at(x, d, size, dst=0):
    """x with its batch axis at dst (broadcast first if it has none)."""
    if d is None:
        return broadcast_batched(x, size, dst)
    return move_batch_dim(x, d, dst)


def lane_shape(x, d):
    shape = core.get_aval(x).shape
    return shape if d is None else shape[:d] + shape[d + 1:]


def batch_elementwise(prim, scalar_ok=None):
    """Batching rule of an elementwise primitive.  Operands listed in scalar_ok (all of
    them when None) may stay rank 0 next to shaped ones, as the primitive allows."""
    def rule(axis_data, args, dims, **params):
        lanes = [lane_shape(a, d) for a, d in zip(args, dims)]
        full = max(lanes, key=len)
        target = next((d for d, s in zip(dims, lanes) if d is not None and s == full), 0)
        out = []
        for i, (a, d, s) in enumerate(zip(args, dims, lanes)):
            may_stay_scalar = scalar_ok is None or i in scalar_ok
            if d is None:
                if s == () and may_stay_scalar:
                    out.append(a)
                    continue
                a = _broadcast_lane(a, s, full)
                out.append(broadcast_batched(a, axis_data.size, target))
            elif s == full:
                out.append(move_batch_dim(a, d, target))
            else:  # a batched rank-0 lane value meeting shaped lanes
                out.append(_broadcast_batched_scalar(a, axis_data.size, full, target))
        return prim.bind(*out, **params), target
    return rule


def _broadcast_lane(x, shape, full):
    if shape == full:
        return x
    from funcgraph.primitives.structural import broadcast_in_dim_p
    return broadcast_in_dim_p.bind(x, shape=full, broadcast_dimensions=())


def _broadcast_batched_scalar(x, size, full, target):
    from funcgraph.primitives.structural import broadcast_in_dim_p
    shape = full[:target] + (size,) + full[target:]
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=(target,))


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
    out_dims = None if out_batched is None else [0 if b else None for b in out_batched]

    def batched(*args):
        return batch_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                          list(args), list(in_dims), axis_data.size, axis_data.name, out_dims)
    return trace_flat(batched, in_avals)


def batched_outputs(jaxpr, in_batched):
    """Which outputs of a jaxpr depend on its batched inputs (a forward dataflow pass;
    equations with sub-jaxprs count as depending on all their inputs)."""
    batched = {v for v, b in core.safe_zip(jaxpr.invars, in_batched) if b}
    for eqn in jaxpr.eqns:
        if any(type(x) is not Literal and x in batched for x in eqn.invars):
            batched.update(eqn.outvars)
    return [type(v) is not Literal and v in batched for v in jaxpr.outvars]
