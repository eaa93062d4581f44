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

def _erfcx_asymptotic(x, terms):
    """erfcx(x) ~ P(1 / x^2) / (x sqrt(pi)) with P(t) = sum_k (-1)^k (2k - 1)!! / 2^k t^k,
    its first `terms` terms."""
    coefficients, c = [], 1.0
    for k in range(terms):
        coefficients.append(c)
        c = -c * (2 * k + 1) / 2
    t = _c(x, 1.0) / lax.square(x)
    series = fnp.polyval(np.array(coefficients[::-1], dtype=x.dtype), t)
    return series / (x * _c(x, np.sqrt(np.pi)))


def _erfcx_value(x, terms):
    """exp(x^2) erfc(x) directly, and by the asymptotic series past sqrt(log(max)), where
    exp(x^2) would overflow (as jax: the first omitted term is far below the precision)."""
    large = x > _c(x, np.sqrt(np.log(np.finfo(x.dtype).max)))
    safe = lax.select(large, fnp.full_like(x, 1.0), x)
    direct = lax.exp(lax.square(safe)) * lax.erfc(safe)
    return lax.select(large, _erfcx_asymptotic(x, terms), direct)


@custom_jvp
def real_erfcx(x):
    """erfcx of a real x; float16 and bfloat16 computed in float32."""
    if x.dtype == np.float64:
        return _erfcx_value(x, 9)
    if x.dtype == np.float32:
        return _erfcx_value(x, 5)
    return _erfcx_value(x.astype(np.float32), 5).astype(x.dtype)


@real_erfcx.defjvp
def _real_erfcx_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    out = real_erfcx(x)
    return out, t * (2 * x * out - _c(x, 2 / np.sqrt(np.pi)))


# Dawson's integral by the rational approximations of Cody, Paciorek and Thacher (1970), as
# jax: D(x) = x P(x^2) / Q(x^2) below 3.25, and (1 + t P(t) / Q(t)) / (2x), t = 1 / x^2,
# on [3.25, 6.25) and beyond (coefficients highest power first).
_DAWSON_NEAR = (
    (1.13681498971755972054e-11, 8.49262267667473811108e-10, 1.94434204175553054283e-8,
     9.53151741254484363489e-7, 3.07828309874913200438e-6, 3.52513368520288738649e-4,
     -8.50149846724410912031e-4, 4.22618223005546594270e-2, -9.17480371773452345351e-2,
     9.99999999999999994612e-1),
    (2.40372073066762605484e-11, 1.48864681368493396752e-9, 5.21265281010541664570e-8,
     1.27258478273186970203e-6, 2.32490249820789513991e-5, 3.25524741826057911661e-4,
     3.48805814657162590916e-3, 2.79448531198828973716e-2, 1.58874241960120565368e-1,
     5.74918629489320327824e-1, 1.00000000000000000539e0))
_DAWSON_MIDDLE = (
    (5.08955156417900903354e-1, -2.44754418142697847934e-1, 9.41512335303534411857e-2,
     -2.18711255142039025206e-2, 3.66207612329569181322e-3, -4.23209114460388756528e-4,
     3.59641304793896631888e-5, -2.14640351719968974225e-6, 9.10010780076391431042e-8,
     -2.40274520828250956942e-9, 3.59233385440928410398e-11),
    (1.00000000000000000000e0, -6.31839869873368190192e-1, 2.36706788228248691528e-1,
     -5.31806367003223277662e-2, 8.48041718586295374409e-3, -9.47996768486665330168e-4,
     7.81025592944552338085e-5, -4.55875153252442634831e-6, 1.89100358111421846170e-7,
     -4.91324691331920606875e-9, 7.18466403235734541950e-11))
_DAWSON_FAR = (
    (-5.90592860534773254987e-1, 6.29235242724368800674e-1, -1.72858975380388136411e-1,
     1.64837047825189632310e-2, -4.86827613020462700845e-4),
    (1.00000000000000000000e0, -2.69820057197544900361e0, 1.73270799045947845857e0,
     -3.93708582281939493482e-1, 3.44278924041233391079e-2, -9.73655226040941223894e-4))


def _rational(coefficients, x):
    numerator, denominator = (np.array(c, x.dtype) for c in coefficients)
    return fnp.polyval(numerator, x), fnp.polyval(denominator, x)


def _dawson_value(x):
    """D(x) on |x| with the sign put back; each range evaluated at a harmless point where
    it is not used (so no inf / inf turns into NaN)."""
    ax = lax.abs(x)
    t = _c(x, 1.0) / lax.square(ax)
    one = fnp.full_like(ax, 1.0)
    near = ax < _c(x, 3.25)
    middle = (ax >= _c(x, 3.25)) & (ax < _c(x, 6.25))
    far = ax >= _c(x, 6.25)
    a1 = lax.select(near, ax, one)
    p, q = _rational(_DAWSON_NEAR, lax.square(a1))
    value_near = a1 * p / q

    def tail(in_range, coefficients):
        t_r, a_r = lax.select(in_range, t, one), lax.select(in_range, ax, one)
        p, q = _rational(coefficients, t_r)
        return (_c(x, 0.5) / a_r) * (_c(x, 1.0) + t_r * p / q)
    value = lax.select(near, value_near,
                       lax.select(ax < _c(x, 6.25), tail(middle, _DAWSON_MIDDLE),
                                  tail(far, _DAWSON_FAR)))
    return fnp.sign(x) * value


@custom_jvp
def _dawsn(x):
    if x.dtype in (np.float32, np.float64):
        return _dawson_value(x)
    return _dawson_value(x.astype(np.float32)).astype(x.dtype)


@_dawsn.defjvp
def _dawsn_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    out = _dawsn(x)
    return out, t * (_c(x, 1.0) - _c(x, 2.0) * x * out)


def dawsn(x):
    """Dawson's integral exp(-x^2) int_0^x exp(t^2) dt."""
    (x,) = _float_args(x)
    if dtypes.is_complex(x.dtype):
        raise ValueError("dawsn does not support complex-valued inputs.")
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
