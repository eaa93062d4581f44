"""Research-sized programs for the benchmarks (issue 29), written once against a
framework's top module `m` (funcgraph or jax): m.numpy, m.lax, m.nn, m.ops, m.grad...

- a GPT-style decoder (d_model 128, 4 heads, sequence 64, vocabulary 512) trained with
  AdamW written by hand;
- a CNN on 32x32x3 images with batch normalization written by hand;
- a graph network whose messages are summed with segment_sum;
- a tanh RNN over `lax.scan` (hidden 256, batch 8).
"""
import numpy as np

D_MODEL, HEADS, SEQ, VOCAB, BATCH = 128, 4, 64, 512, 8


def _normal(rng, *shape, scale=0.02):
    return (rng.normal(size=shape) * scale).astype(np.float32)


def _norm_params(width):
    return np.ones(width, np.float32), np.zeros(width, np.float32)


# --- GPT-style decoder -----------------------------------------------------------------

def transformer_params(rng, layers):
    d = D_MODEL

    def block():
        return {"ln1": _norm_params(d), "qkv": _normal(rng, d, 3 * d),
                "proj": _normal(rng, d, d), "ln2": _norm_params(d),
                "fc": (_normal(rng, d, 4 * d), np.zeros(4 * d, np.float32)),
                "out": (_normal(rng, 4 * d, d), np.zeros(d, np.float32))}
    return {"embed": _normal(rng, VOCAB, d), "pos": _normal(rng, SEQ, d),
            "blocks": [block() for _ in range(layers)], "ln_f": _norm_params(d)}


def transformer_batch(rng, batch=BATCH):
    tokens = rng.integers(0, VOCAB, size=(batch, SEQ + 1)).astype(np.int32)
    return tokens[:, :-1], tokens[:, 1:]


def layer_norm(m, x, scale_shift):
    scale, shift = scale_shift
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * m.lax.rsqrt(var + 1e-5) * scale + shift


def transformer_logits(m, params, tokens):
    np_ = m.numpy
    batch, length = tokens.shape
    d, head = D_MODEL, D_MODEL // HEADS
    h = params["embed"][tokens] + params["pos"][:length]
    causal = np_.tril(np_.ones((length, length), bool))

    def split_heads(t):
        return t.reshape(batch, length, HEADS, head).transpose(0, 2, 1, 3)
    for blk in params["blocks"]:
        q, k, v = np_.split(layer_norm(m, h, blk["ln1"]) @ blk["qkv"], 3, axis=-1)
        q, k, v = split_heads(q), split_heads(k), split_heads(v)
        scores = np_.where(causal, q @ k.transpose(0, 1, 3, 2) / np.sqrt(head), -1e9)
        attended = m.nn.softmax(scores, axis=-1) @ v
        h = h + attended.transpose(0, 2, 1, 3).reshape(batch, length, d) @ blk["proj"]
        (w1, b1), (w2, b2) = blk["fc"], blk["out"]
        h = h + m.nn.gelu(layer_norm(m, h, blk["ln2"]) @ w1 + b1) @ w2 + b2
    return layer_norm(m, h, params["ln_f"]) @ params["embed"].T


def transformer_loss(m):
    def loss(params, tokens, targets):
        logp = m.nn.log_softmax(transformer_logits(m, params, tokens), axis=-1)
        return -m.numpy.mean(m.numpy.sum(logp * m.nn.one_hot(targets, VOCAB), axis=-1))
    return loss


def adamw_state(m, params):
    zeros = [np.zeros_like(p) for p in m.tree_util.tree_leaves(params)]
    return zeros, [z.copy() for z in zeros], np.float32(0)


def adamw_step(m, loss, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, decay=0.01):
    """jit-able (params, (mu, nu, t), *batch) -> (params, state, loss value)."""
    np_ = m.numpy

    def step(params, state, *batch):
        value, grads = m.value_and_grad(loss)(params, *batch)
        leaves, tree = m.tree_util.tree_flatten(params)
        grads = tree.flatten_up_to(grads)
        mu, nu, t = state
        t = t + 1
        mu = [b1 * a + (1 - b1) * g for a, g in zip(mu, grads, strict=True)]
        nu = [b2 * a + (1 - b2) * g * g for a, g in zip(nu, grads, strict=True)]
        c1, c2 = 1 - b1 ** t, 1 - b2 ** t
        new = [p - lr * ((a / c1) / (np_.sqrt(b / c2) + eps) + decay * p)
               for p, a, b in zip(leaves, mu, nu, strict=True)]
        return m.tree_util.tree_unflatten(tree, new), (mu, nu, t), value
    return step


def per_example_grads(m, loss):
    """Per-sequence gradients: vmap over the batch of grad of the one-sequence loss."""
    def one(params, tokens, targets):
        return loss(params, tokens[None], targets[None])
    return m.vmap(m.grad(one), in_axes=(None, 0, 0))


def grad_of_grad_norm(m, loss):
    """The gradient of the squared norm of the gradient (a gradient penalty)."""
    def penalty(params, *batch):
        grads = m.grad(loss)(params, *batch)
        return sum(m.numpy.sum(g * g) for g in m.tree_util.tree_leaves(grads))
    return m.grad(penalty)


# --- CNN with batch normalization ------------------------------------------------------

def cnn_params(rng):
    return {"conv1": _normal(rng, 3, 3, 3, 32, scale=0.2), "bn1": _norm_params(32),
            "conv2": _normal(rng, 3, 3, 32, 64, scale=0.06), "bn2": _norm_params(64),
            "dense": _normal(rng, 8 * 8 * 64, 10, scale=0.02)}


def cnn_batch(rng, batch=64):
    images = rng.normal(size=(batch, 32, 32, 3)).astype(np.float32)
    return images, np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]


def batch_norm(m, x, scale_shift):
    """Training-mode batch normalization over batch, height and width."""
    scale, shift = scale_shift
    mean = x.mean(axis=(0, 1, 2))
    var = x.var(axis=(0, 1, 2))
    return (x - mean) * m.lax.rsqrt(var + 1e-5) * scale + shift


def cnn_loss(m):
    lax, nn = m.lax, m.nn
    layout = ("NHWC", "HWIO", "NHWC")

    def conv_block(x, kernel, bn):
        x = lax.conv_general_dilated(x, kernel, (1, 1), "SAME", dimension_numbers=layout)
        x = nn.relu(batch_norm(m, x, bn))
        return lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def loss(params, images, labels):
        h = conv_block(images, params["conv1"], params["bn1"])
        h = conv_block(h, params["conv2"], params["bn2"])
        logits = h.reshape(h.shape[0], -1) @ params["dense"]
        return -m.numpy.mean(m.numpy.sum(nn.log_softmax(logits) * labels, axis=-1))
    return loss


def sgd_step(m, loss, lr=0.01):
    def step(params, *batch):
        value, grads = m.value_and_grad(loss)(params, *batch)
        return m.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), value
    return step


# --- graph network with segment_sum ----------------------------------------------------

NODES, EDGES, FEATURES = 2000, 10000, 64


def gnn_params(rng, layers=2):
    return [{"message": _normal(rng, FEATURES, FEATURES, scale=0.1),
             "self": _normal(rng, FEATURES, FEATURES, scale=0.1)} for _ in range(layers)]


def gnn_batch(rng):
    features = rng.normal(size=(NODES, FEATURES)).astype(np.float32)
    senders = rng.integers(0, NODES, EDGES).astype(np.int32)
    receivers = rng.integers(0, NODES, EDGES).astype(np.int32)
    targets = rng.normal(size=(NODES, 1)).astype(np.float32)
    return features, senders, receivers, targets


def gnn_loss(m):
    def loss(params, features, senders, receivers, targets):
        h = features
        for layer in params:
            messages = h[senders] @ layer["message"]
            incoming = m.ops.segment_sum(messages, receivers, NODES)
            h = m.nn.relu(incoming + h @ layer["self"])
        return m.numpy.mean((h.mean(axis=-1, keepdims=True) - targets) ** 2)
    return loss


# --- tanh RNN over lax.scan ------------------------------------------------------------

def rnn_params(rng, hidden=256, inputs=32, outputs=4):
    return (_normal(rng, inputs, hidden, scale=0.2), _normal(rng, hidden, hidden, scale=0.05),
            _normal(rng, hidden, outputs, scale=0.1))


def rnn_batch(rng, steps, batch=8, inputs=32, outputs=4):
    return (rng.normal(size=(steps, batch, inputs)).astype(np.float32),
            rng.normal(size=(batch, outputs)).astype(np.float32))


def rnn_loss(m):
    np_ = m.numpy

    def loss(params, xs, target):
        w_in, w_h, w_out = params

        def cell(h, x):
            h = np_.tanh(x @ w_in + h @ w_h)
            return h, None
        h, _ = m.lax.scan(cell, np_.zeros((xs.shape[1], w_h.shape[0]), np.float32), xs)
        return np_.mean((h @ w_out - target) ** 2)
    return loss
