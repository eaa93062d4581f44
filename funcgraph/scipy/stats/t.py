"""Student's t distribution (as JAX's scipy.stats.t)."""
import numpy as np

from funcgraph import lax
from funcgraph import numpy as fnp
from funcgraph.scipy.stats._util import const, log_of_pdf, promote


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote(x, df, loc, scale)
    z = (x - loc) / scale
    normalizer = (lax.lgamma((df + 1) / 2) - lax.lgamma(df / 2)
                  - fnp.log(df * const(z, np.pi)) / 2 - fnp.log(scale))
    return normalizer - (df + 1) / 2 * fnp.log1p(z * z / df)


pdf = log_of_pdf(logpdf)
