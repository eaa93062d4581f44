"""Library functions that run as one compiled program when called eagerly, as jax's do.

jax defines most of its numpy, nn and scipy functions under `jit`, so an eager call of,
say, `hypot` is one XLA program, and XLA's CPU code generator fuses its arithmetic: a
multiplication feeding an addition becomes one fused multiply-add (rounded once), a
division by a broadcast value a multiplication by its reciprocal.  Run primitive by
primitive, the same function rounds otherwise.  A function decorated here runs through
`jit` when no transformation is tracing (same program, same XLA, same bits) and is
traced inline otherwise, so programs stay flat.
"""
import functools
import inspect

from funcgraph.interpreters.eval import is_eager
from funcgraph.transforms.jit import jit


def compiled_when_eager(static_argnames=()):
    """Decorator: run the function through jit(fn, static_argnames=...) when eager.  A
    static argument given as a list (axis=[0, 2]) is passed as a tuple, hashable as
    jit's static arguments must be, as jax's wrappers do before their jitted bodies."""
    static = frozenset(static_argnames)

    def decorate(fn):
        jitted = jit(fn, static_argnames=static_argnames)
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def call(*args, **kwargs):
            if not is_eager():
                return fn(*args, **kwargs)
            if static and (any(type(v) is list for v in args)
                           or any(type(v) is list for v in kwargs.values())):
                bound = signature.bind(*args, **kwargs)
                for name in static & bound.arguments.keys():
                    if type(bound.arguments[name]) is list:
                        bound.arguments[name] = tuple(bound.arguments[name])
                args, kwargs = bound.args, bound.kwargs
            return jitted(*args, **kwargs)
        return call
    return decorate
