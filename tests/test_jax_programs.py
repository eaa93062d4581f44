"""Small realistic JAX programs, written once against a namespace `m`, run with jax and with
funcgraph; the numbers (and shapes/dtypes) must agree."""
import collections
import importlib
import types

import jax
import jax.numpy as jnp
import jax.scipy.linalg
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
import funcgraph.scipy.linalg
from tests.util import on_cpu


def _namespace(mod, numpy_mod, scipy_linalg):
    return types.SimpleNamespace(
        jnp=numpy_mod, lax=mod.lax, random=mod.random, nn=mod.nn, grad=mod.grad,
        jit=mod.jit, vmap=mod.vmap, value_and_grad=mod.value_and_grad, jvp=mod.jvp,
        hessian=mod.hessian, jacrev=mod.jacrev, jacfwd=mod.jacfwd, custom_jvp=mod.custom_jvp,
        checkpoint=mod.checkpoint,
        tree_map=mod.tree_util.tree_map, tree_leaves=mod.tree_util.tree_leaves,
        scipy_linalg=scipy_linalg, scipy_special=_optional(mod.__name__ + ".scipy.special"))


def _optional(module_name):
    """A submodule that may not exist yet (the program using it then fails on use)."""
    try:
        return importlib.import_module(module_name)
    except ImportError:
        return None


JAX = _namespace(jax, jnp, jax.scipy.linalg)
FG = _namespace(fg, fnp, funcgraph.scipy.linalg)


# Programs whose jax value is taken op by op: one returns static values (not jittable
# whole), one rounds to bfloat16 after each op (XLA's fusions keep float32 between ops).
EAGER_ONLY = {"weak_types_static_args", "bf16_mixed_precision"}


def _jax_value(program):
    """jax's result, from one jitted run of the whole program (the same math as running
    it op by op, which compiles each op on its own: three times slower in all)."""
    if program.__name__ in EAGER_ONLY:
        return program(JAX)
    return jax.jit(lambda: program(JAX))()


def _compare(program, rtol=1e-5, atol=1e-5):
    expected = _jax_value(program)
    actual = program(FG)
    exp_leaves, exp_tree = jax.tree_util.tree_flatten(expected)
    act_leaves, act_tree = fg.tree_util.tree_flatten(actual)
    assert len(exp_leaves) == len(act_leaves), (exp_tree, act_tree)
    for e, a in zip(exp_leaves, act_leaves, strict=True):
        e, a = np.asarray(e), np.asarray(a)
        assert a.shape == e.shape, (a.shape, e.shape)
        assert a.dtype == e.dtype, (a.dtype, e.dtype)
        if np.issubdtype(e.dtype, np.inexact):
            np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(a, e)


def _data(seed, *shape):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def linear_regression(m):
    x = _data(0, 32, 3)
    y = x @ np.array([1.0, -2.0, 0.5], np.float32) + 0.3

    def loss(params, x, y):
        w, b = params
        return m.jnp.mean((x @ w + b - y) ** 2)

    @m.jit
    def step(params, x, y):
        l, g = m.value_and_grad(loss)(params, x, y)
        return m.tree_map(lambda p, d: p - 0.1 * d, params, g), l

    params = (m.jnp.zeros(3), m.jnp.float32(0.0))
    losses = []
    for _ in range(20):
        params, l = step(params, x, y)
        losses.append(l)
    return params, m.jnp.stack(losses)


def logistic_per_example_grads(m):
    x = _data(1, 16, 4)
    y = (x[:, 0] > 0).astype(np.float32)
    w = m.jnp.array(_data(2, 4))

    def loss(w, xi, yi):
        logit = m.jnp.dot(xi, w)
        return -(yi * m.nn.log_sigmoid(logit) + (1 - yi) * m.nn.log_sigmoid(-logit))

    per_ex = m.vmap(m.grad(loss), in_axes=(None, 0, 0))(w, x, y)
    norms = m.jnp.linalg.norm(per_ex, axis=1)
    clipped = per_ex / m.jnp.maximum(1.0, norms / 0.5)[:, None]
    return per_ex, m.jnp.mean(clipped, axis=0)


def mlp_classifier(m):
    key = m.random.PRNGKey(0)
    k1, k2, k3 = m.random.split(key, 3)
    sizes = [5, 8, 3]
    params = []
    for k, (din, dout) in zip(m.random.split(k1, 2), zip(sizes[:-1], sizes[1:])):
        wk, bk = m.random.split(k)
        params.append((m.random.normal(wk, (din, dout)) * m.jnp.sqrt(2.0 / din),
                       m.random.normal(bk, (dout,)) * 0.01))
    x = m.random.normal(k2, (10, 5))
    labels = m.random.randint(k3, (10,), 0, 3)

    def forward(params, x):
        for w, b in params[:-1]:
            x = m.nn.relu(x @ w + b)
        w, b = params[-1]
        return x @ w + b

    def loss(params, x, labels):
        logp = m.nn.log_softmax(forward(params, x))
        return -m.jnp.mean(m.jnp.sum(m.nn.one_hot(labels, 3) * logp, axis=-1))

    grad_fn = m.jit(m.grad(loss))
    for _ in range(5):
        g = grad_fn(params, x, labels)
        params = m.tree_map(lambda p, d: p - 0.05 * d, params, g)
    acc = m.jnp.mean(m.jnp.argmax(forward(params, x), -1) == labels)
    return params, loss(params, x, labels), acc, labels


def self_attention(m):
    t, d = 6, 4
    x = m.jnp.array(_data(3, t, d))
    wq, wk, wv = (m.jnp.array(_data(s, d, d)) for s in (4, 5, 6))

    def layer_norm(x, eps=1e-5):
        mu = m.jnp.mean(x, -1, keepdims=True)
        var = m.jnp.var(x, -1, keepdims=True)
        return (x - mu) / m.jnp.sqrt(var + eps)

    def attn(x, wq, wk, wv):
        h = layer_norm(x)
        q, k, v = h @ wq, h @ wk, h @ wv
        scores = m.jnp.einsum("td,sd->ts", q, k) / m.jnp.sqrt(float(d))
        mask = m.jnp.tril(m.jnp.ones((t, t), bool))
        scores = m.jnp.where(mask, scores, -1e9)
        w = m.nn.softmax(scores, axis=-1)
        return x + m.jnp.einsum("ts,sd->td", w, v)

    out = m.jit(attn)(x, wq, wk, wv)
    g = m.grad(lambda wq: m.jnp.sum(attn(x, wq, wk, wv) ** 2))(wq)
    return out, g


def vae_loss(m):
    key = m.random.PRNGKey(42)
    kx, ke, kd, keps = m.random.split(key, 4)
    x = m.random.uniform(kx, (8, 6))
    params = {"enc": m.random.normal(ke, (6, 4)) * 0.3, "dec": m.random.normal(kd, (2, 6)) * 0.3}

    def loss(params, x, key):
        h = x @ params["enc"]
        mu, logvar = h[:, :2], h[:, 2:]
        eps = m.random.normal(key, mu.shape)
        z = mu + m.jnp.exp(0.5 * logvar) * eps
        logits = z @ params["dec"]
        rec = m.jnp.sum(m.nn.softplus(logits) - x * logits)
        kl = -0.5 * m.jnp.sum(1 + logvar - mu ** 2 - m.jnp.exp(logvar))
        return (rec + kl) / x.shape[0]

    return m.jit(m.value_and_grad(loss))(params, x, keps)


def gp_posterior(m):
    xt = m.jnp.linspace(-2.0, 2.0, 8)
    yt = m.jnp.sin(xt)
    xs = m.jnp.linspace(-2.5, 2.5, 5)

    def kernel(a, b, ls):
        return m.jnp.exp(-0.5 * (a[:, None] - b[None, :]) ** 2 / ls ** 2)

    def posterior_mean(ls):
        k = kernel(xt, xt, ls) + 1e-3 * m.jnp.eye(8)
        chol = m.jnp.linalg.cholesky(k)
        alpha = m.scipy_linalg.cho_solve((chol, True), yt)
        return kernel(xs, xt, ls) @ alpha

    mean = posterior_mean(1.0)
    dmean = m.grad(lambda ls: m.jnp.sum(posterior_mean(ls)))(1.0)
    return mean, dmean


def rnn_scan(m):
    key = m.random.PRNGKey(1)
    k1, k2, k3 = m.random.split(key, 3)
    wh = m.random.normal(k1, (4, 4)) * 0.4
    wx = m.random.normal(k2, (3, 4)) * 0.4
    xs = m.random.normal(k3, (7, 3))

    def run(wh, wx, xs):
        def cell(h, x):
            h = m.jnp.tanh(h @ wh + x @ wx)
            return h, m.jnp.sum(h)
        h, ys = m.lax.scan(cell, m.jnp.zeros(4), xs)
        return m.jnp.sum(h ** 2) + m.jnp.mean(ys), ys

    (val, ys), grads = m.value_and_grad(run, argnums=(0, 1), has_aux=True)(wh, wx, xs)
    return val, ys, grads


def newton_sqrt(m):
    def sqrt_newton(a):
        def cond(state):
            x, i = state
            return (m.jnp.abs(x * x - a) > 1e-6) & (i < 50)

        def body(state):
            x, i = state
            return 0.5 * (x + a / x), i + 1

        return m.lax.while_loop(cond, body, (a, 0))

    vals = m.jnp.array([2.0, 9.0, 0.25], m.jnp.float32)
    return m.jit(m.vmap(sqrt_newton))(vals)


def sgd_momentum(m):
    params = {"w": m.jnp.array(_data(7, 3, 2)), "b": m.jnp.zeros(2)}
    x = _data(8, 12, 3)
    y = _data(9, 12, 2)

    def loss(p):
        return m.jnp.mean((m.jnp.tanh(x @ p["w"] + p["b"]) - y) ** 2)

    @m.jit
    def update(p, v):
        g = m.grad(loss)(p)
        gnorm = m.jnp.sqrt(sum(m.jnp.sum(l ** 2) for l in m.tree_leaves(g)))
        scale = m.jnp.minimum(1.0, 0.5 / gnorm)
        v = m.tree_map(lambda v, g: 0.9 * v + scale * g, v, g)
        return m.tree_map(lambda p, v: p - 0.1 * v, p, v), v

    v = m.tree_map(m.jnp.zeros_like, params)
    for _ in range(10):
        params, v = update(params, v)
    return params, v, loss(params)


def hvp(m):
    def f(x):
        return m.jnp.sum(m.jnp.sin(x) * x ** 2) + m.jnp.prod(m.jnp.cos(x[:2]))

    x = m.jnp.array([0.3, -1.2, 2.0, 0.7])
    v = m.jnp.array([1.0, 0.5, -0.5, 2.0])
    return m.jvp(m.grad(f), (x,), (v,))


def power_iteration(m):
    a = _data(10, 5, 5)
    a = m.jnp.array(a @ a.T)

    def body(_, v):
        w = a @ v
        return w / m.jnp.linalg.norm(w)

    v = m.lax.fori_loop(0, 30, body, m.jnp.ones(5) / m.jnp.sqrt(5.0))
    return v, v @ a @ v


def minibatch_epoch(m):
    key = m.random.PRNGKey(3)
    x = m.jnp.array(_data(11, 20, 2))
    y = x @ m.jnp.array([2.0, -1.0])
    w = m.jnp.zeros(2)

    def loss(w, xb, yb):
        return m.jnp.mean((xb @ w - yb) ** 2)

    for epoch in range(2):
        key, sub = m.random.split(key)
        perm = m.random.permutation(sub, 20)
        for i in range(0, 20, 5):
            idx = perm[i:i + 5]
            w = w - 0.1 * m.grad(loss)(w, x[idx], y[idx])
    return perm, w


def at_updates_and_sorting(m):
    x = m.jnp.array(_data(12, 4, 5))
    counts = m.jnp.zeros(5, m.jnp.int32).at[m.jnp.array([0, 2, 2, 4])].add(1)
    y = x.at[1].set(0.0).at[:, 3].multiply(2.0).at[0, 0].add(10.0)
    order = m.jnp.argsort(y, axis=1)
    sorted_rows = m.jnp.take_along_axis(y, order, axis=1)
    cums = m.jnp.cumsum(m.jnp.sort(y, axis=0), axis=0)
    topk_idx = m.jnp.argsort(-y.ravel())[:3]

    def f(x):
        return m.jnp.sum(m.jnp.sort(x.at[0].set(x[1] * 3.0), axis=1)[:, -2:] ** 2)

    return counts, y, order, sorted_rows, cums, topk_idx, m.grad(f)(x)


def scan_ode_and_jit_grad(m):
    """Euler integration of a damped oscillator; gradient of the final energy w.r.t. damping."""
    def simulate(damping):
        def step(state, _):
            pos, vel = state
            acc = -pos - damping * vel
            new = (pos + 0.05 * vel, vel + 0.05 * acc)
            return new, new[0]
        (pos, vel), traj = m.lax.scan(step, (m.jnp.float32(1.0), m.jnp.float32(0.0)), None,
                                      length=40)
        return 0.5 * (pos ** 2 + vel ** 2), traj

    energy, traj = m.jit(simulate)(0.3)
    g = m.jit(m.grad(lambda d: simulate(d)[0]))(0.3)
    gs = m.vmap(m.grad(lambda d: simulate(d)[0]))(m.jnp.array([0.1, 0.5]))
    return energy, traj, g, gs


def batchnorm_conv1d_like(m):
    """Layer with mean/var normalisation over the batch, a 1-D convolution via jnp.convolve
    inside vmap, and a logsumexp readout."""
    x = m.jnp.array(_data(13, 4, 10))
    kern = m.jnp.array([0.25, 0.5, 0.25])

    def f(x, kern):
        h = m.vmap(lambda r: m.jnp.convolve(r, kern, mode="same"))(x)
        mu, var = m.jnp.mean(h, axis=0), m.jnp.var(h, axis=0)
        h = (h - mu) * m.lax.rsqrt(var + 1e-5)
        return m.jnp.sum(m.nn.logsumexp(h, axis=1))

    return m.value_and_grad(f, argnums=(0, 1))(x, kern)


def dropout_gelu_mlp(m):
    key = m.random.PRNGKey(5)
    kw, kd, kx = m.random.split(key, 3)
    w = m.random.normal(kw, (6, 6)) * 0.3
    x = m.random.normal(kx, (4, 6))
    def f(w, x, key):
        h = m.nn.gelu(x @ w)
        keep = m.random.bernoulli(key, 0.8, h.shape)
        h = m.jnp.where(keep, h / 0.8, 0.0)
        return m.jnp.mean(m.jnp.clip(h, -1.0, 1.0) ** 2)
    return m.jit(m.value_and_grad(f))(w, x, kd)

def hessian_newton(m):
    def f(x):
        return m.jnp.sum((x - 1.0) ** 4) + 0.5 * x @ x + x[0] * x[1]
    x = m.jnp.array([2.0, -1.0, 0.5])
    H = m.hessian(f)(x)
    g = m.grad(f)(x)
    x2 = x - m.jnp.linalg.solve(H, g)
    J = m.jacrev(m.grad(f))(x)
    Jf = m.jacfwd(m.grad(f))(x)
    sign, logdet = m.jnp.linalg.slogdet(H)
    return H, x2, J, Jf, sign, logdet, m.jnp.linalg.inv(H)

def cond_in_scan(m):
    xs = m.jnp.array(_data(14, 10))
    def f(scale):
        def step(c, x):
            c = m.lax.cond(x > 0, lambda c: c + scale * x, lambda c: c * 0.9, c)
            return c, m.lax.stop_gradient(c) * c
        c, ys = m.lax.scan(step, m.jnp.float32(0.0), xs)
        return c + m.jnp.sum(ys)
    return m.jit(m.value_and_grad(f))(1.5), m.vmap(f)(m.jnp.array([0.5, 2.0]))

def custom_jvp_softclip(m):
    @m.custom_jvp
    def safe_log(x):
        return m.jnp.log(m.jnp.maximum(x, 1e-6))
    @safe_log.defjvp
    def safe_log_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return safe_log(x), t / m.jnp.maximum(x, 1e-6)
    x = m.jnp.array([0.0, 0.5, 2.0])
    f = lambda x: m.jnp.sum(safe_log(x) * x)
    return f(x), m.grad(f)(x), m.vmap(m.grad(lambda s: safe_log(s)))(x)

def checkpointed_resnet(m):
    ws = m.jnp.array(_data(15, 5, 4, 4)) * 0.3
    x = m.jnp.array(_data(16, 4))
    def block(h, w):
        return h + m.jnp.tanh(h @ w), None
    def f(ws, x):
        h, _ = m.lax.scan(m.checkpoint(block), x, ws)
        return m.jnp.sum(h ** 2)
    return m.jit(m.grad(f))(ws, x)

def categorical_sampling(m):
    key = m.random.PRNGKey(7)
    logits = m.jnp.array(_data(17, 5, 4))
    s = m.random.categorical(key, logits, axis=-1)
    g = m.random.gumbel(key, (3,))
    c = m.random.choice(key, 10, (4,), replace=False)
    ti = m.random.truncated_normal(key, -1.0, 1.0, (3,))
    return s, g, c, ti, m.random.fold_in(key, 3), m.random.uniform(key, (2,), minval=-1, maxval=3)

def dynamic_slicing_windows(m):
    x = m.jnp.arange(20.0)
    def window_sum(i):
        return m.jnp.sum(m.lax.dynamic_slice(x, (i,), (4,)))
    sums = m.vmap(window_sum)(m.jnp.arange(5))
    y = m.lax.dynamic_update_slice(m.jnp.zeros(8), m.jnp.ones(3), (2,))
    p = m.jnp.pad(m.jnp.ones((2, 2)), ((1, 0), (0, 2)))
    seg = m.jnp.zeros(3).at[m.jnp.array([0, 1, 1, 2, 0])].add(m.jnp.arange(5.0))
    g = m.grad(lambda x: m.jnp.sum(m.jnp.cumprod(x[:4]) * m.jnp.roll(x, 1)[:4]))(x / 10)
    return sums, y, p, seg, g, m.jnp.concatenate([x[::-3], x[1:4]])

def attention_vmap_heads(m):
    key = m.random.PRNGKey(9)
    q, k, v = (m.random.normal(s, (2, 3, 5, 4)) for s in m.random.split(key, 3))
    def head(q, k, v):
        s = q @ k.T / 2.0
        return m.nn.softmax(s) @ v
    out = m.vmap(m.vmap(head))(q, k, v)
    out2 = m.jnp.einsum("bhqk,bhkd->bhqd", m.nn.softmax(m.jnp.einsum("bhqd,bhkd->bhqk", q, k) / 2.0), v)
    return out, out2, m.jnp.swapaxes(out, 1, 2).reshape(2, 5, 12)


def pca_whitening(m):
    x = m.jnp.array(_data(20, 30, 4)) * m.jnp.array([3.0, 1.0, 0.5, 0.1])
    xc = x - x.mean(0)
    cov = xc.T @ xc / (x.shape[0] - 1)
    w, v = m.jnp.linalg.eigh(cov)
    v = v * m.jnp.sign(v[0])
    u, s, vt = m.jnp.linalg.svd(xc, full_matrices=False)
    q, r = m.jnp.linalg.qr(xc)
    proj = m.jnp.abs(xc @ v[:, -2:])
    g = m.grad(lambda x: m.jnp.sum(m.jnp.linalg.svd(x, compute_uv=False)))(xc)
    return w, v, s, m.jnp.abs(m.jnp.diag(r)), proj, g, m.jnp.linalg.det(cov)


Params = collections.namedtuple("Params", ["w", "b"])


def weak_types_static_args(m):
    def f(p, x, n, act):
        y = p.w * x + p.b
        for _ in range(n):
            y = act(y) * 2 + 1
        return y, y.astype(m.jnp.int32) + 3, x.sum() / 2
    jf = m.jit(f, static_argnums=(2, 3))
    p = Params(m.jnp.float32(0.5), 1)
    x = m.jnp.arange(6, dtype=m.jnp.int32)
    out = jf(p, x, 2, m.jnp.tanh)
    ints = m.jnp.arange(5) * 3 // 2 % 4
    mix = m.jnp.ones(3, m.jnp.bfloat16) * 2.5 + 1
    half = (m.jnp.ones(3, m.jnp.float16) + m.jnp.float32(1)).dtype
    u8 = (m.jnp.array([250, 3], m.jnp.uint8) + 10)
    return out, ints, mix.astype(m.jnp.float32), mix.dtype == m.jnp.bfloat16, str(half), u8, m.jnp.mean(x), m.jnp.array([1, 2]) / 2

def namedtuple_grad(m):
    p = Params(m.jnp.array([1.0, 2.0]), m.jnp.float32(0.5))
    def loss(p):
        return m.jnp.sum(m.jnp.exp(p.w) * p.b)
    g = m.grad(loss)(p)
    return type(g).__name__ == "Params", g.w, g.b

def lax_map_and_initializers(m):
    key = m.random.PRNGKey(11)
    w1 = m.nn.initializers.glorot_normal()(key, (4, 3))
    w2 = m.nn.initializers.he_uniform()(key, (4, 3))
    w3 = m.nn.initializers.lecun_normal()(key, (4, 3))
    ys = m.lax.map(lambda r: m.jnp.max(r) - m.jnp.min(r), w1)
    sw = m.lax.switch(1, [lambda x: x, lambda x: x * 2, lambda x: -x], w2)
    return w1, w2, w3, ys, sw

def bf16_mixed_precision(m):
    w = m.jnp.array(_data(21, 8, 8)).astype(m.jnp.bfloat16)
    x = m.jnp.array(_data(22, 4, 8))
    def loss(w, x):
        h = (x.astype(m.jnp.bfloat16) @ w)
        return m.jnp.mean(h.astype(m.jnp.float32) ** 2)
    l, g = m.value_and_grad(loss)(w, x)
    return l, g.astype(m.jnp.float32), g.dtype == m.jnp.bfloat16

def vmap_axes_dict(m):
    p = {"a": m.jnp.array(_data(23, 3, 2, 2)), "b": m.jnp.array(_data(24, 2))}
    def f(p, x):
        return {"out": p["a"] @ x + p["b"].sum(), "n": m.jnp.linalg.norm(x)}
    r = m.vmap(f, in_axes=({"a": 0, "b": None}, 1), out_axes={"out": 1, "n": 0})(p, m.jnp.array(_data(25, 2, 3)))
    return r

def stats_ops(m):
    x = m.jnp.array(_data(26, 50))
    h, edges = m.jnp.histogram(x, bins=5, range=(-2.0, 2.0))
    ss = m.jnp.searchsorted(m.jnp.sort(x), m.jnp.array([-1.0, 0.0, 1.0]))
    med = m.jnp.median(x)
    pct = m.jnp.percentile(x, m.jnp.array([10.0, 90.0]))
    bc = m.jnp.bincount(m.jnp.array([0, 1, 1, 3]), length=5)
    it = m.jnp.interp(m.jnp.array([0.5, 1.5]), m.jnp.array([0.0, 1.0, 2.0]), m.jnp.array([0.0, 10.0, 0.0]))
    gx, gy = m.jnp.meshgrid(m.jnp.arange(3.0), m.jnp.arange(2.0))
    return h, edges, ss, med, pct, bc, it, gx * gy, m.jnp.diff(x[:5]), m.jnp.outer(x[:3], x[:2])


PROGRAMS = [linear_regression, logistic_per_example_grads, mlp_classifier, self_attention,
            vae_loss, gp_posterior, rnn_scan, newton_sqrt, sgd_momentum, hvp, power_iteration,
            minibatch_epoch, at_updates_and_sorting, scan_ode_and_jit_grad,
            batchnorm_conv1d_like, dropout_gelu_mlp, hessian_newton, cond_in_scan,
            custom_jvp_softclip, checkpointed_resnet, categorical_sampling,
            dynamic_slicing_windows, attention_vmap_heads, pca_whitening, weak_types_static_args,
            namedtuple_grad, lax_map_and_initializers, bf16_mixed_precision, vmap_axes_dict,
            stats_ops]


# Off the CPU, programs whose float32 results are roundoff of an ill-conditioned solve:
# gp_posterior's gradient is exactly 0 (odd data, symmetric test points), computed through
# K^-1 with cond(K) = 2.9e3 and |d alpha / d ls|_1 = 30, so its float32 value is noise of
# size cond(K) * eps * 30 = 1e-2 (the CPU's happens to be 1e-6, an H100's 2e-3).
OFF_CPU_ATOL = {"gp_posterior": 1e-2}


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_matches_jax(program):
    atol = 1e-4 if on_cpu() else OFF_CPU_ATOL.get(program.__name__, 1e-4)
    _compare(program, rtol=1e-4, atol=atol)


def cnn_classifier(m):
    """LeNet-style: conv (NHWC/HWIO), relu, 2x2 average pool with reduce_window, dense."""
    key = m.random.PRNGKey(4)
    kx, kw, kd = m.random.split(key, 3)
    x = m.random.normal(kx, (2, 8, 8, 1))
    params = (m.random.normal(kw, (3, 3, 1, 4)) * 0.3, m.random.normal(kd, (64, 3)) * 0.1)

    def loss(params, x):
        w, d = params
        h = m.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                       dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = m.nn.relu(h)
        h = m.lax.reduce_window(h, 0.0, m.lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
        logits = h.reshape(h.shape[0], -1) @ d
        return -m.jnp.mean(m.nn.log_softmax(logits)[:, 0])

    return m.value_and_grad(loss)(params, x)


def linear_recurrence_associative_scan(m):
    """h_t = a_t * h_{t-1} + b_t computed in parallel (S4/LRU-style research code)."""
    a = m.jnp.array(np.linspace(0.5, 0.9, 8, dtype=np.float32))
    b = m.jnp.array(_data(30, 8))

    def combine(left, right):
        a_l, b_l = left
        a_r, b_r = right
        return a_l * a_r, a_r * b_l + b_r

    def f(b):
        return m.lax.associative_scan(combine, (a, b))[1]

    return f(b), m.grad(lambda b: m.jnp.sum(f(b) ** 2))(b)


def pairwise_energy_triu(m):
    """Lennard-Jones-like energy over unique pairs, indices from jnp.triu_indices."""
    pos = m.jnp.array(_data(31, 5, 2)) * 2.0

    def energy(pos):
        i, j = m.jnp.triu_indices(pos.shape[0], k=1)
        r2 = m.jnp.sum((pos[i] - pos[j]) ** 2, axis=-1) + 0.5
        return m.jnp.sum(1.0 / r2 ** 6 - 1.0 / r2 ** 3)

    return energy(pos), m.grad(energy)(pos)


def scipy_special_logsumexp(m):
    """Mixture log-likelihood written with jax.scipy.special (a very common import)."""
    x = m.jnp.array(_data(32, 10))
    means = m.jnp.array([-1.0, 0.0, 2.0])
    logw = m.jnp.log(m.jnp.array([0.2, 0.5, 0.3]))

    def nll(means):
        comp = -0.5 * (x[:, None] - means) ** 2 - 0.5 * m.jnp.log(2 * m.jnp.pi)
        return -m.jnp.mean(m.scipy_special.logsumexp(comp + logw, axis=1))

    return nll(means), m.grad(nll)(means), m.scipy_special.expit(x[:3])


def _missing_api(program, api):
    reason = f"funcgraph bug: no {api} (AttributeError where jax works)"
    return pytest.param(program, id=program.__name__, marks=pytest.mark.xfail(
        strict=True, raises=AttributeError, reason=reason))


@pytest.mark.parametrize("program", [
    linear_recurrence_associative_scan, pairwise_energy_triu, scipy_special_logsumexp,
    cnn_classifier,
], ids=lambda p: getattr(p, "__name__", None))
def test_program_needing_newer_api(program):
    _compare(program, rtol=1e-4, atol=1e-4)
