"""funcgraph.scipy: parts of the SciPy API (JAX's scipy semantics).  Its submodules are
attributes once funcgraph.scipy is imported, as JAX's scipy submodules are."""
from funcgraph.scipy import fft, linalg, optimize, sparse, special, stats  # noqa: F401
