"""funcgraph.tree_util: JAX's pytree API."""
import collections
import functools

import numpy as np
import pytest

import funcgraph as fg
from funcgraph import tree_util as tu


def test_flatten_unflatten_round_trip():
    tree = {"b": [1, (2, None)], "a": 3}
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves == [3, 1, 2]  # dict keys sorted, None has no leaves
    assert tu.tree_unflatten(treedef, leaves) == tree
    assert treedef.num_leaves == 3


def test_tree_map_and_multiple_trees():
    out = tu.tree_map(lambda x, y: x + y, {"a": 1, "b": (2, 3)}, {"a": 10, "b": (20, 30)})
    assert out == {"a": 11, "b": (22, 33)}


def test_namedtuple_and_ordered_dict():
    Point = collections.namedtuple("Point", "x y")
    tree = collections.OrderedDict(z=Point(1, 2), a=3)
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves == [1, 2, 3]
    assert tu.tree_unflatten(treedef, leaves) == tree


def test_register_pytree_node_class_works_with_jit():
    @tu.register_pytree_node_class
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def tree_flatten(self):
            return (self.a, self.b), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    out = fg.jit(lambda p: Pair(p.b, p.a * 2))(Pair(np.float32(1), np.float32(5)))
    assert isinstance(out, Pair) and float(out.a) == 5 and float(out.b) == 2


def test_register_pytree_node_function_form():
    class Box:
        def __init__(self, value):
            self.value = value
    tu.register_pytree_node(Box, lambda b: ((b.value,), None), lambda aux, ch: Box(*ch))
    assert tu.tree_leaves([Box(1), Box((2, 3))]) == [1, 2, 3]


def test_paths_and_keystr():
    flat, _ = tu.tree_flatten_with_path({"a": [10, 20]})
    assert [tu.keystr(p) for p, _ in flat] == ["['a'][0]", "['a'][1]"]


def test_structure_mismatch_in_tree_map_is_an_error():
    with pytest.raises(ValueError):
        tu.tree_map(lambda x, y: x, [1, 2], [1, 2, 3])


def test_partial_is_a_pytree():
    p = tu.Partial(lambda a, b: a + b, np.float32(1))
    out = fg.jit(lambda f, x: f(x))(p, np.float32(2))
    assert float(out) == 3


def test_partial_of_a_functools_partial_keeps_its_arguments_static():
    """As jax's: Partial(functools.partial(f, a), b) has the leaf b only (flax's lifted
    vjp wraps a partial holding a treedef this way), where functools.partial would merge
    the two argument lists."""
    inner = functools.partial(lambda tag, x, y: (tag, x + y), "static")
    p = tu.Partial(inner, np.float32(1))
    leaves, tree = tu.tree_flatten(p)
    assert leaves == [np.float32(1)]
    assert tu.tree_unflatten(tree, [np.float32(5)])(np.float32(2)) == ("static", 7)
    assert tree == tu.tree_structure(tu.Partial(inner, np.float32(3)))
    assert fg.jit(lambda f, y: f(y)[1])(p, np.float32(2)) == 3
