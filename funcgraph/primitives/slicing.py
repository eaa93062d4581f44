"""Slicing and indexing primitives: slice, dynamic_slice, dynamic_update_slice,
gather and the scatter family."""
