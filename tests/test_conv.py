"""lax.conv_general_dilated and its conveniences against jax: layouts, padding, strides,
dilations, feature and batch groups, 1D/2D/3D, float32/bfloat16, run eagerly, under jit,
differentiated with respect to both operands, batched (either or both operands) and pushed
forward; plus finite differences, the shape helpers, and errors."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
from funcgraph import lax
from funcgraph.test_util import check_grads
from tests.util import assert_close, eager_and_jit

# (id, lhs shape, rhs shape, params); shapes in the layout that dimension_numbers names.
CASES = [
    ("2d_same_default", (2, 3, 6, 5), (4, 3, 3, 2), dict(window_strides=(1, 1), padding="SAME")),
    ("2d_nhwc_valid_strided", (2, 7, 6, 3), (3, 2, 3, 4),
     dict(window_strides=(2, 1), padding="VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    ("2d_explicit_negative_pad_rhs_dilation_groups", (2, 7, 6, 4), (3, 2, 2, 6),
     dict(window_strides=(2, 1), padding=((1, 2), (0, -1)), rhs_dilation=(1, 2),
          dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=2)),
    ("1d_batch_groups_lhs_dilation", (4, 3, 9), (6, 3, 3),
     dict(window_strides=(2,), padding=((1, 1),), lhs_dilation=(2,), batch_group_count=2)),
    ("3d_same_lower", (2, 2, 5, 4, 3), (4, 2, 2, 2, 2),
     dict(window_strides=(1, 2, 1), padding="SAME_LOWER")),
    ("1d_mixed_layouts_groups", (2, 6, 5), (6, 3, 2),
     dict(window_strides=(1,), padding="SAME", feature_group_count=2,
          dimension_numbers=("NCH", "OIH", "NHC"))),
    ("1d_odd_layouts_batch_groups_dilations", (3, 6, 5), (3, 4, 2),
     dict(window_strides=(1,), padding=((2, 0),), batch_group_count=2, lhs_dilation=(3,),
          rhs_dilation=(2,), dimension_numbers=("CNH", "IOH", "HNC"))),
    ("2d_depthwise_dnums_object", (1, 4, 5, 5), (4, 1, 3, 3),
     dict(window_strides=(2, 2), padding=((1, 1), (1, 1)), feature_group_count=4,
          dimension_numbers=lax.ConvDimensionNumbers((0, 1, 2, 3), (0, 1, 2, 3),
                                                     (0, 1, 2, 3)))),
]
IDS = [c[0] for c in CASES]


def _jax_params(params):
    dn = params.get("dimension_numbers")
    if isinstance(dn, lax.ConvDimensionNumbers):
        params = dict(params, dimension_numbers=jax.lax.ConvDimensionNumbers(*dn))
    return params


def _operands(lhs_shape, rhs_shape, dtype=np.float32, seed=0):
    rng = np.random.RandomState(seed)
    return (rng.randn(*lhs_shape).astype(dtype), rng.randn(*rhs_shape).astype(dtype))


def _fns(params):
    return (lambda x, w: lax.conv_general_dilated(x, w, **params),
            lambda x, w: jax.lax.conv_general_dilated(x, w, **_jax_params(params)))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_forward_eager_and_jit(case):
    _, ls, rs, params = case
    x, w = _operands(ls, rs)
    ours, theirs = _fns(params)
    expected = theirs(x, w)
    for result in eager_and_jit(ours, x, w):
        assert_close(result, expected, scale=10)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_grad_both_operands(case):
    _, ls, rs, params = case
    x, w = _operands(ls, rs)
    ours, theirs = _fns(params)
    ct = np.random.RandomState(1).randn(*theirs(x, w).shape).astype(np.float32)
    expected = jax.grad(lambda x, w: jnp.sum(theirs(x, w) * ct), (0, 1))(x, w)
    loss = lambda x, w: fg.numpy.sum(ours(x, w) * ct)  # noqa: E731
    for grads in (fg.grad(loss, (0, 1))(x, w), fg.jit(fg.grad(loss, (0, 1)))(x, w)):
        for g, e in zip(grads, expected, strict=True):
            assert_close(g, e, scale=10)


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0),
                                     pytest.param((1, 2), marks=pytest.mark.slow)])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_vmap(case, in_axes):
    _, ls, rs, params = case
    rng = np.random.RandomState(2)
    args = []
    for shape, axis in zip((ls, rs), in_axes):
        shape = shape if axis is None else shape[:axis] + (3,) + shape[axis:]
        args.append(rng.randn(*shape).astype(np.float32))
    ours, theirs = _fns(params)
    expected = jax.vmap(theirs, in_axes)(*args)
    assert_close(fg.vmap(ours, in_axes)(*args), expected, scale=10)
    if in_axes == (0, 0):  # the batching rule's output also lowers and compiles
        assert_close(fg.jit(fg.vmap(ours, in_axes))(*args), expected, scale=10)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jvp(case):
    _, ls, rs, params = case
    x, w = _operands(ls, rs)
    tx, tw = _operands(ls, rs, seed=3)
    ours, theirs = _fns(params)
    out, tangent = fg.jvp(ours, (x, w), (tx, tw))
    e_out, e_tangent = jax.jvp(theirs, (x, w), (tx, tw))
    assert_close(out, e_out, scale=10)
    assert_close(tangent, e_tangent, scale=10)


@pytest.mark.parametrize("case", CASES[:4], ids=IDS[:4])
def test_finite_differences(case):
    _, ls, rs, params = case
    x, w = _operands(ls, rs)
    ours, _ = _fns(params)
    check_grads(ours, (x.astype(np.float32), w), order=2, modes=("fwd", "rev"),
                atol=3e-2, rtol=3e-2)


def test_per_example_grads_through_batch_groups_and_hessian_direction():
    """vmap of grad, and grad of grad (the transposes are convolutions themselves)."""
    _, ls, rs, params = CASES[2]
    x, w = _operands(ls, rs)
    ours, theirs = _fns(params)
    xs = x  # two examples of shape (7, 6, 4)

    def fg_loss(w, x):
        return fg.numpy.sum(ours(x[None], w) ** 2)

    def jax_loss(w, x):
        return jnp.sum(theirs(x[None], w) ** 2)

    assert_close(fg.vmap(fg.grad(fg_loss), (None, 0))(w, xs),
                 jax.vmap(jax.grad(jax_loss), (None, 0))(w, xs), scale=50)
    hvp = lambda grad, loss: grad(lambda w: grad(loss)(w, xs[0]).sum())(w)  # noqa: E731
    assert_close(hvp(fg.grad, fg_loss), hvp(jax.grad, jax_loss), scale=50)


@pytest.mark.parametrize("case", [CASES[1], CASES[4]], ids=[IDS[1], IDS[4]])
def test_bfloat16(case):
    _, ls, rs, params = case
    x, w = _operands(ls, rs, dtype=jnp.bfloat16)
    ours, theirs = _fns(params)
    for result in eager_and_jit(ours, x, w):
        assert_close(result, theirs(x, w), scale=2)
    g = fg.grad(lambda w: fg.numpy.sum(ours(x, w)).astype(np.float32))(w)
    e = jax.grad(lambda w: jnp.sum(theirs(x, w)).astype(np.float32))(w)
    assert_close(g, e, scale=4)


def test_preferred_element_type_and_integers():
    x, w = _operands((1, 2, 6), (3, 2, 3), dtype=jnp.bfloat16)
    kw = dict(window_strides=(1,), padding="VALID", preferred_element_type=np.float32)
    assert_close(lax.conv_general_dilated(x, w, **kw),
                 jax.lax.conv_general_dilated(x, w, **kw), dtype=jnp.bfloat16)
    g = fg.grad(lambda w: fg.numpy.sum(lax.conv_general_dilated(x, w, **kw)))(w)
    assert g.dtype == jnp.bfloat16


# XLA's GPU backend compiles integer convolutions only in cuDNN's int8 forms; jax lowers
# them as funcgraph does (a plain convolution), and fails there the same way.
@pytest.mark.cpu_only
def test_integer_convolution():
    xi, wi = (np.arange(12, dtype=np.int32).reshape(1, 2, 6), np.ones((3, 2, 3), np.int32))
    assert_close(lax.conv(xi, wi, (1,), "SAME"), jax.lax.conv(xi, wi, (1,), "SAME"))


def test_complex_convolution_is_three_real_ones():
    """As jax on CPU and GPU (XLA's GPU backend has no complex convolutions): Gauss's
    product of real and imaginary parts, three real convolutions."""
    (xr, wr), (xi, wi) = _operands((2, 3, 8), (4, 3, 3)), _operands((2, 3, 8), (4, 3, 3), seed=1)
    x, w = (xr + 1j * xi).astype(np.complex64), (wr + 1j * wi).astype(np.complex64)
    f = lambda x, w: lax.conv_general_dilated(x, w, (1,), "SAME")
    text = fg.jit(f).lower(x, w).as_text()
    convs = [line for line in text.splitlines() if "stablehlo.convolution" in line]
    assert len(convs) == 3 and not any("complex" in line for line in convs)
    expected = jax.lax.conv_general_dilated(x, w, (1,), "SAME")
    for result in eager_and_jit(f, x, w):
        assert_close(result, expected)
    g = fg.grad(lambda w: fg.numpy.sum(f(x, w)).real)(w)
    assert_close(g, jax.grad(lambda w: jnp.sum(jax.lax.conv_general_dilated(
        x, w, (1,), "SAME")).real)(w))


def test_conveniences():
    x, w = _operands((2, 3, 7, 6), (4, 3, 3, 2))
    assert_close(lax.conv(x, w, (2, 1), "VALID"), jax.lax.conv(x, w, (2, 1), "VALID"), scale=10)
    args = ((1, 2), [(1, 0), (2, 2)], (2, 1), (1, 2))
    assert_close(lax.conv_with_general_padding(x, w, *args),
                 jax.lax.conv_with_general_padding(x, w, *args), scale=10)


@pytest.mark.parametrize("padding", ["SAME", "VALID", ((1, 2), (0, 1))])
@pytest.mark.parametrize("transpose_kernel", [False, True])
def test_conv_transpose(padding, transpose_kernel):
    x, w = _operands((2, 5, 4, 3), (3, 2, 3, 3) if transpose_kernel else (3, 2, 3, 4))
    kw = dict(strides=(2, 1), padding=padding, transpose_kernel=transpose_kernel,
              rhs_dilation=(1, 2))
    expected = jax.lax.conv_transpose(x, w, **kw)
    assert_close(lax.conv_transpose(x, w, **kw), expected, scale=10)
    assert_close(fg.grad(lambda w: fg.numpy.sum(lax.conv_transpose(x, w, **kw) ** 2))(w),
                 jax.grad(lambda w: jnp.sum(jax.lax.conv_transpose(x, w, **kw) ** 2))(w),
                 scale=100)


def test_shape_helpers():
    dn = ("NHWC", "HWIO", "NHWC")
    assert tuple(lax.conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), dn)) == \
        tuple(jax.lax.conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), dn))
    assert lax.conv_general_permutations(dn) == jax.lax.conv_general_permutations(dn)
    assert lax.conv_general_shape_tuple((2, 9, 8, 3), (3, 2, 3, 5), (2, 1), "SAME", dn) == \
        jax.lax.conv_general_shape_tuple((2, 9, 8, 3), (3, 2, 3, 5), (2, 1), "SAME", dn)
    assert lax.conv_shape_tuple((2, 3, 9, 8), (5, 3, 3, 2), (2, 1), [(1, 1), (0, 2)], 2) == \
        jax.lax.conv_shape_tuple((2, 3, 9, 8), (5, 3, 3, 2), (2, 1), [(1, 1), (0, 2)], 2)
    for padding in ("SAME", "VALID", [(1, 0), (2, 1)]):
        assert lax.conv_transpose_shape_tuple((2, 5, 4, 3), (3, 2, 3, 4), (2, 1), padding, dn) \
            == jax.lax.conv_transpose_shape_tuple((2, 5, 4, 3), (3, 2, 3, 4), (2, 1), padding, dn)
    for mode in ("SAME", "SAME_LOWER", "VALID", "same"):
        assert [tuple(p) for p in lax.padtype_to_pads((5, 6), (3, 2), (2, 1), mode)] == \
            [tuple(p) for p in jax.lax.padtype_to_pads((5, 6), (3, 2), (2, 1), mode)]


def test_lowers_to_one_convolution():
    x, w = _operands((2, 8, 8, 3), (3, 3, 3, 4))
    text = fg.jit(lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))).lower(x, w).as_text()
    assert text.count("stablehlo.convolution") == 1 and "stablehlo.transpose" not in text


@pytest.mark.parametrize("bad, error", [
    (dict(padding="FOO"), RuntimeError),
    (dict(padding="SAME", lhs_dilation=(2, 1)), ValueError),
    (dict(padding="VALID", feature_group_count=2), ValueError),
    (dict(padding="VALID", dimension_numbers=("NCHW", "OIHW")), TypeError),
    (dict(padding="VALID", dimension_numbers=("NCHW", "OIHW", "NCWX")), TypeError),
    (dict(padding=[(1, 1)]), TypeError),
])
def test_errors_like_jax(bad, error):
    x, w = _operands((2, 3, 6, 5), (4, 3, 3, 2))
    with pytest.raises(error):
        jax.lax.conv_general_dilated(x, w, (1, 1), **bad)
    with pytest.raises(error):
        lax.conv_general_dilated(x, w, (1, 1), **bad)


def test_mismatched_dtypes_rejected():
    x, w = _operands((1, 2, 6), (3, 2, 3))
    with pytest.raises(TypeError, match="conv_general_dilated"):
        lax.conv(x, w.astype(jnp.bfloat16), (1,), "SAME")
