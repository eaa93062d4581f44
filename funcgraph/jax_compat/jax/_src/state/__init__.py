"""`jax._src.state`: jax's mutable-state package; its `types` module holds AbstractRef
(funcgraph.refs)."""
from funcgraph.refs import AbstractRef  # noqa: F401
