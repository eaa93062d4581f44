"""Windowed reductions (XLA's ReduceWindow) and the generic reduce over a user monoid.

reduce_window_sum/max/min reduce each window of an operand with a fixed monoid; the
generic reduce_window and reduce take the monoid as a jaxpr.  Max/min pooling is
differentiated as XLA does it: the JVP gathers, per window, the tangent at the selected
element (select_and_gather_add), whose transpose scatters cotangents back to it
(select_and_scatter_add, lowered to stablehlo.select_and_scatter).

Window params, one entry per operand dimension: window_dimensions, window_strides,
padding ((low, high) pairs), base_dilation, window_dilation.  Padding and base-dilation
holes hold the reduction's identity (its init value)."""
import numpy as np

from funcgraph import core, dtypes
from funcgraph.array import scalar_array
from funcgraph.core import ShapedArray
from funcgraph.interpreters.ad_util import Zero, instantiate, is_zero
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import eval_jaxpr
from funcgraph.interpreters.jvp import jvp_flat, jvp_rules
from funcgraph.interpreters.staging import trace_flat
from funcgraph.interpreters.transpose import is_undefined, transpose_rules
from funcgraph.lowering import i64_array, lower_closed_body
from funcgraph.primitives.base import identity, reshape_p, transpose_p
from funcgraph.primitives.batching_helpers import batch_at, vmap_flat
from funcgraph.primitives.convolution import dilate_dim, stride_dim
from funcgraph.primitives.helpers import (
    ANY, NUMBER, accumulation_dtype, check_dtype, declare, deflinear_unary, lower_accumulating,
    lower_compare)
from funcgraph.primitives.jaxprs import jvp_jaxpr
from funcgraph.primitives.structural import pad_p, slice_p

WINDOW_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation",
                 "window_dilation")


# --- shapes and NumPy windows ----------------------------------------------------------

def window_out_shape(name, shape, window_dimensions, window_strides, padding, base_dilation,
                     window_dilation):
    n = len(shape)
    for what, value in zip(WINDOW_PARAMS, (window_dimensions, window_strides, padding,
                                           base_dilation, window_dilation), strict=True):
        if len(value) != n:
            raise TypeError(f"{name}: {what} {value} needs one entry per operand dimension "
                            f"(operand shape {shape})")
    for what, value in (("window_dimensions", window_dimensions),
                        ("window_strides", window_strides), ("base_dilation", base_dilation),
                        ("window_dilation", window_dilation)):
        if any(v < 1 for v in value):
            raise TypeError(f"{name}: {what} must be positive, got {value}")
    out = []
    for d, k, s, (lo, hi), b, w in zip(shape, window_dimensions, window_strides, padding,
                                       base_dilation, window_dilation):
        padded = dilate_dim(d, b) + lo + hi
        if padded < 0:
            raise ValueError(f"{name}: padding {padding} removes more than the operand's "
                             f"shape {shape} holds")
        out.append(stride_dim(padded, dilate_dim(k, w), s))
    return tuple(out)


def _params_shape(name, x, params):
    return window_out_shape(name, x.shape, *(params[p] for p in WINDOW_PARAMS))


def numpy_windows(x, fill, window_dimensions, window_strides, padding, base_dilation,
                  window_dilation):
    """The windows of x as an array of shape (output shape..., window shape...), padding
    and dilation holes holding `fill`."""
    shape = [dilate_dim(d, b) for d, b in zip(x.shape, base_dilation)]
    full = np.full(shape, fill, x.dtype)
    full[tuple(slice(None, None, b) for b in base_dilation)] = x
    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    full = np.pad(full, grow, constant_values=np.asarray(fill, x.dtype))
    full = full[tuple(slice(max(-lo, 0), full.shape[k] - max(-hi, 0))
                      for k, (lo, hi) in enumerate(padding))]
    out_shape = window_out_shape("reduce_window", x.shape, window_dimensions, window_strides,
                                 padding, base_dilation, window_dilation)
    spans = [dilate_dim(k, w) for k, w in zip(window_dimensions, window_dilation)]
    if 0 in out_shape:
        return np.zeros(tuple(out_shape) + tuple(window_dimensions), x.dtype)
    views = np.lib.stride_tricks.sliding_window_view(full, spans)
    picked = tuple(slice(None, (m - 1) * s + 1, s) for m, s in zip(out_shape, window_strides))
    picked += tuple(slice(None, None, w) for w in window_dilation)
    return views[picked]


def _window_attrs(ndim, window_dimensions, window_strides, padding, base_dilation,
                  window_dilation):
    pads = [[int(lo), int(hi)] for lo, hi in padding]
    return {"window_dimensions": i64_array(window_dimensions),
            "window_strides": i64_array(window_strides),
            "base_dilations": i64_array(base_dilation),
            "window_dilations": i64_array(window_dilation),
            "padding": f"dense<{pads}> : tensor<{ndim}x2xi64>" if ndim else
            "dense<> : tensor<0x2xi64>"}


def with_leading_window(params, dims=1):
    """Window params for an operand with `dims` new leading axes that are not windowed."""
    new = dict(params)
    for p, unit in (("window_dimensions", 1), ("window_strides", 1), ("padding", (0, 0)),
                    ("base_dilation", 1), ("window_dilation", 1)):
        if p in new:
            new[p] = (unit,) * dims + tuple(new[p])
    return new


def _batch_leading(prim):
    """Batching rule of a windowed primitive: every operand gets the batch axis in front
    (a window of 1 along it)."""
    def rule(axis_data, args, dims, **params):
        args = [batch_at(a, d, axis_data.size, 0) for a, d in zip(args, dims, strict=True)]
        return prim.bind(*args, **with_leading_window(params)), 0
    return rule


# --- reduce_window_sum / max / min -----------------------------------------------------

def _monoid_window(name, monoid, np_reduce, hlo_op, kinds):
    accumulates = monoid == "add"

    def shape_rule(x, **params):
        check_dtype(name, x, kinds)
        return ShapedArray(_params_shape(name, x, params), x.dtype, x.weak_type)

    def impl(x, **params):
        wide = x.astype(accumulation_dtype(x.dtype)) if accumulates else x
        windows = numpy_windows(wide, identity(wide.dtype, monoid), **params)
        axes = tuple(range(x.ndim, 2 * x.ndim))
        return np.asarray(np_reduce(windows, axis=axes)).astype(x.dtype)

    def lower_wide(ctx, x, aval_in, aval_out, params):
        scalar = ShapedArray((), aval_in.dtype)
        init = ctx.constant(identity(aval_in.dtype, monoid), scalar)
        return ctx.op("stablehlo.reduce_window", [x, init], [aval_in, scalar], aval_out,
                      _window_attrs(aval_in.ndim, *(params[p] for p in WINDOW_PARAMS)),
                      regions=[ctx.scalar_region(aval_in.dtype, 2, hlo_op)])

    def lowering(ctx, avals_in, avals_out, x, **params):
        if not accumulates:
            return lower_wide(ctx, x, avals_in[0], avals_out[0], params)
        return lower_accumulating(ctx, avals_in[0], avals_out[0], x,
                                  lambda v, a_in, a_out: lower_wide(ctx, v, a_in, a_out, params))

    prim = declare(name, shape_rule, impl, lowering)
    batching_rules[prim] = _batch_leading(prim)
    return prim


reduce_window_sum_p = _monoid_window("reduce_window_sum", "add", np.sum, "stablehlo.add",
                                     NUMBER)


def _reduce_window_sum_transpose(ct, aval, window_dimensions, window_strides, padding,
                                 base_dilation, window_dilation):
    """Each operand element fed every window covering it: spread ct back to the stride
    grid (interior padding), pad so that each operand position sees the windows that
    covered it, and sum windows of the same (symmetric) shape, stepping over the holes
    of the base dilation."""
    config = []
    for n, k, s, (lo, _), b, w, m in zip(aval.shape, window_dimensions, window_strides,
                                         padding, base_dilation, window_dilation,
                                         core.get_aval(ct).shape, strict=True):
        span = dilate_dim(k, w)
        before = span - lo - 1
        after = dilate_dim(n, b) + span - 1 - dilate_dim(m, s) - before
        config.append((before, after, s - 1))
    zero = scalar_array(0, aval.dtype)
    spread = pad_p.bind(ct, zero, padding_config=tuple(config))
    ones = (1,) * aval.ndim
    return reduce_window_sum_p.bind(spread, window_dimensions=window_dimensions,
                                    window_strides=tuple(base_dilation),
                                    padding=((0, 0),) * aval.ndim, base_dilation=ones,
                                    window_dilation=window_dilation)


deflinear_unary(reduce_window_sum_p, _reduce_window_sum_transpose)

reduce_window_max_p = _monoid_window("reduce_window_max", "max", np.max, "stablehlo.maximum",
                                     ANY)
reduce_window_min_p = _monoid_window("reduce_window_min", "min", np.min, "stablehlo.minimum",
                                     ANY)


# --- select_and_gather_add: per window, the tangent at the selected operand element ---
# select_prim is "ge" (max: the first maximum wins) or "le" (min).

_SELECT_MONOID = {"ge": "max", "le": "min"}


def _selected_flat_index(windows, select_prim, ndim):
    """Per window, the row-major index within the window of the first selected element."""
    flat = windows.reshape(windows.shape[:ndim] + (-1,))
    if select_prim == "ge":
        return np.argmax(flat, axis=-1)
    return np.argmin(flat, axis=-1)


def _select_gather_shape(tangents, operand, select_prim, **params):
    if tangents.shape != operand.shape or tangents.dtype != operand.dtype:
        raise TypeError(f"select_and_gather_add: tangents {tangents.str_short()} and operand "
                        f"{operand.str_short()} must have one type")
    return ShapedArray(_params_shape("select_and_gather_add", operand, params), operand.dtype)


def _select_gather_impl(tangents, operand, select_prim, **params):
    ndim = operand.ndim
    fill = identity(operand.dtype, _SELECT_MONOID[select_prim])
    chosen = _selected_flat_index(numpy_windows(operand, fill, **params), select_prim, ndim)
    t_windows = numpy_windows(tangents, np.zeros((), tangents.dtype), **params)
    t_flat = t_windows.reshape(t_windows.shape[:ndim] + (-1,))
    return np.take_along_axis(t_flat, chosen[..., None], axis=-1)[..., 0]


def _select_gather_lowering(ctx, avals_in, avals_out, tangents, operand, select_prim,
                            **params):
    """A variadic reduce_window over (operand, tangent) pairs keeping the selected pair."""
    t_aval, x_aval = avals_in
    scalar = ShapedArray((), x_aval.dtype)
    pred = ShapedArray((), dtypes.bool_)
    init_x = ctx.constant(identity(x_aval.dtype, _SELECT_MONOID[select_prim]), scalar)
    init_t = ctx.constant(np.zeros((), x_aval.dtype), scalar)
    direction = "GE" if select_prim == "ge" else "LE"

    def body(c, args):
        acc_x, acc_t, x, t = args
        keep = lower_compare(c, acc_x, x, scalar, direction)
        return [c.op("stablehlo.select", [keep, acc_x, x], [pred, scalar, scalar], scalar),
                c.op("stablehlo.select", [keep, acc_t, t], [pred, scalar, scalar], scalar)], \
            [scalar, scalar]

    out = avals_out[0]
    results = ctx.op("stablehlo.reduce_window", [operand, tangents, init_x, init_t],
                     [x_aval, t_aval, scalar, scalar], [out, out],
                     _window_attrs(x_aval.ndim, *(params[p] for p in WINDOW_PARAMS)),
                     regions=[ctx.region([scalar] * 4, body)])
    return results[1]


select_and_gather_add_p = declare("select_and_gather_add", _select_gather_shape,
                                  _select_gather_impl, _select_gather_lowering)


def _select_gather_jvp(primals, tangents, **params):
    t, operand = primals
    out = select_and_gather_add_p.bind(t, operand, **params)
    dt = tangents[0]
    if is_zero(dt):
        return out, Zero(core.get_aval(out))
    return out, select_and_gather_add_p.bind(dt, operand, **params)


def _select_gather_transpose(ct, tangents, operand, select_prim, window_dimensions,
                             window_strides, padding, base_dilation, window_dilation):
    if is_undefined(operand):
        raise core.missing_rule(select_and_gather_add_p, "transpose with respect to operand",
                                "it is linear in its tangents only")
    if is_zero(ct):
        return [None, None]
    if any(w != 1 for w in window_dilation):
        raise NotImplementedError(f"VJP not implemented for select_and_gather (MaxPool) with "
                                  f"window dilation, got window_dilation={window_dilation}.")
    dilated = any(b != 1 for b in base_dilation)
    if dilated:  # the holes hold the identity, which is never selected over a real element
        fill = scalar_array(identity(core.get_aval(operand).dtype,
                                     _SELECT_MONOID[select_prim]), core.get_aval(operand).dtype)
        operand = pad_p.bind(operand, fill,
                             padding_config=tuple((0, 0, b - 1) for b in base_dilation))
    out = select_and_scatter_add_p.bind(ct, operand, select_prim=select_prim,
                                        window_dimensions=window_dimensions,
                                        window_strides=window_strides, padding=padding)
    if dilated:
        shape = core.get_aval(out).shape
        out = slice_p.bind(out, start_indices=(0,) * len(shape), limit_indices=shape,
                           strides=tuple(base_dilation))
    return [out, None]


# --- select_and_scatter_add: cotangents back to the selected element of each window ---

def _select_scatter_shape(source, operand, select_prim, window_dimensions, window_strides,
                          padding):
    out = window_out_shape("select_and_scatter_add", operand.shape, window_dimensions,
                           window_strides, padding, (1,) * operand.ndim, (1,) * operand.ndim)
    if source.shape != out or source.dtype != operand.dtype:
        raise TypeError(f"select_and_scatter_add: source {source.str_short()} must have the "
                        f"dtype of operand {operand.str_short()} and its window shape {out}")
    return ShapedArray(operand.shape, operand.dtype)


def _select_scatter_impl(source, operand, select_prim, window_dimensions, window_strides,
                         padding):
    ndim = operand.ndim
    ones = (1,) * ndim
    fill = identity(operand.dtype, _SELECT_MONOID[select_prim])
    windows = numpy_windows(operand, fill, window_dimensions, window_strides, padding, ones,
                            ones)
    chosen = _selected_flat_index(windows, select_prim, ndim)
    offsets = np.unravel_index(chosen, tuple(window_dimensions))
    grid = np.indices(source.shape)
    # positions in the padded operand, then back to the operand (padding gets dropped)
    target = [g * s + o - lo for g, s, o, (lo, _) in zip(grid, window_strides, offsets,
                                                          padding)]
    inside = np.ones(source.shape, bool)
    for t, n in zip(target, operand.shape):
        inside &= (t >= 0) & (t < n)
    wide = source.astype(accumulation_dtype(source.dtype))
    out = np.zeros(operand.shape, wide.dtype)
    np.add.at(out, tuple(t[inside] for t in target), wide[inside])
    return out.astype(operand.dtype)


def _select_scatter_lowering(ctx, avals_in, avals_out, source, operand, select_prim,
                             window_dimensions, window_strides, padding):
    """As jax: pad the operand with the identity first, so padding competes in the
    selection as it does in the reduce_window being differentiated, then crop."""
    s_aval, x_aval = avals_in
    scalar = ShapedArray((), x_aval.dtype)
    fill = ctx.constant(identity(x_aval.dtype, _SELECT_MONOID[select_prim]), scalar)
    padded_aval = x_aval.update(shape=tuple(n + lo + hi for n, (lo, hi) in
                                            zip(x_aval.shape, padding)))
    lows, highs = [lo for lo, _ in padding], [hi for _, hi in padding]
    padded = ctx.op("stablehlo.pad", [operand, fill], [x_aval, scalar], padded_aval,
                    {"edge_padding_low": i64_array(lows), "edge_padding_high": i64_array(highs),
                     "interior_padding": i64_array([0] * x_aval.ndim)})
    zero = ctx.constant(np.zeros((), x_aval.dtype), scalar)
    direction = "GE" if select_prim == "ge" else "LE"

    def select(c, args):
        return [lower_compare(c, args[0], args[1], scalar, direction)], \
            [ShapedArray((), dtypes.bool_)]

    attrs = {"window_dimensions": i64_array(window_dimensions),
             "window_strides": i64_array(window_strides),
             "padding": f"dense<0> : tensor<{x_aval.ndim}x2xi64>"}
    scattered = ctx.op("stablehlo.select_and_scatter", [padded, source, zero],
                       [padded_aval, s_aval, scalar], padded_aval, attrs,
                       regions=[ctx.region([scalar, scalar], select),
                                ctx.scalar_region(x_aval.dtype, 2, "stablehlo.add")])
    return ctx.op("stablehlo.slice", [scattered], [padded_aval], avals_out[0],
                  {"start_indices": i64_array(lows),
                   "limit_indices": i64_array([lo + n for lo, n in zip(lows, x_aval.shape)]),
                   "strides": i64_array([1] * x_aval.ndim)})


select_and_scatter_add_p = declare("select_and_scatter_add", _select_scatter_shape,
                                   _select_scatter_impl, _select_scatter_lowering)


def _select_scatter_jvp(primals, tangents, **params):
    source, operand = primals
    out = select_and_scatter_add_p.bind(source, operand, **params)
    if is_zero(tangents[0]):
        return out, Zero(core.get_aval(out))
    return out, select_and_scatter_add_p.bind(tangents[0], operand, **params)


def _select_scatter_transpose(ct, source, operand, select_prim, window_dimensions,
                              window_strides, padding):
    if is_undefined(operand):
        raise core.missing_rule(select_and_scatter_add_p, "transpose with respect to operand",
                                "it is linear in its source only")
    if is_zero(ct):
        return [None, None]
    ones = (1,) * len(window_dimensions)
    return [select_and_gather_add_p.bind(
        ct, operand, select_prim=select_prim, window_dimensions=window_dimensions,
        window_strides=window_strides, padding=padding, base_dilation=ones,
        window_dilation=ones), None]


jvp_rules[select_and_gather_add_p] = _select_gather_jvp
transpose_rules[select_and_gather_add_p] = _select_gather_transpose
batching_rules[select_and_gather_add_p] = _batch_leading(select_and_gather_add_p)
jvp_rules[select_and_scatter_add_p] = _select_scatter_jvp
transpose_rules[select_and_scatter_add_p] = _select_scatter_transpose
batching_rules[select_and_scatter_add_p] = _batch_leading(select_and_scatter_add_p)


def _chooser_jvp(prim, select_prim):
    """max/min pooling: the tangent of each window's selected element."""
    def rule(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, **params)
        return out, select_and_gather_add_p.bind(instantiate(t), x, select_prim=select_prim,
                                                 **params)
    jvp_rules[prim] = rule


_chooser_jvp(reduce_window_max_p, "ge")
_chooser_jvp(reduce_window_min_p, "le")


# --- generic reduce_window and reduce: the monoid is a jaxpr ---------------------------
# operands: *operands, *init_values; params: jaxpr (const-free ClosedJaxpr taking
# (accumulators..., elements...) scalars to accumulators...), and the window params or
# `dimensions`.  No NumPy impl: eager calls run compiled.

def _check_monoid(name, operands, inits, jaxpr):
    if len(operands) != len(inits) or not operands:
        raise TypeError(f"{name} needs as many init_values as operands (at least one), got "
                        f"{len(operands)} and {len(inits)}")
    if len({a.shape for a in operands}) > 1:
        raise TypeError(f"{name}: operands must have one shape, got "
                        f"{[a.str_short() for a in operands]}")
    for x, init in zip(operands, inits):
        if init.shape != () or init.dtype != x.dtype:
            raise TypeError(f"{name}: init value {init.str_short()} must be a scalar of the "
                            f"dtype of its operand {x.str_short()}")
    scalars = [ShapedArray((), a.dtype) for a in inits]
    if [a.strip_weak_type() for a in jaxpr.in_avals] != scalars * 2 or \
            [a.strip_weak_type() for a in jaxpr.out_avals] != scalars:
        raise TypeError(f"{name}: the computation must map two sets of scalars of types "
                        f"{[a.str_short() for a in scalars]} to one, got "
                        f"{[a.str_short() for a in jaxpr.in_avals]} -> "
                        f"{[a.str_short() for a in jaxpr.out_avals]}")


def _monoid_region(ctx, jaxpr, dtypes_):
    scalars = [ShapedArray((), d) for d in dtypes_]

    def body(c, args):
        return lower_closed_body(c, jaxpr, list(args)), scalars
    return ctx.region(scalars * 2, body)


def _reduce_window_shape(*args, jaxpr, **params):
    n = len(args) // 2
    operands, inits = args[:n], args[n:]
    _check_monoid("reduce_window", operands, inits, jaxpr)
    shape = _params_shape("reduce_window", operands[0], params)
    return [ShapedArray(shape, x.dtype) for x in operands]


def _reduce_window_lowering(ctx, avals_in, avals_out, *args, jaxpr, **params):
    n = len(args) // 2
    return ctx.op("stablehlo.reduce_window", list(args), list(avals_in), list(avals_out),
                  _window_attrs(avals_in[0].ndim, *(params[p] for p in WINDOW_PARAMS)),
                  regions=[_monoid_region(ctx, jaxpr, [a.dtype for a in avals_in[:n]])])


reduce_window_p = declare("reduce_window", _reduce_window_shape, None, _reduce_window_lowering,
                          multiple_results=True)


def _paired_jvp_monoid(jaxpr, n):
    """The monoid over (primals..., tangents...) pairs: the JVP of jaxpr, with inputs
    (acc primals, acc tangents, element primals, element tangents)."""
    jvp, _ = jvp_jaxpr(jaxpr, [True] * (2 * n), force=[True] * n)

    def paired(*args):
        acc_p, acc_t, x_p, x_t = (args[i * n:(i + 1) * n] for i in range(4))
        return eval_jaxpr(jvp.jaxpr, jvp.consts, *acc_p, *x_p, *acc_t, *x_t)
    avals = [a.strip_weak_type() for a in jaxpr.in_avals[:n]]
    return trace_flat(paired, avals * 4)


def _reduce_window_jvp(primals, tangents, jaxpr, **params):
    n = len(primals) // 2
    if not all(is_zero(t) for t in tangents[n:]):
        raise TypeError("reduce_window jvp does not support non-zero init_value_tangent.")
    operands, inits = primals[:n], primals[n:]
    op_tangents = [instantiate(t) for t in tangents[:n]]
    zeros = [scalar_array(0, core.get_aval(x).dtype) for x in inits]
    outs = reduce_window_p.bind(*operands, *op_tangents, *inits, *zeros,
                                jaxpr=_paired_jvp_monoid(jaxpr, n), **params)
    return outs[:n], outs[n:]


def _reduce_window_batch(axis_data, args, dims, jaxpr, **params):
    n = len(args) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("reduce_window batching over init_values (vmap with a "
                                  "mapped init_value) is not supported, as in JAX")
    operands = [batch_at(a, d, axis_data.size, 0) for a, d in zip(args[:n], dims[:n])]
    outs = reduce_window_p.bind(*operands, *args[n:], jaxpr=jaxpr,
                                **with_leading_window(params))
    return outs, [0] * n


jvp_rules[reduce_window_p] = _reduce_window_jvp
batching_rules[reduce_window_p] = _reduce_window_batch


def _reduce_shape(*args, jaxpr, dimensions):
    n = len(args) // 2
    operands, inits = args[:n], args[n:]
    _check_monoid("reduce", operands, inits, jaxpr)
    ndim = operands[0].ndim
    if len(set(dimensions)) != len(dimensions) or any(not 0 <= d < ndim for d in dimensions):
        raise ValueError(f"reduce: dimensions {dimensions} are invalid for operands of rank "
                         f"{ndim}; each must be in [0, {ndim}) and appear once")
    shape = tuple(s for i, s in enumerate(operands[0].shape) if i not in dimensions)
    return [ShapedArray(shape, x.dtype) for x in operands]


def _reduce_lowering(ctx, avals_in, avals_out, *args, jaxpr, dimensions):
    n = len(args) // 2
    return ctx.op("stablehlo.reduce", list(args), list(avals_in), list(avals_out),
                  {"dimensions": i64_array(dimensions)},
                  regions=[_monoid_region(ctx, jaxpr, [a.dtype for a in avals_in[:n]])])


reduce_p = declare("reduce", _reduce_shape, None, _reduce_lowering, multiple_results=True)


def _halve(x, n_first):
    shape = core.get_aval(x).shape
    first = slice_p.bind(x, start_indices=(0,) * len(shape),
                         limit_indices=(n_first,) + shape[1:], strides=None)
    second = slice_p.bind(x, start_indices=(n_first,) + (0,) * (len(shape) - 1),
                          limit_indices=shape, strides=None)
    return first, second


def _tree_reduce(jaxpr, inits, xs):
    """Reduce arrays of shape (k, m) along axis 0 by combining halves elementwise (the
    monoid applied lane by lane), padding an odd half with the init value."""
    def monoid(*args):
        return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)

    while core.get_aval(xs[0]).shape[0] > 1:
        k, m = core.get_aval(xs[0]).shape
        first_n = (k + 1) // 2
        halves = [_halve(x, first_n) for x in xs]
        firsts = [h[0] for h in halves]
        seconds = [h[1] for h in halves]
        if k % 2:
            seconds = [pad_p.bind(s, init, padding_config=((0, 1, 0), (0, 0, 0)))
                       for s, init in zip(seconds, inits)]
        flat = [reshape_p.bind(v, new_sizes=(first_n * m,), dimensions=None)
                for v in firsts + seconds]
        outs = vmap_flat(monoid, flat, [0] * len(flat), first_n * m)
        xs = [reshape_p.bind(o, new_sizes=(first_n, m), dimensions=None) for o in outs]
    return xs


def _reduce_jvp(primals, tangents, jaxpr, dimensions):
    """A tree of pairwise combinations (jax's approach) gives the tangent for any monoid:
    it is made of slices, pads and the monoid itself, all differentiable."""
    n = len(primals) // 2
    if not all(is_zero(t) for t in tangents[n:]):
        raise TypeError("reduce jvp does not support non-zero init_value_tangent.")
    operands, inits = list(primals[:n]), list(primals[n:])
    outs = reduce_p.bind(*operands, *inits, jaxpr=jaxpr, dimensions=dimensions)
    shape = core.get_aval(operands[0]).shape
    kept = [d for d in range(len(shape)) if d not in dimensions]
    k = int(np.prod([shape[d] for d in dimensions], dtype=np.int64))
    if k == 0:
        return outs, [Zero(core.get_aval(o)) for o in outs]
    m = int(np.prod([shape[d] for d in kept], dtype=np.int64))
    perm = tuple(dimensions) + tuple(kept)

    def flat_tree(*xs):
        xs = [reshape_p.bind(transpose_p.bind(x, permutation=perm), new_sizes=(k, m),
                             dimensions=None) for x in xs]
        out_shape = tuple(shape[d] for d in kept)
        return [reshape_p.bind(r, new_sizes=out_shape, dimensions=None)
                for r in _tree_reduce(jaxpr, inits, xs)]

    _, out_tangents = jvp_flat(flat_tree, operands, list(tangents[:n]))
    return outs, out_tangents


def _reduce_batch(axis_data, args, dims, jaxpr, dimensions):
    n = len(args) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("reduce batching over init_values (vmap with a mapped "
                                  "init_value) is not supported, as in JAX")
    operands = [batch_at(a, d, axis_data.size, 0) for a, d in zip(args[:n], dims[:n])]
    outs = reduce_p.bind(*operands, *args[n:], jaxpr=jaxpr,
                         dimensions=tuple(d + 1 for d in dimensions))
    return outs, [0] * n


jvp_rules[reduce_p] = _reduce_jvp
batching_rules[reduce_p] = _reduce_batch
