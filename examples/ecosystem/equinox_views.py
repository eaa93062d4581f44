"""funcgraph's views of an equinox model's loss (the MLP of equinox_mlp.py):

    python -m funcgraph run examples/ecosystem/equinox_views.py

prints the gradient's IR with each equation's source line (equinox's own lines
included), what reverse mode keeps alive for the backward pass, and which equation first
makes a NaN when a weight is inf."""
import equinox as eqx
import funcgraph
import jax
import jax.numpy as jnp
import numpy as np


def main():
    x = np.linspace(-2, 2, 32, dtype=np.float32)[:, None]
    y = np.tanh(2 * x)
    model = eqx.nn.MLP(in_size=1, out_size=1, width_size=16, depth=2,
                       key=jax.random.PRNGKey(42))
    params, static = eqx.partition(model, eqx.is_inexact_array)

    def loss(params):
        net = eqx.combine(params, static)
        return jnp.mean((jax.vmap(net)(x) - y) ** 2)

    print("== the gradient's IR, first lines, with their source lines")
    closed = jax.make_jaxpr(jax.grad(loss))(params)
    print("\n".join(closed.pretty(source=True).splitlines()[:10]))
    print("== what the backward pass keeps alive")
    print(funcgraph.inspect.residuals_report(loss, params))
    print("== the first equation making a NaN, with an inf among the weights")
    poisoned = eqx.tree_at(lambda p: p.layers[1].weight, params,
                           params.layers[1].weight.at[0, 0].set(jnp.inf))
    print(funcgraph.inspect.find_nonfinite(loss)(poisoned))


if __name__ == "__main__":
    main()
