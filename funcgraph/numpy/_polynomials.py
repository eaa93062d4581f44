"""Polynomial arithmetic of jnp on coefficient arrays (highest power first)."""
import numpy as np

from funcgraph import core
from funcgraph.numpy._core import asarray, promote_dtypes, promote_to_inexact
from funcgraph.numpy._creation import arange, eye, zeros
from funcgraph.numpy._joining import concatenate
from funcgraph.numpy._math import vander
from funcgraph.numpy._reductions import sum
from funcgraph.numpy._stats import convolve
from funcgraph.numpy._ufuncs import sqrt
from funcgraph.numpy.linalg import eigvals, lstsq


def _pad_front(p, length):
    if p.shape[0] >= length:
        return p
    return concatenate([zeros(length - p.shape[0], p.dtype), p])


def _check_1d(name, *polys):
    for p in polys:
        if p.ndim != 1:
            raise ValueError(f"{name}: coefficient arrays must be 1-d, got shape {p.shape}")


def polyadd(a1, a2):
    a1, a2 = promote_dtypes(asarray(a1), asarray(a2))
    _check_1d("polyadd", a1, a2)
    n = max(a1.shape[0], a2.shape[0])
    return _pad_front(a1, n) + _pad_front(a2, n)


def polysub(a1, a2):
    a1, a2 = promote_dtypes(asarray(a1), asarray(a2))
    _check_1d("polysub", a1, a2)
    n = max(a1.shape[0], a2.shape[0])
    return _pad_front(a1, n) - _pad_front(a2, n)


def _strip_leading_zeros(p):
    if isinstance(p, core.Tracer):
        return p
    values = np.asarray(p)
    leading = np.flatnonzero(values)
    return p[leading[0]:] if leading.size else p[-1:]


def polymul(a1, a2, *, trim_leading_zeros=False):
    a1, a2 = promote_dtypes(asarray(a1), asarray(a2))
    _check_1d("polymul", a1, a2)
    if trim_leading_zeros:
        a1, a2 = _strip_leading_zeros(a1), _strip_leading_zeros(a2)
    if a1.shape[0] == 0:
        a1 = zeros(1, a1.dtype)
    if a2.shape[0] == 0:
        a2 = zeros(1, a2.dtype)
    return convolve(a1, a2, mode="full")


def polyder(p, m=1):
    m = int(m)
    if m < 0:
        raise ValueError(f"polyder: order of derivative must be non-negative, got {m}")
    (p,) = promote_dtypes(asarray(p))
    _check_1d("polyder", p)
    for _ in range(m):
        n = p.shape[0]
        if n <= 1:
            return zeros(0, p.dtype)
        p = p[:-1] * arange(n - 1, 0, -1, dtype=p.dtype)
    return p


def polyint(p, m=1, k=None):
    m = int(m)
    if m < 0:
        raise ValueError(f"polyint: order of integral must be non-negative, got {m}")
    (p,) = promote_to_inexact(asarray(p))
    _check_1d("polyint", p)
    k = zeros(m, p.dtype) if k is None else asarray(k, dtype=p.dtype).reshape(-1)
    if k.shape[0] == 1 and m > 1:
        k = k + zeros(m, p.dtype)
    if k.shape[0] != m:
        raise ValueError(f"polyint: k must be a scalar or have length m={m}, got {k.shape[0]}")
    for i in range(m):
        n = p.shape[0]
        p = concatenate([p / arange(n, 0, -1, dtype=p.dtype), k[i:i + 1]])
    return p


def polydiv(u, v, *, trim_leading_zeros=False):
    """Quotient and remainder of u / v (v's leading coefficient must be nonzero)."""
    u, v = promote_to_inexact(asarray(u), asarray(v))
    _check_1d("polydiv", u, v)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    q = zeros(max(m - n + 1, 1), u.dtype)
    r = u
    for k in range(m - n + 1):
        d = scale * r[k]
        q = q.at[k].set(d)
        r = r.at[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        r = _strip_leading_zeros(r)
    return q, r


def poly(seq_of_zeros):
    """Coefficients of the monic polynomial with the given roots (1-d input)."""
    (zeros_,) = promote_dtypes(asarray(seq_of_zeros))
    if zeros_.ndim != 1:
        raise NotImplementedError("poly: only 1-d sequences of roots are supported "
                                  "(2-d input needs the characteristic polynomial via eigvals)")
    coefficients = asarray(np.ones(1), dtype=zeros_.dtype)
    for i in range(zeros_.shape[0]):
        coefficients = convolve(coefficients, concatenate([asarray(np.ones(1), zeros_.dtype),
                                                          -zeros_[i:i + 1]]))
    return coefficients


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial fit of degree deg (coefficients highest power first)."""
    deg = int(deg)
    if deg < 0:
        raise ValueError(f"polyfit: expected deg >= 0, got {deg}")
    x, y = promote_to_inexact(asarray(x), asarray(y))
    if x.ndim != 1 or y.ndim not in (1, 2) or x.shape[0] != y.shape[0]:
        raise ValueError(f"polyfit: x must be 1-d and y 1-d or 2-d of the same length, got "
                         f"{x.shape} and {y.shape}")
    order = deg + 1
    rcond = x.shape[0] * float(np.finfo(x.dtype).eps) if rcond is None else rcond
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        w = asarray(w, dtype=x.dtype)
        lhs = lhs * w[:, None]
        rhs = rhs * (w if rhs.ndim == 1 else w[:, None])
    # scale the columns to unit norm for a better-conditioned solve
    scale = sqrt(sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, residuals, rank, s = lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if full:
        return c, residuals, rank, s, asarray(rcond)
    if cov:
        raise NotImplementedError("polyfit: cov=True is not supported by funcgraph yet")
    return c


def roots(p, *, strip_zeros=True):
    """Roots of the polynomial p: the eigenvalues of its companion matrix (complex).
    Leading zeros are stripped, so p must be concrete, unless strip_zeros=False (then a
    leading zero gives NaN roots, as in jax)."""
    (p,) = promote_to_inexact(asarray(p))
    p = p.reshape(-1) if p.ndim == 0 else p
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    complex_dtype = np.result_type(p.dtype, np.complex64)
    if strip_zeros:
        if isinstance(p, core.Tracer):
            raise core.ConcretizationTypeError(
                "roots strips leading zeros, which needs concrete coefficients (as in jnp)")
        nonzero_at = np.flatnonzero(np.asarray(p))
        p = p[nonzero_at[0]:] if nonzero_at.size else p[p.shape[0]:]
    if p.shape[0] < 2:
        return zeros(0, complex_dtype)
    n = p.shape[0] - 1
    companion = concatenate([(-p[1:] / p[0])[None, :],
                             eye(n - 1, n, dtype=p.dtype)], axis=0)
    return eigvals(companion)
