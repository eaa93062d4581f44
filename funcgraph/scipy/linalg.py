"""funcgraph.scipy.linalg: triangular and Cholesky solves (JAX's scipy.linalg API)."""
import funcgraph.numpy as fnp
from funcgraph.numpy import linalg as _la
from funcgraph.primitives import linalg as _prims


def _as_matrix_rhs(b):
    """b as (..., n, k) and whether it was a vector (n,)."""
    return (b[:, None], True) if b.ndim == 1 else (b, False)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):
    """Solve op(a) x = b with a triangular; trans 0/'N', 1/'T' or 2/'C' (conjugate
    transpose)."""
    del overwrite_b, debug, check_finite
    transpose = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}.get(trans)
    if transpose is None:
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    a, b = fnp.asarray(a), fnp.asarray(b)
    dtype = fnp.result_type(a, b, 1.0)
    a, b = a.astype(dtype), b.astype(dtype)
    b, vector = _as_matrix_rhs(b)
    a, b = _la._broadcast_batch(a, b)
    x = _prims.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=transpose,
                                conjugate_a=trans in (2, "C"), unit_diagonal=unit_diagonal)
    return x[..., 0] if vector else x


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    return _la.cholesky(a, upper=not lower)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    return _la.cholesky(a, upper=not lower), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """Solve a x = b from cho_factor's (c, lower)."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    y = solve_triangular(c, b, trans=0 if lower else 2, lower=lower)
    return solve_triangular(c, y, trans=2 if lower else 0, lower=lower)


