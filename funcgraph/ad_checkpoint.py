"""funcgraph.ad_checkpoint: JAX's jax.ad_checkpoint namespace (checkpoint/remat,
checkpoint_name, checkpoint_policies, print_saved_residuals and the policy answers
Saveable, Recompute, Offloadable)."""
from funcgraph.primitives.remat import Offloadable, Recompute, Saveable
from funcgraph.transforms.remat import (
    checkpoint, checkpoint_name, checkpoint_policies, print_saved_residuals, remat,
    saved_residuals)

# jax 0.11's name for marking a value saved on the forward pass only; without jax's
# experimental `remat3` it is checkpoint_name, and funcgraph has no remat3.
checkpoint_name_fwd = checkpoint_name

__all__ = ["Offloadable", "Recompute", "Saveable", "checkpoint", "checkpoint_name",
           "checkpoint_name_fwd",
           "checkpoint_policies", "print_saved_residuals", "remat", "saved_residuals"]
