"""The chi-square distribution (as JAX's scipy.stats.chi2): gamma(df / 2, scale 2)."""
from funcgraph.scipy.stats import gamma as _gamma
from funcgraph.scipy.stats import _util


def _args(x, df, loc, scale):
    x, df, loc, scale = _util.promote(x, df, loc, scale)
    return x, df / 2, loc, 2 * scale


def logpdf(x, df, loc=0, scale=1):
    return _gamma.logpdf(*_args(x, df, loc, scale))


pdf = _util.log_of_pdf(logpdf)


def cdf(x, df, loc=0, scale=1):
    return _gamma.cdf(*_args(x, df, loc, scale))


def logcdf(x, df, loc=0, scale=1):
    return _gamma.logcdf(*_args(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    return _gamma.sf(*_args(x, df, loc, scale))


def logsf(x, df, loc=0, scale=1):
    return _gamma.logsf(*_args(x, df, loc, scale))
