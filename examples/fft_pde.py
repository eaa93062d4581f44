"""Spectral PDE solvers with funcgraph.numpy.fft, and gradients through them.

1. The 2D heat equation u_t = nu (u_xx + u_yy) on the periodic square [0, 2 pi)^2 is
   solved exactly in Fourier space: each mode decays as exp(-nu |k|^2 t).  Checked
   against the analytic solution of u0 = sin(x) cos(2y).
2. Viscous Burgers u_t + u u_x = nu u_xx on the periodic interval, pseudo-spectrally:
   u u_x is formed in physical space (2/3-rule dealiased), the diffusion is treated
   implicitly (IMEX Euler), and jit compiles a lax.fori_loop of steps.  We take the
   gradient of the final energy 0.5 * mean(u^2) with respect to the viscosity and to
   the initial condition, and check both against finite differences.

The solvers are built by `build(fg, fnp)` from a transformation namespace and a NumPy
namespace, so tests/test_fft.py runs the very same program with jax to compare."""
import numpy as np

import funcgraph as fg
import funcgraph.numpy as fnp

N = 64            # grid points per axis
DT = 1e-2         # Burgers time step
STEPS = 100       # Burgers steps (t = 1)


def build(fgm, npm):
    """The solvers, written against `fgm` (jit, grad, lax) and `npm` (numpy, numpy.fft)."""
    fft = npm.fft
    k = fft.rfftfreq(N, 1.0 / N)  # integer wavenumbers 0 .. N/2 of the half spectrum
    dealias = (npm.abs(k) < N / 3).astype(np.float32)

    def heat_2d(u0, nu, t):
        ky = fft.fftfreq(N, 1.0 / N)[:, None]
        decay = npm.exp(-nu * t * (ky ** 2 + k[None, :] ** 2))
        return fft.irfft2(fft.rfft2(u0) * decay, s=(N, N))

    def burgers_step(u_hat, nu):
        u = fft.irfft(u_hat, n=N)
        u_x = fft.irfft(1j * k * u_hat, n=N)
        nonlinear = fft.rfft(u * u_x) * dealias
        return (u_hat - DT * nonlinear) / (1.0 + DT * nu * k ** 2)

    def burgers(u0, nu):
        u_hat = fgm.lax.fori_loop(0, STEPS, lambda i, v: burgers_step(v, nu), fft.rfft(u0))
        return fft.irfft(u_hat, n=N)

    def final_energy(u0, nu):
        return 0.5 * npm.mean(burgers(u0, nu) ** 2)

    return {"heat_2d": fgm.jit(heat_2d), "burgers": fgm.jit(burgers),
            "final_energy": fgm.jit(final_energy),
            "energy_grads": fgm.jit(fgm.grad(final_energy, argnums=(0, 1)))}


def grid():
    return np.arange(N, dtype=np.float32) * np.float32(2 * np.pi / N)


def initial_condition():
    x = grid()
    return (np.sin(x) + 0.5 * np.cos(3 * x)).astype(np.float32)


def main():
    solvers = build(fg, fnp)
    x = grid()

    # 1. Heat equation: spectral solution == analytic solution.
    u0 = np.sin(x)[:, None] * np.cos(2 * x)[None, :]
    nu, t = np.float32(0.1), np.float32(0.7)
    u = solvers["heat_2d"](u0, nu, t)
    exact = u0 * np.exp(-5 * nu * t)
    error = float(np.abs(np.asarray(u) - exact).max())
    print(f"heat 2D: max |spectral - analytic| = {error:.2e}")
    assert error < 1e-5, error

    # 2. Burgers: energy decays; gradients match finite differences.
    u0, nu = initial_condition(), np.float32(0.05)
    e0 = 0.5 * float(np.mean(u0 ** 2))
    e1 = float(solvers["final_energy"](u0, nu))
    print(f"Burgers: energy {e0:.5f} -> {e1:.5f} after t = {STEPS * DT:g}")
    assert e1 < e0

    g_u0, g_nu = solvers["energy_grads"](u0, nu)
    eps = 1e-3
    fd_nu = (float(solvers["final_energy"](u0, nu + eps))
             - float(solvers["final_energy"](u0, nu - eps))) / (2 * eps)
    print(f"dE/dnu = {float(g_nu):+.5f}   finite difference {fd_nu:+.5f}")
    assert abs(float(g_nu) - fd_nu) < 2e-2 * abs(fd_nu) + 1e-4

    direction = np.cos(2 * x).astype(np.float32)
    fd_u0 = (float(solvers["final_energy"](u0 + eps * direction, nu))
             - float(solvers["final_energy"](u0 - eps * direction, nu))) / (2 * eps)
    along = float(np.dot(np.asarray(g_u0), direction))
    print(f"dE/du0 . d = {along:+.5f}   finite difference {fd_u0:+.5f}")
    assert abs(along - fd_u0) < 2e-2 * abs(fd_u0) + 1e-4


if __name__ == "__main__":
    main()
