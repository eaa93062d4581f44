"""Core: abstract values, primitives, traces, tracers and the trace context.

Every operation is `prim.bind(*args, **params)`, which hands the primitive to
the *current trace*.  A trace is one instance of a transformation (evaluate,
stage to IR, JVP, batch, ...).  It unwraps its own tracers, treats anything
else as a constant, and runs its rule with its parent trace made current, so
nested transformations compose.  Every trace has a unique tag: a tracer is
only ever unwrapped by the trace that made it, which rules out perturbation
confusion between nested derivatives.
"""
import collections
import contextlib
import functools
import gc
import itertools
import operator
import os
import sys
import threading

import numpy as np

from funcgraph import dtypes, shape_poly
from funcgraph.config import config as _config
from funcgraph.native import source as _source  # None where not built


# --- abstract values -------------------------------------------------------

NO_AXES = frozenset()
ManualAxisType = collections.namedtuple("ManualAxisType", "varying unreduced reduced")


# ShapedArray.token's: one int per distinct aval made into a token (itertools.count is
# atomic, so threads racing for one key store a single token).
_aval_tokens = {}
_new_tokens = itertools.count()


def type_sharding(aval):
    """The sharding of a value's type (ShapedArray.sharding): set by funcgraph.sharding."""
    raise NotImplementedError("funcgraph.sharding is not imported")


class ShapedArray:
    """The type of an array: shape, dtype, whether the dtype is weak, and (inside a
    shard_map body traced with check_vma) `vma`, the manual mesh axes along which the
    value may differ between devices."""
    __slots__ = ("shape", "dtype", "weak_type", "vma", "_hash", "_token")

    def __init__(self, shape, dtype, weak_type=False, vma=NO_AXES, sharding=None):
        # `sharding`: jax's sharding in types, accepted for its signature; funcgraph's
        # types carry none (every mesh axis is Auto: XLA propagates shardings).
        if type(shape) is not tuple:  # as JAX's: any sequence of dims
            shape = tuple(shape)
        if isinstance(dtype, (type, str)):  # a scalar type or a name, as JAX accepts
            dtype = np.dtype(dtype)
        self.shape = shape
        self.dtype = dtype
        self.weak_type = weak_type
        self.vma = vma
        self._hash = None
        self._token = None

    @property
    def token(self):
        """An int that equal avals share and unequal ones do not: the jit fast path keys
        calls by it, since hashing and comparing ints is done in C where an aval's
        __hash__ and __eq__ are Python calls."""
        token = self._token
        if token is None:
            key = (self.shape, self.dtype, self.weak_type, self.vma)
            token = _aval_tokens.get(key)
            if token is None:
                token = _aval_tokens.setdefault(key, next(_new_tokens))
            self._token = token
        return token

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        size = 1
        for d in self.shape:
            size *= d
        return size

    @property
    def sharding(self):
        """jax's sharding in types: here always replicated over the abstract mesh of the
        context (funcgraph's types carry no sharding; an empty mesh when none is set).
        funcgraph.sharding, a layer above, fills the hook."""
        return type_sharding(self)

    @property
    def manual_axis_type(self):
        """JAX's record of the value's state along manual mesh axes (funcgraph tracks
        only which axes it varies over)."""
        return ManualAxisType(self.vma, NO_AXES, NO_AXES)

    def update(self, shape=None, dtype=None, weak_type=None, vma=None):
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type,
                           self.vma if vma is None else vma)

    def to_tangent_aval(self):
        """The type of this value's tangents: itself for inexact dtypes, float0 else."""
        if dtypes.is_inexact(self.dtype):
            return self
        return ShapedArray(self.shape, dtypes.float0)

    at_least_vspace = to_tangent_aval  # jax's older name

    def strip_weak_type(self):
        return self if not self.weak_type else ShapedArray(self.shape, self.dtype, False,
                                                           self.vma)

    def __eq__(self, other):
        return (type(other) is ShapedArray and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type
                and self.vma == other.vma)

    def __hash__(self):
        h = self._hash
        if h is None:
            h = self._hash = hash((self.shape, self.dtype, self.weak_type))
        return h

    def str_short(self):
        dims = ",".join(map(str, self.shape))
        return f"{dtypes.short_name(self.dtype)}[{dims}]{vma_str(self.vma)}"

    def __repr__(self):
        """jax's: ShapedArray(int32[3]), ShapedArray(float32[], weak_type=True)."""
        dims = ",".join(map(str, self.shape))
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({dtypes.name_of(self.dtype)}[{dims}]{vma_str(self.vma)}{weak})"

    def __str__(self):
        """jax's text of a type: float32[6]{V:i}, ~float32[] when weakly typed (jaxprs
        print the short f32[6])."""
        dims = ",".join(map(str, self.shape))
        weak = "~" if self.weak_type else ""
        return f"{weak}{dtypes.name_of(self.dtype)}[{dims}]{vma_str(self.vma)}"


def vma_str(vma):
    """`{V:i}` / `{V:(i,j)}`, as JAX prints the axes a value varies over."""
    if not vma:
        return ""
    names = sorted(map(str, vma))
    return "{V:" + (names[0] if len(names) == 1 else "(" + ",".join(names) + ")") + "}"


def physical_aval(aval):
    """The aval of the physical array behind a value of an extended dtype (a key array:
    its key data as trailing dimensions); other avals as they are."""
    dtype = aval.dtype
    if not isinstance(dtype, dtypes.ExtendedDType):
        return aval
    return ShapedArray(tuple(aval.shape) + dtype.physical_shape, dtype.physical_dtype,
                       False, aval.vma)


def same_type(a, b):
    """Types agree up to weak typing (the rule the type checker applies)."""
    return a.shape == b.shape and a.dtype == b.dtype


# --- errors ------------------------------------------------------------------

class FuncgraphError(Exception):
    """Base class of funcgraph's user-facing errors."""


class ConcretizationTypeError(FuncgraphError, TypeError):
    """A traced value was used where Python needs a concrete value."""


class TracerArrayConversionError(ConcretizationTypeError):
    """A traced value was converted to a NumPy array (a kind of concretization)."""


class TracerBoolConversionError(ConcretizationTypeError):
    """bool() of a traced value (a Python `if` or `while` on it)."""


class TracerIntegerConversionError(ConcretizationTypeError):
    """int() or __index__ of a traced value (a Python index or size)."""


class UnexpectedTracerError(FuncgraphError):
    """A tracer escaped the transformation that made it."""


class MissingRuleError(FuncgraphError, NotImplementedError):
    """A primitive lacks the rule a transformation needs."""


def missing_rule(prim, rule, hint="not yet implemented"):
    return MissingRuleError(
        f"primitive '{prim.name}' has no {rule} rule ({hint})")


# --- primitives ------------------------------------------------------------

class Primitive:
    """A named operation.  Its rules live in the interpreters' registries; a primitive
    defined outside funcgraph can also give them as JAX's do: `def_impl`,
    `def_abstract_eval`, `def_effectful_abstract_eval` (and jax.interpreters' tables)."""
    __slots__ = ("name", "multiple_results", "impl", "abstract_eval", "__dict__")
    # As jax's: whether the primitive is a plain call of a `call_jaxpr` param (a jax
    # CallPrimitive); funcgraph's calls are pjit, with a `jaxpr` param.
    call_primitive = False

    def __init__(self, name, multiple_results=False):
        self.name = name
        self.multiple_results = multiple_results
        self.impl = functools.partial(_undefined_rule, self, "evaluation (def_impl)")
        self.abstract_eval = functools.partial(_undefined_rule, self,
                                               "abstract evaluation (def_abstract_eval)")

    def def_impl(self, impl):
        """impl(*args, **params) -> output(s): how the primitive runs on concrete values
        (args as given to bind; it may use any funcgraph operation)."""
        self.impl = impl
        rule_tables["impl"][self] = impl
        return impl

    def def_abstract_eval(self, rule):
        """rule(*avals, **params) -> aval (a list of avals with multiple_results)."""
        self.abstract_eval = _with_no_effects(rule)
        shape_rules[self] = _canonical_avals(rule)
        return rule

    def def_effectful_abstract_eval(self, rule):
        """rule(*avals, **params) -> (aval(s), effects).  The equation's effects are those
        the rule gave for the last operands it saw (JAX's effects are per primitive in
        practice)."""
        seen = {}
        self.abstract_eval = rule

        def shape_rule(*avals, **params):
            out, effects = rule(*avals, **params)
            seen["effects"] = frozenset(effects)
            return out
        shape_rules[self] = _canonical_avals(shape_rule)
        rule_tables["effects"][self] = lambda params: seen.get("effects", frozenset())
        return rule

    def is_effectful(self, params):
        rule = rule_tables["effects"].get(self)
        return bool(rule(params)) if rule is not None else False

    def get_bind_params(self, params):
        """The params to bind an equation's primitive with (JAX >= 0.9.2 returns a dict)."""
        return dict(params)

    def bind_with_trace(self, trace, args, params):
        with set_trace(trace):
            return self.bind(*args, **params)

    def bind(self, *args, **params):
        state = current
        if state.vma_axes:
            args = match_vma(self, args, params, state.vma_axes)
        return state.trace.process_primitive(self, args, params)

    def __repr__(self):
        return self.name


def _undefined_rule(prim, rule, *args, **params):
    raise missing_rule(prim, rule)


def _with_no_effects(rule):
    def abstract_eval(*avals, **params):
        return rule(*avals, **params), frozenset()
    return abstract_eval


def _canonical_aval(aval):
    """An aval a rule written for JAX returned, with a tuple shape and a NumPy dtype."""
    if type(aval) is ShapedArray and type(aval.shape) is tuple \
            and isinstance(aval.dtype, np.dtype):
        return aval
    return ShapedArray(tuple(aval.shape), dtypes.canonicalize(np.dtype(aval.dtype)),
                       getattr(aval, "weak_type", False), getattr(aval, "vma", NO_AXES))


def _canonical_avals(rule):
    def shape_rule(*avals, **params):
        out = rule(*avals, **params)
        if isinstance(out, (list, tuple)):
            return [_canonical_aval(a) for a in out]
        return _canonical_aval(out)
    return shape_rule


# The interpreters' tables the methods above fill (core sits below the interpreters):
# rule_tables["impl"] is interpreters.eval's direct_impls, rule_tables["effects"] is
# ir's effect_rules; each module puts its table here when it is imported.
rule_tables = {}


# --- traces and tracers ------------------------------------------------------

_tags = itertools.count()


class Trace:
    """One instance of a transformation.  Subclasses define process_primitive."""
    # How error messages name the transformation ("jit/make_jaxpr tracing", "grad", ...).
    description = "a transformation"

    def __init__(self, parent):
        self.parent = parent
        self.tag = next(_tags)
        self.alive = True

    def process_primitive(self, prim, args, params):
        raise NotImplementedError

    @property
    def main(self):
        """JAX's old name for what identifies a trace: its tag."""
        return self.tag

    def __repr__(self):
        return f"{type(self).__name__}(tag={self.tag})"


class TraceState(threading.local):
    """The trace that `bind` hands primitives to, one per thread: each thread starts at
    the evaluation trace (the class attribute, which funcgraph.interpreters.eval sets
    once with `set_eval_trace`; core cannot import the interpreters), and a
    transformation running in one thread never changes what another thread sees.
    `name_stack` holds the names of the enclosing `named_scope`s (outermost first)."""
    trace = None
    name_stack = ()
    vma_axes = ()


current = TraceState()


def set_eval_trace(trace):
    """Make `trace` the bottom of every thread's trace stack."""
    TraceState.trace = trace


class set_trace:
    """Context manager making `trace` current in this thread (rules run with the parent
    made current)."""
    __slots__ = ("trace", "saved")

    def __init__(self, trace):
        self.trace = trace

    def __enter__(self):
        self.saved = current.trace
        current.trace = self.trace

    def __exit__(self, *exc):
        current.trace = self.saved


class equation_context:
    """Context manager that binds primitives as if from a staged equation: its names
    pushed onto the name stack."""
    __slots__ = ("names", "saved")

    def __init__(self, names):
        self.names = tuple(names)

    def __enter__(self):
        self.saved = current.name_stack
        current.name_stack = self.saved + self.names

    def __exit__(self, *exc):
        current.name_stack = self.saved


class Tracer:
    """A value inside a transformation.  Operators come from funcgraph.numpy."""
    __slots__ = ("_trace", "__weakref__")
    __array_priority__ = 1000

    @property
    def aval(self):
        raise NotImplementedError

    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    @property
    def weak_type(self):
        return self.aval.weak_type

    @property
    def ndim(self):
        return len(self.aval.shape)

    @property
    def size(self):
        return self.aval.size

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object (a 0-d traced array)")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d traced array")
        return (self[i] for i in range(self.aval.shape[0]))

    def to_concrete_value(self):
        """The concrete value this tracer stands for, if one is known (None if not).

        A JVP tracer outside jit carries a concrete primal, so Python control flow,
        float() and NumPy calls on it work, as in JAX; staged and batched values have
        none."""
        return None

    def origin(self):
        """Why the value is not concrete, for error messages (a sentence or '')."""
        return ""

    def _concretization_error(self, what, hint=None, kind=ConcretizationTypeError):
        origin = self.origin()
        hint = hint or ("The value is not known while the function is traced (under jit, "
                        "vmap, control-flow bodies, ...). Use lax.cond or lax.switch for "
                        "branches, lax.while_loop or lax.fori_loop for loops, or mark the "
                        "argument static with jit(..., static_argnums=...).")
        return kind(
            f"{what} was called on a traced value of type {self.aval.str_short()} "
            f"inside {self._trace.description}. {origin + ' ' if origin else ''}{hint}")

    def _concrete(self, what, kind=ConcretizationTypeError):
        value = self.to_concrete_value()
        if value is None:
            raise self._concretization_error(what, kind=kind)
        return value

    # As in JAX: bool(), int(), __index__ and .item() give the concrete value when there
    # is one (a Python `if` on a primal value under grad works); float(), complex() and
    # .tolist() never do, and NumPy conversion is an error, since each would silently drop
    # the derivative of a differentiated value.
    def __bool__(self):
        return bool(self._concrete("bool() (a Python `if`, `while`, `and`, `or` or `not`)",
                                   TracerBoolConversionError))

    def __int__(self):
        return int(self._concrete("int()", TracerIntegerConversionError))

    def __index__(self):
        return operator.index(self._concrete("__index__ (use as a Python index or size)",
                                             TracerIntegerConversionError))

    def item(self, *args):
        return np.asarray(self._concrete(".item()")).item(*args)

    def __float__(self):
        raise self._refused_conversion("float()", "x.astype(float)")

    def __complex__(self):
        raise self._refused_conversion("complex()", "x.astype(complex)")

    def tolist(self):
        raise self._refused_conversion(".tolist()", "x.item() on a concrete scalar")

    def _refused_conversion(self, what, alternative):
        if self.to_concrete_value() is None:
            return self._concretization_error(what)
        return self._concretization_error(
            what, f"It would drop the derivative of a value being differentiated, so it is "
                  f"refused even where the value is known (as in JAX). Use {alternative} "
                  f"instead, or lax.stop_gradient(x) first if no derivative should flow.")

    def __array__(self, dtype=None, copy=None):
        raise TracerArrayConversionError(
            f"numpy.asarray() (the __array__ method) was called on a traced value of type "
            f"{self.aval.str_short()} inside {self._trace.description}. NumPy functions "
            f"cannot follow traced values: use funcgraph.numpy instead of numpy inside "
            f"transformed functions.")

    def __hash__(self):
        raise TypeError(f"unhashable type: traced array {self.aval.str_short()}; "
                        f"static arguments of jit must be hashable concrete values")

    def __repr__(self):
        text = f"Traced<{self.aval.str_short()}>with<{type(self._trace).__name__}>"
        value = self.to_concrete_value()
        return text if value is None else f"{text}(primal={value})"


def concrete_value(x):
    """x itself when it is not a tracer; else the concrete value the tracer stands for,
    or None when it has none."""
    return x.to_concrete_value() if isinstance(x, Tracer) else x


def origin_of(x):
    """For error messages: where a traced value came from ('' if not a tracer)."""
    return x.origin() if isinstance(x, Tracer) else ""


def leaked_tracer_error(tracer):
    return UnexpectedTracerError(
        f"a traced value of type {tracer.aval.str_short()} escaped the transformation "
        f"that created it ({tracer._trace.description}). This happens when a function "
        f"under jit/grad/vmap stores a traced value in a global, a closure or an object "
        f"attribute and it is used after the transformation has returned. Return the "
        f"value from the function instead.")


# --- user source lines -------------------------------------------------------

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
# The files whose frames are not user code: funcgraph's own, plus the paths libraries
# register (jax.extend.source_info_util.register_exclusion).
excluded_source_paths = (_PACKAGE_DIR,)
# file name -> whether it is under excluded_source_paths (every equation asks)
_excluded_files = {}


def exclude_source_path(path):
    """Frames of files under `path` are never an equation's user source line."""
    global excluded_source_paths
    if path not in excluded_source_paths:
        excluded_source_paths = excluded_source_paths + (path,)
        _excluded_files.clear()


def _is_excluded(filename):
    excluded = _excluded_files.get(filename)
    if excluded is None:
        excluded = _excluded_files[filename] = filename.startswith(excluded_source_paths)
    return excluded


class SourceInfo(tuple):
    """(file, line, function) of an equation made by a transformation of another one
    (the transpose of `mul`): it keeps the line of the equation it came from, and says
    how it came from it in `transform` ("transpose of mul")."""

    def __new__(cls, source, transform):
        info = super().__new__(cls, source)
        info.transform = transform
        return info


class _ReplayScope(threading.local):
    """An interpreter replaying the equations of a jaxpr (re-tracing it under a
    transformation, transposing it) sets `frame` to its own frame and `source` to the
    source of the equation it is at: equations bound from inside that frame, with no
    user frame in between, inherit the original user line rather than the line that
    started the transformation."""
    frame = None
    source = None


replay_scope = _ReplayScope()


def user_source_info():
    """(file, line, function) of the innermost frame outside funcgraph, or None (or the
    source of the equation being replayed, see _ReplayScope): the caller's caller's
    frame or one above it.  In C where funcgraph._source is built (the same walk)."""
    scope = replay_scope
    if _source is not None:
        return _source.user_frame(2, _excluded_files, excluded_source_paths, scope.frame,
                                  scope.source)
    return _python_user_source_info(scope)


def _python_user_source_info(scope):
    frame = sys._getframe(3)
    marker = scope.frame
    while frame is not None and _is_excluded(frame.f_code.co_filename):
        if frame is marker and scope.source is not None:
            return scope.source
        frame = frame.f_back
    if frame is None:
        return None
    code = frame.f_code
    return (code.co_filename, frame.f_lineno, code.co_name)



def wraps(wrapped, updated=functools.WRAPPER_UPDATES):
    """functools.wraps that never fails, as jax's: a wrapped callable whose __name__ or
    __doc__ cannot be copied (a library's object standing in for a function, whose
    __name__ is not a string) leaves the wrapper's own; __wrapped__ is always set."""
    def decorate(fun):
        for attr in functools.WRAPPER_ASSIGNMENTS:
            try:
                setattr(fun, attr, getattr(wrapped, attr))
            except (AttributeError, TypeError):
                pass
        for attr in updated:
            try:
                getattr(fun, attr).update(getattr(wrapped, attr, {}))
            except (AttributeError, TypeError):
                pass
        fun.__wrapped__ = wrapped
        return fun
    return decorate


def named_function(fn, name):
    """Give a function made by a factory its public name, in its code object too, so that
    tracebacks and error messages say `sin`, not `fn`."""
    fn.__name__ = fn.__qualname__ = name
    fn.__code__ = fn.__code__.replace(co_name=name, co_qualname=name)
    return fn

def function_location(fun):
    """'file.py:line' where fun (unwrapping decorators) is defined, or None."""
    while hasattr(fun, "__wrapped__"):
        fun = fun.__wrapped__
    code = getattr(fun, "__code__", None)
    if code is None:
        return None
    return f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"


def describe_function(fun):
    """'name at file.py:line' (or just the name) for error messages."""
    name = getattr(fun, "__name__", type(fun).__name__)
    location = function_location(fun)
    return f"{name} at {location}" if location else name


# --- helpers for values ---------------------------------------------------------

# The Python number types, which are weakly typed array values (`type(x) in ...`).
PYTHON_SCALARS = frozenset((int, float, bool, complex))


def is_python_scalar(x):
    return type(x) in PYTHON_SCALARS


_scalar_avals = {}


def aval_of_python_scalar(x):
    key = (type(x), _config.jax_enable_x64)
    aval = _scalar_avals.get(key)
    if aval is None:
        # Python bools are not weak in JAX: bool is the bottom of the lattice anyway.
        aval = _scalar_avals[key] = ShapedArray((), dtypes.python_scalar_dtype(x),
                                                type(x) is not bool)
    return aval


_scalar_shaped = {}


def scalar_aval(dtype, weak_type):
    """The (shared) aval of a rank-0 value."""
    key = (dtype, weak_type)
    aval = _scalar_shaped.get(key)
    if aval is None:
        aval = _scalar_shaped[key] = ShapedArray((), dtype, weak_type)
    return aval


def aval_of_numpy(x):
    return ShapedArray(x.shape, dtypes.canonicalize(x.dtype), False)


def safe_zip(*lists):
    n = len(lists[0])
    for other in lists[1:]:
        if len(other) != n:
            raise ValueError(f"length mismatch: {[len(x) for x in lists]}")
    return list(zip(*lists))


def canonical_numpy(x):
    """x's value as a fresh NumPy array of funcgraph's canonical dtype: a copy funcgraph
    owns, so that writing to the caller's array later cannot change a funcgraph Array."""
    x = np.asarray(x)
    return np.array(x, dtype=dtypes.canonicalize(x.dtype), copy=True)


# --- abstract evaluation ---------------------------------------------------------
# shape_rules[prim](*avals, **params) -> aval (or a list of avals when the primitive
# has multiple results).  Every primitive has one; tracing and the IR type checker
# both use it.
shape_rules = {}

# The primitives whose shape rules and lowerings handle symbolic dimensions
# (shape_poly.DimExpr, in shapes exported for every batch size); each block adds its own.
symbolic_dims_supported = set()


_symbolic_depth = 0  # how many symbolic_tracing contexts are open (one global read)


class symbolic_tracing:
    """Context manager around tracing with symbolic dimensions: while one is active (in
    any thread), a primitive outside symbolic_dims_supported that meets a symbolic
    dimension is a clear error rather than a wrong shape or a crash inside its rule."""

    def __enter__(self):
        global _symbolic_depth
        _symbolic_depth += 1

    def __exit__(self, *exc):
        global _symbolic_depth
        _symbolic_depth -= 1

    @staticmethod
    def is_active():
        return _symbolic_depth > 0


def _check_symbolic(prim, avals, params):
    if prim in symbolic_dims_supported:
        return
    symbolic = [a.str_short() for a in avals if not shape_poly.is_constant_shape(a.shape)]
    symbolic += [f"{k}={v}" for k, v in params.items() if type(v) is tuple
                 and any(shape_poly.is_symbolic_dim(d) for d in v)]
    if symbolic:
        raise NotImplementedError(
            f"primitive '{prim.name}' does not support symbolic dimensions yet (given "
            f"{', '.join(symbolic)}); export the function with concrete shapes instead "
            f"(docs/export.md lists the primitives that do)")


def abstract_eval(prim, avals, params):
    if _symbolic_depth:
        _check_symbolic(prim, avals, params)
    try:
        rule = shape_rules[prim]
    except KeyError:
        raise missing_rule(prim, "shape") from None
    out = rule(*avals, **params)
    manual = current.vma_axes
    if manual and prim not in keeps_operand_vma:
        out = _with_result_vma(prim, avals, params, out, manual)
    return out


# --- varying manual axes (shard_map with check_vma) ---------------------------------------
# While a shard_map body is traced with check_vma, `current.vma_axes` holds the mesh axes
# (in mesh order) and every aval carries `vma`.  As in JAX, bind first makes the operands of
# a primitive vary alike, marking the others with `pvary` (whose transpose is psum, so the
# gradient of a replicated value used with varying ones is summed over devices), and
# abstract_eval gives the result its vma.  vma_rules[prim](vma, axes) -> (operands' vma,
# result's vma), given the union of the operands' and the manual axes the primitive's
# axis_name names (collectives); without a rule both are the union.  Primitives in
# keeps_operand_vma (those holding sub-jaxprs) keep their operands and take their results'
# vma from their jaxprs.
vma_rules = {}
keeps_operand_vma = set()
_pvary = []  # [pvary primitive], filled by funcgraph.primitives.collectives


def set_pvary_primitive(prim):
    _pvary[:] = [prim]


class vma_scope:
    """Context manager: values traced inside vary over (or are invariant along) the given
    manual mesh axes; () turns the tracking off."""
    __slots__ = ("axes", "saved")

    def __init__(self, axes):
        self.axes = tuple(axes)

    def __enter__(self):
        self.saved = current.vma_axes
        current.vma_axes = self.axes

    def __exit__(self, *exc):
        current.vma_axes = self.saved


def _vma_of(x):
    aval = getattr(x, "aval", None)
    return NO_AXES if aval is None else aval.vma


def _named_axes(params, manual):
    names = params.get("axis_name", ())
    names = names if isinstance(names, tuple) else (names,)
    return frozenset(n for n in names if n in manual)


def _vma_pair(prim, union, params, manual):
    rule = vma_rules.get(prim)
    return (union, union) if rule is None else rule(union, _named_axes(params, manual))


def in_mesh_order(axes, manual):
    return tuple(a for a in manual if a in axes)


def match_vma(prim, args, params, manual):
    """args, the ones varying over fewer axes than the primitive needs marked by pvary."""
    if prim in keeps_operand_vma or not args:
        return args
    vmas = [_vma_of(a) for a in args]
    need = _vma_pair(prim, NO_AXES.union(*vmas), params, manual)[0]
    if all(v == need for v in vmas):
        return args
    pvary = _pvary[0]
    return tuple(a if v == need else
                 pvary.bind(a, axis_name=in_mesh_order(need - v, manual))
                 for a, v in zip(args, vmas, strict=True))


def vary_along(x, vma):
    """x marked by pvary as varying along the tracked manual axes of vma it does not
    vary along yet (zeros made for a varying tangent must vary alike)."""
    axes = in_mesh_order(vma - _vma_of(x), current.vma_axes)
    return _pvary[0].bind(x, axis_name=axes) if axes else x


def _with_result_vma(prim, avals, params, out, manual):
    union = NO_AXES.union(*[a.vma for a in avals])
    vma = _vma_pair(prim, union, params, manual)[1]
    if isinstance(out, (list, tuple)):
        return [a if a.vma == vma else a.update(vma=vma) for a in out]
    return out if out.vma == vma else out.update(vma=vma)


# {type: fn(value) -> aval} (JAX's table of the same name): funcgraph's own value types
# are answered before it, other libraries' types are looked up in it.
pytype_aval_mappings = {np.ndarray: aval_of_numpy,
                        **{t: aval_of_python_scalar for t in PYTHON_SCALARS},
                        **{t: aval_of_numpy for t in set(np.sctypeDict.values())
                           if issubclass(t, (np.number, np.bool_))}}


def get_aval(x):
    """The abstract value of any array-like value (tracer, Array, NumPy, Python scalar)."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    if type(x) in PYTHON_SCALARS:
        return aval_of_python_scalar(x)
    if isinstance(x, (np.ndarray, np.generic)):
        return aval_of_numpy(x)
    to_aval = pytype_aval_mappings.get(type(x))
    if to_aval is not None:
        return to_aval(x)
    raise TypeError(f"argument of type {type(x).__name__} is not a valid array (expected a "
                    f"funcgraph Array, a NumPy array or a Python scalar): {x!r}. Mark "
                    f"non-array arguments of jit static with static_argnums/static_argnames.")


@contextlib.contextmanager
def collections_deferred():
    """Python's cyclic collector runs after every so many allocations, and each full
    collection walks every object of the process: tracing allocates enough to trigger
    many, so a long trace in a process that holds many objects (a notebook, jax's
    modules) turns superlinear.  Tracing, optimizing and lowering a program defer
    collections to the end of the outermost of them (they free little before then)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
