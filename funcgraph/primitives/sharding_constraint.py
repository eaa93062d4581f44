"""sharding_constraint: the identity on values that tells XLA's SPMD partitioner how
its result must be laid out (lax.with_sharding_constraint).  Its param `sharding` is
a funcgraph NamedSharding; it lowers to Shardy's `sdy.sharding_constraint` over the
sharding's mesh.  Linear: tangents and cotangents keep the layout.  Under vmap the
batch dimension is left unsplit, or split over the vmap's spmd_axis_name."""
from funcgraph import core
from funcgraph.array import Array, reshard
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import direct_impls, to_concrete
from funcgraph.primitives.helpers import declare, deflinear_unary
from funcgraph.sharding import NamedSharding, PartitionSpec


def _sharding_constraint_shape(x, sharding):
    if len(sharding.spec) > x.ndim:
        raise ValueError(f"with_sharding_constraint: the PartitionSpec {sharding.spec} has "
                         f"{len(sharding.spec)} entries, more than the rank of the value "
                         f"{x.str_short()}")
    sharding.tile_counts(x.ndim)
    return x


def _sharding_constraint_direct(x, sharding):
    """Eagerly: the value placed as the sharding says (as device_put would)."""
    if type(x) is not Array:
        value, aval = to_concrete(x)
        x = Array(value, aval)
    return reshard(x, sharding)


def _sharding_constraint_lowering(ctx, avals_in, avals_out, x, sharding):
    return ctx.op("sdy.sharding_constraint", [x], avals_in, avals_out[0],
                  {"sharding": ctx.module.sharding_attr(sharding, avals_in[0])})


sharding_constraint_p = declare("sharding_constraint", _sharding_constraint_shape, None,
                                _sharding_constraint_lowering)
direct_impls[sharding_constraint_p] = _sharding_constraint_direct
deflinear_unary(sharding_constraint_p,
                lambda ct, aval, sharding: sharding_constraint_p.bind(ct, sharding=sharding))


def _sharding_constraint_batch(axis_data, args, dims, sharding):
    (x,), (d,) = args, dims
    ndim = core.get_aval(x).ndim
    entries = list(sharding.spec) + [None] * (ndim - 1 - len(sharding.spec))
    entries.insert(d, axis_data.spmd_axis_name)
    batched = NamedSharding(sharding.mesh, PartitionSpec(*entries))
    return sharding_constraint_p.bind(x, sharding=batched), d


batching_rules[sharding_constraint_p] = _sharding_constraint_batch
