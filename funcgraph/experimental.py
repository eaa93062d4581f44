"""funcgraph.experimental: JAX's experimental names that funcgraph provides."""
from funcgraph.callback import io_callback

__all__ = ["io_callback"]
