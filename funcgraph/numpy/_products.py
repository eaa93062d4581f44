"""Products: dot, matmul, vdot, vecdot, inner, outer, tensordot."""
import builtins

from funcgraph import dtypes, lax
from funcgraph.lax._sharding import sharded_result
from funcgraph.numpy._core import aval_of, broadcast_shapes, check_axis, promote_dtypes
from funcgraph.numpy._reductions import sum
from funcgraph.numpy._shapes import broadcast_to, expand_dims, ndim, ravel, shape, squeeze
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
    a, b = promote_dtypes(a, b)
    na, nb = ndim(a), ndim(b)
    if na == 0 or nb == 0:
        raise ValueError(f"matmul: operands must have at least one dimension, got shapes "
                         f"{shape(a)} and {shape(b)}")
    a2 = expand_dims(a, 0) if na == 1 else a
    b2 = expand_dims(b, -1) if nb == 1 else b
    sa, sb = shape(a2), shape(b2)
    if sa[-1] != sb[-2]:
        raise TypeError(f"matmul: contracting dimensions differ: shapes {shape(a)} and "
                        f"{shape(b)} ({sa[-1]} vs {sb[-2]})")
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    a2 = broadcast_to(a2, batch + sa[-2:])
    b2 = broadcast_to(b2, batch + sb[-2:])
    nbatch = len(batch)
    out = lax.dot_general(a2, b2, (((nbatch + 1,), (nbatch,)),
                                   (tuple(range(nbatch)), tuple(range(nbatch)))), precision,
                          preferred_element_type=preferred_element_type)
    if na == 1:
        out = squeeze(out, -2)
    if nb == 1:
        out = squeeze(out, -1)
    return out


def vdot(a, b, precision=None):
    a = ravel(a)
    if dtypes.is_complex(aval_of(a).dtype):
        a = conjugate(a)
    return dot(a, ravel(b), precision=precision)


def vecdot(x1, x2, axis=-1):
    return sum(conjugate(x1) * x2, axis=axis)


def inner(a, b):
    if ndim(a) == 0 or ndim(b) == 0:
        return multiply(a, b)
    return tensordot(a, b, ((ndim(a) - 1,), (ndim(b) - 1,)))


def outer(a, b):
    a, b = ravel(a), ravel(b)
    return multiply(expand_dims(a, 1), expand_dims(b, 0))


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
