"""`jax._src.core`: the names of jax's core module that libraries import, mapped onto
funcgraph.core, funcgraph.ir and funcgraph.extend.core: Primitive (with def_impl /
def_abstract_eval), ShapedArray, AbstractValue, Tracer, Trace, Jaxpr and friends,
eval_jaxpr, get_aval/typeof, mapped_aval/unmapped_aval, find_top_trace, trace_ctx,
pytype_aval_mappings, eval_context, and the am-I-under-a-transformation helpers."""
import abc
import contextlib
import typing

from funcgraph import core as _core
from funcgraph import shape_poly as _shape_poly
from funcgraph.core import (  # noqa: F401
    ConcretizationTypeError, Primitive, ShapedArray, Trace, Tracer, get_aval,
    pytype_aval_mappings)
from funcgraph.extend.core import (  # noqa: F401
    ClosedJaxpr, DropVar, Effect, Effects, Jaxpr, JaxprEqn, JaxprTypeError, Literal, Var,
    check_jaxpr, concrete_or_error, find_top_trace, gensym, jaxpr_as_fun, jaxprs_in_params,
    mapped_aval, new_jaxpr_eqn, no_effects, primal_dtype_to_tangent_dtype, subjaxprs,
    unmapped_aval, valid_jaxtype)
from funcgraph.interpreters.batching import BatchTrace
from funcgraph.interpreters.eval import ensure_compile_time_eval, eval_jaxpr, eval_trace  # noqa: F401
from funcgraph.interpreters.staging import StagingTrace
from funcgraph.shape_poly import InconclusiveDimensionOperation, is_constant_shape  # noqa: F401

typeof = get_aval
jaxpr_as_fn = jaxpr_as_fun
Value = typing.Any
ParamDict = dict
Atom = Var | Literal
no_axis_name = object()
literalable_types = set()
custom_typechecks = {}
aval_mapping_handlers = {}


class AbstractValue(abc.ABC):
    """The base class of abstract values: isinstance answers for funcgraph's avals."""


AbstractValue.register(ShapedArray)


def raise_to_shaped(aval, weak_type=None):
    """The aval itself (funcgraph has only shaped avals), its weak type replaced if given."""
    return aval if weak_type is None else aval.update(weak_type=weak_type)


def is_constant_dim(d):
    return not _shape_poly.is_symbolic_dim(d)


def is_concrete(x):
    return _core.concrete_value(x) is not None


def max_dim(d1, d2):
    return max(d1, d2)


def min_dim(d1, d2):
    return min(d1, d2)


@contextlib.contextmanager
def eval_context():
    """Primitives bound in the block run now, on concrete values."""
    with _core.set_trace(eval_trace):
        yield


class _TraceContext:
    """jax's trace_ctx: the current trace (per thread) and whether it is the bottom one."""

    @property
    def trace(self):
        return _core.current.trace

    def is_top_level(self):
        return _core.current.trace is eval_trace


trace_ctx = _TraceContext()


def trace_state_clean():
    """Whether no transformation is tracing now (the current trace is eager evaluation)."""
    return trace_ctx.is_top_level()


def unsafe_get_current_trace():
    return _core.current.trace


def _trace_stack():
    trace = _core.current.trace
    while trace is not None:
        yield trace
        trace = trace.parent


def unsafe_am_i_under_a_jit():
    return any(isinstance(t, StagingTrace) for t in _trace_stack())


def unsafe_am_i_under_a_vmap():
    return any(isinstance(t, BatchTrace) for t in _trace_stack())


def unsafe_get_axis_names():
    return [t.axis.name for t in _trace_stack()
            if isinstance(t, BatchTrace) and t.axis.name is not None]


def nonempty_axis_env():
    return bool(unsafe_get_axis_names())


class OpaqueTraceState:
    """What get_opaque_trace_state returns: equal for the same current trace."""
    __slots__ = ("_trace",)

    def __init__(self, trace):
        self._trace = trace

    def __eq__(self, other):
        return isinstance(other, OpaqueTraceState) and self._trace is other._trace

    def __hash__(self):
        return id(self._trace)


def get_opaque_trace_state(convention=None):
    del convention
    return OpaqueTraceState(_core.current.trace)


def concrete_aval(x):
    return get_aval(x)


def canonicalize_shape(shape, context=""):
    try:
        return tuple(int(d) if is_constant_dim(d) else d for d in shape)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {shape!r}{context}.") from None


def __getattr__(name):
    for module in (_core,):
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module 'jax._src.core' has no attribute {name!r}")
