"""Convolutions: conv_general_dilated and its conveniences, with JAX's signatures."""
import operator

import numpy as np

from funcgraph import dtypes
from funcgraph.lax._operands import as_operand
from funcgraph.lax._sharding import sharded_result
from funcgraph.lax._shapes import transpose
from funcgraph.lax._slicing import rev
from funcgraph.primitives.precision import canonicalize_precision
from funcgraph.primitives.convolution import (
    ConvDimensionNumbers, conv_general_dilated_p, dilate_dim, stride_dim)

__all__ = ["ConvDimensionNumbers", "conv", "conv_dimension_numbers", "conv_general_dilated",
           "conv_general_permutations", "conv_general_shape_tuple", "conv_shape_tuple",
           "conv_transpose", "conv_transpose_shape_tuple", "conv_with_general_padding",
           "padtype_to_pads"]

_PADDING_TYPES = ("VALID", "SAME", "SAME_LOWER")


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """(low, high) padding per dimension for 'VALID', 'SAME' or 'SAME_LOWER': SAME pads so
    that the output has ceil(in / stride) elements, the odd element going high (SAME) or
    low (SAME_LOWER)."""
    if not isinstance(padding, str) or padding.upper() not in _PADDING_TYPES:
        raise RuntimeError(f"Unrecognized padding type: expected 'VALID', 'SAME', or "
                           f"'SAME_LOWER', got {padding}.")
    kind = padding.upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    pads = []
    for n, k, s in zip(in_shape, window_shape, window_strides, strict=True):
        out = -(-int(n) // int(s))
        total = max(0, (out - 1) * int(s) + int(k) - int(n))
        small = total // 2
        pads.append((small, total - small) if kind == "SAME" else (total - small, small))
    return pads


def conv_general_permutations(dimension_numbers):
    """(lhs_spec, rhs_spec, out_spec) index tuples from three layout strings such as
    ('NHWC', 'HWIO', 'NHWC'); spatial dimensions are ordered as in the rhs string."""
    lhs_s, rhs_s, out_s = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, ((a, b), spec) in enumerate(zip(pairs, dimension_numbers, strict=True)):
        if not spec.count(a) == spec.count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {spec}.")
        if len(spec) != len(set(spec)):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {spec}.")
    if not set(lhs_s) - {"N", "C"} == set(rhs_s) - {"O", "I"} == set(out_s) - {"N", "C"}:
        raise TypeError(f"convolution dimension_numbers elements must each have the same "
                        f"set of spatial characters, got {dimension_numbers}.")
    spatial_order = [c for c in rhs_s if c not in "OI"]

    def perm(spec, pair):
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(
            spec.index(c) for c in spatial_order)
    return tuple(perm(spec, pair) for spec, pair in zip(dimension_numbers, pairs, strict=True))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """dimension_numbers (None, three layout strings, or ConvDimensionNumbers) as a
    ConvDimensionNumbers of index tuples."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return ConvDimensionNumbers(*(tuple(int(d) for d in s) for s in dimension_numbers))
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)):
        raise TypeError(f"convolution dimension_numbers must be tuple/list or None, got "
                        f"{type(dimension_numbers)}.")
    if len(dimension_numbers) != 3:
        raise TypeError(f"convolution dimension_numbers list/tuple must be length 3, got "
                        f"{len(dimension_numbers)}.")
    if not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError(f"convolution dimension_numbers elements must be strings, got "
                        f"{tuple(map(type, dimension_numbers))}.")
    for i, spec in enumerate(dimension_numbers):
        if len(spec) != len(lhs_shape):
            raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the "
                            f"ndim of lhs and rhs, got {len(spec)} for lhs and rhs shapes "
                            f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def _ints(name, values):
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"conv_general_dilated: {name} must be a sequence of Python ints, "
                        f"got {values!r}") from None


def _explicit_padding(padding):
    try:
        return tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError) as e:
        raise ValueError(f"padding argument to conv_general_dilated should be a string or a "
                         f"sequence of (low, high) pairs, got {padding}") from e


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None,
                         out_sharding=None):
    """General n-dimensional convolution with strides, padding, lhs (transposed conv) and
    rhs (atrous) dilation, feature and batch groups, as XLA's Conv; `out_sharding`
    places the result (as jax's)."""
    if out_sharding is not None:
        return sharded_result(conv_general_dilated(
            lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
            feature_group_count, batch_group_count, precision, preferred_element_type),
            out_sharding)
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    lhs_shape, rhs_shape = lhs.aval.shape, rhs.aval.shape
    dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    n = len(lhs_shape) - 2
    lhs_dilation = (1,) * n if lhs_dilation is None else _ints("lhs_dilation", lhs_dilation)
    rhs_dilation = (1,) * n if rhs_dilation is None else _ints("rhs_dilation", rhs_dilation)
    window_strides = _ints("window_strides", window_strides)
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError("String padding is not implemented for transposed convolution "
                             "using this op. Please either exactly specify the required "
                             "padding or use conv_transpose.")
        window = [dilate_dim(rhs_shape[d], r) for d, r in zip(dnums.rhs_spec[2:], rhs_dilation)]
        padding = padtype_to_pads([lhs_shape[d] for d in dnums.lhs_spec[2:]], window,
                                  window_strides, padding)
    padding = _explicit_padding(padding)
    if preferred_element_type is not None:
        preferred_element_type = dtypes.canonicalize(preferred_element_type)
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dnums,
        feature_group_count=operator.index(feature_group_count),
        batch_group_count=operator.index(batch_group_count),
        precision=canonicalize_precision(precision),
        preferred_element_type=preferred_element_type)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """conv_general_dilated in the NCHW / OIHW layout without dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """conv_general_dilated in the NCHW / OIHW layout."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k, s, padding):
    """(before, after) padding of the fractionally strided convolution that transposes a
    forward convolution with kernel size k, stride s and the given padding."""
    if padding == "SAME":
        total = k + s - 2
        before = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        before = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        before, total = pads[0], sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return before, total - before


_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                      4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """The transpose of a convolution, computed directly as a fractionally strided one
    (lhs dilated by `strides`).  transpose_kernel flips the kernel spatially and swaps its
    feature roles (the gradient of a forward conv, as Keras' Conv2DTranspose)."""
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    ndim = lhs.aval.ndim
    if ndim != rhs.aval.ndim or ndim < 2:
        raise TypeError(f"conv_transpose: lhs and rhs need one rank >= 2, got "
                        f"{lhs.aval.str_short()} and {rhs.aval.str_short()}")
    if dimension_numbers is None:
        if ndim not in _TRANSPOSE_LAYOUTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_LAYOUTS[ndim]
    dn = conv_dimension_numbers(lhs.aval.shape, rhs.aval.shape, dimension_numbers)
    kernel = [rhs.aval.shape[d] for d in dn.rhs_spec[2:]]
    rhs_dilation = (1,) * (ndim - 2) if rhs_dilation is None else tuple(rhs_dilation)
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        per_dim = [padding] * len(strides) if isinstance(padding, str) else list(padding)
        pads = tuple(_conv_transpose_padding(dilate_dim(k, r), s, tuple(p) if
                                             isinstance(p, (list, tuple)) else p)
                     for k, s, p, r in zip(kernel, strides, per_dim, rhs_dilation, strict=True))
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(ndim))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, (1,) * (ndim - 2), pads, strides, rhs_dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The output shape of a convolution of operands in the canonical layouts."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    padded = [int(n) + int(lo) + int(hi) for n, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError(f"Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={pads} for lhs_shape[2:]={lhs_shape[2:]}")
    space = tuple(stride_dim(p, int(k), int(s)) for p, k, s in zip(padded, rhs_shape[2:],
                                                                   strides))
    batch = int(lhs_shape[0]) // batch_group_count
    return (batch, int(rhs_shape[0])) + space


def _in_layout(canonical, out_perm):
    return tuple(int(d) for d in np.take(canonical, np.argsort(out_perm)))


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers):
    """The output shape of conv_general_dilated (no dilation) for layout strings."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple(np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm),
                           window_strides, padding)
    return _in_layout(out, out_perm)


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    """The output shape of conv_transpose for layout strings."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_t, rhs_t = np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm)
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(int(k), s, padding)
                   for k, s in zip(rhs_t[2:], window_strides)]
    totals = [int(sum(p)) for p in padding]
    space = [(int(i) - 1) * s - int(k) + 2 + t
             for i, k, s, t in zip(lhs_t[2:], rhs_t[2:], window_strides, totals)]
    return _in_layout((int(lhs_t[0]), int(rhs_t[0])) + tuple(space), out_perm)
