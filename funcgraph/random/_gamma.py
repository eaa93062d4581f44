"""The gamma sampler (Marsaglia and Tsang's rejection method, drawn as jax draws it, so the
samples are jax's for the same key) with the implicit reparameterization gradient, and the
samplers built from gamma draws: loggamma, beta, dirichlet, chisquare, f, t,
generalized_normal and ball."""
import functools
import math

import numpy as np

from funcgraph import dtypes, lax
import funcgraph.numpy as fnp
from funcgraph.random._core import (
    _canonical_shape, _check_key, _check_shape, _float_dtype, _staged, exponential, normal,
    split, uniform)
from funcgraph.random._simple import broadcast_shapes_of, rademacher
from funcgraph.special_math import random_gamma_grad
from funcgraph.transforms.custom_derivatives import custom_jvp
from funcgraph.transforms.vmap import vmap

__all__ = ["gamma", "loggamma", "beta", "dirichlet", "chisquare", "f", "t",
           "generalized_normal", "ball"]


def _gamma_one(key, alpha, log_space):
    """One Gamma(alpha) draw. For alpha < 1 it draws Gamma(alpha + 1) and scales by
    U^(1/alpha); the proposal loop runs until the squeeze or the log test accepts."""
    dtype = alpha.dtype
    one, zero = np.array(1, dtype), np.array(0, dtype)
    boost_mask = alpha >= one
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, alpha + one)
    d = alpha - np.array(1 / 3, dtype)
    c = np.array(1 / 3, dtype) / lax.sqrt(d)

    def rejected(state):
        _, x_sq, v, u = state
        squeeze = u >= one - np.array(0.0331, dtype) * (x_sq * x_sq)
        log_test = lax.log(u) >= x_sq * np.array(0.5, dtype) + d * (one - v + lax.log(v))
        return squeeze & log_test

    def positive_proposal(state):
        key, _, _ = state
        key, subkey = split(key)
        x = normal(subkey, (), dtype)
        return key, x, one + x * c

    def propose(state):
        key, x_key, u_key = split(state[0], 3)
        _, x, v = lax.while_loop(lambda s: s[2] <= zero, positive_proposal,
                                 (x_key, zero, np.array(-1, dtype)))
        return key, x * x, v * v * v, uniform(u_key, (), dtype)

    key, subkey = split(key)
    # The initial state is rejected, so the loop proposes at least once.
    _, _, v, _ = lax.while_loop(rejected, propose, (key, zero, one, np.array(2, dtype)))
    if log_space:
        log_samples = -exponential(subkey, (), dtype)
        log_boost = lax.select(boost_mask | (log_samples == zero), zero,
                               log_samples * (one / alpha_orig))
        return lax.log(d) + lax.log(v) + log_boost
    samples = one - uniform(subkey, (), dtype)
    boost = lax.select(boost_mask, one, lax.pow(samples, one / alpha_orig))
    return d * v * boost


def _gamma_draws(key, a, log_space):
    """One draw per element of a, each from its own key split off `key`."""
    size = math.prod(a.shape)
    if size == 0:
        return fnp.zeros(a.shape, a.dtype)
    keys = split(key, size)
    draw = vmap(functools.partial(_gamma_one, log_space=log_space))
    return fnp.reshape(draw(keys, fnp.reshape(a, (size,))), a.shape)


# The key is a primal (an integer one, so its tangent is symbolically zero): a traced
# key may not be a nondiff argument, which custom_jvp keeps for later traces.
@functools.partial(custom_jvp, nondiff_argnums=(2,))
def _random_gamma(key, a, log_space):
    return _gamma_draws(key, a, log_space)


@_random_gamma.defjvp
def _random_gamma_jvp(log_space, primals, tangents):
    (key, a), (_, ta) = primals, tangents
    out = _random_gamma(key, a, log_space)
    if log_space:
        # d log(x) = dx / x, with x clamped away from the zero it may round to.
        sample = fnp.exp(out)
        sample = fnp.where(sample == 0, np.array(dtypes.finfo(a.dtype).tiny, a.dtype), sample)
        return out, ta * (random_gamma_grad(a, sample) / sample)
    return out, ta * random_gamma_grad(a, out)


@_staged
def _gamma(key, a, *, shape, dtype, log_space):
    a = fnp.broadcast_to(lax.convert_element_type(fnp.asarray(a), dtype), shape)
    return _random_gamma(key, a, log_space)


def _gamma_args(name, key, a, shape, dtype):
    key = _check_key(name, key)
    dtype = _float_dtype(name, dtype)
    if shape is None:
        shape = np.shape(a)
    else:
        shape = _canonical_shape(name, shape)
        _check_shape(name, shape, np.shape(a))
    return key, dtype, tuple(shape)


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) samples, differentiable in `a` (implicit reparameterization)."""
    key, dtype, shape = _gamma_args("gamma", key, a, shape, dtype)
    return _gamma(key, a, shape=shape, dtype=dtype, log_space=False)


def loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a, 1) samples, accurate for small `a` where the samples underflow."""
    key, dtype, shape = _gamma_args("loggamma", key, a, shape, dtype)
    return _gamma(key, a, shape=shape, dtype=dtype, log_space=True)


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) samples, as Ga / (Ga + Gb) from two log-gamma draws."""
    key = _check_key("beta", key)
    dtype = _float_dtype("beta", dtype)
    shape = broadcast_shapes_of("beta", shape, a, b)
    return _beta(key, a, b, shape=shape, dtype=dtype)


@_staged
def _beta(key, a, b, *, shape, dtype):
    key_a, key_b = split(key)
    a = fnp.broadcast_to(lax.convert_element_type(fnp.asarray(a), dtype), shape)
    b = fnp.broadcast_to(lax.convert_element_type(fnp.asarray(b), dtype), shape)
    log_a = _random_gamma(key_a, a, True)
    log_b = _random_gamma(key_b, b, True)
    log_max = lax.max(log_a, log_b)
    scaled_a, scaled_b = fnp.exp(log_a - log_max), fnp.exp(log_b - log_max)
    return scaled_a / (scaled_a + scaled_b)


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) samples over the last axis of alpha: normalized log-gamma draws."""
    key = _check_key("dirichlet", key)
    dtype = _float_dtype("dirichlet", dtype)
    if np.ndim(alpha) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{np.ndim(alpha)}")
    batch = np.shape(alpha)[:-1]
    if shape is None:
        shape = batch
    else:
        shape = _canonical_shape("dirichlet", shape)
        _check_shape("dirichlet", shape, batch)
    return _dirichlet(key, alpha, shape=tuple(shape) + np.shape(alpha)[-1:], dtype=dtype)


@_staged
def _dirichlet(key, alpha, *, shape, dtype):
    alpha = fnp.broadcast_to(lax.convert_element_type(fnp.asarray(alpha), dtype), shape)
    log_draws = _random_gamma(key, alpha, True)
    shifted = fnp.exp(log_draws - lax.stop_gradient(fnp.max(log_draws, -1, keepdims=True)))
    return shifted / fnp.sum(shifted, -1, keepdims=True)


def chisquare(key, df, shape=None, dtype=None):
    """Chi-square(df) samples: 2 * Gamma(df / 2)."""
    key = _check_key("chisquare", key)
    dtype = _float_dtype("chisquare", dtype)
    shape = broadcast_shapes_of("chisquare", shape, df)
    return _chisquare(key, df, shape=shape, dtype=dtype)


@_staged
def _chisquare(key, df, *, shape, dtype):
    half_df = lax.convert_element_type(fnp.asarray(df), dtype) / np.array(2, dtype)
    log_g = _gamma(key, half_df, shape=shape, dtype=dtype, log_space=True)
    return fnp.exp(log_g) * np.array(2, dtype)


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F(dfnum, dfden) samples: a ratio of scaled chi-square draws."""
    key = _check_key("f", key)
    dtype = _float_dtype("f", dtype)
    shape = broadcast_shapes_of("f", shape, dfnum, dfden)
    return _f(key, dfnum, dfden, shape=shape, dtype=dtype)


@_staged
def _f(key, dfnum, dfden, *, shape, dtype):
    dfnum = lax.convert_element_type(fnp.asarray(dfnum), dtype)
    dfden = lax.convert_element_type(fnp.asarray(dfden), dtype)
    key_den, key_num = split(key)
    num = _chisquare(key_num, dfnum, shape=shape, dtype=dtype) / dfnum
    den = _chisquare(key_den, dfden, shape=shape, dtype=dtype) / dfden
    return num / den


def t(key, df, shape=None, dtype=None):
    """Student's t(df) samples: normal / sqrt(chi-square / df)."""
    key = _check_key("t", key)
    dtype = _float_dtype("t", dtype)
    shape = broadcast_shapes_of("t", shape, df)
    return _t(key, df, shape=shape, dtype=dtype)


@_staged
def _t(key, df, *, shape, dtype):
    df = lax.convert_element_type(fnp.asarray(df), dtype)
    key_n, key_g = split(key)
    n = normal(key_n, shape, dtype)
    half_df = df / np.array(2, dtype)
    g = _gamma(key_g, half_df, shape=shape, dtype=dtype, log_space=False)
    return n * fnp.sqrt(half_df / g)


def generalized_normal(key, p, shape=(), dtype=None):
    """Samples with density proportional to exp(-|x|^p)."""
    key = _check_key("generalized_normal", key)
    dtype = _float_dtype("generalized_normal", dtype)
    shape = _canonical_shape("generalized_normal", shape)
    return _generalized_normal(key, p, shape=shape, dtype=dtype)


@_staged
def _generalized_normal(key, p, *, shape, dtype):
    key_g, key_r = split(key)
    inv_p = 1 / p
    g = _gamma(key_g, inv_p, shape=shape, dtype=dtype, log_space=False)
    r = rademacher(key_r, shape, dtype)
    return r * g ** inv_p


def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the d-dimensional unit p-norm ball, of shape (*shape, d)."""
    key = _check_key("ball", key)
    dtype = _float_dtype("ball", dtype)
    shape = _canonical_shape("ball", shape)
    if not isinstance(d, (int, np.integer)):
        raise TypeError(f"random.ball: d must be a concrete int, got {d!r}")
    return _ball(key, p, shape=shape, d=int(d), dtype=dtype)


@_staged
def _ball(key, p, *, shape, d, dtype):
    k1, k2 = split(key)
    g = _generalized_normal(k1, p, shape=(*shape, d), dtype=dtype)
    e = exponential(k2, shape, dtype)
    return g / ((fnp.sum(fnp.abs(g) ** p, -1) + e) ** (1 / p))[..., None]
