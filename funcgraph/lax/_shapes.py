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


def broadcast_size_one(name, operands):
    """As jax's lax: shaped operands of one rank broadcast along their size-1 dimensions
    (a (3, 1) operand meets a (1, 4) one as (3, 4)); rank-0 operands are broadcast by
    the primitive.  Symbolic sizes are left for the primitive's own shape check."""
    shapes = [o.aval.shape for o in operands if o.aval.ndim]
    if len(set(shapes)) < 2 or not all(type(d) is int for s in shapes for d in s):
        return operands
    ranks = {len(s) for s in shapes}
    if len(ranks) > 1:
        raise TypeError(f"{name}: arrays must have the same number of dimensions, got "
                        f"{ranks}")
    joint = []
    for sizes in zip(*shapes):
        wide = {d for d in sizes if d != 1}
        if len(wide) > 1:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            f"{', '.join(str(s) for s in shapes)}.")
        joint.append(wide.pop() if wide else 1)
    joint = tuple(joint)
    return [o if o.aval.ndim == 0 or o.aval.shape == joint
            else broadcast_in_dim(o, joint, tuple(range(len(joint)))) for o in operands]


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
