"""Jaxpr parity (issue 29) of funcgraph.nn, nn.initializers, random and the scipy modules
other than scipy.linalg: each row's program must be no bigger and no costlier than jax's.

The random rows are measured in StableHLO ops (measure="hlo"): jax keeps the key handling
and the bits as primitives (random_seed, random_bits, threefry2x32) where funcgraph traces
the threefry rounds.  On CPU jax lowers threefry2x32 to a while loop of 5 trips over 4
rounds each and emits it as a private function called once per use, so its StableHLO text
is about half of funcgraph's, which unrolls the 20 rounds inline as jax does on GPU and
TPU.  What XLA gets is the other way round: for normal (3, 4) XLA's optimized CPU module is
269 instructions in one fusion for funcgraph, 298 with a while loop and 10 fusions for jax,
and 10**6 draws run about twice as fast.  Those rows are listed as differing for that
reason, and `test_random_hlo_against_unrolled_threefry` holds each of them to
jax's own unrolled lowering (for TPU, private functions counted at each call), so any other
excess still fails."""
import dataclasses
import importlib
import pkgutil
import re

import jax
import jax.extend.random
import jax.scipy.fft
import jax.scipy.optimize
import jax.scipy.sparse.linalg
import jax.scipy.special
import jax.scipy.stats
import numpy as np
import pytest

from tests.jaxpr_parity import Row, _framework, _traced, check_coverage, check_row, public_functions

import funcgraph as fg
import funcgraph.nn.initializers
import funcgraph.scipy.fft
import funcgraph.scipy.optimize
import funcgraph.scipy.sparse.linalg
import funcgraph.scipy.special
import funcgraph.scipy.stats


def _f32(*shape):
    return np.full(shape, 0.5, np.float32)


X = _f32(3, 4)
S = (3, 4)
KEY = np.array([0, 1], np.uint32)


def _attr(path):
    """The callable at a dotted path under the framework's top module."""
    def call(m):
        out = m
        for part in path.split("."):
            out = getattr(out, part)
        return out
    return call


# ------------------------------------------------------------------------------ nn

_NN_UNARY = ["celu", "elu", "gelu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
             "identity", "leaky_relu", "log1mexp", "log_sigmoid", "log_softmax", "logmeanexp",
             "logsumexp", "mish", "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign",
             "softmax", "softplus", "sparse_plus", "sparse_sigmoid", "squareplus",
             "standardize", "swish", "tanh", "glu"]

NN_ROWS = [Row(name, _attr("nn." + name), (X,)) for name in _NN_UNARY] + [
    Row("gelu: approximate=False", _attr("nn.gelu"), (X,), {"approximate": False}),
    Row("relu: int32", _attr("nn.relu"), (np.ones(S, np.int32),)),
    Row("leaky_relu: slope", _attr("nn.leaky_relu"), (X, 0.2)),
    Row("logsumexp: axis=0", _attr("nn.logsumexp"), (X,), {"axis": 0}),
    Row("logsumexp: keepdims", _attr("nn.logsumexp"), (X,), {"axis": 1, "keepdims": True}),
    Row("logsumexp: b", _attr("nn.logsumexp"), (X,), {"b": X}),
    Row("logsumexp: return_sign", _attr("nn.logsumexp"), (X,), {"return_sign": True}),
    Row("logmeanexp: axis=1", _attr("nn.logmeanexp"), (X,), {"axis": 1}),
    Row("softmax: axis=0", _attr("nn.softmax"), (X,), {"axis": 0}),
    Row("softmax: where", _attr("nn.softmax"), (X,), {"where": np.ones(S, bool)}),
    Row("log_softmax: axis=0", _attr("nn.log_softmax"), (X,), {"axis": 0}),
    Row("log_softmax: where", _attr("nn.log_softmax"), (X,), {"where": np.ones(S, bool)}),
    Row("one_hot", _attr("nn.one_hot"), (np.ones(3, np.int32), 5)),
    Row("one_hot: axis=0", _attr("nn.one_hot"), (np.ones(3, np.int32), 5), {"axis": 0}),
    Row("standardize: stable", _attr("nn.standardize"), (X,), {"algorithm": "stable"}),
    Row("dot_product_attention", _attr("nn.dot_product_attention"),
        (_f32(2, 5, 4, 8), _f32(2, 6, 4, 8), _f32(2, 6, 4, 8))),
    Row("dot_product_attention: causal", _attr("nn.dot_product_attention"),
        (_f32(2, 5, 4, 8), _f32(2, 5, 4, 8), _f32(2, 5, 4, 8)), {"is_causal": True}),
    Row("dot_product_attention: grouped heads, bias, mask", _attr("nn.dot_product_attention"),
        (_f32(2, 5, 4, 8), _f32(2, 6, 2, 8), _f32(2, 6, 2, 8), _f32(2, 4, 5, 6),
         np.ones((2, 4, 5, 6), bool))),
]


# ------------------------------------------------------------------ nn.initializers

def _init(factory, *args, shape=(4, 5), **kwargs):
    """The initializer `factory(*args, **kwargs)` called with the key, shape and float32."""
    def call(m):
        return lambda key: getattr(m.nn.initializers, factory)(*args, **kwargs)(
            key, shape, np.float32)
    return call


def _plain_init(name):
    return lambda m: lambda key: getattr(m.nn.initializers, name)(key, (4, 5), np.float32)


INIT_ROWS = [
    Row("zeros", _plain_init("zeros"), (KEY,)),
    Row("ones", _plain_init("ones"), (KEY,)),
    Row("constant", _init("constant", 0.5), (KEY,)),
    Row("uniform", _init("uniform"), (KEY,), measure="hlo"),
    Row("normal", _init("normal"), (KEY,), measure="hlo"),
    Row("truncated_normal", _init("truncated_normal"), (KEY,), measure="hlo"),
    Row("variance_scaling: fan_in normal", _init("variance_scaling", 1.0, "fan_in", "normal"),
        (KEY,), measure="hlo"),
    Row("variance_scaling: fan_out uniform",
        _init("variance_scaling", 2.0, "fan_out", "uniform"), (KEY,), measure="hlo"),
    Row("variance_scaling: fan_avg truncated_normal",
        _init("variance_scaling", 1.0, "fan_avg", "truncated_normal"), (KEY,), measure="hlo"),
    Row("orthogonal", _init("orthogonal"), (KEY,), measure="hlo"),
    Row("delta_orthogonal", _init("delta_orthogonal", shape=(3, 3, 4, 5)), (KEY,),
        measure="hlo"),
] + [Row(name, _init(name), (KEY,), measure="hlo")
     for name in ["glorot_normal", "glorot_uniform", "he_normal", "he_uniform",
                  "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform",
                  "xavier_normal", "xavier_uniform"]]


# --------------------------------------------------------------------------- random

def _rnd(name):
    return _attr("random." + name)


def _typed(name):
    """random.<name> called with the typed key over the raw key data it is given."""
    return lambda m: lambda key, *args, **kwargs: getattr(m.random, name)(
        m.random.wrap_key_data(key), *args, **kwargs)


def _random(name, call, args=(), kwargs=None):
    return Row(name, call, (KEY,) + tuple(args), kwargs or {}, measure="hlo")


def _threefry_2x32(m):
    return m.random.threefry_2x32 if m is fg else jax.extend.random.threefry_2x32


_SEED = np.array(7, np.int32)

RANDOM_ROWS = [
    Row("PRNGKey", _rnd("PRNGKey"), (_SEED,), measure="hlo"),
    Row("key", lambda m: lambda s: m.random.key_data(m.random.key(s)), (_SEED,),
        measure="hlo"),
    Row("key_data", lambda m: lambda k: m.random.key_data(m.random.wrap_key_data(k)), (KEY,)),
    Row("wrap_key_data", lambda m: lambda k: m.random.key_data(m.random.wrap_key_data(k)),
        (KEY,)),
    Row("clone", _rnd("clone"), (KEY,)),
    _random("split", _rnd("split")),
    _random("split: num=3", _rnd("split"), (3,)),
    _random("split: typed key",
            lambda m: lambda k: m.random.key_data(m.random.split(m.random.wrap_key_data(k)))),
    _random("fold_in", _rnd("fold_in"), (np.array(3, np.int32),)),
    _random("bits", _rnd("bits"), (S,)),
    _random("bits: uint8", _rnd("bits"), (S, np.uint8)),
    _random("uniform", _rnd("uniform"), (S,)),
    _random("uniform: typed key", _typed("uniform"), (S,)),
    _random("uniform: minval maxval arrays", _rnd("uniform"), (S, np.float32, X, X)),
    _random("uniform: float16", _rnd("uniform"), (S, np.float16)),
    _random("normal", _rnd("normal"), (S,)),
    _random("normal: typed key", _typed("normal"), (S,)),
    _random("normal: float16", _rnd("normal"), (S, np.float16)),
    _random("truncated_normal", _rnd("truncated_normal"), (-1.0, 2.0, S)),
    _random("bernoulli", _rnd("bernoulli"), (X,)),
    _random("randint", _rnd("randint"), (S, 0, 10)),
    _random("randint: array bounds", _rnd("randint"),
            (S, np.zeros(S, np.int32), np.full(S, 10, np.int32))),
    _random("choice", _rnd("choice"), (5, (3,))),
    _random("choice: replace=False", _rnd("choice"), (_f32(5), (3,)), {"replace": False}),
    _random("choice: p", _rnd("choice"), (5, (3,)), {"p": _f32(5)}),
    _random("permutation", _rnd("permutation"), (_f32(5),)),
    _random("permutation: int", _rnd("permutation"), (5,)),
    _random("categorical", _rnd("categorical"), (X,)),
    _random("gumbel", _rnd("gumbel"), (S,)),
    _random("exponential", _rnd("exponential"), (S,)),
    Row("threefry_2x32", lambda m: lambda k, c: _threefry_2x32(m)(k, c),
        (KEY, np.arange(12, dtype=np.uint32)), measure="hlo"),
    _random("cauchy", _rnd("cauchy"), (S,)),
    _random("laplace", _rnd("laplace"), (S,)),
    _random("logistic", _rnd("logistic"), (S,)),
    _random("maxwell", _rnd("maxwell"), (S,)),
    _random("double_sided_maxwell", _rnd("double_sided_maxwell"), (X, X, S)),
    _random("rademacher", _rnd("rademacher"), (S,)),
    _random("pareto", _rnd("pareto"), (X,)),
    _random("weibull_min", _rnd("weibull_min"), (X, X, S)),
    _random("rayleigh", _rnd("rayleigh"), (X,)),
    _random("wald", _rnd("wald"), (X,)),
    _random("geometric", _rnd("geometric"), (X,)),
    _random("triangular", _rnd("triangular"), (X, X, X)),
    _random("lognormal", _rnd("lognormal"), (X,)),
    _random("multivariate_normal", _rnd("multivariate_normal"),
            (_f32(3), np.eye(3, dtype=np.float32))),
    _random("multivariate_normal: svd", _rnd("multivariate_normal"),
            (_f32(3), np.eye(3, dtype=np.float32)), {"method": "svd"}),
    _random("multivariate_normal: eigh", _rnd("multivariate_normal"),
            (_f32(3), np.eye(3, dtype=np.float32)), {"method": "eigh"}),
    _random("orthogonal", _rnd("orthogonal"), (3,)),
    _random("gamma", _rnd("gamma"), (X,)),
    _random("loggamma", _rnd("loggamma"), (X,)),
    _random("beta", _rnd("beta"), (X, X)),
    _random("dirichlet", _rnd("dirichlet"), (X,)),
    _random("chisquare", _rnd("chisquare"), (X,)),
    _random("f", _rnd("f"), (X, X)),
    _random("t", _rnd("t"), (X,)),
    _random("generalized_normal", _rnd("generalized_normal"), (X, S)),
    _random("ball", _rnd("ball"), (3,)),
    _random("poisson", _rnd("poisson"), (X,)),
    _random("binomial", _rnd("binomial"), (X, X)),
    _random("multinomial", _rnd("multinomial"), (_f32(3), _f32(3, 4))),
]


# -------------------------------------------------------------------- scipy.special

_SPECIAL_UNARY = ["dawsn", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp1",
                  "expi", "expit", "fresnel", "gamma", "gammaln", "gammasgn", "i0", "i0e",
                  "i1", "i1e", "log_ndtr", "loggamma", "logit", "ndtr", "ndtri", "sici",
                  "spence", "wofz", "factorial", "log_softmax", "softmax", "logsumexp"]
_SPECIAL_BINARY = ["beta", "betaln", "boxcox", "boxcox1p", "comb", "expn", "gammainc",
                   "gammaincc", "kl_div", "multigammaln", "owens_t", "poch", "polygamma",
                   "rel_entr", "xlog1py", "xlogy", "zeta"]

SPECIAL_ROWS = [Row(name, _attr("scipy.special." + name), (X,)) for name in _SPECIAL_UNARY] + [
    Row(name, _attr("scipy.special." + name), (X, X)) for name in _SPECIAL_BINARY
    if name not in ("multigammaln", "expn", "polygamma")] + [
    Row("multigammaln", _attr("scipy.special.multigammaln"), (X, 3)),
    Row("expn", _attr("scipy.special.expn"), (np.full(S, 2, np.int32), X)),
    Row("polygamma", _attr("scipy.special.polygamma"), (np.full(S, 2, np.int32), X)),
    Row("bernoulli", _attr("scipy.special.bernoulli"), (5,)),
    Row("bessel_jn", _attr("scipy.special.bessel_jn"), (X,), {"v": 2}),
    Row("betainc", _attr("scipy.special.betainc"), (X, X, X)),
    Row("hyp1f1", _attr("scipy.special.hyp1f1"), (X, X, X)),
    Row("hyp2f1", _attr("scipy.special.hyp2f1"), (X, X, X, X)),
    Row("sph_harm_y", _attr("scipy.special.sph_harm_y"),
        (np.full(3, 2, np.int32), np.full(3, 1, np.int32), _f32(3), _f32(3)), {"n_max": 3}),
    Row("logsumexp: axis=0", _attr("scipy.special.logsumexp"), (X,), {"axis": 0}),
    Row("softmax: axis=0", _attr("scipy.special.softmax"), (X,), {"axis": 0}),
    Row("gammaln: float64", _attr("scipy.special.gammaln"), (np.ones(S),), x64=True),
    Row("erf: weak scalar", lambda m: lambda: m.scipy.special.erf(0.5), ()),
]


# ---------------------------------------------------------------------- scipy.stats

# Each distribution's shape parameters after x (loc and scale keep their defaults).
_DISTRIBUTIONS = {
    "bernoulli": 1, "beta": 2, "betabinom": 3, "binom": 2, "cauchy": 0, "chi2": 1,
    "expon": 0, "gamma": 1, "gennorm": 1, "geom": 1, "gumbel_l": 0, "gumbel_r": 0,
    "laplace": 0, "logistic": 0, "nbinom": 2, "norm": 0, "pareto": 1, "poisson": 1, "t": 1,
    "truncnorm": 2, "uniform": 0, "vonmises": 1, "wrapcauchy": 1,
}
_STATS_MODULES = {name: importlib.import_module("funcgraph.scipy.stats." + name)
                  for name in [*_DISTRIBUTIONS, "dirichlet", "multinomial",
                               "multivariate_normal"]}


def _stats_rows():
    rows = []
    for dist, n_params in _DISTRIBUTIONS.items():
        for fn in sorted(_public(_STATS_MODULES[dist])):
            args = (X,) * (n_params + (fn != "entropy"))
            rows.append(Row(f"{dist}.{fn}", _attr(f"scipy.stats.{dist}.{fn}"), args))
    for fn in ("logpdf", "pdf"):
        rows.append(Row(f"dirichlet.{fn}", _attr(f"scipy.stats.dirichlet.{fn}"),
                        (_f32(3) / 1.5, _f32(3))))
        rows.append(Row(f"multivariate_normal.{fn}",
                        _attr(f"scipy.stats.multivariate_normal.{fn}"),
                        (_f32(4, 3), _f32(3), np.eye(3, dtype=np.float32))))
    for fn in ("logpmf", "pmf"):
        rows.append(Row(f"multinomial.{fn}", _attr(f"scipy.stats.multinomial.{fn}"),
                        (np.array([1, 2, 1], np.int32), np.array(4, np.int32), _f32(3) / 1.5)))
    rows += [
        Row("norm.logpdf: loc scale", _attr("scipy.stats.norm.logpdf"), (X, X, X)),
        Row("norm.cdf: weak loc", _attr("scipy.stats.norm.cdf"), (X, 1.0, 2.0)),
        Row("mode", _attr("scipy.stats.mode"), (X,)),
        Row("mode: axis=1", _attr("scipy.stats.mode"), (X,), {"axis": 1}),
        Row("rankdata", _attr("scipy.stats.rankdata"), (X,)),
        Row("rankdata: axis=1 min", _attr("scipy.stats.rankdata"), (X, "min"), {"axis": 1}),
        Row("sem", _attr("scipy.stats.sem"), (X,)),
        Row("sem: axis=None", _attr("scipy.stats.sem"), (X,), {"axis": None}),
    ]
    return rows


def _public(module):
    return public_functions(module)


STATS_ROWS = _stats_rows()


# ------------------------------------------------- scipy.fft, optimize, sparse.linalg

def _quadratic(m):
    return lambda x: m.numpy.sum((x - 1.0) ** 2)


def _spd_matvec(m):
    a = np.array([[4., 1., 0.], [1., 3., 1.], [0., 1., 2.]], np.float32)
    return lambda x: m.numpy.dot(a, x)


FFT_ROWS = [
    Row("dct", _attr("scipy.fft.dct"), (X,)),
    Row("dct: ortho axis=0", _attr("scipy.fft.dct"), (X,), {"axis": 0, "norm": "ortho"}),
    Row("dct: n=6", _attr("scipy.fft.dct"), (X,), {"n": 6}),
    Row("idct", _attr("scipy.fft.idct"), (X,)),
    Row("idct: ortho", _attr("scipy.fft.idct"), (X,), {"norm": "ortho"}),
    Row("dctn", _attr("scipy.fft.dctn"), (X,)),
    Row("dctn: ortho", _attr("scipy.fft.dctn"), (X,), {"norm": "ortho"}),
    Row("idctn", _attr("scipy.fft.idctn"), (X,)),
]
OPTIMIZE_ROWS = [
    Row("minimize", lambda m: lambda x0: m.scipy.optimize.minimize(
        _quadratic(m), x0, method="BFGS").x, (_f32(3),)),
]
SPARSE_ROWS = [
    Row("cg", lambda m: lambda b: m.scipy.sparse.linalg.cg(_spd_matvec(m), b)[0], (_f32(3),)),
    Row("bicgstab", lambda m: lambda b: m.scipy.sparse.linalg.bicgstab(
        _spd_matvec(m), b)[0], (_f32(3),)),
    Row("gmres", lambda m: lambda b: m.scipy.sparse.linalg.gmres(_spd_matvec(m), b)[0],
        (_f32(3),)),
    Row("gmres: batched", lambda m: lambda b: m.scipy.sparse.linalg.gmres(
        _spd_matvec(m), b, solve_method="batched")[0], (_f32(3),)),
]

# Row names carry their module ("nn.softmax", "stats.norm.cdf") so they stay unique.
_MODULE_ROWS = {
    "funcgraph.nn": ("nn.", NN_ROWS),
    "funcgraph.nn.initializers": ("initializers.", INIT_ROWS),
    "funcgraph.random": ("random.", RANDOM_ROWS),
    "funcgraph.scipy.special": ("special.", SPECIAL_ROWS),
    "funcgraph.scipy.stats": ("stats.", STATS_ROWS),
    "funcgraph.scipy.fft": ("fft.", FFT_ROWS),
    "funcgraph.scipy.optimize": ("optimize.", OPTIMIZE_ROWS),
    "funcgraph.scipy.sparse.linalg": ("sparse.linalg.", SPARSE_ROWS),
}
ROWS = [dataclasses.replace(row, name=prefix + row.name)
        for prefix, rows in _MODULE_ROWS.values() for row in rows]


NOT_TRACED = {
    "funcgraph.random": {
        "key_impl": "returns the keys' implementation name (a str), no array",
    },
}

# jax's CPU lowering of threefry2x32 (see the module docstring).
_ROLLED_THREEFRY = (
    "different but better: jax lowers threefry2x32 on CPU to a 5-trip while loop emitted "
    "once as a private function (fewer StableHLO ops), funcgraph unrolls the 20 rounds "
    "inline as jax does on GPU/TPU, which XLA compiles to fewer instructions and one fusion "
    "without a loop (2x faster); no more ops than jax's unrolled lowering")


_MODE = ("different but better: both count each column's unique values after a sort, as jax; "
         "funcgraph's unique with counts marks the run starts with one concatenate and "
         "counts by cumsums (57 equations) where jax's scatters (129)")

KNOWN_DIFFERENCES = {
    "stats.mode": _MODE,
    "stats.mode: axis=1": _MODE,
    # nn
    "nn.dot_product_attention": "different but not costlier: the same two contractions "
                                "with q, k and v as they are; jax adds a size-1 group axis "
                                "to the query heads and transposes the probabilities first "
                                "(more equations)",
    "nn.dot_product_attention: causal": "different but not costlier: as the plain row (a "
                                        "size-1 group axis and a transpose in jax's)",
    # initializers and random samplers built on a factorization
    "initializers.orthogonal": _ROLLED_THREEFRY,
    "initializers.delta_orthogonal": _ROLLED_THREEFRY,
    "random.orthogonal": _ROLLED_THREEFRY,
    "random.multivariate_normal: svd": _ROLLED_THREEFRY,
    "random.multivariate_normal: eigh": _ROLLED_THREEFRY,
    # scipy.special
    "special.exp1": "different algorithm: funcgraph's E_n series carries a digamma term and "
                    "a fixed-trip loop where jax's branches on argmax of a table; not "
                    "compared further",
    "special.expn": "different algorithm: as exp1 (funcgraph's E_n continued fraction and "
                    "series, jax's table-driven branches)",
    "special.expi": "different algorithm: funcgraph's power and asymptotic series and E_1 "
                    "for x < 0, jax's table-driven branches",
    "special.bessel_jn": "different but better: funcgraph rescales Miller's recurrence when "
                         "it grows (jax's overflows: nan for z below ~5 and wrong values "
                         "at z = 300); 62 equations against jax's 36",
    "special.poch": "different but not costlier: one exp of an lgamma difference (a sub) "
                    "where jax multiplies gamma values; no more equations",
    "special.hyp1f1": "different but not costlier: the series loop stops when no element "
                      "still changes (a reduce_or) where jax tests per element; no more "
                      "equations",
    "special.hyp2f1": "different but not costlier: as hyp1f1 (a reduce_or over the "
                      "elements in the loop test)",
    "special.sph_harm_y": "different algorithm: funcgraph's three-term recurrences in the "
                          "degree, jax's tables of factors combined by dot_generals",
    # scipy.stats
    "stats.chi2.logpdf": "different but not costlier: chi2 is gamma.logpdf at (df/2, "
                         "2 scale), whose xlogy keeps x = 0 finite for df = 2; no more "
                         "equations than jax's own formula",
    "stats.chi2.pdf": "different but not costlier: as chi2.logpdf",
    "stats.chi2.sf": "different but better: one max clamps x below the support where jax "
                     "compares and selects (jax: 3 equations more)",
    "stats.chi2.logsf": "different but better: as chi2.sf",
    "stats.gamma.sf": "different but better: one max clamps x below the support where jax "
                      "compares and selects",
    "stats.gamma.logsf": "different but better: as gamma.sf",
    "stats.gumbel_r.ppf": "different but not costlier: log(-log p) negates where jax's "
                          "xlogy multiplies by -1 (more equations)",
    "stats.gumbel_r.sf": "different but better: -expm1(-exp(-z)) keeps the small upper "
                         "tail that jax's 1 - exp(-exp(-z)) rounds to 0 (one neg more)",
    "stats.poisson.entropy": "different but not costlier: funcgraph sums over a fixed k range "
                             "with clamps (max, min), jax over a range set by ceil; no more "
                             "equations",
    "stats.uniform.cdf": "different but better: a clip (max, min: 4 equations) where jax "
                         "selects among three cases by argmax of a stack (16)",
    "stats.dirichlet.logpdf": "different semantics, same cost: funcgraph accepts x == 0 on "
                              "the simplex's edge (x >= 0, as scipy), jax requires x > 0",
    "stats.dirichlet.pdf": "different semantics, same cost: as dirichlet.logpdf",
    "stats.multivariate_normal.logpdf": "different but better: the Mahalanobis term is a "
                                        "reduce_sum of squares and the log-determinant "
                                        "reads the factor's diagonal by a slice (20 "
                                        "equations); jax uses a dot_general and a "
                                        "platform-dependent cond (35)",
    "stats.multivariate_normal.pdf": "different but better: as multivariate_normal.logpdf",
    # scipy.fft, optimize, sparse.linalg
    "fft.dctn": "different but not costlier: one 1-d FFT per axis (with a transpose "
                "around the leading axis's) where jax runs one n-d FFT and combines "
                "twiddles (more equations)",
    "fft.dctn: ortho": "different but not costlier: as fft.dctn",
    "optimize.minimize": "different but better: the line search runs only the zoom its "
                         "bracket needs (lax.switch: cond, clamp) and the cubic step in "
                         "closed form, where jax runs a 2x2 solve by dot_generals",
    "sparse.linalg.bicgstab": "different but not costlier: custom_linear_solve's transpose "
                              "jaxprs contract A before x (jax: x before A), the same "
                              "products; not run by the solve itself",
    "sparse.linalg.gmres": "different but not costlier: as bicgstab (the transpose jaxprs' "
                           "operand order)",
    "sparse.linalg.gmres: batched": "different but not costlier: as bicgstab (the transpose "
                                    "jaxprs' operand order)",
}

# Every other row measured in StableHLO ops differs only by jax's rolled threefry loop,
# but for the key constructors, whose seeding has no threefry.
KNOWN_DIFFERENCES.update({
    r.name: _ROLLED_THREEFRY for r in ROWS
    if r.measure == "hlo" and r.name not in KNOWN_DIFFERENCES
    and r.name not in ("random.PRNGKey", "random.key")})


# ---------------------------------------------------------------------------- tests

@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_nn_random_scipy_emit_jaxs_program(row):
    check_row(row, KNOWN_DIFFERENCES)


_FUNC = re.compile(r"func\.func (?:public |private )?@([\w.$-]+)")
_CALL = re.compile(r"(?<!custom_)call @([\w.$-]+)")  # (custom calls are no functions)


def _inlined_op_count(text):
    """StableHLO ops of a module with each private function counted at every call (as XLA
    inlines them)."""
    ops, calls, name = {}, {}, None
    for line in text.splitlines():
        found = _FUNC.search(line)
        if found:
            name = found.group(1)
            ops[name], calls[name] = 0, []
        elif name is not None:
            ops[name] += line.count("stablehlo.")
            calls[name] += _CALL.findall(line)
    memo = {}

    def total(fn):
        if fn not in memo:
            memo[fn] = ops[fn] + sum(total(callee) for callee in calls[fn])
        return memo[fn]
    return total("main")


def _lowered_text(row, framework, platform=None):
    module, enable = _framework(framework)
    with enable(row.x64):
        traced, arrays = _traced(row, module)
        if platform is None:
            return module.jit(traced).lower(*arrays).as_text()
        return module.jit(traced).trace(*arrays).lower(
            lowering_platforms=(platform,)).as_text()


@pytest.mark.parametrize("row", [r for r in ROWS if KNOWN_DIFFERENCES.get(r.name)
                                 == _ROLLED_THREEFRY], ids=lambda r: r.name)
def test_random_hlo_against_unrolled_threefry(row):
    """Against jax's unrolled threefry (its TPU lowering), funcgraph's program has no more
    StableHLO ops, private functions counted at each call on both sides."""
    ours = _inlined_op_count(_lowered_text(row, "funcgraph"))
    theirs = _inlined_op_count(_lowered_text(row, "jax", "tpu"))
    assert ours <= theirs, f"{row.name}: {ours} StableHLO ops, jax unrolled {theirs}"


def _covering(prefix):
    """The rows whose name starts with prefix, renamed to what follows it."""
    return [Row(r.name[len(prefix):], r.call) for r in ROWS if r.name.startswith(prefix)]


@pytest.mark.parametrize("module", sorted(_MODULE_ROWS))
def test_coverage(module):
    check_coverage(importlib.import_module(module), _covering(_MODULE_ROWS[module][0]),
                   NOT_TRACED.get(module, {}))


@pytest.mark.parametrize("name", sorted(_STATS_MODULES))
def test_coverage_of_distribution(name):
    check_coverage(_STATS_MODULES[name], _covering(f"stats.{name}."),
                   NOT_TRACED.get(f"funcgraph.scipy.stats.{name}", {}))


def test_scipy_submodules_are_covered():
    """Every funcgraph.scipy submodule but linalg (another table's) is covered here."""
    names = {info.name for info in pkgutil.iter_modules(fg.scipy.__path__)
             if not info.name.startswith("_")}
    assert names - {"linalg"} == {"fft", "optimize", "sparse", "special", "stats"}


def test_tables_name_rows_and_functions():
    names = [r.name for r in ROWS]
    assert len(names) == len(set(names))
    assert set(KNOWN_DIFFERENCES) <= set(names)
    for module, reasons in NOT_TRACED.items():
        assert set(reasons) <= set(_public(importlib.import_module(module))), module
