"""funcgraph.scipy.stats: probability distributions with JAX's scipy.stats API (one module
per distribution: `stats.norm.logpdf`, `stats.gamma.cdf`, ...), differentiable."""
from funcgraph.scipy.stats import (
    bernoulli, beta, binom, cauchy, chi2, dirichlet, expon, gamma, geom, laplace, logistic,
    multivariate_normal, norm, pareto, poisson, t, truncnorm, uniform, vonmises)

__all__ = ["bernoulli", "beta", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma",
           "geom", "laplace", "logistic", "multivariate_normal", "norm", "pareto", "poisson",
           "t", "truncnorm", "uniform", "vonmises"]
