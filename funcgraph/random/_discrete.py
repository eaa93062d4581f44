"""Counting samplers drawn with jax's algorithms (so the same key gives jax's counts):
poisson (Knuth's product of uniforms for lam < 10, Hormann's transformed rejection above),
binomial (geometric-sum inversion for n p <= 10, BTRS rejection above) and multinomial
(a scan of conditional binomials)."""
import numpy as np

from funcgraph import dtypes, lax
import funcgraph.numpy as fnp
from funcgraph.random._core import (
    _canonical_shape, _check_key, _check_shape, _float_dtype, _staged, split, uniform)

__all__ = ["poisson", "binomial", "multinomial"]

# The loops stop when every element is done; the iteration cap only guards against NaN.
_MAX_ITERATIONS = np.int32(np.iinfo(np.int32).max)


def poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) counts, computed in float32 as jax does."""
    key = _check_key("poisson", key)
    dtype = dtypes.canonicalize(dtypes.default_int() if dtype is None else dtype)
    shape = np.shape(lam) if shape is None else _canonical_shape("poisson", shape)
    _check_shape("poisson", tuple(shape), np.shape(lam))
    return _poisson(key, lam, shape=tuple(shape), dtype=dtype)


def _poisson_knuth(key, lam, shape, dtype):
    """Count uniforms until their product drops below exp(-lam)."""
    def body(carry):
        i, k, key, log_prod = carry
        key, subkey = split(key)
        k = lax.select(log_prod > -lam, k + np.array(1, dtype), k)
        return i + 1, k, key, log_prod + fnp.log(uniform(subkey, shape, np.float32))

    def cond(carry):
        i, _, _, log_prod = carry
        return fnp.any(log_prod > -lam) & (i < _MAX_ITERATIONS)

    init = (np.int32(0), fnp.zeros(shape, dtype), key, fnp.zeros(shape, np.float32))
    k = lax.while_loop(cond, body, init)[1]
    return (k - np.array(1, dtype)).astype(dtype)


def _poisson_rejection(key, lam, shape, dtype):
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry):
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = split(key, 3)
        u = uniform(subkey_0, shape, lam.dtype) - 0.5
        v = uniform(subkey_1, shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        log_pmf = -lam + k * log_lam - lax.lgamma(k + 1)
        accept_fast = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept = accept_fast | (~reject & (s <= log_pmf))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, key

    def cond(carry):
        i, _, accepted, _ = carry
        return fnp.any(~accepted) & (i < _MAX_ITERATIONS)

    init = (np.int32(0), fnp.full(shape, -1, lam.dtype), fnp.zeros(shape, bool), key)
    return lax.while_loop(cond, body, init)[1].astype(dtype)


@_staged
def _poisson(key, lam, *, shape, dtype):
    lam = lax.convert_element_type(fnp.broadcast_to(fnp.asarray(lam), shape), np.float32)
    use_knuth = fnp.isnan(lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, fnp.zeros_like(lam))
    # The rejection branch sees a harmless large rate where Knuth's serves.
    lam_rejection = lax.select(use_knuth, fnp.full_like(lam, 1e5), lam)
    result = lax.select(use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype),
                        _poisson_rejection(key, lam_rejection, shape, dtype))
    return lax.select(lam == 0, fnp.zeros_like(result), result)


def _stirling_tail(k):
    """log(k!) minus its Stirling approximation: a table for k <= 9, a series above."""
    table = fnp.asarray(np.array([
        0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
        0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
        0.00925546218271273, 0.00833056343336287], k.dtype))
    use_table = k <= 9
    k = lax.clamp(np.array(0, k.dtype), k, np.array(9, k.dtype))
    kp1sq = (k + 1) * (k + 1)
    series = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return lax.select(use_table, table[fnp.floor(k).astype(np.int32)], series)


def _binomial_inversion(key, count, prob, shape, dtype):
    """Sum geometric waiting times until they pass count."""
    log1m_prob = fnp.log1p(-prob)

    def body(carry):
        i, num_geom, geom_sum, key = carry
        subkey, key = split(key)
        num_geom = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        geom = fnp.ceil(fnp.log(uniform(subkey, shape, prob.dtype)) / log1m_prob)
        return i + 1, num_geom, geom_sum + geom, key

    def cond(carry):
        i, _, geom_sum, _ = carry
        return fnp.any(geom_sum <= count) & (i < _MAX_ITERATIONS)

    zeros = fnp.zeros(shape, prob.dtype)
    k = lax.while_loop(cond, body, (np.int32(0), zeros, zeros, key))[1]
    return (k - 1).astype(dtype)


def _binomial_btrs(key, count, prob, shape, dtype):
    """Hormann's transformed rejection with squeeze (BTRS)."""
    stddev = fnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = fnp.floor((count + 1) * prob)

    def body(carry):
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = split(key, 3)
        u = uniform(subkey_0, shape, prob.dtype)
        v = uniform(subkey_1, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - fnp.abs(u)
        accept_fast = (us >= 0.07) & (v <= v_r)
        k = fnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = fnp.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * fnp.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * fnp.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * fnp.log(r * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(count - k))
        accept = accept_fast | (~reject & (v <= bound))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, key

    def cond(carry):
        i, _, accepted, _ = carry
        return fnp.any(~accepted) & (i < _MAX_ITERATIONS)

    init = (np.int32(0), fnp.full(shape, -1, prob.dtype), fnp.zeros(shape, bool), key)
    return lax.while_loop(cond, body, init)[1].astype(dtype)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts (as floats of `dtype`); NaN for invalid n or p, inf for n = inf."""
    key = _check_key("binomial", key)
    dtype = _float_dtype("binomial", dtype)
    if shape is not None:
        shape = _canonical_shape("binomial", shape)
    return _binomial(key, n, p, shape=shape, dtype=dtype)


@_staged
def _binomial(key, count, prob, *, shape, dtype):
    if shape is None:
        shape = tuple(np.broadcast_shapes(np.shape(count), np.shape(prob)))
    else:
        _check_shape("binomial", shape, np.shape(count), np.shape(prob))
    prob = fnp.asarray(prob)
    if not dtypes.is_inexact(prob.dtype):
        prob = prob.astype(dtypes.default_float())
    count = fnp.broadcast_to(lax.convert_element_type(fnp.asarray(count), prob.dtype), shape)
    prob = fnp.broadcast_to(prob, shape)
    # Draw for q = min(p, 1 - p) and reflect, so both algorithms see q <= 1/2.
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = fnp.isnan(count) | (count < 0.0)
    count_inf = fnp.isinf(count)
    q_is_nan, q_negative = fnp.isnan(q), q < 0.0
    q = lax.select(q_is_nan | q_negative, fnp.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = fnp.floor(count)
    count_inversion = lax.select(use_inversion, count, fnp.zeros_like(count))
    count_btrs = lax.select(use_inversion, fnp.full_like(count, 1e4), count)
    q_btrs = lax.select(use_inversion, fnp.full_like(q, 0.5), q)
    samples = lax.select(use_inversion,
                         _binomial_inversion(key, count_inversion, q, shape, dtype),
                         _binomial_btrs(key, count_btrs, q_btrs, shape, dtype))
    invalid = q_negative | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, fnp.full_like(samples, np.nan), samples)
    samples = lax.select(count_inf & ~invalid, fnp.full_like(samples, np.inf), samples)
    keep = p_lt_half | count_nan_or_neg | q_is_nan | count_inf
    return lax.select(keep, samples, count.astype(dtype) - samples)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial(n, p) counts over the last axis of p, as conditional binomials."""
    key = _check_key("multinomial", key)
    n, p = fnp.asarray(n), fnp.asarray(p)
    inexact = fnp.result_type(n, p)
    if not dtypes.is_inexact(inexact):
        inexact = dtypes.default_float()
    n, p = n.astype(inexact), p.astype(inexact)
    shape = p.shape if shape is None else _canonical_shape("multinomial", shape)
    dtype = dtypes.default_float() if dtype is None else dtypes.canonicalize(dtype)
    n = fnp.broadcast_to(n, shape[:-1])
    p = fnp.moveaxis(fnp.broadcast_to(p, shape), -1, 0)
    remaining = fnp.flip(fnp.cumsum(fnp.flip(p, 0), 0), 0)
    ratios = p / fnp.where(remaining == 0, np.array(1, p.dtype), remaining)
    keys = split(key, ratios.shape[0])

    def draw(remainder, ratio_and_key):
        ratio, subkey = ratio_and_key
        count = binomial(subkey, remainder, fnp.clip(ratio, 0, 1), dtype=remainder.dtype)
        return remainder - count, count

    _, counts = lax.scan(draw, n, (ratios, keys), unroll=unroll)
    return fnp.moveaxis(counts, 0, -1).astype(dtype)

