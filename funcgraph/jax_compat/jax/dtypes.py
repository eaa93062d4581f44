"""`jax.dtypes`: funcgraph.dtypes (canonicalize_dtype, issubdtype, result_type, float0,
prng_key, extended, finfo, iinfo, ...), with `bfloat16` as jax has it: ml_dtypes' scalar
type, which is callable (`jax.dtypes.bfloat16(1)`) and a dtype wherever one is asked for
(funcgraph itself keeps the np.dtype)."""
from funcgraph import dtypes as _own
from funcgraph.dtypes import *  # noqa: F401,F403

bfloat16 = _own.bfloat16.type


def __getattr__(name):
    try:
        return getattr(_own, name)
    except AttributeError:
        raise AttributeError(f"module 'jax.dtypes' has no attribute {name!r}") from None
