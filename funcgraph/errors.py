"""The exceptions funcgraph raises for mistakes in user programs (JAX's jax.errors)."""
import inspect
import sys

from funcgraph import backend

from funcgraph.core import (  # noqa: F401
    ConcretizationTypeError, FuncgraphError, MissingRuleError, TracerArrayConversionError,
    TracerBoolConversionError, TracerIntegerConversionError, UnexpectedTracerError)
from funcgraph.shape_poly import InconclusiveDimensionOperation  # noqa: F401


def _entry_frame(package):
    """The outermost frame of `package` on the current stack: the public function the
    user called (helpers it calls are inner frames of the same package)."""
    frame, entry = sys._getframe(1), None
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith(package):
            entry = frame
        elif entry is not None:
            break
        frame = frame.f_back
    return entry


def _argument_holding(frame, value):
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    for name in code.co_varnames[:count]:
        held = frame.f_locals.get(name)
        if held is value or (isinstance(held, (list, tuple, dict)) and any(
                v is value for v in (held.values() if isinstance(held, dict) else held))):
            return name
    return None


def calling_function(package):
    """'funcgraph.numpy.reshape' when the user called funcgraph.numpy.reshape, for error
    messages raised deep inside it (error path only: it walks the stack)."""
    frame = _entry_frame(package)
    return None if frame is None else f"{package}.{frame.f_code.co_name}"


def sequence_operand_error(value, package, prefix=""):
    """jax's TypeError for a list or tuple given where an array is expected (JAX's numpy
    takes them only where it builds an array, as array() and asarray() do), naming the
    function the user called (after `prefix`, as jax names it: "jnp.linalg.") and the
    argument's position."""
    frame = _entry_frame(package)
    name, position = "function", 0
    if frame is not None:
        name = prefix + frame.f_code.co_name
        argument = _argument_holding(frame, value)
        names = frame.f_code.co_varnames[:frame.f_code.co_argcount]
        position = names.index(argument) if argument in names else 0
    return TypeError(f"{name} requires ndarray or scalar arguments, got {type(value)} at "
                     f"position {position}.")


def invalid_operand_error(value, package):
    """A TypeError for a value that is not an array of a numeric type, naming the public
    function of `package` that received it and the argument it came in. The stack is only
    inspected here, on the error path, so the hot path pays nothing for the message."""
    frame = _entry_frame(package)
    where = ""
    if frame is not None:
        name = frame.f_code.co_name
        argument = _argument_holding(frame, value)
        where = f"{package}.{name}: " + (f"argument {argument!r} " if argument else "an argument ")
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return TypeError(
        f"{where}got {shown} of type {type(value).__name__}, which is not a valid array: "
        "only arrays of numeric or boolean type (funcgraph Arrays, NumPy arrays, Python "
        "numbers and nested lists of them) are supported")


def __getattr__(name):
    # JaxRuntimeError is the runtime's own class (jaxlib's), which only the backend may
    # import: looked up on first use.
    if name == "JaxRuntimeError":
        return backend.runtime_error_type()
    raise AttributeError(f"module 'funcgraph.errors' has no attribute {name!r}")
