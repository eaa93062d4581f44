"""The special-function primitives of JAX's lax without an XLA or CHLO op: igamma, igammac,
igamma_grad_a, regularized_incomplete_beta (lax.betainc) and bessel_i0e, plus
lax.random_gamma_grad (a function, as in JAX) and bessel_i1e (chlo.bessel_i1e).

Each kernel is an elementwise series or continued fraction run by a `while_loop` until every
element has converged; the derivative with respect to the shape parameter a is carried
through the same loop.  A primitive's lowering traces its kernel (written with lax
operations) and emits it inline, as JAX's lower_fun does, so eager calls (which run the
primitive compiled), jit, grad (the primitives' own JVP rules) and vmap (elementwise
batching) all see one primitive.  float16 and bfloat16 compute in float32, as in JAX.
"""
import numpy as np

from funcgraph import core, dtypes
from funcgraph.core import ShapedArray
from funcgraph.interpreters.ad_util import Zero, is_zero, tangent_aval
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.staging import trace_flat
from funcgraph.lax._control_flow import fori_loop, while_loop
from funcgraph.lax._conveniences import full, full_like
from funcgraph.lax._elementwise import (
    abs, add, bitwise_and, bitwise_not, bitwise_or, convert_element_type, digamma, div, eq,
    exp, ge, gt, le, lgamma, log, log1p, lt, max, min, mul, ne, neg, select, sign, sqrt, sub)
from funcgraph.lax._operands import match_scalars
from funcgraph.lax._reductions import reduce_or
from funcgraph.lax._shapes import broadcast_in_dim
from funcgraph.lowering import lower_closed_body
from funcgraph.primitives.batching_helpers import batch_elementwise
from funcgraph.primitives.helpers import (
    FLOAT, broadcast_shape, check_dtype, check_same_dtypes, declare)

_MAX_ITERATIONS = 2000
_NARROW = (dtypes.float16, dtypes.bfloat16)


def _c(x, value):
    """value as a rank-0 array of x's dtype (it meets shaped operands elementwise)."""
    return np.array(value, core.get_aval(x).dtype)


def _where(pred, on_true, on_false):
    return select(pred, on_true, on_false)


def _isnan(x):
    return ne(x, x)


def _any_of(*preds):
    out = preds[0]
    for p in preds[1:]:
        out = bitwise_or(out, p)
    return out


def _loop_until_converged(step, state):
    """Iterate `step(n, state) -> (state, converged)` while any element has not converged."""
    axes = tuple(range(state[0].aval.ndim))

    def cond(carry):
        n, _, converged = carry
        return bitwise_and(lt(n, np.int32(_MAX_ITERATIONS)),
                           reduce_or(bitwise_not(converged), axes))

    def body(carry):
        n, state, converged = carry
        n = add(n, np.int32(1))
        new_state, now = step(n, state)
        # Converged elements keep their state, so their derivative stops moving too.
        new_state = tuple(_where(converged, old, new)
                          for old, new in zip(state, new_state, strict=True))
        return n, new_state, bitwise_or(converged, now)

    done = full(state[0].aval.shape, np.bool_(False))
    return while_loop(cond, body, (np.int32(0), tuple(state), done))[1]


# --- incomplete gamma -------------------------------------------------------------------

def _gamma_series(a, x):
    """(S, dS/da) with S = sum_n x^n / ((a+1)...(a+n)), so that
    P(a, x) = x^a e^-x / Gamma(a+1) * S."""
    eps = _c(a, dtypes.finfo(a.aval.dtype).eps)

    def step(n, state):
        term, dterm, total, dtotal = state
        a_n = add(a, convert_element_type(n, a.aval.dtype))
        term = mul(term, div(x, a_n))
        # d/da of x/(a+n) is -x/(a+n)^2: the derivative is carried alongside.
        dterm = sub(mul(dterm, div(x, a_n)), div(term, a_n))
        total, dtotal = add(total, term), add(dtotal, dterm)
        converged = bitwise_and(le(abs(term), mul(abs(total), eps)),
                                le(abs(dterm), mul(add(abs(dtotal), _c(a, 1)), eps)))
        return (term, dterm, total, dtotal), converged

    ones, zeros = full_like(a, 1), full_like(a, 0)
    _, _, total, dtotal = _loop_until_converged(step, (ones, zeros, ones, zeros))
    return total, dtotal


def _gamma_continued_fraction(a, x):
    """(h, dh/da) with Q(a, x) = x^a e^-x / Gamma(a) * h (modified Lentz, as in Numerical
    Recipes), the derivative carried through each step by the product rule; convergence
    waits for the derivative too (at a = 1 the value is exact after one step, its
    derivative is not)."""
    info = dtypes.finfo(a.aval.dtype)
    tiny, eps, one = _c(a, info.tiny / info.eps), _c(a, info.eps), _c(a, 1)

    def clamp(v, dv):
        small = lt(abs(v), tiny)
        return _where(small, full_like(v, tiny), v), _where(small, full_like(dv, 0), dv)

    def step(n, state):
        b, c, dc, d, dd, h, dh = state
        i = convert_element_type(n, a.aval.dtype)
        an, dan = neg(mul(i, sub(i, a))), i
        b = add(b, _c(a, 2))
        d, dd = clamp(add(mul(an, d), b), sub(add(mul(dan, d), mul(an, dd)), one))
        c, dc = clamp(add(b, div(an, c)),
                      sub(div(sub(mul(dan, c), mul(an, dc)), mul(c, c)), one))
        d, dd = div(one, d), neg(div(dd, mul(d, d)))
        delta, ddelta = mul(d, c), add(mul(dd, c), mul(d, dc))
        h, dh = mul(h, delta), add(mul(dh, delta), mul(h, ddelta))
        converged = bitwise_and(le(abs(sub(delta, one)), eps),
                                le(abs(ddelta), mul(add(abs(div(dh, h)), one), eps)))
        return (b, c, dc, d, dd, h, dh), converged

    b = sub(add(x, one), a)
    d = div(one, b)
    zeros = full_like(a, 0)
    # d(1/b)/da = 1/b^2 since db/da = -1.
    state = (b, full_like(a, 1 / tiny), zeros, d, mul(d, d), d, mul(d, d))
    _, _, _, _, _, h, dh = _loop_until_converged(step, state)
    return h, dh


def _gamma_parts(a, x):
    """(use_series, log prefactor, S or h, its derivative in a), elementwise.

    The series serves x < 1 or x <= a, the continued fraction the rest; each method sees
    benign inputs where the other one serves, so neither loop waits on them."""
    use_series = bitwise_or(lt(x, _c(x, 1)), le(x, a))
    one = full_like(a, 1)
    s, ds = _gamma_series(_where(use_series, a, one),
                          _where(use_series, x, full_like(x, 0.5)))
    h, dh = _gamma_continued_fraction(_where(use_series, one, a),
                                      _where(use_series, full_like(x, 4), x))
    common = sub(mul(a, log(x)), x)
    series_log_prefactor = sub(common, lgamma(add(a, _c(a, 1))))
    cf_log_prefactor = sub(common, lgamma(a))
    return (use_series, _where(use_series, series_log_prefactor, cf_log_prefactor),
            _where(use_series, s, h), _where(use_series, ds, dh))


def _invalid_gamma_args(a, x):
    return _any_of(lt(x, _c(x, 0)), le(a, _c(a, 0)), _isnan(a), _isnan(x))


def _incomplete_gamma(a, x, upper):
    """P(a, x), or Q(a, x) when upper; each computed directly so neither tail cancels."""
    use_series, log_prefactor, value, _ = _gamma_parts(a, x)
    scaled = mul(exp(log_prefactor), value)
    complement = sub(_c(a, 1), scaled)
    direct = _where(use_series, complement, scaled) if upper else \
        _where(use_series, scaled, complement)
    at_zero, at_inf = eq(x, _c(x, 0)), eq(x, _c(x, np.inf))
    at_zero_value, at_inf_value = (1, 0) if upper else (0, 1)
    out = _where(at_zero, full_like(a, at_zero_value),
                 _where(at_inf, full_like(a, at_inf_value), direct))
    out = _where(_invalid_gamma_args(a, x), full_like(a, np.nan), out)
    # a = 0: the limit a -> 0+ where jax gives it (Q = 0 for x > 0; P = 1 for x >= 1,
    # P stays NaN below 1, where jax's series divides by a)
    a_zero = bitwise_and(eq(a, _c(a, 0)), gt(x, _c(x, 0)) if upper else ge(x, _c(x, 1)))
    return _where(a_zero, full_like(a, at_inf_value), out)


def _igamma_kernel(a, x):
    return _incomplete_gamma(a, x, upper=False)


def _igammac_kernel(a, x):
    return _incomplete_gamma(a, x, upper=True)


def _gamma_a_derivative_parts(a, x):
    """(use_series, prefactor, the bracket of dP/da for the series, for the fraction)."""
    use_series, log_prefactor, value, dvalue = _gamma_parts(a, x)
    log_x = log(x)
    series = add(mul(value, sub(log_x, digamma(add(a, _c(a, 1))))), dvalue)
    fraction = add(mul(value, sub(log_x, digamma(a))), dvalue)
    return use_series, exp(log_prefactor), series, fraction


def _igamma_grad_a_kernel(a, x):
    """dP(a, x)/da for the regularized lower incomplete gamma function P."""
    use_series, prefactor, series, fraction = _gamma_a_derivative_parts(a, x)
    grad = mul(prefactor, _where(use_series, series, neg(fraction)))
    grad = _where(eq(x, _c(x, 0)), full_like(grad, 0), grad)
    # As JAX: NaN at x = inf too (the limit is 0).
    invalid = bitwise_or(_invalid_gamma_args(a, x), eq(x, _c(x, np.inf)))
    return _where(invalid, full_like(a, np.nan), grad)


def _random_gamma_grad_kernel(a, x):
    """d sample / d a for a Gamma(a, 1) sample drawn by inverting its CDF P(a, .):
    -(dP/da) / (dP/dx) at the sample, with the prefactors cancelled analytically."""
    use_series, _, series, fraction = _gamma_a_derivative_parts(a, x)
    grad = _where(use_series, neg(div(mul(series, x), a)), mul(fraction, x))
    return _where(eq(x, _c(x, 0)), full_like(grad, 0), grad)


# --- incomplete beta --------------------------------------------------------------------

def _beta_continued_fraction(a, b, x):
    """The continued fraction of I_x(a, b) (modified Lentz, Numerical Recipes' betacf)."""
    info = dtypes.finfo(a.aval.dtype)
    tiny, eps, one = _c(a, info.tiny / info.eps), _c(a, info.eps), _c(a, 1)
    qab, qap, qam = add(a, b), add(a, one), sub(a, one)

    def not_tiny(v):
        return _where(lt(abs(v), tiny), full_like(v, tiny), v)

    def lentz(c, d, coefficient):
        d = div(one, not_tiny(add(one, mul(coefficient, d))))
        c = not_tiny(add(one, div(coefficient, c)))
        return c, d, mul(d, c)

    def step(n, state):
        c, d, h = state
        m = convert_element_type(n, a.aval.dtype)
        m2 = add(m, m)
        even = div(mul(mul(m, sub(b, m)), x), mul(add(qam, m2), add(a, m2)))
        c, d, delta = lentz(c, d, even)
        h = mul(h, delta)
        odd = neg(div(mul(mul(add(a, m), add(qab, m)), x), mul(add(a, m2), add(qap, m2))))
        c, d, delta = lentz(c, d, odd)
        return (c, d, mul(h, delta)), le(abs(sub(delta, one)), eps)

    d = div(one, not_tiny(sub(one, div(mul(qab, x), qap))))
    return _loop_until_converged(step, (full_like(a, 1), d, d))[2]


def _log_beta(a, b):
    return sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))


def _all_mass_at_zero(a, b):
    """Where the limit of I_x(a, b) is a step at x = 0: a = 0 < b, or b = inf with a
    finite and positive."""
    zero, inf = _c(a, 0), _c(a, np.inf)
    finite_positive_a = bitwise_and(gt(a, zero), lt(a, inf))
    return bitwise_or(bitwise_and(eq(a, zero), gt(b, zero)),
                      bitwise_and(eq(b, inf), finite_positive_a))


def _betainc_kernel(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    one = _c(a, 1)
    # The continued fraction converges fast for x < (a + 1) / (a + b + 2); use the
    # symmetry I_x(a, b) = 1 - I_{1-x}(b, a) elsewhere.
    swap = gt(x, div(add(a, one), add(add(a, b), _c(a, 2))))
    a2, b2 = _where(swap, b, a), _where(swap, a, b)
    x2 = _where(swap, sub(one, x), x)
    inside = bitwise_and(gt(x2, _c(x, 0)), lt(x2, one))
    safe_x = _where(inside, x2, full_like(x2, 0.5))
    log_front = sub(sub(add(mul(a2, log(safe_x)), mul(b2, log1p(neg(safe_x)))),
                        _log_beta(a2, b2)), log(a2))
    value = mul(exp(log_front), _beta_continued_fraction(a2, b2, safe_x))
    value = _where(inside, value, full_like(value, 0))
    value = _where(swap, sub(one, value), value)
    # the limits at a or b = 0 or inf, as jax (and scipy) take them; I_x(a, b) is
    # 1 - I_(1-x)(b, a), so the mass at x = 1 is the mirror of the mass at x = 0
    zero, inf = _c(a, 0), _c(a, np.inf)
    mass_at_0, mass_at_1 = _all_mass_at_zero(a, b), _all_mass_at_zero(b, a)
    value = _where(mass_at_0, _where(gt(x, zero), full_like(value, 1), full_like(value, 0)),
                   value)
    value = _where(mass_at_1, _where(lt(x, one), full_like(value, 0), full_like(value, 1)),
                   value)
    invalid = _any_of(lt(a, zero), lt(b, zero), lt(x, zero), gt(x, one),
                      bitwise_and(eq(a, zero), eq(b, zero)),
                      bitwise_and(eq(a, inf), eq(b, inf)), _isnan(a), _isnan(b), _isnan(x))
    return _where(invalid, full_like(value, np.nan), value)


# --- exponentially scaled modified Bessel function of order 0 -------------------------
# Chebyshev series as in Cephes (Moshier's i0.c), as jax computes it: exp(-x) I0(x) in
# t = x/2 - 2 on [0, 8], and exp(-x) sqrt(x) I0(x) in t = 32/x - 2 above 8.  Cephes'
# coefficients, highest order first; float32 keeps the last 18 and 7 of them, as
# Cephes' single-precision library.

_I0E_TO_8 = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1)
_I0E_ABOVE_8 = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1)
_I0E_FLOAT32_TERMS = (18, 7)


def _chebyshev_series(t, coefficients):
    """The Chebyshev series with these coefficients (highest order first) at t, by
    Clenshaw's recurrence with Cephes' halved constant term."""
    zero = full_like(t, 0)
    b0, b1, b2 = zero, zero, zero
    for c in coefficients:
        b0, b1, b2 = add(sub(mul(t, b0), b1), _c(t, c)), b0, b1
    return mul(_c(t, 0.5), sub(b0, b2))


def _bessel_i0e_kernel(x):
    """exp(-|x|) I0(|x|)."""
    to_8, above_8 = _I0E_TO_8, _I0E_ABOVE_8
    if x.aval.dtype != dtypes.float64:
        to_8, above_8 = to_8[-_I0E_FLOAT32_TERMS[0]:], above_8[-_I0E_FLOAT32_TERMS[1]:]
    ax = abs(x)
    two = _c(x, 2)
    near = _chebyshev_series(sub(mul(_c(x, 0.5), ax), two), to_8)
    far = div(_chebyshev_series(sub(div(_c(x, 32), ax), two), above_8), sqrt(ax))
    return _where(le(ax, _c(x, 8)), near, far)


# --- the primitives ---------------------------------------------------------------------

def _elementwise_shape(name):
    """Float operands of one dtype and one shape (rank-0 operands may meet shaped ones,
    and operands of one rank meet along their size-1 dimensions)."""
    def rule(*avals):
        check_same_dtypes(name, avals)
        check_dtype(name, avals[0], (FLOAT,), "arguments")
        shape = broadcast_shape(name, avals)
        return ShapedArray(shape, avals[0].dtype, all(a.weak_type for a in avals))
    return rule


def _broadcast_to(x, shape):
    """x broadcast to shape by NumPy's rules (trailing axes line up)."""
    if x.aval.shape == shape:
        return x
    ndim = len(shape)
    return broadcast_in_dim(x, shape, tuple(range(ndim - x.aval.ndim, ndim)))


def _wide_kernel(kernel, out_aval):
    """kernel on operands broadcast to the output's shape, in float32 for the narrow floats."""
    def run(*operands):
        dtype = out_aval.dtype
        work = dtypes.float32 if dtype in _NARROW else dtype
        operands = [_broadcast_to(convert_element_type(x, work), out_aval.shape)
                    for x in operands]
        return [convert_element_type(kernel(*operands), dtype)]
    return run


def _kernel_lowering(kernel):
    """Lowering by tracing kernel over the operands and emitting its equations inline."""
    def lower(ctx, avals_in, avals_out, *operands):
        in_avals = [a.update(weak_type=False) for a in avals_in]
        closed = trace_flat(_wide_kernel(kernel, avals_out[0]), in_avals)
        return lower_closed_body(ctx, closed, list(operands))[0]
    return lower


def _special(name, kernel):
    """An elementwise special-function primitive computed by kernel: no NumPy impl (eager
    calls run compiled), elementwise batching."""
    prim = declare(name, _elementwise_shape(name), None, _kernel_lowering(kernel))
    batching_rules[prim] = batch_elementwise(prim)
    return prim


def _defjvp(prim, *partials):
    """JVP as a sum over operands with a nonzero tangent t of partial(t, *primals, out)."""
    def rule(primals, tangents):
        out = prim.bind(*primals)
        parts = [partial(t, *primals, out)
                 for partial, t in zip(partials, tangents, strict=True) if not is_zero(t)]
        if not parts:
            return out, Zero(tangent_aval(out.aval))
        total = parts[0]
        for part in parts[1:]:
            total = add(total, part)
        return out, _broadcast_to(total, out.aval.shape)
    jvp_rules[prim] = rule


def _igamma_x_partial(t, a, x, out):
    """t dP/dx, with dP/dx = x^(a-1) e^-x / Gamma(a)."""
    return mul(t, exp(sub(sub(mul(sub(a, _c(a, 1)), log(x)), x), lgamma(a))))


def _igamma_a_partial(t, a, x, out):
    return mul(t, igamma_grad_a_p.bind(a, x))


igamma_grad_a_p = _special("igamma_grad_a", _igamma_grad_a_kernel)  # no JVP, as in JAX

igamma_p = _special("igamma", _igamma_kernel)
_defjvp(igamma_p, _igamma_a_partial, _igamma_x_partial)

igammac_p = _special("igammac", _igammac_kernel)
_defjvp(igammac_p, lambda *args: neg(_igamma_a_partial(*args)),
        lambda *args: neg(_igamma_x_partial(*args)))


def _betainc_ab_partial(t, a, b, x, out):
    raise ValueError("Betainc gradient with respect to a and b not supported.")


def _betainc_x_partial(t, a, b, x, out):
    """t times the beta density x^(a-1) (1-x)^(b-1) / B(a, b)."""
    one = _c(a, 1)
    log_density = sub(add(mul(sub(b, one), log1p(neg(x))), mul(sub(a, one), log(x))),
                      _log_beta(a, b))
    return mul(t, exp(log_density))


regularized_incomplete_beta_p = _special("regularized_incomplete_beta", _betainc_kernel)
_defjvp(regularized_incomplete_beta_p, _betainc_ab_partial, _betainc_ab_partial,
        _betainc_x_partial)

bessel_i0e_p = _special("bessel_i0e", _bessel_i0e_kernel)
_defjvp(bessel_i0e_p, lambda t, x, out: mul(t, sub(bessel_i1e_p.bind(x), mul(sign(x), out))))


def _bessel_i1e_lowering(ctx, avals_in, avals_out, x):
    return ctx.op("chlo.bessel_i1e", [x], avals_in, avals_out[0])


def _bessel_i1e_partial(t, x, out):
    """t d/dx i1e = t (i0e - i1e (sign(x) + 1/x)), which tends to t/2 at 0."""
    eps = _c(x, dtypes.finfo(core.get_aval(x).dtype).eps)
    not_tiny = gt(abs(x), eps)
    safe_x = _where(not_tiny, x, full_like(x, eps))
    slope = sub(bessel_i0e_p.bind(safe_x), mul(out, add(sign(safe_x), div(_c(x, 1), safe_x))))
    return mul(t, _where(not_tiny, slope, full_like(x, 0.5)))


bessel_i1e_p = declare("bessel_i1e", _elementwise_shape("bessel_i1e"), None,
                       _bessel_i1e_lowering)
batching_rules[bessel_i1e_p] = batch_elementwise(bessel_i1e_p)
_defjvp(bessel_i1e_p, _bessel_i1e_partial)


# --- the lax functions ------------------------------------------------------------------

def igamma(a, x):
    """Elementwise regularized lower incomplete gamma function P(a, x)."""
    return igamma_p.bind(*match_scalars([a, x]))


def igammac(a, x):
    """Elementwise regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x),
    computed directly (accurate where P is near 1)."""
    return igammac_p.bind(*match_scalars([a, x]))


def igamma_grad_a(a, x):
    """Elementwise derivative dP(a, x)/da of the regularized incomplete gamma function."""
    return igamma_grad_a_p.bind(*match_scalars([a, x]))


def random_gamma_grad(a, x):
    """Elementwise derivative d x / d a of samples x of Gamma(a, 1) (JAX's implicit
    reparameterization gradient).  As in JAX, a function of lax operations, not a
    primitive; its operands share one float dtype and broadcast against each other."""
    a, x = match_scalars([a, x])
    check_same_dtypes("random_gamma_grad", [a.aval, x.aval])
    check_dtype("random_gamma_grad", a.aval, (FLOAT,), "arguments")
    aval = ShapedArray(np.broadcast_shapes(a.aval.shape, x.aval.shape), a.aval.dtype,
                       a.aval.weak_type and x.aval.weak_type)
    return _wide_kernel(_random_gamma_grad_kernel, aval)(a, x)[0]


def betainc(a, b, x):
    """Elementwise regularized incomplete beta integral I_x(a, b)."""
    return regularized_incomplete_beta_p.bind(*match_scalars([a, b, x]))


def bessel_i0e(x):
    """Exponentially scaled modified Bessel function of order 0: exp(-|x|) I0(x)."""
    return bessel_i0e_p.bind(*match_scalars([x]))


def bessel_i1e(x):
    """Exponentially scaled modified Bessel function of order 1: exp(-|x|) I1(x)."""
    return bessel_i1e_p.bind(*match_scalars([x]))
