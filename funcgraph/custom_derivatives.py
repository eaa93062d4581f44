"""funcgraph.custom_derivatives: JAX's custom-derivative API in one module."""
from funcgraph.primitives.custom_ad import custom_jvp_call_p, custom_vjp_call_p  # noqa: F401
from funcgraph.transforms.custom_derivatives import (  # noqa: F401
    CustomVJPPrimal, SymbolicZero, closure_convert, custom_gradient, custom_jvp, custom_vjp,
    linear_call, zero_from_primal)
from funcgraph.lax import custom_linear_solve, custom_root  # noqa: F401

__all__ = ["CustomVJPPrimal", "SymbolicZero", "custom_jvp_call_p", "custom_vjp_call_p",
           "zero_from_primal", "closure_convert", "custom_gradient", "custom_jvp", "custom_linear_solve",
           "custom_root", "custom_vjp", "linear_call"]
