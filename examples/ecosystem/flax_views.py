"""funcgraph's views of a flax.linen training step (the CNN of flax_linen_cnn.py):

    python -m funcgraph run examples/ecosystem/flax_views.py [out.html]

prints the step's IR with each equation's source line (flax's and optax's lines
included), the equations by primitive, what reverse mode keeps alive for the backward
pass, which equation first makes a NaN when a weight is inf, and the diff of the step's
IR at two batch sizes; writes the HTML view of the IR (the view Jupyter shows) to
out.html if given."""
import sys

import funcgraph
import jax
import jax.numpy as jnp
import optax
from flax_linen_cnn import CNN, synthetic_digits


def loss_fn(params, model, x, y):
    logits = model.apply(params, x)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


def main(out=None):
    model = CNN()
    images, labels = synthetic_digits(8)
    params = model.init(jax.random.PRNGKey(0), images[:1])
    step = jax.jit(jax.value_and_grad(loss_fn), static_argnums=1)
    closed = jax.make_jaxpr(jax.value_and_grad(loss_fn), static_argnums=1)(
        params, model, images, labels)

    print("== the step's IR, first lines, with their source lines")
    print("\n".join(closed.pretty(source=True).splitlines()[:12]))
    print("== equations by primitive")
    print(funcgraph.inspect.ir_report(closed))
    print("== what the backward pass keeps alive")
    print(funcgraph.inspect.residuals_report(
        lambda p: loss_fn(p, model, images, labels), params))
    print("== the first equation making a NaN, with an inf among the weights")
    poisoned = jax.tree_util.tree_map(lambda w: w, params)
    kernel = poisoned["params"]["Dense_1"]["kernel"]
    poisoned["params"]["Dense_1"]["kernel"] = kernel.at[0, 0].set(jnp.inf)
    print(funcgraph.inspect.find_nonfinite(lambda p: loss_fn(p, model, images, labels))(poisoned))
    print("== the IR at batch 8 against batch 4: the same equations, other shapes")
    smaller = jax.make_jaxpr(jax.value_and_grad(loss_fn), static_argnums=1)(
        params, model, images[:4], labels[:4])
    print("\n".join(str(funcgraph.inspect.diff(closed, smaller)).splitlines()[:8]))
    loss, _ = step(params, model, images, labels)
    print("== loss", float(loss))
    if out:
        with open(out, "w") as f:
            f.write(funcgraph.inspect.jaxpr_html(closed))


if __name__ == "__main__":
    main(*sys.argv[1:])
