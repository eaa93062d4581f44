"""The names added to close gaps of tests/test_name_coverage.py, checked against jax:
value eagerly and under jit, grad where differentiable, and vmap over the first argument.

Each row: (module, name, positional args, static keyword args, checks)."""
import functools

import jax
import jax.example_libraries.optimizers as jopt
import jax.example_libraries.stax as jstax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.example_libraries.optimizers as fopt
import funcgraph.example_libraries.stax as fstax
import funcgraph.numpy as fnp

MODULES = {"numpy": (fnp, jnp), "lax": (fg.lax, jax.lax), "nn": (fg.nn, jax.nn)}
rng = np.random.RandomState(0)
F = rng.randn(3, 4).astype(np.float32)
V = rng.randn(5).astype(np.float32)
POS = (np.abs(rng.randn(6)) + 0.1).astype(np.float32)
I = rng.randint(-20, 20, size=(3, 4)).astype(np.int32)
C = (rng.randn(4) + 1j * rng.randn(4)).astype(np.complex64)
SQ = rng.randn(3, 3).astype(np.float32)
X12 = np.linspace(0, 1, 12, dtype=np.float32)
IMG = rng.randn(2, 3, 5, 4).astype(np.float32)

EVJ = "eager jit"
ALL = "eager jit grad vmap"
NOGRAD = "eager jit vmap"
ROWS = [
    # numpy
    ("numpy", "angle", (C,), {}, NOGRAD),
    ("numpy", "angle", (F,), {"deg": True}, ALL),
    ("numpy", "iscomplex", (C,), {}, NOGRAD),
    ("numpy", "isreal", (F,), {}, NOGRAD),
    ("numpy", "copy", (F,), {}, ALL),
    ("numpy", "cumulative_sum", (F,), {"axis": 1, "include_initial": True}, ALL),
    ("numpy", "cumulative_prod", (V,), {}, ALL),
    ("numpy", "matvec", (SQ, V[:3]), {}, ALL),
    ("numpy", "vecmat", (V[:3], SQ), {}, ALL),
    ("numpy", "gcd", (I, np.int32(6)), {}, NOGRAD),
    ("numpy", "lcm", (I, np.int32(4)), {}, NOGRAD),
    ("numpy", "bitwise_count", (I,), {}, NOGRAD),
    ("numpy", "bitwise_invert", (I,), {}, NOGRAD),
    ("numpy", "bitwise_left_shift", (I, np.int32(2)), {}, NOGRAD),
    ("numpy", "bitwise_right_shift", (I, np.int32(1)), {}, NOGRAD),
    ("numpy", "spacing", (F,), {}, NOGRAD),
    ("numpy", "ldexp", (F, np.int32(3)), {}, ALL),
    ("numpy", "frexp", (np.array([8.0, 0.3, 0.0, -5.5, 1e-3, np.inf], np.float32),), {}, NOGRAD),
    ("numpy", "unwrap", (np.cumsum(POS * 2).astype(np.float32),), {}, ALL),
    ("numpy", "cov", (F,), {}, ALL),
    ("numpy", "cov", (F,), {"rowvar": False, "ddof": 0}, ALL),
    ("numpy", "corrcoef", (F,), {}, ALL),
    ("numpy", "gradient", (F,), {"axis": 1}, ALL),
    ("numpy", "gradient", (V, 0.5), {}, ALL),
    ("numpy", "gradient", (F,), {}, EVJ),
    ("numpy", "matrix_transpose", (F,), {}, ALL),
    ("numpy", "rollaxis", (np.ones((2, 3, 4), np.float32),), {"axis": 2}, ALL),
    ("numpy", "unstack", (F,), {"axis": 1}, ALL),
    ("numpy", "resize", (V,), {"new_shape": (3, 4)}, ALL),
    ("numpy", "diagflat", (V[:3],), {"k": 1}, ALL),
    ("numpy", "fill_diagonal", (SQ, 2.0), {"inplace": False}, ALL),
    ("numpy", "fill_diagonal", (np.zeros((3, 5), np.float32), 1.0), {"inplace": False}, EVJ),
    ("numpy", "fill_diagonal", (np.zeros((2, 2, 2), np.float32), V[:2]), {"inplace": False},
     EVJ),
    ("numpy", "put", (F, np.array([0, 5, 11]), np.array([1.0, 2.0, 3.0], np.float32)),
     {"inplace": False}, ALL),
    ("numpy", "put_along_axis", (F, np.array([[0], [2], [1]]), np.float32(9.0)),
     {"axis": 1, "inplace": False}, ALL),
    ("numpy", "compress", (np.array([True, False, True]), F), {"axis": 0}, EVJ[:5]),
    ("numpy", "compress", (np.array([True, False, True]), F), {"axis": 0, "size": 3}, EVJ),
    ("numpy", "extract", (np.array([1, 0, 1, 1, 0]), V), {}, "eager"),
    ("numpy", "choose", (np.array([0, 2, 1, 2]), [V[:4], V[1:], -V[:4]]), {"mode": "clip"},
     EVJ),
    ("numpy", "partition", (V,), {"kth": 2}, ALL),
    ("numpy", "argpartition", (F,), {"kth": 1, "axis": 0}, NOGRAD),
    ("numpy", "sort_complex", (F,), {}, NOGRAD),
    ("numpy", "ravel_multi_index", ((np.array([1, 2, 0]), np.array([3, 0, 1])), (3, 4)),
     {"mode": "clip"}, EVJ),
    ("numpy", "ravel_multi_index", ((np.array([1, 2]), np.array([3, 0])), (3, 4)),
     {"order": "F"}, "eager"),
    ("numpy", "trim_zeros", (np.array([0, 0, 1.0, 2.0, 0], np.float32),), {}, "eager"),
    ("numpy", "trim_zeros", (np.array([0, 0, 1.0, 2.0, 0], np.float32),), {"trim": "b"}, "eager"),
    ("numpy", "setxor1d", (np.array([1, 2, 3, 3]), np.array([2, 5])), {}, "eager"),
    ("numpy", "polyadd", (V[:3], V), {}, ALL),
    ("numpy", "polysub", (V[:3], V), {}, ALL),
    ("numpy", "polymul", (V[:3], V), {}, ALL),
    ("numpy", "polyder", (V,), {"m": 2}, ALL),
    ("numpy", "polyint", (V,), {"m": 2}, ALL),
    ("numpy", "polydiv", (V, np.array([1.0, -2.0], np.float32)), {}, ALL),
    ("numpy", "poly", (V[:3],), {}, ALL),
    ("numpy", "packbits", (I > 0,), {}, NOGRAD),
    ("numpy", "packbits", (I,), {"axis": 1, "bitorder": "little"}, NOGRAD),
    ("numpy", "unpackbits", (np.array([[3, 200], [255, 17]], np.uint8),), {"axis": 0}, NOGRAD),
    ("numpy", "unpackbits", (np.array([3, 200], np.uint8),), {"count": 11, "bitorder": "little"},
     NOGRAD),
    ("numpy", "frombuffer", (b"\x01\x02\x03\x04",), {"dtype": np.uint8, "offset": 1}, "eager"),
    ("numpy", "fromstring", ("1 2 3",), {"sep": " "}, "eager"),
    ("numpy", "polyfit", (X12, np.sin(X12 * 7)), {"deg": 2}, EVJ),
    ("numpy", "polyfit", (X12, np.cos(np.stack([X12, X12 * 3], 1))),
     {"deg": 1, "w": np.linspace(1, 2, 12)}, EVJ),
    ("numpy", "histogramdd", (np.abs(F.T),), {"bins": (2, 3, 4)}, EVJ),
    ("numpy", "histogramdd", (np.abs(F.T),), {"bins": 3, "density": True, "weights": V[:4]}, EVJ),
    ("numpy", "histogram2d", (V, V[::-1]), {"bins": (2, 3), "range": [(-1, 1), (-2, 2)]}, EVJ),
    ("numpy", "roots", (np.array([1.0, -6, 11, -6], np.float32),), {}, "eager"),
    ("numpy", "roots", (np.array([0, 0, 1.0, 0, 1], np.float32),), {}, "eager"),
    ("numpy", "roots", (np.array([5.0], np.float32),), {}, "eager"),
    ("numpy", "diag_indices", (3,), {}, "eager"),
    ("numpy", "diag_indices_from", (SQ,), {}, "eager"),
    ("numpy", "indices", ((2, 3),), {}, "eager"),
    ("numpy", "indices", ((2, 3),), {"sparse": True}, "eager"),
    ("numpy", "mask_indices", (4, np.triu), {"k": 1}, "eager"),
    ("numpy", "bartlett", (7,), {}, "eager"),
    ("numpy", "blackman", (6,), {}, "eager"),
    ("numpy", "hamming", (5,), {}, "eager"),
    ("numpy", "hanning", (1,), {}, "eager"),
    ("numpy", "hanning", (8,), {}, "eager"),
    # nn
    ("nn", "identity", (F,), {}, ALL),
    ("nn", "tanh", (F,), {}, ALL),
    ("nn", "hard_sigmoid", (F * 4,), {}, ALL),
    ("nn", "hard_silu", (F * 4,), {}, ALL),
    ("nn", "hard_swish", (F * 4,), {}, ALL),
    ("nn", "mish", (F,), {}, ALL),
    ("nn", "glu", (F,), {}, ALL),
    ("nn", "glu", (F.T,), {"axis": 0}, EVJ),
    ("nn", "log1mexp", (POS,), {}, ALL),
    ("nn", "logmeanexp", (F,), {"axis": 1}, ALL),
    ("nn", "logmeanexp", (F,), {"where": F > 0}, ALL),
    ("nn", "sparse_plus", (F * 2,), {}, ALL),
    ("nn", "sparse_sigmoid", (F * 2,), {}, ALL),
    ("nn", "squareplus", (F,), {}, ALL),
    ("nn", "squareplus", (F,), {"b": 1.0}, ALL),
    # lax
    ("lax", "empty", ((2, 3), np.float32), {}, "eager"),
    ("lax", "conv_general_dilated_patches", (IMG, (2, 2), (1, 1), "VALID"), {}, ALL),
    ("lax", "conv_general_dilated_patches", (IMG, (3, 2), (2, 1), "SAME"),
     {"rhs_dilation": (1, 2)}, ALL),
    ("lax", "conv_general_dilated_patches", (np.moveaxis(IMG, 1, -1), (2, 2), (1, 1), "VALID"),
     {"dimension_numbers": ("NHWC", "OIHW", "NHWC")}, ALL),
    ("lax", "full", ((2, 3), 1.5), {}, "eager"),
    ("lax", "full", ((2,), 3), {"dtype": np.float32}, "eager"),
    ("lax", "full_like", (F, 2.0), {}, ALL),
    ("lax", "full_like", (I, 3.7), {}, NOGRAD),
    ("lax", "broadcast_to_rank", (V,), {"rank": 3}, ALL),
    ("lax", "collapse", (np.ones((2, 3, 4), np.float32) * 2,), {"start_dimension": 1}, ALL),
    ("lax", "collapse", (F,), {"start_dimension": 0, "stop_dimension": 2}, ALL),
    ("lax", "tile", (F,), {"reps": (2, 3)}, ALL),
    ("lax", "split", (F,), {"sizes": (1, 3), "axis": 1}, ALL),
    ("lax", "stack", ([V, V * 2],), {"axis": 1}, EVJ),
    ("lax", "unstack", (F,), {"axis": 1}, ALL),
    ("lax", "complex", (F, F * 2), {}, NOGRAD),
    ("lax", "clz", (np.array([1, 0, -1, 255, 1 << 20], np.int32),), {}, NOGRAD),
    ("lax", "clz", (np.array([1, 0, 255], np.uint8),), {}, NOGRAD),
    ("lax", "reduce_xor", (I,), {"axes": (1,)}, NOGRAD),
    ("lax", "approx_max_k", (F,), {"k": 2}, ALL),
    ("lax", "approx_min_k", (F,), {"k": 2, "reduction_dimension": 0}, ALL),
]


def _ids(rows):
    return [f"{m}.{n}-{i}" for i, (m, n, *_) in enumerate(rows)]


def close(got, want, rtol=2e-5, atol=2e-6):
    got_leaves, want_leaves = fg.tree.leaves(got), jax.tree.leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def _scalar_sum(fn, tree_sum, real):
    return lambda *args: tree_sum(fn(*args), real)


def _sum_fg(out, real):
    return sum(fnp.sum(real(leaf)) for leaf in fg.tree.leaves(out))


def _sum_jax(out, real):
    return sum(jnp.sum(real(leaf)) for leaf in jax.tree.leaves(out))


def _over_arrays(fn, args, positions):
    """fn as a function of the NumPy-array arguments at positions, the others fixed."""
    def of_arrays(*arrays):
        full = list(args)
        for i, a in zip(positions, arrays, strict=True):
            full[i] = a
        return fn(*full)
    return of_arrays


def _functions(module, name, kwargs):
    fg_mod, jax_mod = MODULES[module]
    return (functools.partial(getattr(fg_mod, name), **kwargs),
            functools.partial(getattr(jax_mod, name), **kwargs))


# Names whose values are unspecified (lax.empty: uninitialized memory on a GPU), so
# only their shapes and dtypes are compared.
UNSPECIFIED_VALUES = {("lax", "empty")}


def same_types(got, want):
    got_leaves, want_leaves = fg.tree.leaves(got), jax.tree.leaves(want)
    assert [(np.shape(g), np.asarray(g).dtype) for g in got_leaves] == \
        [(np.shape(w), np.asarray(w).dtype) for w in want_leaves]


@pytest.mark.parametrize("module,name,args,kwargs,checks", ROWS, ids=_ids(ROWS))
def test_value_matches_jax(module, name, args, kwargs, checks):
    fg_fn, jax_fn = _functions(module, name, kwargs)
    compare = same_types if (module, name) in UNSPECIFIED_VALUES else close
    compare(fg_fn(*args), jax_fn(*args))


TRANSFORMED_ROWS = [row for row in ROWS if row[4] != "eager"]


@pytest.mark.slow  # about two minutes on two shared cores: one compile per row and check
@pytest.mark.parametrize("module,name,args,kwargs,checks", TRANSFORMED_ROWS,
                         ids=_ids(TRANSFORMED_ROWS))
def test_transformations_match_jax(module, name, args, kwargs, checks):
    # jax's values come from jitted functions: one compile each, where running them op
    # by op compiles every op (test_value_matches_jax compares the eager values).
    fg_fn, jax_fn = _functions(module, name, kwargs)
    positions = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
    arrays = [args[i] for i in positions]
    fg_of, jax_of = _over_arrays(fg_fn, args, positions), _over_arrays(jax_fn, args, positions)
    if "jit" in checks:
        close(fg.jit(fg_of)(*arrays), jax.jit(jax_of)(*arrays))
    first_only = tuple(0 if i == 0 else None for i in range(len(arrays)))
    if "grad" in checks:
        close(fg.grad(_scalar_sum(fg_of, _sum_fg, fnp.real))(*arrays),
              jax.jit(jax.grad(_scalar_sum(jax_of, _sum_jax, jnp.real)))(*arrays),
              rtol=1e-4, atol=1e-5)
    if "vmap" in checks:
        batch = np.stack([arrays[0], arrays[0] * 2 + 1]).astype(arrays[0].dtype)
        batched = [batch, *arrays[1:]]
        close(fg.vmap(fg_of, in_axes=first_only)(*batched),
              jax.jit(jax.vmap(jax_of, in_axes=first_only))(*batched))


def test_a_few_transformations_match_jax():
    """A quick sample of the slow table: jit, grad and vmap of a numpy, nn and lax name."""
    for row in [r for r in ROWS if (r[1], r[4]) in
                {("cov", ALL), ("mish", ALL), ("tile", ALL), ("gcd", NOGRAD)}]:
        test_transformations_match_jax(*row)


def test_apply_along_and_over_axes_match_jax():
    close(fnp.apply_along_axis(lambda r: fnp.sum(r * r), 1, F),
          jnp.apply_along_axis(lambda r: jnp.sum(r * r), 1, F))
    close(fnp.apply_along_axis(fnp.cumsum, 0, F), jnp.apply_along_axis(jnp.cumsum, 0, F))
    close(fnp.apply_over_axes(fnp.sum, F, (0, 1)), jnp.apply_over_axes(jnp.sum, F, (0, 1)))
    close(fg.grad(lambda x: fnp.sum(fnp.apply_along_axis(fnp.max, 1, x)))(F),
          jax.grad(lambda x: jnp.sum(jnp.apply_along_axis(jnp.max, 1, x)))(F))


def test_predicates_and_aliases_match_jax():
    for value in [1, 2.0, np.float32(1), np.ones(()), np.ones(2), "s", [1]]:
        assert fnp.isscalar(value) == jnp.isscalar(value), value
    assert fnp.isscalar(fnp.ones(())) == jnp.isscalar(jnp.ones(()))
    assert fnp.isscalar(fnp.ones(2)) == jnp.isscalar(jnp.ones(2))
    for dtype in [np.float32, np.int8, np.uint16, np.bool_, np.complex64]:
        for kind in ["bool", "signed integer", "unsigned integer", "integral", "real floating",
                     "complex floating", "numeric", ("bool", "real floating"), np.float32]:
            assert fnp.isdtype(dtype, kind) == jnp.isdtype(dtype, kind), (dtype, kind)
    assert fnp.iscomplexobj(C) and not fnp.iscomplexobj(F) and fnp.isrealobj(F)
    for name in ["float_", "double", "single", "int_", "uint", "complex_", "cdouble", "csingle"]:
        assert np.dtype(getattr(fnp, name)) == np.dtype(getattr(jnp, name)), name
    for name in ["character", "flexible", "generic", "object_", "ComplexWarning", "iterable",
                 "array_repr", "array_str", "save", "savez"]:
        assert getattr(fnp, name) is getattr(jnp, name), name
    with fnp.printoptions(precision=2):
        assert fnp.get_printoptions()["precision"] == 2
    assert np.get_printoptions()["precision"] != 2
    assert np.dtype(fnp.bool) == np.dtype(jnp.bool)


def test_lax_small_names_match_jax():
    shapes = [(2, 1), (3,), (1, 1)]
    assert fg.lax.broadcast_shapes(*shapes) == jax.lax.broadcast_shapes(*shapes)
    for value in [1.0, 1, True, np.float64, np.int16, F, "float32"]:
        assert fg.lax.dtype(value) == jax.lax.dtype(value), value
    assert fg.lax.Precision("highest") is fg.lax.Precision.HIGHEST
    assert [p.name for p in fg.lax.Precision] == [p.name for p in jax.lax.Precision]
    idx = np.array([[0], [2]])
    dnums = fg.lax.ScatterDimensionNumbers((), (0,), (0,))
    jdnums = jax.lax.ScatterDimensionNumbers((), (0,), (0,))
    upd = np.array([1.0, 2.0], np.float32)
    close(fg.lax.scatter_sub(V, idx, upd, dnums), jax.lax.scatter_sub(V, idx, upd, jdnums))
    close(fg.grad(lambda u: fnp.sum(fg.lax.scatter_sub(V, idx, u, dnums) ** 2))(upd),
          jax.grad(lambda u: jnp.sum(jax.lax.scatter_sub(V, idx, u, jdnums) ** 2))(upd))
    with pytest.raises(ValueError, match="sum to"):
        fg.lax.split(F, (1, 2), axis=1)


def test_bad_arguments_raise_like_jax():
    with pytest.raises(NotImplementedError, match="inplace=False"):
        fnp.fill_diagonal(SQ, 1.0)
    with pytest.raises(NotImplementedError, match="wrap"):
        fnp.fill_diagonal(SQ, 1.0, wrap=True, inplace=False)
    with pytest.raises(ValueError):
        fnp.matrix_transpose(V)
    with pytest.raises(TypeError):
        fnp.gcd(F, F)
    with pytest.raises(ValueError):
        fnp.ravel_multi_index((np.array([5]), np.array([0])), (3, 4))
    with pytest.raises(ValueError):
        fg.nn.glu(V)


def test_polyfit_gradient_matches_jax():
    x = np.linspace(0, 1, 12, dtype=np.float32)
    y = np.sin(np.arange(12.0, dtype=np.float32))
    close(fg.grad(lambda y: fnp.sum(fnp.polyfit(x, y, 2) ** 2))(y),
          jax.grad(lambda y: jnp.sum(jnp.polyfit(x, y, 2) ** 2))(y), rtol=1e-3, atol=1e-4)


def test_host_io_matches_jax(tmp_path):
    path = str(tmp_path / "x.npy")
    np.save(path, F)
    close(fnp.load(path), jnp.load(path))
    with pytest.raises(NotImplementedError, match="not pure"):
        fnp.fromiter(iter([1, 2]), dtype=np.float32)
    with pytest.raises(NotImplementedError):
        fnp.fromfile(path)
    args = ("ij,jk,kl->il", np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5)))
    assert fnp.einsum_path(*args)[0] == jnp.einsum_path(*args)[0]


def test_top_level_names():
    with fg.enable_x64():
        assert fnp.ones(1).dtype == np.float64
    assert fnp.ones(1).dtype == np.float32
    assert fg.P is fg.sharding.PartitionSpec
    assert np.dtype(fg.float0) == np.dtype(jax.dtypes.float0)
    tree = {"a": fnp.ones(2), "b": [1.0, None]}
    assert fg.copy_to_host_async(tree) is tree
    info = fg.print_environment_info(return_string=True)
    assert "jaxlib" in info and "numpy" in info


def test_sm3_and_state_packing_match_jax():
    params = {"w": F, "b": V[:4], "s": np.float32(0.5)}
    grads = jax.tree.map(lambda p: np.asarray(p) * 0.3 + 0.1, params)
    j_init, j_update, j_get = jopt.sm3(0.1)
    f_init, f_update, f_get = fopt.sm3(0.1)
    j_state, f_state = j_init(params), f_init(params)
    for i in range(3):
        j_state, f_state = j_update(i, grads, j_state), f_update(i, grads, f_state)
    close(f_get(f_state), j_get(j_state))
    marked = fopt.unpack_optimizer_state(f_state)
    assert isinstance(marked["w"], fopt.JoinPoint)
    close(f_get(fopt.pack_optimizer_state(marked)), j_get(j_state))
    assert fstax.logsoftmax is fg.nn.log_softmax
    assert jstax.logsoftmax is jax.nn.log_softmax
    close(fstax.glorot()(fg.random.PRNGKey(0), (3, 4)),
          jstax.glorot()(jax.random.PRNGKey(0), (3, 4)))


@pytest.mark.parametrize("shape,column_axis", [((3, 4), -1), ((5, 2), -1), ((2, 3, 4), 0)])
def test_orthogonal_initializer_matches_jax(shape, column_axis):
    got = fg.nn.initializers.orthogonal(2.0, column_axis)(fg.random.PRNGKey(1), shape)
    want = jax.nn.initializers.orthogonal(2.0, column_axis)(jax.random.PRNGKey(1), shape)
    close(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(3, 2, 4), (3, 3, 2, 2), (1, 3, 2, 3, 3)])
def test_delta_orthogonal_initializer_matches_jax(shape):
    got = fg.nn.initializers.delta_orthogonal()(fg.random.PRNGKey(2), shape)
    want = jax.nn.initializers.delta_orthogonal()(jax.random.PRNGKey(2), shape)
    close(got, want, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="fan_in"):
        fg.nn.initializers.delta_orthogonal()(fg.random.PRNGKey(2), (3, 4, 2))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_partition_and_argpartition_layout_with_ties(dtype):
    """argpartition gives the kth+1 smallest, then the rest by increasing index, as jax;
    unsigned zeros and repeated values included."""
    x = np.random.RandomState(0).randint(0, 3, (5, 6)).astype(dtype)
    for kth in (0, 3, -1):
        for axis in (0, 1):
            np.testing.assert_array_equal(fnp.partition(x, kth, axis),
                                          jnp.partition(x, kth, axis))
            np.testing.assert_array_equal(fnp.argpartition(x, kth, axis),
                                          jnp.argpartition(x, kth, axis))
