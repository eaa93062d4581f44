"""named_scope and named_call: names for the equations a function stages, as JAX's name
stack.  Printed by `jaxpr.pretty_print(name_stack=True)` and carried into the StableHLO
locations (`loc("outer/inner/mul"(...))`), which XLA keeps as each op's op_name."""
import contextlib

from funcgraph import core


def _check_name(name):
    if not isinstance(name, str):
        raise TypeError(f"named_scope name argument must be a string (got "
                        f"{type(name).__name__}).")


class named_scope(contextlib.ContextDecorator):
    """Context manager (or, as JAX's, a decorator): equations traced inside it carry
    `name` on their name stack."""

    def __init__(self, name):
        _check_name(name)
        self.name = name
        self.entered = []

    def __enter__(self):
        context = core.equation_context((self.name,))
        context.__enter__()
        self.entered.append(context)

    def __exit__(self, *exc):
        self.entered.pop().__exit__(*exc)


def named_call(fun, *, name=None):
    """fun with its equations under the name `name` (default: fun's name).  As in JAX
    0.10 this adds a name-stack entry and no call equation."""
    name = getattr(fun, "__name__", None) if name is None else name
    _check_name(name)

    @core.wraps(fun)
    def named(*args, **kwargs):
        with core.equation_context((name,)):
            return fun(*args, **kwargs)
    return named
