"""funcgraph.lax.linalg: the linear-algebra primitives with jax.lax.linalg's names."""
from funcgraph.primitives.linalg import cholesky, triangular_solve  # noqa: F401
