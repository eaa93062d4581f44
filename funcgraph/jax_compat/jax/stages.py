"""`jax.stages`: the ahead-of-time stages of a jitted function (Traced, Lowered,
Compiled, ArgInfo) from funcgraph.transforms.jit, and the CompilerOptions type."""
from typing import Any

from funcgraph.transforms.jit import ArgInfo, Compiled, Lowered, Traced  # noqa: F401

CompilerOptions = dict[str, Any]
Wrapped = Any
