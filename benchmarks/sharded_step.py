"""The data-parallel MLP train step on 8 virtual CPU devices (run by run.py in its own
process: XLA_FLAGS must give 8 devices before the backend starts).  Parameters are
replicated, the batch split over the 'data' axis; prints funcgraph's and jax's seconds
per step and their ratio."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax.sharding as js  # noqa: E402
import numpy as np  # noqa: E402

import run  # noqa: E402
from run import fg, fnp, jax, jnp  # noqa: E402
from funcgraph.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402


def main():
    params, x, labels = run._mlp_setup()
    fm = Mesh(np.array(fg.devices()), ("data",))
    jm = js.Mesh(np.array(jax.devices()), ("data",))
    f_rep, f_data = NamedSharding(fm, P()), NamedSharding(fm, P("data"))
    j_rep, j_data = js.NamedSharding(jm, js.PartitionSpec()), js.NamedSharding(jm, js.PartitionSpec("data"))
    step_fg = fg.jit(run.train_step(fg, fnp, fg.tree_util.tree_map),
                     in_shardings=(f_rep, f_data, f_data))
    step_jax = jax.jit(run.train_step(jax, jnp, jax.tree_util.tree_map),
                       in_shardings=(j_rep, j_data, j_data))
    p_fg = fg.device_put(params, f_rep)
    x_fg, l_fg = fg.device_put(x, f_data), fg.device_put(labels, f_data)
    p_jax = jax.device_put(params, j_rep)
    x_jax, l_jax = jax.device_put(x, j_data), jax.device_put(labels, j_data)
    loss_fg = step_fg(p_fg, x_fg, l_fg)[1]
    loss_jax = step_jax(p_jax, x_jax, l_jax)[1]
    np.testing.assert_allclose(float(loss_fg), float(loss_jax), rtol=1e-4)
    t_fg, t_jax, ratio = run.interleaved(
        lambda: step_fg(p_fg, x_fg, l_fg)[1].block_until_ready(),
        lambda: step_jax(p_jax, x_jax, l_jax)[1].block_until_ready(), rounds=7, repeat=20)
    print(t_fg, t_jax, ratio)


if __name__ == "__main__":
    main()
