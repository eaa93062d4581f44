"""ravel_pytree: a pytree of arrays as one flat vector, and the function back."""
import numpy as np

import funcgraph.numpy as fnp
from funcgraph import dtypes
from funcgraph.tree_util import tree_flatten, tree_unflatten


def ravel_pytree(pytree):
    """(flat, unravel): the leaves raveled and concatenated into one 1-D array of their
    promoted dtype, and the function mapping such a vector back to the pytree (each
    piece cast back to its leaf's dtype)."""
    leaves, treedef = tree_flatten(pytree)
    leaves = [fnp.asarray(leaf) for leaf in leaves]
    shapes = [fnp.shape(leaf) for leaf in leaves]
    leaf_dtypes = [fnp.asarray(leaf).dtype for leaf in leaves]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    if not leaves:
        flat = fnp.zeros(0, dtypes.default_float())
    else:
        dtype = dtypes.result_type(*leaves)
        flat = fnp.concatenate([fnp.ravel(leaf).astype(dtype) for leaf in leaves])
    flat_shape, flat_dtype = flat.shape, flat.dtype
    offsets = np.cumsum([0] + sizes)

    def unravel(vector):
        if fnp.shape(vector) != flat_shape:
            raise ValueError(f"The unravel function expected an array of shape {flat_shape}, "
                             f"got shape {fnp.shape(vector)}.")
        if fnp.asarray(vector).dtype != flat_dtype:
            raise TypeError(f"The unravel function expected an array of dtype {flat_dtype}, "
                            f"got dtype {fnp.asarray(vector).dtype}.")
        pieces = [fnp.reshape(vector[int(start):int(stop)], shape).astype(dtype)
                  for start, stop, shape, dtype in zip(offsets[:-1], offsets[1:], shapes,
                                                       leaf_dtypes, strict=True)]
        return tree_unflatten(treedef, pieces)
    return flat, unravel


__all__ = ["ravel_pytree"]
