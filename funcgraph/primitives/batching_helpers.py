"""Helpers shared by batching rules: adding batch dimensions (moving them is
base.move_batch_dim), the elementwise batcher, and batching of whole functions."""
from funcgraph import core
from funcgraph.interpreters.batching import batch_flat
from funcgraph.primitives.base import broadcast_in_dim_p, move_batch_dim


def broadcast_batched(x, size, dim=0):
    """An unbatched x given a batch axis of `size` at position `dim`."""
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
        full = _joint_lane(lanes)
        target = next((d for d, s in zip(dims, lanes) if d is not None and len(s) == len(full)),
                      0)
        out = []
        for i, (a, d, s) in enumerate(zip(args, dims, lanes)):
            may_stay_scalar = scalar_ok is None or i in scalar_ok
            if d is None:
                if s == () and may_stay_scalar:
                    out.append(a)
                    continue
                a = _broadcast_lane(a, s, full)
                out.append(broadcast_batched(a, axis_data.size, target))
            elif len(s) == len(full):  # size-1 dimensions are the primitive's to broadcast
                out.append(move_batch_dim(a, d, target))
            else:  # a batched rank-0 lane value meeting shaped lanes
                out.append(_broadcast_batched_scalar(a, axis_data.size, full, target))
        return prim.bind(*out, **params), target
    return rule


def _joint_lane(lanes):
    """The lane shape of the result: the longest, with its size-1 dimensions taken from
    lanes of its rank where they are wider (as the primitives broadcast)."""
    full = max(lanes, key=len)
    same_rank = [s for s in lanes if len(s) == len(full)]
    return tuple(next((d for d in sizes if type(d) is not int or d != 1), 1)
                 for sizes in zip(*same_rank))


def _broadcast_lane(x, shape, full):
    """A rank-0 lane value broadcast to the full lane shape; a lane of full's rank is
    left for the primitive to broadcast along its size-1 dimensions."""
    if len(shape) == len(full):
        return x
    return broadcast_in_dim_p.bind(x, shape=full, broadcast_dimensions=())


def _broadcast_batched_scalar(x, size, full, target):
    shape = full[:target] + (size,) + full[target:]
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=(target,))


class BatchedOutputError(core.FuncgraphError, ValueError):
    pass


def vmap_flat(fun, args, in_dims, axis_size, axis_name=None, out_dims=None):
    """Run fun(*flat args) batched, with each output's batch axis moved to its entry of
    out_dims (default 0; None asserts that the output does not depend on the batch)."""
    vals, dims = batch_flat(fun, args, in_dims, axis_size, axis_name)
    return place_outputs(vals, dims, [0] * len(vals) if out_dims is None else out_dims,
                         axis_size)


def place_outputs(vals, dims, out_dims, axis_size):
    """Batched outputs (batch axes at dims) with their batch axes moved to out_dims."""
    return [_place_output(i, val, dim, want, axis_size)
            for i, (val, dim, want) in enumerate(core.safe_zip(vals, dims, list(out_dims)))]


def _place_output(i, val, dim, want, axis_size):
    if want is None:
        if dim is not None:
            raise BatchedOutputError(
                f"vmap: out_axes is None for output {i}, but that output depends on the "
                f"mapped inputs (it is batched along its axis {dim}); give it an integer "
                f"out_axes, or make it independent of the mapped arguments")
        return val
    if dim is None:
        val, dim = broadcast_batched(val, axis_size), 0
    aval = core.get_aval(val)
    want = want % aval.ndim if aval.ndim else 0
    return move_batch_dim(val, dim, want)
