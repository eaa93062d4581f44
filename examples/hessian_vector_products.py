"""Hessian-vector products three ways, without forming the Hessian:
forward-over-reverse (jvp of grad), reverse-over-forward (grad of a jvp) and
reverse-over-reverse (grad of a vjp); all agree with the explicit Hessian."""
import numpy as np

import funcgraph as fg
import funcgraph.numpy as fnp


def f(x):
    """A smooth non-quadratic function of a vector."""
    return fnp.sum(fnp.tanh(x) ** 2) + fnp.sum(x[:-1] * fnp.sin(x[1:]))


def hvp_forward_over_reverse(f, x, v):
    return fg.jvp(fg.grad(f), (x,), (v,))[1]


def hvp_reverse_over_forward(f, x, v):
    return fg.grad(lambda y: fg.jvp(f, (y,), (v,))[1])(x)


def hvp_reverse_over_reverse(f, x, v):
    return fg.grad(lambda y: fnp.vdot(fg.grad(f)(y), v))(x)


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=16).astype(np.float32)
    v = rng.normal(size=16).astype(np.float32)
    expected = np.asarray(fg.hessian(f)(x)) @ v
    for name, hvp in [("forward-over-reverse", hvp_forward_over_reverse),
                      ("reverse-over-forward", hvp_reverse_over_forward),
                      ("reverse-over-reverse", hvp_reverse_over_reverse)]:
        result = np.asarray(fg.jit(lambda x, v: hvp(f, x, v))(x, v))
        np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-5)
        ops = len(fg.make_jaxpr(lambda x, v: hvp(f, x, v))(x, v).eqns)
        print(f"{name:<22} |Hv| = {np.linalg.norm(result):.5f}   ({ops} equations)")
    print("all three agree with hessian(f)(x) @ v")


if __name__ == "__main__":
    main()
