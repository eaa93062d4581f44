"""funcgraph.experimental: JAX's experimental names that funcgraph provides."""
from funcgraph.callback import io_callback
from funcgraph.experimental import compilation_cache

__all__ = ["io_callback", "compilation_cache"]
