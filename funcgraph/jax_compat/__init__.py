"""Layer 9, the jax compatibility layer: `import jax` (and every `jax.<sub>`) means
funcgraph, for unmodified programs and for the JAX libraries they build on.

    funcgraph.install_as_jax()                        # first line of a script or notebook
    python -m funcgraph run script.py [args]          # or: python -m funcgraph run -m pytest

`jax.<name>` is served, in this order, by the shim module
`funcgraph.jax_compat.jax.<name>` (jax's extension points and the few `jax._src`
internals that libraries import, adapted onto funcgraph's own registries), or by
funcgraph's own module of that name for the modules whose API is jax's
(jax's numpy module is `funcgraph.numpy`). Everything else is a ModuleNotFoundError that says
so. The real jax stays underneath as funcgraph's compiler and runtime only
(funcgraph.backend). docs/ecosystem.md lists what is emulated.
"""
from funcgraph.jax_compat.alias import JAX_VERSION, install_as_jax, is_installed

__all__ = ["JAX_VERSION", "install_as_jax", "is_installed"]
