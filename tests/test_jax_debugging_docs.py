"""The runnable examples of JAX's debugging documentation, run with jax and with funcgraph
(imports changed) side by side: what they print, what they return and what they raise
must agree.  The pages: docs/debugging/print_breakpoint.md (debug.print, debug.callback,
debug.breakpoint), docs/debugging/flags.md (jax_debug_nans, jax_disable_jit),
docs/external-callbacks.md (pure_callback, io_callback, debug.callback, pure_callback
under custom_jvp) and docs/gradient-checkpointing.md (print_saved_residuals,
checkpoint_name, policies, recursive checkpointing, checkpointed scan bodies).

Each example is written once against a namespace `L` holding either library: L.jax (jax
or funcgraph), L.jnp, L.lax, L.io_callback, L.checkpoint_name, L.print_saved_residuals.
Known differences, normalized here: jax's source locations carry a column
(`file.py:12:8`) and the function's qualified name (`outer.<locals>.g`), funcgraph's the
line and the function's name; a traced value's repr differs."""
import functools
import io
import re
import sys
import traceback
import types

import jax
import jax.ad_checkpoint
import jax.experimental
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import ad_checkpoint as fg_ad_checkpoint
from tests.util import assert_float32_on_cpu_exact

JAX = types.SimpleNamespace(
    name="jax", jax=jax, jnp=jnp, lax=jax.lax, io_callback=jax.experimental.io_callback,
    checkpoint_name=jax.ad_checkpoint.checkpoint_name,
    print_saved_residuals=jax.ad_checkpoint.print_saved_residuals)
FG = types.SimpleNamespace(
    name="funcgraph", jax=fg, jnp=fnp, lax=fg.lax, io_callback=fg.experimental.io_callback,
    checkpoint_name=fg_ad_checkpoint.checkpoint_name,
    print_saved_residuals=fg_ad_checkpoint.print_saved_residuals)

_COLUMN = re.compile(r"(\.py:\d+):\d+")
_QUALIFIER = re.compile(r"\((?:[\w<>]+\.<locals>\.)+([\w<>]+)\)")


def normalized(out):
    """Source locations as funcgraph writes them: no column, the bare function name."""
    return _QUALIFIER.sub(r"(\1)", _COLUMN.sub(r"\1", out))


def run_example(example, L, capsys):
    """(stdout, result leaves as NumPy arrays, or (error type, message)) of example(L)."""
    capsys.readouterr()
    try:
        result = example(L)
        L.jax.effects_barrier()
        result = [np.asarray(r) for r in L.jax.tree_util.tree_leaves(result)]
    except Exception as e:  # compared with the other library's error
        L.jax.effects_barrier()
        result = (type(e).__name__, str(e).split("\n")[0])
    return normalized(capsys.readouterr().out), result


def assert_same_run(example, capsys, *, messages=True, sort_lines=False):
    out_jax, res_jax = run_example(example, JAX, capsys)
    out_fg, res_fg = run_example(example, FG, capsys)
    if sort_lines:  # prints with no order between them (unordered effects)
        out_jax, out_fg = sorted(out_jax.splitlines()), sorted(out_fg.splitlines())
    assert out_fg == out_jax
    if type(res_jax) is tuple:
        assert type(res_fg) is tuple, f"jax raised {res_jax}, funcgraph returned {res_fg}"
        assert res_fg[0] == res_jax[0]
        if messages:
            assert res_fg[1] == res_jax[1]
        return out_fg, res_fg
    assert type(res_fg) is list, f"funcgraph raised {res_fg}"
    for a, b in zip(res_jax, res_fg, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    return out_fg, res_fg


# --- print_breakpoint.md: debug.print and debug.callback -----------------------------------

def tldr_print(L):
    @L.jax.jit
    def f(x):
        L.jax.debug.print("🤯 {x} 🤯", x=x)
        y = L.jnp.sin(x)
        L.jax.debug.print("🤯 {y} 🤯", y=y)
        return y
    return f(2.)


def vmap_versus_lax_map(L):
    xs = L.jnp.arange(3.)

    def f(x):
        L.jax.debug.print("x: {}", x)
        y = L.jnp.sin(x)
        L.jax.debug.print("y: {}", y)
        return y
    return L.jax.vmap(f)(xs), L.jax.lax.map(f, xs)


def print_under_grad(L):
    def f(x):
        L.jax.debug.print("x: {}", x)
        return x * 2.
    return L.jax.grad(f)(1.)


def print_backward_with_custom_vjp(L):
    @L.jax.custom_vjp
    def print_grad(x):
        return x

    def print_grad_fwd(x):
        return x, None

    def print_grad_bwd(_, x_grad):
        L.jax.debug.print("x_grad: {}", x_grad)
        return (x_grad,)

    print_grad.defvjp(print_grad_fwd, print_grad_bwd)

    def f(x):
        x = print_grad(x)
        return x * 2.
    return L.jax.grad(f)(1.)


def unordered_prints(L):
    @L.jax.jit
    def f(x, y):
        L.jax.debug.print("x: {}", x)
        L.jax.debug.print("y: {}", y)
        return x + y
    return f(2., 3.)


def ordered_prints(L):
    @L.jax.jit
    def f(x, y):
        L.jax.debug.print("x: {}", x, ordered=True)
        L.jax.debug.print("y: {}", y, ordered=True)
        return x + y
    return f(2., 3.)


def effects_barrier_waits(L):
    @L.jax.jit
    def f(x):
        L.jax.debug.print("x: {}", x)
        return x
    out = f(2.).block_until_ready()
    L.jax.effects_barrier()
    print("<do something else>")
    return out


def materialized_logits(L):
    def f(w, b, x):
        logits = w.dot(x) + b
        L.jax.debug.print("logits: {}", logits)
        return L.jax.nn.relu(logits)
    w = L.jnp.array([[1., -2.], [0.5, 0.25]])
    return L.jax.jit(f)(w, L.jnp.array([0.1, -3.]), L.jnp.array([1., 2.]))


PRINT_EXAMPLES = {
    "tldr_print": tldr_print,
    "vmap_versus_lax_map": vmap_versus_lax_map,
    "print_under_grad": print_under_grad,
    "print_backward_with_custom_vjp": print_backward_with_custom_vjp,
    "ordered_prints": ordered_prints,
    "effects_barrier_waits": effects_barrier_waits,
    "materialized_logits": materialized_logits,
}


@pytest.mark.parametrize("name", sorted(PRINT_EXAMPLES))
def test_print_breakpoint_page(name, capsys):
    out, _ = assert_same_run(PRINT_EXAMPLES[name], capsys)
    assert out


def test_print_breakpoint_page_unordered_prints(capsys):
    out, _ = assert_same_run(unordered_prints, capsys, sort_lines=True)
    assert out == ["x: 2.0", "y: 3.0"]


def test_vmap_and_lax_map_print_in_different_orders(capsys):
    """vmap prints every x before any y; lax.map prints each element's x and y together
    (in either order: they are unordered effects of one iteration)."""
    out, _ = run_example(vmap_versus_lax_map, FG, capsys)
    kinds = [line[0] for line in out.splitlines()]
    assert kinds[:6] == list("xxxyyy")
    assert [sorted(kinds[i:i + 2]) for i in range(6, 12, 2)] == [["x", "y"]] * 3


# --- print_breakpoint.md: debug.breakpoint ---------------------------------------------------

def breakpoint_if_nonfinite_program(L):
    def breakpoint_if_nonfinite(x):
        is_finite = L.jnp.isfinite(x).all()

        def true_fn(x):
            pass

        def false_fn(x):
            L.jax.debug.breakpoint()
        L.lax.cond(is_finite, true_fn, false_fn, x)

    @L.jax.jit
    def f(x, y):
        z = x / y
        breakpoint_if_nonfinite(z)
        return z
    return f


@pytest.mark.parametrize("L", [JAX, FG], ids=lambda L: L.name)
def test_breakpoint_if_nonfinite_pauses_only_on_nonfinite(L, monkeypatch, capsys):
    """The debugger opens (reading its commands from stdin) inside the false branch of
    the cond, where `x` is the concrete non-finite value, and only there."""
    f = breakpoint_if_nonfinite_program(L)
    monkeypatch.setattr(sys, "stdin", io.StringIO("p x\nc\n"))
    assert float(f(2., 1.)) == 2.
    L.jax.effects_barrier()
    assert "inf" not in capsys.readouterr().out
    assert float(f(2., 0.)) == np.inf
    L.jax.effects_barrier()
    assert re.search(r"Array\(inf, dtype=float32", capsys.readouterr().out)


@pytest.mark.parametrize("L", [JAX, FG], ids=lambda L: L.name)
def test_breakpoint_sees_values_in_the_calling_function(L, monkeypatch, capsys):
    @L.jax.jit
    def f(x):
        y, z = L.jnp.sin(x), L.jnp.cos(x)
        L.jax.debug.breakpoint()
        return y * z
    monkeypatch.setattr(sys, "stdin", io.StringIO("p y\np z\nc\n"))
    np.testing.assert_allclose(float(f(2.)), np.sin(2.) * np.cos(2.), rtol=1e-6)
    L.jax.effects_barrier()
    out = capsys.readouterr().out
    y, z = re.findall(r"Array\((\S+), dtype=float32", out)
    assert_float32_on_cpu_exact(y, "0.9092974")  # XLA's sin(2) and cos(2)
    assert_float32_on_cpu_exact(z, "-0.41614684")


# --- flags.md: jax_debug_nans and jax_disable_jit -------------------------------------------

def nan_function(L):
    def f(x):
        w = 3 * L.jnp.square(x)
        return L.jnp.log(-w)
    return f


@pytest.fixture
def debug_nans_on():
    # jax's eager ops may reuse executables cached by earlier tests in this process,
    # before the flag was set, which then do not check for NaNs
    jax.clear_caches()
    jax.config.update("jax_debug_nans", True)
    fg.config.update("jax_debug_nans", True)
    yield
    jax.config.update("jax_debug_nans", False)
    fg.config.update("jax_debug_nans", False)


def test_flags_page_debug_nans_eager(debug_nans_on, capsys):
    """The last line of the traceback names the primitive (jax's eager ops are jitted,
    so jax also says it re-runs them de-optimized; funcgraph's eager ops are not)."""
    def example(L):
        try:
            nan_function(L)(5.)
        except FloatingPointError:
            print(traceback.format_exc(limit=2))
    for L in (JAX, FG):
        out, _ = run_example(example, L, capsys)
        assert "FloatingPointError: invalid value (nan) encountered in log" in out


def test_flags_page_debug_nans_under_jit(debug_nans_on, capsys):
    """Both say they re-run the function de-optimized (jax says it again for each eager
    op of the re-run, which are jitted in jax) and raise naming the primitive."""
    for L, jit_name in ((JAX, "jax.jit"), (FG, "funcgraph.jit")):
        out, result = run_example(lambda L: L.jax.jit(nan_function(L))(5.), L, capsys)
        assert out.splitlines()[0] == (f"Invalid nan value encountered in the output of a "
                                       f"{jit_name} function. Calling the de-optimized version.")
        assert result[0] == "FloatingPointError"
    for L in (JAX, FG):
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log"):
            L.jax.jit(nan_function(L))(5.)


def test_flags_page_debug_nans_context_manager(debug_nans_on, capsys):
    def example(L):
        with L.jax.debug_nans(False):
            print(L.jax.jit(nan_function(L))(5.))
    out, _ = assert_same_run(example, capsys)
    assert out == "nan\n"


def test_flags_page_disable_jit_runs_python_control_flow(capsys):
    """The page's example enters pdb where `jnp.isnan(y)` holds; here the branch prints."""
    def example(L):
        with L.jax.disable_jit():
            def f(x):
                y = L.jnp.log(x)
                if L.jnp.isnan(y):
                    print("would enter the PDB breakpoint")
                return y
            return L.jax.jit(f)(-2.)
    out, _ = assert_same_run(example, capsys)
    assert out == "would enter the PDB breakpoint\n"


# --- external-callbacks.md ----------------------------------------------------------------------

def python_print_under_jit(L):
    @L.jax.jit
    def f(x):
        y = x + 1
        print("intermediate value: {}".format(y))
        return y * 2
    return f(2)


def debug_print_under_jit(L):
    @L.jax.jit
    def f(x):
        y = x + 1
        L.jax.debug.print("intermediate value: {}", y)
        return y * 2
    return f(2)


def f_host(x):
    return np.sin(x).astype(x.dtype)


def host_sin(L):
    def f(x):
        result_shape = L.jax.ShapeDtypeStruct(x.shape, x.dtype)
        return L.jax.pure_callback(f_host, result_shape, x)
    return f


def host_sin_sequential(L):
    """As host_sin, with the vmap_method that jax 0.10 requires under vmap."""
    def f(x):
        result_shape = L.jax.ShapeDtypeStruct(x.shape, x.dtype)
        return L.jax.pure_callback(f_host, result_shape, x, vmap_method="sequential")
    return f


def print_something():
    print("printing something")
    return np.int32(0)


def used_and_unused_pure_callbacks(L):
    @L.jax.jit
    def f1():
        return L.jax.pure_callback(print_something, np.int32(0))

    @L.jax.jit
    def f2():
        L.jax.pure_callback(print_something, np.int32(0))
        return 1.0
    return f1(), f2()


def host_side_random_like_for(log):
    global_rng = np.random.default_rng(0)

    def host_side_random_like(x):
        log.append(f"generating {x.dtype}{list(x.shape)}")
        return global_rng.uniform(size=x.shape).astype(x.dtype)
    return host_side_random_like


def io_callback_random(L):
    log = []
    host = host_side_random_like_for(log)

    @L.jax.jit
    def numpy_random_like(x):
        return L.io_callback(host, x, x)
    x = L.jnp.zeros(5)
    first = numpy_random_like(x)
    mapped = L.jax.vmap(numpy_random_like)(x)
    L.jax.effects_barrier()
    return first, mapped, np.array(sorted(log) == sorted(["generating float32[5]"] +
                                                         ["generating float32[]"] * 5))


def io_callback_ordered_in_scan(L):
    log = []
    host = host_side_random_like_for(log)

    @L.jax.jit
    def numpy_random_like_ordered(x):
        return L.io_callback(host, x, x, ordered=True)

    def body_fun(_, x):
        return _, numpy_random_like_ordered(x)
    out = L.jax.lax.scan(body_fun, None, L.jnp.arange(5.0))[1]
    L.jax.effects_barrier()
    print("\n".join(log))
    return out


def io_callback_ordered_vmap(L):
    host = host_side_random_like_for([])

    @L.jax.jit
    def numpy_random_like_ordered(x):
        return L.io_callback(host, x, x, ordered=True)
    return L.jax.vmap(numpy_random_like_ordered)(L.jnp.zeros(5))


def io_callback_grad_of_dependent(L):
    host = host_side_random_like_for([])

    @L.jax.jit
    def numpy_random_like(x):
        return L.io_callback(host, x, x)
    return L.jax.grad(numpy_random_like)(1.0)


def io_callback_grad_of_independent(L):
    @L.jax.jit
    def f(x):
        L.io_callback(lambda: print("hello"), None)
        return x
    return L.jax.grad(f)(1.0)


def debug_callback_log_value(L):
    def log_value(x):
        print("log:", x)

    @L.jax.jit
    def f(x):
        L.jax.debug.callback(log_value, x)
        return x
    f(1.0)
    L.jax.vmap(f)(L.jnp.arange(5.0))
    return L.jax.grad(f)(1.0)


CALLBACK_EXAMPLES = {
    "debug_print_under_jit": debug_print_under_jit,
    "pure_callback_eager": lambda L: host_sin(L)(L.jnp.arange(5.0)),
    "pure_callback_jit": lambda L: L.jax.jit(host_sin(L))(L.jnp.arange(5.0)),
    "pure_callback_vmap_without_method": lambda L: L.jax.vmap(host_sin(L))(L.jnp.arange(5.0)),
    "pure_callback_vmap": lambda L: L.jax.vmap(host_sin_sequential(L))(L.jnp.arange(5.0)),
    "pure_callback_scan": lambda L: L.jax.lax.scan(
        lambda c, x: (c, host_sin(L)(x)), None, L.jnp.arange(5.0))[1],
    "pure_callback_grad": lambda L: L.jax.grad(lambda x: host_sin(L)(x).sum())(
        L.jnp.arange(5.0)),
    "pure_callback_grad_as_written": lambda L: L.jax.grad(host_sin(L))(L.jnp.arange(5.0)),
    "used_and_unused_pure_callbacks": used_and_unused_pure_callbacks,
    "io_callback_random": io_callback_random,
    "io_callback_ordered_in_scan": io_callback_ordered_in_scan,
    "io_callback_ordered_vmap": io_callback_ordered_vmap,
    "io_callback_grad_of_dependent": io_callback_grad_of_dependent,
    "io_callback_grad_of_independent": io_callback_grad_of_independent,
    "debug_callback_log_value": debug_callback_log_value,
}


@pytest.mark.parametrize("name", sorted(CALLBACK_EXAMPLES))
def test_external_callbacks_page(name, capsys):
    assert_same_run(CALLBACK_EXAMPLES[name], capsys)


def test_python_print_under_jit_shows_a_tracer_not_a_value(capsys):
    for L in (JAX, FG):
        out, result = run_example(python_print_under_jit, L, capsys)
        assert out.startswith("intermediate value: ") and out.count("\n") == 1
        assert "int32" in out or "i32" in out
        assert "3" not in out.replace("int32", "").replace("i32", "")
        assert [int(r) for r in result] == [6]


def bessel_jv(L):
    """The page's scipy.special.jv wrapper, with jax 0.10's vmap_method (the page's
    `vectorized=True` is gone from jax 0.10) and its custom_jvp rule."""
    special = pytest.importorskip("scipy.special")

    def jv(v, z):
        v, z = L.jnp.asarray(v), L.jnp.asarray(z)
        assert L.jnp.issubdtype(v.dtype, L.jnp.integer)
        z = z.astype(L.jnp.result_type(float, z.dtype))
        _scipy_jv = lambda v, z: special.jv(v, z).astype(z.dtype)
        result_shape_dtype = L.jax.ShapeDtypeStruct(
            shape=L.jnp.broadcast_shapes(v.shape, z.shape), dtype=z.dtype)
        return L.jax.pure_callback(_scipy_jv, result_shape_dtype, v, z,
                                   vmap_method="broadcast_all")
    return jv


def bessel_without_jvp(L):
    j1 = functools.partial(bessel_jv(L), 1)
    z = L.jnp.arange(5.0)
    print(j1(z))
    print(L.jax.jit(j1)(z))
    print(L.jax.vmap(j1)(z))
    return L.jax.grad(j1)(z)


def bessel_with_jvp(L):
    jv = L.jax.custom_jvp(bessel_jv(L))

    @jv.defjvp
    def _jv_jvp(primals, tangents):
        v, z = primals
        _, z_dot = tangents
        jv_minus_1, jv_plus_1 = jv(v - 1, z), jv(v + 1, z)
        djv_dz = L.jnp.where(v == 0, -jv_plus_1, 0.5 * (jv_minus_1 - jv_plus_1))
        return jv(v, z), z_dot * djv_dz
    j1 = functools.partial(jv, 1)
    print(L.jax.grad(j1)(2.0))
    return L.jax.hessian(j1)(2.0)


@pytest.mark.parametrize("example", [bessel_without_jvp, bessel_with_jvp],
                         ids=lambda f: f.__name__)
def test_external_callbacks_page_bessel(example, capsys):
    assert_same_run(example, capsys)


# --- gradient-checkpointing.md ------------------------------------------------------------------

def three_layers(L):
    def g(W, x):
        y = L.jnp.dot(W, x)
        return L.jnp.sin(y)

    def f(W1, W2, W3, x):
        x = g(W1, x)
        x = g(W2, x)
        x = g(W3, x)
        return x

    def f2(W1, W2, W3, x):
        x = L.jax.checkpoint(g)(W1, x)
        x = L.jax.checkpoint(g)(W2, x)
        x = L.jax.checkpoint(g)(W3, x)
        return x

    def f4(W1, W2, W3, x):
        x = L.checkpoint_name(g(W1, x), name='a')
        x = L.checkpoint_name(g(W2, x), name='b')
        x = L.checkpoint_name(g(W3, x), name='c')
        return x
    f3 = L.jax.checkpoint(f, policy=L.jax.checkpoint_policies.dots_with_no_batch_dims_saveable)
    f4 = L.jax.checkpoint(f4, policy=L.jax.checkpoint_policies.save_only_these_names('a'))
    args = (L.jnp.ones((5, 4)), L.jnp.ones((6, 5)), L.jnp.ones((7, 6)), L.jnp.ones(4))
    return dict(f=f, f2=f2, f3=f3, f4=f4), args


@pytest.mark.parametrize("which", ["f", "f2", "f3", "f4"])
def test_gradient_checkpointing_page_saved_residuals(which, capsys):
    def example(L):
        fns, args = three_layers(L)
        L.print_saved_residuals(fns[which], *args)
        return L.jax.jacrev(lambda *a: fns[which](*a).sum(), argnums=(0, 1, 2, 3))(*args)
    out, _ = assert_same_run(example, capsys)
    assert "from the argument W1" in out


def layered_loss(L, named):
    def loss(params, x, y):
        return L.jnp.sum((predict(params, x) - y) ** 2)

    def predict(params, x):
        *Ws, Wlast = params
        for i, W in enumerate(Ws):
            x = layer(W, x)
            if named:
                x = L.checkpoint_name(x, name=f'layer{i}_output')
        x = L.jnp.dot(Wlast, x)
        return x

    def layer(W, x):
        return L.jnp.sin(L.jnp.dot(W, x))
    return loss


LOSS_POLICIES = {
    "none": (False, None),
    "dots_with_no_batch_dims_saveable": (False, "dots_with_no_batch_dims_saveable"),
    "named_none": (True, None),
    "save_any_names_but_these": (True, "save_any_names_but_these"),
    "save_only_these_names": (True, "save_only_these_names"),
}


@pytest.mark.parametrize("name", sorted(LOSS_POLICIES))
def test_gradient_checkpointing_page_policies(name, capsys):
    named, policy_name = LOSS_POLICIES[name]

    def example(L):
        loss = layered_loss(L, named)
        policies = L.jax.checkpoint_policies
        if policy_name in ("save_any_names_but_these", "save_only_these_names"):
            loss = L.jax.checkpoint(loss, policy=getattr(policies, policy_name)('layer1_output'))
        elif policy_name is not None:
            loss = L.jax.checkpoint(loss, policy=getattr(policies, policy_name))
        W1 = W2 = W3 = L.jnp.ones((4, 4))
        params, x, y = [W1, W2, W3], L.jnp.ones(4), L.jnp.ones(4)
        L.print_saved_residuals(loss, params, x, y)
        return L.jax.grad(loss)(params, x, y)
    assert_same_run(example, capsys)


def chain_compose(funs):
    def f(x):
        for fun in funs:
            x = fun(x)
        return x
    return f


def recursive_checkpoint(L, funs):
    if len(funs) == 1:
        return funs[0]
    if len(funs) == 2:
        f1, f2 = funs
        return lambda x: f1(f2(x))
    f1 = recursive_checkpoint(L, funs[:len(funs) // 2])
    f2 = recursive_checkpoint(L, funs[len(funs) // 2:])
    return lambda x: f1(L.jax.checkpoint(f2)(x))


@pytest.mark.parametrize("depth", [8, 16])
@pytest.mark.parametrize("recursive", [False, True])
def test_gradient_checkpointing_page_recursive_checkpoint(depth, recursive, capsys):
    def example(L):
        funs = [L.jnp.sin] * depth
        f = recursive_checkpoint(L, funs) if recursive else chain_compose(funs)
        L.print_saved_residuals(f, 3.)
        return L.jax.grad(f)(3.), L.jax.jit(L.jax.grad(f))(3.)
    out, _ = assert_same_run(example, capsys)
    # chain_compose saves one cos per sin; recursive checkpointing about log2(depth)
    count = len(out.splitlines())
    assert count == depth if not recursive else count < depth // 2 + 2


def test_gradient_checkpointing_page_checkpoint_placement(capsys):
    """g then h, checkpointing g (the page's f_checkpoint), h, or the whole: the same
    gradients as without checkpoint."""
    def example(L):
        g = lambda x: L.jnp.sin(L.jnp.cos(x) * 2.)
        h = lambda y: L.jnp.tanh(y) ** 2
        variants = [lambda x: h(g(x)), lambda x: h(L.jax.checkpoint(g)(x)),
                    lambda x: L.jax.checkpoint(h)(g(x)), L.jax.checkpoint(lambda x: h(g(x)))]
        return [L.jax.grad(v)(0.3) for v in variants]
    _, results = assert_same_run(example, capsys)
    for r in results[1:]:
        np.testing.assert_allclose(r, results[0], rtol=1e-6)


def test_gradient_checkpointing_page_scan_over_layers(capsys):
    def example(L):
        params = [(L.jnp.array([[0.5, 0.5], [1., 1.]]), L.jnp.array([0.5, 0.5])),
                  (L.jnp.array([[0.5, 0.5], [1., 1.]]), L.jnp.array([0.5, 0.5]))]
        all_weights = L.jnp.stack([W for W, _ in params])
        all_biases = L.jnp.stack([b for _, b in params])

        @functools.partial(L.jax.checkpoint,
                           policy=L.jax.checkpoint_policies.dots_with_no_batch_dims_saveable)
        def layer(x, W_b_pair):
            W, b = W_b_pair
            out = L.jnp.maximum(L.jnp.dot(x, W) + b, 0.)
            return out, None

        def net(all_weights, all_biases, x):
            x, _ = L.jax.lax.scan(layer, x, (all_weights, all_biases))
            return x
        loss = lambda w, b, x: net(w, b, x).sum()
        x = L.jnp.array([1., -2.])
        L.print_saved_residuals(loss, all_weights, all_biases, x)
        return net(all_weights, all_biases, x), L.jax.jit(L.jax.grad(loss, argnums=(0, 1)))(
            all_weights, all_biases, x)
    assert_same_run(example, capsys)


def test_gradient_checkpointing_page_offload_policies(capsys):
    """The page's offload examples (offloading is approximated as saving in funcgraph; on
    one CPU device jax saves in place too): the same gradients either way."""
    def example(L):
        policy = L.jax.checkpoint_policies.offload_dot_with_no_batch_dims("device", "pinned_host")

        @functools.partial(L.jax.checkpoint, policy=policy)
        def f(x):
            for _ in range(3):
                x = L.jnp.einsum('ij,jk->ik', x, x, precision=L.lax.Precision.HIGHEST)
                x = L.jnp.sin(x)
            return L.jnp.sum(x)

        names = L.jax.checkpoint_policies.save_and_offload_only_these_names(
            names_which_can_be_saved=["y"], names_which_can_be_offloaded=["z"],
            offload_src='device', offload_dst='pinned_host')

        @functools.partial(L.jax.checkpoint, policy=names)
        def g(x):
            def body(ys, _):
                y, _ = ys
                y = L.checkpoint_name(L.jnp.sin(y), "y")
                z = L.checkpoint_name(L.jnp.sin(y), "z")
                z = z.T
                w = L.checkpoint_name(L.jnp.sin(z), "w")
                return (w.T, L.jnp.sum(w)), None
            _, scan_out = L.jax.lax.scan(body, (x, np.array(1, dtype=np.float32)), None,
                                         length=3)[0]
            return scan_out
        x = L.jnp.arange(16.0).reshape(4, 4) / 16.0
        return L.jax.grad(f)(x), L.jax.grad(g)(x)
    assert_same_run(example, capsys)
