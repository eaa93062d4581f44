"""lax.fft and lax.FftType, with JAX's signature."""
from funcgraph import dtypes
from funcgraph.lax._elementwise import convert_element_type
from funcgraph.lax._operands import as_operand
from funcgraph.primitives.fft import FftType, fft_p

__all__ = ["FftType", "fft"]

# As in JAX, the lower-case names and the enum's own names.
_TYPE_NAMES = {**{t.name: t for t in FftType}, **{t.name.lower(): t for t in FftType}}


def _fft_type(fft_type):
    if isinstance(fft_type, str):
        if fft_type not in _TYPE_NAMES:
            raise ValueError(f"Unknown FFT type '{fft_type}'")
        return _TYPE_NAMES[fft_type]
    if isinstance(fft_type, FftType):
        return fft_type
    raise TypeError(f"Unknown FFT type value '{fft_type}'")


def _complex_dtype(dtype):
    """complex128 for 64-bit inputs (with x64), complex64 for everything narrower."""
    inexact = dtypes.to_inexact(dtype)
    if dtypes.is_complex(inexact):
        return inexact
    return dtypes.complex128 if inexact == dtypes.float64 else dtypes.complex64


def fft(x, fft_type, fft_lengths):
    """The fast Fourier transform of type `fft_type` ('fft', 'ifft', 'rfft', 'irfft' or
    an FftType) over the trailing len(fft_lengths) axes of x (at most 3)."""
    fft_type = _fft_type(fft_type)
    x = as_operand(x)
    dtype = x.aval.dtype
    if fft_type == FftType.RFFT:
        if dtypes.is_complex(dtype):
            raise ValueError("only real valued inputs supported for rfft")
        x = convert_element_type(x, dtypes.to_inexact(dtype))
    else:
        x = convert_element_type(x, _complex_dtype(dtype))
    fft_lengths = tuple(int(n) for n in fft_lengths)
    if not fft_lengths:  # XLA has no rank-0 transform; nothing to transform
        return x
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths)
