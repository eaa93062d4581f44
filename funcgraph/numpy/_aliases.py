"""Names jnp shares with NumPy or with another jnp name: scalar-type aliases,
the array-API spellings of the bitwise shifts, and NumPy's print options."""
import contextlib

import numpy as np

from funcgraph.numpy._types import (
    bool_, complex128, complex64, float32, float64, int64, uint64)
from funcgraph.numpy._ufuncs import bitwise_not, left_shift, right_shift

bool = bool_  # noqa: A001  jnp.bool is the boolean scalar type, as funcgraph's bool_
float_ = double = float64
single = float32
int_ = int64
uint = uint64
complex_ = cdouble = complex128
csingle = complex64
character, flexible, generic, object_ = np.character, np.flexible, np.generic, np.object_
ComplexWarning = np.exceptions.ComplexWarning
iterable = np.iterable
array_repr, array_str = np.array_repr, np.array_str
save, savez = np.save, np.savez

bitwise_invert = bitwise_not
bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


def get_printoptions():
    return np.get_printoptions()


def set_printoptions(*args, **kwargs):
    return np.set_printoptions(*args, **kwargs)


@contextlib.contextmanager
def printoptions(*args, **kwargs):
    with np.printoptions(*args, **kwargs) as options:
        yield options
