"""Write the notebooks in notebooks/ from the cell sources below (outputs empty).

Run once after editing: `.venv/bin/python tools/make_notebooks.py`.
tests/test_notebooks.py executes every notebook."""
import os

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "notebooks")

IMPORTS = """import numpy as np
import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax
import funcgraph.inspect as fgi"""

TOUR = [
    ("md", """# A tour of funcgraph

funcgraph traces pure Python functions into a typed IR (a *jaxpr*), transforms it
(`grad`, `vmap`, `jit`) and lowers it to StableHLO for XLA. Its API is JAX's."""),
    ("code", IMPORTS),
    ("md", """## Trace a function and read the IR

`make_jaxpr` runs the function on abstract values and records every primitive it
applies. The text form is JAX's; in Jupyter the IR renders as HTML with types,
weak types marked `~`, and each equation's source line."""),
    ("code", """def f(x, y):
    return fnp.sum(fnp.sin(x) * y + 1.0)

x = np.linspace(0, 1, 4, dtype=np.float32)
jaxpr = fg.make_jaxpr(f)(x, x)
print(jaxpr)"""),
    ("code", "jaxpr"),
    ("code", """print(jaxpr.pretty(source=True))
print(fgi.ir_report(jaxpr))"""),
    ("md", """## Transform

Transformations compose: the gradient of `f` is another function with its own IR."""),
    ("code", """df = fg.grad(f)
print(df(x, x))
fg.make_jaxpr(df)(x, x)"""),
    ("md", """## jit and StableHLO

`jit` traces once per argument signature, lowers to StableHLO and compiles with XLA.
The stages can be inspected: `trace`, `lower`, `compile`."""),
    ("code", """fast = fg.jit(f)
assert np.allclose(fast(x, x), f(x, x))
lowered = fast.lower(x, x)
lowered"""),
    ("code", """compiled = lowered.compile()
print(compiled.cost_analysis()["flops"])
compiled(x, x)"""),
    ("md", "Arrays render with a header (type, size, statistics) and a truncated view."),
    ("code", "fnp.arange(600.0).reshape(20, 30)"),
    ("md", """## Seeing inside transformed code

`fg.debug.print` shows values from inside `jit`, `vmap`, `grad` and `checkpoint` (which
prints again when the backward pass recomputes); `fg.effects_barrier()` waits for the
prints of compiled code. docs/debugging.md has the rest: callbacks, breakpoints, flags."""),
    ("code", """def noisy(x):
    fg.debug.print("x = {}", x)
    return fnp.sin(x) ** 2

fg.jit(fg.grad(fg.checkpoint(noisy)))(1.0)
fg.effects_barrier()"""),
    ("md", """Three tools JAX does not have. `find_nonfinite` runs a function (its backward pass
included) equation by equation and names the first one that makes a NaN or inf:"""),
    ("code", """def loss(x):
    return fnp.sum(fnp.sqrt(x) * 0.0)

fg.debug.find_nonfinite(fg.grad(loss))(np.array([0.0, 1.0], np.float32))"""),
    ("md", "`inspect.diff` shows what a transformation or an IR pass changed:"),
    ("code", """from funcgraph import passes
before = fg.make_jaxpr(lambda x: fnp.sin(x) * 1.0 + fnp.sin(x))(1.0)
fgi.diff(before, passes.optimize(before), labels=("traced", "optimized"))"""),
    ("md", "`jit(f).cache_info()` says what each compiled variant was for and why it was made:"),
    ("code", """scale = fg.jit(lambda x, n: x * n)
scale(np.ones(3, np.float32), 2.0)
scale(np.ones(4, np.float32), 2.0)
scale.cache_info()"""),
]

AUTODIFF = [
    ("md", """# Automatic differentiation

`jvp` pushes tangents forward; `vjp` linearizes and transposes; `grad` is `vjp`
with a cotangent of 1. All of them are interpreters over the same IR."""),
    ("code", IMPORTS),
    ("code", """def f(x):
    return fnp.sum(fnp.tanh(x) ** 2)

x = np.array([0.1, 0.5, -1.0], np.float32)
y, t = fg.jvp(f, (x,), (np.ones_like(x),))
g = fg.grad(f)(x)
expected = 2 * np.tanh(x) * (1 - np.tanh(x) ** 2)
assert np.allclose(g, expected, atol=1e-6)
assert np.allclose(t, expected.sum(), atol=1e-6)
g"""),
    ("md", """## What the backward pass keeps alive

Reverse mode stores *residuals*: values of the forward pass the backward pass reads.
`residuals_report` lists them with sizes and the lines that made them."""),
    ("code", """def mlp(w1, w2, x):
    h = fnp.tanh(x @ w1)
    return fnp.sum((h @ w2) ** 2)

rng = np.random.default_rng(0)
w1 = rng.normal(size=(8, 16)).astype(np.float32)
w2 = rng.normal(size=(16, 4)).astype(np.float32)
xs = rng.normal(size=(32, 8)).astype(np.float32)
print(fgi.residuals_report(mlp, w1, w2, xs))"""),
    ("md", "`checkpoint` trades memory for recomputation: fewer residuals, more work."),
    ("code", """def mlp_remat(w1, w2, x):
    h = fg.checkpoint(lambda w, x: fnp.tanh(x @ w))(w1, x)
    return fnp.sum((h @ w2) ** 2)

print(fgi.residuals_report(mlp_remat, w1, w2, xs))
assert np.allclose(fg.grad(mlp)(w1, w2, xs), fg.grad(mlp_remat)(w1, w2, xs), rtol=1e-5)"""),
    ("md", "## Jacobians and Hessians"),
    ("code", """def h(x):
    return fnp.sin(x) * x

J = fg.jacfwd(h)(x)
assert np.allclose(J, fg.jacrev(h)(x), atol=1e-6)
H = fg.hessian(f)(x)
H.shape"""),
]

VMAP = [
    ("md", """# vmap: batching without rewriting

`vmap(f)` maps `f` over a leading (or chosen) axis. It is an interpreter that carries
a batch dimension through every primitive; the result is one batched program, not a
Python loop."""),
    ("code", IMPORTS),
    ("code", """def predict(w, x):
    return fnp.tanh(fnp.dot(x, w))

w = np.ones((3, 2), np.float32)
xs = np.arange(12.0, dtype=np.float32).reshape(4, 3)
batched = fg.vmap(predict, in_axes=(None, 0))(w, xs)
looped = np.stack([predict(w, xi) for xi in xs])
assert np.allclose(batched, looped)
fg.make_jaxpr(fg.vmap(predict, in_axes=(None, 0)))(w, xs)"""),
    ("md", "## Per-example gradients: `vmap` of `grad`"),
    ("code", """def loss(w, x, y):
    return (fnp.sum(x * w) - y) ** 2

w = np.array([1.0, -2.0, 0.5], np.float32)
xs = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
ys = np.arange(5.0, dtype=np.float32)
per_example = fg.vmap(fg.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
assert per_example.shape == (5, 3)
assert np.allclose(per_example[2], fg.grad(loss)(w, xs[2], ys[2]), rtol=1e-5)
per_example"""),
    ("md", "## Axes: `in_axes` and `out_axes`"),
    ("code", """m = np.arange(6.0, dtype=np.float32).reshape(2, 3)
col_sums = fg.vmap(fnp.sum, in_axes=1)(m)
assert np.allclose(col_sums, m.sum(0))
fg.jit(fg.vmap(lambda v: v * 2.0, out_axes=1))(m).shape"""),
]

CONTROL_FLOW = [
    ("md", """# Control flow

Python `if` and `for` run at trace time. Control flow on traced values uses
`lax.cond`, `lax.while_loop`, `lax.fori_loop` and `lax.scan`, primitives whose
parameters hold sub-jaxprs (fold them open in the HTML view)."""),
    ("code", IMPORTS),
    ("code", """def relu_or_square(x):
    return lax.cond(fnp.sum(x) > 0, lambda v: fnp.maximum(v, 0.0), lambda v: v * v, x)

x = np.array([-1.0, 2.0, 3.0], np.float32)
assert np.allclose(relu_or_square(x), [0.0, 2.0, 3.0])
assert np.allclose(fg.jit(relu_or_square)(-x), x * x)
fg.make_jaxpr(relu_or_square)(x)"""),
    ("md", "Tracing Python control flow on a traced value fails with a helpful error:"),
    ("code", """def bad(x):
    if x > 0:
        return x
    return -x

try:
    fg.jit(bad)(1.0)
except fg.ConcretizationTypeError as e:
    print(str(e).splitlines()[0])"""),
    ("md", "## Loops: `while_loop` (Newton's method for a square root) and `scan`"),
    ("code", """def newton_sqrt(a):
    def body(state):
        x, i = state
        return 0.5 * (x + a / x), i + 1
    return lax.while_loop(lambda s: s[1] < 20, body, (a, 0))[0]

assert np.allclose(fg.jit(newton_sqrt)(2.0), np.sqrt(2.0))
fg.make_jaxpr(newton_sqrt)(2.0)"""),
    ("code", """def cumsum(xs):
    return lax.scan(lambda c, x: (c + x, c + x), 0.0, xs)

total, partial = cumsum(np.arange(5.0, dtype=np.float32))
assert np.allclose(partial, np.cumsum(np.arange(5.0)))
print(fg.grad(lambda xs: cumsum(xs)[0])(np.arange(5.0, dtype=np.float32)))
fg.make_jaxpr(cumsum)(np.arange(5.0, dtype=np.float32))"""),
]

SHARDING = [
    ("code", """# XLA reads the device count when its backend starts: set it before funcgraph runs.
import os
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_force_host_platform_device_count=8")"""),
    ("md", """# Sharding: one program over 8 devices

An array can be laid out over a `Mesh` of devices (here 8 virtual CPU devices);
`jit` hands the layouts to XLA's SPMD partitioner, which splits the program and
inserts the collectives. The same code runs on a GPU/TPU cluster
(docs/scaling.md). `visualize_array_sharding` draws which device holds which block."""),
    ("code", IMPORTS + """
from funcgraph.sharding import NamedSharding, PartitionSpec as P

assert fg.device_count() == 8
mesh = fg.make_mesh((2, 4), ("data", "model"))
mesh"""),
    ("md", "## `device_put` with a `NamedSharding`"),
    ("code", """x = fg.device_put(np.arange(64.0, dtype=np.float32).reshape(8, 8),
                  NamedSharding(mesh, P("data", "model")))
print(x.sharding)
fg.debug.visualize_array_sharding(x)"""),
    ("code", """rows = fg.device_put(x, NamedSharding(mesh, P("data")))  # replicated over "model"
fg.debug.visualize_array_sharding(rows)"""),
    ("md", """## Sharded `jit`

Outputs nobody placed take the layout XLA's propagation chose; `out_shardings`
places them."""),
    ("code", """y = fg.jit(lambda a: fnp.sin(a) * 2)(x)
assert y.sharding == x.sharding
z = fg.jit(lambda a: a.sum(0), out_shardings=NamedSharding(mesh, P("model")))(x)
assert np.allclose(z, np.asarray(x).sum(0))
fg.debug.visualize_array_sharding(z)"""),
    ("md", """## `with_sharding_constraint`

Inside `jit`, a constraint fixes the layout of an intermediate value; it is an
equation of the IR."""),
    ("code", """def f(a):
    h = lax.with_sharding_constraint(fnp.tanh(a), NamedSharding(mesh, P(None, "model")))
    return h @ h.T

out = fg.jit(f)(x)
assert np.allclose(out, np.tanh(np.asarray(x)) @ np.tanh(np.asarray(x)).T, rtol=1e-5)
fg.make_jaxpr(f)(x)"""),
    ("md", """## Data- and model-parallel training of an MLP

Data parallel: parameters replicated, the batch split over the devices; the
gradients are summed by an all-reduce XLA inserts. Model parallel: the hidden units
split over "model" (the first layer's columns, the second's rows)."""),
    ("code", """rng = np.random.default_rng(0)
params = (rng.normal(size=(16, 32)).astype(np.float32) * 0.3, np.zeros(32, np.float32),
          rng.normal(size=(32, 4)).astype(np.float32) * 0.3, np.zeros(4, np.float32))
xs = rng.normal(size=(64, 16)).astype(np.float32)
ys = np.sin(2 * xs[:, :4]).astype(np.float32)

def loss(p, xs, ys):
    w1, b1, w2, b2 = p
    return ((fnp.tanh(xs @ w1 + b1) @ w2 + b2 - ys) ** 2).mean()

def train(mesh, param_specs, steps=5):
    shardings = tuple(NamedSharding(mesh, s) for s in param_specs)
    p = fg.device_put(params, shardings)
    batch = fg.device_put((xs, ys), NamedSharding(mesh, P("data")))

    @fg.jit
    def step(p, batch):
        value, grads = fg.value_and_grad(loss)(p, *batch)
        return tuple(q - 0.1 * g for q, g in zip(p, grads)), value
    losses = []
    for _ in range(steps):
        p, value = step(p, batch)
        losses.append(float(value))
    hlo = step.lower(p, batch).compile().as_text()
    return p, losses, hlo.count(" all-reduce(")

data_mesh = fg.make_mesh((8,), ("data",))
p_data, losses_data, reduces = train(data_mesh, [P()] * 4)
print("data parallel:", np.round(losses_data, 4), "all-reduces:", reduces)
fg.debug.visualize_array_sharding(p_data[0])"""),
    ("code", """p_model, losses_model, reduces = train(mesh, [P(None, "model"), P("model"),
                                              P("model", None), P()])
print("model parallel:", np.round(losses_model, 4), "all-reduces:", reduces)
assert np.allclose(losses_model, losses_data, rtol=1e-5)
fg.debug.visualize_array_sharding(p_model[0])"""),
    ("code", """hidden = fg.jit(lambda p, a: lax.with_sharding_constraint(
    fnp.tanh(a @ p[0] + p[1]), NamedSharding(mesh, P("data", "model"))))(
    p_model, fg.device_put(xs, NamedSharding(mesh, P("data"))))
fg.debug.visualize_array_sharding(hidden)"""),
]

NOTEBOOKS = {"tour.ipynb": TOUR, "autodiff.ipynb": AUTODIFF, "vmap.ipynb": VMAP,
             "control_flow.ipynb": CONTROL_FLOW, "sharding.ipynb": SHARDING}


def build(cells):
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [new_markdown_cell(src) if kind == "md" else new_code_cell(src)
                for kind, src in cells]
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"  # stable ids, so regenerating gives the same files
    return nb


def main():
    for name, cells in NOTEBOOKS.items():
        nbformat.write(build(cells), os.path.join(OUT, name))
        print("wrote", os.path.join("notebooks", name))


if __name__ == "__main__":
    main()
