"""`jax._src.state.types`: AbstractRef, the type of a Ref (funcgraph.refs), and
TransformedRef, a Ref seen through indexing (funcgraph refs are indexed when read, so
none is ever made)."""
from funcgraph.refs import AbstractRef, Ref  # noqa: F401


class TransformedRef:
    """A Ref with indexers applied (jax's view type); funcgraph does not make them."""

    def __init__(self, ref, transforms=()):
        self.ref = ref
        self.transforms = tuple(transforms)
