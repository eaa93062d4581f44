"""Exponential integrals, Spence's function, the scaled complementary error function,
Dawson's integral, Owen's T function and the Fresnel, sine and cosine integrals for
funcgraph.scipy.special.

Each is a fixed-length series, continued fraction, rational approximation or quadrature
(so it traces, batches and compiles as one program) with a custom derivative where the
closed form is simple.  Where jax has an algorithm of its own (Cephes' rational forms for
spence, dawsn, fresnel and sici; erfcx's asymptotic series) it is jax's, so the numbers
are jax's."""
import numpy as np

from funcgraph import dtypes, lax
from funcgraph import numpy as fnp
from funcgraph.transforms.custom_derivatives import custom_jvp
from funcgraph.transforms.jit import jit as _jit

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


def _rational(coefficients, x):
    """(P(x), Q(x)) for (numerator, denominator) coefficients, highest power first."""
    numerator, denominator = (np.array(c, x.dtype) for c in coefficients)
    return fnp.polyval(numerator, x), fnp.polyval(denominator, x)


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


# Cephes' rational approximation of Spence's function near 1 (w = x - 1), as jax.
_SPENCE = (
    (4.65128586073990045278E-5, 7.31589045238094711071E-3, 1.33847639578309018650E-1,
     8.79691311754530315341E-1, 2.71149851196553469920E0, 4.25697156008121755724E0,
     3.29771340985225106936E0, 1.00000000000000000126E0),
    (6.90990488912553276999E-4, 2.54043763932544379113E-2, 2.82974860602568089943E-1,
     1.41172597751831069617E0, 3.63800533345137075418E0, 5.03278880143316990390E0,
     3.54771340985225096217E0, 9.99999999999999998740E-1))


def _spence_positive(x):
    """Spence's function for x > 0 (x != 1), by the rational form in w on [1/2, 3/2] and
    the reflections x -> 1/x (beyond 2, or 3/2 after it) and x -> 1 - x (below 1/2)."""
    inverted = x > 2.0
    x = fnp.piecewise(x, [inverted], [lambda v: 1.0 / v, lambda v: v])
    high, low = x > 1.5, x < 0.5
    inverted = inverted | high
    w = fnp.piecewise(x, [high, low], [lambda v: 1.0 / v - 1.0, lambda v: -v,
                                       lambda v: v - 1.0])
    p, q = _rational(_SPENCE, w)
    y = -w * p / q
    y = fnp.where(low, np.pi ** 2 / 6.0 - fnp.log(x) * fnp.log(1.0 - x) - y, y)
    return fnp.where(inverted, -0.5 * fnp.log(x) ** 2 - y, y)


@custom_jvp
def _spence(x):
    return fnp.piecewise(x, [x < 0.0, x == 1.0, x == 0.0],
                         [np.nan, 0, np.pi ** 2 / 6, _spence_positive])


@_spence.defjvp
def _spence_jvp(primals, tangents):
    """spence'(x) = log x / (1 - x) (-1 at 1): analytic, where differentiating jax's
    piecewise form gives NaN above 1."""
    (x,), (t,) = primals, tangents
    safe = fnp.where(x == 1, 2, x)
    return _spence(x), t * fnp.where(x == 1, -1, fnp.log(safe) / (1 - safe))


def spence(x):
    """Spence's function int_1^x log t / (1 - t) dt = Li2(1 - x), for x >= 0 (float
    inputs only, as jax)."""
    x = fnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported "
                        f"types.")
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
# Patefield and Tandy's method T5 (2000), as jax: a 13-point Gauss quadrature of
# T(h, a) = (1 / 2 pi) int_0^a exp(-h^2 (1 + u^2) / 2) / (1 + u^2) du after u^2 = a^2 t,
# whose weights absorb 1 / (2 pi) and the Jacobian.
_OWENS_T5_POINTS = (
    0.0035082039676451715, 0.031279042338030754, 0.085266826283219451, 0.16245071730812277,
    0.25851196049125435, 0.36807553840697534, 0.48501092905604697, 0.60277514152618577,
    0.71477884217753227, 0.81475510988760099, 0.89711029755948966, 0.95723808085944262,
    0.99178832974629704)
_OWENS_T5_WEIGHTS = (
    0.018831438115323503, 0.018567086243977649, 0.018042093461223386, 0.017263829606398753,
    0.016243219975989857, 0.014994592034116705, 0.013535474469662088, 0.011886351605820165,
    0.010070377242777432, 0.0081130545742299587, 0.0060419009528470239,
    0.0038862217010742058, 0.0016793031084546090)


def _owens_t_quadrature(h, a):
    points = fnp.expand_dims(np.array(_OWENS_T5_POINTS), tuple(range(a.ndim)))
    r = fnp.square(a)[..., None] * points
    integrand = fnp.exp(-0.5 * fnp.square(h)[..., None] * (1.0 + r)) / (1.0 + r)
    return a * (integrand @ np.array(_OWENS_T5_WEIGHTS))


@custom_jvp
def _owens_t(h, a):
    """T(h, a) for |h| and |a| <= 1 by the quadrature, |a| > 1 by the reflection
    T(h, a) = (Phi(h) + Phi(ah)) / 2 - Phi(h) Phi(ah) - T(ah, 1/a) (in erf / erfc), with
    the exact values at h = 0 and a = 1; NaN in, NaN out."""
    h = fnp.abs(h)
    abs_a = fnp.abs(a)
    root_2 = _c(h, np.sqrt(2))
    h_normed = h / root_2
    small_a = abs_a <= 1.0
    a_in = fnp.where(small_a, abs_a, fnp.reciprocal(abs_a))
    h_in = fnp.where(small_a, h, abs_a * h)
    value = _owens_t_quadrature(h_in, a_in)
    value = fnp.where(h_in == 0.0, fnp.arctan(a_in) / (2 * np.pi), value)
    value = fnp.where(a_in == 1.0, 0.125 * lax.erfc(-h_in / root_2) * lax.erfc(h_in / root_2),
                      value)
    q_h, q_ah = lax.erfc(h_normed), lax.erfc(abs_a * h_normed)
    reflected = fnp.where(abs_a * h <= 0.67,
                          0.25 - 0.25 * lax.erf(h_normed) * lax.erf(abs_a * h_normed) - value,
                          0.25 * (q_h + q_ah - q_h * q_ah) - value)
    value = lax.sign(a) * fnp.where(abs_a > 1.0, reflected, value)
    return fnp.where(fnp.isnan(a) | fnp.isnan(h), fnp.full_like(value, np.nan), value)


@_owens_t.defjvp
def _owens_t_jvp(primals, tangents):
    """dT/dh = -exp(-h^2/2) erf(a h / sqrt 2) / (2 sqrt(2 pi)),
    dT/da = exp(-(1 + a^2) h^2 / 2) / (2 pi (1 + a^2))."""
    (h, a), (dh, da) = primals, tangents
    out = _owens_t(h, a)
    root_2 = _c(h, np.sqrt(2))
    d_h = (-lax.exp(-0.5 * lax.square(h)) * lax.erf(a * h / root_2)
           / (2.0 * _c(h, np.sqrt(2.0 * np.pi))))
    d_a = (lax.exp(-0.5 * (lax.square(a) + 1.0) * lax.square(h))
           / (2.0 * np.pi * (lax.square(a) + 1.0)))
    return out, (d_h * dh + d_a * da).astype(out.dtype)


def owens_t(h, a):
    """Owen's T function T(h, a) = (1 / 2 pi) int_0^a exp(-h^2 (1 + t^2) / 2) /
    (1 + t^2) dt."""
    h, a = _float_args(h, a)
    return _owens_t(h, a)


# ----------------------------------------------------------------------------- fresnel, sici
# Cephes' Fresnel integrals, as jax: for x^2 < 2.5625 the power series as a rational
# function (single precision: a polynomial) in x^4; beyond, the auxiliary functions f and
# g in u = 1 / (pi x^2)^2; past 36974 the limits (double precision: with their 1/x terms).
_FRESNEL_SINGLE = {
    "sn": (1.647629463788700e-9, -1.522754752581096e-7, 8.424748808502400e-6,
           -3.120693124703272e-4, 7.244727626597022e-3, -9.228055941124598e-2,
           5.235987735681432e-1),
    "cn": (1.416802502367354e-8, -1.157231412229871e-6, 5.387223446683264e-5,
           -1.604381798862293e-3, 2.818489036795073e-2, -2.467398198317899e-1,
           9.999999760004487e-1),
    "fn": (-1.903009855649792e12, 1.355942388050252e11, -4.158143148511033e9,
           7.343848463587323e7, -8.732356681548485e5, 8.560515466275470e3,
           -1.032877601091159e2, 2.999401847870011e0),
    "gn": (-1.860843997624650e11, 1.278350673393208e10, -3.779387713202229e8,
           6.492611570598858e6, -7.787789623358162e4, 8.602931494734327e2,
           -1.493439396592284e1, 9.999841934744914e-1),
}
_FRESNEL_DOUBLE = {
    "sn": (-2.99181919401019853726e3, 7.08840045257738576863e5, -6.29741486205862506537e7,
           2.54890880573376359104e9, -4.42979518059697779103e10, 3.18016297876567817986e11),
    "sd": (1.00000000000000000000e0, 2.81376268889994315696e2, 4.55847810806532581675e4,
           5.17343888770096400730e6, 4.19320245898111231129e8, 2.24411795645340920940e10,
           6.07366389490084639049e11),
    "cn": (-4.98843114573573548651e-8, 9.50428062829859605134e-6, -6.45191435683965050962e-4,
           1.88843319396703850064e-2, -2.05525900955013891793e-1, 9.99999999999999998822e-1),
    "cd": (3.99982968972495980367e-12, 9.15439215774657478799e-10, 1.25001862479598821474e-7,
           1.22262789024179030997e-5, 8.68029542941784300606e-4, 4.12142090722199792936e-2,
           1.00000000000000000118e0),
    "fn": (4.21543555043677546506e-1, 1.43407919780758885261e-1, 1.15220955073585758835e-2,
           3.45017939782574027900e-4, 4.63613749287867322088e-6, 3.05568983790257605827e-8,
           1.02304514164907233465e-10, 1.72010743268161828879e-13, 1.34283276233062758925e-16,
           3.76329711269987889006e-20),
    "fd": (1.00000000000000000000e0, 7.51586398353378947175e-1, 1.16888925859191382142e-1,
           6.44051526508858611005e-3, 1.55934409164153020873e-4, 1.84627567348930545870e-6,
           1.12699224763999035261e-8, 3.60140029589371370404e-11, 5.88754533621578410010e-14,
           4.52001434074129701496e-17, 1.25443237090011264384e-20),
    "gn": (5.04442073643383265887e-1, 1.97102833525523411709e-1, 1.87648584092575249293e-2,
           6.84079380915393090172e-4, 1.15138826111884280931e-5, 9.82852443688422223854e-8,
           4.45344415861750144738e-10, 1.08268041139020870318e-12, 1.37555460633261799868e-15,
           8.36354435630677421531e-19, 1.86958710162783235106e-22),
    "gd": (1.00000000000000000000e0, 1.47495759925128324529e0, 3.37748989120019970451e-1,
           2.53603741420338795122e-2, 8.14679107184306179049e-4, 1.27545075667729118702e-5,
           1.04314589657571990585e-7, 4.60680728146520428211e-10, 1.10273215066240270757e-12,
           1.38796531259578871258e-15, 8.39158816283118707363e-19, 1.86958710162783236342e-22),
}


@_jit
def _sin_cos_half_pi_square(x):
    """(sin, cos)(pi x^2 / 2) with the angle reduced exactly: with s = |x| mod 2,
    x^2 / 2 = s (x - s/2) (mod 2), then each function on its quarter period."""
    x = fnp.abs(x)
    s = fnp.fmod(x, 2.0)
    r = fnp.fmod(s * (x - s / 2), 2.0)
    sin = fnp.where(r < 0.5, fnp.sin(np.pi * r),
                    fnp.where(r > 1.5, fnp.sin(np.pi * (r - 2.0)), -fnp.sin(np.pi * (r - 1.0))))
    cos = fnp.where(r == 0.5, 0.0, fnp.where(r < 1.0, -fnp.sin(np.pi * (r - 0.5)),
                                             fnp.sin(np.pi * (r - 1.5))))
    return sin, cos


def _poly(table, name, x):
    return fnp.polyval(fnp.array(table[name], dtype=x.dtype), x)


def _fresnel_values(signed):
    single = signed.dtype == np.float32
    table = _FRESNEL_SINGLE if single else _FRESNEL_DOUBLE
    x = fnp.abs(signed)
    x2 = x * x
    t = x2 * x2
    if single:
        s_small = x * x2 * _poly(table, "sn", t)
        c_small = x * _poly(table, "cn", t)
    else:
        s_small = x * x2 * _poly(table, "sn", t) / _poly(table, "sd", t)
        c_small = x * _poly(table, "cn", t) / _poly(table, "cd", t)
    sin, cos = _sin_cos_half_pi_square(x)
    if single:
        s_large = c_large = 0.5
    else:
        c_large = 0.5 + 1 / (np.pi * x) * sin
        s_large = 0.5 - 1 / (np.pi * x) * cos
    t = np.pi * x2
    u = 1.0 / (t * t)
    t = 1.0 / t
    if single:
        f = 1.0 - u * _poly(table, "fn", u)
        g = t * _poly(table, "gn", u)
    else:
        f = 1.0 - u * _poly(table, "fn", u) / _poly(table, "fd", u)
        g = t * _poly(table, "gn", u) / _poly(table, "gd", u)
    t = np.pi * x
    c_other = 0.5 + (f * sin - g * cos) / t
    s_other = 0.5 - (f * cos + g * sin) / t
    infinite, small, large = fnp.isinf(signed), x2 < 2.5625, x > 36974.0
    s = fnp.where(infinite, 0.5, fnp.where(small, s_small, fnp.where(large, s_large, s_other)))
    c = fnp.where(infinite, 0.5, fnp.where(small, c_small, fnp.where(large, c_large, c_other)))
    negative = signed < 0.0
    return fnp.where(negative, -s, s), fnp.where(negative, -c, c)


@custom_jvp
def _fresnel(x):
    if x.dtype in (np.float16, dtypes.bfloat16):
        s, c = _fresnel_values(x.astype(np.float32))
        return s.astype(x.dtype), c.astype(x.dtype)
    return _fresnel_values(x)


@_fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    """S' = sin(pi x^2 / 2), C' = cos(pi x^2 / 2)."""
    (x,), (t,) = primals, tangents
    sin, cos = _sin_cos_half_pi_square(x)
    return _fresnel(x), (sin * t, cos * t)


def fresnel(x):
    """The Fresnel integrals (S(x), C(x)) = int_0^x (sin, cos)(pi t^2 / 2) dt."""
    (x,) = _float_args(x)
    if dtypes.is_complex(x.dtype):
        raise NotImplementedError("Support for complex-valued inputs is not implemented yet.")
    return _fresnel(x)


# Cephes' sine and cosine integrals, as jax: rational series up to 4 ...
_SI_SERIES = (
    (-8.39167827910303881427E-11, 4.62591714427012837309E-8, -9.75759303843632795789E-6,
     9.76945438170435310816E-4, -4.13470316229406538752E-2, 1.00000000000000000302E0),
    (2.03269266195951942049E-12, 1.27997891179943299903E-9, 4.41827842801218905784E-7,
     9.96412122043875552487E-5, 1.42085239326149893930E-2, 9.99999999999999996984E-1))
_CI_SERIES = (
    (2.02524002389102268789E-11, -1.35249504915790756375E-8, 3.59325051419993077021E-6,
     -4.74007206873407909465E-4, 2.89159652607555242092E-2, -1.00000000000000000080E0),
    (4.07746040061880559506E-12, 3.06780997581887812692E-9, 1.23210355685883423679E-6,
     3.17442024775032769882E-4, 5.10028056236446052392E-2, 4.00000000000000000080E0))
# ... and the auxiliary functions f and g in z = 1 / x^2 on (4, 8) and from 8 on.
_SICI_F4 = (
    (4.23612862892216586994E0, 5.45937717161812843388E0, 1.62083287701538329132E0,
     1.67006611831323023771E-1, 6.81020132472518137426E-3, 1.08936580650328664411E-4,
     5.48900223421373614008E-7),
    (1, 8.16496634205391016773E0, 7.30828822505564552187E0, 1.86792257950184183883E0,
     1.78792052963149907262E-1, 7.01710668322789753610E-3, 1.10034357153915731354E-4,
     5.48900252756255700982E-7))
_SICI_G4 = (
    (8.71001698973114191777E-2, 6.11379109952219284151E-1, 3.97180296392337498885E-1,
     7.48527737628469092119E-2, 5.38868681462177273157E-3, 1.61999794598934024525E-4,
     1.97963874140963632189E-6, 7.82579040744090311069E-9),
    (1, 1.64402202413355338886E0, 6.66296701268987968381E-1, 9.88771761277688796203E-2,
     6.22396345441768420760E-3, 1.73221081474177119497E-4, 2.02659182086343991969E-6,
     7.82579218933534490868E-9))
_SICI_F8 = (
    (4.55880873470465315206E-1, 7.13715274100146711374E-1, 1.60300158222319456320E-1,
     1.16064229408124407915E-2, 3.49556442447859055605E-4, 4.86215430826454749482E-6,
     3.20092790091004902806E-8, 9.41779576128512936592E-11, 9.70507110881952024631E-14),
    (1.0, 9.17463611873684053703E-1, 1.78685545332074536321E-1, 1.22253594771971293032E-2,
     3.58696481881851580297E-4, 4.92435064317881464393E-6, 3.21956939101046018377E-8,
     9.43720590350276732376E-11, 9.70507110881952025725E-14))
_SICI_G8 = (
    (6.97359953443276214934E-1, 3.30410979305632063225E-1, 3.84878767649974295920E-2,
     1.71718239052347903558E-3, 3.48941165502279436777E-5, 3.47131167084116673800E-7,
     1.70404452782044526189E-9, 3.85945925430276600453E-12, 3.14040098946363334640E-15),
    (1.0, 1.68548898811011640017E0, 4.87852258695304967486E-1, 4.67913194259625806320E-2,
     1.90284426674399523638E-3, 3.68475504442561108162E-5, 3.57043223443740838771E-7,
     1.72693748966316146736E-9, 3.87830166023954706752E-12, 3.14040098946363335242E-15))


def _sici_series(x):
    """x <= 4: Si = x P(x^2) / Q(x^2), Ci = gamma + log x + x^2 P(x^2) / Q(x^2)."""
    t = x * x
    p, q = _rational(_SI_SERIES, t)
    si = fnp.where(x == 0, 0.0, (x * p) / q)
    p, q = _rational(_CI_SERIES, t)
    ci = fnp.where(x == 0, -np.inf, np.euler_gamma + fnp.log(x) + t * p / q)
    return si, ci


def _sici_asymptotic(x):
    """4 < x <= 1e9: Si = pi/2 - f cos x - g sin x, Ci = f sin x - g cos x."""
    s, c = fnp.sin(x), fnp.cos(x)
    z = 1.0 / (x * x)

    def f_of(table):
        p, q = _rational(table, z)
        return p / (x * q)

    def g_of(table):
        p, q = _rational(table, z)
        return z * p / q
    f4, g4, f8, g8 = f_of(_SICI_F4), g_of(_SICI_G4), f_of(_SICI_F8), g_of(_SICI_G8)
    f, g = fnp.where(x < 8.0, f4, f8), fnp.where(x < 8.0, g4, g8)
    return (np.pi / 2) - f * c - g * s, f * s - g * c


def _sici_far(x):
    """x > 1e9: the leading terms."""
    si = fnp.where(fnp.isposinf(x), np.pi / 2, (np.pi / 2) - fnp.cos(x) / x)
    ci = fnp.where(fnp.isposinf(x), 0.0, fnp.sin(x) / x)
    return si, ci


@_jit
def _sici(x):
    ax = fnp.abs(x)
    near, middle = ax <= 4, (ax > 4) & (ax <= 1e9)
    series, asymptotic, far = _sici_series(ax), _sici_asymptotic(ax), _sici_far(ax)
    si = fnp.select([near, middle], [series[0], asymptotic[0]], far[0])
    ci = fnp.select([near, middle], [series[1], asymptotic[1]], far[1])
    return fnp.sign(x) * si, fnp.where(fnp.isneginf(x), np.nan, ci)


@custom_jvp
def _sici_values(x):
    return _sici(x)


@_sici_values.defjvp
def _sici_jvp(primals, tangents):
    """Si' = sin x / x (sinc), Ci' = cos x / x."""
    (x,), (t,) = primals, tangents
    return _sici_values(x), (fnp.sinc(x / np.pi) * t, fnp.cos(x) / x * t)


def sici(x):
    """The sine and cosine integrals (Si(x), Ci(x)); Ci(-x) is taken as Ci(x) (as jax)."""
    (x,) = _float_args(x)
    if dtypes.is_complex(x.dtype):
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {x.dtype}.")
    return _sici_values(x)
