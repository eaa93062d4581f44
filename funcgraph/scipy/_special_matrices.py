"""The special matrices of JAX's scipy.linalg: built from their defining formulas, with funcgraph
operations where they depend on array values and with NumPy where only on a static size."""
import math

import numpy as np

import funcgraph.numpy as fnp


def _default_float():
    return fnp.zeros((), dtype=float).dtype


def circulant(c):
    """The circulant matrix with first column c (batched over leading axes):
    out[..., i, j] = c[..., (i - j) % n]."""
    c = fnp.atleast_1d(fnp.asarray(c))
    n = c.shape[-1]
    index = (np.arange(n)[:, None] - np.arange(n)[None, :]) % n
    return c[..., index]


def companion(a):
    """The companion matrix of the polynomial with coefficients a (highest degree first)."""
    a = fnp.atleast_1d(fnp.asarray(a))
    n = a.shape[-1]
    if n < 2:
        raise ValueError("The length of a must be at least 2.")
    a = a.astype(fnp.result_type(a, 1.0))
    first_row = -a[..., 1:] / a[..., :1]
    shift = fnp.broadcast_to(fnp.eye(n - 2, n - 1, dtype=a.dtype), a.shape[:-1] + (n - 2, n - 1))
    return fnp.concatenate([first_row[..., None, :], shift], axis=-2)


def convolution_matrix(a, n, mode="full"):
    """The matrix A with A @ v == convolve(a, v, mode) for v of length n."""
    a = fnp.asarray(a)
    if a.ndim != 1:
        raise ValueError("convolution_matrix: a must be one-dimensional")
    if n <= 0:
        raise ValueError("n must be a positive integer")
    k = a.shape[0]
    full = fnp.concatenate([a, fnp.zeros((n - 1,), a.dtype)])
    rows = np.arange(k + n - 1)[:, None] - np.arange(n)[None, :]   # (k + n - 1, n)
    mat = fnp.where(fnp.asarray((rows >= 0) & (rows < k)), full[np.clip(rows, 0, None)], 0)
    if mode == "full":
        return mat.astype(a.dtype)
    if mode == "same":
        start = (min(n, k) - 1) // 2
        return mat[start:start + max(n, k)].astype(a.dtype)
    if mode == "valid":
        return mat[min(n, k) - 1:max(n, k)].astype(a.dtype)
    raise ValueError(f"Unrecognized mode={mode!r}")


def dft(n, scale=None, *, dtype=None):
    """The n x n discrete Fourier transform matrix exp(-2 pi i j k / n), scaled by 1/n
    ('n'), 1/sqrt(n) ('sqrtn') or not (None)."""
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}")
    dtype = fnp.zeros((), dtype=complex).dtype if dtype is None else np.dtype(dtype)
    jk = np.outer(np.arange(n), np.arange(n)) % max(n, 1)
    m = np.exp(-2j * np.pi * jk / max(n, 1))
    if scale == "sqrtn":
        m = m / math.sqrt(n)
    elif scale == "n":
        m = m / n
    return fnp.asarray(m.astype(dtype))


def fiedler(a):
    """The symmetric Fiedler matrix |a[i] - a[j]|."""
    a = fnp.atleast_1d(fnp.asarray(a))
    return fnp.abs(a[..., :, None] - a[..., None, :])


def fiedler_companion(a):
    """The Fiedler companion matrix of the polynomial with coefficients a (a pentadiagonal
    matrix similar to the companion matrix)."""
    a = fnp.asarray(a)
    if a.ndim != 1:
        raise ValueError("Input 'a' must be a 1D array.")
    if a.shape[0] < 2:
        return fnp.zeros((0,), fnp.result_type(a, 1.0))
    a = a.astype(fnp.result_type(a, 1.0))
    a = a / a[0]
    n = a.shape[0] - 1                      # the matrix is n x n
    if n == 1:
        return (-a[1:]).reshape(1, 1)
    c = fnp.zeros((n, n), a.dtype)
    c = c.at[np.arange(3, n, 2), np.arange(1, n - 2, 2)].set(1)      # subdiagonals
    c = c.at[np.arange(2, n, 2), np.arange(1, n - 1, 2)].set(-a[3::2])
    c = c.at[np.arange(0, n - 2, 2), np.arange(2, n, 2)].set(1)      # superdiagonals
    c = c.at[np.arange(0, n - 1, 2), np.arange(1, n, 2)].set(-a[2::2])
    c = c.at[0, 0].set(-a[1])
    return c.at[1, 0].set(1)


def hadamard(n, dtype=int):
    """The Sylvester-construction Hadamard matrix of order n (a power of 2)."""
    if n < 1 or n & (n - 1):
        raise ValueError("n must be an positive a power of 2 integer")
    h = np.ones((1, 1), np.int64)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return fnp.asarray(h, dtype=dtype)


def hankel(c, r=None):
    """The Hankel matrix with first column c and last row r (r[0] is ignored; zeros below
    the anti-diagonal when r is None)."""
    c = fnp.asarray(c).reshape(-1)
    r = fnp.zeros_like(c) if r is None else fnp.asarray(r).reshape(-1)
    dtype = fnp.result_type(c, r)
    vals = fnp.concatenate([c, r[1:]]).astype(dtype)      # vals[i + j]
    return vals[np.arange(c.shape[0])[:, None] + np.arange(r.shape[0])[None, :]]


def helmert(n, full=False):
    """The Helmert matrix of order n (without its first row unless full)."""
    rows = np.zeros((n, n))
    rows[0] = 1 / math.sqrt(n) if n else 0
    for i in range(1, n):
        scale = 1 / math.sqrt(i * (i + 1))
        rows[i, :i] = scale
        rows[i, i] = -i * scale
    out = rows if full else rows[1:]
    return fnp.asarray(out.astype(_default_float()))


def hilbert(n):
    """The Hilbert matrix 1 / (i + j + 1)."""
    i = np.arange(n)
    return fnp.asarray((1.0 / (i[:, None] + i[None, :] + 1)).astype(_default_float()))


def invhilbert(n):
    """The inverse of the Hilbert matrix of order n, from its closed form."""
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = ((-1) ** (i + j) * (i + j + 1) * math.comb(n + i, n - j - 1)
                         * math.comb(n + j, n - i - 1) * math.comb(i + j, i) ** 2)
    return fnp.asarray(out.astype(_default_float()))


def _pascal_lower(n):
    return np.array([[math.comb(i, j) for j in range(n)] for i in range(n)], np.float64)


def _pascal_kind(kind):
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"Expected kind to be 'symmetric', 'lower', or 'upper'; got {kind!r}")
    return kind


def pascal(n, kind=None):
    """The Pascal matrix: binomial coefficients C(i, j) ('lower'), its transpose ('upper')
    or C(i + j, i) ('symmetric', the default)."""
    kind = _pascal_kind(kind)
    low = _pascal_lower(n)
    out = {"lower": low, "upper": low.T, "symmetric": low @ low.T}[kind]
    return fnp.asarray(out.astype(_default_float()))


def invpascal(n, kind=None):
    """The inverse of pascal(n, kind)."""
    kind = _pascal_kind(kind)
    signs = (-1.0) ** np.add.outer(np.arange(n), np.arange(n))
    inv_low = _pascal_lower(n) * signs
    out = {"lower": inv_low, "upper": inv_low.T, "symmetric": inv_low.T @ inv_low}[kind]
    return fnp.asarray(out.astype(_default_float()))


def leslie(f, s):
    """The Leslie matrix: fecundities f on the first row, survival rates s below the
    diagonal."""
    f, s = fnp.atleast_1d(fnp.asarray(f)), fnp.atleast_1d(fnp.asarray(s))
    n = f.shape[-1]
    if s.shape[-1] != n - 1:
        raise ValueError("Incorrect shape for s. s.shape[-1] should be f.shape[-1] - 1")
    dtype = fnp.result_type(f, s, 1.0)
    batch = np.broadcast_shapes(f.shape[:-1], s.shape[:-1])
    f = fnp.broadcast_to(f.astype(dtype), batch + (n,))
    s = fnp.broadcast_to(s.astype(dtype), batch + (n - 1,))
    sub = s[..., :, None] * fnp.eye(n - 1, n, dtype=dtype)
    return fnp.concatenate([f[..., None, :], sub], axis=-2)
