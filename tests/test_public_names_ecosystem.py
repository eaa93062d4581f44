"""Public jax names the JAX libraries use, compared with the real jax: jax.scipy.fft
(dct/idct/dctn/idctn), jax.scipy.optimize.minimize (BFGS), jax.experimental.sparse (BCOO),
jax.nn.initializers.Initializer, the config option jax_platform_name, Lowered's HLO
dialect, and the numpy/lax/nn behaviours optax relies on (scalar types called on traced
values, *_like of shape-dtype structs, round(), softmax where=, cond operand=)."""
import pickle
import subprocess
import sys
import textwrap

import jax
import jax.experimental.sparse
import jax.numpy as jnp
import jax.scipy.fft
import jax.scipy.optimize
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph.experimental import sparse
from funcgraph.scipy import fft as fg_fft, optimize as fg_optimize

RNG = np.random.RandomState(0)
X = RNG.randn(3, 5).astype(np.float32)
XC = (RNG.randn(4, 6) + 1j * RNG.randn(4, 6)).astype(np.complex64)


def close(ours, theirs, rtol=1e-5, atol=1e-5):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, (ours, theirs)
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)


@pytest.mark.parametrize("norm", [None, "ortho"])
@pytest.mark.parametrize("n", [None, 3, 8])
@pytest.mark.parametrize("axis", [-1, 0])
def test_dct_and_idct_match_jax(norm, n, axis):
    for name in ("dct", "idct"):
        ours = getattr(fg_fft, name)(X, n=n, axis=axis, norm=norm)
        theirs = getattr(jax.scipy.fft, name)(X, n=n, axis=axis, norm=norm)
        close(ours, theirs)


@pytest.mark.parametrize("norm", [None, "ortho"])
@pytest.mark.parametrize("kwargs", [{}, {"s": (4, 2)}, {"axes": (0,)}, {"axes": (1, 0)}])
def test_dctn_and_idctn_match_jax(norm, kwargs):
    for name in ("dctn", "idctn"):
        for x in (X, XC, np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)):
            if x.ndim == 3 and "s" in kwargs:
                continue
            ours = getattr(fg_fft, name)(x, norm=norm, **kwargs)
            theirs = getattr(jax.scipy.fft, name)(x, norm=norm, **kwargs)
            close(ours, theirs, rtol=1e-4, atol=1e-4)


def test_dct_inverts_and_differentiates_under_jit():
    x = fnp.asarray(X)
    close(fg.jit(lambda a: fg_fft.idct(fg_fft.dct(a)))(x), X)
    close(fg.grad(lambda a: fg_fft.dct(a, norm="ortho")[1].sum())(x),
          jax.grad(lambda a: jax.scipy.fft.dct(a, norm="ortho")[1].sum())(X))
    close(fg_fft.dct(np.arange(7)), jax.scipy.fft.dct(np.arange(7)))
    with pytest.raises(NotImplementedError, match="Only DCT type 2"):
        fg_fft.dct(x, type=1)
    with pytest.raises(ValueError, match="is not implemented"):
        fg_fft.idct(x, norm="forward")


def _rosen(np_module):
    return lambda x: np_module.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0
                                   + (1 - x[:-1]) ** 2.0)


def _himmelblau(p):
    x, y = p[0], p[1]
    return (x ** 2 + y - 11) ** 2 + (x + y ** 2 - 7) ** 2


def _same_results(ours, theirs, rtol=1e-4, atol=1e-5):
    assert isinstance(ours, fg_optimize.OptimizeResults)
    assert ours._fields == theirs._fields
    for field in ("x", "fun", "success", "status", "nfev", "njev", "nit"):
        close(getattr(ours, field), getattr(theirs, field), rtol, atol)


def test_minimize_bfgs_matches_jax():
    x0 = np.array([-1.2, 1.0, 0.5], np.float32)
    _same_results(fg_optimize.minimize(_rosen(fnp), x0, method="BFGS"),
                  jax.scipy.optimize.minimize(_rosen(jnp), x0, method="BFGS"))
    _same_results(fg_optimize.minimize(_rosen(fnp), x0, method="BFGS",
                                       options=dict(maxiter=5)),
                  jax.scipy.optimize.minimize(_rosen(jnp), x0, method="BFGS",
                                              options=dict(maxiter=5)))
    a = np.array([1.0, 2.0, 3.0], np.float32)
    quad = lambda m: lambda x, a: m.sum((x - a) ** 2) + 0.1 * m.sum(x ** 4)  # noqa: E731
    _same_results(fg_optimize.minimize(quad(fnp), np.ones(3, np.float32), (a,), method="bfgs"),
                  jax.scipy.optimize.minimize(quad(jnp), np.ones(3, np.float32), (a,),
                                              method="bfgs"))


def test_minimize_under_jit_and_vmap():
    starts = np.array([[0.5, 0.5], [-2.0, 3.0], [1.0, -4.0]], np.float32)
    ours = fg.jit(fg.vmap(lambda x0: fg_optimize.minimize(_himmelblau, x0, method="BFGS")))(
        starts)
    theirs = jax.jit(jax.vmap(lambda x0: jax.scipy.optimize.minimize(
        _himmelblau, x0, method="BFGS")))(starts)
    _same_results(ours, theirs)
    with pytest.raises(ValueError, match="not recognized"):
        fg_optimize.minimize(_himmelblau, starts[0], method="nelder-mead")
    with pytest.raises(TypeError, match="must be a tuple"):
        fg_optimize.minimize(_himmelblau, starts[0], args=[1], method="BFGS")


DENSE = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]], np.float32)


def test_bcoo_fromdense_todense_match_jax():
    ours, theirs = sparse.BCOO.fromdense(DENSE), jax.experimental.sparse.BCOO.fromdense(DENSE)
    close(ours.data, theirs.data)
    close(ours.indices, theirs.indices)
    assert (ours.nse, ours.n_batch, ours.n_sparse, ours.n_dense, ours.shape) == \
        (theirs.nse, theirs.n_batch, theirs.n_sparse, theirs.n_dense, theirs.shape)
    assert repr(ours) == repr(theirs) and repr(ours.T) == repr(theirs.T)
    padded, jpadded = (sparse.BCOO.fromdense(DENSE, nse=5),
                       jax.experimental.sparse.BCOO.fromdense(DENSE, nse=5))
    close(padded.indices, jpadded.indices)
    close(padded.data, jpadded.data)
    close(padded.todense(), DENSE)
    close(padded.T.todense(), DENSE.T)
    rows = np.array([[0, 0], [1, 2], [0, 3]], np.float32)
    ours_nd = sparse.BCOO.fromdense(rows, n_dense=1)
    theirs_nd = jax.experimental.sparse.BCOO.fromdense(rows, n_dense=1)
    close(ours_nd.data, theirs_nd.data)
    close(ours_nd.indices, theirs_nd.indices)
    close(sparse.todense(ours_nd), rows)
    dup = sparse.BCOO((np.array([1.0, 2.0], np.float32), np.array([[0, 1], [0, 1]])),
                      shape=(2, 3))
    close(dup.todense(), np.array([[0, 3, 0], [0, 0, 0]], np.float32))


def test_bcoo_products_match_jax():
    m, jm = sparse.BCOO.fromdense(DENSE, nse=4), jax.experimental.sparse.BCOO.fromdense(
        DENSE, nse=4)
    mat = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    close(m @ np.ones(3, np.float32), jm @ np.ones(3, np.float32))
    close(fnp.ones(2) @ m, jnp.ones(2) @ jm)
    close(m @ mat, jm @ mat)
    close(fnp.asarray(mat.T[:, :2]) @ m, jnp.asarray(mat.T[:, :2]) @ jm)
    numbers = (((1,), (1,)), ((), ()))
    close(sparse.bcoo_dot_general(m, mat.T, dimension_numbers=numbers),
          jax.experimental.sparse.bcoo_dot_general(jm, mat.T, dimension_numbers=numbers))
    full = (((0, 1), (0, 1)), ((), ()))
    close(sparse.bcoo_dot_general(m, DENSE, dimension_numbers=full),
          jax.experimental.sparse.bcoo_dot_general(jm, DENSE, dimension_numbers=full))
    close((m * 2).todense(), (jm * 2).todense())


def test_bcoo_is_a_pytree_under_transformations():
    m = sparse.BCOO.fromdense(DENSE)
    assert len(fg.tree_util.tree_leaves(m)) == 2
    close(fg.jit(lambda m, v: m @ v)(m, fnp.ones(3)), DENSE @ np.ones(3, np.float32))
    grad = fg.grad(lambda d: (sparse.BCOO((d, m.indices), shape=m.shape)
                              @ fnp.arange(3.0)).sum())(m.data)
    close(grad, np.array([1.0, 0.0, 2.0], np.float32))
    close(fg.vmap(lambda v: m @ v)(fnp.ones((4, 3))), np.ones((4, 3), np.float32) @ DENSE.T)
    close(fg.jit(lambda a: sparse.BCOO.fromdense(a, nse=4).todense())(DENSE), DENSE)
    with pytest.raises(NotImplementedError, match="batch dimensions"):
        sparse.BCOO.fromdense(DENSE, n_batch=1)


def test_initializer_protocol_and_out_sharding():
    from funcgraph.nn import initializers
    assert isinstance(initializers.glorot_uniform(), initializers.Initializer)
    assert isinstance(initializers.zeros, initializers.Initializer)
    key = fg.random.PRNGKey(0)
    ours = initializers.normal(1.0)(key, (2, 3), out_sharding=None)
    close(ours, jax.nn.initializers.normal(1.0)(jax.random.PRNGKey(0), (2, 3)))


def test_config_platform_name():
    assert fg.config.jax_platform_name == jax.config.read("jax_platform_name")
    saved = fg.config.jax_platform_name
    try:
        fg.config.update("jax_platform_name", "cpu")
        assert fg.default_backend() == "cpu"
    finally:
        fg.config.update("jax_platform_name", saved)


def test_hlo_dialect():
    lowered = fg.jit(lambda x: fnp.sin(x) * 2).lower(fnp.ones(3))
    text = lowered.compiler_ir("hlo").as_hlo_text()
    assert "ENTRY" in text and "sine" in text
    assert lowered.as_text("hlo") == text


def test_scalar_types_are_jax_like():
    traced = fg.make_jaxpr(lambda x: fnp.bool_(x - 1))(fnp.ones(2))
    assert "bool" in str(traced)
    assert isinstance(fnp.float32(2), fg.Array) and fnp.float32(2).dtype == np.float32
    assert fnp.float32 == np.float32 and hash(fnp.float32) == hash(np.float32)
    assert np.dtype(fnp.bfloat16) == jnp.dtype(jnp.bfloat16)
    assert isinstance(np.float32(1), fnp.float32) and not isinstance(1.0, fnp.float32)
    assert fnp.issubdtype(fnp.float32, fnp.floating) and fnp.bool is fnp.bool_


def test_like_functions_take_shape_dtype_structs_and_keep_weak_types():
    spec = fg.ShapeDtypeStruct((2, 3), jnp.bfloat16)
    for name in ("zeros_like", "ones_like", "empty_like"):
        ours, theirs = getattr(fnp, name)(spec), getattr(jnp, name)(spec)
        assert (ours.shape, ours.dtype) == (theirs.shape, theirs.dtype)
    assert str(fg.typeof(fnp.zeros_like(fnp.asarray(1.0)))) == \
        str(jax.typeof(jnp.zeros_like(jnp.asarray(1.0))))
    assert fnp.full_like(spec, 3, shape=(4,)).shape == (4,)


def test_operators_defer_to_unknown_operand_types():
    class Other:
        def __radd__(self, other):
            return "radd"

        def __rmatmul__(self, other):
            return "rmatmul"

    assert fnp.ones(2) + Other() == "radd" and fnp.ones(2) @ Other() == "rmatmul"
    seen = []

    def f(x):
        seen.append(x.copy() + Other())
        return x
    fg.jit(f)(fnp.ones(2))
    assert seen == ["radd"]


def test_round_cond_operand_softmax_where_broadcast_error():
    assert int(round(fnp.array(2.5))) == round(jnp.array(2.5))
    assert round(fnp.array(2.5)).dtype == round(jnp.array(2.5)).dtype
    close(round(fnp.array(2.567), 1), round(jnp.array(2.567), 1))
    assert fg.lax.cond(True, lambda x: x + 1, lambda x: x, operand=1.0) == 2.0
    x = np.array([[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 0.0]], np.float32)
    where = np.array([[True, False, True, True], [False, True, True, False]])
    for name in ("softmax", "log_softmax"):
        close(getattr(fg.nn, name)(x, where=where), getattr(jax.nn, name)(x, where=where))
    close(fg.grad(lambda x: (fg.nn.softmax(x, where=where) * fnp.arange(4.0)).sum())(x),
          jax.grad(lambda x: (jax.nn.softmax(x, where=where) * jnp.arange(4.0)).sum())(x))
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: shapes="
                                         r"\[\(2,\), \(3,\)\]"):
        fg.lax.broadcast_shapes((2,), (3,))


def test_names_under_the_alias(tmp_path):
    """The same names, imported as jax's under `python -m funcgraph run`."""
    script = tmp_path / "names.py"
    script.write_text(textwrap.dedent("""
        import pickle, sys
        import jax, jax.numpy as jnp
        from jax.experimental import sparse
        from jax.scipy import fft, optimize
        from jax.nn.initializers import Initializer
        m = sparse.BCOO.fromdense(jnp.eye(3))
        out = dict(module=jax.scipy.fft.__name__, dct=fft.dct(jnp.arange(4.0)).tolist(),
                   bcoo=(m @ jnp.arange(3.0)).tolist(),
                   opt=float(optimize.minimize(lambda x: jnp.sum((x - 1) ** 2), jnp.zeros(2),
                                               method="BFGS").fun),
                   proto=isinstance(jax.nn.initializers.zeros, Initializer),
                   platform=jax.config.read("jax_platform_name"))
        pickle.dump(out, open(sys.argv[1], "wb"))
    """))
    results = {}
    for runner in (["-m", "funcgraph", "run"], []):
        out = tmp_path / f"out{len(runner)}.pkl"
        done = subprocess.run([sys.executable, *runner, str(script), str(out)],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        results[bool(runner)] = pickle.load(open(out, "rb"))
    ours, theirs = results[True], results[False]
    assert ours["module"] in ("jax.scipy.fft", "funcgraph.scipy.fft")
    np.testing.assert_allclose(ours["dct"], theirs["dct"], rtol=1e-5, atol=1e-5)
    assert ours["bcoo"] == theirs["bcoo"] and ours["proto"] == theirs["proto"]
    assert abs(ours["opt"] - theirs["opt"]) < 1e-6
    assert ours["platform"] == theirs["platform"]
