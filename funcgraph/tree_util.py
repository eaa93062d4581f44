"""Pytrees with JAX's API, over optree (fast C++ flattening on the dispatch path).

Containers: tuples, lists, dicts (keys sorted), None (no leaves), namedtuples,
OrderedDict, defaultdict, deque, and classes registered here.  Key paths use JAX's key
types: DictKey for mappings, SequenceKey for lists and tuples, GetAttrKey for
namedtuple and dataclass fields, FlattenedIndexKey for classes registered without keys."""
import collections
import dataclasses
import functools
from typing import Any, TypeVar

import optree

NAMESPACE = "funcgraph"

PyTreeDef = optree.PyTreeSpec

KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyPath = tuple[KeyEntry, ...]

_MISSING = object()

# Classes registered with key paths: their flatten functions give JAX key objects.
_KEYED_TYPES = set()


def tree_flatten(tree, is_leaf=None):
    leaves, treedef = optree.tree_flatten(tree, is_leaf, none_is_leaf=False,
                                          namespace=NAMESPACE)
    return leaves, _canonical(treedef)


def tree_unflatten(treedef, leaves):
    return optree.tree_unflatten(treedef, leaves)


def tree_leaves(tree, is_leaf=None):
    return optree.tree_leaves(tree, is_leaf, none_is_leaf=False, namespace=NAMESPACE)


def tree_structure(tree, is_leaf=None):
    return _canonical(optree.tree_structure(tree, is_leaf, none_is_leaf=False,
                                            namespace=NAMESPACE))


def tree_map(f, tree, *rest, is_leaf=None):
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others, strict=True)])


# optree rebuilds a dict with its keys in the order the flattened dict had them; jax
# rebuilds it with its keys sorted (the order of its leaves), and refuses keys that do
# not sort.  Treedefs are made canonical (each dict's keys sorted) once per structure:
# treedefs that differ only in their dicts' key order are equal, so one entry serves
# them all.
_canonical_treedefs = {}
_CANONICAL_KEPT = 4096
_LEAF = optree.treespec_leaf(none_is_leaf=False, namespace=NAMESPACE)


# An entry is the canonical treedef, or one of these: the treedef has no dict node (it
# is canonical as it is), or it has dict nodes and registered nodes, whose aux data
# may compare equal without being the same (flax's Opaque), so a cached treedef would
# unflatten with another tree's aux data: it is made canonical anew each time.
_ALREADY_CANONICAL, _EACH_TIME = object(), object()


def _canonical(treedef):
    try:
        canonical = _canonical_treedefs.get(treedef)
    except TypeError:  # unhashable aux data of a registered class
        return treedef.transform(_sorted_dict_node)
    if canonical is None:
        kinds = set()
        canonical = treedef.transform(lambda node: kinds.add(node.kind) or
                                      _sorted_dict_node(node))
        entry = canonical
        if optree.PyTreeKind.DICT not in kinds:
            entry = _ALREADY_CANONICAL
        elif optree.PyTreeKind.CUSTOM in kinds:
            entry = _EACH_TIME
        if len(_canonical_treedefs) >= _CANONICAL_KEPT:
            _canonical_treedefs.clear()
        _canonical_treedefs[treedef] = entry
        return treedef if entry is _ALREADY_CANONICAL else canonical
    if canonical is _ALREADY_CANONICAL:
        return treedef
    if canonical is _EACH_TIME:
        return treedef.transform(_sorted_dict_node)
    return canonical


def _sorted_dict_node(node):
    if node.type is not dict:
        return node
    try:
        keys = sorted(node.entries())
    except TypeError:
        raise ValueError("Comparator raised exception while sorting pytree dictionary "
                         "keys.") from None
    return optree.treespec_dict(dict.fromkeys(keys, _LEAF), none_is_leaf=False,
                                namespace=NAMESPACE)


def tree_reduce(function, tree, initializer=_MISSING, is_leaf=None):
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _MISSING:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(operation, tree, *, identity=_MISSING, is_leaf=None):
    """Reduce the leaves with an associative `operation`, as a balanced tree of calls."""
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _MISSING:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    return _reduce_balanced(operation, leaves)


def _reduce_balanced(operation, items):
    if len(items) == 1:
        return items[0]
    middle = (len(items) + 1) // 2
    return operation(_reduce_balanced(operation, items[:middle]),
                     _reduce_balanced(operation, items[middle:]))


def tree_all(tree, *, is_leaf=None):
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """Turn an outer tree of inner trees into an inner tree of outer trees; with
    inner_treedef None, the structure of the first inner tree."""
    if inner_treedef is None:
        first = outer_treedef.flatten_up_to(pytree_to_transpose)[0]
        inner_treedef = tree_structure(first)
    return optree.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """prefix_tree with each leaf repeated over the subtree of full_tree it stands for."""
    return optree.tree_broadcast_prefix(prefix_tree, full_tree, is_leaf, none_is_leaf=False,
                                        namespace=NAMESPACE)


def prefix_leaves(prefix, tree, is_leaf, owner):
    """One leaf of `prefix` (its leaves as is_leaf says) per leaf of `tree`, of which it is
    a tree prefix: the per-leaf form of options like in_shardings or in_specs.  A prefix
    that does not fit is a ValueError naming `owner` ("jit in_shardings")."""
    if is_leaf(prefix):
        return [prefix] * len(tree_leaves(tree))
    heads, prefix_def = tree_flatten(prefix, is_leaf=is_leaf)
    try:
        subtrees = prefix_def.flatten_up_to(tree)
    except (ValueError, TypeError):
        raise ValueError(f"{owner} specification must be a tree prefix of the corresponding "
                         f"value, got specification {prefix!r} for value tree "
                         f"{tree_structure(tree)}") from None
    out = []
    for head, sub in zip(heads, subtrees, strict=True):
        out.extend([head] * len(tree_leaves(sub)))
    return out


def treedef_children(treedef):
    return treedef.children()


def treedef_is_leaf(treedef):
    return treedef.is_leaf()


def treedef_tuple(treedefs):
    """The treedef of a tuple whose elements have the given treedefs."""
    return optree.treespec_tuple(list(treedefs), none_is_leaf=False, namespace=NAMESPACE)


def all_leaves(iterable, is_leaf=None):
    if is_leaf is None:
        return all(tree_structure(x).is_leaf() for x in iterable)
    items = list(iterable)
    return items == tree_leaves(items, is_leaf)


def is_tree_node(typ):
    """Whether instances of the class `typ` are pytree nodes (not leaves)."""
    if not isinstance(typ, type):
        return False
    return (optree.register_pytree_node.get(typ, namespace=NAMESPACE) is not None
            or optree.is_namedtuple_class(typ) or optree.is_structseq_class(typ))


def flatten_one_level(tree):
    """(children, aux data) of the top node of `tree`; ValueError for a leaf."""
    children, metadata, _ = _one_level(tree)
    return children, metadata


def flatten_one_level_with_keys(tree):
    """([(key, child), ...], aux data) of the top node of `tree`."""
    children, metadata, keys = _one_level(tree)
    return list(zip(keys, children, strict=True)), metadata


def _one_level(tree):
    if tree_structure(tree).is_leaf():
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    out = optree.tree_flatten_one_level(tree, none_is_leaf=False, namespace=NAMESPACE)
    metadata = tuple(out.metadata) if isinstance(out.metadata, list) else out.metadata
    return list(out.children), metadata, _child_keys(tree, out.entries)


# --- registration ---

def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
    """Register a container: flatten(x) -> (children, aux); unflatten(aux, children) -> x;
    flatten_with_keys(x) -> ([(key, child), ...], aux) gives its key paths."""
    if flatten_with_keys_func is not None:
        register_pytree_with_keys(nodetype, flatten_with_keys_func, unflatten_func)
        return
    optree.register_pytree_node(nodetype, flatten_func, unflatten_func, namespace=NAMESPACE)


def register_pytree_node_class(cls):
    """Class decorator: uses cls.tree_flatten() and cls.tree_unflatten(aux, children)."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """Register a container whose children have keys: flatten_with_keys(x) ->
    ([(key, child), ...], aux).  (flatten_func, a faster flatten without keys in JAX,
    is not needed: optree flattens with the keys.)"""
    del flatten_func

    def flatten(x):
        keyed, aux = flatten_with_keys(x)
        keyed = list(keyed)
        return [c for _, c in keyed], aux, [k for k, _ in keyed]
    optree.register_pytree_node(nodetype, flatten, unflatten_func, namespace=NAMESPACE)
    _KEYED_TYPES.add(nodetype)


def register_pytree_with_keys_class(cls):
    """Class decorator: cls.tree_flatten_with_keys() and cls.tree_unflatten(aux, children)."""
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten)
    return cls


def register_static(cls):
    """Register a class whose instances are pytree nodes with no children (static values,
    kept in the treedef, so they must be hashable)."""
    optree.register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux,
                                namespace=NAMESPACE)
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """Register a dataclass: data_fields are children, meta_fields static aux data.  Given
    neither, fields marked `metadata={"static": True}` (funcgraph.tree.static) are meta and
    the other init fields data."""
    if data_fields is None and meta_fields is None:
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop_fields]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    elif data_fields is None or meta_fields is None:
        raise TypeError("register_dataclass: give both data_fields and meta_fields, or "
                        "neither (to infer them from the dataclass fields)")
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    keys = [GetAttrKey(f) for f in data_fields]

    def flatten(x):
        return ([getattr(x, f) for f in data_fields],
                tuple(getattr(x, f) for f in meta_fields), keys)

    def unflatten(meta, children):
        kwargs = dict(zip(data_fields, children, strict=True))
        kwargs.update(zip(meta_fields, meta, strict=True))
        return nodetype(**kwargs)
    optree.register_pytree_node(nodetype, flatten, unflatten, namespace=NAMESPACE)
    _KEYED_TYPES.add(nodetype)
    return nodetype


# --- key paths, as JAX names them ---

class _Key:
    """A key path entry: equal to and hashed like the entries of its class with the same
    value."""
    __slots__ = ()
    _field = ""

    def _value(self):
        return getattr(self, self._field)

    def __eq__(self, other):
        return type(other) is type(self) and other._value() == self._value()

    def __hash__(self):
        return hash((type(self).__name__, self._value()))

    def __repr__(self):
        return f"{type(self).__name__}({self._field}={self._value()!r})"


class SequenceKey(_Key):
    __slots__ = ("idx",)
    __match_args__ = ("idx",)
    _field = "idx"

    def __init__(self, idx):
        self.idx = idx

    def __str__(self):
        return f"[{self.idx!r}]"


class DictKey(_Key):
    __slots__ = ("key",)
    __match_args__ = ("key",)
    _field = "key"

    def __init__(self, key):
        self.key = key

    def __str__(self):
        return f"[{self.key!r}]"


class GetAttrKey(_Key):
    __slots__ = ("name",)
    __match_args__ = ("name",)
    _field = "name"

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f".{self.name}"


class FlattenedIndexKey(_Key):
    """The position of a child of a class registered without keys."""
    __slots__ = ("key",)
    __match_args__ = ("key",)
    _field = "key"

    def __init__(self, key):
        self.key = key

    def __str__(self):
        return f"[<flat index {self.key}>]"


def _child_keys(node, entries):
    """JAX's keys for the children of `node`, from optree's path entries."""
    kind = type(node)
    if kind in _KEYED_TYPES:
        return list(entries)
    if optree.is_namedtuple_class(kind) or optree.is_structseq_class(kind):
        return [GetAttrKey(kind._fields[i]) for i in entries]
    if optree.register_pytree_node.get(kind, namespace="") is None:
        return [FlattenedIndexKey(i) for i in entries]  # a class registered without keys
    if isinstance(node, (dict, collections.OrderedDict, collections.defaultdict)):
        return [DictKey(k) for k in entries]
    return [SequenceKey(i) for i in entries]


def _simple(key):
    for field in ("key", "idx", "name"):
        if hasattr(key, field) and isinstance(key, _Key):
            return str(getattr(key, field))
    return str(key)


def keystr(keys, *, simple=False, separator=""):
    """The path as text: "['a'][0].b", or with simple=True the bare keys ("a", "0",
    "b") joined by separator."""
    if simple:
        return separator.join(_simple(k) for k in keys)
    return separator.join(str(k) for k in keys)


# --- flattening with key paths ---

class _MarkedLeaf:
    """A subtree that a path-taking is_leaf chose as a leaf (unwrapped afterwards)."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _walk(node, path, is_leaf, out):
    """Append (path, leaf) pairs in flattening order; return the tree with the leaves that
    is_leaf(path, x) chose wrapped in _MarkedLeaf."""
    if is_leaf(path, node):
        out.append((path, node))
        return _MarkedLeaf(node)
    if tree_structure(node).is_leaf():
        out.append((path, node))
        return node
    level = optree.tree_flatten_one_level(node, none_is_leaf=False, namespace=NAMESPACE)
    keys = _child_keys(node, level.entries)
    children = [_walk(child, path + (key,), is_leaf, out)
                for key, child in zip(keys, level.children, strict=True)]
    return level.unflatten_func(level.metadata, children)


def _key_of_entry(entry):
    """JAX's key for one of optree's accessor entries."""
    if entry.type in _KEYED_TYPES:
        return entry.entry
    if isinstance(entry, (optree.NamedTupleEntry, optree.StructSequenceEntry)):
        return GetAttrKey(entry.type._fields[entry.entry])
    if isinstance(entry, optree.MappingEntry):
        return DictKey(entry.entry)
    if isinstance(entry, optree.SequenceEntry):
        return SequenceKey(entry.entry)
    return FlattenedIndexKey(entry.entry)


@functools.lru_cache(maxsize=1024)
def _treedef_paths(treedef):
    return [tuple(_key_of_entry(e) for e in accessor) for accessor in treedef.accessors()]


def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """([(key path, leaf), ...], treedef)."""
    if not is_leaf_takes_path:
        # optree's C flattening; the paths depend on the treedef alone and are cached
        # (argument names of every jit trace come from here).
        leaves, treedef = tree_flatten(tree, is_leaf)
        try:
            paths = _treedef_paths(treedef)
        except TypeError:  # unhashable aux data
            paths = _treedef_paths.__wrapped__(treedef)
        return list(zip(paths, leaves, strict=True)), treedef
    out = []
    marked = _walk(tree, (), is_leaf, out)
    return out, tree_structure(marked, is_leaf=lambda x: type(x) is _MarkedLeaf)


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """[(key path, leaf), ...]."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """tree_map where f also receives each leaf's key path first."""
    keyed, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten(f(path, leaf, *xs)
                             for (path, leaf), *xs in zip(keyed, *others, strict=True))


class Partial(functools.partial):
    """functools.partial that is a pytree: its arguments are leaves, the function is static.
    A functools.partial given as the function stays whole (its arguments static), where
    functools.partial would merge its arguments into this one's, as in jax."""

    def __new__(cls, func, *args, **kwargs):
        if isinstance(func, functools.partial):
            func = _WholePartial(func)
        return super().__new__(cls, func, *args, **kwargs)


class _WholePartial:
    """A functools.partial behind a plain callable (equal and hashed as the partial is:
    by identity)."""
    __slots__ = ("partial",)

    def __init__(self, partial):
        self.partial = partial

    def __call__(self, *args, **kwargs):
        return self.partial(*args, **kwargs)

    def __eq__(self, other):
        return type(other) is _WholePartial and self.partial is other.partial

    def __hash__(self):
        return hash(self.partial)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]))
