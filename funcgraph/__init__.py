"""funcgraph: trace pure Python functions into a typed IR and transform them
(grad, jvp, vmap, jit), with JAX's API.

    import funcgraph as fg
    import funcgraph.numpy as fnp
"""
from funcgraph.config import config
from funcgraph import core, dtypes, ir
from funcgraph.array import Array
from funcgraph.interpreters import eval as _eval  # installs the evaluation trace
from funcgraph import primitives as _primitives  # registers every primitive
from funcgraph import numpy  # installs the array operators
from funcgraph import inspect, lax, tree_util
from funcgraph.jit_function import jit, ShapeDtypeStruct
from funcgraph.api import (
    block_until_ready, default_backend, device_get, device_put, devices, eval_shape,
    local_devices, make_jaxpr)
from funcgraph.ad import (grad, hessian, jacfwd, jacrev, jvp, linearize, value_and_grad,
                          vjp)
from funcgraph.vmap_function import vmap
from funcgraph.custom_derivatives import (checkpoint, checkpoint_policies, custom_jvp,
                                          custom_vjp, remat)
from funcgraph.core import ConcretizationTypeError, UnexpectedTracerError
from funcgraph import random, nn
from funcgraph.tree_util import (tree_flatten, tree_leaves, tree_map, tree_structure,
                                 tree_unflatten)

__version__ = "0.1.0"

__all__ = [
    "Array", "ShapeDtypeStruct", "block_until_ready", "checkpoint", "checkpoint_policies",
    "config", "custom_jvp", "custom_vjp", "default_backend", "device_get", "device_put",
    "devices", "eval_shape", "grad", "hessian", "jacfwd", "jacrev", "jit", "jvp", "lax",
    "linearize", "local_devices", "make_jaxpr", "nn", "numpy", "random", "remat", "tree_util",
    "value_and_grad", "vjp", "vmap", "ConcretizationTypeError", "UnexpectedTracerError",
]
