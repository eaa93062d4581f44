"""funcgraph.ad_checkpoint: JAX's jax.ad_checkpoint namespace (checkpoint/remat,
checkpoint_name, checkpoint_policies, print_saved_residuals and the policy answers
Saveable, Recompute, Offloadable)."""
from funcgraph.primitives.remat import Offloadable, Recompute, Saveable
from funcgraph.transforms.remat import (
    checkpoint, checkpoint_name, checkpoint_policies, print_saved_residuals, remat,
    saved_residuals)

__all__ = ["Offloadable", "Recompute", "Saveable", "checkpoint", "checkpoint_name",
           "checkpoint_policies", "print_saved_residuals", "remat", "saved_residuals"]
