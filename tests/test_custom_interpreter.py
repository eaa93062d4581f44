"""JAX's tutorial "Writing custom Jaxpr interpreters in JAX" (docs/notebooks/
Writing_custom_interpreters_in_Jax.md), run twice: once on jax and once on funcgraph
with only its imports changed.  Its `eval_jaxpr` and inverse interpreter walk the jaxpr
objects (`closed_jaxpr.jaxpr`, `.literals`, `eqn.primitive.bind`, `core.Literal`,
`lax.exp_p`), so this checks funcgraph's jaxpr API against JAX's."""
import contextlib
import io

import numpy as np
import pytest

JAX_IMPORTS = """
import jax
import jax.numpy as jnp
from jax import jit, grad, vmap
from jax import random
from functools import wraps
from jax import lax
from jax.extend import core
from jax._src.util import safe_map
"""

FUNCGRAPH_IMPORTS = """
import funcgraph as jax
import funcgraph.numpy as jnp
from funcgraph import jit, grad, vmap
from funcgraph import random
from functools import wraps
from funcgraph import lax
from funcgraph.extend import core
from funcgraph.util import safe_map
"""

# The tutorial's code cells, in order (the first one's imports are in the headers above;
# its 5000x5000 example matrix is made smaller to keep the test fast).
TUTORIAL = """
x = random.normal(random.key(0), (500, 500))
def f(w, b, x):
  return jnp.tanh(jnp.dot(x, w) + b)
fast_f = jit(f)

def examine_jaxpr(closed_jaxpr):
  jaxpr = closed_jaxpr.jaxpr
  print("invars:", jaxpr.invars)
  print("outvars:", jaxpr.outvars)
  print("constvars:", jaxpr.constvars)
  for eqn in jaxpr.eqns:
    print("equation:", eqn.invars, eqn.primitive, eqn.outvars, eqn.params)
  print()
  print("jaxpr:", jaxpr)

def foo(x):
  return x + 1
print("foo")
print("=====")
examine_jaxpr(jax.make_jaxpr(foo)(5))

print()

def bar(w, b, x):
  return jnp.dot(w, x) + b + jnp.ones(5), x
print("bar")
print("=====")
examine_jaxpr(jax.make_jaxpr(bar)(jnp.ones((5, 10)), jnp.ones(5), jnp.ones(10)))

def f(x):
  return jnp.exp(jnp.tanh(x))

closed_jaxpr = jax.make_jaxpr(f)(jnp.ones(5))
print(closed_jaxpr.jaxpr)
print(closed_jaxpr.literals)

def eval_jaxpr(jaxpr, consts, *args):
  # Mapping from variable -> value
  env = {}

  def read(var):
    # Literals are values baked into the Jaxpr
    if type(var) is core.Literal:
      return var.val
    return env[var]

  def write(var, val):
    env[var] = val

  # Bind args and consts to environment
  safe_map(write, jaxpr.invars, args)
  safe_map(write, jaxpr.constvars, consts)

  # Loop through equations and evaluate primitives using `bind`
  for eqn in jaxpr.eqns:
    # Read inputs to equation from environment
    invals = safe_map(read, eqn.invars)
    # `bind` is how a primitive is called
    outvals = eqn.primitive.bind(*invals, **eqn.params)
    # Primitives may return multiple outputs or not
    if not eqn.primitive.multiple_results:
      outvals = [outvals]
    # Write the results of the primitive into the environment
    safe_map(write, eqn.outvars, outvals)
  # Read the final result of the Jaxpr from the environment
  return safe_map(read, jaxpr.outvars)

closed_jaxpr = jax.make_jaxpr(f)(jnp.ones(5))
eval_result = eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.literals, jnp.ones(5))

inverse_registry = {}

inverse_registry[lax.exp_p] = jnp.log
inverse_registry[lax.tanh_p] = jnp.arctanh

def inverse(fun):
  @wraps(fun)
  def wrapped(*args, **kwargs):
    # Since we assume unary functions, we won't worry about flattening and
    # unflattening arguments.
    closed_jaxpr = jax.make_jaxpr(fun)(*args, **kwargs)
    out = inverse_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.literals, *args)
    return out[0]
  return wrapped

def inverse_jaxpr(jaxpr, consts, *args):
  env = {}

  def read(var):
    if type(var) is core.Literal:
      return var.val
    return env[var]

  def write(var, val):
    env[var] = val
  # Args now correspond to Jaxpr outvars
  safe_map(write, jaxpr.outvars, args)
  safe_map(write, jaxpr.constvars, consts)

  # Looping backward
  for eqn in jaxpr.eqns[::-1]:
    #  outvars are now invars
    invals = safe_map(read, eqn.outvars)
    if eqn.primitive not in inverse_registry:
      raise NotImplementedError(
          f"{eqn.primitive} does not have registered inverse.")
    # Assuming a unary function
    outval = inverse_registry[eqn.primitive](*invals)
    safe_map(write, eqn.invars, [outval])
  return safe_map(read, jaxpr.invars)

def f(x):
  return jnp.exp(jnp.tanh(x))

f_inv = inverse(f)
assert jnp.allclose(f_inv(f(1.0)), 1.0)

inverse_jaxpr_printed = jax.make_jaxpr(inverse(f))(f(1.))

composed = jit(vmap(grad(inverse(f))))((jnp.arange(5) + 1.) / 5.)
"""


def run_tutorial(imports):
    namespace = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(imports + TUTORIAL, "<tutorial>", "exec"), namespace)
    namespace["printed"] = out.getvalue()
    return namespace


@pytest.fixture(scope="module")
def runs():
    return run_tutorial(JAX_IMPORTS), run_tutorial(FUNCGRAPH_IMPORTS)


def test_eval_jaxpr_gives_the_function_values(runs):
    jax_run, fg_run = runs
    assert len(fg_run["eval_result"]) == len(jax_run["eval_result"]) == 1
    np.testing.assert_allclose(np.asarray(fg_run["eval_result"][0]),
                               np.asarray(jax_run["eval_result"][0]), rtol=1e-6)


def test_inverse_composes_with_jit_vmap_grad(runs):
    jax_run, fg_run = runs
    np.testing.assert_allclose(np.asarray(fg_run["composed"]), np.asarray(jax_run["composed"]),
                               rtol=1e-5)


def test_the_jaxprs_have_the_same_equations(runs):
    jax_run, fg_run = runs
    for name in ("closed_jaxpr", "inverse_jaxpr_printed"):
        names = [[e.primitive.name for e in run[name].jaxpr.eqns] for run in runs]
        assert names[0] == names[1], name
    # examine_jaxpr printed one line per equation with its primitive and params.
    equations = [[line.split()[0] for line in run["printed"].splitlines()
                  if line.startswith("equation:")] for run in runs]
    assert len(equations[0]) == len(equations[1]) == 5
    assert fg_run["closed_jaxpr"].literals == jax_run["closed_jaxpr"].literals == []


def test_the_inverse_registry_is_keyed_by_the_primitives_the_jaxpr_holds(runs):
    _, fg_run = runs
    eqns = fg_run["closed_jaxpr"].jaxpr.eqns
    assert [e.primitive for e in eqns] == [fg_run["lax"].tanh_p, fg_run["lax"].exp_p]
    with pytest.raises(NotImplementedError, match="sin does not have registered inverse"):
        fg_run["inverse"](fg_run["jnp"].sin)(0.5)
