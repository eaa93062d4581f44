"""funcgraph.custom_derivatives: JAX's custom-derivative API in one module."""
from funcgraph.transforms.custom_derivatives import (  # noqa: F401
    closure_convert, custom_gradient, custom_jvp, custom_vjp, linear_call)
from funcgraph.lax import custom_linear_solve, custom_root  # noqa: F401

__all__ = ["closure_convert", "custom_gradient", "custom_jvp", "custom_linear_solve",
           "custom_root", "custom_vjp", "linear_call"]
