"""funcgraph: trace pure Python functions into a typed IR and transform them
(grad, jvp, vmap, jit), with JAX's API.  Its names: `fg` for funcgraph itself and
`fnp` for funcgraph.numpy.
"""
from funcgraph.config import (
    config, debug_infs, debug_key_reuse, debug_nans, default_device, default_matmul_precision,
    disable_jit, enable_custom_prng, enable_x64, explain_cache_misses, log_compiles,
    numpy_dtype_promotion, numpy_rank_promotion)
from funcgraph import core, dtypes, ir
from funcgraph.array import Array, Shard
from funcgraph.core import get_aval as typeof
from funcgraph.dtypes import float0
from funcgraph import errors, lax, numpy, tree, tree_util
from funcgraph.transforms.jit import clear_caches, jit, ShapeDtypeStruct, eval_shape, make_jaxpr
from funcgraph.api import (
    Device, block_until_ready, copy_to_host_async, default_backend, device_count, device_get, device_put, devices,
    effects_barrier, host_count, host_id, host_ids, local_device_count, local_devices,
    make_array_from_callback, make_array_from_process_local_data,
    make_array_from_single_device_arrays, print_environment_info, process_count,
    process_index, process_indices, reshard)
from funcgraph import sharding
from funcgraph.sharding import NamedSharding, P, make_mesh, set_mesh

# jax.sharding.reshard: reshard runs programs (a layer above sharding's types), so the
# public namespace puts it in funcgraph.sharding for JAX's import path.
sharding.reshard = reshard
from funcgraph.transforms.ad import (fwd_and_bwd, grad, hessian, jacfwd, jacrev, jvp,
                                     linearize, value_and_grad, vjp)
from funcgraph.transforms.ad import jacrev as jacobian
from funcgraph.transforms.vmap import vmap
from funcgraph.transforms.shard_map import pmap, shard_map, smap
from funcgraph.transforms.custom_derivatives import (closure_convert, custom_gradient,
                                                    custom_jvp, custom_vjp)
from funcgraph.transforms.linear_transpose import linear_transpose
from funcgraph.transforms.remat import checkpoint, checkpoint_policies, remat
from funcgraph import ad_checkpoint
from funcgraph.transforms.name_stack import named_call, named_scope
from funcgraph.core import ConcretizationTypeError, UnexpectedTracerError
from funcgraph.interpreters.eval import ensure_compile_time_eval
from funcgraph import inspect, random, nn, ops
import funcgraph.lax.linalg  # noqa: E402,F401  (above numpy and scipy; see its docstring)
from funcgraph import debug, distributed, experimental, export
from funcgraph.callback import pure_callback
from funcgraph import custom_batching, custom_derivatives, profiler, typing
from funcgraph.tree_util import (tree_flatten, tree_leaves, tree_map, tree_structure,
                                 tree_unflatten)
from funcgraph.jax_compat import install_as_jax
from funcgraph.refs import Ref, empty_ref, free_ref, freeze, new_ref

__version__ = "0.1.0"

__all__ = [
    "Array", "ShapeDtypeStruct", "ad_checkpoint", "block_until_ready", "checkpoint",
    "clear_caches",
    "checkpoint_policies",
    "config", "custom_jvp", "custom_vjp", "default_backend", "device_get", "device_put",
    "devices", "disable_jit", "ensure_compile_time_eval", "errors", "eval_shape", "grad",
    "hessian", "jacfwd", "jacrev", "jit", "jvp", "lax", "linearize", "local_devices",
    "make_jaxpr", "named_call", "named_scope", "nn", "numpy", "random", "remat", "tree_util",
    "value_and_grad", "vjp", "fwd_and_bwd", "vmap", "ConcretizationTypeError", "UnexpectedTracerError",
    "debug", "distributed", "effects_barrier", "experimental", "export", "pure_callback",
    "default_device", "device_count", "local_device_count", "make_array_from_callback",
    "make_array_from_single_device_arrays", "make_mesh", "NamedSharding", "process_count",
    "process_index", "reshard", "set_mesh", "sharding",
    "jacobian", "tree", "typeof",
    "debug_infs", "debug_key_reuse", "debug_nans", "log_compiles", "default_matmul_precision",
    "closure_convert", "custom_gradient", "linear_transpose", "custom_batching",
    "custom_derivatives", "pmap", "shard_map", "smap",
    "copy_to_host_async", "enable_custom_prng", "enable_x64", "explain_cache_misses", "float0", "P",
    "print_environment_info", "Shard", "host_count", "host_id", "host_ids",
    "make_array_from_process_local_data", "process_indices", "install_as_jax",
    "Ref", "new_ref", "empty_ref", "free_ref", "freeze",
]
