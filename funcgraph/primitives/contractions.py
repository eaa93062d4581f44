"""dot_general: batched tensor contraction."""
import numpy as np

from funcgraph import dtypes
from funcgraph.core import ShapedArray
from funcgraph.lowering import i64_array
from funcgraph.primitives.helpers import NUMBER, BOOL, check_dtype, check_same_dtypes, declare


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


def _dot_general_impl(x, y, dimension_numbers, precision=None, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    lf = [i for i in range(x.ndim) if i not in lc and i not in lb]
    rf = [i for i in range(y.ndim) if i not in rc and i not in rb]
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
    if x.dtype == np.bool_:
        x, y = x.astype(np.int32), y.astype(np.int32)
        result = np.einsum(f"{''.join(xs)},{''.join(ys)}->{''.join(out)}", x, y) != 0
    else:
        result = np.einsum(f"{''.join(xs)},{''.join(ys)}->{''.join(out)}", x, y)
    return np.asarray(result).astype(dtype)


def _dot_general_lowering(ctx, avals_in, avals_out, x, y, dimension_numbers, precision=None,
                          preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    dims = (f"#stablehlo.dot<lhs_batching_dimensions = [{', '.join(map(str, lb))}], "
            f"rhs_batching_dimensions = [{', '.join(map(str, rb))}], "
            f"lhs_contracting_dimensions = [{', '.join(map(str, lc))}], "
            f"rhs_contracting_dimensions = [{', '.join(map(str, rc))}]>")
    return ctx.op("stablehlo.dot_general", [x, y], avals_in, avals_out[0],
                  {"dot_dimension_numbers": dims})


dot_general_p = declare("dot_general", _dot_general_shape, _dot_general_impl,
                        _dot_general_lowering)
