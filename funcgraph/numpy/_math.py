"""Elementwise math and comparisons of funcgraph.numpy built from other funcgraph.numpy
functions (so every transformation applies to them unchanged)."""
import numpy as np

from funcgraph import dtypes, lax
import functools

from funcgraph.transforms.custom_derivatives import custom_jvp
from funcgraph.numpy._compiled import compiled_when_eager
from funcgraph.numpy._core import (
    asarray, asarray_operand, astype, aval_of, broadcast_shapes, promote_and_broadcast,
    promote_dtypes, promote_to_inexact)
from funcgraph.numpy._creation import arange, ones_like, zeros_like
from funcgraph.numpy._joining import concatenate
from funcgraph.numpy._reductions import all, sum
from funcgraph.numpy._setops import searchsorted
from funcgraph.numpy._sorting import where
from funcgraph.numpy._ufuncs import (
    abs, ceil, clip, equal, exp, exp2, float_divmod, floor, logical_and, floor_divide, greater,
    imag, isfinite, isinf, isnan, less, less_equal, log1p, maximum, minimum, not_equal, power,
    real, remainder, sin, trunc)


def _is_inexact(x):
    return dtypes.is_inexact(aval_of(x).dtype)


@compiled_when_eager()
def logaddexp(x1, x2, /):
    x1, x2 = promote_and_broadcast(*promote_to_inexact(x1, x2))
    return _logaddexp(x1, x2)


@compiled_when_eager()
def logaddexp2(x1, x2, /):
    x1, x2 = promote_and_broadcast(*promote_to_inexact(x1, x2))
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
        # the tie of infinities of one sign gives a nan delta: x1 + x2 is then the answer
        return where(isnan(delta), x1 + x2, amax + log1p_of_exp(-abs(delta)))

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
_logaddexp2 = _log_add(exp2, lambda d: log1p(exp2(d)) * (1 / np.log(2)))


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
    x1, x2 = promote_and_broadcast(x1, x2)
    if dtypes.is_int(aval_of(x1).dtype):
        return floor_divide(x1, x2), remainder(x1, x2)
    return float_divmod(x1, x2)


def fix(x, out=None):
    return trunc(x)


def modf(x, /, out=None):
    (x,) = promote_to_inexact(x)
    whole = where(x >= 0, floor(x), ceil(x))
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


def _is_infinity(x, infinity, name):
    x = asarray_operand(x)
    dtype = aval_of(x).dtype
    if dtypes.is_complex(dtype):
        raise ValueError(f"{name} is not defined for complex inputs")
    if not dtypes.is_float(dtype):
        return zeros_like(x, dtype=bool)
    return equal(x, infinity)


def isposinf(x, /, out=None):
    return _is_infinity(x, np.inf, "isposinf")


def isneginf(x, /, out=None):
    return _is_infinity(x, -np.inf, "isneginf")


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
    """|a - b| <= atol + rtol * |b| for finite b, else a == b (jax's and NumPy's test)."""
    a, b = promote_dtypes(a, b)
    if dtypes.is_extended(aval_of(a).dtype):
        return equal(a, b)
    a, b = promote_to_inexact(a, b)
    dtype = aval_of(a).dtype
    real_dtype = aval_of(real(a)).dtype if dtypes.is_complex(dtype) else dtype
    rtol = asarray(rtol).astype(real_dtype)
    atol = asarray(atol).astype(real_dtype)
    in_range = less_equal(abs(a - b), atol + rtol * abs(b))
    out = equal(a, b) | (isfinite(b) & in_range)
    return out | (isnan(a) & isnan(b)) if equal_nan else out


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
    # as jax: one compiled program when eager, left/right/period static where None (or a
    # string), traced otherwise
    static = tuple(name for name, v in (("left", left), ("right", right), ("period", period))
                   if v is None or isinstance(v, str))
    return _interp_program(static)(x, xp, fp, left, right, period)


@functools.lru_cache(maxsize=None)
def _interp_program(static_argnames):
    return compiled_when_eager(static_argnames=static_argnames)(_interp)


def _interp(x, xp, fp, left=None, right=None, period=None):
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
        xp, fp = lax.sort_key_val(xp, fp)
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
    if not _is_inexact(x):
        x = astype(x, dtypes.default_int() if aval_of(x).dtype == np.bool_ else aval_of(x).dtype)
    dtype = aval_of(x).dtype
    powers = arange(n, dtype=dtype) if increasing else arange(n - 1, -1, -1, dtype=dtype)
    shape = (aval_of(x).shape[0], n)
    return power(lax.broadcast_in_dim(x, shape, (0,)), lax.broadcast_in_dim(powers, shape, (1,)))
