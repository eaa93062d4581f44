"""Small public names checked against jax: funcgraph.tree, index tricks, vectorize,
piecewise, fromfunction, the dtypes API and narrow dtypes, ravel_pytree, and the example
libraries (optimizers, stax) training a tiny MLP and CNN to the same numbers as jax."""
import collections
import dataclasses

import jax
import jax.example_libraries.optimizers as jopt
import jax.example_libraries.stax as jstax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.example_libraries.optimizers as fopt
import funcgraph.example_libraries.stax as fstax
import funcgraph.flatten_util
import funcgraph.numpy as fnp
from funcgraph import tree_util


def close(a, b, rtol=1e-5, atol=1e-6):
    for x, y in zip(jax.tree.leaves(a), fg.tree.leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=rtol, atol=atol)


# --- tree ---

Point = collections.namedtuple("Point", "a b")


@dataclasses.dataclass
class Layer:
    w: object
    name: str = dataclasses.field(default="dense", metadata={"static": True})


jax.tree_util.register_dataclass(Layer)
tree_util.register_dataclass(Layer)


def sample_tree():
    return {"x": [1.0, (2.0, 3.0)], "p": Point(4.0, 5.0), "none": None, "l": Layer(6.0)}


def test_tree_module_names_match_jax():
    public = {n for n in dir(jax.tree) if not n.startswith("_")}
    assert public <= set(dir(fg.tree)), public - set(dir(fg.tree))
    public = {n for n in dir(jax.tree_util) if not n.startswith("_")} - {"default_registry"}
    assert public <= set(dir(tree_util)), public - set(dir(tree_util))
    assert fg.jacobian is fg.jacrev


def test_paths_and_keys_match_jax():
    t = sample_tree()
    jax_paths = [(jax.tree_util.keystr(p), leaf) for p, leaf in jax.tree.leaves_with_path(t)]
    fg_paths = [(tree_util.keystr(p), leaf) for p, leaf in fg.tree.leaves_with_path(t)]
    assert fg_paths == jax_paths
    simple = [tree_util.keystr(p, simple=True, separator="/")
              for p, _ in fg.tree.flatten_with_path(t)[0]]
    assert simple == [jax.tree_util.keystr(p, simple=True, separator="/")
                      for p, _ in jax.tree.flatten_with_path(t)[0]]
    out = fg.tree.map_with_path(lambda p, x: tree_util.keystr(p), t)
    assert out == jax.tree.map_with_path(lambda p, x: jax.tree_util.keystr(p), t)


def test_is_leaf_takes_path_and_tree_functions():
    t = [1, {"a": 2, "b": [3, 4]}]
    stop = lambda path, x: len(path) == 2  # noqa: E731
    fg_leaves, fg_def = fg.tree.flatten_with_path(t, is_leaf=stop, is_leaf_takes_path=True)
    jax_leaves, _ = jax.tree.flatten_with_path(t, is_leaf=stop, is_leaf_takes_path=True)
    assert [leaf for _, leaf in fg_leaves] == [leaf for _, leaf in jax_leaves] == [1, 2, [3, 4]]
    assert fg.tree.unflatten(fg_def, [0, 0, 0]) == [0, {"a": 0, "b": 0}]
    assert fg.tree.broadcast([1, {"a": 2}], [(3, 4), {"a": [5, 6]}]) == \
        jax.tree.broadcast([1, {"a": 2}], [(3, 4), {"a": [5, 6]}])
    assert fg.tree.reduce_associative(lambda a, b: a + b, [1, 2, 3, 4, 5]) == 15
    with pytest.raises(TypeError, match="identity"):
        fg.tree.reduce_associative(lambda a, b: a + b, [])
    assert fg.tree.transpose(fg.tree.structure([0, 0]), None, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert tree_util.flatten_one_level({"a": 1, "b": [2]})[0] == [1, [2]]
    with pytest.raises(ValueError):
        tree_util.flatten_one_level(1)
    assert tree_util.is_tree_node(Point) and not tree_util.is_tree_node(int)
    both = tree_util.treedef_tuple([fg.tree.structure([1, 2]), fg.tree.structure(3)])
    assert both == fg.tree.structure(([1, 2], 3))


def test_register_static_and_keys_class():
    @tree_util.register_static
    class Static:
        def __hash__(self):
            return 0

        def __eq__(self, other):
            return type(other) is Static

    assert fg.tree.leaves([Static(), 1]) == [1]

    @tree_util.register_pytree_with_keys_class
    class Keyed:
        def __init__(self, a):
            self.a = a

        def tree_flatten_with_keys(self):
            return ((tree_util.GetAttrKey("a"), self.a),), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    ((path, leaf),) = fg.tree.leaves_with_path(Keyed(3))
    assert path == (tree_util.GetAttrKey("a"),) and leaf == 3


def test_static_field_of_a_dataclass_is_aux_data():
    @dataclasses.dataclass
    class Op:
        x: object
        kind: str = fg.tree.static(default="add")
    tree_util.register_dataclass(Op)
    leaves, treedef = fg.tree.flatten(Op(1.0))
    assert leaves == [1.0] and fg.tree.unflatten(treedef, [2.0]) == Op(2.0, "add")


# --- Array, typeof ---

def test_tracers_are_instances_of_array():
    seen = []

    def f(x):
        seen.append(isinstance(x, fg.Array))
        return x * 2
    fg.jit(f)(1.0)
    fg.grad(f)(1.0)
    fg.vmap(f)(fnp.ones(2))
    assert seen == [True, True, True]
    assert not isinstance(np.ones(2), fg.Array) and not isinstance(1.0, fg.Array)
    assert type(fnp.ones(2)) is fg.Array
    avals = []
    fg.jit(lambda x: avals.append(fg.typeof(x)))(fnp.ones((2, 3)))
    assert avals[0].shape == (2, 3) and avals[0].dtype == np.float32
    assert fg.typeof(1.0).weak_type == jax.typeof(1.0).weak_type


# --- numpy: index tricks, vectorize, piecewise, fromfunction ---

X = np.linspace(-2, 2, 9).astype(np.float32)
NUMPY_CASES = {
    "r_": lambda m: m.r_[1:4, [7, 8], 9],
    "r_complex": lambda m: m.r_[0:1:5j],
    "r_directive": lambda m: m.r_["-1,2,0", [1, 2], [3, 4]],
    "c_": lambda m: m.c_[m.ones((2, 2)), m.array([7, 8])],
    "ix_": lambda m: m.ix_(m.array([0, 1]), m.array([2, 4, 5]))[1],
    "mgrid": lambda m: m.mgrid[0:3, 0:1:3j],
    "ogrid": lambda m: m.ogrid[0:3, 0:2][0],
    "s_": lambda m: np.arange(10)[m.s_[2:8:2]],
    "vectorize": lambda m: m.vectorize(lambda a, b: a * 2 + b)(m.ones((2, 3)), m.arange(3.)),
    "vectorize_sig": lambda m: m.vectorize(lambda a, v: a @ v, signature="(m,n),(n)->(m)")(
        m.ones((2, 1, 3, 4)), m.arange(20.).reshape(5, 4)),
    "vectorize_excluded": lambda m: m.vectorize(lambda a, p: a ** p, excluded={1})(
        m.arange(4.), 3),
    "piecewise": lambda m: m.piecewise(m.asarray(X), [X < 0, X >= 1],
                                       [lambda v: -v, lambda v: v ** 2]),
    "piecewise_default": lambda m: m.piecewise(m.asarray(X), [X < -1, X > 1],
                                               [-1, 1, lambda v: v / 2]),
    "fromfunction": lambda m: m.fromfunction(lambda i, j: i * 10 + j, (3, 4)),
}


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
def test_numpy_names_match_jax(name):
    expected = NUMPY_CASES[name](jnp)
    got = NUMPY_CASES[name](fnp)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-6)


def test_vectorize_checks_core_dimensions_and_composes():
    add = fnp.vectorize(lambda a, b: a + b, signature="(n),(n)->(n)")
    with pytest.raises(ValueError, match="inconsistent size"):
        add(fnp.ones(3), fnp.ones(4))
    f = lambda x: fnp.sum(fnp.piecewise(x, [x < 0], [lambda v: v ** 2, lambda v: 3 * v]))  # noqa
    g = lambda x: jnp.sum(jnp.piecewise(x, [x < 0], [lambda v: v ** 2, lambda v: 3 * v]))  # noqa
    close(jax.grad(g)(jnp.asarray(X)), fg.jit(fg.grad(f))(X))


# --- dtypes ---

def test_dtypes_api_names_match_jax():
    public = {n for n in dir(jax.dtypes) if not n.startswith("_")}
    assert public <= set(dir(fg.dtypes)), public - set(dir(fg.dtypes))
    assert fg.dtypes.result_type(1.0, return_weak_type_flag=True) == \
        jax.dtypes.result_type(1.0, return_weak_type_flag=True)
    assert fg.dtypes.result_type(fnp.ones(2, fnp.float16), 2.0, np.int32) == \
        jax.dtypes.result_type(jnp.ones(2, jnp.float16), 2.0, np.int32)
    assert fg.dtypes.canonicalize_dtype(np.float64) == jax.dtypes.canonicalize_dtype(np.float64)
    for a, b in [(fnp.bfloat16, np.floating), (fnp.int4, np.signedinteger),
                 (fnp.uint4, np.signedinteger), (fnp.float8_e5m2, np.inexact),
                 (np.float32, fnp.bfloat16), (np.int32, np.floating)]:
        assert fg.dtypes.issubdtype(a, b) == jax.dtypes.issubdtype(a, b), (a, b)
    assert fg.dtypes.itemsize_bits(fnp.int4) == 4 and fg.dtypes.scalar_type_of(fnp.ones(2)) is float
    assert fg.dtypes.issubdtype(fg.dtypes.prng_key, fg.dtypes.extended)


NARROW = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz", "float8_e4m3fnuz",
          "float8_e5m2fnuz", "float8_e3m4", "float8_e4m3", "int4", "uint4"]


@pytest.mark.parametrize("name", NARROW)
def test_narrow_dtypes_create_convert_and_jit(name):
    jt, ft = getattr(jnp, name), getattr(fnp, name)
    values = [1, 2, 4, 3]
    for make in (lambda m, t: m.array(values, t) + 1,
                 lambda m, t: m.array(values, t) * m.array(values, t),
                 lambda m, t: (fg.jit if m is fnp else jax.jit)(lambda v: v * 2 + 1)(
                     m.array(values, t)),
                 lambda m, t: m.array(values, t).astype(m.float32),
                 lambda m, t: (fg.jit if m is fnp else jax.jit)(lambda v: v.astype(t))(
                     m.array([0.1, 7.7, -2.2], m.float32))):
        expected, got = make(jnp, jt), make(fnp, ft)
        assert np.asarray(got).dtype == np.asarray(expected).dtype
        np.testing.assert_array_equal(np.asarray(got).astype(np.float32),
                                      np.asarray(expected).astype(np.float32))
    with pytest.raises(fg.dtypes.TypePromotionError):
        fnp.array(values, ft) + fnp.ones(4, fnp.float16)


# --- ravel_pytree ---

def test_ravel_pytree_matches_jax():
    tree = {"w": np.arange(6.0, dtype=np.float32).reshape(2, 3), "b": np.int32(3),
            "h": (np.ones(2, np.float16),)}
    jflat, junravel = jax.flatten_util.ravel_pytree(tree)
    fflat, funravel = funcgraph.flatten_util.ravel_pytree(tree)
    assert fflat.dtype == jflat.dtype and fflat.shape == jflat.shape
    close(jflat, fflat)
    back = funravel(fflat * 2)
    assert back["b"].dtype == np.int32 and back["h"][0].dtype == np.float16
    close(junravel(jflat * 2), back)
    with pytest.raises(ValueError, match="shape"):
        funravel(fnp.ones(3))
    flat, unravel = fg.jit(lambda t: funcgraph.flatten_util.ravel_pytree(t)[0])(tree), None
    close(jflat, flat)


# --- optimizers and stax ---

OPTIMIZERS = {
    "sgd": lambda o: o.sgd(0.1),
    "momentum": lambda o: o.momentum(0.1, 0.9),
    "nesterov": lambda o: o.nesterov(0.1, 0.9),
    "adagrad": lambda o: o.adagrad(0.1),
    "rmsprop": lambda o: o.rmsprop(0.01),
    "rmsprop_momentum": lambda o: o.rmsprop_momentum(0.01),
    "adam": lambda o: o.adam(o.exponential_decay(0.01, 10, 0.5)),
    "adamax": lambda o: o.adamax(o.polynomial_decay(0.01, 5, 0.001)),
}


def _mlp(stax):
    return stax.serial(stax.Dense(8), stax.Relu, stax.Dense(3), stax.LogSoftmax)


def _cnn(stax):
    return stax.serial(stax.Conv(4, (3, 3), padding="SAME"), stax.BatchNorm(), stax.Relu,
                       stax.MaxPool((2, 2), strides=(2, 2)), stax.AvgPool((2, 2)),
                       stax.Flatten, stax.Dense(3), stax.LogSoftmax)


def _train(lib, stax, opt, make_net, inputs, labels, params, steps=3):
    numpy = jnp if lib is jax else fnp
    _, apply_fun = make_net(stax)
    opt_init, opt_update, get_params = opt

    def loss(p):
        return -numpy.mean(numpy.sum(apply_fun(p, inputs) * labels, axis=-1))

    @lib.jit
    def step(i, state):
        value, grads = lib.value_and_grad(loss)(get_params(state))
        return value, opt_update(i, grads, state)
    state, losses = opt_init(params), []
    for i in range(steps):
        value, state = step(i, state)
        losses.append(float(value))
    return losses, get_params(state)


def _data(shape):
    rng = np.random.RandomState(0)
    inputs = rng.randn(*shape).astype(np.float32)
    labels = np.eye(3, dtype=np.float32)[rng.randint(0, 3, shape[0])]
    return inputs, labels


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizers_train_an_mlp_like_jax(name):
    inputs, labels = _data((6, 5))
    out_shape, jparams = _mlp(jstax)[0](jax.random.PRNGKey(0), (-1, 5))
    f_shape, fparams = _mlp(fstax)[0](fg.random.PRNGKey(0), (-1, 5))
    assert out_shape == f_shape == (-1, 3)
    close(jparams, fparams)  # same initializers and keys, same numbers
    params = jax.tree.map(np.asarray, jparams)
    jlosses, jfinal = _train(jax, jstax, OPTIMIZERS[name](jopt), _mlp, inputs, labels, params)
    flosses, ffinal = _train(fg, fstax, OPTIMIZERS[name](fopt), _mlp, inputs, labels, params)
    np.testing.assert_allclose(flosses, jlosses, rtol=1e-5)
    assert flosses[-1] < flosses[0]
    close(jfinal, ffinal, rtol=1e-4, atol=1e-5)


def test_stax_cnn_trains_like_jax():
    inputs, labels = _data((4, 8, 8, 2))
    out_shape, jparams = _cnn(jstax)[0](jax.random.PRNGKey(1), (4, 8, 8, 2))
    f_shape, fparams = _cnn(fstax)[0](fg.random.PRNGKey(1), (4, 8, 8, 2))
    assert tuple(f_shape) == tuple(out_shape)
    assert [np.shape(x) for x in jax.tree.leaves(jparams)] == \
        [np.shape(x) for x in fg.tree.leaves(fparams)]
    params = jax.tree.map(np.asarray, jparams)
    jlosses, _ = _train(jax, jstax, jopt.momentum(0.05, 0.9), _cnn, inputs, labels, params)
    flosses, _ = _train(fg, fstax, fopt.momentum(0.05, 0.9), _cnn, inputs, labels, params)
    np.testing.assert_allclose(flosses, jlosses, rtol=1e-4)


def test_stax_combinators_and_optimizer_state():
    net = fstax.serial(fstax.FanOut(2), fstax.parallel(fstax.Dense(4), fstax.Identity),
                       fstax.FanInConcat(), fstax.Dropout(0.5, mode="test"), fstax.Tanh)
    shape, params = net[0](fg.random.PRNGKey(0), (2, 3))
    assert shape == (2, 7)
    assert net[1](params, fnp.ones((2, 3)), rng=fg.random.PRNGKey(1)).shape == (2, 7)
    state = fopt.adam(0.1)[0]({"w": fnp.ones(2)})
    assert isinstance(state, fopt.OptimizerState)
    assert len(fg.tree.leaves(state)) == 3
    clipped = fopt.clip_grads({"a": fnp.full(4, 3.0)}, 1.0)
    close(jopt.clip_grads({"a": jnp.full(4, 3.0)}, 1.0), clipped)
