"""Incomplete gamma and beta kernels shared by funcgraph.random (the gamma sampler's
reparameterization gradient) and funcgraph.scipy (gammainc, betainc and the CDFs).

Each kernel is an elementwise series or continued fraction run by a `while_loop` until every
element has converged, so it batches under `vmap` and differentiates in forward mode; the
derivative with respect to the shape parameter a is carried through the same loop.
"""
import numpy as np

from funcgraph import dtypes, lax
import funcgraph.numpy as fnp
from funcgraph.transforms.custom_derivatives import custom_jvp

_MAX_ITERATIONS = 2000


def _const(x, value):
    return np.array(value, fnp.asarray(x).dtype)


def _float_operands(*args):
    """Args promoted to one inexact dtype and broadcast to one shape."""
    dtype = fnp.result_type(*args)
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.default_float()
    return fnp.broadcast_arrays(*(fnp.asarray(a).astype(dtype) for a in args))


def _loop_until_converged(step, state):
    """Iterate `step(n, state) -> (state, converged)` while any element has not converged."""
    def cond(carry):
        n, _, converged = carry
        return fnp.logical_and(n < _MAX_ITERATIONS, fnp.logical_not(fnp.all(converged)))

    def body(carry):
        n, state, converged = carry
        new_state, now = step(n + 1, state)
        # Converged elements keep their state, so their jvp stops moving too.
        new_state = tuple(fnp.where(converged, old, new)
                          for old, new in zip(state, new_state, strict=True))
        return n + 1, new_state, fnp.logical_or(converged, now)

    zero = fnp.zeros(np.shape(state[0]), bool)
    return lax.while_loop(cond, body, (np.int32(0), state, zero))[1]


def _gamma_series(a, x):
    """(S, dS/da) with S = sum_n x^n / ((a+1)...(a+n)), so that
    P(a, x) = x^a e^-x / Gamma(a+1) * S."""
    eps = _const(a, dtypes.finfo(a.dtype).eps)

    def step(n, state):
        term, dterm, total, dtotal = state
        ratio = x / (a + n.astype(a.dtype))
        term = term * ratio
        # d/da of x/(a+n) is -ratio/(a+n): the derivative is carried alongside.
        dterm = dterm * ratio - term / (a + n.astype(a.dtype))
        total, dtotal = total + term, dtotal + dterm
        converged = (fnp.abs(term) <= fnp.abs(total) * eps) \
            & (fnp.abs(dterm) <= (fnp.abs(dtotal) + 1) * eps)
        return (term, dterm, total, dtotal), converged

    ones, zeros = fnp.ones_like(a), fnp.zeros_like(a)
    _, _, total, dtotal = _loop_until_converged(step, (ones, zeros, ones, zeros))
    return total, dtotal


def _gamma_continued_fraction(a, x):
    """(h, dh/da) with Q(a, x) = x^a e^-x / Gamma(a) * h (modified Lentz, as in Numerical
    Recipes), the derivative carried through each step by the product rule; convergence
    waits for the derivative too (at a = 1 the value is exact after one step, its
    derivative is not)."""
    info = dtypes.finfo(a.dtype)
    tiny, eps = _const(a, info.tiny / info.eps), _const(a, info.eps)

    def clamp(v, dv):
        small = fnp.abs(v) < tiny
        return fnp.where(small, tiny, v), fnp.where(small, fnp.zeros_like(dv), dv)

    def step(n, state):
        b, c, dc, d, dd, h, dh = state
        i = n.astype(a.dtype)
        an, dan = -i * (i - a), i
        b = b + 2
        d, dd = clamp(an * d + b, dan * d + an * dd - 1)
        c, dc = clamp(b + an / c, -1 + (dan * c - an * dc) / (c * c))
        d, dd = 1 / d, -dd / (d * d)
        delta, ddelta = d * c, dd * c + d * dc
        h, dh = h * delta, dh * delta + h * ddelta
        converged = (fnp.abs(delta - 1) <= eps) \
            & (fnp.abs(ddelta) <= (fnp.abs(dh / h) + 1) * eps)
        return (b, c, dc, d, dd, h, dh), converged

    b = x + 1 - a
    d = 1 / b
    zeros = fnp.zeros_like(a)
    # d(1/b)/da = 1/b^2 since db/da = -1.
    state = (b, fnp.full_like(a, 1 / tiny), zeros, d, d * d, d, d * d)
    _, _, _, _, _, h, dh = _loop_until_converged(step, state)
    return h, dh


def _gamma_parts(a, x):
    """(use_series, log prefactor, S or h, its derivative in a), elementwise.

    The series serves x < 1 or x <= a, the continued fraction the rest; each method sees
    benign inputs where the other one serves, so neither loop waits on them."""
    use_series = (x < 1) | (x <= a)
    one = fnp.ones_like(a)
    series_a, series_x = fnp.where(use_series, a, one), fnp.where(use_series, x, 0.5 * one)
    cf_a, cf_x = fnp.where(use_series, one, a), fnp.where(use_series, 4 * one, x)
    s, ds = _gamma_series(series_a, series_x)
    h, dh = _gamma_continued_fraction(cf_a, cf_x)
    log_x = fnp.log(x)
    series_log_prefactor = a * log_x - x - lax.lgamma(a + 1)
    cf_log_prefactor = a * log_x - x - lax.lgamma(a)
    return (use_series, fnp.where(use_series, series_log_prefactor, cf_log_prefactor),
            fnp.where(use_series, s, h), fnp.where(use_series, ds, dh))


def _invalid_gamma_args(a, x):
    return (x < 0) | (a <= 0) | fnp.isnan(a) | fnp.isnan(x)


def _incomplete_gamma_values(a, x):
    """(P(a, x), Q(a, x)), each computed directly so neither tail cancels."""
    use_series, log_prefactor, value, _ = _gamma_parts(a, x)
    scaled = fnp.exp(log_prefactor) * value
    p = fnp.where(use_series, scaled, 1 - scaled)
    q = fnp.where(use_series, 1 - scaled, scaled)
    at_zero, at_inf = x == 0, fnp.isinf(x) & (x > 0)
    p = fnp.where(at_zero, fnp.zeros_like(p), fnp.where(at_inf, fnp.ones_like(p), p))
    q = fnp.where(at_zero, fnp.ones_like(q), fnp.where(at_inf, fnp.zeros_like(q), q))
    invalid = _invalid_gamma_args(a, x)
    return fnp.where(invalid, np.nan, p), fnp.where(invalid, np.nan, q)


def _igamma_derivative_x(a, x):
    """dP/dx = x^(a-1) e^-x / Gamma(a)."""
    return fnp.exp((a - 1) * fnp.log(x) - x - lax.lgamma(a))


def igamma_grad_a(a, x):
    """dP(a, x)/da for the regularized lower incomplete gamma function P."""
    a, x = _float_operands(a, x)
    use_series, log_prefactor, value, dvalue = _gamma_parts(a, x)
    log_x = fnp.log(x)
    prefactor = fnp.exp(log_prefactor)
    series = prefactor * (value * (log_x - lax.digamma(a + 1)) + dvalue)
    continued_fraction = -prefactor * (value * (log_x - lax.digamma(a)) + dvalue)
    grad = fnp.where(use_series, series, continued_fraction)
    grad = fnp.where((x == 0) | fnp.isinf(x), fnp.zeros_like(grad), grad)
    return fnp.where(_invalid_gamma_args(a, x), np.nan, grad)


def _incomplete_gamma_tangent(a, x, ta, tx):
    return ta * igamma_grad_a(a, x) + tx * _igamma_derivative_x(a, x)


@custom_jvp
def _igamma(a, x):
    return _incomplete_gamma_values(a, x)[0]


@_igamma.defjvp
def _igamma_jvp(primals, tangents):
    return _igamma(*primals), _incomplete_gamma_tangent(*primals, *tangents)


@custom_jvp
def _igammac(a, x):
    return _incomplete_gamma_values(a, x)[1]


@_igammac.defjvp
def _igammac_jvp(primals, tangents):
    return _igammac(*primals), -_incomplete_gamma_tangent(*primals, *tangents)


def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x) (as JAX's lax.igamma)."""
    return _igamma(*_float_operands(a, x))


def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x), computed
    directly (accurate where P is near 1)."""
    return _igammac(*_float_operands(a, x))


def random_gamma_grad(a, sample):
    """d sample / d a for a Gamma(a, 1) sample drawn by inverting its CDF P(a, .):
    -(dP/da) / (dP/dx) at the sample, with the prefactors cancelled analytically."""
    a, x = _float_operands(a, sample)
    use_series, _, value, dvalue = _gamma_parts(a, x)
    log_x = fnp.log(x)
    series = -(value * (log_x - lax.digamma(a + 1)) + dvalue) * x / a
    continued_fraction = (value * (log_x - lax.digamma(a)) + dvalue) * x
    grad = fnp.where(use_series, series, continued_fraction)
    return fnp.where(x == 0, fnp.zeros_like(grad), grad)


# ----------------------------------------------------------------------------- beta

def _beta_continued_fraction(a, b, x):
    """The continued fraction of I_x(a, b) (modified Lentz, Numerical Recipes' betacf)."""
    info = dtypes.finfo(a.dtype)
    tiny, eps = _const(a, info.tiny / info.eps), _const(a, info.eps)
    qab, qap, qam = a + b, a + 1, a - 1
    d = 1 - qab * x / qap
    d = 1 / fnp.where(fnp.abs(d) < tiny, tiny, d)

    def lentz(c, d, coefficient):
        d = 1 + coefficient * d
        d = 1 / fnp.where(fnp.abs(d) < tiny, tiny, d)
        c = 1 + coefficient / c
        c = fnp.where(fnp.abs(c) < tiny, tiny, c)
        return c, d, d * c

    def step(n, state):
        c, d, h = state
        m = n.astype(a.dtype)
        m2 = 2 * m
        c, d, delta = lentz(c, d, m * (b - m) * x / ((qam + m2) * (a + m2)))
        h = h * delta
        c, d, delta = lentz(c, d, -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)))
        return (c, d, h * delta), fnp.abs(delta - 1) <= eps

    return _loop_until_converged(step, (fnp.ones_like(a), d, d))[2]


def _log_beta(a, b):
    return lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)


def _betainc_value(a, b, x):
    # The continued fraction converges fast for x < (a + 1) / (a + b + 2); use the
    # symmetry I_x(a, b) = 1 - I_{1-x}(b, a) elsewhere.
    swap = x > (a + 1) / (a + b + 2)
    a2, b2 = fnp.where(swap, b, a), fnp.where(swap, a, b)
    x2 = fnp.where(swap, 1 - x, x)
    inside = (x2 > 0) & (x2 < 1)
    safe_x = fnp.where(inside, x2, 0.5)
    log_front = (a2 * fnp.log(safe_x) + b2 * fnp.log1p(-safe_x) - _log_beta(a2, b2)
                 - fnp.log(a2))
    value = fnp.exp(log_front) * _beta_continued_fraction(a2, b2, safe_x)
    value = fnp.where(inside, value, fnp.zeros_like(value))
    value = fnp.where(swap, 1 - value, value)
    invalid = (a <= 0) | (b <= 0) | (x < 0) | (x > 1) | fnp.isnan(a) | fnp.isnan(b) \
        | fnp.isnan(x)
    return fnp.where(invalid, np.nan, value)


@custom_jvp
def _betainc(a, b, x):
    return _betainc_value(a, b, x)


@_betainc.defjvp
def _betainc_jvp(primals, tangents):
    a, b, x = primals
    _, _, tx = tangents
    # As jax: differentiable in x only (d/dx I_x(a, b) is the beta density).
    density = fnp.exp(lax.sub((a - 1) * fnp.log(x) + (b - 1) * fnp.log1p(-x),
                              _log_beta(a, b)))
    return _betainc(a, b, x), tx * density


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    return _betainc(*_float_operands(a, b, x))


__all__ = ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad", "betainc"]
