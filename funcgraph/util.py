"""Small helpers under the names JAX code uses for them (`jax._src.util`)."""
from funcgraph.core import safe_zip


def safe_map(f, *lists):
    """`list(map(f, *lists))`, refusing lists of different lengths."""
    return [f(*args) for args in safe_zip(*lists)] if lists else []


__all__ = ["safe_map", "safe_zip"]
