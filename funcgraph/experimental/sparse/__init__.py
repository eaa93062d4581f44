"""funcgraph.experimental.sparse: JAX's experimental sparse arrays in the BCOO format
(batched coordinates), for the unbatched case: `BCOO` (a pytree of `data` and `indices`)
with `fromdense`, `todense`, `.T`/`transpose`, products with dense arrays (`@`,
`bcoo_dot_general`), scaling by scalars; `bcoo_fromdense`, `bcoo_todense`, `todense`.
Batch dimensions (n_batch > 0), sparse-sparse products and the other formats (BCSR, COO,
CSR) are not provided."""
from funcgraph.experimental.sparse.bcoo import (
    BCOO, JAXSparse, bcoo_dot_general, bcoo_fromdense, bcoo_todense, todense)

__all__ = ["BCOO", "JAXSparse", "bcoo_dot_general", "bcoo_fromdense", "bcoo_todense",
           "todense"]
