"""Sorting primitives: sort (multi-operand, stable) and top_k."""
