"""`jax.interpreters.batching`: JAX's batching rule tables over funcgraph's
(funcgraph.interpreters.batching).  fancy_primitive_batchers takes funcgraph's own
signature rule(axis_data, args, dims, **params) -> (out, out_dim);
primitive_batchers the older rule(args, dims, **params), and axis_primitive_batchers
rule(axis_size, axis_name, trace_type, args, dims, **params).  `not_mapped` (None)
marks an operand or result without a batch axis."""
from funcgraph import core
from funcgraph.interpreters.batching import (
    AxisData, BatchTrace, BatchTracer, batching_rules)
from funcgraph.jax_compat.rule_tables import RuleTable
from funcgraph.primitives.base import move_batch_dim
from funcgraph.primitives.batching_helpers import batch_at, batch_elementwise, broadcast_batched

not_mapped = None

# Rules written for JAX get their operands and batch dimensions as tuples, as in JAX.


def _canonical_dim(out, d):
    if d is None or d >= 0:
        return d
    return d + core.get_aval(out).ndim


def _checked(prim, out, out_dim):
    if prim.multiple_results:
        out = list(out)
        dims = [out_dim] * len(out) if out_dim is None or type(out_dim) is int \
            else list(out_dim)
        return out, [_canonical_dim(o, d) for o, d in core.safe_zip(out, dims)]
    return out, _canonical_dim(out, out_dim)


def _adapt_fancy(prim, rule):
    def batch(axis_data, args, dims, **params):
        return _checked(prim, *rule(axis_data, tuple(args), tuple(dims), **params))
    return batch


def _adapt_plain(prim, rule):
    def batch(axis_data, args, dims, **params):
        return _checked(prim, *rule(tuple(args), tuple(dims), **params))
    return batch


def _adapt_axis(prim, rule):
    def batch(axis_data, args, dims, **params):
        return _checked(prim, *rule(axis_data.size, axis_data.name, None, tuple(args),
                                    tuple(dims), **params))
    return batch


fancy_primitive_batchers = RuleTable(batching_rules, _adapt_fancy)
primitive_batchers = RuleTable(batching_rules, _adapt_plain)
axis_primitive_batchers = RuleTable(batching_rules, _adapt_axis)


def moveaxis(x, src, dst):
    """x with its axis src moved to dst (negative positions count from the end)."""
    ndim = core.get_aval(x).ndim
    return move_batch_dim(x, src % ndim, dst % ndim)


def bdim_at_front(x, bdim, size):
    """x with its batch axis first (broadcast there if it has none)."""
    return batch_at(x, bdim, size, 0)


def broadcast(x, sz, axis, mesh_axis=None):
    """x (unbatched) broadcast to have a new axis of size sz at position axis."""
    del mesh_axis
    if axis is None:
        return x
    return broadcast_batched(x, sz, axis % (core.get_aval(x).ndim + 1))


def defvectorized(prim):
    """An elementwise primitive of one operand: the batch axis stays where it is."""
    def rule(axis_data, args, dims, **params):
        (x,), (d,) = args, dims
        return prim.bind(x, **params), d
    batching_rules[prim] = rule


def defbroadcasting(prim):
    """An elementwise primitive whose operands broadcast."""
    batching_rules[prim] = batch_elementwise(prim)


__all__ = [
    "AxisData", "BatchTrace", "BatchTracer", "axis_primitive_batchers", "bdim_at_front",
    "broadcast", "defbroadcasting", "defvectorized", "fancy_primitive_batchers",
    "moveaxis", "not_mapped", "primitive_batchers",
]
