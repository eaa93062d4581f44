"""funcgraph.debug: seeing values inside transformed code, with JAX's API.

    fg.debug.print("x = {x}", x=x)      # prints the concrete value, under jit/vmap/grad too
    fg.debug.callback(fn, x)            # calls fn(x) on the concrete value
    fg.debug.breakpoint()               # pdb over the caller's locals, made concrete

Each is a host callback (funcgraph.primitives.callbacks): eagerly it runs at once; in a
compiled program it runs when the program does (call fg.effects_barrier() to wait for
it).  Under vmap it runs once per element; under grad/jvp it sees the primal values and
no derivative flows through it.  With ordered=True the callbacks run in program order.

Beyond JAX: `fg.debug.find_nonfinite(f)(*args)` names the first equation that makes a
NaN or inf (funcgraph.debugging.nonfinite; also in funcgraph.inspect)."""
import pdb
import string
import sys

import numpy as np

from funcgraph.callback import split_callback_args
from funcgraph.debugging.nonfinite import NonfiniteReport, find_nonfinite
from funcgraph.primitives.callbacks import (
    FlatCallback, FormatChecker, debug_callback_p, debug_effect, debug_print_p,
    ordered_debug_effect)
from funcgraph.sharding_display import visualize_array_sharding, visualize_sharding

__all__ = ["NonfiniteReport", "breakpoint", "callback", "find_nonfinite", "print",
           "visualize_array_sharding", "visualize_sharding"]

_format_checker = FormatChecker()


def _debug_print(fmt, *args, ordered=False, partitioned=False, skip_format_check=False,
                 **kwargs):
    if not skip_format_check:
        _format_checker.format(fmt, *args, **kwargs)
    has_placeholders = False
    if fmt:
        _, field_name, *_ = next(iter(string.Formatter().parse(fmt)))
        has_placeholders = field_name is not None
    in_tree, dynamic, static = split_callback_args(args, kwargs)
    debug_print_p.bind(*dynamic, fmt=fmt, has_placeholders=has_placeholders, in_tree=in_tree,
                       np_printoptions=tuple(np.get_printoptions().items()),
                       ordered=bool(ordered), partitioned=bool(partitioned),
                       static_args=static)


def debug_print(fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False,
                **kwargs):
    """Print fmt.format(*args, **kwargs) with the concrete values (str.format rules), in
    any transformed function.  `debug.print(ordered=True)(fmt, ...)` is the two-call
    form.  Pass a plain string, not an f-string: formatting happens when values exist."""
    options = dict(ordered=ordered, partitioned=partitioned,
                   skip_format_check=skip_format_check)
    if fmt is not None:
        _debug_print(fmt, *args, **options, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"debug_print received unexpected arguments in the two-call form: "
                        f"{args=} {kwargs=}")
    return lambda fmt, *a, **k: _debug_print(fmt, *a, **options, **k)


def _debug_callback(fun, *args, ordered=False, partitioned=False, **kwargs):
    if not callable(fun):
        raise TypeError(f"first argument to jax.debug.callback must be callable, but got an "
                        f"object of type {type(fun)}")
    in_tree, dynamic, static = split_callback_args(args, kwargs)
    debug_callback_p.bind(*dynamic, callback=FlatCallback(fun, in_tree, static),
                          effect=ordered_debug_effect if ordered else debug_effect,
                          partitioned=bool(partitioned))


def debug_callback(callback=None, *args, ordered=False, partitioned=False, **kwargs):
    """Call callback(*args, **kwargs) for its side effect on the concrete values (funcgraph
    Arrays), in any transformed function; it returns nothing.  `debug.callback(
    ordered=True)(fn, ...)` is the two-call form."""
    if callback is not None:
        _debug_callback(callback, *args, ordered=ordered, partitioned=partitioned, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"debug_callback received unexpected arguments in the two-call form: "
                        f"{args=} {kwargs=}")
    return lambda fun, *a, **k: _debug_callback(fun, *a, ordered=ordered,
                                                partitioned=partitioned, **k)


def _open_debugger(frame_globals, local_values):
    """pdb at a statement run over the caller's locals (their concrete values); `c`
    continues the program."""
    pdb.Pdb().run("pass", dict(frame_globals), dict(local_values))


def debug_breakpoint(*, backend=None, filter_frames=True, num_frames=None, ordered=False,
                     token=None, **kwargs):
    """Stop in pdb where it is called, with the caller's local variables bound to their
    concrete values (traced arrays included: under jit the debugger opens when the
    compiled program reaches this point)."""
    caller = sys._getframe(1)
    frame_globals = caller.f_globals
    in_tree, dynamic, static = split_callback_args((), dict(caller.f_locals))
    del caller
    _debug_callback(FlatCallback(lambda **values: _open_debugger(frame_globals, values),
                                 in_tree, static), *dynamic, ordered=ordered)
    return token


print = debug_print
callback = debug_callback
breakpoint = debug_breakpoint
