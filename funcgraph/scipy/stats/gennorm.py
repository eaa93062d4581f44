"""The generalized normal distribution (as JAX's scipy.stats.gennorm): density
beta / (2 Gamma(1 / beta)) exp(-|x|^beta)."""
from funcgraph import lax
from funcgraph import numpy as fnp
from funcgraph import special_math
from funcgraph.scipy.stats import _util


def logpdf(x, beta):
    x, beta = _util.promote(x, beta)
    return fnp.log(beta / 2) - lax.lgamma(1 / beta) - fnp.abs(x) ** beta


pdf = _util.log_of_pdf(logpdf)


def cdf(x, beta):
    x, beta = _util.promote(x, beta)
    return (1 + fnp.sign(x) * special_math.igamma(1 / beta, fnp.abs(x) ** beta)) / 2

__all__ = ["cdf", "logpdf", "pdf"]
