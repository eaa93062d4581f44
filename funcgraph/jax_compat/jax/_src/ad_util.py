"""`jax._src.ad_util`: Zero, SymbolicZero's kin and stop_gradient_p, from funcgraph's
differentiation helpers (funcgraph.interpreters.ad_util) and primitives."""
from funcgraph.interpreters.ad_util import Zero, add_tangents, instantiate, zeros_of  # noqa: F401
from funcgraph.primitives.custom_ad import stop_gradient_p  # noqa: F401


def instantiate_zeros(tangent):
    return instantiate(tangent) if type(tangent) is Zero else tangent


def zeros_like_aval(aval):
    return zeros_of(aval)


add_jaxvals = add_tangents
