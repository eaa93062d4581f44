"""`jax.extend.core.primitives`: funcgraph's primitive objects under jax's names (the
`*_p` of funcgraph.lax, jit_p for funcgraph's pjit, remat_p, the custom-derivative
calls, the host callbacks).  call_p and closed_call_p name jax's plain call
primitives; funcgraph stages every call as pjit, so they are never bound, and exist
so that tables keyed by them (interpreters' rule dicts) can be built."""
from funcgraph import lax as _lax
from funcgraph.core import Primitive as _Primitive
from funcgraph.primitives.call import pjit_p
from funcgraph.primitives.callbacks import io_callback_p, pure_callback_p
from funcgraph.primitives.custom_ad import (custom_jvp_call_p, custom_lin_p,
                                            custom_vjp_call_p, linear_call_p)
from funcgraph.primitives.linalg import cholesky_p, triangular_solve_p
from funcgraph.primitives.remat import name_p, optimization_barrier_p, remat_p

globals().update({n: getattr(_lax, n) for n in dir(_lax) if n.endswith("_p")})

jit_p = pjit_p
call_p = _Primitive("call", multiple_results=True)
closed_call_p = _Primitive("closed_call", multiple_results=True)
call_p.call_primitive = closed_call_p.call_primitive = True
