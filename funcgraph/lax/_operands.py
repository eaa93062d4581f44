"""The operands of lax functions: arrays and tracers pass; Python scalars and NumPy values
become Arrays (weakly typed for Python scalars), with no promotion or broadcasting."""
import numpy as np

from funcgraph import core, shape_poly
from funcgraph.array import Array
from funcgraph.errors import invalid_operand_error


def aval_of(x):
    if type(x) is Array or isinstance(x, core.Tracer):
        return x.aval
    if core.is_python_scalar(x):
        return core.aval_of_python_scalar(x)
    if type(x) is shape_poly.DimExpr:  # a symbolic dimension is a (weakly typed) int value
        return core.aval_of_python_scalar(1)
    try:
        return core.aval_of_numpy(np.asarray(x))
    except TypeError:
        raise invalid_operand_error(x, "funcgraph.lax") from None


def as_operand(x):
    if type(x) is Array or isinstance(x, core.Tracer):
        return x
    if core.is_python_scalar(x):
        aval = core.aval_of_python_scalar(x)
        return Array(np.array(x, aval.dtype), aval)
    if type(x) is shape_poly.DimExpr:
        return x.__jax_array__()
    try:
        x = core.canonical_numpy(x)
    except TypeError:
        raise invalid_operand_error(x, "funcgraph.lax") from None
    return Array(x, core.aval_of_numpy(x))


def match_scalars(args):
    """As in JAX's lax: a Python scalar becomes a weakly typed array of its default dtype
    (float32, int32, ...), with no promotion, so its dtype must match the other operands'."""
    return [as_operand(a) for a in args]
