"""`jax.api_util`: the helpers jax's transformations use to flatten a WrappedFun over
pytrees and describe it: flatten_fun, flatten_fun_nokwargs, debug_info, argnums_partial,
donation_vector, rebase_donate_argnums, flatten_axes, shaped_abstractify, safe_map."""
import functools
import inspect

import numpy as np

from funcgraph import core, tree_util
from funcgraph.transforms import api_util as _own

from .extend import linear_util as lu


@lu.transformation_with_aux2
def flatten_fun(f, store, in_tree, *args_flat):
    """f over pytrees as a function of the leaves of (args, kwargs) (structure in_tree);
    the output tree lands in the store."""
    args, kwargs = tree_util.tree_unflatten(in_tree, list(args_flat))
    out_flat, out_tree = tree_util.tree_flatten(f(*args, **kwargs))
    store.store(out_tree)
    return out_flat


@lu.transformation_with_aux2
def flatten_fun_nokwargs(f, store, in_tree, *args_flat):
    """As flatten_fun, with in_tree the structure of the positional args alone."""
    args = tree_util.tree_unflatten(in_tree, list(args_flat))
    out_flat, out_tree = tree_util.tree_flatten(f(*args))
    store.store(out_tree)
    return out_flat


def fun_sourceinfo(fun):
    """'name at file:line' of fun (partials and decorators unwrapped), or its name."""
    while isinstance(fun, functools.partial):
        fun = fun.func
    fun = inspect.unwrap(fun)
    code = getattr(fun, "__code__", None)
    name = getattr(fun, "__name__", None)
    if code is None or name is None:
        return name or "<unknown>"
    return f"{name} at {code.co_filename}:{code.co_firstlineno}"


def debug_info(traced_for, fun, args, kwargs, *, static_argnums=(), static_argnames=(),
               result_paths_thunk=None, sourceinfo=None, signature=None):
    """The DebugInfo of tracing fun on example (args, kwargs): what for, fun's name and
    source, and the name of each non-static flat argument."""
    del signature
    known = getattr(fun, "__fun_debug_info__", None)
    if known is not None:
        return known
    static = {i % len(args) if args else i for i in static_argnums}
    positions = [i for i in range(len(args)) if i not in static]
    dyn_kwargs = {k: v for k, v in (kwargs or {}).items() if k not in set(static_argnames)}
    try:
        names = tuple(_own.arg_names(fun, [args[i] for i in positions], dyn_kwargs,
                                     positions))
    except Exception:
        names = None
    return lu.DebugInfo(traced_for, sourceinfo or fun_sourceinfo(fun), names,
                        result_paths_thunk)


def _index_tuple(nums):
    return (nums,) if isinstance(nums, int) else tuple(nums)


class _Static:
    """A static argument held by argnums_partial: compared by type and value."""
    __slots__ = ("val",)

    def __init__(self, val):
        self.val = val

    def __hash__(self):
        return hash(self.val)

    def __eq__(self, other):
        return type(other) is _Static and type(self.val) is type(other.val) \
            and self.val == other.val


class _Unhashable(_Static):
    __slots__ = ()

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


@lu.transformation2
def _argnums_partial(f, dyn_argnums, fixed_args, *dyn_args, **kwargs):
    fixed = iter(fixed_args)
    dyn = dict(zip(dyn_argnums, dyn_args))
    args = [dyn[i] if i in dyn else next(fixed).val
            for i in range(len(fixed_args) + len(dyn_args))]
    return f(*args, **kwargs)


def argnums_partial(f, dyn_argnums, args, require_static_args_hashable=True):
    """(f with the arguments not in dyn_argnums fixed to their values in args, the
    dynamic args)."""
    n = len(args)
    dyn_argnums = tuple(sorted(i % n for i in _index_tuple(dyn_argnums)))
    fixed = []
    for i, arg in enumerate(args):
        if i in dyn_argnums:
            continue
        if not require_static_args_hashable:
            fixed.append(_Unhashable(arg))
            continue
        try:
            hash(arg)
        except TypeError:
            raise ValueError(
                f"Non-hashable static arguments are not supported, as this can lead to "
                f"unexpected cache-misses. Static argument (index {i}) of type "
                f"{type(arg)} for function {f.__name__} is non-hashable.") from None
        fixed.append(_Static(arg))
    return (_argnums_partial(f, dyn_argnums, tuple(fixed)),
            tuple(args[i] for i in dyn_argnums))


def donation_vector(donate_argnums, donate_argnames, in_tree, kws=True):
    """One bool per leaf of (args, kwargs) (or of args alone without kws): donated?"""
    if kws:
        args_tree, kwargs_tree = tree_util.treedef_children(in_tree)
    else:
        args_tree, kwargs_tree = in_tree, None
    out = []
    for i, child in enumerate(tree_util.treedef_children(args_tree)):
        out.extend([i in donate_argnums] * child.num_leaves)
    if kwargs_tree is not None:
        keys = tree_util.tree_unflatten(kwargs_tree, [None] * kwargs_tree.num_leaves)
        for key, child in zip(sorted(keys), tree_util.treedef_children(kwargs_tree)):
            out.extend([key in donate_argnames] * child.num_leaves)
    return tuple(out)


def rebase_donate_argnums(donate_argnums, static_argnums):
    """donate_argnums renumbered as positions among the non-static arguments."""
    static = sorted(set(static_argnums))
    out = []
    for d in sorted(set(donate_argnums)):
        if d in static:
            raise ValueError(f"`static_argnums` {static} and `donate_argnums` "
                             f"{sorted(set(donate_argnums))} cannot intersect.")
        out.append(d - sum(s < d for s in static))
    return tuple(out)


def flatten_axes(name, treedef, axis_tree, *, kws=False, tupled_args=False):
    """The axis spec axis_tree (ints and Nones at its leaves, a tree prefix of treedef)
    broadcast to one entry per leaf of treedef."""
    del kws, tupled_args
    dummy = tree_util.tree_unflatten(treedef, [object()] * treedef.num_leaves)
    return tree_util.prefix_leaves(axis_tree, dummy, lambda x: x is None, name)


def shaped_abstractify(x):
    """The ShapedArray of a value: an array, Python scalar or anything with a shape and
    dtype (a ShapeDtypeStruct)."""
    try:
        return core.get_aval(x)
    except TypeError:
        if hasattr(x, "shape") and hasattr(x, "dtype"):
            return core.ShapedArray(tuple(x.shape), np.dtype(x.dtype),
                                    bool(getattr(x, "weak_type", False)))
        raise


def safe_map(f, *args):
    """map over lists that must have the same length."""
    args = [list(a) for a in args]
    n = len(args[0])
    for a in args[1:]:
        if len(a) != n:
            raise AssertionError(f"length mismatch: {[len(a) for a in args]}")
    return list(map(f, *args))


def safe_zip(*args):
    return core.safe_zip(*args)
