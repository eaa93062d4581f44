"""Hypergeometric series and Bessel functions of the first kind for
funcgraph.scipy.special: each a power series summed by a while_loop until every element's
next term is negligible (Kummer's and Pfaff's transformations keep the series where they
converge well), or Miller's backward recurrence."""
import numpy as np

from funcgraph import dtypes, lax
from funcgraph import numpy as fnp
from funcgraph.scipy._special_integrals import _c
from funcgraph.transforms.custom_derivatives import custom_jvp

_MAX_TERMS = 20000


def _float_args(*args):
    arrays = [fnp.asarray(a) for a in args]
    dtype = fnp.result_type(*arrays)
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.default_float()
    return fnp.broadcast_arrays(*(a.astype(dtype) for a in arrays))


def _sum_series(ratio, x):
    """sum_k t_k with t_0 = 1 and t_{k+1} = t_k * ratio(k) (ratio of k as x's dtype),
    until |t_k| <= eps |sum| for every element."""
    eps = np.array(dtypes.finfo(x.dtype).eps, x.dtype)

    def cond(carry):
        k, term, total = carry
        return (k < _MAX_TERMS) & fnp.any(fnp.abs(term) > eps * fnp.abs(total))

    def body(carry):
        k, term, total = carry
        term = term * ratio(k.astype(x.dtype))
        return k + 1, term, total + term

    ones = fnp.ones_like(x)
    return lax.while_loop(cond, body, (np.int32(0), ones, ones))[2]


def _hyp1f1_series(a, b, x):
    return _sum_series(lambda k: (a + k) / (b + k) * x / (k + 1), x)


@custom_jvp
def _hyp1f1(a, b, x):
    # Kummer: M(a, b, x) = e^x M(b - a, b, -x) keeps the series free of cancellation.
    negative = x < 0
    a2 = fnp.where(negative, b - a, a)
    series = _hyp1f1_series(a2, b, fnp.abs(x))
    return fnp.where(negative, fnp.exp(x) * series, series)


@_hyp1f1.defjvp
def _hyp1f1_jvp(primals, tangents):
    a, b, x = primals
    _, _, tx = tangents
    # d/dx M(a, b, x) = a / b M(a + 1, b + 1, x) (differentiable in x only, as jax).
    return _hyp1f1(a, b, x), tx * a / b * _hyp1f1(a + 1, b + 1, x)


def hyp1f1(a, b, x):
    """Kummer's confluent hypergeometric function 1F1(a; b; x)."""
    return _hyp1f1(*_float_args(a, b, x))


def _hyp2f1_series(a, b, c, x):
    return _sum_series(lambda k: (a + k) * (b + k) / ((c + k) * (k + 1)) * x, x)


def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function 2F1(a, b; c; x) for x < 1 (Pfaff's transformation
    maps x < 0 into [0, 1)); at x == 1 Gauss's sum when c - a - b > 0, else inf."""
    a, b, c, x = _float_args(a, b, c, x)
    negative = x < 0
    inside = (x < 1) & (x > -1)
    safe_x = fnp.where(inside, x, 0)
    # Pfaff: 2F1(a, b; c; x) = (1 - x)^-a 2F1(a, c - b; c; x / (x - 1)).
    z = fnp.where(negative, safe_x / (safe_x - 1), safe_x)
    b2 = fnp.where(negative, c - b, b)
    series = _hyp2f1_series(a, b2, c, z)
    value = fnp.where(negative, fnp.power(1 - safe_x, -a) * series, series)
    gauss = fnp.exp(lax.lgamma(c) + lax.lgamma(c - a - b) - lax.lgamma(c - a)
                    - lax.lgamma(c - b))
    at_one = fnp.where(c - a - b > 0, gauss, np.array(np.inf, x.dtype))
    value = fnp.where(x == 1, at_one, value)
    return fnp.where(inside | (x == 1), value, np.array(np.nan, x.dtype))


def bessel_jn(z, *, v, n_iter=50):
    """J_0(z) .. J_v(z) stacked on a new leading axis, by Miller's backward recurrence
    J_{k-1} = (2k / z) J_k - J_{k+1} from order v + n_iter, normalized by
    J_0 + 2 (J_2 + J_4 + ...) = 1."""
    (z,) = _float_args(z)
    v = int(v)
    start = 2 * ((v + n_iter) // 2 + 1)
    safe = fnp.where(z == 0, 1, z)
    # J_0 .. J_v as they are reached, on a leading axis
    orders = lax.broadcasted_iota(np.int32, (v + 1,) + z.shape, 0)

    def step(i, state):
        upper, current, even_sum, kept = state
        k = start - i
        lower = (2 * k).astype(z.dtype) / safe * current - upper
        upper, current = current, lower
        # Rescale all kept orders together when the recurrence grows large.
        scale = fnp.where(fnp.abs(current) > 1e10, 1e-10, 1.0).astype(z.dtype)
        upper, current, even_sum = upper * scale, current * scale, even_sum * scale
        kept = fnp.where(orders == k - 1, current, kept * scale)
        even_sum = even_sum + fnp.where((k % 2 == 1) & (k > 1), current, 0).astype(z.dtype)
        return upper, current, even_sum, kept

    state = (fnp.zeros_like(z), fnp.full_like(z, 1e-30), fnp.zeros_like(z),
             fnp.zeros(orders.shape, z.dtype))
    _, _, even_sum, kept = lax.fori_loop(0, start, step, state)
    values = kept / (kept[0] + 2 * even_sum)
    return fnp.where(z == 0, (orders == 0).astype(z.dtype), values)


# ----------------------------------------------------------------------------- wofz
# Weideman's rational approximation of the Faddeeva function (SIAM J. Numer. Anal. 31,
# 1994) with N = 32, as jax: w(z) = 2 P(Z) / (L - iz)^2 + 1 / (sqrt(pi) (L - iz)) with
# Z = (L + iz) / (L - iz) for Im z >= 0, L = sqrt(N / sqrt 2).  The coefficients are the
# values jax tabulates (an FFT of the sampled integrand gives them to within 1e-15, not
# bit for bit), highest power first.
_WEIDEMAN_L = 4.7568284600108841
_WEIDEMAN_A = (
    -1.3034426067909105e-12, 3.7411838373738471e-12, 8.030427700497756e-12,
    -2.1543593557490879e-11, -5.5442449963237932e-11, 1.165824698850374e-10,
    4.1537441121999766e-10, -5.2310202114920615e-10, -3.2080151339721323e-09,
    8.1248864216535907e-10, 2.3797556530014025e-08, 2.2930438438915445e-08,
    -1.4813078929137642e-07, -4.1840763750512053e-07, 4.2558331397138446e-07,
    4.4015317312832251e-06, 6.8210319443575151e-06, -2.1409619201999998e-05,
    -0.00013075449254579421, -0.00024532980270038237, 0.00039259136070109705,
    0.0045195411053493093, 0.019006155784845501, 0.057304403529837282, 0.14060716226893755,
    0.29544451071508743, 0.54601397206393376, 0.9019254893648001, 1.3455441692345449,
    1.8256696296324815, 2.2635372999002676, 2.5722534081245696)


def _wofz_upper(z):
    """w(z) for Im z >= 0."""
    re = lax.real(z)
    length = lax.complex(_c(re, _WEIDEMAN_L), _c(re, 0.0))
    iz = lax.complex(lax.neg(lax.imag(z)), re)
    denominator = length - iz
    ratio = (length + iz) / denominator
    poly = fnp.polyval(fnp.asarray(np.array(_WEIDEMAN_A), dtype=ratio.dtype), ratio)
    inverse_sqrt_pi = lax.complex(_c(re, 1.0 / np.sqrt(np.pi)), _c(re, 0.0))
    return 2 * poly / (denominator * denominator) + inverse_sqrt_pi / denominator


@custom_jvp
def _wofz(z):
    """The upper half plane directly, the lower by w(z) = 2 exp(-z^2) - w(-z)."""
    upper = lax.ge(lax.imag(z), _c(lax.real(z), 0.0))
    w = _wofz_upper(lax.select(upper, z, lax.neg(z)))
    return lax.select(upper, w, 2 * lax.exp(lax.neg(z * z)) - w)


@_wofz.defjvp
def _wofz_jvp(primals, tangents):
    """w'(z) = -2 z w(z) + 2 i / sqrt(pi)."""
    (z,), (t,) = primals, tangents
    out = _wofz(z)
    re = lax.real(z)
    return out, t * (lax.neg(2 * z * out)
                     + lax.complex(_c(re, 0.0), _c(re, 2.0 / np.sqrt(np.pi))))


def wofz(z):
    """The Faddeeva function w(z) = exp(-z^2) erfc(-i z) (complex; real inputs promote to
    complex)."""
    z = fnp.asarray(z)
    if not fnp.issubdtype(z.dtype, np.complexfloating):
        real = z if fnp.issubdtype(z.dtype, np.floating) else z.astype(
            fnp.result_type(z, float))
        z = real.astype(np.complex128 if real.dtype == np.float64 else np.complex64)
    return _wofz(z)


# ----------------------------------------------------------------------------- sph_harm_y

def _normalized_legendre_table(x, n_max):
    """P[l][m] = sqrt((2l+1)/(4 pi) (l-m)!/(l+m)!) P_l^m(x) (Condon-Shortley phase) for
    0 <= m <= l <= n_max, by the stable normalized recurrences."""
    sine = fnp.sqrt(fnp.maximum(1 - x * x, 0))
    diagonal = [fnp.full_like(x, 1 / np.sqrt(4 * np.pi))]
    for m in range(1, n_max + 1):
        diagonal.append(-np.sqrt((2 * m + 1) / (2 * m)) * sine * diagonal[-1])
    table = [[None] * (n_max + 1) for _ in range(n_max + 1)]
    for m in range(n_max + 1):
        table[m][m] = diagonal[m]
        if m + 1 <= n_max:
            table[m + 1][m] = np.sqrt(2 * m + 3) * x * diagonal[m]
        for l in range(m + 2, n_max + 1):
            a = np.sqrt((4 * l * l - 1) / (l * l - m * m))
            a_prev = np.sqrt((4 * (l - 1) ** 2 - 1) / ((l - 1) ** 2 - m * m))
            table[l][m] = a * (x * table[l - 1][m] - table[l - 2][m] / a_prev)
    return table


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonic Y_n^m(theta, phi), theta the polar and phi the azimuthal
    angle (as scipy.special.sph_harm_y); n_max (static) bounds the degree when n is
    traced."""
    if diff_n not in (None, 0):
        raise NotImplementedError("sph_harm_y: derivatives (diff_n > 0) are not supported")
    n, m = fnp.asarray(n), fnp.asarray(m)
    theta, phi = _float_args(theta, phi)
    if n_max is None:
        n_max = int(np.max(np.asarray(n)))
    n, m, theta, phi = fnp.broadcast_arrays(n, m, theta, phi)
    table = _normalized_legendre_table(fnp.cos(theta), n_max)
    m_abs = fnp.abs(m)
    legendre = fnp.zeros_like(theta)
    for l in range(n_max + 1):
        for k in range(l + 1):
            legendre = fnp.where((n == l) & (m_abs == k), table[l][k], legendre)
    complex_dtype = np.complex128 if theta.dtype == np.float64 else np.complex64
    m_float = m.astype(theta.dtype)
    # Y_n^-m = (-1)^m conj(Y_n^m): the phase e^(i m phi) with m negative, times (-1)^m.
    sign = fnp.where((m < 0) & (m_abs % 2 == 1), -1, 1).astype(theta.dtype)
    phase = (fnp.cos(m_float * phi) + np.array(1j, complex_dtype) * fnp.sin(m_float * phi))
    value = (sign * legendre).astype(complex_dtype) * phase.astype(complex_dtype)
    return fnp.where(m_abs > n, np.array(0, complex_dtype), value)
