"""Shape operations: broadcast_in_dim, broadcast, reshape, transpose, squeeze, expand_dims."""
from funcgraph import shape_poly
from funcgraph.lax._operands import as_operand
from funcgraph.primitives import structural as st


def broadcast_in_dim(x, shape, broadcast_dimensions):
    x = as_operand(x)
    shape, dims = tuple(shape), tuple(broadcast_dimensions)
    if x.aval.shape == shape and dims == tuple(range(len(shape))):
        return x
    return st.broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims)


def broadcast(x, sizes):
    x = as_operand(x)
    sizes = tuple(sizes)
    dims = tuple(range(len(sizes), len(sizes) + x.aval.ndim))
    return broadcast_in_dim(x, sizes + x.aval.shape, dims)


def reshape(x, new_sizes, dimensions=None):
    x = as_operand(x)
    if dimensions is not None:
        x = transpose(x, dimensions)
    new_sizes = shape_poly.dims_tuple(new_sizes)
    if x.aval.shape == new_sizes:
        return x
    return st.reshape_p.bind(x, new_sizes=new_sizes, dimensions=None)


def transpose(x, permutation):
    x = as_operand(x)
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))):
        return x
    return st.transpose_p.bind(x, permutation=permutation)


def squeeze(x, dimensions):
    x = as_operand(x)
    dimensions = tuple(sorted(int(d) % builtins_max(x.aval.ndim, 1) for d in dimensions))
    if not dimensions:
        return x
    return st.squeeze_p.bind(x, dimensions=dimensions)


def expand_dims(x, dimensions):
    x = as_operand(x)
    ndim = x.aval.ndim + len(dimensions)
    dimensions = tuple(sorted(int(d) % ndim for d in dimensions))
    if not dimensions:
        return x
    return st.expand_dims_p.bind(x, dimensions=dimensions)


def builtins_max(a, b):
    return a if a > b else b
