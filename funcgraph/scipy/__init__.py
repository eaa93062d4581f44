"""funcgraph.scipy: parts of the SciPy API (JAX's scipy semantics)."""
