"""`jax.interpreters.xla`: apply_primitive (run one primitive compiled, the usual
`prim.def_impl(partial(xla.apply_primitive, prim))`) and canonicalize_dtype_handlers."""
import numpy as np

from funcgraph.core import canonical_numpy
from funcgraph.interpreters.eval import eval_trace

# {type: handler}: jax's table of how host values are canonicalized (to funcgraph's
# canonical dtype); funcgraph canonicalizes its own inputs, and keeps the table for code
# that reads or registers in it.
canonicalize_dtype_handlers = {np.ndarray: canonical_numpy}


def apply_primitive(prim, *args, **params):
    """prim applied to concrete args as a compiled XLA computation (its lowering rule)."""
    return eval_trace._run_compiled(prim, args, params)


__all__ = ["apply_primitive", "canonicalize_dtype_handlers"]
