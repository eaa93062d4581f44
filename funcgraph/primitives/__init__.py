"""Primitives, one block each with all of its rules; importing this registers them all."""
from funcgraph.primitives import (  # noqa: F401
    call, collectives, contractions, control_flow, custom_ad, elementwise, linalg, reductions,
    slicing, sorting, structural)
