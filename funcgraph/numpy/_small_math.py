"""Small numeric functions of jnp built from other funcgraph.numpy functions (so every
transformation applies to them): complex predicates, cumulative_sum/prod, matvec/vecmat,
gcd/lcm, bitwise_count, spacing, unwrap, ldexp/frexp, i0, windows, cov/corrcoef, gradient."""
import builtins

import numpy as np

from funcgraph import dtypes, lax
from funcgraph.transforms.ad import jvp
from funcgraph.transforms.custom_derivatives import custom_jvp
from funcgraph.numpy._core import (
    asarray, asarray_operand, astype, aval_of, canonical_axes, check_axis, promote_dtypes,
    promote_to_inexact)
from funcgraph.numpy._compiled import compiled_when_eager
from funcgraph.numpy._creation import arange, ones
from funcgraph.numpy._einsum import einsum
from funcgraph.numpy._joining import concatenate
from funcgraph.numpy._reductions import any, sum
from funcgraph.numpy._shapes import broadcast_arrays, ndim, reshape
from funcgraph.numpy._sorting import cumprod, cumsum, where
from funcgraph.numpy._stats import average
from funcgraph.numpy._ufuncs import (
    abs, arctan2, clip, conjugate, copysign, cos, equal, exp, exp2, floor_divide, imag, isinf,
    isnan, nextafter, not_equal, real, remainder, sqrt)

_KINDS = {
    "bool": lambda d: d == np.bool_,
    "signed integer": lambda d: dtypes.is_int(d) and not dtypes.is_unsigned(d),
    "unsigned integer": lambda d: dtypes.is_unsigned(d),
    "integral": lambda d: dtypes.is_int(d),
    "real floating": lambda d: dtypes.is_float(d),
    "complex floating": lambda d: dtypes.is_complex(d),
    "numeric": lambda d: d != np.bool_,
}


def isdtype(dtype, kind):
    """The array API's dtype-kind test: kind is a dtype, a kind name or a tuple of them."""
    dtype = np.dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"isdtype: unknown kind {k!r}; expected one of {list(_KINDS)}")
            if _KINDS[k](dtype):
                return True
        elif np.dtype(k) == dtype:
            return True
    return False


def iscomplexobj(x):
    """Whether x's dtype is complex; as in jax, anything with a `dtype` (scalar types,
    ShapeDtypeStructs) is read by it, and None is not complex."""
    if x is None:
        return False
    dtype = getattr(x, "dtype", None)
    if dtype is None or not isinstance(dtype, np.dtype):
        dtype = aval_of(x).dtype
    return dtypes.is_complex(dtype)


def isrealobj(x):
    return not iscomplexobj(x)


def iscomplex(x):
    return not_equal(imag(x), 0)


def isreal(x):
    return equal(imag(x), 0)


def isscalar(element):
    """True for 0-d arrays and for what NumPy calls scalars (as jnp.isscalar)."""
    if isinstance(element, np.ndarray) or hasattr(element, "aval"):
        return np.ndim(element) == 0
    return builtins.bool(np.isscalar(element))


def angle(z, deg=False):
    z = asarray(z)
    if not dtypes.is_inexact(z.dtype):
        (z,) = promote_to_inexact(z)
    result = arctan2(imag(z), real(z))
    return result * (180 / np.pi) if deg else result


def copy(a, order=None):
    return asarray(a, copy=True)


def _cumulative(cumulate, x, axis, dtype, include_initial, identity, name):
    x = asarray(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: the input must be 1-d when axis is None, got shape "
                             f"{x.shape}")
        axis = 0
    axis = check_axis(axis, x.ndim)
    out = cumulate(x, axis=axis, dtype=dtype)
    if not include_initial:
        return out
    shape = list(out.shape)
    shape[axis] = 1
    initial = astype(ones(shape, out.dtype) * identity, out.dtype)
    return concatenate([initial, out], axis=axis)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    return _cumulative(cumsum, x, axis, dtype, include_initial, 0, "cumulative_sum")


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    return _cumulative(cumprod, x, axis, dtype, include_initial, 1, "cumulative_prod")


def matvec(x1, x2, /):
    """Matrix-vector product over the last two (x1) and last (x2) axes, broadcasting the rest."""
    return einsum("...ij,...j->...i", x1, x2)


def vecmat(x1, x2, /):
    """Conjugated vector times matrix, as jnp.vecmat."""
    return einsum("...i,...ij->...j", conjugate(x1), x2)


def _check_integers(name, *args):
    for a in args:
        if not dtypes.is_int(aval_of(a).dtype):
            raise TypeError(f"{name} requires integer arguments, got {aval_of(a).dtype}")


def gcd(x1, x2, /):
    x1, x2 = promote_dtypes(x1, x2)
    _check_integers("gcd", x1, x2)
    a, b = broadcast_arrays(x1, x2)

    def step(state):
        a, b = state
        nonzero = b != 0
        # rem by 0 is defined (and not picked): no safe divisor needed
        return where(nonzero, b, a), where(nonzero, lax.rem(a, b), 0)

    a, _ = lax.while_loop(lambda state: any(state[1] != 0), step, (abs(a), abs(b)))
    return a


def lcm(x1, x2, /):
    x1, x2 = promote_dtypes(x1, x2)
    _check_integers("lcm", x1, x2)
    x1, x2 = abs(x1), abs(x2)
    d = gcd(x1, x2)
    # floor_divide by 0 is defined (and not picked): no safe divisor needed
    return where(d == 0, 0, x1 * floor_divide(x2, d))


def bitwise_count(x, /):
    x = asarray(x)
    _check_integers("bitwise_count", x)
    return astype(lax.population_count(abs(x)), np.uint8)


def spacing(x, /):
    """The distance to the next float away from zero, as jax: toward +inf for float16
    (NumPy's float16 rule), and the smallest subnormal, signed, where the difference
    flushes to zero."""
    (x,) = promote_to_inexact(x)
    if dtypes.is_complex(x.dtype):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    inf = np.array(np.inf, x.dtype)
    if x.dtype == np.float16:
        return nextafter(x, inf) - x
    out = nextafter(x, copysign(inf, x)) - x
    tiny = np.array(dtypes.finfo(x.dtype).smallest_subnormal, x.dtype)
    return where(out == 0, copysign(tiny, x), out)


def ldexp(x1, x2, /):
    """x1 * 2**x2, computed as jax does: x1's mantissa times a power of two, so that
    2**x2 itself may overflow or underflow where the result does not."""
    x1, x2 = asarray(x1), asarray(x2)
    if dtypes.is_complex(x1.dtype) or dtypes.is_inexact(x2.dtype):
        raise ValueError(f"ldexp not supported for input types {(x1.dtype, x2.dtype)}")
    (x1,) = promote_to_inexact(x1)
    mantissa, exponent = frexp(x1)
    exponent = astype(exponent, x1.dtype) + astype(x2, x1.dtype)
    # the mantissa is below 1: one step of the exponent moves into it where that keeps
    # 2**exponent finite
    up = exponent > 0
    mantissa = where(up, mantissa * 2, mantissa)
    exponent = where(up, exponent - 1, exponent)
    out = mantissa * 2 ** exponent
    return where(isinf(x1) | (x1 == 0), x1, out)


_INT_OF_WIDTH = {2: np.int16, 4: np.int32, 8: np.int64}


def frexp(x, /):
    """Mantissa in [0.5, 1) and integer exponent with x = mantissa * 2**exponent, read
    from x's bits (the same bits as jax's)."""
    (x,) = promote_to_inexact(x)
    if dtypes.is_complex(x.dtype):
        raise TypeError("frexp does not support complex-valued inputs")
    return _frexp(x)


@custom_jvp
def _frexp(x):
    x = asarray(x)
    info = dtypes.finfo(x.dtype)
    int_type = _INT_OF_WIDTH[x.dtype.itemsize]
    exponent_mask = (1 << info.nexp) - 1
    bias = 1 - info.minexp
    # a subnormal is scaled into the normal range first, its exponent corrected after
    small = abs(x) < np.asarray(info.tiny, x.dtype)
    scaled = where(small, x * np.asarray(1 << info.nmant, x.dtype), x)
    bits = lax.bitcast_convert_type(scaled, int_type)
    exponent = (where(small, int_type(-info.nmant), int_type(0))
                + ((bits >> info.nmant) & exponent_mask) - (bias - 1))
    # the exponent field of 0.5: the mantissa's sign and fraction bits kept
    bits = (bits & ~(exponent_mask << info.nmant)) | ((bias - 1) << info.nmant)
    mantissa = lax.bitcast_convert_type(bits, x.dtype)
    special = isinf(x) | isnan(x) | (x == 0)
    return (where(special, x, mantissa),
            astype(where(special, int_type(0), exponent), np.int32))


@_frexp.defjvp
def _frexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    mantissa, exponent = _frexp(x)
    return (mantissa, exponent), (t * exp2(-astype(exponent, t.dtype)),
                                  np.zeros(np.shape(exponent), dtypes.float0))


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    (p,) = promote_to_inexact(p)
    axis = check_axis(axis, p.ndim)
    if discont is None:
        discont = period / 2
    n = p.shape[axis]
    dd = lax.slice_in_dim(p, 1, n, axis=axis) - lax.slice_in_dim(p, 0, n - 1, axis=axis)
    interval_high = period / 2
    ddmod = remainder(dd + interval_high, period) - interval_high
    ddmod = where((ddmod == -interval_high) & (dd > 0), interval_high, ddmod)
    correction = where(abs(dd) < discont, 0, ddmod - dd)
    first = lax.slice_in_dim(p, 0, 1, axis=axis)
    rest = lax.slice_in_dim(p, 1, n, axis=axis) + cumsum(correction, axis=axis)
    return concatenate([first, rest], axis=axis)


def i0(x):
    """The modified Bessel function of the first kind of order 0, for real x."""
    (x,) = promote_to_inexact(asarray(x))
    if dtypes.is_complex(aval_of(x).dtype):
        raise ValueError(f"Unsupported input type to funcgraph.numpy.i0: {aval_of(x).dtype}")
    return _i0(x)


def _i0_plain(x):
    ax = abs(x)
    return exp(ax) * lax.bessel_i0e(ax)


_i0 = custom_jvp(_i0_plain)


@_i0.defjvp
def _i0_jvp(primals, tangents):
    # The derivative of the plain formula, set to i0'(0) = 0 at 0, where |x| has none
    # (as jax computes it, so that the last bits agree).
    out, t_out = jvp(_i0_plain, primals, tangents)
    return out, where(primals[0] == 0, 0.0, t_out)


def _window_positions(M):
    M = int(M)
    return M, arange(0, M, dtype=dtypes.default_float())


def bartlett(M):
    M, n = _window_positions(M)
    if M <= 1:
        return ones(M, n.dtype)
    return 1 - abs(2 * n + 1 - M) / (M - 1)  # jax's order of operations


def kaiser(M, beta):
    """The Kaiser window of M points and shape parameter beta."""
    M, n = _window_positions(M)
    if M <= 1:
        return ones(M, n.dtype)
    alpha = (M - 1) / 2.0
    beta = asarray(beta).astype(n.dtype)
    return i0(beta * sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)


def _cosine_window(M, coefficients):
    M, n = _window_positions(M)
    if M <= 1:
        return ones(M, n.dtype)
    out = coefficients[0]
    for k, c in enumerate(coefficients[1:], 1):
        term = builtins.abs(c) * cos(2 * np.pi * k * n / (M - 1))
        out = out - term if c < 0 else out + term
    return out


def blackman(M):
    return _cosine_window(M, (0.42, -0.5, 0.08))


def hamming(M):
    return _cosine_window(M, (0.54, -0.46))


def hanning(M):
    return _cosine_window(M, (0.5, -0.5))


@compiled_when_eager(static_argnames=("rowvar", "bias", "ddof", "dtype"))
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
    """Covariance matrix of the rows (rowvar) or columns of m, as numpy.cov."""
    m = asarray_operand(m)  # lists: jax's TypeError
    if m.ndim > 2:
        raise ValueError(f"cov: m has more than 2 dimensions (shape {m.shape})")
    (m,) = promote_to_inexact(m)
    x = reshape(m, (1, -1)) if m.ndim < 2 else m
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if y is not None:
        (y,) = promote_to_inexact(y)
        y = reshape(y, (1, -1)) if ndim(y) < 2 else y
        if not rowvar and y.shape[0] != 1:
            y = y.T
        x, y = promote_dtypes(x, y)
        x = concatenate([x, y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:  # NumPy refuses negative weights; jax takes their size
        w = abs(asarray(fweights))
    if aweights is not None:
        aweights = abs(asarray(aweights))
        w = aweights if w is None else w * aweights
    if dtype is not None:
        x = astype(x, dtype)
        w = None if w is None else astype(w, dtype)
    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        fact = x.shape[1] - ddof
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * sum(w * aweights) / w_sum
    x = x - avg[:, None]
    x_weighted = x if w is None else x * w
    # x against the weighted x, conjugated, as jax's dot(X, (X w).T.conj())
    c = einsum("ij,kj->ik", x, conjugate(x_weighted))
    c = c / fact
    return reshape(c, ()) if c.shape == (1, 1) else c


@compiled_when_eager(static_argnames=("rowvar", "dtype"))
def corrcoef(x, y=None, rowvar=True, dtype=None):
    c = cov(x, y, rowvar, dtype=dtype)
    if ndim(c) == 0:
        return c / c
    d = real(einsum("ii->i", c))
    stddev = sqrt(d)
    c = c / stddev[:, None] / stddev[None, :]
    if dtypes.is_complex(c.dtype):
        return clip(real(c), -1, 1) + 1j * clip(imag(c), -1, 1)
    c = clip(c, -1, 1)
    return c if dtype is None else astype(c, dtype)


def _gradient_along(f, spacing, axis, edge_order):
    n = f.shape[axis]
    if n < edge_order + 1:
        raise ValueError(f"gradient: shape {f.shape} too small along axis {axis} for edge_order "
                         f"{edge_order} (needs at least {edge_order + 1} points)")

    def part(start, stop):
        return lax.slice_in_dim(f, start, stop, axis=axis)

    if ndim(spacing) == 0:
        h = spacing
        interior = (part(2, n) - part(0, n - 2)) * 0.5 / h  # jax's order of operations
        first = (part(1, 2) - part(0, 1)) / h
        last = (part(n - 1, n) - part(n - 2, n - 1)) / h
        return concatenate([first, interior, last], axis=axis)
    coords = asarray(spacing)
    dx = coords[1:] - coords[:-1]
    shape = [1] * f.ndim
    shape[axis] = -1
    dx1 = reshape(dx[:-1], shape)
    dx2 = reshape(dx[1:], shape)
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    interior = a * part(0, n - 2) + b * part(1, n - 1) + c * part(2, n)
    first = (part(1, 2) - part(0, 1)) / dx[0]
    last = (part(n - 1, n) - part(n - 2, n - 1)) / dx[-1]
    return concatenate([first, interior, last], axis=axis)


@compiled_when_eager(static_argnames=("axis", "edge_order"))
def gradient(f, *varargs, axis=None, edge_order=None):
    """Central differences inside, one-sided first-order differences at the edges."""
    if edge_order is not None and edge_order != 1:
        raise NotImplementedError("gradient: only edge_order=1 is supported (as jnp)")
    (f,) = promote_to_inexact(f)
    axes = canonical_axes(axis, f.ndim) if axis is not None else tuple(range(f.ndim))
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError(f"gradient: expected 0, 1 or {len(axes)} spacings, got {len(varargs)}")
    grads = [_gradient_along(f, h, a, 1) for a, h in zip(axes, spacings, strict=True)]
    return grads[0] if len(grads) == 1 else grads
