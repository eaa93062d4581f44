"""Reductions: reduce_max/min/prod/and/or, argmax/argmin and cumulative ops.  The
family helper `reduction` and reduce_sum, which broadcast_in_dim's transpose binds,
are in base.py (reduce_sum is importable from here too)."""
import numpy as np

from funcgraph import core, dtypes
from funcgraph.array import scalar_array
from funcgraph.core import ShapedArray
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import NoHostImpl
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.lowering import i64_array
from funcgraph.primitives.base import (  # noqa: F401 (reduce_sum_p is re-exported)
    broadcast_in_dim_p, identity, kept_dims, reduce_axes_batch, reduce_sum_p, reduction,
    reshape_p, transpose_p)
from funcgraph.primitives.elementwise import (
    abs_p, add_p, balanced_share, convert_element_type_p, div_p, eq_p, exp_p, log1p_p, max_p,
    min_p, mul_p, ne_p, neg_p, select_n_p, sub_p)
from funcgraph.primitives.helpers import (
    ANY, BOOL, FLOAT, INT, NUMBER, check_dtype, declare, deflinear_unary, defjvp_zero,
    accumulation_dtype, lower_accumulating, lower_compare)
from funcgraph.primitives.structural import concatenate_p, pad_p, rev_p, slice_p


# Differentiation helpers shared by the reductions.

def _full(value, aval):
    scalar = scalar_array(value, aval.dtype)
    return broadcast_in_dim_p.bind(scalar, shape=aval.shape, broadcast_dimensions=())


def _slice_axis(x, start, stop, axis, stride=1):
    shape = core.get_aval(x).shape
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, stop, stride
    return slice_p.bind(x, start_indices=tuple(starts), limit_indices=tuple(limits),
                        strides=tuple(strides))


reduce_prod_p = reduction("reduce_prod", np.prod, "mul", "stablehlo.multiply", NUMBER)


def _exclusive_cumprod(x, axis, reverse):
    """Products of the elements strictly before (after, if reverse) each one along axis."""
    aval = core.get_aval(x)
    n = aval.shape[axis]
    inclusive = cumprod_p.bind(x, axis=axis, reverse=reverse)
    one = _full(1, aval.update(shape=aval.shape[:axis] + (1,) + aval.shape[axis + 1:],
                               weak_type=False))
    parts = [_slice_axis(inclusive, 1, n, axis), one] if reverse else \
        [one, _slice_axis(inclusive, 0, n - 1, axis)]
    return concatenate_p.bind(*parts, dimension=axis)


def _product_of_others(x, axes):
    """For each element, the product of the other elements of its reduced group.  It is
    the product of an exclusive cumulative product from each side: no division, so it
    is right (and differentiable again) where x has zeros."""
    aval = core.get_aval(x)
    kept = kept_dims(aval.ndim, axes)
    perm = kept + tuple(axes)
    moved_shape = tuple(aval.shape[d] for d in perm)
    n = int(np.prod([aval.shape[d] for d in axes], dtype=np.int64))
    if n == 0:
        return x
    moved = perm != tuple(range(aval.ndim))
    flat = transpose_p.bind(x, permutation=perm) if moved else x
    flat = reshape_p.bind(flat, new_sizes=moved_shape[:len(kept)] + (n,), dimensions=None)
    last = len(kept)
    others = mul_p.bind(_exclusive_cumprod(flat, last, False),
                        _exclusive_cumprod(flat, last, True))
    others = reshape_p.bind(others, new_sizes=moved_shape, dimensions=None)
    if not moved:
        return others
    return transpose_p.bind(others, permutation=tuple(int(i) for i in np.argsort(perm)))


def _reduce_prod_jvp(primals, tangents, axes):
    (x,), (t,) = primals, tangents
    out = reduce_prod_p.bind(x, axes=axes)
    return out, reduce_sum_p.bind(mul_p.bind(t, _product_of_others(x, axes)), axes=axes)


jvp_rules[reduce_prod_p] = _reduce_prod_jvp


def _chooser_jvp(prim):
    """The tangent at the extremum; tied elements share it equally (the mean of their
    tangents), as in JAX."""
    def rule(primals, tangents, axes):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes)
        aval = core.get_aval(x)
        spread = broadcast_in_dim_p.bind(out, shape=aval.shape,
                                         broadcast_dimensions=kept_dims(aval.ndim, axes))
        at_extremum = convert_element_type_p.bind(eq_p.bind(x, spread), new_dtype=aval.dtype,
                                                  weak_type=aval.weak_type)
        count = reduce_sum_p.bind(at_extremum, axes=axes)
        return out, div_p.bind(reduce_sum_p.bind(mul_p.bind(t, at_extremum), axes=axes), count)
    jvp_rules[prim] = rule


reduce_max_p = reduction("reduce_max", np.max, "max", "stablehlo.maximum", ANY)
_chooser_jvp(reduce_max_p)
reduce_min_p = reduction("reduce_min", np.min, "min", "stablehlo.minimum", ANY)
_chooser_jvp(reduce_min_p)
# Bitwise on integers (logical on bools), as XLA's and/or.
reduce_and_p = reduction("reduce_and", np.bitwise_and.reduce, "and", "stablehlo.and",
                         (BOOL, INT))
defjvp_zero(reduce_and_p)
reduce_or_p = reduction("reduce_or", np.bitwise_or.reduce, "or", "stablehlo.or", (BOOL, INT))
defjvp_zero(reduce_or_p)
reduce_xor_p = reduction("reduce_xor", np.bitwise_xor.reduce, "xor", "stablehlo.xor",
                         (BOOL, INT))
defjvp_zero(reduce_xor_p)


# --- argmax / argmin: index of the first max (min) along one axis ---------------------
# A NaN counts as larger (for argmax) or smaller (for argmin) than every number, so the
# first NaN wins, as in NumPy and JAX.

def _argminmax_shape(name, x, axes, index_dtype):
    check_dtype(name, x, (BOOL, INT, FLOAT))
    axes = tuple(axes)
    if len(axes) != 1 or not 0 <= axes[0] < x.ndim:
        raise ValueError(f"{name}: axes={axes} must be one axis in [0, {x.ndim}) of the "
                         f"operand {x.str_short()}")
    axis, = axes
    if x.shape[axis] == 0:
        raise ValueError(f"{name} needs a non-empty reduced dimension, but axis {axis} of "
                         f"{x.str_short()} has size 0")
    if not isinstance(index_dtype, np.dtype) or not dtypes.is_int(index_dtype):
        raise TypeError(f"{name}: index_dtype must be an integer dtype, got {index_dtype}")
    if x.shape[axis] - 1 > dtypes.iinfo(index_dtype).max:
        raise ValueError(f"{name}: index_dtype {index_dtype.name} cannot hold the indices of "
                         f"axis {axis} of size {x.shape[axis]}; use a wider index_dtype")
    shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
    return ShapedArray(shape, index_dtype)


def _argminmax_impl(np_fn):
    def impl(x, axes, index_dtype):
        if x.dtype in (dtypes.float16, dtypes.bfloat16):
            x = x.astype(np.float32)  # exact, and NumPy's NaN-aware loops exist for it
        return np.asarray(np_fn(x, axis=axes[0])).astype(index_dtype)
    return impl


def _bool_op(ctx, name, *args):
    scalar = ShapedArray((), dtypes.bool_)
    return ctx.op(name, list(args), [scalar] * len(args), scalar)


def _argminmax_lowering(direction, monoid):
    """A variadic reduce over (values, iota indices); the comparator is a total preorder
    (NaN above/below all numbers, NaNs equal) with ties going to the lower index, so it is
    associative and commutative, as reduce requires."""
    def lower(ctx, avals_in, avals_out, x, axes, index_dtype):
        aval = avals_in[0]
        idx_aval = ShapedArray(aval.shape, index_dtype)
        val = ShapedArray((), aval.dtype)
        idx = ShapedArray((), index_dtype)
        iota = ctx.op("stablehlo.iota", [], [], idx_aval, {"iota_dimension": f"{axes[0]} : i64"})
        init_val = ctx.constant(identity(aval.dtype, monoid), val)
        init_idx = ctx.constant(np.zeros((), index_dtype), idx)

        def body(c, args):
            a, a_idx, b, b_idx = args
            better = lower_compare(c, b, a, val, direction)
            same = lower_compare(c, b, a, val, "EQ")
            if dtypes.is_float(aval.dtype):
                a_nan = lower_compare(c, a, a, val, "NE")
                b_nan = lower_compare(c, b, b, val, "NE")
                a_num = _bool_op(c, "stablehlo.not", a_nan)
                better = _bool_op(c, "stablehlo.or", better,
                                  _bool_op(c, "stablehlo.and", b_nan, a_num))
                same = _bool_op(c, "stablehlo.or", same,
                                _bool_op(c, "stablehlo.and", b_nan, a_nan))
            earlier = lower_compare(c, b_idx, a_idx, idx, "LT")
            pick_b = _bool_op(c, "stablehlo.or", better,
                              _bool_op(c, "stablehlo.and", same, earlier))
            pred = ShapedArray((), dtypes.bool_)
            out_val = c.op("stablehlo.select", [pick_b, b, a], [pred, val, val], val)
            out_idx = c.op("stablehlo.select", [pick_b, b_idx, a_idx], [pred, idx, idx], idx)
            return [out_val, out_idx], [val, idx]

        region = ctx.region([val, idx, val, idx], body)
        out = avals_out[0]
        results = ctx.op("stablehlo.reduce", [x, iota, init_val, init_idx],
                         [aval, idx_aval, val, idx], [out.update(dtype=aval.dtype), out],
                         {"dimensions": i64_array(axes)}, regions=[region])
        return results[1]
    return lower


def _argminmax(name, np_fn, direction, monoid):
    def shape_rule(x, axes, index_dtype):
        return _argminmax_shape(name, x, axes, index_dtype)
    prim = declare(name, shape_rule, _argminmax_impl(np_fn),
                   _argminmax_lowering(direction, monoid))
    batching_rules[prim] = reduce_axes_batch(prim)
    core.symbolic_dims_supported.add(prim)
    return prim


argmax_p = _argminmax("argmax", np.argmax, "GT", "max")
defjvp_zero(argmax_p)
argmin_p = _argminmax("argmin", np.argmin, "LT", "min")
defjvp_zero(argmin_p)


# --- cumulative reductions along one axis -------------------------------------------
# Lowered as a reduce_window whose window spans the whole axis, padded with the
# identity on the low side (high side when reverse) so that output i sees inputs 0..i.

def _cumulative_shape(name, kinds):
    def rule(x, axis, reverse):
        check_dtype(name, x, kinds)
        if not isinstance(axis, int) or not 0 <= axis < x.ndim:
            raise ValueError(f"{name}: axis {axis!r} is out of bounds for the operand "
                             f"{x.str_short()} of rank {x.ndim}; it must be in [0, {x.ndim})")
        if not isinstance(reverse, bool):
            raise TypeError(f"{name}: reverse must be a bool, got {reverse!r}")
        return x
    return rule


# XLA's CPU code scans float sums and products in NumPy's order (x[0], x[0] op x[1],
# ...) only forward over at most this many elements; longer scans are regrouped into a
# tree, and a reverse scan reduces each window x[i:] from its start.
_IN_ORDER_SCAN = 16


def _cumulative_impl(accumulate, reassociated):
    def impl(x, axis, reverse):
        dtype = x.dtype
        if reassociated and dtype.kind in "fcV" and (reverse or x.shape[axis] > _IN_ORDER_SCAN):
            raise NoHostImpl  # XLA adds in another order, which rounds otherwise
        x = x.astype(accumulation_dtype(dtype))  # exact for max/min, wide for sums
        if reverse:
            x = np.flip(x, axis)
        with np.errstate(all="ignore"):
            out = accumulate(x, axis=axis, dtype=x.dtype)
        if reverse:
            out = np.flip(out, axis)
        return np.asarray(out).astype(dtype)
    return impl


def _cumulative_lowering(monoid, region_fn):
    def lower(ctx, avals_in, avals_out, x, axis, reverse):
        if avals_in[0].size == 0:
            return x

        def lower_window(x, aval, aval_out):
            n = aval.shape[axis]
            window = [1] * aval.ndim
            window[axis] = n
            padding = [[0, 0] for _ in aval.shape]
            padding[axis] = [0, n - 1] if reverse else [n - 1, 0]
            scalar = ShapedArray((), aval.dtype)
            init = ctx.constant(identity(aval.dtype, monoid), scalar)
            attrs = {"window_dimensions": i64_array(window),
                     "window_strides": i64_array([1] * aval.ndim),
                     "padding": f"dense<{padding}> : tensor<{aval.ndim}x2xi64>"}
            return ctx.op("stablehlo.reduce_window", [x, init], [aval, scalar], aval_out,
                          attrs, regions=[region_fn(ctx, aval.dtype)])

        if monoid in ("max", "min"):  # exact in any dtype
            return lower_window(x, avals_in[0], avals_out[0])
        return lower_accumulating(ctx, avals_in[0], avals_out[0], x, lower_window)
    return lower


def _hlo_region(op_name):
    return lambda ctx, dtype: ctx.scalar_region(dtype, 2, op_name)


def _logaddexp_region(ctx, dtype):
    """log(exp(a) + exp(b)) = max + log1p(exp(-|a - b|)); where a - b is NaN (NaNs,
    infinities of one sign) a + b is the answer."""
    s = ShapedArray((), dtype)

    def body(c, args):
        a, b = args
        hi = c.op("stablehlo.maximum", [a, b], [s, s], s)
        diff = c.op("stablehlo.subtract", [a, b], [s, s], s)
        neg = c.op("stablehlo.negate", [c.op("stablehlo.abs", [diff], [s], s)], [s], s)
        soft = c.op("stablehlo.log_plus_one", [c.op("stablehlo.exponential", [neg], [s], s)],
                    [s], s)
        total = c.op("stablehlo.add", [hi, soft], [s, s], s)
        undefined = lower_compare(c, diff, diff, s, "NE")
        pred = ShapedArray((), dtypes.bool_)
        both = c.op("stablehlo.add", [a, b], [s, s], s)
        return [c.op("stablehlo.select", [undefined, both, total], [pred, s, s], s)], [s]
    return ctx.region([s, s], body)


def _cumsum_accumulate(x, axis, dtype):
    out = np.cumsum(x, axis=axis, dtype=dtype)
    # XLA's sums start from +0, so a run of -0s sums to +0 (NumPy's keeps -0).
    return out + 0 if out.dtype.kind in "fc" else out


def cumulative(name, accumulate, monoid, region_fn, kinds, reassociated=False):
    """accumulate: the NumPy impl's scan, or None where NumPy's results would round
    otherwise than XLA's (the op then runs compiled eagerly); reassociated: XLA groups
    the scan otherwise where it is reversed or long (sums and products of floats)."""
    impl = (_cumulative_impl(accumulate, reassociated) if accumulate is not None
            else None)
    prim = declare(name, _cumulative_shape(name, kinds), impl,
                   _cumulative_lowering(monoid, region_fn))
    batching_rules[prim] = _cumulative_batch(prim)
    return prim


def _shift_past(axis, batch_dim):
    """A lane axis as an axis of the batched operand, whose batch axis is batch_dim."""
    return axis + (axis >= batch_dim)


def _cumulative_batch(prim):
    """The scanned axis renumbered around the batch axis; the batch axis stays put."""
    def rule(axis_data, args, dims, axis, reverse):
        (x,), (d,) = args, dims
        return prim.bind(x, axis=_shift_past(axis, d), reverse=reverse), d
    return rule


# The nonlinear cumulative ops are differentiated, as in JAX, through a parallel prefix
# scan over (value, tangent) pairs: reduce_window has no derivative of its own, and the
# scan is made of differentiable primitives, so derivatives of any order follow.  Using
# the same scan tree as JAX also splits tangents between ties (cummax, cummin) as JAX does.

def _interleave(evens, odds, axis):
    """Elements of evens at positions 0, 2, 4, ... and of odds at 1, 3, ... along axis:
    each spread out by padding with zeros between its elements, then added."""
    extra = core.get_aval(evens).shape[axis] - core.get_aval(odds).shape[axis]
    return add_p.bind(_spread(evens, axis, 0, 1 - extra), _spread(odds, axis, 1, extra))


def _spread(x, axis, low, high):
    aval = core.get_aval(x)
    config = [(0, 0, 0)] * aval.ndim
    config[axis] = (low, high, 1)
    return pad_p.bind(x, scalar_array(0, aval.dtype), padding_config=tuple(config))


def _prefix_scan(combine, elems, axis):
    """Inclusive scan of the lists of arrays `elems` along axis with an associative
    combine(earlier, later) -> list: combine neighbouring pairs, scan those recursively
    (giving the odd positions), then fill in the even positions from them."""
    n = core.get_aval(elems[0]).shape[axis]
    if n < 2:
        return elems
    pairs = combine([_slice_axis(e, 0, n - 1, axis, 2) for e in elems],
                    [_slice_axis(e, 1, n, axis, 2) for e in elems])
    odds = _prefix_scan(combine, pairs, axis)
    earlier = [_slice_axis(o, 0, n // 2 - 1, axis) for o in odds] if n % 2 == 0 else odds
    evens = combine(earlier, [_slice_axis(e, 2, n, axis, 2) for e in elems])
    evens = [concatenate_p.bind(_slice_axis(e, 0, 1, axis), ev, dimension=axis)
             for e, ev in zip(elems, evens)]
    return [_interleave(ev, od, axis) for ev, od in zip(evens, odds)]


def _scan_jvp(prim, combine):
    """JVP of a cumulative op: the value and the tangent are the halves of a scan over
    (value, tangent) pairs (as JAX's, which has no cumulative primitive here)."""
    def rule(primals, tangents, axis, reverse):
        (x,), (t,) = primals, tangents
        elems = [x, t]
        if reverse:
            elems = [rev_p.bind(e, dimensions=(axis,)) for e in elems]
        outs = _prefix_scan(combine, elems, axis)
        if reverse:
            outs = [rev_p.bind(o, dimensions=(axis,)) for o in outs]
        return outs[0], outs[1]
    jvp_rules[prim] = rule


def _mul_pair(a, b):
    (x, tx), (y, ty) = a, b
    return [mul_p.bind(x, y), add_p.bind(mul_p.bind(tx, y), mul_p.bind(x, ty))]


def _chooser_pair(prim):
    """max/min of pairs; the tangent of the winner, half of each on a tie (as JAX)."""
    def combine(a, b):
        (x, tx), (y, ty) = a, b
        out = prim.bind(x, y)
        wx, wy = balanced_share(x, y, out), balanced_share(y, x, out)
        return [out, add_p.bind(mul_p.bind(tx, wx), mul_p.bind(ty, wy))]
    return combine


def _zero_if_posinf(v):
    aval = core.get_aval(v)
    return select_n_p.bind(eq_p.bind(v, scalar_array(np.inf, aval.dtype)), v, _full(0, aval))


def _logaddexp_pair(a, b):
    """log(exp(x) + exp(y)) of pairs; d = tx exp(x - out) + ty exp(y - out), with +inf
    read as 0 in the exponents (as JAX's logaddexp) so that inf - inf gives no NaN."""
    (x, tx), (y, ty) = a, b
    delta = sub_p.bind(x, y)
    smooth = add_p.bind(max_p.bind(x, y), log1p_p.bind(exp_p.bind(neg_p.bind(abs_p.bind(delta)))))
    # delta is NaN for NaNs and for infinities of one sign, where x + y is the answer.
    out = select_n_p.bind(ne_p.bind(delta, delta), smooth, add_p.bind(x, y))
    out_r = _zero_if_posinf(out)

    def weight(v):
        return exp_p.bind(sub_p.bind(_zero_if_posinf(v), out_r))
    return [out, add_p.bind(mul_p.bind(tx, weight(x)), mul_p.bind(ty, weight(y)))]


def _cumsum_transpose(ct, aval, axis, reverse):
    # out_i sums x_j for j <= i, so x_j's cotangent sums ct_i for i >= j.
    return cumsum_p.bind(ct, axis=axis, reverse=not reverse)


cumsum_p = cumulative("cumsum", _cumsum_accumulate, "add", _hlo_region("stablehlo.add"), NUMBER,
                      reassociated=True)
deflinear_unary(cumsum_p, _cumsum_transpose)
cumprod_p = cumulative("cumprod", np.cumprod, "mul", _hlo_region("stablehlo.multiply"), NUMBER,
                       reassociated=True)
_scan_jvp(cumprod_p, _mul_pair)
cummax_p = cumulative("cummax", np.maximum.accumulate, "max",
                      _hlo_region("stablehlo.maximum"), (INT, FLOAT))
_scan_jvp(cummax_p, _chooser_pair(max_p))
cummin_p = cumulative("cummin", np.minimum.accumulate, "min",
                      _hlo_region("stablehlo.minimum"), (INT, FLOAT))
_scan_jvp(cummin_p, _chooser_pair(min_p))
# NumPy's logaddexp rounds otherwise than XLA's exp and log1p: no NumPy impl.
cumlogsumexp_p = cumulative("cumlogsumexp", None, "max", _logaddexp_region, (FLOAT,))
_scan_jvp(cumlogsumexp_p, _logaddexp_pair)
