"""conv_general_dilated: XLA's general convolution, with every rule in one block.

Operands are permuted to the canonical layouts by `dimension_numbers`: lhs (batch,
feature, spatial...), rhs (out feature, in feature, spatial...), output (batch, feature,
spatial...).  Groups split features: with feature_group_count G the lhs features form G
groups and the rhs output features G groups, group g of one meeting group g of the
other; with batch_group_count B the lhs batch forms B groups (group major), each paired
with a group of the rhs output features.  At most one of G and B exceeds 1."""
from typing import NamedTuple

import numpy as np

from funcgraph import core, dtypes
from funcgraph.core import ShapedArray
from funcgraph.interpreters.ad_util import Zero, is_zero
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.transpose import is_undefined, transpose_rules
from funcgraph.lowering import i64_array
from funcgraph.primitives.base import reshape_p, transpose_p
from funcgraph.primitives.elementwise import add_p, convert_element_type_p
from funcgraph.primitives.helpers import (
    NARROW_FLOATS, NUMBER, check_dtype, check_same_dtypes, declare)
from funcgraph.primitives.precision import precision_config
from funcgraph.primitives.structural import rev_p


class ConvDimensionNumbers(NamedTuple):
    """Where each role sits: lhs_spec = (batch dim, feature dim, spatial dims...),
    rhs_spec = (out feature dim, in feature dim, spatial dims...), out_spec as lhs_spec."""
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def dilate_dim(size, dilation):
    """The size of a dimension with dilation - 1 holes between neighbours."""
    return 0 if size == 0 else 1 + dilation * (size - 1)


def stride_dim(size, window, stride):
    """How many windows of `window` fit in `size` at `stride` (0 if none)."""
    return max(0, (size - window) // stride + 1)


# --- shape rule ------------------------------------------------------------------------

def _conv_error(message):
    return TypeError(f"conv_general_dilated: {message}")


def _check_groups(lhs, rhs, dnums, feature_group_count, batch_group_count):
    lhs_spec, rhs_spec, _ = dnums
    features, batch = lhs.shape[lhs_spec[1]], lhs.shape[lhs_spec[0]]
    out_features, in_features = rhs.shape[rhs_spec[0]], rhs.shape[rhs_spec[1]]
    for name, count in (("feature_group_count", feature_group_count),
                        ("batch_group_count", batch_group_count)):
        if not isinstance(count, (int, np.integer)) or count < 1:
            raise ValueError(f"conv_general_dilated: {name} must be a positive integer, "
                             f"got {count!r}")
    if feature_group_count > 1 and batch_group_count > 1:
        raise ValueError(f"conv_general_dilated: at most one of batch_group_count and "
                         f"feature_group_count may be > 1, got batch_group_count="
                         f"{batch_group_count} and feature_group_count={feature_group_count}")
    if features % feature_group_count or features // feature_group_count != in_features:
        raise ValueError(f"conv_general_dilated: the lhs feature dimension ({features}) divided "
                         f"by feature_group_count ({feature_group_count}) must equal the rhs "
                         f"input feature dimension ({in_features}); lhs {lhs.str_short()}, rhs "
                         f"{rhs.str_short()}, dimension_numbers={dnums}")
    for name, count in (("feature_group_count", feature_group_count),
                        ("batch_group_count", batch_group_count)):
        if out_features % count:
            raise ValueError(f"conv_general_dilated: the rhs output feature dimension "
                             f"({out_features}) must be a multiple of {name} ({count})")
    if batch % batch_group_count:
        raise ValueError(f"conv_general_dilated: batch_group_count ({batch_group_count}) must "
                         f"divide the lhs batch dimension ({batch})")


def conv_out_shape(lhs_shape, rhs_shape, dnums, window_strides, padding, lhs_dilation,
                   rhs_dilation, batch_group_count=1):
    """The output shape (in the output's own layout) of a convolution."""
    lhs_spec, rhs_spec, out_spec = dnums
    in_space = [dilate_dim(lhs_shape[d], s) for d, s in zip(lhs_spec[2:], lhs_dilation,
                                                            strict=True)]
    window = [dilate_dim(rhs_shape[d], s) for d, s in zip(rhs_spec[2:], rhs_dilation,
                                                          strict=True)]
    padded = [n + lo + hi for n, (lo, hi) in zip(in_space, padding, strict=True)]
    if any(p < 0 for p in padded):
        raise ValueError(f"conv_general_dilated: negative padding {padding} is larger than the "
                         f"(dilated) lhs spatial dimensions {tuple(in_space)}")
    space = [stride_dim(p, w, s) for p, w, s in zip(padded, window, window_strides, strict=True)]
    canonical = [lhs_shape[lhs_spec[0]] // batch_group_count, rhs_shape[rhs_spec[0]]] + space
    out = [0] * len(canonical)
    for role, dim in enumerate(out_spec):
        out[dim] = canonical[role]
    return tuple(out)


def _conv_shape(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                dimension_numbers, feature_group_count, batch_group_count, precision=None,
                preferred_element_type=None):
    check_dtype("conv_general_dilated", lhs, NUMBER, "lhs")
    check_same_dtypes("conv_general_dilated", [lhs, rhs])
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise _conv_error(f"lhs and rhs must have the same rank (at least 2), got "
                          f"{lhs.str_short()} and {rhs.str_short()}")
    n = lhs.ndim - 2
    for spec in dimension_numbers:
        if sorted(spec) != list(range(lhs.ndim)):
            raise _conv_error(f"dimension_numbers {dimension_numbers} must give each operand's "
                              f"{lhs.ndim} dimensions one role each")
    for name, value in (("window_strides", window_strides), ("padding", padding),
                        ("lhs_dilation", lhs_dilation), ("rhs_dilation", rhs_dilation)):
        if len(value) != n:
            raise _conv_error(f"{name} {value} needs one entry per spatial dimension ({n})")
    for name, value in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                        ("rhs_dilation", rhs_dilation)):
        if any(v < 1 for v in value):
            raise ValueError(f"conv_general_dilated: {name} must be positive, got {value}")
    _check_groups(lhs, rhs, dimension_numbers, feature_group_count, batch_group_count)
    shape = conv_out_shape(lhs.shape, rhs.shape, dimension_numbers, window_strides, padding,
                           lhs_dilation, rhs_dilation, batch_group_count)
    dtype = preferred_element_type or lhs.dtype
    return ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)


# --- NumPy reference: dilate, pad, take windows, contract per group -------------------

def _dilate(x, dilations, first_axis):
    for k, d in enumerate(dilations):
        if d == 1 or x.shape[first_axis + k] == 0:
            continue
        axis = first_axis + k
        shape = list(x.shape)
        shape[axis] = dilate_dim(shape[axis], d)
        out = np.zeros(shape, x.dtype)
        index = [slice(None)] * x.ndim
        index[axis] = slice(None, None, d)
        out[tuple(index)] = x
        x = out
    return x


def _pad_spatial(x, padding):
    """Pad spatial axes (2...) with zeros; negative padding crops."""
    grow = [(0, 0), (0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    x = np.pad(x, grow)
    crop = (slice(None), slice(None)) + tuple(
        slice(max(-lo, 0), x.shape[2 + k] - max(-hi, 0)) for k, (lo, hi) in enumerate(padding))
    return x[crop]


def _conv_impl(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count, precision=None,
               preferred_element_type=None):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    out_dtype = preferred_element_type or lhs.dtype
    wide = np.float32 if lhs.dtype in NARROW_FLOATS else lhs.dtype
    x = np.transpose(lhs, lhs_spec).astype(wide)
    w = np.transpose(rhs, rhs_spec).astype(wide)
    x = _pad_spatial(_dilate(x, lhs_dilation, 2), padding)
    w = _dilate(w, rhs_dilation, 2)
    n = len(window_strides)
    space = tuple(stride_dim(x.shape[2 + k], w.shape[2 + k], s)
                  for k, s in enumerate(window_strides))
    batch_groups, feature_groups = batch_group_count, feature_group_count
    nb, o, i = x.shape[0] // batch_groups, w.shape[0], w.shape[1]
    per_group = o // (batch_groups * feature_groups)
    out_shape = (nb, o) + space
    if 0 in out_shape or 0 in w.shape[2:]:
        result = np.zeros(out_shape, wide)
    else:
        windows = np.lib.stride_tricks.sliding_window_view(x, w.shape[2:], axis=tuple(
            range(2, 2 + n)))
        windows = windows[(slice(None), slice(None)) + tuple(
            slice(None, (m - 1) * s + 1, s) for m, s in zip(space, window_strides))]
        windows = windows.reshape((batch_groups, nb, feature_groups, i) + windows.shape[2:])
        kernel = w.reshape((batch_groups, feature_groups, per_group, i) + w.shape[2:])
        sp = "".join(chr(ord("p") + k) for k in range(n))   # output positions
        kw = "".join(chr(ord("A") + k) for k in range(n))   # window offsets
        spec = f"bngi{sp}{kw},bgoi{kw}->nbgo{sp}"
        result = np.einsum(spec, windows, kernel).reshape(out_shape)
    return np.transpose(result, np.argsort(out_spec)).astype(out_dtype)


# --- lowering ----------------------------------------------------------------------------

def _layout(spec, first, second):
    roles = [""] * len(spec)
    roles[spec[0]], roles[spec[1]] = first, second
    for k, d in enumerate(spec[2:]):
        roles[d] = str(k)
    return "[" + ", ".join(roles) + "]"


def _conv_lowering(ctx, avals_in, avals_out, lhs, rhs, window_strides, padding, lhs_dilation,
                   rhs_dilation, dimension_numbers, feature_group_count, batch_group_count,
                   precision=None, preferred_element_type=None):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    layout = (f"#stablehlo.conv<{_layout(lhs_spec, 'b', 'f')}x{_layout(rhs_spec, 'o', 'i')}"
              f"->{_layout(out_spec, 'b', 'f')}>")
    attrs = {"dimension_numbers": layout,
             "feature_group_count": f"{feature_group_count} : i64",
             "batch_group_count": f"{batch_group_count} : i64",
             "precision_config": precision_config(precision)}
    if window_strides:
        pads = [[int(lo), int(hi)] for lo, hi in padding]
        attrs.update(window_strides=i64_array(window_strides),
                     padding=f"dense<{pads}> : tensor<{len(pads)}x2xi64>",
                     lhs_dilation=i64_array(lhs_dilation), rhs_dilation=i64_array(rhs_dilation))
    if dtypes.is_complex(avals_out[0].dtype):
        return _complex_conv_lowering(ctx, avals_in, avals_out[0], lhs, rhs, attrs)
    return ctx.op("stablehlo.convolution", [lhs, rhs], avals_in, avals_out[0], attrs)


def _complex_conv_lowering(ctx, avals_in, aval_out, lhs, rhs, attrs):
    """A complex convolution as three real ones (Gauss's product: k1 = (a + b) c,
    k2 = a (d - c), k3 = b (c + d); result k1 - k3 + i (k1 + k2)), as jax lowers it on
    CPU and GPU: XLA's GPU backend has no complex convolutions."""
    lhs_aval, rhs_aval = avals_in
    parts = [ShapedArray(a.shape, dtypes.real_dtype(a.dtype)) for a in (lhs_aval, rhs_aval)]
    part_out = ShapedArray(aval_out.shape, dtypes.real_dtype(aval_out.dtype))

    def split(x, aval, part):
        return (ctx.op("stablehlo.real", [x], [aval], part),
                ctx.op("stablehlo.imag", [x], [aval], part))

    def binary(name, a, b, part):
        return ctx.op(name, [a, b], [part, part], part)

    def conv(x, y):
        return ctx.op("stablehlo.convolution", [x, y], parts, part_out, attrs)

    (a, b), (c, d) = split(lhs, lhs_aval, parts[0]), split(rhs, rhs_aval, parts[1])
    k1 = conv(binary("stablehlo.add", a, b, parts[0]), c)
    k2 = conv(a, binary("stablehlo.subtract", d, c, parts[1]))
    k3 = conv(b, binary("stablehlo.add", c, d, parts[1]))
    re = binary("stablehlo.subtract", k1, k3, part_out)
    im = binary("stablehlo.add", k1, k2, part_out)
    return ctx.op("stablehlo.complex", [re, im], [part_out, part_out], aval_out)


conv_general_dilated_p = declare("conv_general_dilated", _conv_shape, _conv_impl,
                                 _conv_lowering)


# --- JVP: bilinear ------------------------------------------------------------------------

def _conv_jvp(primals, tangents, **params):
    lhs, rhs = primals
    t_lhs, t_rhs = tangents
    out = conv_general_dilated_p.bind(lhs, rhs, **params)
    terms = []
    if not is_zero(t_lhs):
        terms.append(conv_general_dilated_p.bind(t_lhs, rhs, **params))
    if not is_zero(t_rhs):
        terms.append(conv_general_dilated_p.bind(lhs, t_rhs, **params))
    return out, terms[0] if len(terms) == 1 else add_p.bind(*terms)


jvp_rules[conv_general_dilated_p] = _conv_jvp


# --- moving a factor of one axis into another (groups, batching) ------------------------

def merge_axis(x, src, dst):
    """x with axis src merged into axis dst as its major part; dst indexes the axes
    without src."""
    shape = core.get_aval(x).shape
    perm = [d for d in range(len(shape)) if d != src]
    perm.insert(dst, src)
    if perm != list(range(len(shape))):
        x = transpose_p.bind(x, permutation=tuple(perm))
    new = [shape[d] for d in range(len(shape)) if d != src]
    new[dst] *= shape[src]
    return reshape_p.bind(x, new_sizes=tuple(new), dimensions=None)


def split_axis(x, axis, major):
    """x with axis split into (major, size // major) at positions axis, axis + 1."""
    shape = list(core.get_aval(x).shape)
    shape[axis:axis + 1] = [major, shape[axis] // major]
    return reshape_p.bind(x, new_sizes=tuple(shape), dimensions=None)


# --- transpose: each operand's cotangent is a convolution of ct with the other ---------
# Without groups, conv contracts [n, i] x [i, o] -> [n, o] (spatial dims aside); the lhs
# cotangent is [n, o] x [o, i] -> [n, i], a convolution of ct with the spatially reversed
# kernel (its roles of i and o swapped), strides and lhs dilation trading places; the rhs
# cotangent is [i, n] x [n, o] -> [i, o], a convolution of lhs with ct as kernel, where the
# batch dimension is contracted.  Feature groups become batch groups of the rhs cotangent
# and vice versa.

def _swap_roles(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def _lhs_ct_padding(in_space, window, strides, out_space, padding, lhs_dilation,
                    rhs_dilation):
    """Padding that makes the lhs-cotangent convolution reproduce the lhs's spatial size."""
    pads = []
    for n, k, s, m, (lo, _), ld, rd in zip(in_space, window, strides, out_space, padding,
                                           lhs_dilation, rhs_dilation, strict=True):
        k = dilate_dim(k, rd)
        before = k - lo - 1
        after = dilate_dim(n, ld) + k - 1 - dilate_dim(m, s) - before
        pads.append((before, after))
    return tuple(pads)


def _rhs_ct_padding(in_space, window, strides, out_space, padding, lhs_dilation,
                    rhs_dilation):
    pads = []
    for n, k, s, m, (lo, _), ld, rd in zip(in_space, window, strides, out_space, padding,
                                           lhs_dilation, rhs_dilation, strict=True):
        after = dilate_dim(m, s) - dilate_dim(n, ld) + dilate_dim(k, rd) - lo - 1
        pads.append((lo, after))
    return tuple(pads)


def _spatial(shape, spec):
    return [shape[d] for d in spec[2:]]


def _conv_transpose_lhs(ct, rhs, lhs_aval, window_strides, padding, lhs_dilation,
                        rhs_dilation, dimension_numbers, feature_group_count,
                        batch_group_count, precision, preferred_element_type):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    rhs_shape = core.get_aval(rhs).shape
    groups = max(feature_group_count, batch_group_count)
    if groups > 1:  # move the group factor from the kernel's out features to its in features
        rhs = merge_axis(split_axis(rhs, rhs_spec[0], groups), rhs_spec[0], rhs_spec[1])
    pads = _lhs_ct_padding(_spatial(lhs_aval.shape, lhs_spec), _spatial(rhs_shape, rhs_spec),
                           window_strides, _spatial(core.get_aval(ct).shape, out_spec),
                           padding, lhs_dilation, rhs_dilation)
    dnums = ConvDimensionNumbers(out_spec, _swap_roles(rhs_spec), lhs_spec)
    out = conv_general_dilated_p.bind(
        ct, rev_p.bind(rhs, dimensions=tuple(rhs_spec[2:])), window_strides=lhs_dilation,
        padding=pads, lhs_dilation=window_strides, rhs_dilation=rhs_dilation,
        dimension_numbers=dnums, feature_group_count=groups, batch_group_count=1,
        precision=precision, preferred_element_type=None)
    if batch_group_count > 1:  # the groups come out as features; they belong to the batch
        out = merge_axis(split_axis(out, lhs_spec[1], batch_group_count), lhs_spec[1],
                         lhs_spec[0])
    return out


def _conv_transpose_rhs(ct, lhs, rhs_aval, window_strides, padding, lhs_dilation,
                        rhs_dilation, dimension_numbers, feature_group_count,
                        batch_group_count, precision, preferred_element_type):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pads = _rhs_ct_padding(_spatial(core.get_aval(lhs).shape, lhs_spec),
                           _spatial(rhs_aval.shape, rhs_spec), window_strides,
                           _spatial(core.get_aval(ct).shape, out_spec), padding, lhs_dilation,
                           rhs_dilation)
    dnums = ConvDimensionNumbers(_swap_roles(lhs_spec), _swap_roles(out_spec),
                                 _swap_roles(rhs_spec))
    return conv_general_dilated_p.bind(
        lhs, ct, window_strides=rhs_dilation, padding=pads, lhs_dilation=lhs_dilation,
        rhs_dilation=window_strides, dimension_numbers=dnums,
        feature_group_count=batch_group_count, batch_group_count=feature_group_count,
        precision=precision, preferred_element_type=None)


def _conv_transpose(ct, lhs, rhs, **params):
    if is_zero(ct):
        return [None, None]
    empty = core.get_aval(ct).size == 0  # nothing flows back: zero cotangents
    ct_lhs = ct_rhs = None
    if is_undefined(lhs):
        ct_lhs = Zero(lhs.aval) if empty or lhs.aval.size == 0 else \
            _conv_transpose_lhs(_as_dtype(ct, lhs.aval), rhs, lhs.aval, **params)
    if is_undefined(rhs):
        ct_rhs = Zero(rhs.aval) if empty or rhs.aval.size == 0 else \
            _conv_transpose_rhs(_as_dtype(ct, rhs.aval), lhs, rhs.aval, **params)
    return [ct_lhs, ct_rhs]


def _as_dtype(ct, aval):
    """The cotangent in the operands' dtype (it differs under preferred_element_type)."""
    if core.get_aval(ct).dtype == aval.dtype:
        return ct
    return convert_element_type_p.bind(ct, new_dtype=aval.dtype, weak_type=False)


transpose_rules[conv_general_dilated_p] = _conv_transpose


# --- batching: the vmapped axis joins the batch (lhs), the out features (rhs), or both
# with one feature group per lane -------------------------------------------------------

def _conv_batch(axis_data, args, dims, **params):
    (lhs, rhs), (ld, rd) = args, dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    size = axis_data.size
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    if ld is not None and rd is not None:
        rhs = merge_axis(rhs, rd, rhs_spec[0])
        if bgc > 1:  # lanes become batch groups of their own
            lhs = merge_axis(lhs, ld, lhs_spec[0])
            params = dict(params, batch_group_count=bgc * size)
        else:        # lanes become feature groups of their own
            lhs = merge_axis(lhs, ld, lhs_spec[1])
            params = dict(params, feature_group_count=fgc * size)
        out = conv_general_dilated_p.bind(lhs, rhs, **params)
        return split_axis(out, out_spec[1], size), out_spec[1]
    if ld is not None:
        if bgc > 1:  # keep the batch groups major: lanes go inside each group
            lhs = split_axis(_moved(lhs, ld, lhs_spec[0]), lhs_spec[0], bgc)
            lhs = merge_axis(lhs, lhs_spec[0] + 2, lhs_spec[0] + 1)
            lhs = merge_axis(lhs, lhs_spec[0], lhs_spec[0])
        else:
            lhs = merge_axis(lhs, ld, lhs_spec[0])
        out = conv_general_dilated_p.bind(lhs, rhs, **params)
        return split_axis(out, out_spec[0], size), out_spec[0]
    groups = max(fgc, bgc)  # lanes go inside each group of out features
    rhs = split_axis(_moved(rhs, rd, rhs_spec[0]), rhs_spec[0], groups)
    rhs = merge_axis(rhs, rhs_spec[0] + 2, rhs_spec[0] + 1)
    rhs = merge_axis(rhs, rhs_spec[0], rhs_spec[0])
    out = conv_general_dilated_p.bind(lhs, rhs, **params)
    out = split_axis(split_axis(out, out_spec[1], groups), out_spec[1] + 1, size)
    out = merge_axis(out, out_spec[1], out_spec[1] + 1)  # groups back into the features
    return out, out_spec[1]


def _moved(x, src, role_dim):
    """x with its batch axis src moved just after the operand axis role_dim (whose
    index is counted without the batch axis), so it can be merged after a split."""
    perm = [d for d in range(core.get_aval(x).ndim) if d != src]
    perm.insert(role_dim + 1, src)
    return transpose_p.bind(x, permutation=tuple(perm))


batching_rules[conv_general_dilated_p] = _conv_batch
