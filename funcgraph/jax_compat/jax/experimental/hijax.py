"""`jax.experimental.hijax`: the names of jax's "high-level types" API that libraries
define their types with (flax.nnx's hijax Variables): HiPrimitive, HiType,
MutableHiType, AvalQDD/AvalMutableQDD, register_hitype, aval_method/aval_property,
control_flow_allowed_effects, Zero, instantiate_zeros, is_undefined_primal, cur_qdd.

funcgraph has no high-level types: classes can be defined on these names and a
HiPrimitive runs its `impl` eagerly, but binding one under a transformation is an error
(flax uses them only with `flax_hijax_variable`, off by default)."""
from funcgraph.interpreters import eval as _eval
from funcgraph.interpreters import transpose as _transpose
from funcgraph import core as _core
from funcgraph.core import ShapedArray  # noqa: F401
from funcgraph.interpreters import ad_util as _ad_util
from funcgraph.refs import AbstractRef  # noqa: F401
from .._src.core import AbstractValue  # noqa: F401
from .._src.state.types import TransformedRef  # noqa: F401

Zero = _ad_util.Zero


def instantiate_zeros(x):
    return _ad_util.instantiate(x)


def is_undefined_primal(x):
    cls = getattr(_transpose, "UndefinedPrimal", None)
    return cls is not None and isinstance(x, cls)


class HiType(AbstractValue):
    """Base class of high-level types (an aval with methods)."""
    has_qdd = False


class MutableHiType(HiType):
    """Base class of high-level types with quasi-dynamic data."""
    has_qdd = True


class AvalQDD:
    def __init__(self, aval, qdd):
        self.aval = aval
        self.qdd = qdd


class MutableQDD:
    def __init__(self, qdd):
        self.qdd = qdd

    def update(self, qdd):
        self.qdd = qdd


class AvalMutableQDD:
    def __init__(self, aval, mutable_qdd):
        self.aval = aval
        self.mutable_qdd = mutable_qdd


class HiPspec:
    pass


def cur_qdd(x):
    """The current quasi-dynamic data of a value of a mutable high-level type (jax's
    jax.experimental.cur_qdd): its own `cur_qdd()`, on concrete values only."""
    if isinstance(x, _core.Tracer) or _core.current.trace is not _eval.eval_trace:
        raise NotImplementedError(
            "cur_qdd under a transformation: funcgraph has no high-level types "
            "(jax.experimental.hijax); run without them (flax: flax_hijax_variable=False)")
    return x.cur_qdd()


_hitypes = {}


def register_hitype(cls, to_aval):
    """Record how values of `cls` get their type (jax.typeof of them)."""
    _hitypes[cls] = to_aval
    _core.pytype_aval_mappings[cls] = to_aval


class aval_method:
    """A method of a value's high-level type, callable on the value (as jax's)."""

    def __init__(self, fun):
        self.fun = fun

    def __get__(self, obj, cls=None):
        return self.fun if obj is None else self.fun.__get__(obj, cls)


class aval_property(property):
    """A property of a value's high-level type."""


class _EffectTypeSet:
    def __init__(self):
        self._types = set()

    def add_type(self, effect_type):
        self._types.add(effect_type)

    def contains(self, eff):
        return any(isinstance(eff, t) for t in self._types)


control_flow_allowed_effects = _EffectTypeSet()


class HiPrimitive(_core.Primitive):
    """A primitive whose rules are its own methods (impl, abstract_eval, to_lojax, jvp,
    transpose).  funcgraph runs `impl` on concrete values only."""
    __slots__ = ()

    def __init__(self, name):
        super().__init__(name, getattr(type(self), "multiple_results", False))

    def bind(self, *args, **params):
        if _core.current.trace is not _eval.eval_trace:
            raise NotImplementedError(
                f"hijax primitive '{self.name}' under a transformation: funcgraph has no "
                f"high-level types (jax.experimental.hijax); run without them (flax: "
                f"flax_hijax_variable=False)")
        # type(self).impl: funcgraph's Primitive keeps a per-instance `impl` (def_impl)
        # that would hide the subclass's method.
        return type(self).impl(self, *args, **params)


class VJPHiPrimitive(HiPrimitive):
    __slots__ = ()
