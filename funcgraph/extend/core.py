"""The jaxpr object model and primitives under `jax.extend.core`'s names, for custom
interpreters written as in JAX's "Writing custom interpreters" tutorial:
`closed.jaxpr.eqns`, `eqn.primitive.bind(*invals, **eqn.params)`, `type(v) is Literal`,
`v.aval`, `closed.literals`."""
import functools

import numpy as np

from funcgraph import core, dtypes
from funcgraph.array import Array
from funcgraph.core import ConcretizationTypeError, Primitive, SourceInfo, Tracer, get_aval
from funcgraph.interpreters.eval import eval_jaxpr
from funcgraph.ir import (ClosedJaxpr, DropVar, Effect, IRTypeError as JaxprTypeError,
                          Jaxpr, JaxprEqn, Literal, NO_EFFECTS as no_effects, Var,
                          typecheck as check_jaxpr)

Effects = frozenset

# The types of concrete arrays a primitive accepts as operands.
array_types = frozenset({np.ndarray, np.generic, Array})


def jaxpr_as_fun(closed_jaxpr, *args):
    """The function a ClosedJaxpr computes (flat lists in and out), curried as JAX's is:
    `jaxpr_as_fun(closed)(*args)`, or `jaxpr_as_fun(closed, *args)()`."""
    return functools.partial(eval_jaxpr, closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)


def new_jaxpr_eqn(invars, outvars, primitive, params, effects=no_effects, source_info=None,
                  ctx=None):
    """A new equation `outvars = primitive[params] invars`.  Its effects follow from the
    primitive and params, so `effects` and `ctx` are accepted for JAX's signature only."""
    del effects, ctx
    source = source_info if isinstance(source_info, SourceInfo) else None
    return JaxprEqn(primitive, list(invars), list(outvars), dict(params), source)


def gensym(suffix=""):
    """A maker of fresh variables: `gensym()(aval)` (names are given when printing)."""
    del suffix
    return Var


def jaxprs_in_params(params):
    """The Jaxprs held in an equation's params (ClosedJaxprs unwrapped)."""
    for value in params.values():
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, Jaxpr):
                yield item
            elif isinstance(item, ClosedJaxpr):
                yield item.jaxpr


def subjaxprs(jaxpr):
    """The Jaxprs in the params of `jaxpr`'s equations (not recursively)."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)


def concrete_or_error(force, val, context=""):
    """`force(val)` on val's concrete value; a ConcretizationTypeError naming `context`
    when val is traced without one."""
    force = force if force is not None else (lambda x: x)
    if isinstance(val, Tracer):
        value = val.to_concrete_value()
        if value is None:
            raise ConcretizationTypeError(
                f"a concrete value is required but a traced value of type "
                f"{val.aval.str_short()} was found{': ' + context if context else ''}")
        return force(value)
    return force(val)


def valid_jaxtype(x):
    """Whether x is a value funcgraph can trace (an array, NumPy value or Python scalar)."""
    try:
        get_aval(x)
    except TypeError:
        return False
    return True


def primal_dtype_to_tangent_dtype(primal_dtype):
    """float0 for integer and boolean primals, the primal dtype for inexact ones."""
    primal_dtype = np.dtype(primal_dtype)
    return primal_dtype if dtypes.is_inexact(primal_dtype) else dtypes.float0


def mapped_aval(size, axis, aval):
    """The aval of one slice of `aval` along `axis` (of length `size`); None: unmapped."""
    if axis is None:
        return aval
    if aval.shape[axis] != size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval.str_short()} is not of size {size}")
    return aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1:])


def unmapped_aval(size, axis, aval):
    """The aval of `size` stacked values of `aval` along `axis`; None: unmapped."""
    if axis is None:
        return aval
    return aval.update(shape=aval.shape[:axis] + (size,) + aval.shape[axis:])


def find_top_trace(xs):
    """The trace primitives bound now go to (JAX's: the current trace, whatever xs are)."""
    del xs
    return core.current.trace


class OpaqueTraceState:
    """Which trace is current, comparable with another such record (jax's
    get_opaque_trace_state); it keeps the trace only by a weak reference."""
    __slots__ = ("_ref",)

    def __init__(self, trace):
        import weakref
        self._ref = weakref.ref(trace)

    def __eq__(self, other):
        return isinstance(other, OpaqueTraceState) and self._ref() is other._ref() \
            and self._ref() is not None

    def __hash__(self):
        return hash(id(self._ref()))

    def __repr__(self):
        return f"OpaqueTraceState({self._ref()!r})"


def get_opaque_trace_state(convention=None):
    """A record of the current trace: equal records mean the same trace is current."""
    del convention
    return OpaqueTraceState(core.current.trace)


__all__ = [
    "find_top_trace", "get_opaque_trace_state",
    "ClosedJaxpr", "DropVar", "Effect", "Effects", "Jaxpr", "JaxprEqn", "JaxprTypeError",
    "Literal", "Primitive", "Var", "array_types", "check_jaxpr",
    "concrete_or_error", "gensym", "jaxpr_as_fun", "jaxprs_in_params", "mapped_aval",
    "new_jaxpr_eqn", "no_effects", "primal_dtype_to_tangent_dtype", "subjaxprs",
    "unmapped_aval", "valid_jaxtype",
]
