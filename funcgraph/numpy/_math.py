"""Elementwise math, comparisons and ranges of funcgraph.numpy built from other
funcgraph.numpy functions (so every transformation applies to them unchanged)."""
import numpy as np

import funcgraph.numpy as fnp
from funcgraph import dtypes
from funcgraph.numpy._core import aval_of, asarray_operand, promote_dtypes, promote_to_inexact


def _is_inexact(x):
    return dtypes.is_inexact(aval_of(x).dtype)


def logaddexp(x1, x2, /):
    x1, x2 = promote_to_inexact(x1, x2)
    amax = fnp.maximum(x1, x2)
    delta = x1 - x2
    # the tie (and infinities of one sign) give a nan delta: amax is then the answer
    safe = fnp.where(fnp.isnan(delta), 0, delta)
    return fnp.where(fnp.isnan(delta), x1 + x2, amax + fnp.log1p(fnp.exp(-fnp.abs(safe))))


def logaddexp2(x1, x2, /):
    x1, x2 = promote_to_inexact(x1, x2)
    amax = fnp.maximum(x1, x2)
    delta = x1 - x2
    safe = fnp.where(fnp.isnan(delta), 0, delta)
    tail = fnp.log1p(fnp.exp2(-fnp.abs(safe))) / np.log(2)
    return fnp.where(fnp.isnan(delta), x1 + x2, amax + tail)


def sinc(x, /):
    (x,) = promote_to_inexact(x)
    zero = fnp.equal(x, 0)
    # the where-trick keeps the gradient at 0 finite (it is 0 there)
    safe = fnp.where(zero, 1, x) * np.pi
    return fnp.where(zero, 1, fnp.sin(safe) / safe)


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
    zero = fnp.zeros_like(x1)
    return fnp.where(fnp.less(x1, 0), zero,
                     fnp.where(fnp.greater(x1, 0), fnp.ones_like(x1),
                               fnp.where(fnp.isnan(x1), x1, x2)))


def divmod(x1, x2, /):
    return fnp.floor_divide(x1, x2), fnp.remainder(x1, x2)


def fix(x, out=None):
    return fnp.trunc(x)


def modf(x, /, out=None):
    (x,) = promote_to_inexact(x)
    whole = fnp.trunc(x)
    return x - whole, whole


def fmax(x1, x2):
    x1, x2 = promote_dtypes(x1, x2)
    if not _is_inexact(x1):
        return fnp.maximum(x1, x2)
    return fnp.where(fnp.less(x1, x2) | fnp.isnan(x1), x2, x1)


def fmin(x1, x2):
    x1, x2 = promote_dtypes(x1, x2)
    if not _is_inexact(x1):
        return fnp.minimum(x1, x2)
    return fnp.where(fnp.greater(x1, x2) | fnp.isnan(x1), x2, x1)


def isposinf(x, /, out=None):
    x = asarray_operand(x)
    if dtypes.is_complex(aval_of(x).dtype):
        raise ValueError("isposinf is not defined for complex inputs")
    return fnp.isinf(x) & fnp.greater(x, 0)


def isneginf(x, /, out=None):
    x = asarray_operand(x)
    if dtypes.is_complex(aval_of(x).dtype):
        raise ValueError("isneginf is not defined for complex inputs")
    return fnp.isinf(x) & fnp.less(x, 0)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = asarray_operand(x)
    dtype = aval_of(x).dtype
    if not dtypes.is_inexact(dtype):
        return x
    if dtypes.is_complex(dtype):
        parts = [nan_to_num(p, nan=nan, posinf=posinf, neginf=neginf)
                 for p in (fnp.real(x), fnp.imag(x))]
        return _complex(parts[0], parts[1], dtype)
    info = dtypes.finfo(dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = fnp.where(fnp.isnan(x), fnp.asarray(nan).astype(dtype), x)
    out = fnp.where(isposinf(out), fnp.asarray(posinf).astype(dtype), out)
    return fnp.where(isneginf(out), fnp.asarray(neginf).astype(dtype), out)


def _complex(re, im, dtype):
    return fnp.astype(re, dtype) + fnp.astype(im, dtype) * fnp.asarray(1j).astype(dtype)


# --- comparisons of whole arrays ------------------------------------------------------------

def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = promote_dtypes(a, b)
    dtype = aval_of(a).dtype
    if not dtypes.is_inexact(dtype):
        return fnp.equal(a, b)
    real_dtype = fnp.real(a).dtype if dtypes.is_complex(dtype) else dtype
    rtol = fnp.asarray(rtol).astype(real_dtype)
    atol = fnp.asarray(atol).astype(real_dtype)
    out = fnp.less_equal(fnp.abs(a - b), atol + rtol * fnp.abs(b))
    a_inf, b_inf = fnp.isinf(a), fnp.isinf(b)
    out = fnp.where(a_inf | b_inf, False, out)
    out = fnp.where(a_inf & b_inf, fnp.equal(a, b), out)
    a_nan, b_nan = fnp.isnan(a), fnp.isnan(b)
    out = fnp.where(a_nan | b_nan, False, out)
    if equal_nan:
        out = fnp.where(a_nan & b_nan, True, out)
    return out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return fnp.all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    a1, a2 = asarray_operand(a1), asarray_operand(a2)
    if aval_of(a1).shape != aval_of(a2).shape:
        return fnp.asarray(False)
    eq = fnp.equal(a1, a2)
    if equal_nan:
        eq = eq | (fnp.isnan(a1) & fnp.isnan(a2))
    return fnp.all(eq)


def array_equiv(a1, a2):
    a1, a2 = asarray_operand(a1), asarray_operand(a2)
    try:
        fnp.broadcast_shapes(aval_of(a1).shape, aval_of(a2).shape)
    except ValueError:
        return fnp.asarray(False)
    return fnp.all(fnp.equal(a1, a2))


def count_nonzero(a, axis=None, keepdims=False):
    a = asarray_operand(a)
    mask = a if aval_of(a).dtype == np.bool_ else fnp.not_equal(a, 0)
    return fnp.sum(mask, axis=axis, keepdims=keepdims, dtype=dtypes.default_int())


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
        out = fnp.where(c, v, out)
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
        period = fnp.abs(fnp.asarray(period).astype(aval_of(x).dtype))
        x = fnp.remainder(x, period)
        xp = fnp.remainder(xp, period)
        order = fnp.argsort(xp)
        xp, fp = xp[order], fp[order]
        xp = fnp.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = fnp.concatenate([fp[-1:], fp, fp[:1]])
    n = aval_of(xp).shape[0]
    i = fnp.clip(fnp.searchsorted(xp, x, side="right"), 1, max(n - 1, 1))
    lo = i - 1
    i = fnp.minimum(i, n - 1)
    df = fp[i] - fp[lo]
    dx = xp[i] - xp[lo]
    delta = x - xp[lo]
    eps = float(dtypes.finfo(aval_of(dx).dtype).eps)
    flat = fnp.less_equal(fnp.abs(dx), 10 * eps)
    f = fnp.where(flat, fp[lo], fp[lo] + (delta / fnp.where(flat, 1, dx)) * df)
    if period is None:
        f = fnp.where(fnp.less(x, xp[0]), fp[0] if left is None else left, f)
        f = fnp.where(fnp.greater(x, xp[-1]), fp[-1] if right is None else right, f)
    return f


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    start, stop = promote_to_inexact(start, stop)
    lin = fnp.linspace(start, stop, num, endpoint=endpoint, axis=axis,
                       dtype=aval_of(start).dtype)
    if not isinstance(base, (int, float)):
        base = fnp.astype(base, aval_of(lin).dtype)
    out = fnp.power(base, lin)
    return out if dtype is None else fnp.astype(out, dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    start, stop = promote_to_inexact(start, stop)
    if isinstance(start, fnp.ndarray) and isinstance(stop, fnp.ndarray):
        if np.any(np.asarray(start) == 0) or np.any(np.asarray(stop) == 0):
            raise ValueError("geomspace: start and stop may not be zero")
    sign = fnp.sign(start)
    out = logspace(fnp.log10(start / sign), fnp.log10(stop / sign), num, endpoint=endpoint,
                   base=10.0, axis=axis)
    lead = fnp.expand_dims(sign, 0) if aval_of(sign).ndim else sign
    out = fnp.moveaxis(out, axis, 0) * lead if aval_of(sign).ndim else out * sign
    if aval_of(sign).ndim:
        out = fnp.moveaxis(out, 0, axis)
    return out if dtype is None else fnp.astype(out, dtype)


def vander(x, N=None, increasing=False):
    x = asarray_operand(x)
    if aval_of(x).ndim != 1:
        raise ValueError(f"vander: x must be one-dimensional, got shape {aval_of(x).shape}")
    n = aval_of(x).shape[0] if N is None else int(N)
    if n < 0:
        raise ValueError(f"vander: N must be non-negative, got {n}")
    powers = fnp.arange(n)
    if not increasing:
        powers = powers[::-1]
    return fnp.power(fnp.expand_dims(x, 1), powers)
