"""`jax._src.dispatch`: wait_for_tokens (the process's effects barrier, registered at
exit as jax's is; equinox swaps it for its own) and apply_primitive."""
from funcgraph.backend import effects_barrier as wait_for_tokens  # noqa: F401


def apply_primitive(prim, *args, **params):
    """The primitive applied to concrete arguments now."""
    return prim.bind(*args, **params)
