"""A small variational autoencoder on random binary data.

An MLP encoder maps each binary vector x to the mean and log-variance of a Gaussian
q(z | x); a sample z = mu + sigma * eps (eps from funcgraph.random.normal: the
reparameterization trick, so the sample is differentiable in mu and sigma) goes through
an MLP decoder to Bernoulli logits.  The loss is the negative ELBO,
    -E_q[log p(x | z)] + KL(q(z | x) || N(0, I)),
with the Bernoulli log-likelihood x * logits - softplus(logits) and the Gaussian KL in
closed form; a jitted Adam step minimizes it.

The model is built by `build(fg, fnp)` from a transformation namespace and a NumPy
namespace, so tests/test_examples_research.py runs the very same program with jax and
compares the loss trajectory and the trained parameters."""
import numpy as np

import funcgraph as fg
import funcgraph.numpy as fnp

DATA_DIM = 12
HIDDEN = 16
LATENT = 2


def build(fgm, npm, learning_rate=0.02):
    """init, loss and a jitted Adam step, written against `fgm` (jit, grad, random, nn) and
    `npm` (numpy)."""
    random, nn, tree_map = fgm.random, fgm.nn, fgm.tree_util.tree_map

    def dense(key, n_in, n_out):
        return {"w": random.normal(key, (n_in, n_out)) / np.sqrt(n_in),
                "b": npm.zeros((n_out,), np.float32)}

    def init(key):
        k1, k2, k3, k4 = random.split(key, 4)
        return {"enc_hidden": dense(k1, DATA_DIM, HIDDEN),
                "enc_out": dense(k2, HIDDEN, 2 * LATENT),
                "dec_hidden": dense(k3, LATENT, HIDDEN),
                "dec_out": dense(k4, HIDDEN, DATA_DIM)}

    def apply(layer, x):
        return x @ layer["w"] + layer["b"]

    def encode(params, x):
        stats = apply(params["enc_out"], npm.tanh(apply(params["enc_hidden"], x)))
        return stats[:, :LATENT], stats[:, LATENT:]

    def decode(params, z):
        return apply(params["dec_out"], npm.tanh(apply(params["dec_hidden"], z)))

    def negative_elbo(params, key, x):
        mean, log_var = encode(params, x)
        z = mean + npm.exp(log_var / 2) * random.normal(key, mean.shape)
        logits = decode(params, z)
        log_likelihood = npm.sum(x * logits - nn.softplus(logits), axis=-1)
        kl = 0.5 * npm.sum(npm.exp(log_var) + mean ** 2 - 1.0 - log_var, axis=-1)
        return npm.mean(kl - log_likelihood)

    def adam_init(params):
        zeros = tree_map(npm.zeros_like, params)
        return {"m": zeros, "v": zeros, "t": npm.zeros((), np.float32)}

    @fgm.jit
    def adam_step(params, state, key, x):
        loss, grads = fgm.value_and_grad(negative_elbo)(params, key, x)
        t = state["t"] + 1
        m = tree_map(lambda m, g: 0.9 * m + 0.1 * g, state["m"], grads)
        v = tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, state["v"], grads)
        scale = learning_rate * npm.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        params = tree_map(lambda p, m, v: p - scale * m / (npm.sqrt(v) + 1e-8), params, m, v)
        return params, {"m": m, "v": v, "t": t}, loss

    def train(key, x, steps):
        init_key, key = random.split(key)
        params = init(init_key)
        state = adam_init(params)
        losses = []
        for step_key in random.split(key, steps):
            params, state, loss = adam_step(params, state, step_key, x)
            losses.append(float(loss))
        return params, losses

    return {"init": init, "negative_elbo": negative_elbo, "adam_step": adam_step,
            "train": train, "encode": encode, "decode": decode}


def binary_data(key, n=64):
    """Binary vectors from two prototypes, each bit flipped with probability 0.1."""
    k_proto, k_pick, k_flip = fg.random.split(key, 3)
    prototypes = fg.random.bernoulli(k_proto, 0.5, (2, DATA_DIM))
    picks = fg.random.randint(k_pick, (n,), 0, 2)
    flips = fg.random.bernoulli(k_flip, 0.1, (n, DATA_DIM))
    return fnp.logical_xor(prototypes[picks], flips).astype(np.float32)


def main():
    model = build(fg, fnp)
    data_key, train_key = fg.random.split(fg.random.PRNGKey(0))
    x = binary_data(data_key)
    params, losses = model["train"](train_key, x, steps=60)
    for step in range(0, len(losses), 10):
        print(f"step {step}: negative ELBO {losses[step]:.4f}")
    print(f"final negative ELBO {losses[-1]:.4f}")
    assert np.mean(losses[-10:]) < np.mean(losses[:10]), losses
    mean, _ = model["encode"](params, x)
    print("latent means of the first 4 examples:\n", np.asarray(mean[:4]))


if __name__ == "__main__":
    main()
