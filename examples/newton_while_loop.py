"""Newton's method with lax.while_loop: the loop runs until the step is small, so its trip
count depends on the data.

1. The real root of x^3 - 2x - 5 under fg.jit.
2. vmap over several starting points: the predicate is batched, and the batched loop
   runs until every lane has converged (each lane keeps its own iteration count).
3. A 2-D system with its Jacobian from fg.jacfwd."""
import numpy as np

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax

TOL = 1e-6
MAX_ITERS = 50
ROOT = 2.0945514815423265  # of x^3 - 2x - 5


def f(x):
    return x ** 3 - 2.0 * x - 5.0


def newton(fun, x0):
    """(root, iterations) of a scalar function, with its derivative from fg.grad."""
    dfun = fg.grad(fun)

    def not_done(carry):
        _, step, i = carry
        return (fnp.abs(step) > TOL) & (i < MAX_ITERS)

    def update(carry):
        x, _, i = carry
        step = fun(x) / dfun(x)
        return x - step, step, i + 1
    x, _, iters = lax.while_loop(not_done, update, (x0, fnp.float32(np.inf), 0))
    return x, iters


def system(p):
    """x^2 + y^2 = 4 and exp(x) + y = 1."""
    x, y = p[0], p[1]
    return fnp.stack([x * x + y * y - 4.0, fnp.exp(x) + y - 1.0])


def newton_system(fun, p0):
    jac = fg.jacfwd(fun)

    def not_done(carry):
        _, step, i = carry
        return (fnp.max(fnp.abs(step)) > TOL) & (i < MAX_ITERS)

    def update(carry):
        p, _, i = carry
        (a, b), (c, d) = jac(p)
        r = fun(p)
        det = a * d - b * c
        step = fnp.stack([d * r[0] - b * r[1], a * r[1] - c * r[0]]) / det  # J^-1 r
        return p - step, step, i + 1
    p, _, iters = lax.while_loop(not_done, update,
                                 (p0, fnp.full((2,), np.inf, np.float32), 0))
    return p, iters


def main():
    solve = fg.jit(lambda x0: newton(f, x0))
    root, iters = solve(np.float32(1.0))
    print(f"root of x^3 - 2x - 5 from x0 = 1: {float(root):.7f} in {int(iters)} iterations")
    assert abs(float(root) - ROOT) < 1e-5

    starts = np.array([-3.0, -1.0, 0.0, 0.5, 1.0, 3.0, 10.0], np.float32)
    roots, counts = fg.jit(fg.vmap(lambda x0: newton(f, x0)))(starts)
    print("\nvmap over starting points (batched predicate):")
    for x0, r, n in zip(starts, np.asarray(roots), np.asarray(counts)):
        print(f"  x0 = {x0:+5.1f}  ->  {r:.7f}  after {n:2d} iterations")
    np.testing.assert_allclose(np.asarray(roots), ROOT, atol=1e-5)
    counts = np.asarray(counts)
    assert len(set(counts.tolist())) > 1, "lanes should need different iteration counts"
    for x0, n in zip(starts, counts):
        assert int(solve(x0)[1]) == n  # each lane stopped at its own count

    p, iters = fg.jit(lambda p0: newton_system(system, p0))(np.array([1.0, -1.5], np.float32))
    residual = np.asarray(system(p))
    print(f"\n2-D system: (x, y) = {np.asarray(p)} after {int(iters)} iterations, "
          f"residual {np.abs(residual).max():.1e}")
    assert np.abs(residual).max() < 1e-5


if __name__ == "__main__":
    main()
