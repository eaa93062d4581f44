"""Shapes and axes: shape, reshape, transpose, moveaxis, squeeze, expand_dims, broadcast_to,
atleast_*d."""
import math
import warnings

import numpy as np

from funcgraph import lax, shape_poly
from funcgraph.numpy._core import (
    asarray_operand, aval_of, broadcast_shapes, broadcast_to_shape, canonical_axes,
    check_axis, shape_arg)


def _host_array_like(a, name):
    """a, for NumPy's shape/ndim/size, as JAX's: a value not array-like (a list, None)
    is accepted with a DeprecationWarning; `__jax_array__` is followed."""
    if not (isinstance(a, (np.ndarray, np.generic)) or np.isscalar(a)
            or hasattr(a, "__jax_array__")):
        warnings.warn(f"{name} requires ndarray or scalar arguments, got {type(a)} at "
                      f"position 0. In a future JAX release this will be an error.",
                      DeprecationWarning, stacklevel=3)
    m = getattr(a, "__jax_array__", None)
    return m() if m is not None else a


def shape(a):
    """a's shape; as JAX's, anything with a `shape` attribute (a ShapeDtypeStruct) too,
    and NumPy's answer (with a DeprecationWarning) for lists, None, ..."""
    if hasattr(a, "shape"):
        return tuple(a.shape)
    return np.shape(_host_array_like(a, "shape"))


def ndim(a):
    if hasattr(a, "ndim"):
        return a.ndim
    return np.ndim(_host_array_like(a, "ndim"))


def size(a, axis=None):
    if not hasattr(a, "shape"):
        a = _host_array_like(a, "size")
    if axis is None and hasattr(a, "size"):
        return a.size
    dims = shape(a)
    axes = canonical_axes(axis, len(dims))
    return math.prod(dims[i] for i in axes)


def reshape(a, shape=None, order="C", *, newshape=None):
    shape = newshape if shape is None else shape
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is supported")
    shape = shape_arg(shape)
    numpy_input = a if isinstance(a, np.ndarray) else None
    a = asarray_operand(a)
    total = aval_of(a).size

    def refused(message):
        # As jax: a NumPy array's bad shape is NumPy's ValueError, an Array's a TypeError.
        if numpy_input is not None and shape_poly.is_constant_shape(shape):
            np.reshape(numpy_input, shape)
        return TypeError(message)

    if shape.count(-1) > 1:
        raise refused(f"can only specify one unknown axis size with a `-1` value, got "
                      f"{shape}")
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or total % known:
            raise refused(f"cannot reshape array of shape {aval_of(a).shape} (size {total}) "
                          f"into shape {shape} because the product of specified axis sizes "
                          f"({known}) does not evenly divide {total}")
        new_shape = tuple(total // known if d == -1 else d for d in shape)
    else:
        new_shape = shape
    if math.prod(new_shape) != total:
        raise refused(f"cannot reshape array of shape {aval_of(a).shape} (size {total}) "
                      f"into shape {new_shape} (size {math.prod(new_shape)})")
    return lax.reshape(a, new_shape)


def ravel(a, order="C"):
    return reshape(a, (-1,))


def transpose(a, axes=None):
    a = asarray_operand(a)
    nd = aval_of(a).ndim
    axes = tuple(reversed(range(nd))) if axes is None else tuple(check_axis(x, nd) for x in axes)
    if sorted(axes) != list(range(nd)):
        raise TypeError(f"transpose: axes {axes} don't match an array of dimension {nd}")
    return lax.transpose(a, axes)


def permute_dims(a, axes):
    return transpose(a, axes)


def swapaxes(a, axis1, axis2):
    nd = ndim(a)
    perm = list(range(nd))
    i, j = check_axis(axis1, nd, "axis1"), check_axis(axis2, nd, "axis2")
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a, source, destination):
    nd = ndim(a)
    src = [check_axis(s, nd, "source") for s in ((source,) if isinstance(source, int) else source)]
    dst = [check_axis(d, nd, "destination")
           for d in ((destination,) if isinstance(destination, int) else destination)]
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of axes")
    order = [n for n in range(nd) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def squeeze(a, axis=None):
    a = asarray_operand(a)
    aval = aval_of(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(aval.shape) if d == 1)
    else:
        axes = canonical_axes(axis, aval.ndim)
        for ax in axes:
            if aval.shape[ax] != 1:
                raise ValueError(f"cannot select an axis to squeeze out which has size not "
                                 f"equal to one (axis {ax} of shape {aval.shape})")
    return lax.squeeze(a, axes)


def expand_dims(a, axis):
    a = asarray_operand(a)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out_ndim = aval_of(a).ndim + len(axes)
    axes = tuple(sorted(check_axis(ax, out_ndim) for ax in axes))
    return lax.expand_dims(a, axes)


def broadcast_to(array, shape):
    return broadcast_to_shape(asarray_operand(array), shape_arg(shape))


def broadcast_arrays(*args):
    shape = broadcast_shapes(*(aval_of(a).shape for a in args))
    return [broadcast_to_shape(asarray_operand(a), shape) for a in args]


def atleast_1d(*arys):
    out = [reshape(a, (1,)) if ndim(a) == 0 else asarray_operand(a) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    out = []
    for a in arys:
        a = asarray_operand(a)
        out.append(reshape(a, (1,) * (2 - ndim(a)) + shape(a)) if ndim(a) < 2 else a)
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    out = []
    for a in arys:
        a = asarray_operand(a)
        if ndim(a) == 0:
            a = reshape(a, (1, 1, 1))
        elif ndim(a) == 1:
            a = reshape(a, (1, -1, 1))
        elif ndim(a) == 2:
            a = expand_dims(a, -1)
        out.append(a)
    return out[0] if len(out) == 1 else out
