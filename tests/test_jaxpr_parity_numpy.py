"""The same program as jax for funcgraph.numpy's top-level functions (issue 29): each
row's program must have no more equations than jax's, no primitive jax's lacks, the same
contractions and the same output types.  Families (unary and binary elementwise
functions, reductions) get generated rows; the rest are written out."""
import numpy as np
import pytest

import funcgraph.numpy as fnp
from tests.jaxpr_parity import Row, check_coverage, check_row


def _f32(*shape):
    return np.linspace(0.1, 0.9, int(np.prod(shape)), dtype=np.float32).reshape(shape)


def _i32(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)


def _bool(*shape):
    return (np.arange(int(np.prod(shape))) % 2 == 0).reshape(shape)


X, V, I, B = _f32(3, 4), _f32(4), _i32(3, 4), _bool(3, 4)
X16 = X.astype(np.float16)
C64 = (X + 1j * X).astype(np.complex64)


def fn(name):
    """The call of `funcgraph.numpy.<name>` / `jax.numpy.<name>`."""
    return lambda m: getattr(m.numpy, name)


def lam(make):
    """The call of `make(numpy_namespace)`, for calls that need list arguments or
    keyword-only wiring."""
    return lambda m: make(m.numpy)


# jax keeps these as one primitive each (stack, unstack, split, tile; indices stacks its
# grids, resize tiles) that lowers to concatenations, slices or a broadcast: their rows
# compare StableHLO op counts.
HIGH_LEVEL = {"stack", "unstack", "split", "array_split", "hsplit", "vsplit", "dsplit", "tile",
              "indices", "resize"}


def row(name, *args, x64=False, measure=None, call=None, **kwargs):
    function = name.split(":")[0].split(" ")[0]
    measure = measure or ("hlo" if function in HIGH_LEVEL else "jaxpr")
    return Row(name, call or fn(function), args, kwargs, x64, measure)


UNARY_FLOAT = """abs absolute acos acosh arccos arccosh arcsin arcsinh arctan arctanh asin asinh
    atan atanh cbrt ceil conj conjugate cos cosh deg2rad degrees exp exp2 expm1 fabs fix floor
    i0 imag isfinite isinf isnan isneginf isposinf isreal iscomplex log log10 log1p log2
    logical_not negative positive rad2deg radians real reciprocal rint round around sign signbit
    sin sinc sinh spacing sqrt square tan tanh trunc angle nan_to_num frexp modf copy ravel
    iscomplexobj isrealobj""".split()
UNARY_INT = "abs sign square negative invert bitwise_not bitwise_invert bitwise_count".split()
UNARY_COMPLEX = "abs angle conj real imag exp log sqrt sign isfinite".split()
UNARY_F16 = "sin exp log sqrt sinc i0 log2 log10".split()

BINARY_FLOAT = """add arctan2 atan2 copysign divide equal float_power floor_divide fmax fmin
    fmod greater greater_equal heaviside hypot less less_equal logaddexp logaddexp2 logical_and
    logical_or logical_xor maximum minimum mod multiply nextafter not_equal pow power remainder
    subtract true_divide divmod isclose""".split()
BINARY_INT = """add subtract multiply floor_divide mod remainder divide power bitwise_and
    bitwise_or bitwise_xor left_shift right_shift bitwise_left_shift bitwise_right_shift gcd lcm
    maximum minimum fmod""".split()

REDUCTIONS = """all amax amin any max min mean prod std sum var argmax argmin ptp count_nonzero
    median nanargmax nanargmin nanmax nanmean nanmedian nanmin nanprod nanstd nansum nanvar
    average""".split()
CUMULATIVE = "cumsum cumprod cumulative_sum cumulative_prod nancumsum nancumprod".split()

GENERATED = (
    [row(f"{n}: f32", X) for n in UNARY_FLOAT if n != "fix"]
    # jax 0.10 removed jnp.fix (NumPy's alias of trunc): compared with jnp.trunc
    + [row("fix: f32", X, call=lambda m: getattr(m.numpy, "fix", m.numpy.trunc))]
    + [row(f"{n}: i32", I) for n in UNARY_INT]
    + [row(f"{n}: c64", C64) for n in UNARY_COMPLEX]
    + [row(f"{n}: f16", X16) for n in UNARY_F16]
    + [row(f"{n}: f32 broadcast", X, V) for n in BINARY_FLOAT]
    + [row(f"{n}: f32 and python scalar", X, 2.0) for n in BINARY_FLOAT]
    + [row(f"{n}: i32 broadcast", I, _i32(4) + 1) for n in BINARY_INT]
    + [row(f"{n}: i32 and python scalar", I, 2) for n in BINARY_INT]
    + [row(f"{n}: f32", X) for n in REDUCTIONS]
    + [row(f"{n}: axis=0", X, axis=0) for n in REDUCTIONS]
    + [row(f"{n}: axis=1 keepdims", X, axis=1, keepdims=True)
       for n in REDUCTIONS if n not in ("average",)]
    + [row(f"{n}: i32", I) for n in ("sum", "prod", "mean", "max", "var", "cumsum")]
    + [row(f"{n}: axis=0", X, axis=0) for n in CUMULATIVE]
    + [row(f"{n}: flattened", X) for n in CUMULATIVE if not n.startswith("cumulative")]
)

WRITTEN = [
    # Elementwise functions with other arguments.
    # jax's elementwise primitives stretch size-1 dimensions themselves (one equation that
    # lowers to the broadcasts funcgraph traces): compared after lowering.
    row("multiply: size-1 dims", _f32(3, 1), _f32(1, 4), measure="hlo"),
    row("add: size-1 dims and vector", _f32(3, 1), V, measure="hlo"),
    row("where: size-1 dims", _bool(3, 1), _f32(1, 4), X, measure="hlo"),
    row("add: bool", B, B),
    row("multiply: f32 and i32", X, I),
    row("logical_and: bool", B, B),
    row("equal: complex", C64, C64),
    row("clip", X, 0.2, 0.5),
    row("clip: array bounds", X, V, 0.5),
    row("clip: max only", X, max=0.5),
    row("round: decimals=2", X, decimals=2),
    row("ldexp", X, I),
    row("isclose: python scalar", X, 0.5),
    row("allclose", X, X),
    row("array_equal", X, X),
    row("array_equiv", X, V),
    row("nan_to_num: values", X, nan=1.0, posinf=2.0, neginf=-2.0),
    row("frexp: f16", X16),
    row("float_power: i32", I, 2),
    row("heaviside: i32", I, I),
    row("where", B, X, V),
    row("where: python scalars", B, 1.0, 0.0),
    row("select", call=lam(lambda np_: lambda c, x, y: np_.select([c, ~c], [x, y], 0.0)),
        *(B, X, X)),
    row("piecewise", X, call=lam(lambda np_: lambda x: np_.piecewise(
        x, [x < 0.5, x >= 0.5], [lambda t: t * 2, lambda t: t + 1]))),
    row("interp", _f32(5), V, V),
    row("interp: left right", _f32(5), V, V, left=0.0, right=1.0),
    row("interp: period", _f32(5), V, V, period=1.0),
    row("vander", V),
    row("vander: N increasing", V, N=3, increasing=True),
    row("unwrap", X),
    row("unwrap: axis=0", X, axis=0),
    row("gradient", V),
    row("gradient: 2d", X),
    row("gradient: axis=0", X, axis=0),
    row("trapezoid", X),
    row("trapezoid: x", X, x=V),
    row("diff", X),
    row("diff: n=2 axis=0", X, n=2, axis=0),
    row("diff: prepend", X, prepend=0.0),
    row("ediff1d", V),
    row("ediff1d: to_end", V, to_end=0.0),
    row("convolve", V, _f32(3)),
    row("convolve: same", V, _f32(3), mode="same"),
    row("correlate", V, _f32(3)),
    row("correlate: full", V, _f32(3), mode="full"),
    row("cov", X),
    row("cov: y", V, V),
    row("corrcoef", X),
    row("cross", _f32(4, 3), _f32(3)),
    row("cross: 2d vectors", _f32(4, 2), _f32(4, 2)),
    row("kron", _f32(2, 2), _f32(3, 2)),
    row("quantile", X, 0.5),
    row("quantile: axis=0", X, 0.5, axis=0),
    row("quantile: array q", X, np.array([0.25, 0.75], np.float32)),
    row("quantile: nearest", X, 0.5, method="nearest"),
    row("percentile", X, 50.0),
    row("nanquantile", X, 0.5),
    row("nanpercentile", X, 50.0, axis=1),
    row("median: i32", I),
    row("average: weights", X, axis=1, weights=V),
    row("average: returned", X, axis=0, returned=True),
    row("std: ddof=1", X, ddof=1),
    row("var: complex", C64),
    row("mean: f16", X16),
    row("sum: f16", X16),
    row("sum: dtype", X, dtype=np.float16),
    row("sum: bool", B),
    row("sum: axis tuple", _f32(2, 3, 4), axis=(0, 2)),
    row("max: initial", X, initial=0.0),
    row("sum: where", X, where=B),
    row("argmax: keepdims", X, axis=0, keepdims=True),
    row("count_nonzero: i32", I, axis=0),
    row("ptp: i32", I, axis=1),
    row("bincount", _i32(6), length=8),
    row("bincount: weights", _i32(6), weights=_f32(6), length=8),
    row("digitize", X, V),
    row("digitize: right", X, V, right=True),
    row("histogram", _f32(12), bins=4, range=(0.0, 1.0)),
    row("histogram: bins array", _f32(12), bins=V),
    row("histogram: density", _f32(12), bins=4, range=(0.0, 1.0), density=True),
    row("histogram_bin_edges", _f32(12), bins=4, range=(0.0, 1.0)),
    row("histogram2d", _f32(12), _f32(12), bins=3, range=((0.0, 1.0), (0.0, 1.0))),
    row("histogramdd", _f32(12, 2), bins=3, range=((0.0, 1.0), (0.0, 1.0))),
    row("i0: f64", X.astype(np.float64), x64=True),
    row("cbrt: f64", X.astype(np.float64), x64=True),
    row("sum: f64", X.astype(np.float64), x64=True),
    row("spacing: f16", X16),
    row("nextafter: f16", X16, X16),
    row("gcd: i8", I.astype(np.int8), I.astype(np.int8)),
    row("bitwise_count: u8", I.astype(np.uint8)),
    row("right_shift: u32", I.astype(np.uint32), 1),
    row("negative: i8", I.astype(np.int8)),
    row("sum: i8", I.astype(np.int8), axis=1),
    row("cumsum: bool", B, axis=0),
    row("argmax: i32", I, axis=1),
    row("sort: f16", X16, axis=0),
    row("clip: i32", I, 1, 5),
    row("maximum: bool", B, B),
    row("floor_divide: u8", I.astype(np.uint8), I.astype(np.uint8) + 1),
    row("power: f32 arrays", X, V),
    row("power: i32 arrays", I, _i32(4)),
    row("mean: complex", C64, axis=0),
    row("abs: f16", X16),
    row("prod: axis=0 keepdims", X, axis=0, keepdims=True),
    row("max: i32 axis", I, axis=0),
    row("any: i32", I, axis=1),
    row("divmod: i32", I, _i32(4) + 1),
    row("modf: f16", X16),
    row("fmax: i32", I, I),
    row("logaddexp: f16", X16, X16),
    row("hypot: i32", I, I),
    row("arctan2: i32", I, I),
    # Creation.
    row("zeros_like", X),
    row("ones_like", X),
    row("empty_like", X),
    row("full_like", X, 2.0),
    row("full_like: array fill", X, V),
    row("full", (3, 4), np.float32(2.0)),
    row("full: array fill", (3, 4), V),
    row("zeros", (3, 4)),
    row("ones", (3, 4)),
    row("empty", (3, 4)),
    row("eye", 3),
    row("eye: k=1", 3, 4, k=1),
    row("identity", 3),
    row("tri", 3, 4, k=1),
    row("arange", 5),
    row("arange: float", 0.0, 1.0, 0.25),
    row("linspace", 0.0, 1.0, 5),
    row("linspace: array bounds", V, V + 1, 5),
    row("linspace: no endpoint", 0.0, 1.0, 5, endpoint=False),
    row("logspace", 0.0, 1.0, 5),
    row("geomspace", 1.0, 10.0, 5),
    row("array", X),
    row("array: ndmin", V, ndmin=2),
    row("asarray", X),
    row("asarray: dtype", X, dtype=np.int32),
    row("astype", X, np.int32),
    row("astype: bool", X, np.bool_),
    row("copy: i32", I),
    row("fromfunction", call=lam(lambda np_: lambda x: np_.fromfunction(
        lambda i, j: i * x[0] + j, (3, 4), dtype=np.float32)), *(V,)),
    row("meshgrid", V, _f32(3)),
    row("meshgrid: ij", V, _f32(3), indexing="ij"),
    row("meshgrid: sparse", V, _f32(3), sparse=True),
    row("indices", (3, 4)),
    row("indices: sparse", (3, 4), sparse=True),
    row("ix_", _i32(3), _i32(4)),
    row("diag_indices", 3),
    row("diag_indices_from", _f32(3, 3)),
    row("tril_indices", 3),
    row("triu_indices", 3, 1),
    row("tril_indices_from", _f32(3, 3)),
    row("triu_indices_from", _f32(3, 3)),
    row("mask_indices", 3, np.triu, size=6,
        call=lam(lambda np_: lambda n, f, **k: np_.mask_indices(n, getattr(np_, "triu"), **k))),
    row("bartlett", 5),
    row("blackman", 5),
    row("hamming", 5),
    row("hanning", 5),
    row("kaiser", 5, 2.0),
    # Shapes and layout.
    row("atleast_1d", X),
    row("atleast_1d: scalar", np.float32(1.0)),
    row("atleast_2d", V),
    row("atleast_3d", X),
    row("atleast_3d: two", V, X),
    row("broadcast_arrays", X, V),
    row("broadcast_to", V, (3, 4)),
    row("expand_dims", X, 0),
    row("expand_dims: tuple", X, (0, 3)),
    row("moveaxis", _f32(2, 3, 4), 0, -1),
    row("permute_dims", _f32(2, 3, 4), (2, 0, 1)),
    row("transpose", X),
    row("transpose: axes", _f32(2, 3, 4), (1, 0, 2)),
    row("matrix_transpose", _f32(2, 3, 4)),
    row("swapaxes", _f32(2, 3, 4), 0, 2),
    row("rollaxis", _f32(2, 3, 4), 2),
    row("reshape", X, (4, 3)),
    row("reshape: -1", X, (-1,)),
    row("ravel: transposed order F", X, order="F"),
    row("squeeze", _f32(1, 3, 1, 4)),
    row("squeeze: axis", _f32(1, 3, 1, 4), axis=2),
    row("flip", X),
    row("flip: axis", X, 1),
    row("fliplr", X),
    row("flipud", X),
    row("rot90", X),
    row("rot90: k=2", X, 2),
    row("roll", X, 1),
    row("roll: axis", X, 1, axis=1),
    row("roll: two axes", X, (1, 2), axis=(0, 1)),
    row("tile", X, (2, 1)),
    row("tile: int", V, 3),
    row("repeat", X, 2),
    row("repeat: axis", X, 2, axis=0),
    row("repeat: array repeats", V, _i32(4) % 3, total_repeat_length=6),
    row("resize", X, (5, 3)),
    row("pad", X, 1),
    row("pad: widths", X, ((1, 0), (0, 2))),
    row("pad: constant value", X, 1, constant_values=2.0),
    row("pad: edge", X, 1, mode="edge"),
    row("pad: reflect", X, 1, mode="reflect"),
    row("pad: symmetric", X, 1, mode="symmetric"),
    row("pad: wrap", X, 1, mode="wrap"),
    row("append", X, V),
    row("append: axis", X, _f32(1, 4), axis=0),
    row("delete", X, 1),
    row("delete: axis", X, 1, axis=1),
    row("delete: slice", X, slice(0, 2), axis=1),
    row("insert", X, 1, 5.0),
    row("insert: axis", X, 1, V, axis=0),
    row("concatenate", call=lam(lambda np_: lambda a, b: np_.concatenate([a, b])), *(X, X)),
    row("concatenate: axis=1", call=lam(lambda np_: lambda a, b: np_.concatenate([a, b], 1)),
        *(X, X)),
    row("concatenate: axis=None", call=lam(lambda np_: lambda a, b: np_.concatenate(
        [a, b], axis=None)), *(X, V)),
    row("concat", call=lam(lambda np_: lambda a, b: np_.concat([a, b])), *(X, X)),
    row("stack", call=lam(lambda np_: lambda a, b: np_.stack([a, b])), *(X, X)),
    row("stack: axis=-1", call=lam(lambda np_: lambda a, b: np_.stack([a, b], -1)), *(X, X)),
    row("hstack", call=lam(lambda np_: lambda a, b: np_.hstack([a, b])), *(X, X)),
    row("vstack", call=lam(lambda np_: lambda a, b: np_.vstack([a, b])), *(X, V)),
    row("row_stack", call=lam(lambda np_: lambda a, b: getattr(
        np_, "row_stack", np_.vstack)([a, b])), *(X, V)),
    row("dstack", call=lam(lambda np_: lambda a, b: np_.dstack([a, b])), *(X, X)),
    row("column_stack", call=lam(lambda np_: lambda a, b: np_.column_stack([a, b])), *(V, V)),
    row("block", call=lam(lambda np_: lambda a, b: np_.block([[a, b], [b, a]])), *(X, X)),
    row("split", X, 3),
    row("split: indices", X, [1, 3], axis=1),
    row("array_split", X, 2, axis=1),
    row("array_split: uneven", V, 3),
    row("hsplit", X, 2),
    row("vsplit", X, 3),
    row("dsplit", _f32(2, 3, 4), 2),
    row("unstack", X),
    row("unstack: axis", X, axis=1),
    # Indexing, taking and putting.
    row("take", X, _i32(2)),
    row("take: axis", X, _i32(2), axis=1),
    row("take: clip", X, _i32(5), axis=1, mode="clip"),
    row("take: fill", X, _i32(5), axis=1, mode="fill"),
    row("take_along_axis", X, np.zeros((3, 1), np.int32), axis=1),
    row("take_along_axis: axis=0", X, np.zeros((1, 4), np.int32), axis=0),
    row("put_along_axis", X, np.zeros((3, 1), np.int32), 1.0, axis=1, inplace=False),
    row("put", X, _i32(2), 1.0, inplace=False),
    row("place", X, B, V, inplace=False),
    row("fill_diagonal", _f32(3, 3), 1.0, inplace=False),
    row("choose", _i32(4) % 3, call=lam(lambda np_: lambda i, a, b, c: np_.choose(
        i, [a, b, c], mode="clip")), *(V, V, V)),
    row("compress", np.array([True, False, True]), X, axis=0, size=2),
    row("compress: size", np.array([True, False, True, True]), X, axis=1, size=2),
    row("extract", B, X, size=6),
    row("diagonal", X),
    row("diagonal: offset", _f32(2, 3, 4), 1, 1, 2),
    row("diag", X),
    row("diag: vector", V),
    row("diag: k", _f32(4, 4), 1),
    row("diagflat", V),
    row("trace", X),
    row("trace: offset", _f32(2, 3, 4), 1, 1, 2),
    row("tril", X),
    row("triu", X, 1),
    row("tril: batched", _f32(2, 3, 4), -1),
    row("ravel_multi_index", call=lam(lambda np_: lambda i, j: np_.ravel_multi_index(
        (i, j), (3, 4), mode="clip")), *(_i32(3), _i32(3))),
    row("unravel_index", _i32(5), (3, 4)),
    row("apply_along_axis", call=lam(lambda np_: lambda x: np_.apply_along_axis(
        lambda v: v.sum() * 2, 1, x)), *(X,)),
    row("apply_over_axes", call=lam(lambda np_: lambda x: np_.apply_over_axes(
        np_.sum, x, [0, 1])), *(X,)),
    row("packbits", B),
    row("packbits: axis little", B, axis=1, bitorder="little"),
    row("unpackbits", I.astype(np.uint8)),
    row("unpackbits: axis", I.astype(np.uint8), axis=1, count=4),
    # Sorting, searching and sets.
    row("sort", X),
    row("sort: axis=0", X, axis=0),
    row("sort: flattened", X, axis=None),
    row("sort: descending", X, descending=True),
    row("sort: i32", I),
    row("argsort", X),
    row("argsort: axis=0 stable", X, axis=0, stable=True),
    row("argsort: descending", X, descending=True),
    row("sort_complex", C64),
    row("lexsort", call=lam(lambda np_: lambda a, b: np_.lexsort((a, b))), *(V, V)),
    row("partition", X, 2),
    row("partition: axis=0", X, 1, axis=0),
    row("argpartition", X, 2),
    row("searchsorted", V, X),
    row("searchsorted: right", V, X, side="right"),
    row("searchsorted: scalar", V, 0.5),
    row("searchsorted: compare_all", V, X, method="compare_all"),
    row("searchsorted: sort", V, X, method="sort"),
    row("nonzero", X, size=4),
    row("nonzero: fill", X, size=4, fill_value=-1),
    row("flatnonzero", X, size=4),
    row("argwhere", X, size=4),
    row("isin", X, V),
    row("isin: invert", I, _i32(4), invert=True),
    row("isin: sort", I, _i32(4), method="sort"),
    row("unique", V, size=3),
    row("unique: counts inverse", V, size=3, return_counts=True, return_inverse=True),
    row("unique: index", V, size=3, return_index=True),
    row("unique_all", V, size=3),
    row("unique_counts", V, size=3),
    row("unique_inverse", V, size=3),
    row("unique_values", V, size=3),
    row("union1d", V, V, size=4),
    row("intersect1d", V, V, size=4),
    row("setdiff1d", V, V, size=4),
    row("setxor1d", V, V, size=4),
    # Polynomials.
    row("poly", V),
    row("polyadd", V, _f32(3)),
    row("polysub", V, _f32(3)),
    row("polymul", V, _f32(3)),
    row("polydiv", V, _f32(3)),
    row("polyval", V, X),
    row("polyval: scalar", V, 0.5),
    row("polyder", V),
    row("polyder: m=2", V, 2),
    row("polyint", V),
    row("polyint: m k", V, 2, k=1.0),
    row("polyfit", _f32(6), _f32(6), 2),
    row("roots", V, strip_zeros=False),
    # Products.
    row("matmul", X, _f32(4, 5)),
    row("matmul: batched x weight", _f32(2, 3, 4), _f32(4, 5)),
    row("matmul: i32", I, _i32(4, 2)),
    row("matmul: broadcast batches", _f32(2, 1, 3, 4), _f32(5, 4, 6)),
    row("dot", X, _f32(4, 5)),
    row("dot: nd", _f32(2, 3, 4), _f32(5, 4, 6)),
    row("dot: scalar", X, 2.0),
    row("dot: vectors", V, V),
    row("vdot", X, X),
    row("vdot: complex", C64, C64),
    row("inner", X, _f32(5, 4)),
    row("outer", _f32(3), V),
    row("tensordot", _f32(2, 3, 4), _f32(4, 5), 1),
    row("tensordot: axes pairs", _f32(2, 3, 4), _f32(3, 2, 5), ((0, 1), (1, 0))),
    row("vecdot", X, X),
    row("vecdot: broadcast", X, V),
    row("vecdot: complex", C64, C64),
    row("matvec", X, V),
    row("matvec: batched", _f32(2, 3, 4), V),
    row("vecmat", _f32(3), _f32(3, 4)),
    row("einsum", call=lam(lambda np_: lambda a, b: np_.einsum("bsd,de->bse", a, b)),
        *(_f32(2, 3, 4), _f32(4, 5))),
    row("einsum: trace", call=lam(lambda np_: lambda a: np_.einsum("ii", a)), *(_f32(3, 3),)),
    row("einsum: three operands", call=lam(lambda np_: lambda a, b, c: np_.einsum(
        "ij,jk,kl->il", a, b, c)), *(X, _f32(4, 5), _f32(5, 2))),
    row("einsum: sum", call=lam(lambda np_: lambda a: np_.einsum("ij->j", a)), *(X,)),
    row("einsum: outer", call=lam(lambda np_: lambda a, b: np_.einsum("i,j->ij", a, b)),
        *(V, V)),
    row("einsum: hadamard", call=lam(lambda np_: lambda a, b: np_.einsum("ij,ij->ij", a, b)),
        *(X, X)),
    # Shape queries traced through a function of an array.
    row("shape", call=lam(lambda np_: lambda x: x * np_.shape(x)[0]), *(X,)),
    row("ndim", call=lam(lambda np_: lambda x: x * np_.ndim(x)), *(X,)),
    row("size", call=lam(lambda np_: lambda x: x * np_.size(x)), *(X,)),
]

ROWS = GENERATED + WRITTEN

_HELPER = "funcgraph's own helper exported with the API; jax.numpy has no such function"
_HOST = "host I/O or printing: works on concrete NumPy data, not on traced arrays"
_DTYPE = "a question about dtypes or Python values, answered without tracing an array"
NOT_TRACED = {
    "asarray_operand": _HELPER, "aval_of": _HELPER, "broadcast_to_shape": _HELPER,
    "canonical_axes": _HELPER, "check_axis": _HELPER, "convert": _HELPER,
    "install_methods": _HELPER, "promote_and_broadcast": _HELPER, "promote_dtypes": _HELPER,
    "promote_to_inexact": _HELPER,
    "array_repr": _HOST, "array_str": _HOST, "frombuffer": _HOST, "fromfile": _HOST,
    "fromiter": _HOST, "fromstring": _HOST, "get_printoptions": _HOST, "load": _HOST,
    "printoptions": _HOST, "save": _HOST, "savez": _HOST, "set_printoptions": _HOST,
    "einsum_path": "plans an einsum contraction order from shapes; computes nothing",
    "broadcast_shapes": "a function of shapes (tuples), not of arrays",
    "can_cast": _DTYPE, "finfo": _DTYPE, "iinfo": _DTYPE, "isdtype": _DTYPE,
    "issubdtype": _DTYPE, "promote_types": _DTYPE, "result_type": _DTYPE,
    "isscalar": _DTYPE, "iterable": _DTYPE,
    "trim_zeros": "its output size depends on the values: jax refuses it under tracing too",
}

_SLICED_DIAGONAL = ("different but better: the diagonal is a strided `slice` of the flattened "
                    "matrix where jax gathers it (or masks it with iotas)")
_FIRST_MARK = ("different but better: the mark of each sorted run's first value is "
               "concatenated where jax scatters it; fewer equations than jax")
KNOWN_DIFFERENCES = {
    "cov": "different but better: the centred X is contracted with itself directly "
           "(X X^T as one dot_general) where jax transposes it first",
    "cov: y": "different but better: the centred X is contracted with itself directly "
              "(X X^T as one dot_general) where jax transposes it first",
    "corrcoef": "different but better: cov's X X^T without jax's transpose, and its "
                "diagonal as a masked sum where jax branches on the platform and gathers it; "
                "25 equations, jax 40",
    "fmax: i32": "different but better: integers have no NaN, so fmax is one `max` where jax "
                 "runs its float formula (gt, ne, or, select_n)",
    "insert": "different but better: one concatenation and one gather of static positions "
              "(4 equations) where jax computes the positions with scatters and cumsums (72)",
    "insert: axis": "different but better: one concatenation and one gather of static "
                    "positions (3 equations) where jax computes them with scatters and "
                    "cumsums (71)",
    "choose": "different but better: one `clamp` and a chain of selects where jax clips with "
              "max and min and gathers from the stacked choices",
    "ravel_multi_index": "different but better: one `clamp` per index where jax clips with "
                         "convert, max, convert, min",
    "unravel_index": "different but better: the flat index is clipped once (max, min) before "
                     "the divisions where jax fixes the coordinates afterwards with selects; "
                     "43 equations, jax 54",
    "diagonal": _SLICED_DIAGONAL, "diagonal: offset": _SLICED_DIAGONAL, "diag": _SLICED_DIAGONAL,
    "diag: k": _SLICED_DIAGONAL, "trace": _SLICED_DIAGONAL + ", then sums it",
    "trace: offset": _SLICED_DIAGONAL + ", then sums it",
    "diagflat": "different but better: the matrix is a select on an iota mask (`eq`), as "
                "jax's diag, where jax's diagflat scatters into zeros",
    **{name: _FIRST_MARK for name in (
        "unique", "unique: counts inverse", "unique: index", "unique_all", "unique_counts",
        "unique_inverse", "unique_values", "intersect1d", "setdiff1d")},
    "polyadd": "different but equal: the shorter polynomial is padded by a concatenation "
               "where jax scatter-adds it into zeros",
    "polysub": "different but better: the shorter polynomial is padded by a concatenation and "
               "subtracted where jax negates and scatter-adds it",
    "polyint: m k": "different but better: the integration constants are concatenated and "
                    "the powers divided with static factors; 10 equations, jax 14",
    "dot: scalar": "different but equal: a product with a scalar is one `mul` where jax emits "
                   "a dot_general with no contracting dimensions (lowered to that multiply)",
}


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_numpy_emits_jaxs_program(row):
    check_row(row, KNOWN_DIFFERENCES)


def test_rows_are_unique():
    names = [r.name for r in ROWS]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})


def test_every_numpy_function_has_a_row():
    check_coverage(fnp, ROWS, NOT_TRACED)


def test_tables_name_existing_rows_and_functions():
    names = {r.name for r in ROWS}
    assert set(KNOWN_DIFFERENCES) <= names, sorted(set(KNOWN_DIFFERENCES) - names)
    missing = sorted(n for n in NOT_TRACED if not hasattr(fnp, n))
    assert not missing, missing
