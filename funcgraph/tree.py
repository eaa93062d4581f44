"""funcgraph.tree: the pytree functions under `jax.tree`'s short names
(`tree.map`, `tree.leaves`, ...); see funcgraph.tree_util."""
import dataclasses

from funcgraph.tree_util import (
    tree_all as all, tree_broadcast as broadcast, tree_flatten as flatten,
    tree_flatten_with_path as flatten_with_path, tree_leaves as leaves,
    tree_leaves_with_path as leaves_with_path, tree_map as map,
    tree_map_with_path as map_with_path, tree_reduce as reduce,
    tree_reduce_associative as reduce_associative, tree_structure as structure,
    tree_transpose as transpose, tree_unflatten as unflatten)


def static(**kwargs):
    """A dataclass field that register_dataclass makes static (aux data, not a child):
    `dataclasses.field(**kwargs)` with `metadata["static"] = True`."""
    metadata = {**(kwargs.pop("metadata", None) or {}), "static": True}
    return dataclasses.field(metadata=metadata, **kwargs)


__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
           "transpose", "unflatten"]
