"""check_grads: derivatives checked against finite differences, to any order.

Forward mode compares jvp with central differences along a random direction;
reverse mode checks the vjp against the jvp with the identity
<ct, J t> = <J^T ct, t>.  Higher orders apply the same checks to the
derivative functions themselves."""
import numpy as np

from funcgraph import core, dtypes, tree_util
from funcgraph.transforms import ad

_DEFAULT_EPS = {np.dtype(np.float16): 1e-1, dtypes.bfloat16: 1e-1,
                np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-6}
_DEFAULT_TOL = {np.dtype(np.float16): 1e-1, dtypes.bfloat16: 1e-1,
                np.dtype(np.float32): 2e-2, np.dtype(np.float64): 1e-5}


def _random_like(x, rng):
    aval = core.get_aval(x)
    if not dtypes.is_inexact(aval.dtype):
        return np.zeros(aval.shape, dtypes.float0)
    value = rng.standard_normal(aval.shape)
    if dtypes.is_complex(aval.dtype):
        value = value + 1j * rng.standard_normal(aval.shape)
    return np.asarray(value).astype(aval.dtype)


def _as_numpy(x):
    return np.asarray(x).astype(np.complex128 if np.iscomplexobj(x) else np.float64)


def _conj(tree):
    def conj(x):
        x = np.asarray(x)
        return x if x.dtype == dtypes.float0 else np.conj(x)
    return tree_util.tree_map(conj, tree)


def _inner(xs, ys):
    total = 0.0
    for x, y in zip(tree_util.tree_leaves(xs), tree_util.tree_leaves(ys)):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype == dtypes.float0 or y.dtype == dtypes.float0:
            continue
        total += np.sum(np.conj(_as_numpy(x)) * _as_numpy(y)).real
    return total


def _add_scaled(args, tangents, eps):
    def step(x, t):
        t = np.asarray(t)
        if t.dtype == dtypes.float0:
            return x
        return (_as_numpy(x) + eps * _as_numpy(t)).astype(core.get_aval(x).dtype)
    return tree_util.tree_map(step, args, tangents)


def _dtype_of(args):
    leaves = [core.get_aval(x).dtype for x in tree_util.tree_leaves(args)]
    inexact = [d for d in leaves if dtypes.is_inexact(d)]
    return inexact[0] if inexact else np.dtype(np.float32)


def _assert_close(what, actual, expected, atol, rtol):
    for a, e in zip(tree_util.tree_leaves(actual), tree_util.tree_leaves(expected)):
        a, e = np.asarray(a), np.asarray(e)
        if a.dtype == dtypes.float0:
            continue
        np.testing.assert_allclose(_as_numpy(a), _as_numpy(e), atol=atol, rtol=rtol,
                                   err_msg=what)


def _central_difference(eps):
    def diff(plus, minus):
        if not dtypes.is_inexact(core.get_aval(plus).dtype):
            return np.zeros(np.shape(plus), dtypes.float0)  # integer outputs: no derivative
        return (_as_numpy(plus) - _as_numpy(minus)) / (2 * eps)
    return diff


def check_jvp(f, args, atol, rtol, eps, rng):
    tangents = tree_util.tree_map(lambda x: _random_like(x, rng), args)
    _, jvp_out = ad.jvp(f, args, tangents)
    plus = f(*_add_scaled(args, tangents, eps))
    minus = f(*_add_scaled(args, tangents, -eps))
    numerical = tree_util.tree_map(_central_difference(eps), plus, minus)
    _assert_close("jvp vs central finite differences", jvp_out, numerical, atol, rtol)


def check_vjp(f, args, atol, rtol, rng):
    out, pullback = ad.vjp(f, *args)
    cotangent = tree_util.tree_map(lambda x: _random_like(x, rng), out)
    # The pullback is a plain transpose (as in JAX): conjugating around it gives the
    # adjoint J^H ct that the inner-product identity needs for complex values.
    cts_in = _conj(pullback(_conj(cotangent)))
    tangents = tree_util.tree_map(lambda x: _random_like(x, rng), args)
    _, jvp_out = ad.jvp(f, args, tangents)
    lhs, rhs = _inner(cotangent, jvp_out), _inner(cts_in, tangents)
    np.testing.assert_allclose(lhs, rhs, atol=atol, rtol=rtol,
                               err_msg="vjp disagrees with jvp: <ct, J t> != <J^T ct, t>")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None,
                seed=0):
    """Check derivatives of f at args up to `order`, in the given modes."""
    args = tuple(args)
    dtype = _dtype_of(args)
    eps = eps or _DEFAULT_EPS.get(dtype, 1e-3)
    atol = atol if atol is not None else _DEFAULT_TOL.get(dtype, 1e-2)
    rtol = rtol if rtol is not None else _DEFAULT_TOL.get(dtype, 1e-2)
    rng = np.random.default_rng(seed)
    unknown = set(modes) - {"fwd", "rev"}
    if unknown:
        raise ValueError(f"check_grads: unknown modes {sorted(unknown)}; use 'fwd' and/or 'rev'")

    def check(f, order):
        if "fwd" in modes:
            check_jvp(f, args, atol, rtol, eps, rng)
            if order > 1:
                tangents = tree_util.tree_map(lambda x: _random_like(x, rng), args)
                check(lambda *a: ad.jvp(f, a, tangents)[1], order - 1)
        if "rev" in modes:
            check_vjp(f, args, atol, rtol, rng)
            if order > 1:
                out = f(*args)
                cotangent = tree_util.tree_map(lambda x: _random_like(x, rng), out)
                check(lambda *a: ad.vjp(f, *a)[1](cotangent), order - 1)
    check(f, order)
