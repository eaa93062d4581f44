"""What every public transformation does first: flatten a function over pytrees into
one over leaves, and name the leaves for error messages."""
import inspect

from funcgraph import core, tree_util
from funcgraph.interpreters.staging import DebugInfo


class Store:
    """What a flattened function learns when it runs: its output tree and its aux
    output (for has_aux)."""
    __slots__ = ("out_tree", "aux")

    def __init__(self):
        self.out_tree = None
        self.aux = None


def flatten_fun(fun, in_tree, has_aux=False, post=None):
    """fun(*args, **kwargs) over pytrees -> (flat(*leaves) -> output leaves, store).

    in_tree is the structure of (args tuple, kwargs dict).  With has_aux, fun returns
    (output, aux) and aux lands in the store; `post(aux)` maps it first when given."""
    store = Store()

    def flat(*leaves):
        args, kwargs = tree_util.tree_unflatten(in_tree, list(leaves))
        out = fun(*args, **kwargs)
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError("a function with has_aux=True must return a pair (output, aux), "
                                f"got {type(out).__name__}")
            out, aux = out
            store.aux = aux if post is None else post(aux)
        out_leaves, store.out_tree = tree_util.tree_flatten(out)
        return out_leaves
    return flat, store


def flatten_args(args, kwargs=None):
    """(leaves, in_tree) of a call's positional and keyword arguments."""
    return tree_util.tree_flatten((tuple(args), dict(kwargs or {})))


def fun_name(fun):
    return getattr(fun, "__name__", type(fun).__name__)


def arg_names(fun, args, kwargs=None, positions=None):
    """A name for every leaf of (args, kwargs): the parameter name plus its tree path,
    e.g. "params['w']" (positions past the signature are "args[i]").  `positions` gives
    each arg's parameter index when some (static) arguments are left out."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                        p.POSITIONAL_OR_KEYWORD)]
    names = []
    positions = range(len(args)) if positions is None else positions
    for i, arg in zip(positions, args):
        base = positional[i] if i < len(positional) else f"args[{i}]"
        names.extend(base + tree_util.keystr(path)
                     for path, _ in tree_util.tree_flatten_with_path(arg)[0])
    for key in sorted(kwargs or {}):
        names.extend(key + tree_util.keystr(path)
                     for path, _ in tree_util.tree_flatten_with_path(kwargs[key])[0])
    return names


def debug_info(what, fun, args, kwargs=None, positions=None):
    """The DebugInfo of tracing fun on (args, kwargs) for the transformation `what`."""
    return DebugInfo(what, fun_name(fun), core.function_location(fun),
                     arg_names(fun, args, kwargs, positions))
