"""Exponential integrals, the dilogarithm, the scaled complementary error function,
Dawson's integral and Owen's T function for funcgraph.scipy.special.

Each is a fixed-length series, continued fraction or quadrature (so it traces, batches and
compiles as one program) with a custom derivative where the closed form is simple."""
import numpy as np

from funcgraph import dtypes, lax
from funcgraph import numpy as fnp
from funcgraph.transforms.custom_derivatives import custom_jvp

_EULER_GAMMA = 0.5772156649015329
_SERIES_TERMS = 40
_FRACTION_TERMS = 120


def _c(x, value):
    return np.array(value, x.dtype)


def _float_args(*args):
    arrays = [fnp.asarray(a) for a in args]
    dtype = fnp.result_type(*arrays)
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.default_float()
    return fnp.broadcast_arrays(*(a.astype(dtype) for a in arrays))


# ----------------------------------------------------------------------------- E_n(x)

def _expn_fraction(n, x):
    """E_n(x) for x > 1: the continued fraction (modified Lentz, Numerical Recipes)."""
    big = _c(x, float(dtypes.finfo(x.dtype).max) / 4)
    b = x + n
    d = 1 / b

    def step(i, carry):
        b, c, d, h = carry
        i = i.astype(x.dtype)
        an = -i * (n - 1 + i)
        b = b + 2
        d = 1 / (an * d + b)
        c = b + an / c
        return b, c, d, h * c * d

    _, _, _, h = lax.fori_loop(1, _FRACTION_TERMS, step, (b, fnp.full_like(x, big), d, d))
    return h * fnp.exp(-x)


def _expn_series(n, x):
    """E_n(x) for 0 < x <= 1: the power series, whose (n-1)-th term carries the digamma
    function (Numerical Recipes)."""
    log_x = fnp.log(x)
    first = fnp.where(n == 1, -log_x - _EULER_GAMMA, 1 / fnp.where(n == 1, 1, n - 1))
    digamma_n = lax.digamma(fnp.maximum(n, 1))

    def step(i, carry):
        fact, total = carry
        i = i.astype(x.dtype)
        fact = -fact * x / i
        special = i == n - 1
        term = fnp.where(special, fact * (-log_x + digamma_n),
                         -fact / fnp.where(special, 1, i - n + 1))
        return fact, total + term

    _, total = lax.fori_loop(1, _SERIES_TERMS, step, (fnp.ones_like(x), first))
    return total


def _expn_value(n, x):
    safe_x = fnp.where(x > 0, x, 1)
    fraction = _expn_fraction(n, fnp.maximum(safe_x, 1))
    series = _expn_series(n, fnp.minimum(safe_x, 1))
    value = fnp.where(safe_x > 1, fraction, series)
    value = fnp.where(n == 0, fnp.exp(-safe_x) / safe_x, value)
    at_zero = fnp.where(n > 1, 1 / fnp.where(n > 1, n - 1, 1), _c(x, np.inf))
    value = fnp.where(x == 0, at_zero, value)
    invalid = (n < 0) | (x < 0) | (n != fnp.floor(n)) | fnp.isnan(x) | fnp.isnan(n)
    return fnp.where(invalid, _c(x, np.nan), value)


@custom_jvp
def _expn(n, x):
    return _expn_value(n, x)


@_expn.defjvp
def _expn_jvp(primals, tangents):
    n, x = primals
    _, tx = tangents
    # d/dx E_n = -E_{n-1} (differentiable in x only, as jax).
    return _expn(n, x), -tx * _expn(n - 1, x)


def _in_float32(fn, *args):
    """fn of 16-bit float arguments computed in float32 and rounded back (their series
    and fractions lose every digit in 16 bits); other dtypes as they are."""
    dtype = args[-1].dtype
    if dtype not in (dtypes.float16, dtypes.bfloat16):
        return fn(*args)
    return fn(*(a.astype(np.float32) for a in args)).astype(dtype)


def expn(n, x):
    """The generalized exponential integral E_n(x) = int_1^inf e^(-x t) / t^n dt."""
    n, x = _float_args(n, x)
    return _in_float32(_expn, n, x)


def exp1(x):
    """The exponential integral E_1(x) (NaN for x < 0, inf at 0)."""
    (x,) = _float_args(x)
    return _in_float32(lambda v: _expn(fnp.ones_like(v), v), x)


_EI_SERIES_TERMS = 140
_EI_ASYMPTOTIC_START = 60.0
_EI_ASYMPTOTIC_TERMS = 40


def _expi_positive(x):
    """Ei(x) for x > 0: gamma + log x + sum x^k / (k k!) up to 60, the asymptotic series
    e^x / x sum k! / x^k above (every term positive: no cancellation)."""
    small = fnp.minimum(x, _c(x, _EI_ASYMPTOTIC_START))

    def step(k, carry):
        power, total = carry
        k = k.astype(x.dtype)
        power = power * small / k
        return power, total + power / k

    _, total = lax.fori_loop(1, _EI_SERIES_TERMS, step, (fnp.ones_like(x), fnp.zeros_like(x)))
    series = _c(x, _EULER_GAMMA) + fnp.log(small) + total
    large = fnp.maximum(x, _c(x, _EI_ASYMPTOTIC_START))
    term, sum_ = fnp.ones_like(x), fnp.ones_like(x)
    for k in range(1, _EI_ASYMPTOTIC_TERMS):
        term = term * k / large
        sum_ = sum_ + term
    asymptotic = fnp.exp(large) / large * sum_
    return fnp.where(x < _EI_ASYMPTOTIC_START, series, asymptotic)


@custom_jvp
def _expi(x):
    positive = _expi_positive(fnp.where(x > 0, x, 1))
    negative = -_expn(fnp.ones_like(x), fnp.where(x < 0, -x, 1))
    value = fnp.where(x > 0, positive, negative)
    # jax gives NaN at 0 (the limit is -inf).
    return fnp.where((x == 0) | fnp.isnan(x), _c(x, np.nan), value)


@_expi.defjvp
def _expi_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _expi(x), t * fnp.exp(x) / x


def expi(x):
    """The exponential integral Ei(x) = -int_{-x}^inf e^-t / t dt (principal value)."""
    (x,) = _float_args(x)
    return _in_float32(_expi, x)


# ----------------------------------------------------------------------------- spence


def _bernoulli_even_over_factorial(count):
    """B_{2j} / (2j + 1)! for j = 1 .. count (the coefficients of the dilogarithm's series
    in u = -log(1 - z))."""
    bernoulli_even = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6,
                    -3617 / 510, 43867 / 798, -174611 / 330, 854513 / 138,
                    -236364091 / 2730, 8553103 / 6, -23749461029 / 870]
    return [bernoulli_even[j - 1] / float(np.prod(np.arange(1, 2 * j + 2, dtype=np.float64)))
            for j in range(1, count + 1)]


_DILOG_COEFFICIENTS = _bernoulli_even_over_factorial(14)


def _dilog_near_zero(z):
    """Li2(z) for -1 <= z <= 1/2 from u = -log(1 - z) (|u| <= log 2):
    Li2 = u - u^2/4 + sum_j B_2j u^(2j+1) / (2j+1)!."""
    u = -fnp.log1p(-z)
    total = u - u * u / 4
    power = u
    for coefficient in _DILOG_COEFFICIENTS:
        power = power * u * u
        total = total + _c(z, coefficient) * power
    return total


def _dilog(z):
    """The dilogarithm Li2(z) for real z <= 1, by reflections onto [-1, 1/2]."""
    pi2_6 = _c(z, np.pi ** 2 / 6)
    middle = _dilog_near_zero(fnp.clip(z, -1, 0.5))
    upper_z = fnp.clip(z, 0.5, 1)
    # Li2(z) = pi^2/6 - log z log(1 - z) - Li2(1 - z) on (1/2, 1].
    log_product = fnp.where(upper_z < 1, fnp.log(upper_z) * fnp.log1p(-upper_z), 0)
    upper = pi2_6 - log_product - _dilog_near_zero(1 - upper_z)
    lower_z = fnp.minimum(z, -1)
    # Li2(z) = -pi^2/6 - log(-z)^2 / 2 - Li2(1/z) for z < -1.
    lower = -pi2_6 - fnp.log(-lower_z) ** 2 / 2 - _dilog_near_zero(1 / lower_z)
    return fnp.where(z > 0.5, upper, fnp.where(z < -1, lower, middle))


@custom_jvp
def _spence(x):
    value = _dilog(1 - fnp.maximum(x, 0))
    return fnp.where(x < 0, _c(x, np.nan), value)


@_spence.defjvp
def _spence_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    safe = fnp.where(x == 1, 2, x)
    return _spence(x), t * fnp.where(x == 1, -1, fnp.log(safe) / (1 - safe))


def spence(x):
    """Spence's function int_1^x log t / (1 - t) dt = Li2(1 - x), for x >= 0 (float
    inputs only, as jax)."""
    x = fnp.asarray(x)
    if not fnp.issubdtype(x.dtype, np.floating):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported "
                        f"types. Valid dtypes are ['float32', 'float64'].")
    return _spence(x)


# ----------------------------------------------------------------------------- erfcx, dawsn

_ERFCX_ASYMPTOTIC_TERMS = 12


def _erfcx_value(x, erfc):
    """exp(x^2) erfc(x): directly up to 5 (float32) or 12 (float64), where erfc has not
    underflowed, the asymptotic series 1 / (x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k
    above; 2 exp(x^2) - erfcx(-x) for x < 0."""
    threshold = 12.0 if x.dtype == np.float64 else 5.0
    ax = fnp.abs(x)
    direct_x = fnp.minimum(ax, _c(x, threshold))
    direct = fnp.exp(direct_x * direct_x) * erfc(direct_x)
    large = fnp.maximum(ax, _c(x, threshold))
    term, total = fnp.ones_like(x), fnp.ones_like(x)
    for k in range(1, _ERFCX_ASYMPTOTIC_TERMS):
        term = -term * (2 * k - 1) / (2 * large * large)
        total = total + term
    asymptotic = total / (large * _c(x, np.sqrt(np.pi)))
    positive = fnp.where(ax < threshold, direct, asymptotic)
    return fnp.where(x >= 0, positive, 2 * fnp.exp(x * x) - positive)


def erfcx_with(erfc):
    """erfcx built on the given erfc (funcgraph.scipy.special's, accurate in the tail)."""
    @custom_jvp
    def _erfcx(x):
        return _erfcx_value(x, erfc)

    @_erfcx.defjvp
    def _erfcx_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        out = _erfcx(x)
        return out, t * (2 * x * out - _c(x, 2 / np.sqrt(np.pi)))

    def erfcx(x):
        """The scaled complementary error function exp(x^2) erfc(x)."""
        (x,) = _float_args(x)
        return _erfcx(x)
    return erfcx


_DAWSON_STEP = 0.2
_DAWSON_TERMS = 24


def _dawson_value(x):
    """Dawson's integral by Rybicki's sampling-theorem sum (Numerical Recipes' dawson, with
    a finer step for double precision), the Taylor series below 0.2."""
    h = _DAWSON_STEP
    ax = fnp.abs(x)
    safe = fnp.maximum(ax, _c(x, 0.2))
    n0 = 2 * fnp.round(0.5 * safe / h)
    xp = safe - n0 * h
    e1 = fnp.exp(2 * xp * h)
    e2 = e1 * e1
    d1, d2 = n0 + 1, n0 - 1
    total = fnp.zeros_like(x)
    for i in range(1, _DAWSON_TERMS + 1):
        coefficient = _c(x, np.exp(-((2 * i - 1) * h) ** 2))
        total = total + coefficient * (e1 / d1 + 1 / (d2 * e1))
        d1, d2, e1 = d1 + 2, d2 - 2, e1 * e2
    rybicki = _c(x, 1 / np.sqrt(np.pi)) * fnp.exp(-xp * xp) * total
    x2 = x * x
    # D(x) = sum_k (-2)^k x^(2k+1) / (2k+1)!!
    term, series = x, x
    for k in range(1, 12):
        term = -term * 2 * x2 / (2 * k + 1)
        series = series + term
    return fnp.where(ax < 0.2, series, fnp.sign(x) * rybicki)


@custom_jvp
def _dawsn(x):
    return _dawson_value(x)


@_dawsn.defjvp
def _dawsn_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    out = _dawsn(x)
    return out, t * (1 - 2 * x * out)


def dawsn(x):
    """Dawson's integral exp(-x^2) int_0^x exp(t^2) dt."""
    (x,) = _float_args(x)
    return _dawsn(x)


# ----------------------------------------------------------------------------- owens_t

_OWENS_NODES, _OWENS_WEIGHTS = np.polynomial.legendre.leggauss(48)


def _owens_t_unit(h, a):
    """T(h, a) for |a| <= 1 by Gauss-Legendre quadrature of
    (1 / 2 pi) int_0^a exp(-h^2 (1 + t^2) / 2) / (1 + t^2) dt."""
    nodes = _OWENS_NODES.astype(h.dtype)
    weights = _OWENS_WEIGHTS.astype(h.dtype)
    t = (a[..., None] / 2) * (nodes + 1)
    one_plus = 1 + t * t
    integrand = fnp.exp(-(h[..., None] ** 2) * one_plus / 2) / one_plus
    return a / 2 * fnp.sum(weights * integrand, axis=-1) / _c(h, 2 * np.pi)


def owens_t_with(ndtr):
    """owens_t built on the given standard normal CDF."""
    def owens_t(h, a):
        """Owen's T function T(h, a) = (1 / 2 pi) int_0^a exp(-h^2 (1 + t^2) / 2) /
        (1 + t^2) dt."""
        h, a = _float_args(h, a)
        h_abs, a_abs = fnp.abs(h), fnp.abs(a)
        # The quadrature is odd in a already (so differentiable through a == 0).
        inner = _owens_t_unit(h_abs, fnp.where(a_abs <= 1, a, 0))
        # For a > 1: T(h, a) = (Phi(h) Q(ah) + Phi(ah) Q(h)) / 2 - T(ah, 1/a), h >= 0.
        big_a = fnp.where(a_abs > 1, a_abs, 1)
        ah = h_abs * big_a
        phi_h, phi_ah = ndtr(h_abs), ndtr(ah)
        outer = (phi_h * ndtr(-ah) + phi_ah * ndtr(-h_abs)) / 2 - _owens_t_unit(ah, 1 / big_a)
        return fnp.where(a_abs <= 1, inner, fnp.sign(a) * outer)
    return owens_t


# ----------------------------------------------------------------------------- fresnel, sici
# Both follow Numerical Recipes: a power series for small arguments and a complex continued
# fraction (modified Lentz, in real and imaginary parts) beyond.

_OSCILLATORY_SERIES_TERMS = 24
_OSCILLATORY_FRACTION_TERMS = 100


def _complex_lentz(b0_re, b0_im, a_of, b_step):
    """h = 1 / (b0 + a1 / (b1 + a2 / (b2 + ...))) with real partial numerators a_k and
    b_k = b_{k-1} + b_step (real step), as (re, im) pairs."""
    big = np.array(1e30, b0_re.dtype)

    def reciprocal(re, im):
        norm = re * re + im * im
        return re / norm, -im / norm

    def multiply(a, b):
        return a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]

    d = reciprocal(b0_re, b0_im)

    def step(k, carry):
        b, c, d, h = carry
        a = a_of(k.astype(b0_re.dtype))
        b = (b[0] + b_step, b[1])
        d = reciprocal(a * d[0] + b[0], a * d[1] + b[1])
        c_inv = reciprocal(*c)
        c = (b[0] + a * c_inv[0], b[1] + a * c_inv[1])
        return b, c, d, multiply(h, multiply(c, d))

    start = ((b0_re, b0_im), (fnp.full_like(b0_re, big), fnp.zeros_like(b0_re)), d, d)
    return lax.fori_loop(1, _OSCILLATORY_FRACTION_TERMS, step, start)[3]


def _fresnel_values(x):
    ax = fnp.abs(x)
    small = fnp.minimum(ax, 1.5)
    fact = _c(x, np.pi / 2) * small * small
    c_sum, s_sum, power = fnp.zeros_like(x), fnp.zeros_like(x), small
    for k in range(2 * _OSCILLATORY_SERIES_TERMS):
        # power = small * fact^k / k! alternates between the cosine and sine series.
        sign = 1 if (k // 2) % 2 == 0 else -1
        if k % 2 == 0:
            c_sum = c_sum + sign * power / (2 * k + 1)
        else:
            s_sum = s_sum + sign * power / (2 * k + 1)
        power = power * fact / (k + 1)
    large = fnp.maximum(ax, 1.5)
    pix2 = _c(x, np.pi) * large * large
    h_re, h_im = _complex_lentz(fnp.ones_like(x), -pix2,
                                lambda k: -(2 * k - 1) * (2 * k), 4.0)
    # h *= (ax - i ax); cs = (1 + i)/2 * (1 - e^(i pix2 / 2) h)
    h_re, h_im = large * (h_re + h_im), large * (h_im - h_re)
    cos_, sin_ = fnp.cos(pix2 / 2), fnp.sin(pix2 / 2)
    e_re, e_im = 1 - (cos_ * h_re - sin_ * h_im), -(cos_ * h_im + sin_ * h_re)
    c_large, s_large = (e_re - e_im) / 2, (e_re + e_im) / 2
    c_value = fnp.where(ax <= 1.5, c_sum, c_large)
    s_value = fnp.where(ax <= 1.5, s_sum, s_large)
    sign = fnp.where(x < 0, -1, 1).astype(x.dtype)
    return sign * s_value, sign * c_value


def fresnel(x):
    """The Fresnel integrals (S(x), C(x)) = int_0^x (sin, cos)(pi t^2 / 2) dt."""
    (x,) = _float_args(x)
    return _fresnel_values(x)


def _sici_values(x):
    t = fnp.abs(x)
    small = fnp.minimum(t, 2.0)
    si_sum, ci_sum, power = fnp.zeros_like(x), fnp.zeros_like(x), fnp.ones_like(x)
    for k in range(1, 2 * _OSCILLATORY_SERIES_TERMS):
        power = power * small / k  # t^k / k!
        sign = 1 if ((k - 1) // 2) % 2 == 0 else -1
        if k % 2 == 1:
            si_sum = si_sum + sign * power / k
        else:
            ci_sum = ci_sum - sign * power / k
    safe_small = fnp.where(small > 0, small, 1)
    ci_series = ci_sum + fnp.log(safe_small) + _c(x, _EULER_GAMMA)
    large = fnp.maximum(t, 2.0)
    h_re, h_im = _complex_lentz(fnp.ones_like(x), large, lambda k: -k * k, 2.0)
    cos_, sin_ = fnp.cos(large), fnp.sin(large)
    # h *= (cos t - i sin t); ci = -Re h; si = pi/2 + Im h
    r_re, r_im = cos_ * h_re + sin_ * h_im, cos_ * h_im - sin_ * h_re
    si = fnp.where(t <= 2, si_sum, _c(x, np.pi / 2) + r_im)
    ci = fnp.where(t <= 2, ci_series, -r_re)
    ci = fnp.where(t == 0, _c(x, -np.inf), ci)
    return fnp.where(x < 0, -si, si), ci


def sici(x):
    """The sine and cosine integrals (Si(x), Ci(x)); Ci(-x) is taken as Ci(x) (as jax)."""
    (x,) = _float_args(x)
    return _sici_values(x)
