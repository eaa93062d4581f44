"""funcgraph.scipy.special: JAX's scipy.special functions, written with funcgraph's
primitives (differentiable wherever jax's are: series and continued fractions are loops
with their own derivative rules, or fixed-length sums that autodiff differentiates)."""
import math
from fractions import Fraction

import numpy as np

from funcgraph import dtypes, lax, nn
from funcgraph import numpy as fnp
from funcgraph import special_math
from funcgraph.scipy import _special_integrals
from funcgraph.scipy._special_integrals import (
    dawsn, exp1, expi, expn, fresnel, sici, spence)
from funcgraph.scipy._special_series import bessel_jn, hyp1f1, hyp2f1, sph_harm_y, wofz
from funcgraph.transforms import ad
from funcgraph.transforms.custom_derivatives import custom_jvp

__all__ = [
    "bernoulli", "bessel_jn", "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb",
    "dawsn", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp1", "expi", "expit",
    "expn", "factorial", "fresnel", "gamma", "gammainc", "gammaincc", "gammaln", "gammasgn",
    "hyp1f1", "hyp2f1", "i0", "i0e", "i1", "i1e", "kl_div", "log_ndtr", "log_softmax",
    "loggamma", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "owens_t", "poch",
    "polygamma", "rel_entr", "sici", "softmax", "spence", "sph_harm_y", "wofz",
    "xlog1py", "xlogy", "zeta",
]

logsumexp = nn.logsumexp
def softmax(x, /, *, axis=None):
    """scipy.special.softmax: over every axis unless `axis` says otherwise (nn.softmax
    defaults to the last axis)."""
    return nn.softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    """scipy.special.log_softmax: over every axis unless `axis` says otherwise."""
    return nn.log_softmax(x, axis=axis)


def _inexact(*args):
    """Args as arrays of one inexact dtype (ints promote to the default float)."""
    arrays = [fnp.asarray(a) for a in args]
    dtype = fnp.result_type(*arrays)
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.default_float()
    arrays = [a.astype(dtype) for a in arrays]
    return arrays[0] if len(arrays) == 1 else arrays


def _c(x, value):
    return np.array(value, x.dtype)


def expit(x):
    """1 / (1 + exp(-x))."""
    return nn.sigmoid(_inexact(x))


@custom_jvp
def _logit(x):
    return fnp.log(x / (1 - x))


_logit.defjvps(lambda t, out, x: t / (x * (1 - x)))


def logit(x):
    """log(x / (1 - x)), as jax computes it, with the derivative 1 / (x (1 - x))."""
    return _logit(_inexact(x))


def erf(x):
    return lax.erf(_inexact(x))


def erfc(x):
    """1 - erf(x), accurate in the right tail."""
    return lax.erfc(_inexact(x))


erfcx = _special_integrals.erfcx_with(erfc)


def erfinv(x):
    return lax.erf_inv(_inexact(x))


def gammaln(x):
    return lax.lgamma(_inexact(x))


def loggamma(x):
    """log Gamma(x) for real x > 0, NaN elsewhere (jax's: the principal branch of a
    real negative argument would be complex)."""
    x = _inexact(x)
    return fnp.where(x > 0, lax.lgamma(x), _c(x, np.nan))


def digamma(x):
    return lax.digamma(_inexact(x))


def polygamma(n, x):
    """The n-th derivative of digamma (n an integer array or int)."""
    n = fnp.asarray(n)
    if not dtypes.is_int(n.dtype):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype "
                         f"{n.dtype}.")
    x = _inexact(x)
    n, x = fnp.broadcast_arrays(n.astype(x.dtype), x)
    return lax.polygamma(n, x)


def gammasgn(x):
    """The sign of the gamma function: -1 on (-2k-1, -2k), NaN at the poles 0, -1, ...
    (with the sign of a zero at 0)."""
    x = _inexact(x)
    floor_x = fnp.floor(x)
    negative_odd = (x < 0) & (fnp.fmod(floor_x, 2) != 0)
    sign = fnp.where(negative_odd, _c(x, -1), _c(x, 1))
    sign = fnp.where(x == 0, fnp.where(fnp.signbit(x), _c(x, -1), _c(x, 1)), sign)
    return fnp.where(((x < 0) & (x == floor_x)) | fnp.isnan(x), _c(x, np.nan), sign)


def gamma(x):
    """The gamma function, as sign * exp(gammaln)."""
    x = _inexact(x)
    return gammasgn(x) * fnp.exp(lax.lgamma(x))


def betaln(a, b):
    """log |B(a, b)|: lgamma(a) + lgamma(b) - lgamma(a + b) while both are below 8; for
    a larger one, Stirling's series, written so that nothing large cancels (the plain
    sum lost every digit: betaln(1, 1e30) was 0, not -69.08)."""
    a, b = _inexact(a, b)
    small, large = fnp.minimum(a, b), fnp.maximum(a, b)
    plain = lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)
    stirling = (small > 0) & (large >= 8)
    s = fnp.where(stirling, small, _c(a, 1))
    big = fnp.where(stirling, large, _c(a, 8))
    total = s + big
    # lgamma(big) - lgamma(s + big), each as (x - 1/2) log x - x + log(2 pi) / 2 + corr(x)
    tail = (_log_gamma_correction(big) - _log_gamma_correction(total)
            - (big - 0.5) * fnp.log1p(s / big) - s * fnp.log(total) + s)
    # lgamma(s) by the same series where s >= 8 too (lgamma(s) and s log(s + big)
    # would cancel)
    s_big = fnp.where(s >= 8, s, _c(a, 8))
    lgamma_s = fnp.where(s >= 8, (s_big - 0.5) * fnp.log(s_big) - s_big
                         + _c(a, 0.5 * np.log(2 * np.pi)) + _log_gamma_correction(s_big),
                         lax.lgamma(s))
    return fnp.where(stirling, lgamma_s + tail, plain)


def _log_gamma_correction(x):
    """lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2) for x >= 8, by Stirling's series
    (terms B_2k / (2k (2k - 1) x^(2k - 1)); the first omitted is below 3e-13 there)."""
    inverse = 1 / x
    square = inverse * inverse
    series = 1 / 1188
    for coefficient in (-1 / 1680, 1 / 1260, -1 / 360, 1 / 12):
        series = coefficient + square * series
    return inverse * series


def beta(a, b):
    """B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)."""
    a, b = _inexact(a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * fnp.exp(betaln(a, b))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b); differentiable in x (as jax)."""
    return special_math.betainc(*_inexact(a, b, x))


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    return special_math.igamma(*_inexact(a, x))


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return special_math.igammac(*_inexact(a, x))


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension d (a Python int)."""
    a = _inexact(a)
    d = int(d)
    offsets = fnp.asarray(np.arange(d, dtype=a.dtype) / 2)
    terms = lax.lgamma(fnp.expand_dims(a, -1) - offsets)
    # log(pi) in a's dtype, as jax computes it (XLA folds it in a jitted program)
    return fnp.sum(terms, -1) + _c(a, d * (d - 1) / 4) * fnp.log(_c(a, np.pi))


def factorial(n, exact=False):
    """n! as gamma(n + 1), 0 for n < 0."""
    if exact:
        raise NotImplementedError("factorial with exact=True is not supported (as jax)")
    n = _inexact(n)
    return fnp.where(n < 0, _c(n, 0), fnp.exp(lax.lgamma(n + 1)))


def comb(N, k, *, repetition=False):
    """The number of combinations of N things taken k at a time, gamma-based (0 outside
    0 <= k <= N)."""
    N, k = _inexact(N, k)
    if repetition:
        return comb(N + k - 1, k)
    value = fnp.exp(lax.lgamma(N + 1) - lax.lgamma(k + 1) - lax.lgamma(N - k + 1))
    return fnp.where((k >= 0) & (k <= N) & (N >= 0), value, _c(N, 0))


def poch(z, m):
    """The rising factorial Gamma(z + m) / Gamma(z)."""
    z, m = _inexact(z, m)
    sign = gammasgn(z + m) * gammasgn(z)
    value = sign * fnp.exp(lax.lgamma(z + m) - lax.lgamma(z))
    return fnp.where(m == 0, _c(z, 1), value)


@custom_jvp
def _xlogy(x, y):
    # 0 where x == 0, except that a NaN y stays NaN (as scipy and jax)
    return fnp.where((x != 0) | fnp.isnan(y), x * fnp.log(y), _c(x, 0))


@_xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    # As jax: d/dx is log(y) even at x == 0, where the value is pinned to 0 (so that
    # gradients of log-densities with respect to a shape parameter at its edge are right).
    (x, y), (tx, ty) = primals, tangents
    return _xlogy(x, y), tx * fnp.log(y) + ty * x / y


def xlogy(x, y):
    """x * log(y), with 0 where x == 0."""
    return _xlogy(*_inexact(x, y))


@custom_jvp
def _xlog1py(x, y):
    return fnp.where((x != 0) | fnp.isnan(y), x * fnp.log1p(y), _c(x, 0))


@_xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return _xlog1py(x, y), tx * fnp.log1p(y) + ty * x / (1 + y)


def xlog1py(x, y):
    """x * log1p(y), with 0 where x == 0."""
    return _xlog1py(*_inexact(x, y))


@custom_jvp
def _xlogx(x):
    return _xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
    # (log x + 1) dx, as jax: xlogy's rule would give log x + x / x, NaN at 0
    (x,), (t,) = primals, tangents
    return _xlogx(x), t * (fnp.log(x) + 1)


def entr(x):
    """-x log x for x >= 0 (-0 at 0, as jax), -inf below, NaN at NaN."""
    x = _inexact(x)
    return fnp.where(x < 0, _c(x, -np.inf), -_xlogx(x))


def rel_entr(p, q):
    """p log(p / q) for p, q > 0; 0 at p == 0 <= q; inf otherwise."""
    p, q = _inexact(p, q)
    both_positive = (p > 0) & (q > 0)
    safe_p = fnp.where(both_positive, p, _c(p, 1))
    safe_q = fnp.where(both_positive, q, _c(q, 1))
    value = _xlogx(safe_p) - xlogy(safe_p, safe_q)  # jax's grouping
    return fnp.where(both_positive, value,
                     fnp.where((p == 0) & (q >= 0), _c(p, 0), _c(p, np.inf)))


def kl_div(p, q):
    """rel_entr(p, q) - p + q: p log(p / q) - p + q, q at p == 0, inf otherwise."""
    p, q = _inexact(p, q)
    return rel_entr(p, q) - p + q


def boxcox(x, lmbda):
    """The Box-Cox transform: (x^lmbda - 1) / lmbda, log(x) at lmbda == 0."""
    x, lmbda = _inexact(x, lmbda)
    return _boxcox(fnp.log(x), lmbda)


def boxcox1p(x, lmbda):
    """boxcox(1 + x, lmbda), accurate for small x."""
    x, lmbda = _inexact(x, lmbda)
    return _boxcox(fnp.log1p(x), lmbda)


def _boxcox(log_x, lmbda):
    """expm1(lmbda log x) / lmbda, and log x itself at lmbda == 0."""
    zero = lmbda == 0
    safe = fnp.where(zero, _c(lmbda, 1), lmbda)
    return fnp.where(zero, log_x, fnp.expm1(safe * log_x) / safe)


def ndtr(x):
    """The standard normal CDF: 1 + erf near 0, erfc in the tails (accurate in both)."""
    x = _inexact(x)
    w = x * _c(x, np.sqrt(0.5))
    z = fnp.abs(w)
    tails = fnp.where(w > 0, 2 - erfc(z), erfc(z))
    return _c(x, 0.5) * fnp.where(z < _c(x, np.sqrt(0.5)), 1 + lax.erf(w), tails)


def ndtri(p):
    """The inverse of the standard normal CDF: sqrt(2) erf_inv(2p - 1) in the middle; in
    the tails (where 2p - 1 rounds to -1 or 1 and erf_inv would be infinite) Newton steps
    on log_ndtr(x) = log(min(p, 1 - p)) from the Abramowitz-Stegun 26.2.23 estimate."""
    return _ndtri(_inexact(p))


_NDTRI_TAIL = 0.02  # below this tail probability the Newton steps serve


@custom_jvp
def _ndtri(p):
    middle = _c(p, np.sqrt(2)) * lax.erf_inv(2 * p - 1)
    tail_p = fnp.minimum(p, 1 - p)
    in_tail = (tail_p < _NDTRI_TAIL) & (tail_p > 0)
    safe = fnp.where(in_tail, tail_p, _c(p, _NDTRI_TAIL))
    log_p = fnp.log(safe)
    t = fnp.sqrt(-2 * log_p)
    x = -(t - (2.515517 + t * (0.802853 + t * 0.010328))
          / (1 + t * (1.432788 + t * (0.189269 + t * 0.001308))))  # |error| < 4.5e-4
    for _ in range(3 if p.dtype == np.float64 else 2):  # quadratic: 4e-4, 1e-7, 1e-14
        log_cdf = log_ndtr(x)
        log_slope = -0.5 * x * x - _c(x, 0.5 * np.log(2 * np.pi)) - log_cdf
        x = x - (log_cdf - log_p) / fnp.exp(log_slope)
    tail = fnp.where(p > 0.5, -x, x)
    return fnp.where(in_tail, tail, middle)


@_ndtri.defjvp
def _ndtri_jvp(primals, tangents):
    # dx/dp = 1 / pdf(x) = sqrt(2 pi) exp(x^2 / 2)
    (p,), (t,) = primals, tangents
    x = _ndtri(p)
    return x, t * _c(x, np.sqrt(2 * np.pi)) * fnp.exp(0.5 * x * x)


owens_t = _special_integrals.owens_t_with(ndtr)


def log_ndtr(x, series_order=3):
    """log(ndtr(x)), accurate far into both tails: -ndtr(-x) on the right, an asymptotic
    series on the far left."""
    x = _inexact(x)
    lower, upper = (-20.0, 8.0) if x.dtype == np.float64 else (-10.0, 5.0)
    right = x > upper
    # one ndtr: of -x on the right (log ndtr(x) ~ -ndtr(-x) there), of x in the middle;
    # the log only of the middle's (ndtr(-x) may underflow to 0: no nan gradients)
    cdf = ndtr(fnp.where(right, -x, fnp.maximum(x, _c(x, lower))))
    not_left_value = fnp.where(right, -cdf, fnp.log(fnp.where(right, _c(x, 1), cdf)))
    left = fnp.minimum(x, _c(x, lower))
    # log ndtr(x) = -x^2/2 - log(-x) - log(2 pi)/2 + log(1 + sum_n (-1)^n (2n-1)!! / x^2n)
    x_sq = left * left
    total, term = fnp.ones_like(left), fnp.ones_like(left)
    for n in range(1, series_order + 1):
        term = term * _c(x, -(2 * n - 1)) / x_sq
        total = total + term
    left_value = -x_sq / 2 - fnp.log(-left) - _c(x, 0.5 * np.log(2 * np.pi)) + fnp.log(total)
    return fnp.where(x > lower, not_left_value, left_value)


# ----------------------------------------------------------------------------- zeta

_EULER_MACLAURIN_TERMS = 9
_ZETA_BERNOULLI_TERMS = 12


def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (k + q)^-x: XLA's (lax.zeta), as jax, with the
    derivative of an Euler-Maclaurin summation (XLA's has none)."""
    if q is None:
        raise NotImplementedError("zeta: the Riemann zeta function (q=None) is not supported; "
                                  "pass q=1 (as jax)")
    return _zeta(*_inexact(x, q))


@custom_jvp
def _zeta(x, q):
    return lax.zeta(x, q)


@_zeta.defjvp
def _zeta_jvp(primals, tangents):
    return _zeta(*primals), ad.jvp(_zeta_series, primals, tangents)[1]


def _zeta_series(x, q):
    """sum_k (k + q)^-x by Euler-Maclaurin summation: differentiable in x and q."""
    n = _EULER_MACLAURIN_TERMS
    head = sum(fnp.power(q + k, -x) for k in range(n))
    a = q + n
    tail = fnp.power(a, 1 - x) / (x - 1) + fnp.power(a, -x) / 2
    # + sum_j B_2j / (2j)! * x (x+1) ... (x+2j-2) * a^(-x-2j+1)
    rising = x
    a_power = fnp.power(a, -x - 1)
    for j in range(1, _ZETA_BERNOULLI_TERMS + 1):
        coefficient = float(_bernoulli_numbers(2 * j)[2 * j] / math.factorial(2 * j))
        tail = tail + _c(x, coefficient) * rising * a_power
        rising = rising * (x + 2 * j - 1) * (x + 2 * j)
        a_power = a_power / (a * a)
    value = head + tail
    value = fnp.where(x == 1, _c(x, np.inf), value)
    pole = (q <= 0) & (q == fnp.floor(q))
    value = fnp.where(pole, _c(x, np.inf), value)
    domain = (x < 1) | ((q < 0) & (x != fnp.floor(x)))
    return fnp.where(domain, _c(x, np.nan), value)


def _bernoulli_numbers(n):
    """B_0 .. B_n as exact fractions (B_1 = -1/2), by the Akiyama-Tanigawa recurrence."""
    numbers, row = [], []
    for m in range(n + 1):
        row.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        numbers.append(row[0])
    if n >= 1:
        numbers[1] = -numbers[1]
    return numbers


def bernoulli(n):
    """The Bernoulli numbers B_0 .. B_n (n a Python int; B_1 = -1/2)."""
    n = int(n)
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    values = np.array([float(b) for b in _bernoulli_numbers(n)], dtypes.default_float())
    return fnp.asarray(values)


# ----------------------------------------------------------------------------- Bessel

def i0e(x):
    """The exponentially scaled modified Bessel function of order 0: exp(-|x|) I0(x)."""
    return lax.bessel_i0e(_inexact(x))


def i0(x):
    """The modified Bessel function of order 0, as numpy.i0: its derivative is i1, also at
    the kink x = 0 of exp(|x|) i0e(x) (as jax >= 0.11; jax 0.10 differentiated that
    product, giving 1 at 0)."""
    return fnp.i0(_inexact(x))


def i1e(x):
    """The exponentially scaled modified Bessel function of order 1: exp(-|x|) I1(x)."""
    return lax.bessel_i1e(_inexact(x))


def i1(x):
    """The modified Bessel function of order 1."""
    x = _inexact(x)
    return fnp.exp(fnp.abs(x)) * i1e(x)
