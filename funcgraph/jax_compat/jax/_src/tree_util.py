"""`jax._src.tree_util`: funcgraph.tree_util's names, plus `_registry`, the table of
registered pytree node types (read with `type(x) in _registry`)."""
import collections.abc

import optree

from funcgraph import tree_util as _own
from funcgraph.tree_util import *  # noqa: F401,F403


class _Registry(collections.abc.Mapping):
    """A live view of the node types registered with funcgraph.tree_util (built-in
    containers included): type -> its registry entry."""

    def _table(self):
        return optree.register_pytree_node.get(namespace=_own.NAMESPACE)

    def __getitem__(self, typ):
        entry = optree.register_pytree_node.get(typ, namespace=_own.NAMESPACE) \
            if isinstance(typ, type) else None
        if entry is None:
            raise KeyError(typ)
        return entry

    def __contains__(self, typ):
        return isinstance(typ, type) and \
            optree.register_pytree_node.get(typ, namespace=_own.NAMESPACE) is not None

    def __iter__(self):
        return (t for t in self._table() if isinstance(t, type))

    def __len__(self):
        return sum(1 for _ in self)


_registry = _Registry()


def __getattr__(name):
    try:
        return getattr(_own, name)
    except AttributeError:
        raise AttributeError(f"module 'jax._src.tree_util' has no attribute {name!r}") from None
