"""Student's t distribution (as JAX's scipy.stats.t)."""
import numpy as np

from funcgraph import lax
from funcgraph import numpy as fnp
from funcgraph.scipy.stats import _util


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = _util.promote(x, df, loc, scale)
    z = (x - loc) / scale
    half_df_plus_half = (df + 1) / 2
    normalizer = (lax.lgamma(half_df_plus_half) - lax.lgamma(df / 2)
                  - fnp.log(df * _util.const(z, np.pi) * scale * scale) / 2)
    return normalizer - half_df_plus_half * fnp.log1p(z * z / df)


pdf = _util.log_of_pdf(logpdf)
