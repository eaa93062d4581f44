"""Samplers that transform uniform or normal draws directly (each computed as jax computes
it, so the samples are jax's bit for bit for the same key), and the key helpers."""
import numpy as np

from funcgraph import dtypes, lax
import funcgraph.numpy as fnp
from funcgraph.numpy import linalg as fla
from funcgraph.random._core import (
    _canonical_shape, _check_key, _check_shape, _float_dtype, _staged, bernoulli,
    exponential, key_data, normal, uniform)
from funcgraph.random import _core

__all__ = ["cauchy", "laplace", "logistic", "pareto", "rademacher", "maxwell",
           "double_sided_maxwell", "weibull_min", "rayleigh", "wald", "geometric",
           "triangular", "lognormal", "multivariate_normal", "orthogonal", "key_impl", "clone"]


def broadcast_shapes_of(name, shape, *params):
    """The sample shape: `shape` checked against the parameters' shapes, or their
    broadcast when it is None."""
    param_shapes = [np.shape(p) for p in params]
    if shape is None:
        return tuple(np.broadcast_shapes(*param_shapes))
    shape = _canonical_shape(name, shape)
    _check_shape(name, shape, *param_shapes)
    return shape


def _param(x, dtype, shape=None):
    x = lax.convert_element_type(fnp.asarray(x), dtype)
    return x if shape is None else fnp.broadcast_to(x, shape)


def _unit_sampler(name, staged):
    """A sampler of signature (key, shape=(), dtype=None) over a staged kernel."""
    def sampler(key, shape=(), dtype=None):
        key = _check_key(name, key)
        return staged(key, shape=_canonical_shape(name, shape), dtype=_float_dtype(name, dtype))
    sampler.__name__ = sampler.__qualname__ = name
    return sampler


@_staged
def _cauchy(key, *, shape, dtype):
    u = _core._uniform(key, np.array(dtypes.finfo(dtype).eps, dtype), np.array(1, dtype),
                       shape=shape, dtype=dtype)
    return lax.tan(np.array(np.pi, dtype) * (u - np.array(0.5, dtype)))


@_staged
def _laplace(key, *, shape, dtype):
    lo = np.array(-1 + dtypes.finfo(dtype).epsneg, dtype)
    u = _core._uniform(key, lo, np.array(1, dtype), shape=shape, dtype=dtype)
    return lax.sign(u) * lax.log1p(-lax.abs(u))


@_staged
def _logistic(key, *, shape, dtype):
    u = _core._uniform(key, np.array(dtypes.finfo(dtype).tiny, dtype), np.array(1, dtype),
                       shape=shape, dtype=dtype)
    return lax.log(u) - lax.log1p(-u)


@_staged
def _maxwell(key, *, shape, dtype):
    return fla.norm(normal(key, (*shape, 3), dtype), axis=-1)


cauchy = _unit_sampler("cauchy", _cauchy)
cauchy.__doc__ = "Standard Cauchy samples: tan(pi (u - 1/2))."
laplace = _unit_sampler("laplace", _laplace)
laplace.__doc__ = "Standard Laplace samples, density exp(-|x|) / 2."
logistic = _unit_sampler("logistic", _logistic)
logistic.__doc__ = "Standard logistic samples: log(u) - log(1 - u)."
maxwell = _unit_sampler("maxwell", _maxwell)
maxwell.__doc__ = "Maxwell samples: the norm of three standard normals."


def rademacher(key, shape=(), dtype=None):
    """Random signs, -1 or +1 with equal probability."""
    key = _check_key("rademacher", key)
    shape = _canonical_shape("rademacher", shape)
    dtype = dtypes.canonicalize(dtypes.default_int() if dtype is None else dtype)
    return _rademacher(key, shape=shape, dtype=dtype)


@_staged
def _rademacher(key, *, shape, dtype):
    draws = bernoulli(key, np.float32(0.5), shape).astype(dtype)
    return (np.array(2, dtype) * draws - np.array(1, dtype)).astype(dtype)


def pareto(key, b, shape=None, dtype=None):
    """Pareto(b) samples on [1, inf): exp(E / b) for a unit exponential E."""
    key = _check_key("pareto", key)
    dtype = _float_dtype("pareto", dtype)
    shape = broadcast_shapes_of("pareto", shape, b)
    return _pareto(key, b, shape=shape, dtype=dtype)


@_staged
def _pareto(key, b, *, shape, dtype):
    return lax.exp(exponential(key, shape, dtype) / _param(b, dtype))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Maxwell samples with a random sign, scaled and shifted; shape + the parameters'
    broadcast shape."""
    key = _check_key("double_sided_maxwell", key)
    dtype = _float_dtype("double_sided_maxwell", dtype)
    shape = _canonical_shape("double_sided_maxwell", shape)
    return _double_sided_maxwell(key, loc, scale, shape=shape, dtype=dtype)


@_staged
def _double_sided_maxwell(key, loc, scale, *, shape, dtype):
    params_shape = np.broadcast_shapes(np.shape(loc), np.shape(scale))
    shape = (shape or params_shape) + params_shape
    maxwell_key, sign_key = _core.split(key)
    draws = _maxwell(maxwell_key, shape=shape, dtype=dtype)
    sign = _rademacher(sign_key, shape=shape, dtype=dtype)
    return sign * draws * scale + loc


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples by inverting the CDF: scale * (-log(1 - u))^(1 / concentration)."""
    key = _check_key("weibull_min", key)
    dtype = _float_dtype("weibull_min", dtype)
    shape = _canonical_shape("weibull_min", shape)
    return _weibull_min(key, scale, concentration, shape=shape, dtype=dtype)


@_staged
def _weibull_min(key, scale, concentration, *, shape, dtype):
    u = uniform(key, shape, dtype)
    return fnp.power(-fnp.log1p(-u), 1.0 / concentration) * scale


def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh(scale) samples: scale * sqrt(-2 log u)."""
    key = _check_key("rayleigh", key)
    dtype = _float_dtype("rayleigh", dtype)
    shape = broadcast_shapes_of("rayleigh", shape, scale)
    return _rayleigh(key, scale, shape=shape, dtype=dtype)


@_staged
def _rayleigh(key, scale, *, shape, dtype):
    u = uniform(key, shape, dtype)
    return _param(scale, dtype, shape) * lax.sqrt(lax.log(u) * np.array(-2, dtype))


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) samples with the given mean and unit shape parameter."""
    key = _check_key("wald", key)
    dtype = _float_dtype("wald", dtype)
    shape = broadcast_shapes_of("wald", shape, mean)
    return _wald(key, mean, shape=shape, dtype=dtype)


@_staged
def _wald(key, mean, *, shape, dtype):
    k1, k2 = _core.split(key)
    mean = _param(mean, dtype, shape)
    y = lax.integer_pow(normal(k1, shape, dtype), 2)
    z = uniform(k2, shape, dtype)
    mean_sq = lax.integer_pow(mean, 2)
    root = lax.sqrt(4 * mean * y + mean_sq * lax.integer_pow(y, 2))
    x = mean + mean_sq * y / 2 - mean / 2 * root
    return lax.select(z <= mean / (mean + x), x, mean_sq / x)


def geometric(key, p, shape=None, dtype=None):
    """Geometric(p) samples on {1, 2, ...}: the number of trials to the first success."""
    key = _check_key("geometric", key)
    dtype = dtypes.canonicalize(dtypes.default_int() if dtype is None else dtype)
    if not dtypes.is_int(dtype):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    shape = broadcast_shapes_of("geometric", shape, p)
    return _geometric(key, p, shape=shape, dtype=dtype)


@_staged
def _geometric(key, p, *, shape, dtype):
    p = fnp.asarray(p)
    if not dtypes.is_inexact(p.dtype):
        p = p.astype(dtypes.default_float())
    u = uniform(key, shape, p.dtype)
    # u == 0 maps to 1 (as jax), keeping log(u) finite.
    u = fnp.where(u == 0, np.array(1, p.dtype), u)
    log_one_minus_p = fnp.broadcast_to(lax.log1p(-p), shape)
    return (lax.floor(lax.log(u) / log_one_minus_p) + np.array(1, p.dtype)).astype(dtype)


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular(left, mode, right) samples by inverting the CDF."""
    key = _check_key("triangular", key)
    dtype = _float_dtype("triangular", dtype)
    shape = broadcast_shapes_of("triangular", shape, left, mode, right)
    return _triangular(key, left, mode, right, shape=shape, dtype=dtype)


@_staged
def _triangular(key, left, mode, right, *, shape, dtype):
    left, mode, right = (_param(v, dtype, shape) for v in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = uniform(key, shape, dtype)
    below = left + lax.sqrt(u * (right - left) * (mode - left))
    above = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, below, above)


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
    """exp(sigma * N(0, 1)) samples."""
    key = _check_key("lognormal", key)
    dtype = dtypes.canonicalize(dtypes.default_float() if dtype is None else dtype)
    if not dtypes.is_inexact(dtype):
        raise ValueError(f"dtype argument to `lognormal` must be a float or complex dtype, "
                         f"got {dtype}")
    shape = broadcast_shapes_of("lognormal", shape, sigma)
    return _lognormal(key, sigma, shape=shape, dtype=dtype)


@_staged
def _lognormal(key, sigma, *, shape, dtype):
    return lax.exp(normal(key, shape, dtype) * _param(sigma, dtype))


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """N(mean, cov) samples of shape shape + mean.shape[-1:], from a factor of cov
    ('cholesky', or 'svd' / 'eigh' for a singular cov)."""
    key = _check_key("multivariate_normal", key)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    mean, cov = fnp.asarray(mean), fnp.asarray(cov)
    inexact = fnp.result_type(mean, cov)
    if not dtypes.is_inexact(inexact):
        inexact = dtypes.default_float()
    mean, cov = mean.astype(inexact), cov.astype(inexact)
    dtype = mean.dtype if dtype is None else dtypes.canonicalize(dtype)
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, "
                         f"got {dtype}")
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {cov.shape}.")
    if shape is None:
        shape = tuple(np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    else:
        shape = _canonical_shape("multivariate_normal", shape)
        _check_shape("multivariate_normal", shape, mean.shape[:-1], cov.shape[:-2])
    return _multivariate_normal(key, mean, cov, shape=shape, dtype=dtype, method=method)


@_staged
def _multivariate_normal(key, mean, cov, *, shape, dtype, method):
    if method == "svd":
        u, s, _ = fla.svd(cov)
        factor = u * fnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = fla.eigh(cov)
        factor = v * fnp.sqrt(w[..., None, :])
    else:
        factor = fla.cholesky(cov)
    draws = normal(key, shape + mean.shape[-1:], dtype)
    return mean + fnp.einsum("...ij,...j->...i", factor, draws)


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Haar-random (n, m) matrices with orthonormal columns (or rows when n < m)."""
    key = _check_key("orthogonal", key)
    dtype = _float_dtype("orthogonal", dtype)
    shape = _canonical_shape("orthogonal", shape)
    m = n if m is None else m
    return _orthogonal(key, shape=shape, n=int(n), m=int(m), dtype=dtype)


@_staged
def _orthogonal(key, *, shape, n, m, dtype):
    z = normal(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = fla.qr(z)
    x = q * fnp.expand_dims(fnp.sign(fnp.diagonal(r, axis1=-2, axis2=-1)), -2)
    return fnp.swapaxes(x, -1, -2) if n < m else x


def key_impl(keys):
    """The name of the keys' PRNG implementation: always 'threefry2x32' in funcgraph."""
    key_data(keys)
    return "threefry2x32"


def clone(key):
    """The same key (an identity: funcgraph has no key-reuse checking)."""
    return key
