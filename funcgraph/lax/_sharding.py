"""with_sharding_constraint: ask XLA's partitioner to lay an intermediate value out
as a sharding says (the primitive sharding_constraint)."""
from funcgraph import tree_util
from funcgraph.primitives.sharding_constraint import sharding_constraint_p
from funcgraph.sharding import PartitionSpec, Sharding, resolve


def _is_sharding_leaf(x):
    return x is None or isinstance(x, (Sharding, PartitionSpec))


def with_sharding_constraint(x, shardings):
    """x (a pytree) with each leaf constrained to its sharding: one for all leaves or a
    tree prefix of x (a PartitionSpec needs a mesh set by fg.set_mesh).  Outside jit it
    places the value (as device_put)."""
    leaves, tree = tree_util.tree_flatten(x)
    if _is_sharding_leaf(shardings):
        per_leaf = [shardings] * len(leaves)
    else:
        spec_leaves, spec_tree = tree_util.tree_flatten(shardings, is_leaf=_is_sharding_leaf)
        subtrees = spec_tree.flatten_up_to(x)
        per_leaf = []
        for s, sub in zip(spec_leaves, subtrees, strict=True):
            per_leaf.extend([s] * len(tree_util.tree_leaves(sub)))
    out = [leaf if s is None else
           sharding_constraint_p.bind(leaf, sharding=resolve(s, "with_sharding_constraint"))
           for leaf, s in zip(leaves, per_leaf, strict=True)]
    return tree_util.tree_unflatten(tree, out)


def sharded_result(x, out_sharding):
    """x laid out as a function's `out_sharding=` argument says (jnp.dot, einsum,
    random.normal, ...): a sharding constraint, which outside jit places the value;
    None leaves XLA's layout."""
    if out_sharding is None or getattr(getattr(out_sharding, "mesh", None), "empty", False):
        return x  # None, or a sharding over no mesh (jax.typeof(x).sharding outside one)
    return sharding_constraint_p.bind(x, sharding=resolve(out_sharding, "out_sharding"))
