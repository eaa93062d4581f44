"""The keys, the bits and the samplers built directly on them (bit-exact with jax)."""
import functools
import math
import operator
from collections.abc import Sequence

import numpy as np

from funcgraph import core, dtypes, lax
from funcgraph.config import config
from funcgraph.lax._sharding import sharded_result
from funcgraph.random import _keys
import funcgraph.numpy as fnp
from funcgraph.transforms.jit import jit

__all__ = [
    "PRNGKey", "key", "key_data", "wrap_key_data", "split", "fold_in", "bits", "uniform",
    "normal", "truncated_normal", "bernoulli", "randint", "choice", "permutation",
    "categorical", "gumbel", "exponential", "threefry_2x32",
]

_U32 = np.dtype(np.uint32)
_UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32,
                64: np.dtype(np.uint64)}
# Threefry-2x32 rotation distances (Salmon et al. 2011), alternating every 4 rounds.
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KEY_PARITY = 0x1BD11BDA


def _staged(fn):
    """Run fn(*arrays, **static) as one compiled call, as jax does. XLA then evaluates the
    floating-point math exactly as under an outer jit (it contracts mul+add into FMAs, which
    the NumPy eager path cannot), so eager draws equal jitted ones and jax's bit for bit."""
    compiled = {}

    @functools.wraps(fn)
    def wrapper(*args, **static):
        cache_key = tuple(sorted(static.items()))
        if cache_key not in compiled:
            compiled[cache_key] = jit(functools.partial(fn, **static))
        return compiled[cache_key](*args)
    return wrapper


def _host_param(x, dtype):
    """Python scalars convert on the host, straight to dtype (no float32 double rounding)."""
    if isinstance(x, (int, float)) or isinstance(x, np.generic):
        return np.array(x, dtype)
    return x


def _u32(value):
    return np.uint32(value)


def _rotate_left(x, distance):
    return lax.bitwise_or(lax.shift_left(x, _u32(distance)),
                          lax.shift_right_logical(x, _u32(32 - distance)))


def _threefry_hash(k0, k1, x0, x1):
    """The 20-round threefry2x32 block function on uint32 arrays of one shape."""
    k2 = lax.bitwise_xor(lax.bitwise_xor(k0, k1), _u32(_KEY_PARITY))
    schedule = (k0, k1, k2)
    x0 = lax.add(x0, k0)
    x1 = lax.add(x1, k1)
    for block in range(5):
        for distance in _ROTATIONS[block % 2]:
            x0 = lax.add(x0, x1)
            x1 = lax.bitwise_xor(x0, _rotate_left(x1, distance))
        x0 = lax.add(x0, schedule[(block + 1) % 3])
        x1 = lax.add(lax.add(x1, schedule[(block + 2) % 3]), _u32(block + 1))
    return x0, x1


def _key_words(key, shape):
    """The key's two words, broadcast to `shape` (explicitly, so vmap sees plain ops)."""
    words = []
    for i in range(2):
        word = lax.index_in_dim(key, i, axis=0, keepdims=False)
        words.append(lax.broadcast_in_dim(word, tuple(shape), ()))
    return words


def _hash_counters(key, shape):
    """threefry2x32 of the counters 0..prod(shape)-1 (high words zero), as jax's
    partitionable scheme does; returns the two output words, each of `shape`."""
    shape = tuple(shape)
    size = math.prod(shape)
    if size >= 2 ** 32:
        raise NotImplementedError(
            f"funcgraph.random: {size} draws need 64-bit counters; at most 2**32 - 1 per call")
    lo = lax.reshape(lax.iota(_U32, size), shape)
    hi = lax.broadcast_in_dim(_u32(0), shape, ())
    k0, k1 = _key_words(key, shape)
    return _threefry_hash(k0, k1, hi, lo)


def threefry_2x32(keypair, count):
    """The threefry2x32 hash of a uint32 `count` array under a (k0, k1) key pair, laid out
    as jax's `threefry_2x32` does (the flat counts split in two halves)."""
    k0, k1 = (_as_u32_array(k) for k in keypair)
    count = _as_u32_array(count)
    flat = lax.reshape(count, (math.prod(count.shape),))
    odd = flat.shape[0] % 2
    if odd:
        flat = lax.concatenate([flat, lax.broadcast_in_dim(_u32(0), (1,), ())], 0)
    half = flat.shape[0] // 2
    x0, x1 = lax.slice(flat, (0,), (half,)), lax.slice(flat, (half,), (2 * half,))
    k0 = lax.broadcast_in_dim(k0, (half,), ())
    k1 = lax.broadcast_in_dim(k1, (half,), ())
    out = lax.concatenate(list(_threefry_hash(k0, k1, x0, x1)), 0)
    if odd:
        out = lax.slice(out, (0,), (2 * half - 1,))
    return lax.reshape(out, count.shape)


def _as_u32_array(x):
    x = fnp.asarray(x)
    if x.dtype != _U32:
        raise TypeError(f"threefry_2x32 needs uint32 operands, got {x.dtype}")
    return x


def _check_key(name, key):
    """The raw uint32[2] data of a single key (a typed key array is unwrapped)."""
    if _keys.is_key_array(key):
        if key.shape:
            raise TypeError(f"{name} accepts a single key, but was given a key array of "
                            f"shape {key.shape} != (). Use vmap for batching.")
        return _keys.unwrap(key)
    key = fnp.asarray(key)
    if key.dtype != _U32 or key.shape != (2,):
        hint = (" For a batch of keys, map over it with funcgraph.vmap."
                if key.ndim > 1 and key.shape[-1:] == (2,) else "")
        raise TypeError(f"random.{name} needs a single PRNG key, a uint32[2] array "
                        f"(from random.PRNGKey/key/split); got {key.dtype}{list(key.shape)}."
                        + hint)
    return key


def _canonical_shape(name, shape):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        shape = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"random.{name}: shape must be a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"random.{name}: shape must be nonnegative, got {shape}")
    return shape


def _check_shape(name, shape, *param_shapes):
    if param_shapes:
        joint = np.broadcast_shapes(shape, *param_shapes)
        if joint != tuple(shape):
            raise ValueError(f"random.{name}: the shape {shape} must be a broadcast-compatible "
                             f"extension of the parameter shapes {param_shapes}")


def _float_dtype(name, dtype):
    dtype = dtypes.canonicalize(dtypes.default_float() if dtype is None else dtype)
    if not dtypes.is_float(dtype):
        raise TypeError(f"random.{name} needs a floating dtype, got {dtype}")
    return dtype


# ----------------------------------------------------------------------------- keys

def _seed_words(seed):
    """(hi, lo) uint32 words of an integer seed; a 32-bit seed has hi = 0."""
    if core.is_python_scalar(seed) or isinstance(seed, np.integer):
        if isinstance(seed, (bool, float, np.bool_)) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"PRNG key seed must be an integer, got {seed!r}")
        seed = int(seed)
        if not _x64():
            seed = seed & 0xFFFFFFFF  # a 32-bit seed, wrapped as jax does without x64
        return _u32((seed >> 32) & 0xFFFFFFFF), _u32(seed & 0xFFFFFFFF)
    seed = fnp.asarray(seed)
    if seed.ndim:
        raise TypeError(f"PRNG key seed must be a scalar, got shape {seed.shape}; "
                        "use funcgraph.vmap for batching")
    if not dtypes.is_int(seed.dtype):
        raise TypeError(f"PRNG key seed must be an integer, got {seed.dtype}")
    lo = lax.convert_element_type(seed, _U32)
    if seed.dtype.itemsize == 8:
        hi = lax.convert_element_type(
            lax.shift_right_logical(seed, np.array(32, seed.dtype)), _U32)
    else:
        hi = lax.broadcast_in_dim(_u32(0), (), ())
    return hi, lo


def _out_sharding(fn):
    """fn with jax's keyword-only `out_sharding=` (the result laid out as it says)."""
    @functools.wraps(fn)
    def wrapper(*args, out_sharding=None, **kwargs):
        return sharded_result(fn(*args, **kwargs), out_sharding)
    return wrapper


def _x64():
    return config.jax_enable_x64


def PRNGKey(seed):
    """A raw PRNG key, uint32[2], from an integer seed (as JAX's random.PRNGKey; a typed
    key under jax_enable_custom_prng)."""
    return _rewrap(False, _raw_key(seed))


def _raw_key(seed):
    hi, lo = _seed_words(seed)
    return fnp.stack([fnp.asarray(hi), fnp.asarray(lo)])


def key(seed, *, impl=None):
    """A typed key array, key<fry>[], from an integer seed (as JAX's random.key)."""
    return _keys.wrap(_raw_key(seed), _keys.impl_name(impl))


def key_data(keys):
    """The raw uint32[..., 2] data of keys (a raw key array is returned as it is)."""
    if _keys.is_key_array(keys):
        return _keys.unwrap(keys)
    keys = fnp.asarray(keys)
    if keys.dtype != _U32 or keys.shape[-1:] != (2,):
        raise TypeError(f"key_data needs uint32[..., 2] keys, got {keys.dtype}{list(keys.shape)}")
    return keys


def wrap_key_data(key_bits_array, *, impl=None):
    """A typed key array over raw uint32[..., 2] key data."""
    if _keys.is_key_array(key_bits_array):
        raise TypeError("wrap_key_data: the argument is already a key array; pass its raw "
                        "data (random.key_data)")
    return _keys.wrap(fnp.asarray(key_bits_array), _keys.impl_name(impl))


def _rewrap(typed, raw):
    # with jax_enable_custom_prng (as jax), raw keys in give typed keys out
    return _keys.wrap(raw) if typed or config.jax_enable_custom_prng else raw


def split(key, num=2):
    """`num` (an int or a shape) new keys, stacked as uint32[*num, 2]."""
    typed = _keys.is_key_array(key)
    key = _check_key("split", key)
    shape = tuple(num) if isinstance(num, Sequence) else (operator.index(num),)
    b0, b1 = _hash_counters(key, shape)
    return _rewrap(typed, fnp.stack([b0, b1], axis=len(shape)))


def fold_in(key, data):
    """A new key that is a deterministic function of `key` and a 32-bit integer."""
    typed = _keys.is_key_array(key)
    key = _check_key("fold_in", key)
    if np.ndim(data) or (hasattr(data, "shape") and data.shape):
        raise TypeError("fold_in accepts a scalar, but was given an array of shape "
                        f"{np.shape(data)}; use funcgraph.vmap for batching")
    if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
        word = fnp.asarray(_u32(int(data) & 0xFFFFFFFF))
    else:
        word = lax.convert_element_type(fnp.asarray(data), _U32)
    k0, k1 = _key_words(key, ())
    b0, b1 = _threefry_hash(k0, k1, lax.broadcast_in_dim(_u32(0), (), ()), word)
    return _rewrap(typed, fnp.stack([b0, b1]))


# ----------------------------------------------------------------------------- bits

def _random_bits(key, bit_width, shape):
    b0, b1 = _hash_counters(key, shape)
    dtype = _UINT_DTYPES[bit_width]
    if bit_width == 64:
        hi = lax.convert_element_type(b0, dtype)
        lo = lax.convert_element_type(b1, dtype)
        return lax.bitwise_or(lax.shift_left(hi, np.array(32, dtype)), lo)
    mixed = lax.bitwise_xor(b0, b1)
    return mixed if bit_width == 32 else lax.convert_element_type(mixed, dtype)


@_out_sharding
def bits(key, shape=(), dtype=None):
    """Uniform random bits of an unsigned integer dtype."""
    key = _check_key("bits", key)
    dtype = dtypes.canonicalize(dtypes.default_uint() if dtype is None else dtype)
    if not dtypes.is_unsigned(dtype):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    return _random_bits(key, dtype.itemsize * 8, _canonical_shape("bits", shape))


def _broadcast_param(x, dtype, shape):
    """A parameter converted to dtype and broadcast to `shape` (rank-extended first)."""
    x = lax.convert_element_type(fnp.asarray(x), dtype)
    return fnp.broadcast_to(x, shape)


@_staged
def _uniform(key, minval, maxval, *, shape, dtype):
    """The mantissa trick: random mantissa bits under the exponent of 1.0 give a float in
    [1, 2); subtract 1 and scale to [minval, maxval)."""
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    if nbits not in (16, 32, 64):
        raise TypeError(f"uniform only accepts 16-, 32- or 64-bit floats, got {dtype}")
    rng_bits = 8 if nmant < 8 else nbits
    uint_dtype = _UINT_DTYPES[nbits]
    raw = _random_bits(key, rng_bits, shape)
    if rng_bits != nbits:
        raw = lax.convert_element_type(raw, uint_dtype)
    mantissa = lax.shift_right_logical(raw, np.array(rng_bits - nmant, uint_dtype))
    one_bits = np.array(1.0, dtype).view(uint_dtype)
    floats = lax.sub(lax.bitcast_convert_type(lax.bitwise_or(mantissa, one_bits), dtype),
                     np.array(1.0, dtype))
    lo = _broadcast_param(minval, dtype, shape)
    hi = _broadcast_param(maxval, dtype, shape)
    return lax.max(lo, lax.add(lax.mul(floats, lax.sub(hi, lo)), lo))


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0, *, out_sharding=None):
    """Uniform floats in [minval, maxval)."""
    return sharded_result(_uniform_of(key, shape, dtype, minval, maxval), out_sharding)


def _uniform_of(key, shape, dtype, minval, maxval):
    key = _check_key("uniform", key)
    shape = _canonical_shape("uniform", shape)
    dtype = _float_dtype("uniform", dtype)
    _check_shape("uniform", shape, np.shape(minval), np.shape(maxval))
    return _uniform(key, _host_param(minval, dtype), _host_param(maxval, dtype),
                    shape=shape, dtype=dtype)


def _sqrt2(dtype):
    return np.array(np.sqrt(2), dtype)


@_staged
def _normal_real(key, *, shape, dtype):
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = _uniform(key, lo, np.array(1.0, dtype), shape=shape, dtype=dtype)
    return lax.mul(fnp.broadcast_to(_sqrt2(dtype), shape), lax.erf_inv(u))


@_staged
def _normal_complex(key, *, shape, dtype):
    """(re + i im) / sqrt 2 from two real draws; one program, as jax's (XLA divides by the
    constant as a multiplication by its reciprocal)."""
    real_dtype = np.array(0, dtype).real.dtype
    key_re, key_im = split(key)
    re = _normal_real(key_re, shape=shape, dtype=real_dtype).astype(dtype)
    im = _normal_real(key_im, shape=shape, dtype=real_dtype).astype(dtype)
    return (re + np.array(1j, dtype) * im) / np.array(np.sqrt(2), dtype)


def normal(key, shape=(), dtype=None, *, out_sharding=None):
    """Standard normal samples (inverse-CDF of a uniform; complex dtypes split the key)."""
    return sharded_result(_normal_of(key, shape, dtype), out_sharding)


def _normal_of(key, shape, dtype):
    key = _check_key("normal", key)
    shape = _canonical_shape("normal", shape)
    dtype = dtypes.canonicalize(dtypes.default_float() if dtype is None else dtype)
    if dtypes.is_complex(dtype):
        return _normal_complex(key, shape=shape, dtype=dtype)
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `normal` must be a float or complex dtype, "
                         f"got {dtype}")
    return _normal_real(key, shape=shape, dtype=dtype)


@_out_sharding
def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal samples truncated to the open interval (lower, upper)."""
    key = _check_key("truncated_normal", key)
    dtype = _float_dtype("truncated_normal", dtype)
    if shape is None:
        shape = np.broadcast_shapes(np.shape(lower), np.shape(upper))
    else:
        shape = _canonical_shape("truncated_normal", shape)
        _check_shape("truncated_normal", shape, np.shape(lower), np.shape(upper))
    return _truncated_normal(key, _host_param(lower, dtype), _host_param(upper, dtype),
                             shape=tuple(shape), dtype=dtype)


@_staged
def _truncated_normal(key, lower, upper, *, shape, dtype):
    sqrt2 = _sqrt2(dtype)
    lower = lax.convert_element_type(fnp.asarray(lower), dtype)
    upper = lax.convert_element_type(fnp.asarray(upper), dtype)
    a = lax.erf(lax.div(lower, fnp.broadcast_to(sqrt2, lower.shape)))
    b = lax.erf(lax.div(upper, fnp.broadcast_to(sqrt2, upper.shape)))
    u = _uniform(key, a, b, shape=shape, dtype=dtype)
    out = lax.mul(fnp.broadcast_to(sqrt2, shape), lax.erf_inv(u))
    # Clamp into the open interval: rounding (or u == a) may land on the bounds.
    lo = lax.nextafter(lax.stop_gradient(lower), fnp.full(lower.shape, np.inf, dtype))
    hi = lax.nextafter(lax.stop_gradient(upper), fnp.full(upper.shape, -np.inf, dtype))
    return fnp.clip(out, lo, hi)


@_out_sharding
def bernoulli(key, p=np.float32(0.5), shape=None, mode="low"):
    """Booleans that are True with probability p."""
    key = _check_key("bernoulli", key)
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    p = fnp.asarray(p)
    if not dtypes.is_float(p.dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {p.dtype}.")
    if shape is None:
        shape = p.shape
    else:
        shape = _canonical_shape("bernoulli", shape)
        _check_shape("bernoulli", shape, p.shape)
    return _bernoulli(key, p, shape=tuple(shape), mode=mode)


@_staged
def _bernoulli(key, p, *, shape, mode):
    dtype = p.dtype
    zero, one = np.array(0.0, dtype), np.array(1.0, dtype)
    if mode == "high":
        both = _uniform(key, zero, one, shape=(2, *shape), dtype=dtype)
        u1, u2 = both[0], both[1]
        u2 = u2 * np.array(2.0 ** -dtypes.finfo(dtype).nmant, dtype)
        return u2 < p - u1
    return _uniform(key, zero, one, shape=shape, dtype=dtype) < p


@_out_sharding
def exponential(key, shape=(), dtype=None):
    """Samples of the unit-rate exponential distribution."""
    key = _check_key("exponential", key)
    shape = _canonical_shape("exponential", shape)
    dtype = _float_dtype("exponential", dtype)
    return _exponential(key, shape=shape, dtype=dtype)


@_staged
def _exponential(key, *, shape, dtype):
    u = _uniform(key, np.array(0.0, dtype), np.array(1.0, dtype), shape=shape, dtype=dtype)
    # log1p(-u): the argument of the log is 1 - u, in (0, 1].
    return lax.neg(lax.log1p(lax.neg(u)))


@_staged
def _gumbel(key, *, shape, dtype, mode):
    info = dtypes.finfo(dtype)
    if mode == "high":
        both = _uniform(key, np.array(0.0, dtype), np.array(1.0, dtype), shape=(2, *shape),
                        dtype=dtype)
        high, low = both[0], both[1]
        x = fnp.where(high >= np.array(0.5, dtype), high,
                      high + np.array(2.0 ** -info.nmant, dtype) * low
                      + np.array(info.tiny, dtype))
        return -fnp.log(-fnp.log1p(-x))
    tiny, one = np.array(info.tiny, dtype), np.array(1.0, dtype)
    u = _uniform(key, tiny, one, shape=shape, dtype=dtype)
    return -fnp.log(-fnp.log(u))


@_out_sharding
def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel samples; mode 'low' (default) or 'high' (finer near 0)."""
    key = _check_key("gumbel", key)
    shape = _canonical_shape("gumbel", shape)
    dtype = _float_dtype("gumbel", dtype)
    mode = "low" if mode is None else mode
    if mode not in ("high", "low"):
        raise ValueError(f"gumbel mode must be 'low' or 'high' (funcgraph lacks 'highest'), "
                         f"got {mode!r}")
    return _gumbel(key, shape=shape, dtype=dtype, mode=mode)


@_out_sharding
def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Category indices drawn from softmax(logits) along `axis` (the Gumbel-max trick)."""
    key = _check_key("categorical", key)
    logits = fnp.asarray(logits)
    axis = core_axis(axis, logits.ndim)
    batch_shape = tuple(np.delete(logits.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = _canonical_shape("categorical", shape)
        _check_shape("categorical", shape, batch_shape)
    mode = "low" if mode is None else mode
    return _categorical(key, logits, axis=axis, shape=shape, batch_shape=batch_shape,
                        replace=bool(replace), mode=mode)


@_staged
def _categorical(key, logits, *, axis, shape, batch_shape, replace, mode):
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        sample_shape = list(shape[len(prefix):])
        sample_shape.insert(axis, logits.shape[axis])
        noise = gumbel(key, (*prefix, *sample_shape), logits.dtype, mode=mode)
        expanded = fnp.reshape(logits, (1,) * len(prefix) + logits.shape)
        return fnp.argmax(noise + expanded, axis=len(prefix) + axis)
    noisy = logits + gumbel(key, logits.shape, logits.dtype, mode=mode)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                         f"of categories ({logits.shape[axis]}).")
    _, indices = lax.top_k(fnp.moveaxis(noisy, axis, -1), k)
    # indices: batch_shape + (k,) -> prefix + batch_shape
    moved = fnp.moveaxis(indices, -1, 0)
    return fnp.reshape(moved, shape)


def core_axis(axis, ndim):
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


def _integer_bound(dtype, other, which):
    info, other_info = dtypes.iinfo(dtype), dtypes.iinfo(other)
    if which == "max":
        return min(int(info.max), int(other_info.max))
    return max(int(info.min), int(other_info.min))


def _convert_and_clip(x, dtype):
    """x converted to the integer dtype, clipped to its range rather than wrapped."""
    lo = np.array(_integer_bound(dtype, x.dtype, "min"), x.dtype)
    hi = np.array(_integer_bound(dtype, x.dtype, "max"), x.dtype)
    clipped = lax.min(lax.max(x, fnp.broadcast_to(lo, x.shape)), fnp.broadcast_to(hi, x.shape))
    return lax.convert_element_type(clipped, dtype)


def _integer_param(x):
    x = fnp.asarray(x)
    if not dtypes.is_int(x.dtype):
        x = x.astype(dtypes.default_int())
    return x


@_out_sharding
def randint(key, shape, minval, maxval, dtype=None):
    """Integers in [minval, maxval), from 2 * nbits random bits per value (small bias)."""
    key = _check_key("randint", key)
    shape = _canonical_shape("randint", shape)
    dtype = dtypes.canonicalize(dtypes.default_int() if dtype is None else dtype)
    if not dtypes.is_int(dtype):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    _check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    minval, maxval = _integer_param(minval), _integer_param(maxval)
    info = dtypes.iinfo(dtype)
    if info.bits < 32:
        # As jax: sample narrow dtypes in int32 (less bias), then cast.
        i32 = np.dtype(np.int32)
        minval = fnp.clip(minval.astype(i32), int(info.min), int(info.max))
        maxval = fnp.clip(maxval.astype(i32), int(info.min), int(info.max) + 1)
        return _randint(key, minval, maxval, shape, i32).astype(dtype)
    return _randint(key, minval, maxval, shape, dtype)


def _randint(key, minval, maxval, shape, dtype):
    top = _integer_bound(dtype, maxval.dtype, "max")
    maxval_out_of_range = maxval > np.array(top, maxval.dtype)
    minval = fnp.broadcast_to(_convert_and_clip(minval, dtype), shape)
    maxval = fnp.broadcast_to(_convert_and_clip(maxval, dtype), shape)
    maxval_out_of_range = fnp.broadcast_to(maxval_out_of_range, shape)
    nbits = dtypes.iinfo(dtype).bits

    k1, k2 = split(key)
    higher = _random_bits(k1, nbits, shape)
    lower = _random_bits(k2, nbits, shape)
    udtype = _UINT_DTYPES[nbits]
    span = lax.convert_element_type(lax.sub(maxval, minval), udtype)
    ones = fnp.ones(shape, udtype)
    # An empty range always gives minval; an out-of-range maxval widens the span by one
    # (wrapping to 0 at the full range, where the remainders below then do nothing).
    span = lax.select(maxval <= minval, ones, span)
    span = lax.select(maxval_out_of_range & (maxval > minval), lax.add(span, ones), span)
    # (hi * 2**nbits + lo) % span, without overflow: 2**nbits % span from half-width powers.
    multiplier = lax.rem(fnp.full(shape, 2 ** (nbits // 2), udtype), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher, span), multiplier), lax.rem(lower, span))
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


def _shuffle(key, x, axis):
    """Sort by fresh random 32-bit keys, enough rounds that ties are very unlikely."""
    size = math.prod(x.shape)
    num_rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(num_rounds):
        key, subkey = split(key)
        sort_keys = _random_bits(subkey, 32, x.shape)
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


@_out_sharding
def permutation(key, x, axis=0, independent=False):
    """A random permutation of arange(x) (int x) or of x along `axis`."""
    key = _check_key("permutation", key)
    if not np.ndim(x) and not (hasattr(x, "shape") and x.shape):
        if not isinstance(x, (int, np.integer)):
            raise TypeError("x must be an integer or at least 1-dimensional")
        return _shuffle(key, fnp.arange(int(x)), 0)
    x = fnp.asarray(x)
    axis = core_axis(axis, x.ndim)
    if independent or x.ndim == 1:
        return _shuffle(key, x, axis)
    order = _shuffle(key, fnp.arange(x.shape[axis]), 0)
    return fnp.take(x, order, axis=axis)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Samples from `a` (an int n means arange(n)), with or without replacement."""
    key = _check_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of random.choice must be a sequence, got {shape}")
    shape = tuple(shape)
    scalar = not np.ndim(a) and not (hasattr(a, "shape") and a.shape)
    arr = fnp.asarray(a)
    if scalar:
        n_inputs = int(a)
    else:
        axis = core_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return fnp.zeros(shape, arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if scalar else fnp.take(arr, ind, axis=axis)
        else:
            perm = permutation(key, n_inputs if scalar else arr, axis)
            result = lax.slice_in_dim(perm, 0, n_draws, axis=0 if scalar else axis)
    else:
        p = fnp.asarray(p)
        if not dtypes.is_inexact(p.dtype):
            p = p.astype(dtypes.default_float())
        if p.shape != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {p.shape} and a.shape[axis] is "
                             f"{n_inputs}.")
        ind = _choice_indices(key, p, shape=shape, replace=bool(replace), mode=mode)
        result = ind if scalar else fnp.take(arr, ind, axis=axis)
    out_shape = shape if scalar else arr.shape[:axis] + shape + arr.shape[axis + 1:]
    return fnp.reshape(result, out_shape)


@_staged
def _choice_indices(key, p, *, shape, replace, mode):
    """Indices drawn with probabilities p: inverse CDF with replacement, Gumbel top-k
    without."""
    n_draws = math.prod(shape)
    if replace:
        p_cuml = fnp.cumsum(p)
        r = p_cuml[-1] * (1 - uniform(key, shape, dtype=p_cuml.dtype))
        # searchsorted(p_cuml, r, side='left'): how many cumulative sums lie below r.
        below = fnp.expand_dims(p_cuml, 0) < fnp.reshape(r, (-1, 1))
        return fnp.reshape(fnp.sum(below, axis=1).astype(dtypes.default_int()), shape)
    g = gumbel(key, p.shape, dtype=p.dtype, mode=mode) + fnp.log(p)
    return lax.top_k(g, n_draws)[1].astype(dtypes.default_int())
