"""Elementwise math and comparisons of funcgraph.numpy built from other funcgraph.numpy
functions (so every transformation applies to them unchanged)."""
import numpy as np

from funcgraph import dtypes
from funcgraph.transforms.custom_derivatives import custom_jvp
from funcgraph.numpy._core import (
    asarray, asarray_operand, astype, aval_of, broadcast_shapes, promote_dtypes,
    promote_to_inexact)
from funcgraph.numpy._creation import arange, ones_like, zeros_like
from funcgraph.numpy._joining import concatenate
from funcgraph.numpy._reductions import all, sum
from funcgraph.numpy._setops import searchsorted
from funcgraph.numpy._shapes import expand_dims
from funcgraph.numpy._sorting import argsort, where
from funcgraph.numpy._ufuncs import (
    abs, clip, equal, exp, exp2, logical_and, floor_divide, greater, imag, isinf, isnan, less, less_equal,
    log1p, maximum, minimum, not_equal, power, real, remainder, sin, trunc)


def _is_inexact(x):
    return dtypes.is_inexact(aval_of(x).dtype)


def logaddexp(x1, x2, /):
    x1, x2 = promote_to_inexact(x1, x2)
    return _logaddexp(x1, x2)


def logaddexp2(x1, x2, /):
    x1, x2 = promote_to_inexact(x1, x2)
    return _logaddexp2(x1, x2)


def _no_pos_inf(v):
    return where(logical_and(isinf(v), v > 0), 0, v)


def _log_add(exp_fn, log1p_of_exp):
    """log(exp(x1) + exp(x2)) in base e or 2, with the derivative written out: each operand's
    tangent weighted by exp(x - out), which is 1/2 each where x1 == x2 (as jax; the
    max-plus-correction formula alone would give 0 and 1 there)."""
    @custom_jvp
    def log_add(x1, x2):
        amax = maximum(x1, x2)
        delta = x1 - x2
        # the tie of infinities of one sign gives a nan delta: amax is then the answer
        safe = where(isnan(delta), 0, delta)
        return where(isnan(delta), x1 + x2, amax + log1p_of_exp(-abs(safe)))

    @log_add.defjvp
    def log_add_jvp(primals, tangents):
        x1, x2 = primals
        t1, t2 = tangents
        out = log_add(x1, x2)
        # +inf counts as 0 so that an infinite result does not make inf - inf; -inf stays
        # (its weight is 0), as in jax
        w1 = exp_fn(_no_pos_inf(x1) - _no_pos_inf(out))
        w2 = exp_fn(_no_pos_inf(x2) - _no_pos_inf(out))
        return out, w1 * t1 + w2 * t2

    return log_add


_logaddexp = _log_add(exp, lambda d: log1p(exp(d)))
_logaddexp2 = _log_add(exp2, lambda d: log1p(exp2(d)) / np.log(2))


def sinc(x, /):
    (x,) = promote_to_inexact(x)
    zero = equal(x, 0)
    # the where-trick keeps the gradient at 0 finite (it is 0 there)
    safe = where(zero, 1, x) * np.pi
    return where(zero, 1, sin(safe) / safe)


def deg2rad(x, /):
    (x,) = promote_to_inexact(x)
    return x * (np.pi / 180)


def rad2deg(x, /):
    (x,) = promote_to_inexact(x)
    return x * (180 / np.pi)


radians = deg2rad
degrees = rad2deg


def heaviside(x1, x2, /):
    x1, x2 = promote_to_inexact(x1, x2)
    zero = zeros_like(x1)
    return where(less(x1, 0), zero,
                 where(greater(x1, 0), ones_like(x1),
                       where(isnan(x1), x1, x2)))


def divmod(x1, x2, /):
    return floor_divide(x1, x2), remainder(x1, x2)


def fix(x, out=None):
    return trunc(x)


def modf(x, /, out=None):
    (x,) = promote_to_inexact(x)
    whole = trunc(x)
    return x - whole, whole


def fmax(x1, x2):
    x1, x2 = promote_dtypes(x1, x2)
    if not _is_inexact(x1):
        return maximum(x1, x2)
    # as jax writes it: x2 on ties (so fmax(0.0, -0.0) is -0.0) and where x1 is NaN
    return where(greater(x1, x2) | isnan(x2), x1, x2)


def fmin(x1, x2):
    x1, x2 = promote_dtypes(x1, x2)
    if not _is_inexact(x1):
        return minimum(x1, x2)
    return where(less(x1, x2) | isnan(x2), x1, x2)  # as fmax


def isposinf(x, /, out=None):
    x = asarray_operand(x)
    if dtypes.is_complex(aval_of(x).dtype):
        raise ValueError("isposinf is not defined for complex inputs")
    return isinf(x) & greater(x, 0)


def isneginf(x, /, out=None):
    x = asarray_operand(x)
    if dtypes.is_complex(aval_of(x).dtype):
        raise ValueError("isneginf is not defined for complex inputs")
    return isinf(x) & less(x, 0)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = asarray_operand(x)
    dtype = aval_of(x).dtype
    if not dtypes.is_inexact(dtype):
        return x
    if dtypes.is_complex(dtype):
        parts = [nan_to_num(p, nan=nan, posinf=posinf, neginf=neginf)
                 for p in (real(x), imag(x))]
        return _complex(parts[0], parts[1], dtype)
    info = dtypes.finfo(dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = where(isnan(x), asarray(nan).astype(dtype), x)
    out = where(isposinf(out), asarray(posinf).astype(dtype), out)
    return where(isneginf(out), asarray(neginf).astype(dtype), out)


def _complex(re, im, dtype):
    return astype(re, dtype) + astype(im, dtype) * asarray(1j).astype(dtype)


# --- comparisons of whole arrays ------------------------------------------------------------

def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = promote_dtypes(a, b)
    dtype = aval_of(a).dtype
    if not dtypes.is_inexact(dtype):
        return equal(a, b)
    real_dtype = real(a).dtype if dtypes.is_complex(dtype) else dtype
    rtol = asarray(rtol).astype(real_dtype)
    atol = asarray(atol).astype(real_dtype)
    out = less_equal(abs(a - b), atol + rtol * abs(b))
    a_inf, b_inf = isinf(a), isinf(b)
    out = where(a_inf | b_inf, False, out)
    out = where(a_inf & b_inf, equal(a, b), out)
    a_nan, b_nan = isnan(a), isnan(b)
    out = where(a_nan | b_nan, False, out)
    if equal_nan:
        out = where(a_nan & b_nan, True, out)
    return out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    a1, a2 = asarray(a1), asarray(a2)  # lists too, as jax's
    if aval_of(a1).shape != aval_of(a2).shape:
        return asarray(False)
    eq = equal(a1, a2)
    if equal_nan:
        eq = eq | (isnan(a1) & isnan(a2))
    return all(eq)


def array_equiv(a1, a2):
    a1, a2 = asarray(a1), asarray(a2)  # lists too, as jax's
    try:
        broadcast_shapes(aval_of(a1).shape, aval_of(a2).shape)
    except ValueError:
        return asarray(False)
    return all(equal(a1, a2))


def count_nonzero(a, axis=None, keepdims=False):
    a = asarray_operand(a)
    mask = a if aval_of(a).dtype == np.bool_ else not_equal(a, 0)
    return sum(mask, axis=axis, keepdims=keepdims, dtype=dtypes.default_int())


def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: condlist and choicelist must have the same length, got "
                         f"{len(condlist)} and {len(choicelist)}")
    if not condlist:
        raise ValueError("select: condlist must be non-empty")
    conds = [asarray_operand(c) for c in condlist]
    for i, c in enumerate(conds):
        if aval_of(c).dtype != np.bool_:
            raise TypeError(f"select: condlist[{i}] must be a boolean array, got "
                            f"{aval_of(c).str_short()}")
    values = promote_dtypes(*choicelist, default)
    out = values[-1]
    for c, v in zip(reversed(conds), reversed(values[:-1])):
        out = where(c, v, out)
    return out


# --- interpolation and ranges -----------------------------------------------------------------

def interp(x, xp, fp, left=None, right=None, period=None):
    xp, fp = asarray_operand(xp), asarray_operand(fp)
    if aval_of(xp).ndim != 1 or aval_of(fp).ndim != 1:
        raise ValueError(f"interp: xp and fp must be one-dimensional, got shapes "
                         f"{aval_of(xp).shape} and {aval_of(fp).shape}")
    if aval_of(xp).shape != aval_of(fp).shape:
        raise ValueError(f"interp: xp and fp must have the same length, got "
                         f"{aval_of(xp).shape[0]} and {aval_of(fp).shape[0]}")
    if aval_of(xp).shape[0] == 0:
        raise ValueError("interp: xp and fp must be non-empty")
    if dtypes.is_complex(aval_of(x).dtype) or dtypes.is_complex(aval_of(xp).dtype):
        raise TypeError("interp: x and xp must be real")
    x, xp, fp = promote_to_inexact(x, xp, fp)
    if period is not None:
        period = abs(asarray(period).astype(aval_of(x).dtype))
        x = remainder(x, period)
        xp = remainder(xp, period)
        order = argsort(xp)
        xp, fp = xp[order], fp[order]
        xp = concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = concatenate([fp[-1:], fp, fp[:1]])
    n = aval_of(xp).shape[0]
    i = clip(searchsorted(xp, x, side="right"), 1, max(n - 1, 1))
    lo = i - 1
    i = minimum(i, n - 1)
    df = fp[i] - fp[lo]
    dx = xp[i] - xp[lo]
    delta = x - xp[lo]
    eps = float(dtypes.finfo(aval_of(dx).dtype).eps)
    flat = less_equal(abs(dx), 10 * eps)
    f = where(flat, fp[lo], fp[lo] + (delta / where(flat, 1, dx)) * df)
    if period is None:
        f = where(less(x, xp[0]), fp[0] if left is None else left, f)
        f = where(greater(x, xp[-1]), fp[-1] if right is None else right, f)
    return f


def vander(x, N=None, increasing=False):
    x = asarray_operand(x)
    if aval_of(x).ndim != 1:
        raise ValueError(f"vander: x must be one-dimensional, got shape {aval_of(x).shape}")
    n = aval_of(x).shape[0] if N is None else int(N)
    if n < 0:
        raise ValueError(f"vander: N must be non-negative, got {n}")
    powers = arange(n)
    if not increasing:
        powers = powers[::-1]
    return power(expand_dims(x, 1), powers)
