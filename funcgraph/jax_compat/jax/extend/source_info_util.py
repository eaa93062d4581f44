"""`jax.extend.source_info_util`: jax's public re-export of source_info_util (see
jax._src.source_info_util)."""
from .._src.source_info_util import (  # noqa: F401
    NameStack, SourceInfo, current, current_name_stack, extend_name_stack,
    new_name_stack, new_source_info, register_exclusion, reset_name_stack,
    set_name_stack, summarize, transform_name_stack, user_context)
