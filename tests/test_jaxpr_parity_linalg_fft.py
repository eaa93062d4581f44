"""jaxpr parity (issue 29) of funcgraph.numpy.linalg, funcgraph.numpy.fft,
funcgraph.lax.linalg and funcgraph.scipy.linalg: each call's program against jax's for the
same call (tests/jaxpr_parity.py compares them)."""
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.scipy.linalg  # noqa: F401  (fg.scipy loads at first import)
from tests.jaxpr_parity import Row, check_coverage, check_row


def _f32(*shape):
    return np.ones(shape, np.float32)


def _c64(*shape):
    return np.ones(shape, np.complex64)


def _i32(*shape):
    return np.zeros(shape, np.int32)


def _la(name):
    return lambda m: getattr(m.numpy.linalg, name)


def _fft(name):
    return lambda m: getattr(m.numpy.fft, name)


def _lax(name):
    return lambda m: getattr(m.lax.linalg, name)


def _sp(name):
    return lambda m: getattr(m.scipy.linalg, name)


SQ, SQ_B, TALL, WIDE = _f32(3, 3), _f32(2, 3, 3), _f32(4, 3), _f32(3, 4)

NUMPY_LINALG_ROWS = [
    Row("cholesky", _la("cholesky"), (SQ,)),
    Row("cholesky: batched", _la("cholesky"), (SQ_B,)),
    Row("cholesky: upper", _la("cholesky"), (SQ,), {"upper": True}),
    Row("cholesky: complex", _la("cholesky"), (_c64(3, 3),)),
    Row("cond", _la("cond"), (SQ,)),
    Row("cond: p=fro", _la("cond"), (SQ, "fro")),
    Row("cross", _la("cross"), (_f32(3), _f32(3))),
    Row("cross: batched", _la("cross"), (_f32(4, 3), _f32(4, 3))),
    Row("det", _la("det"), (SQ,)),
    Row("det: batched", _la("det"), (SQ_B,)),
    Row("det: 2x2", _la("det"), (_f32(2, 2),)),
    Row("det: 4x4", _la("det"), (_f32(4, 4),)),
    Row("diagonal", _la("diagonal"), (WIDE,)),
    Row("diagonal: offset=1", _la("diagonal"), (_f32(2, 3, 4),), {"offset": 1}),
    Row("eig", _la("eig"), (SQ,)),
    Row("eigh", _la("eigh"), (SQ,)),
    Row("eigh: complex", _la("eigh"), (_c64(3, 3),)),
    Row("eigvals", _la("eigvals"), (SQ,)),
    Row("eigvalsh", _la("eigvalsh"), (SQ,)),
    Row("inv", _la("inv"), (SQ,)),
    Row("inv: batched", _la("inv"), (SQ_B,)),
    Row("inv: float64 x64", _la("inv"), (np.ones((3, 3)),), x64=True),
    Row("lstsq", _la("lstsq"), (TALL, _f32(4))),
    Row("matmul", _la("matmul"), (WIDE, _f32(4, 5))),
    Row("matrix_norm", _la("matrix_norm"), (WIDE,)),
    Row("matrix_norm: ord=1", _la("matrix_norm"), (WIDE,), {"ord": 1}),
    Row("matrix_norm: ord=inf", _la("matrix_norm"), (WIDE,), {"ord": np.inf}),
    Row("matrix_norm: ord=2", _la("matrix_norm"), (WIDE,), {"ord": 2}),
    Row("matrix_norm: ord=nuc keepdims", _la("matrix_norm"), (WIDE,),
        {"ord": "nuc", "keepdims": True}),
    Row("matrix_power: 3", _la("matrix_power"), (SQ, 3)),
    Row("matrix_power: -2", _la("matrix_power"), (SQ, -2)),
    Row("matrix_power: 0", _la("matrix_power"), (SQ, 0)),
    Row("matrix_rank", _la("matrix_rank"), (WIDE,)),
    Row("matrix_transpose", _la("matrix_transpose"), (_f32(2, 3, 4),)),
    Row("multi_dot", lambda m: lambda a, b, c: m.numpy.linalg.multi_dot([a, b, c]),
        (WIDE, _f32(4, 5), _f32(5, 2))),
    Row("multi_dot: vector ends", lambda m: lambda a, b, c: m.numpy.linalg.multi_dot([a, b, c]),
        (_f32(3), _f32(3, 4), _f32(4))),
    Row("norm", _la("norm"), (WIDE,)),
    Row("norm: vector", _la("norm"), (_f32(4),)),
    Row("norm: complex vector", _la("norm"), (_c64(4),)),
    Row("norm: axis=1", _la("norm"), (WIDE,), {"axis": 1}),
    Row("norm: axis=1 keepdims", _la("norm"), (WIDE,), {"axis": 1, "keepdims": True}),
    Row("norm: vector ord=1", _la("norm"), (_f32(4),), {"ord": 1}),
    Row("norm: vector ord=inf", _la("norm"), (_f32(4),), {"ord": np.inf}),
    Row("norm: vector ord=0", _la("norm"), (_f32(4),), {"ord": 0}),
    Row("norm: vector ord=3", _la("norm"), (_f32(4),), {"ord": 3}),
    Row("norm: matrix fro", _la("norm"), (WIDE,), {"ord": "fro"}),
    Row("norm: matrix ord=1", _la("norm"), (WIDE,), {"ord": 1}),
    Row("norm: matrix ord=-inf", _la("norm"), (WIDE,), {"ord": -np.inf}),
    Row("norm: matrix ord=2", _la("norm"), (WIDE,), {"ord": 2}),
    Row("norm: matrix nuc", _la("norm"), (WIDE,), {"ord": "nuc"}),
    Row("norm: int", _la("norm"), (np.ones((3, 4), np.int32),)),
    Row("norm: float64 x64", _la("norm"), (np.ones((3, 4)),), {"axis": 0}, x64=True),
    Row("norm: float16", _la("norm"), (np.ones((3, 4), np.float16),)),
    Row("outer", _la("outer"), (_f32(3), _f32(4))),
    Row("pinv", _la("pinv"), (WIDE,)),
    Row("qr", _la("qr"), (TALL,)),
    Row("qr: complete", _la("qr"), (TALL, "complete")),
    Row("qr: r", _la("qr"), (TALL, "r")),
    Row("qr: raw", _la("qr"), (TALL, "raw")),
    Row("qr: complex", _la("qr"), (_c64(4, 3),)),
    Row("slogdet", _la("slogdet"), (SQ,)),
    Row("solve", _la("solve"), (SQ, _f32(3))),
    Row("solve: matrix rhs", _la("solve"), (SQ, _f32(3, 2))),
    Row("solve: batched", _la("solve"), (SQ_B, _f32(2, 3, 2))),
    Row("svd", _la("svd"), (TALL,)),
    Row("svd: reduced", _la("svd"), (TALL,), {"full_matrices": False}),
    Row("svd: values", _la("svd"), (TALL,), {"compute_uv": False}),
    Row("svd: complex", _la("svd"), (_c64(4, 3),), {"full_matrices": False}),
    Row("svdvals", _la("svdvals"), (TALL,)),
    Row("tensordot", _la("tensordot"), (_f32(2, 3, 4), _f32(3, 4, 5))),
    Row("tensorinv", _la("tensorinv"), (_f32(6, 2, 3),), {"ind": 1}),
    Row("tensorsolve", _la("tensorsolve"), (_f32(2, 3, 6), _f32(2, 3))),
    Row("trace", _la("trace"), (WIDE,)),
    Row("trace: offset=1", _la("trace"), (_f32(2, 3, 4),), {"offset": 1}),
    Row("vecdot", _la("vecdot"), (WIDE, WIDE)),
    Row("vector_norm", _la("vector_norm"), (WIDE,)),
    Row("vector_norm: axis=1 ord=1", _la("vector_norm"), (WIDE,), {"axis": 1, "ord": 1}),
    Row("vector_norm: axis=(0, 1) keepdims", _la("vector_norm"), (_f32(2, 3, 4),),
        {"axis": (0, 1), "keepdims": True}),
    Row("vector_norm: ord=inf", _la("vector_norm"), (WIDE,), {"ord": np.inf}),
]

C34 = _c64(3, 4)
FFT_ROWS = [
    Row("fft", _fft("fft"), (C34,)),
    Row("fft: real input", _fft("fft"), (WIDE,)),
    Row("fft: n=6 axis=0", _fft("fft"), (C34,), {"n": 6, "axis": 0}),
    Row("fft: crop n=2", _fft("fft"), (C34,), {"n": 2}),
    Row("fft: ortho", _fft("fft"), (C34,), {"norm": "ortho"}),
    Row("fft: forward", _fft("fft"), (C34,), {"norm": "forward"}),
    Row("fft2", _fft("fft2"), (_c64(2, 3, 4),)),
    Row("fftn", _fft("fftn"), (_c64(2, 3, 4),)),
    Row("fftn: 4 axes", _fft("fftn"), (_c64(2, 2, 3, 4),)),
    Row("fftn: axes=(0, 2)", _fft("fftn"), (_c64(2, 3, 4),), {"axes": (0, 2)}),
    Row("ifft", _fft("ifft"), (C34,)),
    Row("ifft: ortho", _fft("ifft"), (C34,), {"norm": "ortho"}),
    Row("ifft2", _fft("ifft2"), (_c64(2, 3, 4),)),
    Row("ifftn", _fft("ifftn"), (_c64(2, 3, 4),)),
    Row("rfft", _fft("rfft"), (WIDE,)),
    Row("rfft: n=6", _fft("rfft"), (WIDE,), {"n": 6}),
    Row("rfft: float64 x64", _fft("rfft"), (np.ones((3, 4)),), x64=True),
    Row("rfft: int input", _fft("rfft"), (_i32(3, 4),)),
    Row("rfft2", _fft("rfft2"), (_f32(2, 3, 4),)),
    Row("rfftn", _fft("rfftn"), (_f32(2, 3, 4),)),
    Row("irfft", _fft("irfft"), (C34,)),
    Row("irfft: n=5", _fft("irfft"), (C34,), {"n": 5}),
    Row("irfft2", _fft("irfft2"), (_c64(2, 3, 4),)),
    Row("irfftn", _fft("irfftn"), (_c64(2, 3, 4),)),
    Row("hfft", _fft("hfft"), (C34,)),
    Row("ihfft", _fft("ihfft"), (WIDE,)),
    Row("fftfreq", _fft("fftfreq"), (8,)),
    Row("fftfreq: d=0.5", _fft("fftfreq"), (7, 0.5)),
    Row("rfftfreq", _fft("rfftfreq"), (8,)),
    Row("fftshift", _fft("fftshift"), (WIDE,)),
    Row("fftshift: axes=0", _fft("fftshift"), (WIDE,), {"axes": 0}),
    Row("ifftshift", _fft("ifftshift"), (WIDE,)),
]

LAX_LINALG_ROWS = [
    Row("cholesky", _lax("cholesky"), (SQ,)),
    Row("cholesky: no symmetrize", _lax("cholesky"), (SQ,), {"symmetrize_input": False}),
    Row("cholesky_update", _lax("cholesky_update"), (SQ, _f32(3)), measure="hlo"),
    Row("eig", _lax("eig"), (SQ,), {"compute_left_eigenvectors": False}),
    Row("eigh", _lax("eigh"), (SQ,)),
    Row("hessenberg", _lax("hessenberg"), (SQ,)),
    Row("householder_product", _lax("householder_product"), (TALL, _f32(3))),
    Row("lu", _lax("lu"), (SQ,)),
    Row("lu_pivots_to_permutation", _lax("lu_pivots_to_permutation"), (_i32(3), 3),
        measure="hlo"),
    Row("lu_pivots_to_permutation: batched, longer", _lax("lu_pivots_to_permutation"),
        (_i32(2, 3), 5), measure="hlo"),
    Row("ormqr", _lax("ormqr"), (TALL, _f32(3), _f32(4, 2))),
    Row("qdwh", _lax("qdwh"), (TALL,)),
    Row("qr", _lax("qr"), (TALL,)),
    Row("qr: reduced", _lax("qr"), (TALL,), {"full_matrices": False}),
    Row("schur", _lax("schur"), (SQ,)),
    Row("svd", _lax("svd"), (TALL,)),
    Row("svd: values", _lax("svd"), (TALL,), {"compute_uv": False}),
    Row("symmetric_product", _lax("symmetric_product"), (WIDE, SQ), measure="hlo"),
    Row("triangular_solve", _lax("triangular_solve"), (SQ, _f32(2, 3))),
    Row("triangular_solve: left lower", _lax("triangular_solve"), (SQ, _f32(3, 2)),
        {"left_side": True, "lower": True}),
    Row("tridiagonal", _lax("tridiagonal"), (SQ,)),
    Row("tridiagonal: upper", _lax("tridiagonal"), (_c64(3, 3),), {"lower": False}),
    Row("tridiagonal_solve", _lax("tridiagonal_solve"),
        (_f32(4), _f32(4), _f32(4), _f32(4, 2))),
]

SCIPY_LINALG_ROWS = [
    Row("block_diag", lambda m: lambda a, b: m.scipy.linalg.block_diag(a, b),
        (_f32(2, 2), _f32(3))),
    Row("cho_factor", _sp("cho_factor"), (SQ,)),
    Row("cho_solve", lambda m: lambda c, b: m.scipy.linalg.cho_solve((c, True), b),
        (SQ, _f32(3))),
    Row("cholesky", _sp("cholesky"), (SQ,)),
    Row("circulant", _sp("circulant"), (_f32(4),)),
    Row("companion", _sp("companion"), (_f32(4),)),
    Row("convolution_matrix", _sp("convolution_matrix"), (_f32(3), 5)),
    Row("det", _sp("det"), (SQ,)),
    Row("dft", _sp("dft"), (4,)),
    Row("eigh", _sp("eigh"), (SQ,)),
    Row("eigh: eigvals_only", _sp("eigh"), (SQ,), {"eigvals_only": True}),
    Row("eigh_tridiagonal", _sp("eigh_tridiagonal"), (_f32(4), _f32(3)),
        {"eigvals_only": True}),
    Row("expm", _sp("expm"), (SQ,)),
    Row("expm_frechet", _sp("expm_frechet"), (SQ, SQ)),
    Row("fiedler", _sp("fiedler"), (_f32(4),)),
    Row("fiedler_companion", _sp("fiedler_companion"), (_f32(4),)),
    Row("funm", lambda m: lambda a: m.scipy.linalg.funm(a, m.numpy.exp), (SQ,)),
    Row("hadamard", _sp("hadamard"), (4,)),
    Row("hankel", _sp("hankel"), (_f32(3), _f32(4))),
    Row("helmert", _sp("helmert"), (4,)),
    Row("hessenberg", _sp("hessenberg"), (SQ,)),
    Row("hessenberg: calc_q", _sp("hessenberg"), (SQ,), {"calc_q": True}),
    Row("hilbert", _sp("hilbert"), (4,)),
    Row("inv", _sp("inv"), (SQ,)),
    Row("invhilbert", _sp("invhilbert"), (4,)),
    Row("invpascal", _sp("invpascal"), (4,)),
    Row("leslie", _sp("leslie"), (_f32(4), _f32(3))),
    Row("lu", _sp("lu"), (SQ,)),
    Row("lu: permute_l", _sp("lu"), (SQ,), {"permute_l": True}),
    Row("lu_factor", _sp("lu_factor"), (SQ,)),
    Row("lu_solve", lambda m: lambda lu, piv, b: m.scipy.linalg.lu_solve((lu, piv), b),
        (SQ, _i32(3), _f32(3)), measure="hlo"),
    Row("pascal", _sp("pascal"), (4,)),
    Row("polar", _sp("polar"), (SQ,)),
    Row("polar: left, wide, svd", _sp("polar"), (WIDE,), {"side": "left", "method": "svd"}),
    Row("qr", _sp("qr"), (TALL,)),
    Row("qr: economic", _sp("qr"), (TALL,), {"mode": "economic"}),
    Row("qr_multiply", _sp("qr_multiply"), (TALL, _f32(2, 4))),
    Row("qr_multiply: left, conjugate", _sp("qr_multiply"), (TALL, _f32(3)),
        {"mode": "left", "conjugate": True}),
    Row("rsf2csf", _sp("rsf2csf"), (SQ, SQ)),
    Row("schur", _sp("schur"), (SQ,)),
    Row("solve", _sp("solve"), (SQ, _f32(3))),
    Row("solve: pos", _sp("solve"), (SQ, _f32(3)), {"assume_a": "pos"}),
    Row("solve_sylvester", _sp("solve_sylvester"), (SQ, SQ, SQ)),
    Row("solve_triangular", _sp("solve_triangular"), (SQ, _f32(3))),
    Row("solve_triangular: lower trans", _sp("solve_triangular"), (SQ, _f32(3, 2)),
        {"lower": True, "trans": 1}),
    Row("sqrtm", _sp("sqrtm"), (SQ,)),
    Row("svd", _sp("svd"), (TALL,)),
    Row("toeplitz", _sp("toeplitz"), (_f32(3), _f32(4))),
]


def _prefixed(prefix, rows):
    return [Row(f"{prefix}.{r.name}", r.call, r.args, r.kwargs, r.x64, r.measure)
            for r in rows]


ROWS = (NUMPY_LINALG_ROWS + FFT_ROWS + _prefixed("lax.linalg", LAX_LINALG_ROWS)
        + _prefixed("scipy.linalg", SCIPY_LINALG_ROWS))

# Public callables of these modules that are not functions of arrays: none.
NOT_TRACED = {}

SOLVE = ("different but equal: both solve through custom_linear_solve over the `lu` "
         "primitive, with the same gathers and triangular solves; the vecmat jaxpr (the "
         "transposed matvec, used only by derivatives) contracts (a, ct) where jax's "
         "contracts (ct, a), and for a vector right-hand side has one equation more")
DIAGONAL = ("different but better: funcgraph takes the diagonal by a reshape and one strided "
            "slice; jax gathers it (iota, select_n, concatenate, gather)")


def _special(what):
    return (f"{what} (funcgraph/scipy/_special_matrices.py, outside this table's fix "
            f"scope)")


KNOWN_DIFFERENCES = {
    # numpy.linalg
    "det: 4x4": DIAGONAL + " of the LU; the rest is jax's slogdet and sign * exp",
    "diagonal": DIAGONAL,
    "diagonal: offset=1": DIAGONAL,
    "inv: batched": SOLVE,
    "slogdet": DIAGONAL + " of the LU; the rest is jax's sign and log sum",
    "scipy.linalg.sqrtm": DIAGONAL + " of the Schur form; the rest is jax's triangular root",
    "solve": SOLVE,
    "solve: matrix rhs": SOLVE,
    "solve: batched": SOLVE,
    "tensorsolve": SOLVE,
    "trace": DIAGONAL + ", then the same reduce_sum",
    "trace: offset=1": DIAGONAL + ", then the same reduce_sum",
    # lax.linalg
    # scipy.linalg
    "scipy.linalg.companion": _special(
        "different but better: one concatenate where jax scatters into a zero matrix"),
    "scipy.linalg.convolution_matrix": _special(
        "different: one gather and a select_n where jax builds it with a "
        "conv_general_dilated over 22 equations"),
    "scipy.linalg.fiedler_companion": _special(
        "different but better: 19 equations with scatters where jax gathers and selects "
        "over about 90"),
    "scipy.linalg.hankel": _special(
        "different: one gather where jax builds it with a conv_general_dilated"),
    "scipy.linalg.invpascal": _special(
        "different but better: a constant where jax computes binomials (lgamma) and a "
        "matmul"),
    "scipy.linalg.leslie": _special(
        "different but better: a concatenate and a multiply where jax scatters into a "
        "select_n of zeros"),
    "scipy.linalg.pascal": _special(
        "different but better: a constant where jax computes binomials (lgamma) and a "
        "matmul"),
    "scipy.linalg.solve": SOLVE,
    "scipy.linalg.solve: pos": (
        "different but better: jax's two dot_generals are custom_linear_solve's matvec "
        "jaxprs (used only by its derivative); funcgraph solves with the Cholesky factor "
        "and two triangular solves, no contraction"),
}


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_linalg_fft_program_matches_jax(row):
    check_row(row, KNOWN_DIFFERENCES)


@pytest.mark.parametrize("module, rows", [
    (fg.numpy.linalg, NUMPY_LINALG_ROWS), (fg.numpy.fft, FFT_ROWS),
    (fg.lax.linalg, LAX_LINALG_ROWS), (fg.scipy.linalg, SCIPY_LINALG_ROWS)],
    ids=lambda v: getattr(v, "__name__", ""))
def test_every_public_function_has_a_row(module, rows):
    check_coverage(module, rows, NOT_TRACED)


def test_tables_name_existing_rows_and_functions():
    names = [r.name for r in ROWS]
    assert len(names) == len(set(names))
    assert not set(KNOWN_DIFFERENCES) - set(names)
    modules = (fg.numpy.linalg, fg.numpy.fft, fg.lax.linalg, fg.scipy.linalg)
    assert all(any(hasattr(m, name) for m in modules) for name in NOT_TRACED)
