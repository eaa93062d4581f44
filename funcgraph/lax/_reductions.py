"""lax wrappers for argmax/argmin, cumulative ops, sort and top_k."""
__all__ = []
