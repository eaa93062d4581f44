"""funcgraph.numpy.fft: JAX's numpy.fft API over the `fft` primitive.

Transforms of 1 to 3 axes are one `fft` each; more axes are split into transforms of
at most 3 (XLA's limit), as JAX does.  Real inputs give complex64 spectra (complex128
for float64 inputs with x64 on); the inverse real transforms give the matching real
dtype.  `norm` is "backward" (the default: inverse transforms scale by 1/n), "ortho"
(both by 1/sqrt(n)) or "forward" (forward transforms scale by 1/n)."""
import operator

import numpy as np

from funcgraph import core, dtypes, lax
from funcgraph.lax import FftType
# The public names of numpy.fft are its own: what it uses from funcgraph.numpy comes in
# under private names.
from funcgraph.numpy._core import aval_of as _aval_of, asarray_operand as _asarray_operand
from funcgraph.numpy._creation import arange as _arange
from funcgraph.numpy._manipulation import roll as _roll
from funcgraph.numpy._reductions import prod as _prod
from funcgraph.numpy._shapes import moveaxis as _moveaxis
from funcgraph.numpy._ufuncs import conj as _conj, sqrt as _sqrt

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn",
           "ifftshift", "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq",
           "rfftn"]

_MAX_AXES_PER_TRANSFORM = 3  # stablehlo.fft transforms at most 3 axes


def _operand(name, a):
    """a as an array; lists and tuples are refused, as in JAX."""
    if isinstance(a, (list, tuple)):
        raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(a)} at "
                        f"position 0.")
    return _asarray_operand(a)


# --- the core: axes, sizes, the transform, the norm ------------------------------------

def _norm_factor(s, dtype, func_name, norm):
    """The scale a transform of sizes s gets (computed in the result's dtype, as JAX)."""
    if norm == "backward":
        return None
    if norm not in ("ortho", "forward"):
        raise ValueError(f'Invalid norm value {norm}; should be "backward",'
                         f'"ortho" or "forward".')
    size = _prod(_asarray_operand(np.array(s, dtype)))
    inverse = func_name.startswith("i")
    if norm == "ortho":
        root = _sqrt(size)
        return root if inverse else 1 / root
    return size if inverse else 1 / size


def _resized(arr, axes, sizes):
    """arr cropped or zero-padded at the end of each of `axes` to its entry of sizes."""
    shape = _aval_of(arr).shape
    if all(shape[a] == n for a, n in zip(axes, sizes, strict=True)):
        return arr
    config = [(0, 0, 0)] * len(shape)
    for a, n in zip(axes, sizes, strict=True):
        config[a] = (0, n - shape[a], 0)
    return lax.pad(arr, np.zeros((), _aval_of(arr).dtype), config)


def _transform_sizes(arr, fft_type, s, axes):
    """The input sizes to resize the axes to (None: leave them) and the fft_lengths."""
    shape = _aval_of(arr).shape
    if s is not None:
        in_sizes = list(s)
        if fft_type == FftType.IRFFT:
            in_sizes[-1] = s[-1] // 2 + 1
        return in_sizes, list(s)
    if fft_type == FftType.IRFFT:
        lengths = [shape[a] for a in axes[:-1]]
        if axes:
            lengths.append(max(0, 2 * (shape[axes[-1]] - 1)))
        return None, lengths
    return None, [shape[a] for a in axes]


def _fft_core(func_name, fft_type, a, s, axes, norm):
    full_name = f"funcgraph.numpy.fft.{func_name}"
    arr = _operand(full_name, a)
    ndim = _aval_of(arr).ndim
    if s is not None:
        s = tuple(operator.index(n) for n in s)
        if any(n <= 0 for n in s):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    given_axes = axes
    if axes is None:
        axes = tuple(range(0 if s is None else ndim - len(s), ndim))
    axes = tuple(axes)
    if len(axes) != len(set(axes)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    trailing = tuple(range(ndim - len(axes), ndim))
    if given_axes is not None:
        axes = tuple(_checked_axis(a, ndim) for a in axes)
        arr = _moveaxis(arr, axes, trailing)
    in_sizes, lengths = _transform_sizes(arr, fft_type, s, trailing)
    if in_sizes is not None:
        arr = _resized(arr, trailing, in_sizes)
    out = _transform(arr, fft_type, tuple(lengths))
    factor = _norm_factor(lengths, _aval_of(out).dtype, func_name, norm) if norm else None
    if factor is not None:
        out = out * factor
    if given_axes is not None:
        out = _moveaxis(out, trailing, axes)
    return out


def _checked_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _transform(arr, fft_type, lengths):
    """lax.fft over the trailing len(lengths) axes, split into transforms of at most 3
    axes: the forward ones transform the innermost axes first (a real input becomes
    complex there), the inverse ones last (a real output comes out of them)."""
    if len(lengths) <= _MAX_AXES_PER_TRANSFORM:
        return lax.fft(arr, fft_type, lengths)
    inner = 2 if len(lengths) == 4 else _MAX_AXES_PER_TRANSFORM
    ndim = _aval_of(arr).ndim
    outer_axes = tuple(range(ndim - len(lengths), ndim - inner))
    moved = tuple(range(ndim - len(lengths) + inner, ndim))
    if fft_type in (FftType.FFT, FftType.RFFT):
        arr = lax.fft(arr, fft_type, lengths[-inner:])
        arr = _moveaxis(arr, outer_axes, moved)
        arr = _transform(arr, FftType.FFT, lengths[:-inner])
        return _moveaxis(arr, moved, outer_axes)
    arr = _moveaxis(arr, outer_axes, moved)
    arr = _transform(arr, FftType.IFFT, lengths[:-inner])
    arr = _moveaxis(arr, moved, outer_axes)
    return lax.fft(arr, fft_type, lengths[-inner:])


# --- n-dimensional, 2-dimensional and 1-dimensional transforms -------------------------

def fftn(a, s=None, axes=None, norm=None):
    """The n-dimensional discrete Fourier transform over `axes` (all by default), each
    axis cropped or zero-padded to its entry of `s` first."""
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    """The inverse of fftn."""
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    """fftn of a real array, keeping the non-negative frequencies of the last axis."""
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    """The inverse of rfftn: a real array with the sizes `s` (by default the last axis
    becomes 2 * (m - 1) long)."""
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


def _check_two_axes(func_name, axes):
    if len(axes) != 2:
        raise ValueError(f"funcgraph.numpy.fft.{func_name} only supports 2 axes. "
                         f"Got axes = {axes!r}.")


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """fftn over two axes (the last two by default)."""
    _check_two_axes("fft2", axes)
    return _fft_core("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """ifftn over two axes (the last two by default)."""
    _check_two_axes("ifft2", axes)
    return _fft_core("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """rfftn over two axes (the last two by default)."""
    _check_two_axes("rfft2", axes)
    return _fft_core("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """irfftn over two axes (the last two by default)."""
    _check_two_axes("irfft2", axes)
    return _fft_core("irfft2", FftType.IRFFT, a, s, axes, norm)


def _check_one_axis(func_name, axis):
    if isinstance(axis, (list, tuple)):
        full_name = f"funcgraph.numpy.fft.{func_name}"
        raise ValueError(f"{full_name} does not support multiple axes. Please use "
                         f"{full_name}n. Got axis = {axis!r}.")


def _fft_1d(func_name, fft_type, a, n, axis, norm):
    _check_one_axis(func_name, axis)
    return _fft_core(func_name, fft_type, a, None if n is None else [n],
                     None if axis is None else [axis], norm)


def fft(a, n=None, axis=-1, norm=None):
    """The one-dimensional discrete Fourier transform along `axis`, cropped or
    zero-padded to length n first."""
    return _fft_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a, n=None, axis=-1, norm=None):
    """The inverse of fft."""
    return _fft_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a, n=None, axis=-1, norm=None):
    """fft of a real array, keeping the n // 2 + 1 non-negative frequencies."""
    return _fft_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a, n=None, axis=-1, norm=None):
    """The inverse of rfft: a real signal of length n (2 * (m - 1) by default)."""
    return _fft_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a, n=None, axis=-1, norm=None):
    """The FFT of a signal with Hermitian symmetry, given by its first half: a real
    spectrum of length n (2 * (m - 1) by default)."""
    conj_a = _conj(_operand("conjugate", a))
    _check_one_axis("hfft", axis)
    size = (_aval_of(conj_a).shape[axis] - 1) * 2 if n is None else n
    return _fft_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm) * size


def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of hfft: the first half of the Hermitian spectrum of a real signal."""
    _check_one_axis("ihfft", axis)
    arr = _asarray_operand(a)  # JAX's ihfft takes lists too
    size = _aval_of(arr).shape[axis] if n is None else n
    out = _fft_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
    return _conj(out) * (1 / size)


# --- frequencies and shifts -----------------------------------------------------------

def _check_frequency_args(name, n, d):
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of funcgraph.numpy.fft.{name} only takes an int. "
                         f"Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of funcgraph.numpy.fft.{name} only takes a single "
                         f"value. Got d = {list(d)}.")


def _spacing(d, n, dtype):
    """The constant d * n as a rank-0 array of dtype (d may be traced)."""
    if isinstance(d, core.Tracer) or hasattr(d, "aval"):
        return lax.convert_element_type(_asarray_operand(d) * n, dtype)
    return _asarray_operand(np.array(d * n, dtype))


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an FFT of length n with sample spacing d: 0, 1, ...,
    then the negative ones, over d * n."""
    del device  # one device
    _check_frequency_args("fftfreq", n, d)
    out_dtype = dtypes.canonicalize(np.dtype(dtype or dtypes.default_float()))
    dtype = _real_part_dtype(dtypes.to_inexact(out_dtype))
    i = _arange(n, dtype=dtype)
    k = (i + n // 2) % n - n // 2
    return lax.convert_element_type(k / _spacing(d, n, dtype), out_dtype)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an RFFT of length n with sample spacing d: 0 .. n // 2
    over d * n."""
    del device  # one device
    _check_frequency_args("rfftfreq", n, d)
    dtype = dtypes.canonicalize(np.dtype(dtype or dtypes.default_float()))
    k = _arange(0, n // 2 + 1, dtype=dtype)
    return k / _spacing(d, n, dtype)


def _real_part_dtype(dtype):
    return {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}.get(
        dtype, dtype)


def _shifts(x, axes, sign):
    shape = _aval_of(x).shape
    if axes is None:
        return tuple(range(len(shape))), [sign * (n // 2) for n in shape]
    if isinstance(axes, int):
        return axes, sign * (shape[axes] // 2)
    return axes, [sign * (shape[a] // 2) for a in axes]


def fftshift(x, axes=None):
    """x rolled so that the zero frequency is at the centre of each of `axes`."""
    x = _operand("fftshift", x)
    axes, shift = _shifts(x, axes, 1)
    return _roll(x, shift, axes)


def ifftshift(x, axes=None):
    """The inverse of fftshift."""
    x = _operand("ifftshift", x)
    axes, shift = _shifts(x, axes, -1)
    return _roll(x, shift, axes)
