"""The exceptions funcgraph raises for mistakes in user programs (JAX's jax.errors)."""
from funcgraph.core import (  # noqa: F401
    ConcretizationTypeError, FuncgraphError, MissingRuleError, TracerArrayConversionError,
    UnexpectedTracerError)
