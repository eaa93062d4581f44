"""`jax._src.dtypes`: funcgraph.dtypes (extended dtypes, issubdtype, finfo,
canonicalize_dtype, ...) plus DType and supports_inf."""
import numpy as np

from funcgraph import dtypes as _own
from funcgraph.dtypes import *  # noqa: F401,F403

DType = np.dtype


def supports_inf(dtype):
    """Whether the floating dtype has infinities (float8_e4m3fn, for one, does not)."""
    if not _own.is_inexact(dtype):
        return False
    return bool(np.isinf(_own.finfo(dtype).max * np.array(2, dtype=dtype)))


def __getattr__(name):
    try:
        return getattr(_own, name)
    except AttributeError:
        raise AttributeError(f"module 'jax._src.dtypes' has no attribute {name!r}") from None
