"""funcgraph.scipy.fft: JAX's scipy.fft (the type-II discrete cosine transform `dct`,
its inverse `idct`, and their n-dimensional forms `dctn`/`idctn`), built on numpy.fft.

The DCT-II of length N is one complex FFT of the even-odd reordering of the input
(Makhoul's method): v = (x0, x2, x4, ..., x5, x3, x1), X_k = 2 Re(e^{-i pi k / 2N} V_k).
The inverse undoes each step.  norm is None/"backward" (unscaled forward transform) or
"ortho" (orthonormal); only type 2 exists, as in JAX."""
import operator

import numpy as np

from funcgraph import dtypes, lax
import funcgraph.numpy as fnp
from funcgraph.numpy import _core

__all__ = ["dct", "dctn", "idct", "idctn"]


def _checked(name, x, kind, norm):
    if isinstance(x, (list, tuple)):
        raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)} at "
                        f"position 0.")
    if kind != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"scipy.fft.{name}: {norm=!r} is not implemented")
    return fnp.asarray(x)


def _resized(x, n, axis):
    """x padded with zeros or cut to length n along axis (n None: as it is)."""
    if n is None:
        return x
    pads = [(0, n - x.shape[axis] if a == axis else 0, 0) for a in range(x.ndim)]
    return lax.pad(x, fnp.zeros((), x.dtype), pads)


def _along(vector, axis, ndim):
    """A 1-d array shaped to broadcast along `axis` of an ndim-d array."""
    return fnp.reshape(vector, [-1 if a == axis else 1 for a in range(ndim)])


def _ortho_scale(n, dtype):
    """sqrt(4N) for the first coefficient, sqrt(2N) for the others: dividing the unscaled
    DCT-II by it makes the transform orthonormal."""
    return np.sqrt(np.where(np.arange(n) == 0, 4.0, 2.0) * n).astype(dtype)


def _twiddle(n, dtype):
    """e^{-i pi k / 2N} for k = 0..N-1, in the complex dtype matching `dtype`."""
    k = np.arange(n)
    complex_dtype = np.complex128 if np.dtype(dtype) == np.float64 else np.complex64
    return np.exp(-0.5j * np.pi * k / n).astype(complex_dtype)


def _dct1(x, n, axis, norm):
    axis = _core.check_axis(axis, x.ndim)
    x = _resized(x, n, axis)
    length = x.shape[axis]
    evens = lax.slice_in_dim(x, 0, None, 2, axis)
    odds = lax.rev(lax.slice_in_dim(x, 1, None, 2, axis), (axis,))
    spectrum = fnp.fft.fft(lax.concatenate([evens, odds], axis), axis=axis)
    real_dtype = spectrum.real.dtype
    out = 2 * fnp.real(spectrum * _along(_twiddle(length, real_dtype), axis, x.ndim))
    if norm == "ortho":
        out = out / _along(_ortho_scale(length, real_dtype), axis, x.ndim)
    return out


def _idct1(x, n, axis, norm):
    axis = _core.check_axis(axis, x.ndim)
    x, = _core.promote_to_inexact(_resized(x, n, axis))
    length = x.shape[axis]
    real_dtype = fnp.real(x).dtype
    if norm == "ortho":
        x = x * _along(_ortho_scale(length, real_dtype), axis, x.ndim)
    # V_k = conj(w_k) X_k (half of it for k = 0); the real part of its inverse FFT is the
    # reordered signal, since the input is real.
    weights = np.conj(_twiddle(length, real_dtype))
    weights[0] *= 0.5
    v = fnp.real(fnp.fft.ifft(x * _along(weights, axis, x.ndim), axis=axis))
    # v = (x0, x2, ..., x3, x1): x_{2m} = v_m and x_{2m+1} = v_{N-1-m}.
    half = (length + 1) // 2
    evens = lax.slice_in_dim(v, 0, half, axis=axis)
    odds = lax.rev(lax.slice_in_dim(v, half, length, axis=axis), (axis,))
    if length % 2:
        odds = lax.concatenate([odds, fnp.zeros_like(lax.slice_in_dim(v, 0, 1, axis=axis))],
                               axis)
    return _interleaved(evens, odds, axis, length)


def _interleaved(evens, odds, axis, length):
    """(e0, o0, e1, o1, ...) along axis, cut to `length`: the two stacked on a new axis
    after `axis`, then merged into it."""
    pairs = lax.concatenate([fnp.expand_dims(evens, axis + 1), fnp.expand_dims(odds, axis + 1)],
                            axis + 1)
    shape = list(evens.shape)
    shape[axis] *= 2
    return lax.slice_in_dim(fnp.reshape(pairs, shape), 0, length, axis=axis)


def _split_complex(fun, x, *args):
    if dtypes.is_complex(x.dtype):
        return lax.complex(fun(fnp.real(x), *args), fun(fnp.imag(x), *args))
    return fun(x, *args)


def dct(x, type=2, n=None, axis=-1, norm=None):
    """The type-II discrete cosine transform along `axis` (scipy.fft.dct); `n` pads
    with zeros or truncates the axis first."""
    x = _checked("dct", x, type, norm)
    return _split_complex(_dct1, x, n, axis, norm)


def idct(x, type=2, n=None, axis=-1, norm=None):
    """The inverse of dct along `axis` (scipy.fft.idct, type 2)."""
    x = _checked("idct", x, type, norm)
    return _split_complex(_idct1, x, n, axis, norm)


def _axes_and_sizes(x, s, axes):
    if s is not None:
        try:
            s = [operator.index(d) for d in s]
        except TypeError:
            s = [operator.index(s)]
        if len(s) > x.ndim:
            raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(x.ndim - len(s), x.ndim)) if s is not None else tuple(range(x.ndim))
    else:
        axes = tuple(_core.check_axis(a, x.ndim) for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"repeated axis in axes: {axes}")
    sizes = [None] * len(axes) if s is None else s
    return axes, sizes


def dctn(x, type=2, s=None, axes=None, norm=None):
    """The type-II DCT over several axes (scipy.fft.dctn): dct along each in turn."""
    x = _checked("dctn", x, type, norm)
    axes, sizes = _axes_and_sizes(x, s, axes)
    for axis, n in zip(axes, sizes):
        x = dct(x, n=n, axis=axis, norm=norm)
    return x


def idctn(x, type=2, s=None, axes=None, norm=None):
    """The inverse of dctn (scipy.fft.idctn): idct along each axis in turn."""
    x = _checked("idctn", x, type, norm)
    axes, sizes = _axes_and_sizes(x, s, axes)
    for axis, n in zip(axes, sizes):
        x = idct(x, n=n, axis=axis, norm=norm)
    return x

