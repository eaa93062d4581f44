"""funcgraph.extend: the interfaces for writing new primitives and jaxpr interpreters,
with the names of `jax.extend` (see `funcgraph.extend.core`)."""
from funcgraph.extend import core

__all__ = ["core"]
