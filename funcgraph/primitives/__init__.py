"""Primitives, one block each with all of its rules; importing this registers them all.

The modules import one another in one order, lowest first, with no cycle:
helpers (binds no primitive), base (broadcast_in_dim, reshape, transpose and
reduce_sum, which every family's rules bind), batching_helpers, elementwise,
structural, reductions, slicing, contractions, sorting, linalg, then the primitives
holding jaxprs: jaxprs (helpers over whole jaxprs), call, collectives, control_flow
custom_ad and remat; sharding_constraint; shard_map (after collectives and call); convolution (after structural), fft (after
structural) and windowed (after jaxprs); exported (a call of a deserialized module);
last the host callbacks (callbacks), whose batching binds scan.
A rule binds primitives of its own module or of a lower one."""
from funcgraph.primitives import (  # noqa: F401
    call, callbacks, collectives, contractions, control_flow, convolution, custom_ad,
    custom_batching, elementwise, exported, fft, linalg, linear_solve, reductions, remat,
    shard_map, sharding_constraint, slicing, sorting, structural, windowed)
