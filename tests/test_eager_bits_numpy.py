"""funcgraph.numpy's top-level functions: eager and jitted results bit for bit equal to
jax's (issue 29, "XLA's rewrites, bit for bit").

jax jits most of its numpy functions, so an eager call is one XLA program whose arithmetic
XLA fuses (a multiply feeding an add becomes one fused multiply-add, a division by a
broadcast scalar a multiply by its reciprocal); funcgraph's counterparts of the functions
that compose several float operations run compiled when eager (compiled_when_eager) so
that they round as jax's do.  Single-primitive ufuncs match primitive by primitive: a few
generated rows guard them.  Rows of KNOWN_DIFFERENCES still differ for a reason other than
fusion (another algorithm or order of operations); the test checks that they still differ,
so the table stays true.  A key "name/eager" or "name/jit" names one mode, a bare name
both."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg

RNG = np.random.default_rng(0)


def _f32(*shape, scale=3.0):
    return (RNG.normal(size=shape) * scale).astype(np.float32)


X = _f32(24, 20)                       # 480 values, about +-3
V = _f32(300)
W = _f32(20)                           # a row to broadcast against X
P = np.abs(_f32(24, 20)) + np.float32(0.1)   # positive
U = np.tanh(_f32(24, 20, scale=1.0))   # in (-1, 1)
BIG = _f32(24, 20, scale=300.0)
Q = np.float32([0.1, 0.25, 0.5, 0.9])
WTS = np.abs(_f32(20)) + np.float32(0.5)
I32 = RNG.integers(-50, 50, size=(24, 20)).astype(np.int32)
XN = X.copy()
XN[RNG.random(size=X.shape) < 0.1] = np.nan
XS = np.sort(V)
C64 = (_f32(24, 20) + 1j * _f32(24, 20)).astype(np.complex64)


def np_(m):
    return m.numpy


def fn(name):
    return lambda m: getattr(m.numpy, name)


def lam(make):
    return lambda m: make(m.numpy)


def row(name, *args, call=None, **kwargs):
    function = name.split(":")[0].split(" ")[0]
    return (name, call or fn(function), args, kwargs)


# single primitives (or a few exact ones): a few rows guard them
UNARY = "sqrt exp tanh floor sign reciprocal deg2rad sinc i0 nan_to_num".split()
BINARY = """add divide arctan2 hypot logaddexp logaddexp2 float_power floor_divide remainder
    heaviside""".split()
REDUCTIONS = "sum mean var std ptp nanmean nanvar nanstd median average".split()
CUMULATIVE = "cumsum cumprod nancumsum".split()

GENERATED = (
    [row(f"{n}", X) for n in UNARY]
    + [row("arcsin", U), row("arccosh", P + 1)]
    + [row(f"{n}: broadcast", X, W if n != "float_power" else P[0]) for n in BINARY]
    + [row(f"{n}: python scalar", X if n != "float_power" else P, 2.5)
       for n in ("add", "divide", "hypot", "logaddexp2", "float_power", "remainder")]
    + [row(f"{n}", X) for n in REDUCTIONS]
    + [row(f"{n}: axis=0", X, axis=0) for n in REDUCTIONS]
    + [row(f"{n}: axis=1 keepdims", X, axis=1, keepdims=True)
       for n in ("mean", "var", "std", "nanvar", "median")]
    + [row(f"{n}: nan", XN, axis=1) for n in ("nanmean", "nanvar", "nanstd", "nanmedian",
                                              "nansum", "nanmax")]
    + [row(f"{n}: axis=0", X, axis=0) for n in CUMULATIVE]
)

WRITTEN = [
    row("var: ddof=1", X, ddof=1),
    row("std: ddof=1 axis=1", X, axis=1, ddof=1),
    row("var: where", X, where=X > 0),
    row("mean: where", X, axis=1, where=X > 0),
    row("mean: i32", I32),
    row("var: i32", I32, axis=0),
    row("var: complex", C64, axis=0),
    row("mean: dtype f16", X, axis=0, dtype=np.float16),
    row("mean: f16", X.astype(np.float16), axis=1),
    row("average: weights", X, axis=1, weights=WTS),
    row("average: weights returned", X, axis=1, weights=WTS, returned=True),
    row("nanvar: ddof=1", XN, axis=0, ddof=1),
    row("ptp: i32", I32, axis=0),
    row("quantile", X, 0.3),
    row("quantile: axis q array", X, Q, axis=0),
    row("quantile: nearest", X, Q, axis=1, method="nearest"),
    row("quantile: keepdims", X, 0.7, axis=1, keepdims=True),
    row("nanquantile", XN, Q, axis=1),
    row("percentile", X, 37.0, axis=0),
    row("nanpercentile", XN, 63.0, axis=0),
    row("cov", X),
    row("cov: rowvar False", X, rowvar=False),
    row("cov: y", V[:20], W),
    row("cov: aweights", X, aweights=WTS),
    row("corrcoef", X),
    row("round: decimals=2", X, decimals=2),
    row("round: decimals=-1", BIG, decimals=-1),
    row("around: decimals=3", X, 3),
    row("clip", X, -1.0, 2.0),
    row("clip: arrays", X, W, 2.0),
    row("nan_to_num: values", XN, nan=1.5, posinf=2.0, neginf=-2.0),
    row("divmod: broadcast", X, W),
    row("frexp: big", BIG),
    row("heaviside: scalar", X, 0.5),
    row("polyval", W[:6], X),
    row("polyval: scalar x", W[:6], 1.7),
    row("polyval: scalar coefficients", V[:8], 0.3),
    row("polymul", W[:8], V[:5]),
    row("interp", X, XS, V),
    row("interp: period", X, XS, V, period=2.0),
    row("convolve", V, W[:7]),
    row("convolve: same", V, W[:7], mode="same"),
    row("correlate", V, W[:7]),
    row("trapezoid", X),
    row("trapezoid: dx", X, dx=0.3, axis=0),
    row("trapezoid: x", X, x=np.sort(W)),
    row("gradient", V),
    row("gradient: 2d", X),
    row("gradient: spacing", V, 0.7),
    row("diff: n=2 axis=0", X, n=2, axis=0),
    row("ediff1d", V),
    row("unwrap", X * 3),
    row("cross", X[:, :3], W[:3]),
    row("cross: 2d", X[:, :2], X[:, 2:4]),
    row("kron", X[:4, :5], W[:6].reshape(2, 3)),
    row("outer", V[:30], W),
    row("inner", X, X[:5]),
    row("dot: vectors", V, V),
    row("matmul", X, X.T),
    row("einsum: matmul", call=lam(lambda n: lambda a, b: n.einsum("ij,kj->ik", a, b)),
        *(X, X)),
    row("einsum: three operands", call=lam(lambda n: lambda a, b, c: n.einsum(
        "ij,jk,kl->il", a, b, c)), *(X, X.T, X)),
    row("einsum: hadamard sum", call=lam(lambda n: lambda a, b: n.einsum("ij,ij->i", a, b)),
        *(X, X)),
    row("einsum: trace", call=lam(lambda n: lambda a: n.einsum("ii", a)), *(X[:20],)),
    row("trace", X),
    row("linspace", 0.3, 7.1, 50),
    row("linspace: arrays", W, W + 3, 7),
    row("logspace", 0.3, 2.1, 50),
    row("geomspace", 0.3, 70.1, 50),
    row("arange: float", 0.1, 5.0, 0.3),
    row("hamming", 51),
    row("bartlett", 51),
    row("kaiser", 51, 3.5),
    row("vander", W[:8]),
    row("histogram", V, bins=10, range=(-5.0, 5.0)),
    row("histogram: weights", V, bins=7, weights=np.abs(V)),
    row("histogram_bin_edges", V, bins=13),
    row("isclose", X, X + 1e-6),
    row("where", X > 0, X, W),
    row("piecewise", X, call=lam(lambda n: lambda x: n.piecewise(
        x, [x < 0, x >= 0], [lambda t: t * 2.5 + 1, lambda t: t / 3 - 1]))),
]

X64_ROWS = [
    row("var f64", X.astype(np.float64), axis=1),
    row("std f64", X.astype(np.float64)),
    row("mean f64", X.astype(np.float64), axis=0),
    row("hypot f64", X.astype(np.float64), W.astype(np.float64)),
    row("logaddexp f64", X.astype(np.float64), W.astype(np.float64)),
    row("cov f64", X.astype(np.float64)),
    row("polyval f64", W[:6].astype(np.float64), X.astype(np.float64)),
    row("sinc f64", X.astype(np.float64)),
    row("round f64", X.astype(np.float64), decimals=3),
]

ROWS = [r + (False,) for r in GENERATED + WRITTEN] + [r + (True,) for r in X64_ROWS]

_NO_INPUT = ("no traced input: jax's jitted program is all constants, which XLA folds at "
             "compile time (no fused multiply-adds; jax's jit differs from jax's eager call "
             "too), where funcgraph's jit computes the window when tracing as its eager "
             "call does (equal to jax's eager call)")
_LINSPACE_0D = ("not yet explained: linspace between two 0-d (or shape (1,)) traced bounds "
                "traces jax's operations (start * (1 - t) + stop * t) yet XLA rounds jax's "
                "program otherwise in a few points (1 ulp); bounds of more points agree")
KNOWN_DIFFERENCES = {
    "mean: dtype f16": "funcgraph's reduce_sum of float16 lowers with a float32 accumulator "
                       "(funcgraph/lowering, outside this module) where jax's reduces in "
                       "float16; the programs are the same",
    "nanquantile": "not yet closed: funcgraph gathers the order statistics in (rows, q) "
                   "layout and transposes, jax in (q, rows) with an iota index pair; XLA "
                   "contracts the interpolation's multiply-add otherwise (1 ulp)",
    "nanpercentile": "not yet closed: nanquantile's layout (see nanquantile)",
    "trace": "different algorithm: funcgraph sums the diagonal (a strided slice), jax sums "
             "the whole matrix masked by an eye, in another order",
    "hamming/jit": _NO_INPUT, "bartlett/jit": _NO_INPUT, "kaiser/jit": _NO_INPUT,
    "histogram_bin_edges": _LINSPACE_0D,
    "histogram/eager": _LINSPACE_0D + " (its bin edges)",
    "histogram: weights": _LINSPACE_0D + " (its bin edges)",
}


def _leaves(out):
    return [np.asarray(o) for o in jax.tree_util.tree_leaves(
        out, is_leaf=lambda v: not isinstance(v, (tuple, list)))]


def _run(module, call, args, kwargs, jitted):
    """The row's call, eager or jitted; NumPy arrays among the arguments (keyword ones
    too) are the jitted function's arguments, the others are closed over."""
    fn = call(module)
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
    names = [k for k, v in kwargs.items() if isinstance(v, np.ndarray)]
    if not jitted:
        full = [module.numpy.asarray(a) if i in arrays else a for i, a in enumerate(args)]
        return _leaves(fn(*full, **{k: module.numpy.asarray(v) if k in names else v
                                    for k, v in kwargs.items()}))

    def traced(array_args, array_kwargs):
        full = list(args)
        for i, a in zip(arrays, array_args):
            full[i] = a
        return fn(*full, **{**kwargs, **array_kwargs})
    return _leaves(module.jit(traced)([args[i] for i in arrays],
                                      {k: kwargs[k] for k in names}))


def _mismatch(row, jitted):
    name, call, args, kwargs, x64 = row
    with fg.enable_x64(x64), jax.enable_x64(x64):
        want = _run(jax, call, args, kwargs, jitted)
        got = _run(fg, call, args, kwargs, jitted)
    if len(got) != len(want):
        return f"{len(got)} outputs, jax {len(want)}"
    for g, w in zip(got, want):
        if g.dtype != w.dtype or g.shape != w.shape:
            return f"{g.dtype}{g.shape}, jax {w.dtype}{w.shape}"
        if not np.array_equal(g, w, equal_nan=g.dtype.kind in "fc"):
            bad = np.sum(~((g == w) | (np.isnan(g) & np.isnan(w)) if g.dtype.kind in "fc"
                           else g == w))
            return f"{bad} of {g.size} values differ"
    return None


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("row", ROWS, ids=lambda r: r[0])
def test_bits_equal_jaxs(row, mode):
    name = row[0]
    listed = KNOWN_DIFFERENCES.get(f"{name}/{mode}", KNOWN_DIFFERENCES.get(name))
    found = _mismatch(row, mode == "jit")
    if listed:
        assert found, f"{name} ({mode}) now matches jax: remove it from KNOWN_DIFFERENCES"
    else:
        assert not found, f"{name} ({mode}): {found}"


def test_rows_are_unique_and_known_differences_name_rows():
    names = [r[0] for r in ROWS]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
    keys = {k.rsplit("/", 1)[0] if k.endswith(("/eager", "/jit")) else k
            for k in KNOWN_DIFFERENCES}
    assert keys <= set(names), sorted(keys - set(names))
