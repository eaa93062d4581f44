"""The persistent compilation cache's switches, as JAX's
`jax.experimental.compilation_cache.compilation_cache` (what the cache does:
funcgraph/backend/compilation_cache.py)."""
from funcgraph.backend.compilation_cache import reset_cache, set_cache_dir

__all__ = ["reset_cache", "set_cache_dir"]
