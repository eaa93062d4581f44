"""Pytrees with JAX's API, over optree (fast C++ flattening on the dispatch path).

Containers: tuples, lists, dicts (keys sorted), None (no leaves), namedtuples,
OrderedDict, defaultdict, and classes registered here."""
import functools

import optree

NAMESPACE = "funcgraph"

PyTreeDef = optree.PyTreeSpec

_MISSING = object()


def tree_flatten(tree, is_leaf=None):
    return optree.tree_flatten(tree, is_leaf, none_is_leaf=False, namespace=NAMESPACE)


def tree_unflatten(treedef, leaves):
    return optree.tree_unflatten(treedef, leaves)


def tree_leaves(tree, is_leaf=None):
    return optree.tree_leaves(tree, is_leaf, none_is_leaf=False, namespace=NAMESPACE)


def tree_structure(tree, is_leaf=None):
    return optree.tree_structure(tree, is_leaf, none_is_leaf=False, namespace=NAMESPACE)


def tree_map(f, tree, *rest, is_leaf=None):
    return optree.tree_map(f, tree, *rest, is_leaf=is_leaf, none_is_leaf=False,
                           namespace=NAMESPACE)


def tree_flatten_with_path(tree, is_leaf=None):
    paths, leaves, treedef = optree.tree_flatten_with_path(
        tree, is_leaf, none_is_leaf=False, namespace=NAMESPACE)
    return [(tuple(_key(k) for k in p), leaf) for p, leaf in zip(paths, leaves)], treedef


def tree_map_with_path(f, tree, *rest, is_leaf=None):
    return optree.tree_map_with_path(lambda p, *xs: f(tuple(_key(k) for k in p), *xs),
                                     tree, *rest, is_leaf=is_leaf, none_is_leaf=False,
                                     namespace=NAMESPACE)


def tree_reduce(function, tree, initializer=_MISSING, is_leaf=None):
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _MISSING:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree):
    return all(tree_leaves(tree))


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    return optree.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def treedef_children(treedef):
    return treedef.children()


def treedef_is_leaf(treedef):
    return treedef.is_leaf()


def all_leaves(iterable):
    return all(tree_structure(x).is_leaf() for x in iterable)


def register_pytree_node(nodetype, flatten_func, unflatten_func):
    """Register a container: flatten(x) -> (children, aux); unflatten(aux, children) -> x."""
    optree.register_pytree_node(nodetype, flatten_func, unflatten_func, namespace=NAMESPACE)


def register_pytree_node_class(cls):
    """Class decorator: uses cls.tree_flatten() and cls.tree_unflatten(aux, children)."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    def flatten(x):
        keyed, aux = flatten_with_keys(x)
        return [c for _, c in keyed], aux, [k for k, _ in keyed]
    optree.register_pytree_node(nodetype, flatten, unflatten_func, namespace=NAMESPACE)


def register_dataclass(cls, data_fields, meta_fields):
    def flatten(x):
        return ([getattr(x, f) for f in data_fields],
                tuple(getattr(x, f) for f in meta_fields), list(data_fields))

    def unflatten(meta, children):
        kwargs = dict(zip(data_fields, children))
        kwargs.update(zip(meta_fields, meta))
        return cls(**kwargs)
    optree.register_pytree_node(cls, flatten, unflatten, namespace=NAMESPACE)
    return cls


# --- key paths, as JAX names them ---

class SequenceKey:
    __slots__ = ("idx",)

    def __init__(self, idx):
        self.idx = idx

    def __str__(self):
        return f"[{self.idx}]"

    __repr__ = lambda self: f"SequenceKey(idx={self.idx})"

    def __eq__(self, other):
        return type(other) is SequenceKey and other.idx == self.idx

    def __hash__(self):
        return hash(("seq", self.idx))


class DictKey:
    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def __str__(self):
        return f"[{self.key!r}]"

    __repr__ = lambda self: f"DictKey(key={self.key!r})"

    def __eq__(self, other):
        return type(other) is DictKey and other.key == self.key

    def __hash__(self):
        return hash(("dict", self.key))


class GetAttrKey:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f".{self.name}"

    __repr__ = lambda self: f"GetAttrKey(name={self.name!r})"

    def __eq__(self, other):
        return type(other) is GetAttrKey and other.name == self.name

    def __hash__(self):
        return hash(("attr", self.name))


def _key(entry):
    if isinstance(entry, int):
        return SequenceKey(entry)
    if isinstance(entry, str) and entry.isidentifier():
        return DictKey(entry)
    return DictKey(entry)


def keystr(path):
    return "".join(str(k) for k in path)


class Partial(functools.partial):
    """functools.partial that is a pytree: its arguments are leaves, the function is static."""


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]))
