"""funcgraph.random: a counter-based functional PRNG (threefry2x32), with JAX's random API.

The bits are bit-for-bit those of JAX's default random implementation (threefry2x32
with `jax_threefry_partitionable=True`, the default in jax 0.10): the hash is built from uint32
add/xor/shift primitives, so it gives the same numbers eagerly, under jit and on any backend.

Keys, as in jax: `key(seed)` returns a typed key array, of shape () and dtype
`key<fry>` (an extended dtype whose physical data is uint32[2]: see _keys.py);
`PRNGKey(seed)` returns the raw key data, a uint32[2] array.  Every sampler, `split`
and `fold_in` take either kind, and split/fold_in return the kind they were given.
`key_data(keys)` gives the uint32[..., 2] data of typed keys, `wrap_key_data(data)`
the typed keys of raw data, `key_impl(keys)` the implementation's name
('threefry2x32', a str as jax 0.10 gives).  A batch of keys is a key array of shape
(n,) (or uint32[n, 2] raw data): map a sampler over it with `fg.vmap`.
"""
from funcgraph.random._core import (
    PRNGKey, bernoulli, bits, categorical, choice, exponential, fold_in, gumbel, key,
    key_data, normal, permutation, randint, split, threefry_2x32, truncated_normal, uniform,
    wrap_key_data)
from funcgraph.random._simple import (
    cauchy, clone, double_sided_maxwell, geometric, key_impl, laplace, logistic, lognormal,
    maxwell, multivariate_normal, orthogonal, pareto, rademacher, rayleigh, triangular, wald,
    weibull_min)
from funcgraph.random._gamma import (
    ball, beta, chisquare, dirichlet, f, gamma, generalized_normal, loggamma, t)
from funcgraph.random._discrete import binomial, multinomial, poisson
from funcgraph.random import _core, _discrete, _gamma, _simple

__all__ = [*_core.__all__, *_simple.__all__, *_gamma.__all__, *_discrete.__all__]
