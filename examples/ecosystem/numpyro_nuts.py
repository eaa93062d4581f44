"""Bayesian linear regression sampled with numpyro's NUTS:

    python -m funcgraph run examples/ecosystem/numpyro_nuts.py

It prints the posterior means as JSON (the suite compares them with jax's)."""
import json

import jax
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS


def model(x, y=None):
    slope = numpyro.sample("slope", dist.Normal(0.0, 5.0))
    intercept = numpyro.sample("intercept", dist.Normal(0.0, 5.0))
    noise = numpyro.sample("noise", dist.HalfNormal(1.0))
    numpyro.sample("y", dist.Normal(slope * x + intercept, noise), obs=y)


def main(samples=300, warmup=300):
    rng = np.random.default_rng(0)
    x = rng.normal(size=50).astype(np.float32)
    y = (1.5 * x - 0.7 + 0.3 * rng.normal(size=50)).astype(np.float32)
    mcmc = MCMC(NUTS(model), num_warmup=warmup, num_samples=samples, progress_bar=False)
    mcmc.run(jax.random.PRNGKey(0), x, y)
    posterior = mcmc.get_samples()
    return {name: float(values.mean()) for name, values in sorted(posterior.items())}


if __name__ == "__main__":
    print(json.dumps(main()))
