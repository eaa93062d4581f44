"""Integrate a damped harmonic oscillator with RK4 inside lax.fori_loop, compare with the
analytic solution, and differentiate the final state with respect to the damping.

    x'' + 2 zeta omega x' + omega^2 x = 0,   x(0) = 1, x'(0) = 0

With Python int bounds, fori_loop has a static trip count and is a scan underneath, so
reverse mode (fg.grad) works through all the steps."""
import numpy as np

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax

OMEGA = 2.0
T_END = 5.0
N_STEPS = 500
DT = T_END / N_STEPS


def vector_field(state, zeta):
    x, v = state[0], state[1]
    return fnp.stack([v, -2.0 * zeta * OMEGA * v - OMEGA ** 2 * x])


def rk4_step(state, zeta):
    k1 = vector_field(state, zeta)
    k2 = vector_field(state + 0.5 * DT * k1, zeta)
    k3 = vector_field(state + 0.5 * DT * k2, zeta)
    k4 = vector_field(state + DT * k3, zeta)
    return state + DT / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def integrate(zeta):
    """The state (x, v) at T_END."""
    state0 = np.array([1.0, 0.0], np.float32)
    return lax.fori_loop(0, N_STEPS, lambda i, s: rk4_step(s, zeta), state0)


def analytic_position(zeta, t=T_END):
    """The underdamped solution (zeta < 1), in float64."""
    wd = OMEGA * np.sqrt(1.0 - zeta ** 2)
    return np.exp(-zeta * OMEGA * t) * (np.cos(wd * t) + zeta * OMEGA / wd * np.sin(wd * t))


def main():
    zeta = np.float32(0.15)
    final = fg.jit(integrate)(zeta)
    x_exact = analytic_position(float(zeta))
    print(f"RK4 x(T) = {float(final[0]):+.6f}   analytic x(T) = {x_exact:+.6f}")
    assert abs(float(final[0]) - x_exact) < 1e-4, (float(final[0]), x_exact)

    final_position = fg.jit(lambda z: integrate(z)[0])
    dx_dzeta = float(fg.jit(fg.grad(lambda z: integrate(z)[0]))(zeta))

    eps = 2e-3
    fd_integrator = (float(final_position(zeta + np.float32(eps)))
                     - float(final_position(zeta - np.float32(eps)))) / (2 * eps)
    fd_exact = (analytic_position(float(zeta) + 1e-6)
                - analytic_position(float(zeta) - 1e-6)) / 2e-6
    print(f"d x(T) / d zeta: grad {dx_dzeta:+.5f}   finite differences of the integrator "
          f"{fd_integrator:+.5f}   of the analytic solution {fd_exact:+.5f}")
    np.testing.assert_allclose(dx_dzeta, fd_integrator, rtol=1e-2)
    np.testing.assert_allclose(dx_dzeta, fd_exact, rtol=1e-2)

    jac = fg.jacfwd(integrate)(zeta)
    print(f"forward mode d(x, v)(T) / d zeta: {np.asarray(jac)}")
    np.testing.assert_allclose(float(jac[0]), dx_dzeta, rtol=1e-3)
    print("the gradient through 500 RK4 steps matches finite differences")


if __name__ == "__main__":
    main()
