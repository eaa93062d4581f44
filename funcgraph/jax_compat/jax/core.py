"""`jax.core` as of jax 0.10: AbstractValue, Atom, ParamDict, ShapedArray, Trace, Tracer,
Value, ensure_compile_time_eval, eval_context, eval_jaxpr, max_dim, min_dim, and the
deprecated names jax still serves (Effect, find_top_trace, jaxprs_in_params, ...).  The
names jax 0.10 removed (get_aval, mapped_aval, raise_to_shaped, subjaxprs, ...) are
absent here too, so libraries take their newer code paths."""
from ._src.core import (  # noqa: F401
    AbstractValue, Atom, DropVar, Effect, Effects, InconclusiveDimensionOperation,
    JaxprTypeError, ParamDict, ShapedArray, Trace, Tracer, Value,
    aval_mapping_handlers, check_jaxpr, concrete_or_error,
    custom_typechecks, ensure_compile_time_eval, eval_context, eval_jaxpr, find_top_trace,
    gensym, get_opaque_trace_state, is_concrete, is_constant_dim, is_constant_shape,
    jaxprs_in_params, literalable_types, max_dim, min_dim, new_jaxpr_eqn, no_axis_name,
    no_effects, nonempty_axis_env, primal_dtype_to_tangent_dtype, pytype_aval_mappings,
    trace_ctx, unsafe_am_i_under_a_jit, unsafe_am_i_under_a_vmap, unsafe_get_axis_names,
    valid_jaxtype)

unsafe_am_i_under_a_jit_DO_NOT_USE = unsafe_am_i_under_a_jit
unsafe_am_i_under_a_vmap_DO_NOT_USE = unsafe_am_i_under_a_vmap
unsafe_get_axis_names_DO_NOT_USE = unsafe_get_axis_names
nonempty_axis_env_DO_NOT_USE = nonempty_axis_env
