"""funcgraph.nn: neural-network activations and helpers, with the names, signatures
and derivatives of JAX's nn module (custom JVPs where JAX has them: relu, relu6, softmax)."""
import functools
import math
import operator

import numpy as np

from funcgraph import dtypes, lax
from funcgraph.interpreters.eval import is_eager as _is_eager
from funcgraph.transforms.custom_derivatives import custom_jvp
import funcgraph.numpy as fnp
from funcgraph.numpy._compiled import compiled_when_eager as _compiled_when_eager
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


@_compiled_when_eager()
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
    if not ndim:
        return ()
    for a in axis:
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
    return tuple(a % ndim for a in axis)


def _spread(reduced, shape, axes):
    """A reduction over `axes` broadcast back to `shape` (one broadcast_in_dim: funcgraph's
    binary ops take equal shapes, so a keepdims result would cost a reshape more)."""
    kept = tuple(d for d in range(len(shape)) if d not in axes)
    return lax.broadcast_in_dim(reduced, tuple(shape), kept)


def _max(x, axes, where):
    """The max over axes (-inf where nothing is selected), without a gradient."""
    if where is None:
        return lax.stop_gradient(lax.reduce_max(x, axes))
    return lax.stop_gradient(fnp.max(x, axis=axes, where=where, initial=-np.inf))


def _sum(x, axes, where):
    return lax.reduce_sum(x, axes) if where is None else fnp.sum(x, axis=axes, where=where)


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
    amax = _max(fnp.real(a) if complex_a else a, axes, where)
    amax = fnp.where(fnp.isfinite(amax), amax, fnp.zeros_like(amax))
    exp_a = fnp.exp(a - _spread(amax, a.shape, axes).astype(a.dtype))
    if b is not None:
        exp_a = exp_a * b
    sumexp = _sum(exp_a, axes, where)
    sign = fnp.sign(sumexp)
    if return_sign or not complex_a:
        sumexp = fnp.abs(sumexp)
    out = fnp.log(sumexp) + amax.astype(sumexp.dtype)
    if keepdims:
        out, sign = _keep_dims(out, axes), _keep_dims(sign, axes)
    if return_sign:
        return out, sign
    if b is not None and not complex_a:
        out = fnp.where(sign < 0, np.array(np.nan, out.dtype), out)
    return out


def _keep_dims(x, axes):
    return fnp.expand_dims(x, axes) if axes else x


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def _softmax(x, axes):
    unnormalized = fnp.exp(x - _spread(lax.reduce_max(x, axes), x.shape, axes))
    return _normalize(unnormalized, lax.reduce_sum(unnormalized, axes), axes)


def _normalize(values, total, axes):
    """values / total, total reduced over axes.  Eagerly, as jax's eager softmax divides
    by the keepdims sum broadcast in one XLA program (which XLA turns into a product with
    the reciprocal): fnp.divide computes that; traced, one broadcast_in_dim and a div."""
    if _is_eager():
        return fnp.divide(values, _keep_dims(total, axes))
    return values / _spread(total, values.shape, axes)


@_softmax.defjvp
def _softmax_jvp(axes, primals, tangents):
    (x,), (x_dot,) = primals, tangents
    y = _softmax(x, axes)
    return y, y * (x_dot - _spread(lax.reduce_sum(y * x_dot, axes), x.shape, axes))


def softmax(x, axis=-1, where=None):
    """exp(x) / sum(exp(x)) along axis (a custom JVP, as JAX's: y * (dx - <y, dx>));
    with `where`, over the selected entries only, 0 elsewhere."""
    x = _inexact(x)
    axes = _axes(axis, x.ndim)
    if where is None:
        return _softmax(x, axes)
    x_max = _spread(_max(x, axes, where), x.shape, axes)
    unnormalized = fnp.exp(fnp.where(where, x, -np.inf) - x_max)
    result = _normalize(unnormalized, _sum(unnormalized, axes, where), axes)
    return fnp.where(where, result, 0)


@_compiled_when_eager(static_argnames=("axis",))
def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x) along axis, with the max shifted out (no gradient through it);
    with `where`, over the selected entries only, -inf elsewhere."""
    x = _inexact(x)
    axes = _axes(axis, x.ndim)
    x_max = _spread(_max(x, axes, where), x.shape, axes)
    shifted = x - x_max if where is None else fnp.where(where, x, -np.inf) - x_max
    result = shifted - _spread(fnp.log(_sum(fnp.exp(shifted), axes, where)), x.shape, axes)
    return result if where is None else fnp.where(where, result, -np.inf)


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """x[..., None] == arange(num_classes), as dtype (default float), on a new `axis`."""
    x = fnp.asarray(x)
    dtype = dtypes.default_float() if dtype is None else dtype
    num_classes = operator.index(num_classes)
    out_axis = axis % (x.ndim + 1)
    shape = x.shape[:out_axis] + (num_classes,) + x.shape[out_axis:]
    lhs = lax.broadcast_in_dim(x, shape, tuple(d for d in range(len(shape)) if d != out_axis))
    return (lhs == lax.broadcasted_iota(x.dtype, shape, out_axis)).astype(dtype)


@_compiled_when_eager(static_argnames=("axis", "algorithm"))
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None,
                algorithm="fast"):
    """(x - mean) / sqrt(variance + epsilon), statistics along axis unless given."""
    x = _inexact(x)
    if mean is None and variance is None and where is None:
        return _standardize(x, _axes(axis, x.ndim), epsilon, algorithm)
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


def _standardize(x, axes, epsilon, algorithm):
    """standardize with both statistics computed, at the reduced shape."""
    count = np.array(math.prod(x.shape[a] for a in axes), x.dtype)
    mean = lax.reduce_sum(x, axes) / count
    if algorithm == "stable":
        centered = x - _spread(mean, x.shape, axes)
        variance = lax.reduce_sum(lax.square(centered), axes) / count
    elif algorithm == "fast":
        centered = None
        variance = lax.reduce_sum(lax.square(x), axes) / count - lax.square(mean)
        # The one-pass formula can dip below 0; rsqrt needs it clipped.
        variance = fnp.maximum(variance, 0)
    else:
        raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    if centered is None:
        centered = x - _spread(mean, x.shape, axes)
    return centered * _spread(lax.rsqrt(variance + epsilon), x.shape, axes)


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
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    logits = _attention_scores(q, k).astype(np.float32) * scale
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
    out = _attention_values(weights, v)
    return out[0] if unbatched else out


# With fewer key/value heads K than query heads N, query head n reads key head n // (N/K):
# the query's heads are split (K, N/K) so that k and v enter the products as they are.

def _attention_scores(q, k):
    """q k^T per head: [B, N, T, S]."""
    b, t, heads, h = q.shape
    kv_heads = k.shape[2]
    if kv_heads == heads:
        return fnp.einsum("btnh,bsnh->bnts", q, k)
    q = fnp.reshape(q, (b, t, kv_heads, heads // kv_heads, h))
    scores = fnp.einsum("bskh,btkgh->bkgts", k, q)
    return fnp.reshape(scores, (b, heads, t, k.shape[1]))


def _attention_values(weights, v):
    """The weighted sum of the values per head: [B, T, N, H]."""
    b, heads, t, s = weights.shape
    kv_heads = v.shape[2]
    if kv_heads == heads:
        return fnp.einsum("bnts,bsnh->btnh", weights, v)
    weights = fnp.reshape(weights, (b, kv_heads, heads // kv_heads, t, s))
    out = fnp.einsum("bkgts,bskh->btkgh", weights, v)
    return fnp.reshape(out, (b, t, heads, v.shape[-1]))


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
    x1, x2 = lax.split(x, (size // 2, size // 2), axis % x.ndim)
    return x1 * sigmoid(x2)


def log1mexp(x):
    """log(1 - exp(-x)) for x >= 0, by expm1 near 0 and log1p beyond log 2."""
    x = _inexact(x)
    return fnp.where(x < np.log(2.0), fnp.log(-fnp.expm1(-x)), fnp.log1p(-fnp.exp(-x)))


@_compiled_when_eager(static_argnames=("axis", "keepdims"))
def logmeanexp(x, axis=None, where=None, keepdims=False):
    """logsumexp(x) - log(number of elements reduced)."""
    x = _inexact(x)
    lse = logsumexp(x, axis=axis, keepdims=keepdims, where=where)
    if where is None:
        count = math.prod(x.shape[a] for a in _axes(axis, x.ndim))
        return lse - np.log(np.array(count, lse.dtype))
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


@_compiled_when_eager()
def squareplus(x, b=4):
    """(x + sqrt(x**2 + b)) / 2."""
    x, b = fnp.promote_to_inexact(x, b)
    return (x + fnp.sqrt(lax.square(x) + b)) / 2
