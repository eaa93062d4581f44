"""funcgraph.lax.linalg: the linear-algebra primitives with the names of JAX's lax.linalg."""
from funcgraph.primitives.linalg import cholesky, triangular_solve  # noqa: F401
from funcgraph.primitives.linalg import cholesky_p, triangular_solve_p  # noqa: F401,E402
