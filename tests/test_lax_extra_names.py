"""lax names filled in after the first coverage pass (reduce_precision, the special-function
primitives, ragged_dot, scatter_apply, ...), each compared with jax.lax (the oracle): values
and dtypes eagerly and under jit, errors, and derivatives and vmap where jax has them."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax
from tests.util import assert_close, check_against_jax, column_phases, on_cpu


# --- reduce_precision -----------------------------------------------------------------

def _rounding_inputs(dtype):
    rng = np.random.default_rng(0)
    edges = [0.0, -0.0, 1.0001, 3.14159, 65504.0, 65520.0, 1e5, -2.5e-3, 1e-7, 6e-8,
             np.inf, -np.inf, np.nan]
    values = np.concatenate([edges, rng.standard_normal(16) * 100])
    with np.errstate(over="ignore"):  # values past float16's range become inf, as meant
        return values.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, jax.numpy.bfloat16])
@pytest.mark.parametrize("bits", [(5, 10), (8, 7), (4, 3), (2, 0), (11, 52)])
def test_reduce_precision_matches_jax_bit_for_bit(dtype, bits):
    x = _rounding_inputs(dtype)
    expected = np.asarray(jax.lax.reduce_precision(x, *bits))
    for result in (lax.reduce_precision(x, *bits),
                   fg.jit(lambda v: lax.reduce_precision(v, *bits))(x)):
        result = np.asarray(result)
        assert result.dtype == expected.dtype
        np.testing.assert_array_equal(result.view(np.uint8), expected.view(np.uint8))


def test_reduce_precision_is_linear_in_grad_jvp_and_batches():
    x = np.array([1.0001, -3.3, 7e4], np.float32)
    f = lambda lx: lambda v: (lx.reduce_precision(v, 5, 2) * v).sum()  # noqa: E731
    assert_close(fg.grad(f(lax))(x), jax.grad(f(jax.lax))(x))
    t = np.array([1.3, 0.5, 1.0], np.float32)
    _, tangent = fg.jvp(lambda v: lax.reduce_precision(v, 5, 2), (x,), (t,))
    _, expected = jax.jvp(lambda v: jax.lax.reduce_precision(v, 5, 2), (x,), (t,))
    assert_close(tangent, expected)
    batch = np.stack([x, 3 * x])
    assert_close(fg.vmap(lambda v: lax.reduce_precision(v, 4, 3))(batch),
                 jax.vmap(lambda v: jax.lax.reduce_precision(v, 4, 3))(batch))


@pytest.mark.parametrize("operand,bits,error", [
    (np.float32(1), (0, 3), ValueError), (np.float32(1), (3, -1), ValueError),
    (np.float32(1), (1.5, 3), TypeError), (np.arange(3), (5, 2), TypeError)])
def test_reduce_precision_errors_as_jax(operand, bits, error):
    with pytest.raises(error):
        jax.lax.reduce_precision(operand, *bits)
    with pytest.raises(error, match="reduce_precision"):
        lax.reduce_precision(operand, *bits)


def test_reduce_precision_primitive_is_exported():
    assert lax.reduce_precision_p.name == "reduce_precision"
    jaxpr = fg.make_jaxpr(lambda v: lax.reduce_precision(v, 5, 2))(np.float32(1))
    assert "reduce_precision[exponent_bits=5 mantissa_bits=2]" in str(jaxpr)


# --- special functions lowered through CHLO --------------------------------------------

def test_zeta_matches_jax():
    x = np.array([1.5, 2.0, 3.0, 4.5, 1.0, 0.5, 2.0], np.float32)
    q = np.array([1.0, 0.5, 2.0, 3.0, 1.0, 1.0, -1.5], np.float32)
    check_against_jax(lax.zeta, jax.lax.zeta, x, q)
    check_against_jax(lax.zeta, jax.lax.zeta, x.astype(np.float16), q.astype(np.float16))
    assert_close(fg.vmap(lax.zeta, in_axes=(0, None))(np.stack([x, x + 1]), np.float32(2)),
                 jax.vmap(jax.lax.zeta, in_axes=(0, None))(np.stack([x, x + 1]), np.float32(2)))


def test_zeta_rejects_integers_and_mixed_dtypes_as_jax():
    for args in [(np.int32(2), np.int32(1)), (np.float32(2), np.float16(1))]:
        with pytest.raises(TypeError):
            jax.lax.zeta(*args)
        with pytest.raises(TypeError, match="zeta"):
            lax.zeta(*args)


# --- special functions computed by loop kernels (funcgraph.lax._special) ---------------

GAMMA_A = np.array([0.5, 1.0, 2.0, 5.0, 30.0, 0.1, 3.0, 1e-3, -1.0, 2.0, np.nan], np.float32)
GAMMA_X = np.array([0.3, 1.0, 2.5, 3.0, 25.0, 2.0, 0.0, 1e-2, 1.0, np.inf, 1.0], np.float32)


@pytest.mark.parametrize("name", ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad"])
def test_incomplete_gamma_family_matches_jax(name):
    check_against_jax(getattr(lax, name), getattr(jax.lax, name), GAMMA_A, GAMMA_X, scale=5)


def test_incomplete_gamma_in_half_precision_computes_wide_as_jax():
    a, x = GAMMA_A[:8].astype(np.float16), GAMMA_X[:8].astype(np.float16)
    check_against_jax(lax.igamma, jax.lax.igamma, a, x)
    check_against_jax(lax.igammac, jax.lax.igammac, a, x)


def test_betainc_and_bessel_match_jax():
    a = np.array([2.0, 0.5, 3.0, 10.0, 1.0, -1.0], np.float32)
    b = np.array([0.5, 2.0, 3.0, 1.0, 4.0, 1.0], np.float32)
    x = np.array([0.5, 0.2, 0.9, 0.3, 1.0, 0.5], np.float32)
    check_against_jax(lax.betainc, jax.lax.betainc, a, b, x, scale=5)
    z = np.array([0.0, 1e-8, 0.5, -3.0, 19.9, 20.1, 45.0, -200.0, np.inf, np.nan], np.float32)
    check_against_jax(lax.bessel_i0e, jax.lax.bessel_i0e, z)
    check_against_jax(lax.bessel_i1e, jax.lax.bessel_i1e, z)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, jax.numpy.bfloat16])
def test_bessel_i0e_gives_jax_bits_over_the_whole_range(dtype):
    """Cephes' Chebyshev series, as jax: bit for bit under jit, including huge arguments
    (a power series with an asymptotic tail gave i0e(3.4e38) = 0, not 2.2e-20)."""
    big = float(jax.numpy.finfo(dtype).max)
    x = np.concatenate([np.random.default_rng(0).normal(size=400) * 12,
                        [0.0, -0.0, 8.0, -8.0, 7.999, 8.001, 1e-30, big, -big, np.inf,
                         np.nan]]).astype(dtype)
    with fg.enable_x64(dtype == np.float64), jax.enable_x64(dtype == np.float64):
        ours = np.asarray(fg.jit(lax.bessel_i0e)(x))
        theirs = np.asarray(jax.jit(jax.lax.bessel_i0e)(x))
        assert ours.dtype == theirs.dtype == dtype
        nan = np.isnan(theirs.astype(np.float32))
        np.testing.assert_array_equal(np.isnan(ours.astype(np.float32)), nan)
        np.testing.assert_array_equal(ours[~nan].view(np.uint8), theirs[~nan].view(np.uint8))
        np.testing.assert_array_equal(np.asarray(lax.bessel_i0e(x)).astype(np.float64),
                                      ours.astype(np.float64))
    assert np.float32(lax.bessel_i0e(np.float32(3.4e38))) == pytest.approx(2.163e-20, rel=1e-3)


def test_special_function_derivatives_match_jax():
    a, x = np.float32(2.0), np.array([0.4, 1.5, 6.0], np.float32)
    for name in ("igamma", "igammac"):
        f, jf = getattr(lax, name), getattr(jax.lax, name)
        for argnums in (0, 1):
            assert_close(fg.grad(lambda a, x: f(a, x).sum(), argnums)(a, x),
                         jax.grad(lambda a, x: jf(a, x).sum(), argnums)(a, x), scale=5)
    assert_close(fg.grad(lax.betainc, 2)(2.0, 3.0, 0.3), jax.grad(jax.lax.betainc, 2)(2.0, 3.0, 0.3))
    for name in ("bessel_i0e", "bessel_i1e"):
        f, jf = getattr(lax, name), getattr(jax.lax, name)
        z = np.array([-2.0, 0.0, 1e-9, 1.3, 25.0], np.float32)
        assert_close(fg.vmap(fg.grad(f))(z), jax.vmap(jax.grad(jf))(z), scale=5)
    t = np.ones(3, np.float32)
    _, tangent = fg.jvp(lambda v: lax.random_gamma_grad(a, v), (x,), (t,))
    _, expected = jax.jvp(lambda v: jax.lax.random_gamma_grad(a, v), (x,), (t,))
    assert_close(tangent, expected, scale=5)


def test_special_functions_batch_and_stage_one_primitive():
    a = np.array([[0.5, 2.0, 4.0], [1.0, 3.0, 9.0]], np.float32)
    x = np.array([1.0, 2.0, 3.0], np.float32)
    assert_close(fg.vmap(lax.igamma, (0, None))(a, x),
                 jax.vmap(jax.lax.igamma, (0, None))(a, x), scale=5)
    assert_close(fg.vmap(lax.igamma, (1, 0))(a, a.T),
                 jax.vmap(jax.lax.igamma, (1, 0))(a, a.T), scale=5)
    for f, p in [(lax.igamma, lax.igamma_p), (lax.igammac, lax.igammac_p),
                 (lax.igamma_grad_a, lax.igamma_grad_a_p)]:
        eqns = fg.make_jaxpr(f)(a, a).jaxpr.eqns
        assert [e.primitive for e in eqns] == [p]
    eqns = fg.make_jaxpr(lax.betainc)(x, x, x).jaxpr.eqns
    assert [e.primitive for e in eqns] == [lax.regularized_incomplete_beta_p]


def test_special_function_errors_as_jax():
    f32, f16, i32 = np.float32(1), np.float16(1), np.int32(1)
    cases = [("igamma", (f32, f16)), ("igammac", (i32, i32)), ("igamma_grad_a", (f32, f16)),
             ("random_gamma_grad", (f32, f16)), ("betainc", (f32, f32, f16)),
             ("bessel_i0e", (i32,)), ("bessel_i1e", (i32,))]
    for name, args in cases:
        with pytest.raises(TypeError):
            getattr(jax.lax, name)(*args)
        with pytest.raises(TypeError, match=name.replace("betainc", "regularized_incomplete_beta")):
            getattr(lax, name)(*args)
    with pytest.raises(ValueError, match="Betainc gradient"):
        jax.grad(jax.lax.betainc)(2.0, 3.0, 0.5)
    with pytest.raises(ValueError, match="Betainc gradient"):
        fg.grad(lax.betainc)(2.0, 3.0, 0.5)


# --- clear_caches ---------------------------------------------------------------------------

@pytest.mark.parametrize("mod", [jax, fg], ids=["jax", "funcgraph"])
def test_clear_caches_makes_jitted_functions_trace_again(mod):
    traces = []

    def f(x):
        traces.append(1)
        return x * 2

    jitted = mod.jit(f)
    x = np.arange(3.0, dtype=np.float32)
    jitted(x)
    jitted(x)
    assert len(traces) == 1 and jitted._cache_size() == 1
    mod.clear_caches()
    assert jitted._cache_size() == 0
    np.testing.assert_array_equal(np.asarray(jitted(x)), 2 * x)
    assert len(traces) == 2


def test_clear_caches_empties_the_eager_and_backend_caches():
    from funcgraph import backend
    from funcgraph.transforms import jit as jit_module
    fg.config.update("funcgraph_eager_numpy", False)
    try:
        lax.add(np.float32(1), np.float32(2))
    finally:
        fg.config.update("funcgraph_eager_numpy", True)
    assert jit_module._primitive_cache and backend._executables
    fg.clear_caches()
    assert not jit_module._primitive_cache and not backend._executables
    assert not jit_module._compiled_calls
    assert float(lax.exp(np.float32(0))) == 1.0  # compiles anew


# --- ragged_dot / ragged_dot_general -----------------------------------------------------

def _ragged_dims(mod, dot_dims, ragged, group):
    return mod.lax.RaggedDotDimensionNumbers(dot_dims, ragged, group)


RAGGED_CASES = {
    # name: (lhs shape, rhs shape, group_sizes, dot dims, lhs ragged dims, rhs group dims)
    "noncontracting": ((7, 4), (3, 4, 5), [2, 0, 4], (([1], [1]), ([], [])), [0], [0]),
    "noncontracting_batched": ((2, 5, 4), (2, 4, 3, 6), [[1, 2, 2], [3, 0, 1]],
                               (([2], [1]), ([0], [0])), [1], [2]),
    "contracting": ((3, 6), (6, 5), [1, 3, 2], (([1], [0]), ([], [])), [1], []),
    "batch": ((4, 3, 2), (4, 2, 5), [1, 3], (([2], [1]), ([0], [0])), [0], []),
}


@pytest.mark.parametrize("case", sorted(RAGGED_CASES))
def test_ragged_dot_general_matches_jax_in_values_and_gradients(case):
    lhs_shape, rhs_shape, sizes, dot_dims, ragged, group = RAGGED_CASES[case]
    rng = np.random.default_rng(0)
    lhs = rng.standard_normal(lhs_shape).astype(np.float32)
    rhs = rng.standard_normal(rhs_shape).astype(np.float32)
    sizes = np.array(sizes, np.int32)

    def loss(mod):
        dims = _ragged_dims(mod, dot_dims, ragged, group)
        # jax does not differentiate ragged batch or contracting dimensions
        # (NotImplementedError): the oracle is then the same product written densely.
        if mod is jax and case == "batch":
            return lambda l, r: (jax.lax.dot_general(l, r, dot_dims) ** 2).sum()
        if mod is jax and case == "contracting":
            ends = np.cumsum(sizes)
            k = np.arange(lhs_shape[1])
            masks = ((ends - sizes)[:, None] <= k) & (k < ends[:, None])
            return lambda l, r: (jax.numpy.einsum("mk,gk,kn->gmn", l, masks, r) ** 2).sum()
        return lambda l, r: (mod.lax.ragged_dot_general(l, r, sizes, dims) ** 2).sum()

    dims = _ragged_dims(fg, dot_dims, ragged, group)
    jdims = _ragged_dims(jax, dot_dims, ragged, group)
    check_against_jax(lambda l, r: lax.ragged_dot_general(l, r, sizes, dims),
                      lambda l, r: jax.lax.ragged_dot_general(l, r, sizes, jdims), lhs, rhs)
    for mine, theirs in zip(fg.grad(loss(fg), (0, 1))(lhs, rhs),
                            jax.grad(loss(jax), (0, 1))(lhs, rhs), strict=True):
        assert_close(mine, theirs, scale=5)


def test_ragged_dot_dtypes_jit_and_vmap_as_jax():
    rng = np.random.default_rng(1)
    lhs = rng.integers(-5, 5, (6, 3)).astype(np.int8)
    rhs = rng.integers(-5, 5, (2, 3, 4)).astype(np.int8)
    sizes = np.array([4, 1], np.int32)  # the last row is in no group: zeros
    for kwargs in ({}, {"preferred_element_type": np.int32}):
        check_against_jax(lambda l, r: lax.ragged_dot(l, r, sizes, **kwargs),
                          lambda l, r: jax.lax.ragged_dot(l, r, sizes, **kwargs), lhs, rhs)
    half = lhs.astype(np.float16), rhs.astype(np.float16)
    check_against_jax(lambda l, r: lax.ragged_dot(l, r, sizes), lambda l, r:
                      jax.lax.ragged_dot(l, r, sizes), *half)
    batch = np.stack([half[0], 2 * half[0]])
    # jax's vmap batches ragged_dot's lhs only with batched group sizes: the oracle loops.
    assert_close(fg.vmap(lax.ragged_dot, (0, None, None))(batch, half[1], sizes),
                 np.stack([jax.lax.ragged_dot(b, half[1], sizes) for b in batch]))
    assert_close(fg.jit(lax.ragged_dot)(*half, sizes), jax.lax.ragged_dot(*half, sizes))


@pytest.mark.parametrize("lhs_shape,rhs_shape,sizes,dims", [
    ((7, 4), (3, 4, 5), np.array([2, 0], np.int32), ((([1], [1]), ([], [])), [0], [0])),
    ((7, 4), (3, 4, 5), np.array([2, 0, 1], np.float32), ((([1], [1]), ([], [])), [0], [0])),
    ((7, 4), (3, 4, 5), np.array([2, 0, 1], np.int32), ((([1], [1]), ([], [])), [0], [])),
    ((7, 4), (3, 4, 5), np.array([2, 0, 1], np.int32), ((([1], [1]), ([], [])), [0, 1], [0])),
    ((7, 4), (3, 4, 5), np.array([2, 0, 1], np.int32), ((([1], [1]), ([], [])), [2], [0])),
    ((3, 6), (6, 5), np.array([1, 3, 2], np.int32), ((([1], [0]), ([], [])), [1], [0])),
    ((7, 4), (3, 4, 5), np.array([[2, 0, 1]], np.int32), ((([1], [1]), ([], [])), [0], [0])),
])
def test_ragged_dot_general_errors_as_jax(lhs_shape, rhs_shape, sizes, dims):
    lhs, rhs = np.ones(lhs_shape, np.float32), np.ones(rhs_shape, np.float32)
    with pytest.raises(TypeError):
        jax.lax.ragged_dot_general(lhs, rhs, sizes, jax.lax.RaggedDotDimensionNumbers(*dims))
    with pytest.raises(TypeError, match="group|ragged"):
        lax.ragged_dot_general(lhs, rhs, sizes, lax.RaggedDotDimensionNumbers(*dims))


def test_ragged_dot_dimension_numbers_normalize_as_jax():
    mine = lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])
    theirs = jax.lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])
    for field in ("dot_dimension_numbers", "lhs_ragged_dimensions", "rhs_group_dimensions"):
        assert getattr(mine, field) == getattr(theirs, field)
    same = lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))
    assert mine == same and hash(mine) == hash(same)
    with pytest.raises(NotImplementedError):
        lax.ragged_dot(np.ones((2, 2)), np.ones((1, 2, 2)), np.array([2]),
                       group_offset=np.array([0]))


# --- scatter_apply ------------------------------------------------------------------------

def _scatter_dims(mod):
    return mod.lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                           scatter_dims_to_operand_dims=(0,))


@pytest.mark.parametrize("func", ["sin", "affine"])
def test_scatter_apply_applies_once_per_hit_as_jax(func):
    x = np.arange(6.0, dtype=np.float32)
    idx = np.array([[1], [3], [1], [9], [1]], np.int32)  # 1 three times; 9 is dropped

    def run(mod):
        f = mod.lax.sin if func == "sin" else (lambda v: v * 2 + 1)
        return lambda x, i: mod.lax.scatter_apply(x, i, f, _scatter_dims(mod), update_shape=(5,))

    check_against_jax(run(fg), run(jax), x, idx)
    batch = np.stack([x, -x])
    assert_close(fg.vmap(run(fg), (0, None))(batch, idx), jax.vmap(run(jax), (0, None))(batch, idx))


def test_scatter_apply_keeps_the_operand_dtype_and_clips_as_jax():
    x = np.arange(4, dtype=np.int32)
    idx = np.array([[0], [7]], np.int32)
    for mode in ("clip", "drop"):
        check_against_jax(
            lambda x, i: lax.scatter_apply(x, i, lambda v: v * 3, _scatter_dims(fg),
                                           update_shape=(2,), mode=mode),
            lambda x, i: jax.lax.scatter_apply(x, i, lambda v: v * 3, _scatter_dims(jax),
                                               update_shape=(2,), mode=mode), x, idx)


def test_scatter_apply_is_one_scatter_with_jaxs_bits_and_a_forward_derivative():
    """One scatter whose region applies the function (jax's scatter with an update_jaxpr),
    bit for bit eagerly and under jit; forward mode applies the derivative per hit (jax
    has no derivative rule)."""
    x = np.linspace(0.1, 0.6, 6, dtype=np.float32)
    idx = np.array([[1], [3], [1]], np.int32)

    def run(mod):
        return lambda x, i: mod.lax.scatter_apply(x, i, mod.lax.sin, _scatter_dims(mod),
                                                  update_shape=(3,))
    expected = np.asarray(run(jax)(x, idx))
    for got in (run(fg)(x, idx), fg.jit(run(fg))(x, idx)):
        np.testing.assert_array_equal(np.asarray(got), expected)
    prims = [e.primitive.name for e in fg.make_jaxpr(run(fg))(x, idx).jaxpr.eqns]
    assert prims.count("scatter_apply") == 1 and "while" not in prims
    _, tangent = fg.jvp(lambda v: run(fg)(v, idx), (x,), (np.ones_like(x),))
    once, twice = np.cos(x[3]), np.cos(np.sin(x[1])) * np.cos(x[1])
    np.testing.assert_allclose(np.asarray(tangent)[[0, 1, 3]], [1.0, twice, once], rtol=1e-6)


# --- lax.linalg ---------------------------------------------------------------------------

from funcgraph.lax import linalg as fg_linalg  # noqa: E402

SPD = np.array([[4.0, 1.0, 2.0], [1.0, 3.0, 0.0], [2.0, 0.0, 5.0]], np.float32)
GENERAL = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]], np.float32)


def _same_up_to_column_signs(mine, theirs):
    """Eigen- and singular vectors are unique up to a sign per column."""
    mine, theirs = np.asarray(mine), np.asarray(theirs)
    assert mine.dtype == theirs.dtype and mine.shape == theirs.shape
    signs = np.sign(np.sum(mine * theirs, axis=-2, keepdims=True))
    assert_close(mine * signs, theirs, scale=10)


def test_lax_linalg_has_jax_names_that_map_onto_funcgraph():
    missing = {n for n in dir(jax.lax.linalg) if not n.startswith("_")} - set(dir(fg_linalg))
    # Not provided: the algorithm enums and the primitive objects of the functions
    # funcgraph composes from other primitives.
    assert missing == {
        "EigImplementation", "EighImplementation", "SvdAlgorithm",
        "cholesky_update_p", "lu_pivots_to_permutation_p", "symmetric_product_p"}


def test_lax_linalg_decompositions_match_jax():
    assert_close(fg_linalg.cholesky(SPD), jax.lax.linalg.cholesky(SPD))
    asym = SPD + np.triu(np.ones_like(SPD), 1)  # symmetrize_input averages the triangles
    assert_close(fg_linalg.cholesky(asym), jax.lax.linalg.cholesky(asym))
    v, w = fg_linalg.eigh(SPD)
    jv, jw = jax.lax.linalg.eigh(SPD)
    assert_close(w, jw, scale=10)
    _same_up_to_column_signs(v, jv)
    for mine, theirs in zip(fg_linalg.lu(GENERAL), jax.lax.linalg.lu(GENERAL), strict=True):
        assert_close(mine, theirs)
    for full in (True, False):
        q, r = fg_linalg.qr(GENERAL[:, :2], full_matrices=full)
        jq, jr = jax.lax.linalg.qr(GENERAL[:, :2], full_matrices=full)
        assert_close(q, jq, scale=10)
        assert_close(r, jr, scale=10)
    u, s, vh = fg_linalg.svd(GENERAL)
    ju, js, jvh = jax.lax.linalg.svd(GENERAL)
    assert_close(s, js, scale=10)
    _same_up_to_column_signs(u, ju)
    _same_up_to_column_signs(np.swapaxes(vh, -1, -2), np.swapaxes(jvh, -1, -2))
    assert_close(fg_linalg.svd(GENERAL, compute_uv=False),
                 jax.lax.linalg.svd(GENERAL, compute_uv=False), scale=10)
    w, vr = fg_linalg.eig(GENERAL, compute_left_eigenvectors=False)
    jw, jvr = jax.lax.linalg.eig(GENERAL, compute_left_eigenvectors=False)
    assert_close(w, jw, scale=10)
    if not on_cpu():  # jax's GPU eig may give each eigenvector another phase than LAPACK
        vr = np.asarray(vr) * column_phases(np.asarray(vr), np.asarray(jvr))[None, :]
    assert_close(vr, jvr, scale=10)


@pytest.mark.cpu_only  # jax has schur only on the CPU (LAPACK gees; no CUDA lowering)
def test_lax_linalg_schur_matches_jax():
    for mine, theirs in zip(fg_linalg.schur(SPD), jax.lax.linalg.schur(SPD), strict=True):
        assert_close(mine, theirs, scale=10)
    assert len(fg_linalg.schur(SPD, compute_schur_vectors=False)) == 1


def test_lax_linalg_compositions_match_jax():
    check_against_jax(
        lambda a, c: fg_linalg.symmetric_product(a, c, alpha=2.0, beta=0.5, symmetrize_output=True),
        lambda a, c: jax.lax.linalg.symmetric_product(a, c, alpha=2.0, beta=0.5,
                                                      symmetrize_output=True), GENERAL, SPD)
    r, w = np.asarray(jax.lax.linalg.cholesky(SPD)).T, np.array([0.5, 1.0, -1.0], np.float32)
    check_against_jax(fg_linalg.cholesky_update, jax.lax.linalg.cholesky_update, r, w)
    pivots = np.array([[2, 2, 2], [1, 4, 3]], np.int32)
    check_against_jax(lambda p: fg_linalg.lu_pivots_to_permutation(p, 5),
                      lambda p: jax.lax.linalg.lu_pivots_to_permutation(p, 5), pivots)
    packed, taus = _geqrf(GENERAL)
    check_against_jax(fg_linalg.householder_product, jax.lax.linalg.householder_product,
                      packed, taus)
    for left in (True, False):
        for transpose in (True, False):
            c = GENERAL[:, :2] if left else GENERAL[:2]
            check_against_jax(
                lambda *xs: fg_linalg.ormqr(*xs, left=left, transpose=transpose),
                lambda *xs: jax.lax.linalg.ormqr(*xs, left=left, transpose=transpose),
                packed, taus, c)
    dl, d = np.array([0, 1, 2, 3], np.float32), np.array([5, 6, 7, 8], np.float32)
    du, b = np.array([1, 2, 3, 0], np.float32), np.arange(8, dtype=np.float32).reshape(4, 2)
    check_against_jax(fg_linalg.tridiagonal_solve, jax.lax.linalg.tridiagonal_solve,
                      dl, d, du, b)


def _geqrf(a):
    """LAPACK's packed QR (Householder vectors below the diagonal, and their taus)."""
    packed, taus = scipy.linalg.lapack.sgeqrf(a)[:2]
    return packed, taus


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_qr_raw_mode_is_lapacks_geqrf(shape, dtype):
    """numpy.linalg.qr(mode="raw") (lineax's QR solver): LAPACK's packed reflectors and
    taus, the first transposed, as jax's."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=shape).astype(dtype)
    if np.iscomplexobj(a):
        a = a + 1j * rng.normal(size=shape).astype(dtype)
    for mine, theirs in zip(fnp.linalg.qr(a, mode="raw"), jnp.linalg.qr(a, mode="raw"),
                            strict=True):
        assert mine.dtype == theirs.dtype
        assert_close(mine, theirs, scale=10)


def test_lax_linalg_differentiates_as_jax():
    def loss(mod):
        linalg = mod.lax.linalg
        return lambda a: (linalg.cholesky(a).sum() + linalg.svd(a, compute_uv=False).sum()
                          + linalg.eigh(a)[1].sum() + linalg.qr(a)[1].sum())
    assert_close(fg.grad(loss(fg))(SPD), jax.grad(loss(jax))(SPD), scale=50)
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    solve = lambda mod: lambda d: mod.lax.linalg.tridiagonal_solve(  # noqa: E731
        x * 0.5, d + 4, x, x[:, None]).sum()
    assert_close(fg.grad(solve(fg))(x), jax.grad(solve(jax))(x), scale=10)


# --- custom_derivatives.linear_call ---------------------------------------------------------

def _scaled(r, x):
    return {"y": x["a"] / r, "z": x["b"] * r}


def _scaled_transpose_times_7(r, ct):
    # Not the true transpose, on purpose (as in jax's docs): transposition must use it.
    return {"a": ct["y"] * 7.0, "b": ct["z"] * r}


def _linear_call_loss(mod):
    def loss(x, r):
        out = mod.custom_derivatives.linear_call(_scaled, _scaled_transpose_times_7, r, x)
        return (out["y"] * 2.0).sum() + out["z"].sum()
    return loss


def test_linear_call_evaluates_and_transposes_with_the_given_transpose_as_jax():
    x = {"a": np.array([1.0, 2.0, 3.0], np.float32), "b": np.float32(4.0)}
    r = np.float32(2.0)
    for mod_fn in (lambda f: f, fg.jit):
        assert_close(mod_fn(_linear_call_loss(fg))(x, r), _linear_call_loss(jax)(x, r))
        mine = mod_fn(fg.grad(_linear_call_loss(fg)))(x, r)
        theirs = jax.grad(_linear_call_loss(jax))(x, r)
        for key in ("a", "b"):
            assert_close(mine[key], theirs[key])
    tangent = {"a": np.ones(3, np.float32), "b": np.float32(1.0)}
    call = lambda mod: lambda v: mod.custom_derivatives.linear_call(  # noqa: E731
        _scaled, _scaled_transpose_times_7, r, v)
    _, mine = fg.jvp(call(fg), (x,), (tangent,))
    _, theirs = jax.jvp(call(jax), (x,), (tangent,))
    assert_close(mine["y"], theirs["y"])
    assert_close(mine["z"], theirs["z"])
    eqns = fg.make_jaxpr(call(fg))(x).jaxpr.eqns
    assert [e.primitive.name for e in eqns] == ["linear_call"]


def test_linear_call_rejects_derivatives_of_residuals_and_bad_transposes():
    x = {"a": np.array([1.0, 2.0], np.float32), "b": np.float32(4.0)}
    with pytest.raises(ValueError, match="residual"):
        fg.grad(_linear_call_loss(fg), 1)(x, np.float32(2.0))

    def wrong_structure(r, ct):
        return ct["y"]
    with pytest.raises(TypeError, match="structure of linear_args"):
        fg.custom_derivatives.linear_call(_scaled, wrong_structure, np.float32(2.0), x)


# --- scaled_dot ---------------------------------------------------------------------------

def _scaled_dot_operands(batched):
    rng = np.random.default_rng(0)
    lead = (2,) if batched else ()
    lhs = rng.standard_normal(lead + (4, 64)).astype(jax.numpy.float8_e4m3fn)
    rhs = rng.standard_normal(lead + (64, 3)).astype(jax.numpy.float8_e4m3fn)
    lhs_scale = (2.0 ** rng.integers(-2, 3, lead + (4, 2))).astype(jax.numpy.float8_e8m0fnu)
    rhs_scale = (2.0 ** rng.integers(-2, 3, lead + (2, 3))).astype(jax.numpy.float8_e8m0fnu)
    return lhs, rhs, lhs_scale, rhs_scale


@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("preferred", [None, np.float32])
def test_scaled_dot_matches_jax_bit_for_bit(batched, preferred):
    operands = _scaled_dot_operands(batched)

    def run(mod):
        return lambda l, r, ls, rs: mod.lax.scaled_dot(
            l, r, lhs_scale=ls, rhs_scale=rs, preferred_element_type=preferred)
    expected = np.asarray(run(jax)(*operands))
    for result in (run(fg)(*operands), fg.jit(run(fg))(*operands)):
        result = np.asarray(result)
        assert result.dtype == expected.dtype
        np.testing.assert_array_equal(result, expected)
    unscaled = np.asarray(jax.lax.scaled_dot(*operands[:2]))
    np.testing.assert_array_equal(np.asarray(lax.scaled_dot(*operands[:2])), unscaled)


def test_scaled_dot_rejects_a_scale_that_does_not_fit():
    lhs, rhs, lhs_scale, rhs_scale = _scaled_dot_operands(False)
    bad = lhs_scale[:, :1][:3]  # a non-contracting dimension that does not match
    with pytest.raises(Exception):
        jax.lax.scaled_dot(lhs, rhs, lhs_scale=bad, rhs_scale=rhs_scale)
    with pytest.raises(TypeError, match="lhs_scale"):
        lax.scaled_dot(lhs, rhs, lhs_scale=bad, rhs_scale=rhs_scale)


# --- jnp.i0 and jnp.kaiser, built on lax.bessel_i0e ----------------------------------------

def test_i0_and_kaiser_match_jax():
    import funcgraph.numpy as fnp
    x = np.array([0.0, 0.5, -3.0, 19.0, 25.0, -80.0], np.float32)
    check_against_jax(fnp.i0, jax.numpy.i0, x, scale=5)
    check_against_jax(fnp.i0, jax.numpy.i0, np.arange(3))
    check_against_jax(fnp.i0, jax.numpy.i0, np.float16(1.5))
    z = np.array([0.0, -0.0, 1.5, -2.5, -3.0, 30.0], np.float32)
    assert_close(fg.vmap(fg.grad(fnp.i0))(z), jax.vmap(jax.grad(jax.numpy.i0))(z))
    # jax differentiates exp(|x|) i0e(|x|) and sets 0 at 0; the same bits under jit
    for order in (fg.grad, lambda f: fg.grad(fg.grad(f))):
        jorder = jax.grad if order is fg.grad else lambda f: jax.grad(jax.grad(f))
        np.testing.assert_array_equal(fg.jit(fg.vmap(order(fnp.i0)))(z),
                                      jax.jit(jax.vmap(jorder(jax.numpy.i0)))(z))
    with pytest.raises(ValueError):
        jax.numpy.i0(np.complex64(1j))
    with pytest.raises(ValueError, match="i0"):
        fnp.i0(np.complex64(1j))
    for m, beta in [(0, 1.0), (1, 1.0), (5, 2.0), (8, 14)]:
        assert_close(fnp.kaiser(m, beta), jax.numpy.kaiser(m, beta), scale=5)
