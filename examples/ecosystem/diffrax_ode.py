"""A damped oscillator solved with diffrax (Tsit5, adaptive steps), and the gradient of
its final position with respect to the damping:

    python -m funcgraph run examples/ecosystem/diffrax_ode.py

It prints the solution and gradient as JSON (the suite compares them with jax's)."""
import json

import diffrax
import jax
import jax.numpy as jnp


def final_position(damping):
    def vector_field(t, y, args):
        position, velocity = y
        return jnp.stack([velocity, -position - args * velocity])

    solution = diffrax.diffeqsolve(
        diffrax.ODETerm(vector_field), diffrax.Tsit5(), t0=0.0, t1=5.0, dt0=0.1,
        y0=jnp.array([1.0, 0.0]), args=damping,
        saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, 5.0, 6)),
        stepsize_controller=diffrax.PIDController(rtol=1e-6, atol=1e-6))
    return solution.ys[-1, 0], solution.ys


def main():
    (position, ys), grad = jax.value_and_grad(final_position, has_aux=True)(0.3)
    return {"position": float(position), "ys": ys.tolist(), "d_position_d_damping": float(grad)}


if __name__ == "__main__":
    print(json.dumps(main()))
