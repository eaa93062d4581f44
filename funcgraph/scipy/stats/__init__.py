"""funcgraph.scipy.stats: probability distributions with JAX's scipy.stats API (one module
per distribution: `stats.norm.logpdf`, `stats.gamma.cdf`, ...), differentiable, and the
statistics functions mode, rankdata and sem."""
from funcgraph.scipy.stats import (
    bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, gamma, gennorm, geom,
    gumbel_l, gumbel_r, laplace, logistic, multinomial, multivariate_normal, nbinom, norm,
    pareto, poisson, t, truncnorm, uniform, vonmises, wrapcauchy)
from funcgraph.scipy.stats._core import mode, rankdata, sem
from funcgraph.scipy.stats._kde import gaussian_kde

__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
           "gamma", "gaussian_kde", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace",
           "logistic", "mode",
           "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson",
           "rankdata", "sem", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy"]
