"""Products: dot, matmul, vdot, vecdot, inner, outer, tensordot."""
import builtins

from funcgraph import dtypes, lax
from funcgraph.lax._sharding import sharded_result
from funcgraph.numpy._core import aval_of, broadcast_shapes, check_axis, promote_dtypes
from funcgraph.numpy._shapes import broadcast_to, moveaxis, ndim, ravel, shape, squeeze
from funcgraph.numpy._ufuncs import conjugate, multiply


def dot(a, b, precision=None, preferred_element_type=None, *, out_sharding=None):
    return sharded_result(_dot(a, b, precision, preferred_element_type), out_sharding)


def _dot(a, b, precision, preferred_element_type):
    a, b = promote_dtypes(a, b)
    na, nb = ndim(a), ndim(b)
    if na == 0 or nb == 0:
        return multiply(a, b)
    contract_b = 0 if nb == 1 else nb - 2
    return lax.dot_general(a, b, (((na - 1,), (contract_b,)), ((), ())), precision,
                           preferred_element_type=preferred_element_type)


def matmul(a, b, precision=None, preferred_element_type=None, *, out_sharding=None):
    return sharded_result(_matmul(a, b, precision, preferred_element_type), out_sharding)


def _matmul(a, b, precision, preferred_element_type):
    """One dot_general, as jax's: batch dimensions both operands have (of one size) are
    its batch dimensions; a batch dimension only one operand has, or has with size > 1
    against the other's 1, stays a free dimension of that operand (so a batched
    activation times a weight matrix contracts the weight as it is, never broadcast);
    size-1 dimensions facing a larger one are squeezed; one transpose puts the result in
    the broadcast order where the dot_general's order differs."""
    a, b = promote_dtypes(a, b)
    na, nb = ndim(a), ndim(b)
    if na == 0 or nb == 0:
        raise ValueError(f"matmul: operands must have at least one dimension, got shapes "
                         f"{shape(a)} and {shape(b)}")
    sa, sb = shape(a), shape(b)
    a_mat, b_mat = na > 1, nb > 1
    if sa[-1] != sb[-2 if b_mat else -1]:
        raise TypeError(f"matmul: contracting dimensions differ: shapes {sa} and {sb} "
                        f"({sa[-1]} vs {sb[-2 if b_mat else -1]})")
    a_batch, b_batch = (sa[:-2] if a_mat else ()), (sb[:-2] if b_mat else ())
    n = builtins.max(len(a_batch), len(b_batch))
    a_off, b_off = n - len(a_batch), n - len(b_batch)
    a_squeeze, b_squeeze, a_bdims, b_bdims = [], [], [], []
    # the result position of each output dimension of the dot_general, in its order:
    # batch dimensions, a's free dimensions, b's free dimensions
    at_batch, at_a, at_b = [], [], []
    for i in range(n):
        da = sa[i - a_off] if i >= a_off else None
        db = sb[i - b_off] if i >= b_off else None
        if da is None:
            at_b.append(i)
        elif db is None:
            at_a.append(i)
        elif da == 1:
            a_squeeze.append(i - a_off)
            at_b.append(i)
        elif db == 1:
            b_squeeze.append(i - b_off)
            at_a.append(i)
        elif da == db:
            a_bdims.append(i - a_off)
            b_bdims.append(i - b_off)
            at_batch.append(i)
        else:
            raise ValueError(f"Incompatible types for matmul arguments: {_typed(a)} and "
                             f"{_typed(b)}")
    if a_mat:
        at_a.append(n)
    if b_mat:
        at_b.append(n + a_mat)
    if a_squeeze:
        a = squeeze(a, tuple(a_squeeze))
        a_bdims = [d - builtins.sum(s < d for s in a_squeeze) for d in a_bdims]
    if b_squeeze:
        b = squeeze(b, tuple(b_squeeze))
        b_bdims = [d - builtins.sum(s < d for s in b_squeeze) for d in b_bdims]
    contract = ((ndim(a) - 1,), (ndim(b) - 1 - b_mat,))
    out = lax.dot_general(a, b, (contract, (tuple(a_bdims), tuple(b_bdims))), precision,
                          preferred_element_type=preferred_element_type)
    order = at_batch + at_a + at_b
    if order != sorted(order):
        out = lax.transpose(out, tuple(sorted(range(len(order)), key=order.__getitem__)))
    return out


def _typed(x):
    aval = aval_of(x)
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def vdot(a, b, precision=None):
    a = ravel(a)
    if dtypes.is_complex(aval_of(a).dtype):
        a = conjugate(a)
    return dot(a, ravel(b), precision=precision)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """sum(conj(x1) * x2) along axis, as one dot_general batched over the other
    (broadcast) axes, as jax's."""
    x1, x2 = promote_dtypes(x1, x2)
    n1, n2 = ndim(x1), ndim(x2)
    if shape(x1)[check_axis(axis, n1)] != shape(x2)[check_axis(axis, n2)]:
        raise ValueError(f"vecdot: x1 and x2 must have the same size along axis {axis}, "
                         f"got shapes {shape(x1)} and {shape(x2)}")
    x1, x2 = moveaxis(x1, axis, -1), moveaxis(x2, axis, -1)
    if dtypes.is_complex(aval_of(x1).dtype):
        x1 = conjugate(x1)
    if ndim(x1) == 1 or ndim(x2) == 1:  # a lone vector: contracted as it is
        return lax.dot_general(x1, x2, (((ndim(x1) - 1,), (ndim(x2) - 1,)), ((), ())),
                               precision, preferred_element_type=preferred_element_type)
    batch = broadcast_shapes(shape(x1)[:-1], shape(x2)[:-1])
    x1, x2 = (x if shape(x)[:-1] == batch else broadcast_to(x, batch + shape(x)[-1:])
              for x in (x1, x2))
    dims = tuple(range(len(batch)))
    return lax.dot_general(x1, x2, (((len(batch),), (len(batch),)), (dims, dims)), precision,
                           preferred_element_type=preferred_element_type)


def inner(a, b):
    if ndim(a) == 0 or ndim(b) == 0:
        return multiply(a, b)
    return tensordot(a, b, ((ndim(a) - 1,), (ndim(b) - 1,)))


def outer(a, b):
    """a[i] * b[j]: each operand broadcast to the result's shape, then one multiply."""
    a, b = promote_dtypes(ravel(a), ravel(b))
    out_shape = shape(a) + shape(b)
    return multiply(lax.broadcast_in_dim(a, out_shape, (0,)),
                    lax.broadcast_in_dim(b, out_shape, (1,)))


def tensordot(a, b, axes=2, precision=None):
    a, b = promote_dtypes(a, b)
    na, nb = ndim(a), ndim(b)
    if isinstance(axes, int):
        if axes > builtins.min(na, nb) or axes < 0:
            raise ValueError(f"tensordot: axes={axes} is invalid for operands of rank {na} "
                             f"and {nb}")
        ca, cb = tuple(range(na - axes, na)), tuple(range(axes))
    else:
        ca, cb = axes
        ca = (ca,) if isinstance(ca, int) else tuple(ca)
        cb = (cb,) if isinstance(cb, int) else tuple(cb)
        ca = tuple(check_axis(x, na) for x in ca)
        cb = tuple(check_axis(x, nb) for x in cb)
    return lax.dot_general(a, b, ((ca, cb), ((), ())), precision)
