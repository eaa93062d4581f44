"""`jax.version`: the version of the jax release whose behaviour funcgraph follows."""
from funcgraph.jax_compat.alias import JAX_VERSION as __version__

__version_info__ = tuple(int(part) for part in __version__.split("."))
_version = __version__
