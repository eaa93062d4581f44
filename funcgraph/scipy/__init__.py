"""funcgraph.scipy: parts of the SciPy API (JAX's scipy semantics).  Its submodules are
attributes once funcgraph.scipy is imported, as jax.scipy's are."""
from funcgraph.scipy import linalg, sparse, special, stats  # noqa: F401
