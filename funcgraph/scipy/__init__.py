"""funcgraph.scipy: parts of the SciPy API (jax.scipy's semantics)."""
