"""`jax.lib`: the jaxlib version (`jax.lib.__version__`) programs read; funcgraph runs on
the jaxlib release of the jax it follows."""
from funcgraph.jax_compat.alias import JAX_VERSION as __version__  # noqa: F401
