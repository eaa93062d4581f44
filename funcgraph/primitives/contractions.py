"""dot_general: batched tensor contraction."""
import math

import numpy as np

from funcgraph import core, dtypes
from funcgraph.core import ShapedArray
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.ad_util import is_zero
from funcgraph.interpreters.eval import NoHostImpl
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.transpose import is_undefined, transpose_rules
from funcgraph.primitives.base import XLA_ORDERED, transpose_p
from funcgraph.primitives.elementwise import add_p, convert_element_type_p
from funcgraph.primitives.helpers import (
    BOOL, NARROW_FLOATS, NUMBER, check_dtype, check_same_dtypes, declare, shift_dims)
from funcgraph.primitives.precision import precision_config


def _dot_general_shape(x, y, dimension_numbers, precision=None, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    check_dtype("dot_general", x, NUMBER + (BOOL,), "lhs")
    check_same_dtypes("dot_general", [x, y])
    for name, dims, aval in (("lhs contracting", lc, x), ("rhs contracting", rc, y),
                             ("lhs batch", lb, x), ("rhs batch", rb, y)):
        if any(not 0 <= d < aval.ndim for d in dims):
            raise TypeError(f"dot_general: {name} dimensions {dims} out of range for "
                            f"{aval.str_short()}")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError(f"dot_general: lhs and rhs need as many contracting and batch "
                        f"dimensions, got {dimension_numbers}")
    for a, b, what in [(x.shape[i], y.shape[j], "contracting") for i, j in zip(lc, rc)] + \
                      [(x.shape[i], y.shape[j], "batch") for i, j in zip(lb, rb)]:
        if a != b:
            raise TypeError(f"dot_general: {what} dimensions differ in size ({a} vs {b}) for "
                            f"{x.str_short()} and {y.str_short()} with dimension_numbers="
                            f"{dimension_numbers}")
    batch = tuple(x.shape[i] for i in lb)
    lhs_free = tuple(d for i, d in enumerate(x.shape) if i not in lc and i not in lb)
    rhs_free = tuple(d for i, d in enumerate(y.shape) if i not in rc and i not in rb)
    dtype = preferred_element_type or x.dtype
    return ShapedArray(batch + lhs_free + rhs_free, dtype, x.weak_type and y.weak_type)


# Float contractions of more multiply-adds than this run compiled eagerly: XLA's matrix
# multiply is jax's (same bits) and many times faster than NumPy's einsum, which does
# not call BLAS (a 2000x784 by 784x1024 product: 14 ms against 135 ms).  Smaller ones
# of narrow floats stay on NumPy, where a call costs less than a compiled one.
_HOST_DOT_MAX_WORK = 1 << 16


# The float types whose products accumulate in float32 (NumPy's einsum cannot multiply
# ml_dtypes' 8- and 4-bit floats at all).
_WIDENED = frozenset(NARROW_FLOATS + dtypes.NARROW_FLOATS)


def _dot_general_impl(x, y, dimension_numbers, precision=None, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    lf = [i for i in range(x.ndim) if i not in lc and i not in lb]
    rf = [i for i in range(y.ndim) if i not in rc and i not in rb]
    if x.dtype in XLA_ORDERED or (
            x.dtype.kind in "fcV" and x.size * math.prod(y.shape[j] for j in rf) > _HOST_DOT_MAX_WORK):
        raise NoHostImpl
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    xs, ys = [None] * x.ndim, [None] * y.ndim
    for i, j in zip(lb, rb):
        xs[i] = ys[j] = next(letters)
    for i, j in zip(lc, rc):
        xs[i] = ys[j] = next(letters)
    for i in lf:
        xs[i] = next(letters)
    for j in rf:
        ys[j] = next(letters)
    out = [xs[i] for i in lb] + [xs[i] for i in lf] + [ys[j] for j in rf]
    dtype = preferred_element_type or x.dtype
    spec = f"{''.join(xs)},{''.join(ys)}->{''.join(out)}"
    if x.dtype == np.bool_:
        result = np.einsum(spec, x.astype(np.int32), y.astype(np.int32)) != 0
    elif {x.dtype, y.dtype} & _WIDENED:  # accumulate in float32, round once
        result = np.einsum(spec, x.astype(np.float32), y.astype(np.float32))
    else:
        result = np.einsum(spec, x, y)
    return np.asarray(result).astype(dtype)


def _dot_general_lowering(ctx, avals_in, avals_out, x, y, dimension_numbers, precision=None,
                          preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    dims = (f"#stablehlo.dot<lhs_batching_dimensions = [{', '.join(map(str, lb))}], "
            f"rhs_batching_dimensions = [{', '.join(map(str, rb))}], "
            f"lhs_contracting_dimensions = [{', '.join(map(str, lc))}], "
            f"rhs_contracting_dimensions = [{', '.join(map(str, rc))}]>")
    return ctx.op("stablehlo.dot_general", [x, y], avals_in, avals_out[0],
                  {"dot_dimension_numbers": dims,
                   "precision_config": precision_config(precision)})


dot_general_p = declare("dot_general", _dot_general_shape, _dot_general_impl,
                        _dot_general_lowering)
core.symbolic_dims_supported.add(dot_general_p)


def _dot_general_jvp(primals, tangents, dimension_numbers, precision=None,
                     preferred_element_type=None):
    x, y = primals
    tx, ty = tangents
    params = dict(dimension_numbers=dimension_numbers, precision=precision,
                  preferred_element_type=preferred_element_type)
    out = dot_general_p.bind(x, y, **params)
    terms = []
    if not is_zero(tx):
        terms.append(dot_general_p.bind(tx, y, **params))
    if not is_zero(ty):
        terms.append(dot_general_p.bind(x, ty, **params))
    tangent = terms[0] if len(terms) == 1 else add_p.bind(*terms)
    return out, tangent


def _dot_general_transpose_operand(ct, other, operand_aval, dimension_numbers, operand_is_lhs,
                                   preferred_element_type, precision):
    """Cotangent of one operand: contract ct with the other operand over the other's free
    dimensions, then put the result's axes in the operand's order.  For the rhs the
    product is formed as (other, ct), which for a matmul's weights already has the
    weights' layout, so no transpose is needed."""
    (lc, rc), (lb, rb) = dimension_numbers
    x_ndim = operand_aval.ndim
    mine_c, other_c = (lc, rc) if operand_is_lhs else (rc, lc)
    mine_b, other_b = (lb, rb) if operand_is_lhs else (rb, lb)
    other_ndim = core.get_aval(other).ndim
    mine_free = [i for i in range(x_ndim) if i not in mine_c and i not in mine_b]
    other_free = [i for i in range(other_ndim) if i not in other_c and i not in other_b]
    nb = len(lb)
    # ct's axes: batch, lhs free, rhs free.
    if operand_is_lhs:
        ct_other_free = tuple(range(nb + len(mine_free), nb + len(mine_free) + len(other_free)))
        dims = ((ct_other_free, tuple(other_free)), (tuple(range(nb)), tuple(other_b)))
        result = dot_general_p.bind(ct, other, dimension_numbers=dims, precision=precision,
                                    preferred_element_type=None)
        # result axes: batch, ct's remaining (mine free), other's contracting dims ascending.
        result_to_mine = list(mine_b) + mine_free + [mine_c[list(other_c).index(d)]
                                                    for d in sorted(other_c)]
    else:
        ct_other_free = tuple(range(nb, nb + len(other_free)))
        dims = ((tuple(other_free), ct_other_free), (tuple(other_b), tuple(range(nb))))
        result = dot_general_p.bind(other, ct, dimension_numbers=dims, precision=precision,
                                    preferred_element_type=None)
        # result axes: batch, other's contracting dims ascending, ct's remaining (mine free).
        result_to_mine = list(mine_b) + [mine_c[list(other_c).index(d)]
                                         for d in sorted(other_c)] + mine_free
    perm = tuple(result_to_mine.index(k) for k in range(x_ndim))
    if perm != tuple(range(x_ndim)):
        result = transpose_p.bind(result, permutation=perm)
    if core.get_aval(result).dtype != operand_aval.dtype:
        result = convert_element_type_p.bind(result, new_dtype=operand_aval.dtype,
                                             weak_type=False)
    return result


def _dot_general_transpose(ct, x, y, dimension_numbers, precision=None,
                           preferred_element_type=None):
    if is_zero(ct):
        return [None, None]
    ct_x = ct_y = None
    if is_undefined(x):
        ct_x = _dot_general_transpose_operand(ct, y, x.aval, dimension_numbers, True,
                                              preferred_element_type, precision)
    if is_undefined(y):
        ct_y = _dot_general_transpose_operand(ct, x, y.aval, dimension_numbers, False,
                                              preferred_element_type, precision)
    return [ct_x, ct_y]


jvp_rules[dot_general_p] = _dot_general_jvp
transpose_rules[dot_general_p] = _dot_general_transpose


def _dot_general_batch(axis_data, args, dims, dimension_numbers, precision=None,
                       preferred_element_type=None):
    """Batch dims become dot_general batch (both batched) or free dims (one batched):
    no transposes needed."""
    x, y = args
    xd, yd = dims
    (lc, rc), (lb, rb) = dimension_numbers
    params = dict(precision=precision, preferred_element_type=preferred_element_type)
    if xd is not None and yd is not None:
        new = ((shift_dims(lc, xd), shift_dims(rc, yd)),
               ((xd,) + shift_dims(lb, xd), (yd,) + shift_dims(rb, yd)))
        return dot_general_p.bind(x, y, dimension_numbers=new, **params), 0
    if xd is not None:
        new = ((shift_dims(lc, xd), rc), (shift_dims(lb, xd), rb))
        x_ndim = core.get_aval(x).ndim
        free = [i for i in range(x_ndim) if i not in new[0][0] and i not in new[1][0]]
        out_dim = len(lb) + free.index(xd)
        return dot_general_p.bind(x, y, dimension_numbers=new, **params), out_dim
    new = ((lc, shift_dims(rc, yd)), (lb, shift_dims(rb, yd)))
    x_ndim, y_ndim = core.get_aval(x).ndim, core.get_aval(y).ndim
    lhs_free = x_ndim - len(lc) - len(lb)
    free = [i for i in range(y_ndim) if i not in new[0][1] and i not in new[1][1]]
    out_dim = len(lb) + lhs_free + free.index(yd)
    return dot_general_p.bind(x, y, dimension_numbers=new, **params), out_dim


batching_rules[dot_general_p] = _dot_general_batch
