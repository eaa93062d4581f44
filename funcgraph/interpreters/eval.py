"""Evaluation: run primitives on concrete values, and evaluate a jaxpr.

impl_rules[prim](*numpy_values, **params) -> numpy value (or list of them) is
each primitive's NumPy reference implementation.  On the CPU eager calls of small work
use it directly (it starts sooner than a compiled call); large work, and work on values
the device is still computing, runs compiled as jax's eager ops do (XLA's kernels use
every core and the values stay on the device, so the device's queue keeps running while
Python goes on).  Elsewhere than the CPU, or with the flag `funcgraph_eager_numpy` off,
eager primitives run as compiled XLA computations.
An impl that serves only some inputs raises NoHostImpl for the others, which then
run compiled (primitives/host_math.py).
"""
import os
import sys

import numpy as np

from funcgraph import core, dtypes
from funcgraph.array import Array, default_device
from funcgraph.config import config
from funcgraph.ir import Literal
from funcgraph.sharding import SingleDeviceSharding

from funcgraph.native import libm as _libm  # None where not built

impl_rules = {}


class NoHostImpl(NotImplementedError):
    """Raised by an impl for inputs it does not serve: the primitive runs compiled."""


# direct_impls[prim](*args, **params) -> outputs: evaluation rules that take the
# concrete arguments as they come (Arrays stay on the device), for primitives that
# hold sub-jaxprs (calls, control flow) and run them compiled.
direct_impls = {}
core.rule_tables["impl"] = direct_impls  # Primitive.def_impl fills it

# How eager work runs compiled, filled by funcgraph.transforms.jit (the layer that
# compiles; interpreters sit below it):
#   compiled_eval["primitive"](prim, avals, params, args) -> outputs (Arrays) of one
#       primitive on its concrete arguments (Arrays as they are, host values, scalars)
#   compiled_eval["jaxpr"](closed, args) -> outputs of a const-free ClosedJaxpr
#   compiled_eval["placed"](prim, avals, params, args) -> outputs of one primitive run
#       where its committed arguments are (sharded over a mesh, or on another device)
compiled_eval = {}


class _EagerMode:
    """Whether eager primitives use their NumPy impls: only when the default device is a
    CPU (decided once per state of the flags that choose it)."""
    __slots__ = ("key", "device", "platforms", "numpy")

    def __init__(self):
        self.key = self.device = self.platforms = None
        self.numpy = True

    def uses_numpy(self):
        key, device = config.funcgraph_eager_numpy, config.jax_default_device
        if key is not self.key or device is not self.device \
                or config.jax_platforms is not self.platforms:
            self.numpy = key and default_device().platform == "cpu"
            self.key, self.device, self.platforms = key, device, config.jax_platforms
        return self.numpy


eager_mode = _EagerMode()


def to_concrete(x):
    """(host value, aval) of a concrete argument; tracers here have leaked."""
    t = type(x)
    if t is Array:
        return x._value, x.aval
    if t in core.PYTHON_SCALARS:
        aval = core.aval_of_python_scalar(x)
        return np.array(x, aval.dtype), aval
    if isinstance(x, core.Tracer):
        raise core.leaked_tracer_error(x)
    if isinstance(x, (np.ndarray, np.generic)):
        x = core.canonical_numpy(x)
        return x, core.aval_of_numpy(x)
    raise TypeError(f"value of type {type(x).__name__} is not a valid funcgraph array: {x!r}")


def device_values(args, keep_placed=False):
    """(values, avals) of concrete arguments, Arrays on the default device kept as they
    are (no host copy); others (committed elsewhere, sharded) go through the host, or,
    with keep_placed, are kept too (their placement decides where the program runs)."""
    vals, avals = [], []
    for a in args:
        if type(a) is Array and (keep_placed or _on_default_device(a)):
            a._check_alive()
            vals.append(a)
            avals.append(a.aval)
        else:
            v, aval = to_concrete(a)
            vals.append(v)
            avals.append(aval)
    return vals, avals


def _on_default_device(a):
    sharding = a._sharding
    return sharding is None or (type(sharding) is SingleDeviceSharding
                                and sharding._device == default_device())


def _placed_elsewhere(args):
    """Whether an argument is an Array committed off the default device (another device,
    or sharded over several): the primitive then runs where it is."""
    for a in args:
        if type(a) is Array and a._sharding is not None and not _on_default_device(a):
            return True
    return False


# The NumPy path's common case (every argument an uncommitted Array, one output, no
# NaN checks) in C: funcgraph._cdispatch.eager_numpy, set by transforms/fast_dispatch.py
# where that module is built (it returns NotImplemented for other arguments).  None: the
# Python loop below does all of it.
_fast_numpy_op = None

# From this many elements in a result or the first argument, an eager primitive runs compiled
# on the CPU too: there XLA's kernels beat NumPy's, and the result stays on the device for
# the next compiled op instead of being copied there (NumPy's memory is not aligned as
# XLA's, so the device cannot read it in place).
LARGE_OP_SIZE = 1 << 16


def set_fast_numpy_op(op):
    global _fast_numpy_op
    _fast_numpy_op = op


def call_host_impl(impl, values, params):
    """impl(*values, **params) in the floating-point mode of XLA's CPU code, which flushes
    subnormal inputs and results to zero (jax's eager results do): where funcgraph._libm
    is built, on x86 (elsewhere NumPy's IEEE subnormals stay)."""
    if _libm is None:
        return impl(*values, **params)
    return _libm.call_in_xla_mode(impl, tuple(values), params)


def _is_large(avals, out_aval, multiple_results):
    """Whether a result, or the first argument (a reduction's operand), is large."""
    outs = out_aval if multiple_results else [out_aval]
    return any(type(getattr(a, "shape", None)) is tuple and _size(a.shape) >= LARGE_OP_SIZE
               for a in list(outs) + list(avals[:1]))


def _size(shape):
    size = 1
    for d in shape:
        if type(d) is not int:  # a symbolic dimension: no host work is that shape
            return LARGE_OP_SIZE
        size *= d
    return size


def _being_computed(a):
    """Whether the device is still computing this Array (held on the device only)."""
    buf = a._buf
    return buf is not None and not a._deleted and not buf.is_ready()


class EvalTrace(core.Trace):
    """The bottom of every trace stack: primitives run now."""

    def process_primitive(self, prim, args, params):
        direct = direct_impls.get(prim)
        if direct is not None:
            out = direct(*args, **params)
            if config.check_nonfinite:
                check_nonfinite(prim, out if prim.multiple_results else [out])
            return out
        impl = impl_rules.get(prim)
        if impl is None or not eager_mode.uses_numpy():
            return self._run_compiled(prim, args, params)
        rule = core.shape_rules.get(prim)
        if rule is None:
            raise core.missing_rule(prim, "shape")
        try:
            if _fast_numpy_op is not None and not (prim.multiple_results
                                                    or config.check_nonfinite):
                out = _fast_numpy_op(impl, rule, args, params)
                if out is not NotImplemented:
                    return out
            return self._run_numpy(prim, impl, rule, args, params)
        except NoHostImpl:
            return self._run_compiled(prim, args, params)

    def _run_numpy(self, prim, impl, rule, args, params):
        # The NumPy path, the eager hot path: one pass over the arguments gives their host
        # values and avals, or finds one placed off the default device (the primitive
        # then runs compiled, where that argument is).  _cdispatch.eager_numpy does the
        # same for uncommitted Arrays: a change here belongs there too.  An argument the
        # device is still computing sends the primitive there as well: it joins the
        # device's queue, as jax's eager ops do, instead of waiting for the value.
        vals, avals = [], []
        for a in args:
            if type(a) is Array:
                if a._sharding is not None and not _on_default_device(a):
                    return self._run_compiled(prim, args, params)
                value = a._np
                if value is None:
                    if _being_computed(a):
                        return self._run_compiled(prim, args, params)
                    value = a._value
                vals.append(value)
                avals.append(a.aval)
            else:
                value, aval = to_concrete(a)
                vals.append(value)
                avals.append(aval)
        out_aval = rule(*avals, **params)
        if _is_large(avals, out_aval, prim.multiple_results):
            return self._run_compiled(prim, args, params)
        out = call_host_impl(impl, vals, params)
        if config.check_nonfinite:
            check_nonfinite(prim, out if prim.multiple_results else [out])
        if prim.multiple_results:
            return [wrap_value(o, a) for o, a in core.safe_zip(out, out_aval)]
        if type(out) is not Array and out.dtype == out_aval.dtype:
            return Array(out, out_aval)  # the common case of wrap_value, inlined
        return wrap_value(out, out_aval)

    def _run_compiled(self, prim, args, params):
        """A primitive run as a compiled XLA computation (those whose NumPy version would
        round differently from XLA, e.g. exp and log, or any off the CPU).  Arrays are
        passed as they are, so a value that lives on the device stays there; the shape
        rule runs on the compiled path's first call of each type (its trace).  On Arrays
        placed elsewhere (another device, sharded) it runs there, as jit of it would:
        XLA's propagation gives the results' shardings, as jax's eager ops do."""
        if _placed_elsewhere(args):
            vals, avals = device_values(args, keep_placed=True)
            out = compiled_eval["placed_primitive"](prim, avals, params, vals)
        else:
            vals, avals = device_values(args)
            out = compiled_eval["primitive"](prim, avals, params, vals)
        if config.check_nonfinite:
            check_nonfinite(prim, out if prim.multiple_results else [out])
        return out


# --- jax_debug_nans / jax_debug_infs -----------------------------------------------

def nonfinite_kind(value):
    """'nan' or 'inf' if value holds one the debug flags ask about, else None."""
    value = np.asarray(value)
    if value.dtype.kind not in "fcV" or value.dtype.kind == "V" and value.dtype.names:
        return None
    if value.dtype.kind == "V":  # bfloat16 and friends (ml_dtypes)
        value = value.astype(np.float32)
    if config.jax_debug_nans and np.isnan(value).any():
        return "nan"
    if config.jax_debug_infs and np.isinf(value).any():
        return "inf"
    return None


def describe_source(source):
    """' at file.py:12 (f)', with ', in the transpose of mul' for a transposed equation."""
    if not source:
        return ""
    file, line, fn = source
    text = f" at {os.path.basename(file)}:{line} ({fn})"
    transform = getattr(source, "transform", None)
    return text + (f", in the {transform}" if transform else "")


def nonfinite_error(kind, prim_name, source, detail=""):
    """JAX's FloatingPointError message, with where the primitive was called."""
    return FloatingPointError(f"invalid value ({kind}) encountered in {prim_name}"
                              f"{describe_source(source)}{detail}")


def check_nonfinite(prim, outs):
    for out in outs:
        kind = nonfinite_kind(out)
        if kind is not None:
            raise nonfinite_error(kind, prim.name, core.user_source_info())


class ensure_compile_time_eval:
    """Context manager: inside a traced function, primitives applied to concrete values
    only (no tracer among the arguments) are computed now, giving concrete Arrays,
    instead of being staged; those with a traced argument are staged as usual (JAX's
    `jax.ensure_compile_time_eval`)."""

    def __enter__(self):
        self.saved = core.current.trace
        core.current.trace = CompileTimeEvalTrace(self.saved)
        return self

    def __exit__(self, *exc):
        core.current.trace = self.saved


class CompileTimeEvalTrace(core.Trace):
    """Sits on the current trace: concrete work goes to evaluation, the rest to it."""

    def __init__(self, parent):
        super().__init__(parent)
        self.description = getattr(parent, "description", self.description)

    def process_primitive(self, prim, args, params):
        for a in args:
            if isinstance(a, core.Tracer):
                return self.parent.process_primitive(prim, args, params)
        with core.set_trace(eval_trace):
            return eval_trace.process_primitive(prim, args, params)


def wrap_value(value, aval):
    """An eager NumPy result as an Array of its aval (converted to its dtype where NumPy
    gave another)."""
    if type(value) is Array:
        return value
    if value.dtype != aval.dtype and not isinstance(aval.dtype, dtypes.ExtendedDType):
        value = np.asarray(value).astype(aval.dtype)
    return Array(value, aval)


eval_trace = EvalTrace(None)
core.set_eval_trace(eval_trace)


def is_eager():
    """Whether this thread runs primitives now (no transformation is tracing)."""
    return core.current.trace is eval_trace


def literal_value(lit):
    """A literal as an operand: a weakly typed one as a weak Array (its NumPy value alone
    would bind as a strong one, and 2.0 * a weak x would lose x's weak type)."""
    if lit.aval.weak_type or type(lit.val) is np.ndarray and lit.val.dtype.names:
        # (a PRNG key's literal holds its structured host value: an Array of its key type)
        return Array(np.asarray(lit.val), lit.aval)
    return lit.val


def eval_jaxpr(jaxpr, consts, *args):
    """Evaluate a jaxpr by binding each equation's primitive at the current trace."""
    env = {}

    def read(x):
        return literal_value(x) if type(x) is Literal else env[x]

    for v, val in core.safe_zip(jaxpr.constvars, consts):
        env[v] = val
    for v, val in core.safe_zip(jaxpr.invars, args):
        env[v] = val
    # Equations re-staged from here keep the source line and names of the one they replay.
    scope, state = core.replay_scope, core.current
    saved, saved_names = (scope.frame, scope.source), state.name_stack
    scope.frame = sys._getframe()
    try:
        for eqn in jaxpr.eqns:
            scope.source = eqn.source
            state.name_stack = saved_names + eqn.name_stack if eqn.name_stack else saved_names
            outs = eqn.prim.bind(*[read(x) for x in eqn.invars], **eqn.params)
            if not eqn.prim.multiple_results:
                outs = [outs]
            for v, val in core.safe_zip(eqn.outvars, outs):
                env[v] = val
    finally:
        scope.frame, scope.source = saved
        state.name_stack = saved_names
    return [read(x) for x in jaxpr.outvars]


def eval_closed_jaxpr(closed, *args):
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)
