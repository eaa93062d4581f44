"""funcgraph.scipy.sparse: iterative linear solvers (JAX's scipy.sparse API)."""
from funcgraph.scipy.sparse import linalg  # noqa: F401
