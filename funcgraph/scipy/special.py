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


def erfcx(x):
    """The scaled complementary error function exp(x^2) erfc(x); for complex x,
    wofz(i x)."""
    x = _inexact(x)
    if dtypes.is_complex(x.dtype):
        return wofz(lax.complex(-lax.imag(x), lax.real(x)))
    return _special_integrals.real_erfcx(x)


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
    """log |B(a, b)| as jax computes it (cdflib's betaln): with a <= b, lgamma(a) +
    lgamma(b) - lgamma(a + b) while b < 8, else lgamma(a) + log(Gamma(b) / Gamma(a + b))
    by cdflib's algdiv, which keeps the digits the plain difference loses."""
    a, b = _inexact(a, b)
    a, b = fnp.minimum(a, b), fnp.maximum(a, b)
    plain = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
    large = lax.lgamma(a) + _log_gamma_ratio(a, b)
    return fnp.where(b < 8, plain, large)


# cdflib's coefficients of the Stirling correction series in 1/b^2.
_ALGDIV = (0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03,
           -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02)


def _log_gamma_ratio(a, b):
    """log(Gamma(b) / Gamma(a + b)) for a <= b and b >= 8 (cdflib's algdiv): Stirling's
    approximation of both Gammas, their corrections' difference summed as one series in
    t = 1/b^2 whose terms carry the partial sums s_n = (1 - x^n) / (1 - x), x = a / (a+b)."""
    h = a / b
    x = h / (1 + h)
    x2 = x * x
    partial_sums = []                       # s_3, s_5, ..., s_11
    previous = None
    for _ in range(5):
        inner = x2 if previous is None else x2 * previous
        previous = 1.0 + (x + inner)
        partial_sums.append(previous)
    s3, s5, s7, s9, s11 = partial_sums
    c0, c1, c2, c3, c4, c5 = _ALGDIV
    t = (1.0 / b) ** 2
    w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 * s3) * t + c0
    w = w * (x / b)
    u = (b + (a - 0.5)) * fnp.log1p(a / b)
    v = a * (fnp.log(b) - 1.0)
    return fnp.where(u <= v, (w - v) - u, (w - u) - v)


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
    """The inverse of the standard normal CDF, by Cephes' rational approximations (as
    jax): in w = p - 1/2 for the middle, in 1/z with z = sqrt(-2 log p) for the tails."""
    p = _inexact(p)
    if p.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={p.dtype} is not supported, see docstring for supported "
                        f"types.")
    return _ndtri(p)


# Cephes' coefficients (highest power first): the middle, |p - 1/2| <= 1/2 - exp(-2) ...
_NDTRI_MIDDLE = (
    (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
     1.39312609387279679503E1, -1.23916583867381258016E0),
    (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
     -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
     1.59056225126211695515E1, -1.18331621121330003142E0))
# ... the tails for z = sqrt(-2 log p) < 8 ...
_NDTRI_TAIL = (
    (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
     4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
     -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4),
    (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
     1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
     -3.80806407691578277194E-2, -9.33259480895457427372E-4))
# ... and the far tails, z >= 8.
_NDTRI_FAR_TAIL = (
    (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
     1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
     3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9),
    (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
     2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
     2.89247864745380683936E-6, 6.79019408009981274425E-9))


def _ratio(coefficients, x):
    numerator, denominator = (np.array(c, x.dtype) for c in coefficients)
    return fnp.polyval(numerator, x) / fnp.polyval(denominator, x)


def _ndtri(p):
    # The smaller tail q (the sign comes back at the end); q = 0 is replaced by a harmless
    # value, its result overwritten by -inf or inf.
    q = fnp.where(p > _c(p, -np.expm1(-2.0)), 1 - p, p)
    q = fnp.where(q == 0, fnp.full(p.shape, _c(p, 0.5)), q)
    w = q - _c(p, 0.5)
    ww = lax.square(w)
    middle = w + w * ww * _ratio(_NDTRI_MIDDLE, ww)
    middle = middle * -_c(p, np.sqrt(2 * np.pi))
    z = fnp.sqrt(_c(p, -2.0) * fnp.log(q))
    leading = z - fnp.log(z) / z
    far_tail = leading - _ratio(_NDTRI_FAR_TAIL, 1 / z) / z
    tail = leading - _ratio(_NDTRI_TAIL, 1 / z) / z
    x = fnp.where(q > _c(p, np.exp(-2.0)), middle, fnp.where(z >= _c(p, 8.0), far_tail, tail))
    x = fnp.where(p > _c(p, 1 - np.exp(-2.0)), x, -x)
    infinity = fnp.full(p.shape, _c(p, np.inf))
    return fnp.where(p == 0, -infinity, fnp.where(p == 1, infinity, x))


owens_t = _special_integrals.owens_t


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
