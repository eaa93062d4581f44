"""Static type annotations, as jax.typing: ArrayLike (values funcgraph converts to an
array implicitly) and DTypeLike (values np.dtype turns into a funcgraph dtype).  Both are
Unions, so `isinstance(x, ArrayLike)` works too."""
from typing import Any, Protocol, Union, runtime_checkable

import numpy as np

from funcgraph.array import Array


@runtime_checkable
class _HasDType(Protocol):
    @property
    def dtype(self) -> Any: ...


# Arrays (traced values included), NumPy arrays and scalars, Python numbers; not lists
# or tuples, which funcgraph's functions take as arrays only where jax's do.
ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]

# A dtype name ("float32"), a scalar type (float, np.float32), a NumPy dtype, or an
# object with a dtype (funcgraph.numpy.float32).
DTypeLike = Union[str, type[Any], np.dtype, _HasDType]
