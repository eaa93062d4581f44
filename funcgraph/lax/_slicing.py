"""lax wrappers for the structural and slicing primitives."""
__all__ = []
