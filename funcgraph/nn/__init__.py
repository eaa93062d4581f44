"""funcgraph.nn: neural-network activations and helpers, with the names, signatures
and derivatives of JAX's nn module (custom JVPs where JAX has them: relu, relu6, softmax)."""
import functools
import operator

import numpy as np

from funcgraph import dtypes, lax
from funcgraph.transforms.custom_derivatives import custom_jvp
import funcgraph.numpy as fnp
from funcgraph.nn import initializers

__all__ = [
    "relu", "relu6", "leaky_relu", "elu", "celu", "selu", "gelu", "silu", "swish", "sigmoid",
    "softplus", "soft_sign", "log_sigmoid", "hard_tanh", "logsumexp", "softmax",
    "log_softmax", "one_hot", "standardize", "initializers",
]


def _inexact(x):
    x = fnp.asarray(x)
    return x if dtypes.is_inexact(x.dtype) else x.astype(dtypes.default_float())


@custom_jvp
def relu(x):
    """max(x, 0); its derivative at 0 is 0 (as in JAX)."""
    return fnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: fnp.where(fnp.asarray(x) > 0, g, fnp.zeros_like(g)))


@custom_jvp
def relu6(x):
    """min(max(x, 0), 6); derivative 0 at both kinks."""
    return fnp.minimum(fnp.maximum(x, 0), 6.0)


relu6.defjvps(lambda g, ans, x: fnp.where((fnp.asarray(x) > 0) & (fnp.asarray(x) < 6), g,
                                          fnp.zeros_like(g)))


def leaky_relu(x, negative_slope=1e-2):
    x = fnp.asarray(x)
    return fnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x):
    x = fnp.asarray(x)
    return fnp.where(x > 1, 1, fnp.where(x < -1, -1, x))


def elu(x, alpha=1.0):
    x = fnp.asarray(x)
    # expm1 of min(x, 0) keeps the untaken branch finite, so gradients stay NaN-free.
    safe_x = fnp.where(x > 0, 0.0, x)
    return fnp.where(x > 0, x, alpha * fnp.expm1(safe_x))


def celu(x, alpha=1.0):
    x = fnp.asarray(x)
    return fnp.maximum(x, 0.0) + alpha * fnp.expm1(fnp.minimum(x, 0.0) / alpha)


def selu(x):
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def gelu(x, approximate=True):
    """x * Phi(x): the tanh approximation, or exact through erf."""
    x = _inexact(x)
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(x.dtype)
        cdf = 0.5 * (1.0 + fnp.tanh(sqrt_2_over_pi * (x + 0.044715 * (x ** 3))))
        return x * cdf
    sqrt_half = np.sqrt(0.5).astype(x.dtype)
    # erfc(-x / sqrt 2), as jax: 1 + erf(x / sqrt 2) would lose digits for negative x
    return (0.5 * x * lax.erfc(-x * sqrt_half)).astype(x.dtype)


def sigmoid(x):
    return lax.logistic(_inexact(x))


def silu(x):
    x = _inexact(x)
    return x * sigmoid(x)


swish = silu


def softplus(x):
    """log(1 + exp(x)), stably: logaddexp(x, 0), whose derivative is sigmoid(x) (as jax
    computes both)."""
    return fnp.logaddexp(_inexact(x), 0.0)


def soft_sign(x):
    x = _inexact(x)
    return x / (fnp.abs(x) + 1)


def log_sigmoid(x):
    return -softplus(-_inexact(x))


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axis = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(a % ndim for a in axis) if ndim else ()


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) along axis, stably (the max is shifted out, with no gradient
    through it); return_sign=True also returns the sign of the sum."""
    a = _inexact(a)
    if where is not None:
        a = fnp.where(where, a, fnp.zeros_like(a))
    if b is not None:
        a, b = fnp.broadcast_arrays(a, fnp.asarray(b).astype(a.dtype))
        a = fnp.where(b != 0, a, np.array(-np.inf, a.dtype))  # b == 0: not in the max
    axes = _axes(axis, a.ndim)
    complex_a = dtypes.is_complex(a.dtype)
    amax = fnp.max(fnp.real(a) if complex_a else a, axis=axes, keepdims=True, where=where,
                   initial=-np.inf)
    amax = lax.stop_gradient(fnp.where(fnp.isfinite(amax), amax, fnp.zeros_like(amax)))
    exp_a = fnp.exp(a - amax.astype(a.dtype))
    if b is not None:
        exp_a = exp_a * b
    sumexp = fnp.sum(exp_a, axis=axes, keepdims=keepdims, where=where)
    sign = fnp.sign(sumexp)
    if return_sign or not complex_a:
        sumexp = fnp.abs(sumexp)
    out = fnp.log(sumexp)
    out = out + (amax if keepdims else fnp.squeeze(amax, axis=axes)).astype(out.dtype)
    if return_sign:
        return out, sign
    if b is not None and not complex_a:
        out = fnp.where(sign < 0, np.array(np.nan, out.dtype), out)
    return out


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def _softmax(x, axis):
    x_max = fnp.max(x, axis, keepdims=True)
    unnormalized = fnp.exp(x - x_max)
    return unnormalized / fnp.sum(unnormalized, axis, keepdims=True)


@_softmax.defjvp
def _softmax_jvp(axis, primals, tangents):
    (x,), (x_dot,) = primals, tangents
    y = _softmax(x, axis)
    return y, y * (x_dot - fnp.sum(y * x_dot, axis, keepdims=True))


def softmax(x, axis=-1, where=None):
    """exp(x) / sum(exp(x)) along axis (a custom JVP, as JAX's: y * (dx - <y, dx>));
    with `where`, over the selected entries only, 0 elsewhere."""
    x = _inexact(x)
    axis = axis if isinstance(axis, int) or axis is None else tuple(axis)
    if where is None:
        return _softmax(x, axis)
    x_max = fnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    unnormalized = fnp.exp(fnp.where(where, x, -np.inf) - lax.stop_gradient(x_max))
    result = unnormalized / fnp.sum(unnormalized, axis, where=where, keepdims=True)
    return fnp.where(where, result, 0)


def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x) along axis, with the max shifted out (no gradient through it);
    with `where`, over the selected entries only, -inf elsewhere."""
    x = _inexact(x)
    if where is None:
        shifted = x - lax.stop_gradient(fnp.max(x, axis, keepdims=True))
        return shifted - fnp.log(fnp.sum(fnp.exp(shifted), axis, keepdims=True))
    x_max = fnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    shifted = fnp.where(where, x, -np.inf) - lax.stop_gradient(x_max)
    result = shifted - fnp.log(fnp.sum(fnp.exp(shifted), axis, where=where, keepdims=True))
    return fnp.where(where, result, -np.inf)


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """x[..., None] == arange(num_classes), as dtype (default float), on a new `axis`."""
    x = fnp.asarray(x)
    dtype = dtypes.default_float() if dtype is None else dtype
    num_classes = operator.index(num_classes)
    out_axis = axis % (x.ndim + 1)
    lhs = fnp.expand_dims(x, out_axis)
    rhs_shape = [1] * x.ndim
    rhs_shape.insert(out_axis, num_classes)
    rhs = lax.broadcasted_iota(x.dtype, tuple(rhs_shape), out_axis)
    return (lhs == rhs).astype(dtype)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None,
                algorithm="fast"):
    """(x - mean) / sqrt(variance + epsilon), statistics along axis unless given."""
    x = _inexact(x)
    if mean is None:
        mean = fnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = fnp.mean(fnp.square(x - mean), axis, keepdims=True, where=where)
        elif algorithm == "fast":
            variance = fnp.mean(fnp.square(x), axis, keepdims=True, where=where) \
                - fnp.square(mean)
            # The one-pass formula can dip below 0; rsqrt needs it clipped.
            variance = fnp.clip(variance, 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return (x - mean) * lax.rsqrt(variance + epsilon)


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None, key_value_seq_lengths=None,
                          local_window_size=None, implementation=None):
    """softmax(q k^T * scale + bias, masked) v, as JAX's nn.dot_product_attention.

    Shapes [B, T, N, H] for the query and [B, S, K, H] for key and value (or the same
    without B); N must be a multiple of K (grouped-query attention)."""
    if query_seq_lengths is not None or key_value_seq_lengths is not None or \
            local_window_size is not None:
        raise NotImplementedError("dot_product_attention: sequence lengths and local windows "
                                  "are not supported yet")
    if implementation not in (None, "xla"):
        raise ValueError(f"dot_product_attention: implementation {implementation!r} is not "
                         f"available; funcgraph lowers attention through XLA")
    q, k, v = fnp.asarray(query), fnp.asarray(key), fnp.asarray(value)
    unbatched = q.ndim == 3
    if unbatched:
        q, k, v = q[None], k[None], v[None]
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError(f"dot_product_attention: query, key and value must have rank 3 or 4, "
                         f"got shapes {query.shape}, {key.shape}, {value.shape}")
    heads, kv_heads = q.shape[2], k.shape[2]
    if heads % kv_heads:
        raise ValueError(f"dot_product_attention: the query's {heads} heads must be a "
                         f"multiple of the key's {kv_heads}")
    if kv_heads != heads:
        k = fnp.repeat(k, heads // kv_heads, axis=2)
        v = fnp.repeat(v, heads // kv_heads, axis=2)
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    logits = fnp.einsum("btnh,bsnh->bnts", q, k).astype(np.float32) * scale
    if bias is not None:
        bias = fnp.asarray(bias)
        logits = logits + (bias[None] if unbatched and bias.ndim == 3 else bias)
    big_negative = np.float32(np.finfo(np.float32).min)
    if mask is not None:
        mask = fnp.asarray(mask)
        logits = fnp.where(mask[None] if unbatched and mask.ndim == 3 else mask, logits,
                           big_negative)
    if is_causal:
        t, s = logits.shape[-2], logits.shape[-1]
        logits = fnp.where(fnp.tril(fnp.ones((t, s), bool)), logits, big_negative)
    weights = softmax(logits, axis=-1).astype(q.dtype)
    out = fnp.einsum("bnts,bsnh->btnh", weights, v)
    return out[0] if unbatched else out


def identity(x):
    return fnp.asarray(x)


def tanh(x):
    return fnp.tanh(x)


def hard_sigmoid(x):
    """relu6(x + 3) / 6."""
    return relu6(fnp.asarray(x) + 3.0) / 6.0


def hard_silu(x):
    x = fnp.asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def mish(x):
    x = _inexact(x)
    return x * fnp.tanh(softplus(x))


def glu(x, axis=-1):
    """The first half of x along axis gated by the sigmoid of the second half."""
    x = fnp.asarray(x)
    size = x.shape[axis]
    if size % 2:
        raise ValueError(f"glu: axis {axis} of shape {x.shape} must have an even size")
    x1, x2 = fnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


def log1mexp(x):
    """log(1 - exp(-x)) for x >= 0, by expm1 near 0 and log1p beyond log 2."""
    x = _inexact(x)
    return fnp.where(x < np.log(2.0), fnp.log(-fnp.expm1(-x)), fnp.log1p(-fnp.exp(-x)))


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """logsumexp(x) - log(number of elements reduced)."""
    x = _inexact(x)
    lse = logsumexp(x, axis=axis, keepdims=keepdims, where=where)
    included = fnp.ones(x.shape, lse.dtype) if where is None else \
        fnp.broadcast_to(fnp.asarray(where), x.shape).astype(lse.dtype)
    count = fnp.sum(included, axis=axis, keepdims=keepdims)
    return lse - fnp.log(count)


def sparse_plus(x):
    """0 below -1, x above 1 and (x + 1)**2 / 4 between."""
    x = _inexact(x)
    return fnp.where(x <= -1.0, 0.0, fnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x):
    return 0.5 * fnp.clip(_inexact(x) + 1.0, 0.0, 2.0)


def squareplus(x, b=4):
    """(x + sqrt(x**2 + b)) / 2."""
    x, b = fnp.promote_to_inexact(x, b)
    return (x + fnp.sqrt(x * x + b)) / 2
