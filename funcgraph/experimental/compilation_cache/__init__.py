"""funcgraph.experimental.compilation_cache: JAX's module of the same name."""
from funcgraph.experimental.compilation_cache import compilation_cache

__all__ = ["compilation_cache"]
