"""funcgraph.scipy.optimize: JAX's scipy.optimize (`minimize` with method "BFGS", and
the `OptimizeResults` it returns).

BFGS keeps an estimate H of the inverse Hessian, steps along p = -H g with a step length
from a line search satisfying the strong Wolfe conditions (Nocedal & Wright, Numerical
Optimization, algorithms 3.5 and 3.6: a bracketing phase, then `zoom` by cubic, quadratic
or bisection interpolation), and updates H with the BFGS formula.  Everything is a
`lax.while_loop`, so `minimize` runs under jit and vmap.  As in JAX, `tol` is accepted and
not used (options["gtol"] sets the gradient tolerance), x0 is a 1-d array, the gradient
comes from funcgraph's reverse mode, and the statuses are JAX's: 0 converged, 1 maxiter
reached, 3 zoom failed, 5 the line search reached its maxiter, -1 undefined."""
import typing

import numpy as np

from funcgraph import dtypes, lax
import funcgraph.numpy as fnp
from funcgraph.numpy import _core
from funcgraph.transforms import ad

__all__ = ["minimize", "OptimizeResults"]


class OptimizeResults(typing.NamedTuple):
    """What `minimize` returns: the solution `x`, whether it succeeded, the solver's
    status code, the final function value `fun` and gradient `jac`, the final inverse
    Hessian estimate, the counts of function and gradient evaluations and iterations."""
    x: typing.Any
    success: typing.Any
    status: typing.Any
    fun: typing.Any
    jac: typing.Any
    hess_inv: typing.Any
    nfev: typing.Any
    njev: typing.Any
    nit: typing.Any


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimize the scalar function fun(x, *args) of a 1-d array x from x0
    (scipy.optimize.minimize); method "BFGS" (options: maxiter, norm, gtol,
    line_search_maxiter)."""
    options = {} if options is None else options
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to scipy.optimize.minimize must be a tuple, got "
                        f"{args}")
    if method.lower() != "bfgs":
        raise ValueError(f"Method {method} not recognized")
    state = _bfgs(lambda x: fun(x, *args), x0, **options)
    return OptimizeResults(
        x=state["x"], success=state["converged"] & ~state["failed"], status=state["status"],
        fun=state["f"], jac=state["g"], hess_inv=state["H"], nfev=state["nfev"],
        njev=state["ngev"], nit=state["k"])


def _int(value):
    """A counter or status code: jax's default integer (int64 with x64 on)."""
    return fnp.asarray(value, dtypes.default_int())


def _dot(a, b):
    return fnp.dot(a, b, precision=lax.Precision.HIGHEST)


def _pick(flag, new, old):
    """The entries of dict `new` where flag is true, else those of `old` (same keys)."""
    return {k: fnp.where(flag, new[k], old[k]) for k in new}


def _bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    x0, = _core.promote_to_inexact(fnp.asarray(x0))
    if maxiter is None:
        maxiter = np.size(x0) * 200
    n = x0.shape[0]
    dtype = x0.dtype
    value_grad = ad.value_and_grad(fun)
    f0, g0 = value_grad(x0)
    state = dict(
        converged=fnp.linalg.norm(g0, ord=norm) < gtol, failed=fnp.asarray(False),
        k=_int(0), nfev=_int(1), ngev=_int(1),
        x=x0, f=f0, g=g0, H=fnp.eye(n, dtype=dtype),
        f_prev=f0 + fnp.linalg.norm(g0) / 2, ls_status=_int(0))

    def keep_going(s):
        return ~s["converged"] & ~s["failed"] & (s["k"] < maxiter)

    def step(s):
        p = -_dot(s["H"], s["g"])
        ls = _line_search(value_grad, s["x"], p, s["f"], s["g"], s["f_prev"],
                          line_search_maxiter)
        dx = ls["a"] * p
        g_new = ls["g"]
        dg = g_new - s["g"]
        rho = fnp.reciprocal(_dot(dg, dx))
        # H' = (I - rho dx dg^T) H (I - rho dg dx^T) + rho dx dx^T, kept where rho is finite.
        w = fnp.eye(n, dtype=rho.dtype) - rho * fnp.outer(dx, dg)
        H_new = (fnp.einsum("ij,jk,lk", w, s["H"], w, precision=lax.Precision.HIGHEST)
                 + rho * fnp.outer(dx, dx))
        return dict(
            converged=fnp.linalg.norm(g_new, ord=norm) < gtol, failed=ls["failed"],
            k=s["k"] + 1, nfev=s["nfev"] + ls["nfev"], ngev=s["ngev"] + ls["nfev"],
            x=s["x"] + dx, f=ls["f"], g=g_new,
            H=fnp.where(fnp.isfinite(rho), H_new, s["H"]), f_prev=s["f"],
            ls_status=ls["status"])

    state = lax.while_loop(keep_going, step, state)
    state["status"] = fnp.where(
        state["converged"], 0,
        fnp.where(state["k"] == maxiter, 1,
                  fnp.where(state["failed"], 2 + state["ls_status"], -1)))
    return state


def _line_search(value_grad, x, p, f0, g0, f_prev, maxiter, c1=1e-4, c2=0.9):
    """A step length a along p with f(x + a p) <= f0 + c1 a f'(0) and |f'(a)| <= c2 |f'(0)|
    (Nocedal & Wright algorithm 3.5): dict a, f, g (at x + a p), nfev, failed, status
    (0 found, 1 zoom failed, 3 maxiter reached)."""
    dtype = p.dtype

    def along(a):
        f, g = value_grad(x + a.astype(dtype) * p)
        return f, fnp.real(_dot(g, p)), g

    d0 = fnp.real(_dot(g0, p))
    guess = 1.01 * 2 * (f0 - f_prev) / d0
    first = fnp.where(guess > 1, 1.0, guess).astype(d0.dtype)

    def sufficient_decrease_fails(a, f):
        return f > f0 + c1 * a * d0

    def curvature_holds(d):
        return fnp.abs(d) <= -c2 * d0

    scalar = lambda v: fnp.asarray(v, d0.dtype)
    state = dict(done=fnp.asarray(False), failed=fnp.asarray(False), i=_int(1),
                 a_prev=scalar(0.), f_prev=f0, d_prev=d0, nfev=_int(0),
                 a=scalar(0.), f=f0, d=d0, g=g0)

    def keep_going(s):
        return ~s["done"] & (s["i"] <= maxiter) & ~s["failed"]

    def step(s):
        a = fnp.where(s["i"] == 1, first, 2 * s["a_prev"])
        f, d, g = along(a)
        bracket_behind = sufficient_decrease_fails(a, f) | ((f >= s["f_prev"]) & (s["i"] > 1))
        found = curvature_holds(d) & ~bracket_behind
        bracket_ahead = (d >= 0) & ~bracket_behind & ~found
        prev, here = (s["a_prev"], s["f_prev"], s["d_prev"]), (a, f, d)

        def no_zoom():
            return dict(failed=fnp.asarray(False), nfev=_int(0),
                        a=a, f=f, d=d, g=g)

        # zoom(lo, hi): lo is the end with the lower value and sufficient decrease.
        branches = [no_zoom,
                    lambda: _zoom(along, sufficient_decrease_fails, curvature_holds,
                                  prev, here, g0),
                    lambda: _zoom(along, sufficient_decrease_fails, curvature_holds,
                                  here, prev, g0)]
        which = fnp.where(bracket_behind, 1, fnp.where(bracket_ahead, 2, 0))
        zoomed = lax.switch(which, branches)
        take = bracket_behind | found | bracket_ahead
        s = dict(s, nfev=s["nfev"] + 1 + zoomed["nfev"], done=s["done"] | take,
                 failed=s["failed"] | ((bracket_behind | bracket_ahead) & zoomed["failed"]))
        s.update(_pick(take, {k: zoomed[k] for k in ("a", "f", "d", "g")}, s))
        s.update(i=s["i"] + 1, a_prev=a, f_prev=f, d_prev=d)
        return s

    s = lax.while_loop(keep_going, step, state)
    status = fnp.where(s["failed"], 1, fnp.where(s["i"] > maxiter, 3, 0))
    a = s["a"]
    if dtypes.finfo(a.dtype).bits != 64:  # a step too small to move 32-bit values
        a = fnp.where(fnp.abs(a) < 1e-8, fnp.sign(a) * 1e-8, a)
    return dict(a=a, f=s["f"], g=s["g"], nfev=s["nfev"], failed=s["failed"] | ~s["done"],
                status=status)


def _cubic_min(a, fa, da, b, fb, c, fc):
    """The minimizer of the cubic through (a, fa) with slope da at a, (b, fb), (c, fc)."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    rb, rc = fb - fa - da * db, fc - fa - da * dc
    A = (dc ** 2 * rb - db ** 2 * rc) / denom
    B = (-dc ** 3 * rb + db ** 3 * rc) / denom
    return a + (-B + fnp.sqrt(B * B - 3. * A * da)) / (3. * A)


def _quad_min(a, fa, da, b, fb):
    """The minimizer of the parabola through (a, fa) with slope da at a and (b, fb)."""
    db = b - a
    curvature = (fb - fa - da * db) / (db ** 2)
    return a - da / (2. * curvature)


def _zoom(along, sufficient_decrease_fails, curvature_holds, lo, hi, g0):
    """Nocedal & Wright algorithm 3.6: shrink the bracket [lo, hi] (each (a, f, f'))
    until a trial step satisfies the strong Wolfe conditions; fails after 30 trials or
    once hi - lo falls under a tolerance (signed, as in JAX)."""
    (a_lo, f_lo, d_lo), (a_hi, f_hi, d_hi) = lo, hi
    s = dict(done=fnp.asarray(False), failed=fnp.asarray(False), j=_int(0),
             a_lo=a_lo, f_lo=f_lo, d_lo=d_lo, a_hi=a_hi, f_hi=f_hi, d_hi=d_hi,
             a_rec=(a_lo + a_hi) / 2., f_rec=(f_lo + f_hi) / 2., nfev=_int(0),
             a=fnp.ones_like(a_lo), f=f_lo, d=d_lo, g=g0)
    tolerance = 1e-5 if dtypes.finfo(a_lo.dtype).bits < 64 else 1e-10

    def keep_going(s):
        return ~s["done"] & ~s["failed"]

    def step(s):
        width = s["a_hi"] - s["a_lo"]
        left, right = fnp.minimum(s["a_hi"], s["a_lo"]), fnp.maximum(s["a_hi"], s["a_lo"])
        failed = s["failed"] | (width <= tolerance)
        cubic = _cubic_min(s["a_lo"], s["f_lo"], s["d_lo"], s["a_hi"], s["f_hi"],
                           s["a_rec"], s["f_rec"])
        use_cubic = (s["j"] > 0) & (cubic > left + 0.2 * width) & (cubic < right - 0.2 * width)
        quad = _quad_min(s["a_lo"], s["f_lo"], s["d_lo"], s["a_hi"], s["f_hi"])
        use_quad = ~use_cubic & (quad > left + 0.1 * width) & (quad < right - 0.1 * width)
        a = fnp.where(use_cubic, cubic,
                      fnp.where(use_quad, quad, (s["a_lo"] + s["a_hi"]) / 2.))
        f, d, g = along(a)
        f, d, g = f.astype(s["f_lo"].dtype), d.astype(s["d_lo"].dtype), g.astype(s["g"].dtype)
        new_hi = sufficient_decrease_fails(a, f) | (f >= s["f_lo"])
        found = curvature_holds(d) & ~new_hi
        flip = (d * (s["a_hi"] - s["a_lo"]) >= 0.) & ~new_hi & ~found
        new_lo = ~new_hi & ~found
        out = dict(s, failed=failed, nfev=s["nfev"] + 1, done=s["done"] | found)
        # a becomes hi: the old hi is remembered for the cubic.
        out.update(_pick(new_hi, dict(a_hi=a, f_hi=f, d_hi=d, a_rec=s["a_hi"],
                                      f_rec=s["f_hi"]), out))
        out.update(_pick(found, dict(a=a, f=f, d=d, g=g), out))
        # the slope at a points back past lo: lo becomes hi (and then a becomes lo).
        out.update(_pick(flip, dict(a_hi=s["a_lo"], f_hi=s["f_lo"], d_hi=s["d_lo"],
                                    a_rec=s["a_hi"], f_rec=s["f_hi"]), out))
        out.update(_pick(new_lo & ~flip, dict(a_rec=s["a_lo"], f_rec=s["f_lo"]), out))
        out.update(_pick(new_lo, dict(a_lo=a, f_lo=f, d_lo=d), out))
        out["j"] = s["j"] + 1
        out["failed"] = out["failed"] | (out["j"] >= 30)
        return out

    s = lax.while_loop(keep_going, step, s)
    return dict(failed=s["failed"], nfev=s["nfev"], a=s["a"], f=s["f"], d=s["d"], g=s["g"])
