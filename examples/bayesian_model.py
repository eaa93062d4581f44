"""A Bayesian zero-inflated Poisson mixture fitted by variational inference.

Model (counts y_1..y_n):
    pi  ~ Beta(1, 4)                      the probability of a structural zero
    w   ~ Dirichlet(1, ..., 1)            the mixture weights of K components
    lam_k ~ Gamma(2, rate 0.2)            the component rates
    y_i ~ pi * [y_i = 0] + (1 - pi) * sum_k w_k Poisson(y_i; lam_k)

The log joint uses funcgraph.scipy.stats (beta, dirichlet, gamma logpdfs, poisson
logpmf).  The variational family is mean-field: q(pi) = Beta(a, b), q(w) = Dirichlet(c),
q(lam_k) = Gamma(s_k, rate r_k).  Its samples come from funcgraph.random.beta / dirichlet /
gamma; all three are built from gamma draws whose gradient with respect to the shape is the
implicit reparameterization (d sample / d shape = -(dF/dshape) / (dF/dx) for the gamma CDF
F), so the Monte Carlo ELBO is differentiable in every variational parameter.  A jitted Adam
step maximizes it.

`build(fg, fnp)` takes a transformation namespace and a NumPy namespace, so
tests/test_examples_research.py runs the very same program with jax and compares the ELBO
trajectory and the fitted parameters."""
import numpy as np

import funcgraph as fg
import funcgraph.numpy as fnp
import funcgraph.scipy.special
import funcgraph.scipy.stats
from funcgraph import scipy as fsp

K = 2
PRIOR_PI = (1.0, 4.0)
PRIOR_W = 1.0
PRIOR_LAM = (2.0, 0.2)  # shape, rate
SAMPLES = 8


def build(fgm, npm, scipy, learning_rate=0.05):
    """The model, written against `fgm` (jit, grad, random, nn), `npm` (numpy) and `scipy`
    (scipy.stats, scipy.special)."""
    random, stats, tree_map = fgm.random, scipy.stats, fgm.tree_util.tree_map

    def log_likelihood(y, pi, w, lam):
        poisson = stats.poisson.logpmf(y[:, None], lam[None, :])
        mixture = scipy.special.logsumexp(poisson + npm.log(w)[None, :], axis=1)
        zero = npm.logaddexp(npm.log(pi), npm.log1p(-pi) + mixture)
        return npm.sum(npm.where(y == 0, zero, npm.log1p(-pi) + mixture))

    def log_prior(pi, w, lam):
        return (stats.beta.logpdf(pi, *PRIOR_PI)
                + stats.dirichlet.logpdf(w, npm.full((K,), PRIOR_W, np.float32))
                + npm.sum(stats.gamma.logpdf(lam, PRIOR_LAM[0], scale=1 / PRIOR_LAM[1])))

    def unpack(params):
        return tree_map(npm.exp, params)

    def sample_and_log_q(q, key):
        k_pi, k_w, k_lam = random.split(key, 3)
        pi = random.beta(k_pi, q["pi_a"], q["pi_b"])
        w = random.dirichlet(k_w, q["w"])
        lam = random.gamma(k_lam, q["lam_shape"]) / q["lam_rate"]
        log_q = (stats.beta.logpdf(pi, q["pi_a"], q["pi_b"])
                 + stats.dirichlet.logpdf(w, q["w"])
                 + npm.sum(stats.gamma.logpdf(lam, q["lam_shape"], scale=1 / q["lam_rate"])))
        return pi, w, lam, log_q

    def elbo(params, key, y):
        q = unpack(params)

        def one_sample(k):
            pi, w, lam, log_q = sample_and_log_q(q, k)
            return log_likelihood(y, pi, w, lam) + log_prior(pi, w, lam) - log_q

        return npm.mean(fgm.vmap(one_sample)(random.split(key, SAMPLES)))

    def init_params():
        return {"pi_a": npm.zeros((), np.float32), "pi_b": npm.log(npm.full((), 3.0, np.float32)),
                "w": npm.zeros((K,), np.float32),
                "lam_shape": npm.log(npm.asarray([2.0, 4.0], np.float32)),
                "lam_rate": npm.log(npm.asarray([1.0, 0.5], np.float32))}

    @fgm.jit
    def adam_step(params, state, key, y):
        value, grads = fgm.value_and_grad(lambda p: -elbo(p, key, y))(params)
        t = state["t"] + 1
        m = tree_map(lambda m, g: 0.9 * m + 0.1 * g, state["m"], grads)
        v = tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, state["v"], grads)
        scale = learning_rate * npm.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        params = tree_map(lambda p, m, v: p - scale * m / (npm.sqrt(v) + 1e-8), params, m, v)
        return params, {"m": m, "v": v, "t": t}, value

    def fit(key, y, steps):
        params = init_params()
        zeros = tree_map(npm.zeros_like, params)
        state = {"m": zeros, "v": zeros, "t": npm.zeros((), np.float32)}
        losses = []
        for step_key in random.split(key, steps):
            params, state, loss = adam_step(params, state, step_key, y)
            losses.append(float(loss))
        return params, losses

    def posterior_means(params):
        q = unpack(params)
        return {"pi": q["pi_a"] / (q["pi_a"] + q["pi_b"]), "w": q["w"] / npm.sum(q["w"]),
                "lam": q["lam_shape"] / q["lam_rate"]}

    return {"elbo": elbo, "adam_step": adam_step, "fit": fit, "init_params": init_params,
            "posterior_means": posterior_means, "log_likelihood": log_likelihood,
            "log_prior": log_prior}


def synthetic_counts(key, n=200):
    """Counts with 20% structural zeros and rates 2 and 9 mixed 60/40."""
    k_zero, k_pick, k_counts = fg.random.split(key, 3)
    structural_zero = fg.random.bernoulli(k_zero, 0.2, (n,))
    rates = fnp.where(fg.random.bernoulli(k_pick, 0.4, (n,)), 9.0, 2.0)
    counts = fg.random.poisson(k_counts, rates, (n,))
    return fnp.where(structural_zero, 0, counts).astype(np.float32)


def main():
    model = build(fg, fnp, fsp)
    data_key, fit_key = fg.random.split(fg.random.PRNGKey(0))
    y = synthetic_counts(data_key)
    params, losses = model["fit"](fit_key, y, steps=150)
    for step in range(0, len(losses), 25):
        print(f"step {step}: negative ELBO {losses[step]:.2f}")
    means = {name: np.asarray(v) for name, v in model["posterior_means"](params).items()}
    print("posterior means:", means)
    assert np.mean(losses[-10:]) < np.mean(losses[:10]), losses
    rates = np.sort(means["lam"])
    assert abs(rates[0] - 2) < 1 and abs(rates[1] - 9) < 2, rates


if __name__ == "__main__":
    main()
