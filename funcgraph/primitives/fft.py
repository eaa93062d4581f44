"""fft: XLA's fast Fourier transform over the trailing len(fft_lengths) axes, with every
rule in one block.

FFT and IFFT map complex to complex arrays; RFFT maps a real array to the
non-redundant half of its spectrum (the last axis n -> n // 2 + 1); IRFFT maps such a
half spectrum back to a real array of the trailing shape fft_lengths.  IFFT and
IRFFT scale by 1 / prod(fft_lengths), as NumPy's inverse transforms do.

There is no NumPy implementation registered for eager evaluation: XLA's float32
transforms round differently from NumPy's (its complex128 ones agree bit for bit), so
eager calls run compiled and eager, jit and jax agree.  `fft_numpy` is the NumPy
reference the tests check the primitive against."""
import enum
import math

import numpy as np

from funcgraph import core, dtypes
from funcgraph.array import scalar_array
from funcgraph.core import ShapedArray
from funcgraph.interpreters.batching import batching_rules
from funcgraph.lowering import i64_array
from funcgraph.primitives.base import broadcast_in_dim_p
from funcgraph.primitives.batching_helpers import batch_at
from funcgraph.primitives.elementwise import conj_p, mul_p
from funcgraph.primitives.helpers import declare, deflinear_unary
from funcgraph.primitives.structural import pad_p


class FftType(enum.IntEnum):
    """Which transform lax.fft performs."""
    FFT = 0    # complex -> complex, forward
    IFFT = 1   # complex -> complex, inverse
    RFFT = 2   # real -> complex half spectrum, forward
    IRFFT = 3  # complex half spectrum -> real, inverse


_COMPLEX_OF = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}
_REAL_OF = {c: r for r, c in _COMPLEX_OF.items()}


def half_spectrum_length(n):
    """How many frequencies an RFFT of length n keeps (0 .. n // 2)."""
    return n // 2 + 1


# --- shape rule ------------------------------------------------------------------------

def _fft_shape(x, fft_type, fft_lengths):
    fft_type, lengths = FftType(fft_type), tuple(fft_lengths)
    if not lengths or len(lengths) > 3:
        raise ValueError(f"fft: fft_lengths {lengths} must name 1 to 3 trailing axes "
                         f"(funcgraph.numpy.fft splits longer transforms)")
    if len(lengths) > x.ndim:
        raise ValueError(f"FFT input shape {x.shape} must have at least as many input "
                         f"dimensions as fft_lengths {lengths}.")
    trailing = x.shape[-len(lengths):]
    if fft_type == FftType.RFFT:
        if x.dtype not in _COMPLEX_OF:
            raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
        if trailing != lengths:
            raise ValueError(f"RFFT input shape {x.shape} minor dimensions must be equal "
                             f"to fft_lengths {lengths}")
        shape = x.shape[:-1] + (half_spectrum_length(lengths[-1]),)
        return ShapedArray(shape, _COMPLEX_OF[x.dtype], x.weak_type)
    if x.dtype not in _REAL_OF:
        raise ValueError(f"{fft_type.name} input must be complex64 or complex128, "
                         f"got {x.dtype}")
    if fft_type == FftType.IRFFT:
        if trailing[:-1] != lengths[:-1]:
            raise ValueError(f"IRFFT input shape {x.shape} minor dimensions must be equal "
                             f"to all except the last fft_length, got "
                             f"fft_lengths={lengths}")
        return ShapedArray(x.shape[:-len(lengths)] + lengths, _REAL_OF[x.dtype], x.weak_type)
    if trailing != lengths:
        raise ValueError(f"FFT input shape {x.shape} minor dimensions must be equal to "
                         f"fft_lengths {lengths}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


# --- NumPy reference -----------------------------------------------------------------

def fft_numpy(x, fft_type, fft_lengths):
    """The transform computed by NumPy, in the dtype the shape rule gives."""
    fft_type, lengths = FftType(fft_type), tuple(fft_lengths)
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    if fft_type == FftType.FFT:
        out, dtype = np.fft.fftn(x, axes=axes), x.dtype
    elif fft_type == FftType.IFFT:
        out, dtype = np.fft.ifftn(x, axes=axes), x.dtype
    elif fft_type == FftType.RFFT:
        out, dtype = np.fft.rfftn(x, axes=axes), _COMPLEX_OF[x.dtype]
    else:
        out, dtype = np.fft.irfftn(x, s=lengths, axes=axes), _REAL_OF[x.dtype]
    return np.asarray(out).astype(dtype)


# --- lowering --------------------------------------------------------------------------

def _fft_lowering(ctx, avals_in, avals_out, x, fft_type, fft_lengths):
    attrs = {"fft_type": f"#stablehlo<fft_type {FftType(fft_type).name}>",
             "fft_length": i64_array(fft_lengths)}
    return ctx.op("stablehlo.fft", [x], avals_in, avals_out[0], attrs)


fft_p = declare("fft", _fft_shape, None, _fft_lowering)


# --- transpose (the JVP is the transform itself: fft is linear) -----------------------
# The DFT matrix is symmetric, so FFT and IFFT are their own transposes.  The real
# transforms count each frequency strictly between 0 and Nyquist twice in the real
# signal (once as itself, once as its conjugate), but store it once; their transposes
# weight those frequencies accordingly.  Cotangents follow JAX's convention for complex
# values: the cotangent c of a complex z pairs with a tangent t as Re(c * t).

def _times_hermitian_weights(x, n, doubled, single):
    """x (a half spectrum of a length-n signal on its last axis) times `single` at
    frequency 0 and, for even n, at Nyquist (they appear once in the full spectrum), and
    times `doubled` elsewhere.  Built from scalars: a constant array here would become a
    constant of the jaxpr being traced, which the bodies of transposed loops cannot hold."""
    aval = core.get_aval(x)
    even = int(n % 2 == 0)
    middle = half_spectrum_length(n) - 1 - even
    doubled = broadcast_in_dim_p.bind(scalar_array(doubled, aval.dtype), shape=(middle,),
                                      broadcast_dimensions=())
    weights = pad_p.bind(doubled, scalar_array(single, aval.dtype),
                         padding_config=((1, even, 0),))
    weights = broadcast_in_dim_p.bind(weights, shape=aval.shape,
                                      broadcast_dimensions=(aval.ndim - 1,))
    return mul_p.bind(x, weights)


def _rfft_transpose(ct, fft_lengths):
    """RFFT is `keep the half spectrum` after a complex FFT of the real signal; its
    transpose sum_k Re(ct_k e^{-2 pi i j k / n}) is N * IRFFT(conj(ct) / multiplicity)."""
    n, size = fft_lengths[-1], math.prod(fft_lengths)
    dtype = core.get_aval(ct).dtype
    halved = _times_hermitian_weights(conj_p.bind(ct), n, 0.5, 1)
    out = fft_p.bind(halved, fft_type=FftType.IRFFT, fft_lengths=fft_lengths)
    return mul_p.bind(out, scalar_array(size, _REAL_OF[dtype]))


def _irfft_transpose(ct, fft_lengths):
    """IRFFT sums each stored frequency times its multiplicity over N; its transpose is
    conj(RFFT(ct)) * multiplicity / N."""
    n, size = fft_lengths[-1], math.prod(fft_lengths)
    spectrum = fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
    return conj_p.bind(_times_hermitian_weights(spectrum, n, 2 / size, 1 / size))


def _fft_transpose(ct, aval, fft_type, fft_lengths):
    fft_type, fft_lengths = FftType(fft_type), tuple(fft_lengths)
    if fft_type == FftType.RFFT:
        return _rfft_transpose(ct, fft_lengths)
    if fft_type == FftType.IRFFT:
        return _irfft_transpose(ct, fft_lengths)
    return fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)


deflinear_unary(fft_p, _fft_transpose)


# --- batching: the transform acts on trailing axes, so a leading batch axis is free ----

def _fft_batch(axis_data, args, dims, fft_type, fft_lengths):
    x = batch_at(args[0], dims[0], axis_data.size, 0)
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths), 0


batching_rules[fft_p] = _fft_batch
