"""Bad inputs to each public function family: the exception has jax's type, and its
message names the function and the argument (or the offending value), so the user can
find the mistake without reading funcgraph's source."""
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp

FG = SimpleNamespace(np=fnp, lax=fg.lax, random=fg.random, nn=fg.nn, linalg=fnp.linalg,
                     api=fg)
JAX = SimpleNamespace(np=jnp, lax=jax.lax, random=jax.random, nn=jax.nn, linalg=jnp.linalg,
                      api=jax)

x1 = np.ones(3, np.float32)
x2 = np.ones((2, 3), np.float32)
i1 = np.ones(3, np.int32)

# (family, case, call on a namespace, expected type, words the message must contain)
# The words name the function and the argument (or the shapes/values at fault).
CASES = [
    # funcgraph.numpy: elementwise
    ("numpy ufunc", "non-array", lambda m: m.np.sin("abc"), TypeError, ["sin", "'x'", "str"]),
    ("numpy ufunc", "non-array second operand", lambda m: m.np.add(x1, ["a"]), TypeError,
     ["add", "'x2'"]),
    ("numpy ufunc", "shape mismatch", lambda m: m.np.add(x2, np.ones(4, np.float32)),
     ValueError, ["(2, 3)", "(4,)"]),
    # funcgraph.numpy: reductions
    ("numpy reduction", "axis out of range", lambda m: m.np.sum(x2, axis=2), ValueError,
     ["axis 2", "dimension 2"]),
    ("numpy reduction", "non-array", lambda m: m.np.sum(object()), TypeError,
     ["sum", "'a'"]),
    ("numpy reduction", "float axis", lambda m: m.np.sum(x2, axis=1.5), TypeError, ["float"]),
    ("numpy reduction", "tracer as static axis",
     lambda m: m.api.jit(lambda a: m.np.sum(x2, axis=a))(1), fg.errors.ConcretizationTypeError,
     ["sum", "axis"]),
    # funcgraph.numpy: shapes
    ("numpy shapes", "wrong size", lambda m: m.np.reshape(x2, (4,)), ValueError,
     ["reshape", "(4,)"]),
    ("numpy shapes", "tracer as static shape",
     lambda m: m.api.jit(lambda n: m.np.reshape(x2, (n, 2)))(3), TypeError,
     ["reshape", "shape"]),
    ("numpy shapes", "bad permutation", lambda m: m.np.transpose(x2, (0, 0)), TypeError,
     ["transpose", "(0, 0)"]),
    ("numpy shapes", "concatenate ranks", lambda m: m.np.concatenate([x2, x1]), TypeError,
     ["(2, 3)", "(3,)"]),
    ("numpy shapes", "concatenate non-array", lambda m: m.np.concatenate([x1, "ab"]),
     TypeError, ["concatenate", "'arrays'"]),
    ("numpy shapes", "squeeze of a non-1 axis", lambda m: m.np.squeeze(x2, 0), ValueError,
     ["squeeze", "(2, 3)"]),
    ("numpy shapes", "uneven split", lambda m: m.np.split(x1, 2), ValueError, ["split"]),
    # funcgraph.numpy: creation
    ("numpy creation", "tracer as shape", lambda m: m.api.jit(lambda n: m.np.zeros(n))(3),
     TypeError, ["zeros", "shape"]),
    ("numpy creation", "string array", lambda m: m.np.asarray("abc"), TypeError,
     ["asarray", "str"]),
    ("numpy creation", "tracer as arange bound",
     lambda m: m.api.jit(lambda n: m.np.arange(n))(3), fg.errors.ConcretizationTypeError,
     ["arange"]),
    # funcgraph.numpy: products and indexing
    ("numpy products", "matmul of a scalar", lambda m: m.np.matmul(x1, 2.0), ValueError,
     ["matmul"]),
    ("numpy products", "matmul contraction mismatch", lambda m: m.np.matmul(x2, x2),
     TypeError, ["(3", "2"]),
    ("numpy indexing", "float indices", lambda m: m.np.take(x1, np.array([0.5])), ValueError,
     ["indices", "integer"]),
    # funcgraph.numpy.linalg
    ("numpy linalg", "inv of a vector", lambda m: m.linalg.inv(x1), ValueError,
     ["inv", "(3,)"]),
    ("numpy linalg", "inv of a non-square matrix", lambda m: m.linalg.inv(x2), ValueError,
     ["inv", "(2, 3)"]),
    # lax
    ("lax elementwise", "mixed dtypes", lambda m: m.lax.add(x1, i1), TypeError,
     ["add", "float32", "int32"]),
    ("lax elementwise", "non-array", lambda m: m.lax.add("x", 1.0), TypeError,
     ["add", "str"]),
    ("lax structural", "broadcast_in_dim mismatch",
     lambda m: m.lax.broadcast_in_dim(x1, (2, 4), (1,)), TypeError, ["broadcast_in_dim"]),
    ("lax structural", "dynamic_slice index count",
     lambda m: m.lax.dynamic_slice(x2, (0,), (1,)), ValueError, ["(2, 3)"]),
    ("lax contraction", "dot_general mismatch",
     lambda m: m.lax.dot_general(x2, x2, (((0,), (1,)), ((), ()))), TypeError,
     ["dot_general", "contracting"]),
    ("lax sorting", "sort dimension out of range", lambda m: m.lax.sort(x2, dimension=3),
     ValueError, ["axis 3"]),
    ("lax control flow", "scan of a non-callable", lambda m: m.lax.scan(3, 0.0, x1),
     TypeError, ["scan", "f argument", "callable"]),
    ("lax control flow", "vector predicate",
     lambda m: m.lax.cond(x1, lambda: 1.0, lambda: 2.0), TypeError, ["cond", "scalar"]),
    ("lax control flow", "while_loop of a non-callable",
     lambda m: m.lax.while_loop(None, lambda c: c, 0.0), TypeError,
     ["while_loop", "cond_fun"]),
    # random
    ("random", "not a key", lambda m: m.random.normal(3, (2,)), TypeError, ["key"]),
    ("random", "tracer as shape",
     lambda m: m.api.jit(lambda n: m.random.normal(m.random.PRNGKey(0), (n,)))(3), TypeError,
     ["shape"]),
    ("random", "float split count", lambda m: m.random.split(m.random.PRNGKey(0), 2.5),
     TypeError, ["float"]),
    ("random", "float dtype for randint",
     lambda m: m.random.randint(m.random.PRNGKey(0), (2,), 0, 3, dtype=np.float32), TypeError,
     ["randint", "float32"]),
    # nn
    ("nn", "softmax axis out of range", lambda m: m.nn.softmax(x2, axis=3), ValueError,
     ["axis 3"]),
    ("nn", "float num_classes", lambda m: m.nn.one_hot(i1, 2.5), TypeError, ["float"]),
    # transformations
    ("jit", "unhashable static", lambda m: m.api.jit(lambda a, b: a, static_argnums=1)(x1, [1]),
     ValueError, ["static", "list"]),
    ("jit", "unknown static_argnames", lambda m: m.api.jit(lambda a: a, static_argnames="b")(x1),
     ValueError, ["'b'", "static_argnames"]),
    ("grad", "integer input", lambda m: m.api.grad(lambda a: a * 2)(3), TypeError,
     ["grad", "i32"]),
    ("grad", "vector output", lambda m: m.api.grad(lambda a: a)(x1), TypeError, ["grad", "f32[3]"]),
    ("grad", "argnums out of range", lambda m: m.api.grad(lambda a: a, argnums=2)(1.0),
     TypeError, ["argnums=2"]),
    ("vmap", "axis out of range", lambda m: m.api.vmap(lambda a: a, in_axes=3)(x2), ValueError,
     ["vmap", "axis 3"]),
    ("vmap", "inconsistent sizes",
     lambda m: m.api.vmap(lambda a, b: a + b)(x1, np.ones(4, np.float32)), ValueError,
     ["vmap", "inconsistent sizes"]),
    ("vmap", "in_axes of the wrong length", lambda m: m.api.vmap(lambda a, b: a, in_axes=(0,))(x1, x1),
     ValueError, ["vmap", "in_axes"]),
    ("jvp", "tangent shape", lambda m: m.api.jvp(lambda a: a, (x1,), (x2,)), ValueError,
     ["jvp", "(3,)", "(2, 3)"]),
    ("jvp", "tangent dtype", lambda m: m.api.jvp(lambda a: a, (1.0,), (1,)), TypeError,
     ["jvp", "dtype"]),
]

IDS = [f"{family}: {case}" for family, case, *_ in CASES]


def _raised(call, namespace):
    try:
        call(namespace)
    except Exception as e:  # noqa: BLE001 - the test inspects whatever was raised
        return e
    return None


@pytest.mark.parametrize("family,case,call,error,words", CASES, ids=IDS)
def test_bad_input_is_a_clear_error(family, case, call, error, words):
    raised = _raised(call, FG)
    assert raised is not None, f"{family}: {case} was accepted"
    assert isinstance(raised, error), f"{type(raised).__name__}: {raised}"
    message = str(raised)
    for word in words:
        assert word in message, f"{word!r} missing from: {message}"


@pytest.mark.parametrize("family,case,call,error,words", CASES, ids=IDS)
def test_jax_raises_the_same_exception_type(family, case, call, error, words):
    raised = _raised(call, JAX)
    assert raised is not None, f"jax accepts {family}: {case}"
    # funcgraph.errors' classes mirror jax.errors' by name
    names = [cls.__name__ for cls in type(raised).__mro__]
    assert error.__name__ in names, f"jax raises {type(raised).__name__}: {raised}"
