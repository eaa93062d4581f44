"""funcgraph.scipy.special: the special functions of JAX's scipy.special that funcgraph's
primitives and nn already provide."""
import numpy as np

from funcgraph import lax, nn
from funcgraph import numpy as fnp

logsumexp = nn.logsumexp
softmax = nn.softmax
log_softmax = nn.log_softmax


def expit(x):
    """1 / (1 + exp(-x))."""
    return nn.sigmoid(x)


def logit(x):
    """log(x / (1 - x))."""
    x = fnp.asarray(x)
    return fnp.log(x) - fnp.log1p(-x)


def erf(x):
    return lax.erf(_inexact(x))


def erfc(x):
    return 1.0 - lax.erf(_inexact(x))


def erfinv(x):
    return lax.erf_inv(_inexact(x))


def gammaln(x):
    return lax.lgamma(_inexact(x))


def digamma(x):
    return lax.digamma(_inexact(x))


def xlogy(x, y):
    """x * log(y), with 0 where x == 0."""
    x, y = fnp.asarray(x), fnp.asarray(y)
    safe = fnp.where(x == 0, 1.0, y)
    return fnp.where(x == 0, 0.0, x * fnp.log(safe))


def xlog1py(x, y):
    """x * log1p(y), with 0 where x == 0."""
    x, y = fnp.asarray(x), fnp.asarray(y)
    safe = fnp.where(x == 0, 0.0, y)
    return fnp.where(x == 0, 0.0, x * fnp.log1p(safe))


def entr(x):
    """-x log x for x > 0, 0 at 0, -inf below."""
    x = fnp.asarray(x)
    return fnp.where(x > 0, -xlogy(x, x), fnp.where(x == 0, 0.0, -np.inf))


def ndtr(x):
    """The standard normal CDF."""
    x = _inexact(x)
    return 0.5 * (1.0 + lax.erf(x / np.sqrt(2.0).astype(np.float32)))


def ndtri(p):
    """The inverse of the standard normal CDF."""
    p = _inexact(p)
    return np.sqrt(2.0).astype(np.float32) * lax.erf_inv(2.0 * p - 1.0)


def _inexact(x):
    x = fnp.asarray(x)
    return x if fnp.issubdtype(x.dtype, np.inexact) else x.astype(fnp.float32)
