"""funcgraph.nn.initializers: the builders of JAX's nn.initializers. Each returns
`init(key, shape, dtype=...) -> array`, drawing with funcgraph.random (bit-identical to jax)."""
import math
import typing

import numpy as np

from funcgraph import dtypes, random
from funcgraph.lax._sharding import sharded_result as _sharded_result
import funcgraph.numpy as fnp

__all__ = [
    "zeros", "ones", "constant", "uniform", "normal", "truncated_normal", "variance_scaling",
    "glorot_uniform", "glorot_normal", "xavier_uniform", "xavier_normal", "lecun_uniform",
    "lecun_normal", "he_uniform", "he_normal", "kaiming_uniform", "kaiming_normal", "orthogonal",
    "delta_orthogonal", "Initializer",
]


@typing.runtime_checkable
class Initializer(typing.Protocol):
    """The type of what the builders return (JAX's nn.initializers.Initializer):
    `init(key, shape, dtype=None, out_sharding=None) -> array`."""

    def __call__(self, key, shape, dtype=None, out_sharding=None):
        raise NotImplementedError


def _dtype(dtype):
    return dtypes.default_float() if dtype is None else dtypes.canonicalize(dtype)


def _shape(shape):
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)


def zeros(key, shape, dtype=None, out_sharding=None):
    return _sharded_result(fnp.zeros(_shape(shape), _dtype(dtype)), out_sharding)


def ones(key, shape, dtype=None, out_sharding=None):
    return _sharded_result(fnp.ones(_shape(shape), _dtype(dtype)), out_sharding)


def constant(value, dtype=None):
    def init(key, shape, dtype=dtype, out_sharding=None):
        return _sharded_result(fnp.full(_shape(shape), value, _dtype(dtype)), out_sharding)
    return init


def uniform(scale=1e-2, dtype=None):
    """Uniform on [0, scale)."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype(dtype)
        return _sharded_result(random.uniform(key, _shape(shape), dtype)
                               * fnp.array(scale, dtype), out_sharding)
    return init


def normal(stddev=1e-2, dtype=None):
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype(dtype)
        return _sharded_result(random.normal(key, _shape(shape), dtype)
                               * fnp.array(stddev, dtype), out_sharding)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype(dtype)
        return _sharded_result(random.truncated_normal(key, lower, upper, _shape(shape), dtype)
                               * fnp.array(stddev, dtype), out_sharding)
    return init


def _size(shape, axes):
    if isinstance(axes, int):
        return shape[axes]
    return math.prod(shape[i] for i in axes)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """Fan-in and fan-out of a (possibly convolutional) weight shape: axes outside
    in/out/batch form the receptive field."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         "weights tensor with default in_axis. Must be at least 2D or specify "
                         "in_axis explicitly.")
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    receptive_field = math.prod(shape) / in_size / out_size / _size(shape, batch_axis)
    return in_size * receptive_field, out_size * receptive_field


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
    """Samples with variance scale / fan (fan_in, fan_out, fan_avg or fan_geo_avg), from a
    truncated normal, a normal or a uniform distribution (real dtypes)."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        return _sharded_result(draw(key, shape, dtype), out_sharding)

    def draw(key, shape, dtype):
        shape = _shape(shape)
        dtype = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominators = {"fan_in": fan_in, "fan_out": fan_out,
                        "fan_avg": (fan_in + fan_out) / 2,
                        "fan_geo_avg": (fan_in * fan_out) ** 0.5}
        if mode not in denominators:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = fnp.array(scale / denominators[mode], dtype)
        real = not dtypes.is_complex(dtype)
        if distribution == "truncated_normal":
            if real:
                # 0.8796... is the stddev of a standard normal truncated to (-2, 2).
                stddev = fnp.sqrt(variance) / fnp.array(.87962566103423978, dtype)
                return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
            # 0.9531... is the stddev of a complex standard normal truncated to modulus 2.
            stddev = fnp.sqrt(variance) / fnp.array(.95311164380491208, dtype)
            return _complex_truncated_normal(key, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * fnp.sqrt(variance)
        if distribution == "uniform":
            if real:
                return random.uniform(key, shape, dtype, -1) * fnp.sqrt(3 * variance)
            return _complex_uniform(key, shape, dtype) * fnp.sqrt(variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}")
    return init


def _complex_polar(key, shape, dtype, modulus):
    """modulus(u) * exp(i theta), u and theta/2pi uniform on [0, 1), as complex dtype."""
    key_r, key_theta = random.split(key)
    real_dtype = dtypes.real_dtype(dtype)
    r = modulus(random.uniform(key_r, shape, real_dtype).astype(dtype))
    theta = 2 * np.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
    return r * fnp.exp(1j * theta)


def _complex_uniform(key, shape, dtype):
    """Uniform on a disk of the complex plane, mean zero and variance one."""
    return _complex_polar(key, shape, dtype, lambda u: fnp.sqrt(2 * u))


def _complex_truncated_normal(key, upper, shape, dtype):
    """A complex normal (variance one before truncation) with modulus below `upper`."""
    scale = 1 - fnp.exp(fnp.array(-(upper ** 2), dtype))
    return _complex_polar(key, shape, dtype, lambda u: fnp.sqrt(-fnp.log(1 - scale * u)))


def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis,
                            batch_axis, dtype)


def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis,
                            batch_axis, dtype)


def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis,
                            batch_axis, dtype)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """Weights whose slices along column_axis are orthonormal (a random orthogonal matrix,
    reshaped), times scale."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        if out_sharding is not None:
            raise NotImplementedError("orthogonal: out_sharding (as jax's)")
        dtype = _dtype(dtype)
        shape = _shape(shape)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if 0 in shape:
            return fnp.zeros(shape, dtype)
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        rest = tuple(np.delete(np.array(shape), column_axis))
        q = fnp.moveaxis(fnp.reshape(q, rest + (n_cols,)), -1, column_axis)
        return np.array(scale, dtype) * q
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """Convolution kernels (3-5 d) that are zero except an orthogonal matrix at the spatial
    centre, so the convolution starts as an orthogonal map."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        if out_sharding is not None:
            raise NotImplementedError("delta_orthogonal: out_sharding (as jax's)")
        dtype = _dtype(dtype)
        shape = _shape(shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        matrix = orthogonal(scale, column_axis, dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return fnp.zeros(shape, dtype).at[centre].set(matrix)
    return init
