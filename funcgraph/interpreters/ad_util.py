"""What the differentiation interpreters share: symbolic zeros, tangent types, and the
two operations they need from the primitives (adding tangents, materializing zeros).

Interpreters sit below the primitives, so those two operations are hooks: `ad_ops`
is filled by funcgraph.primitives (the block of add and of broadcast_in_dim), as
JAX's ad_util is."""
import numpy as np

from funcgraph import dtypes
from funcgraph.core import ShapedArray

# ad_ops["add"](a, b) -> a + b; ad_ops["zeros"](aval) -> an array of zeros of type aval.
ad_ops = {}


class Zero:
    """A tangent (or cotangent) known to be zero, of the given type."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval})"


def is_zero(t):
    return type(t) is Zero


def tangent_aval(aval):
    """Tangents of inexact values have the same type; others have float0 (no tangent)."""
    if dtypes.is_inexact(aval.dtype):
        return aval
    return ShapedArray(aval.shape, dtypes.float0)


def zeros_of(aval):
    """A materialized zero of type aval (float0 zeros are NumPy arrays, as in JAX)."""
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    return ad_ops["zeros"](aval)


def instantiate(t):
    return zeros_of(t.aval) if type(t) is Zero else t


def add_tangents(a, b):
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return ad_ops["add"](a, b)
