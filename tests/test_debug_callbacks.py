"""Host callbacks against jax: debug.print / debug.callback / debug.breakpoint,
pure_callback, experimental.io_callback, and the effects they give jaxprs."""
import io
import pdb
import re

import jax
import jax.experimental
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import passes

FG = (fg, fnp, fg.lax, fg.experimental.io_callback)
JAX = (jax, jnp, jax.lax, jax.experimental.io_callback)


def captured(capsys, run, lib):
    """What run(lib...) writes to stdout once its callbacks have run, and its result."""
    capsys.readouterr()
    result = run(*lib)
    lib[0].effects_barrier()
    return capsys.readouterr().out, result


def printer(api):
    def f(x):
        api.debug.print("x={x} twice={}", x * 2, x=x)
        return x * 3.0
    return f


# Each program prints from inside one transformation (or a composition of them).
PROGRAMS = {
    "eager": lambda api, np_, lax, io_cb: printer(api)(np_.float32(1.5)),
    "jit": lambda api, np_, lax, io_cb: api.jit(printer(api))(np_.float32(1.5)),
    "vmap": lambda api, np_, lax, io_cb: api.vmap(printer(api))(np_.arange(3.0)),
    "jit_vmap": lambda api, np_, lax, io_cb: api.jit(api.vmap(printer(api)))(np_.arange(3.0)),
    "grad": lambda api, np_, lax, io_cb: api.grad(printer(api))(np_.float32(2.0)),
    "jit_grad": lambda api, np_, lax, io_cb: api.jit(api.grad(printer(api)))(np_.float32(2.0)),
    "jvp": lambda api, np_, lax, io_cb: api.jvp(printer(api), (np_.float32(2.0),),
                                                (np_.float32(1.0),)),
    "scan": lambda api, np_, lax, io_cb: lax.scan(
        lambda c, a: (printer(api)(c) + a, c), np_.float32(1.0), np_.arange(3.0)),
    "jit_scan": lambda api, np_, lax, io_cb: api.jit(lambda x: lax.scan(
        lambda c, a: (printer(api)(c) + a, c), x, np_.arange(3.0)))(np_.float32(1.0)),
    "while": lambda api, np_, lax, io_cb: lax.while_loop(
        lambda c: c < 20.0, printer(api), np_.float32(1.0)),
    "jit_while": lambda api, np_, lax, io_cb: api.jit(lambda x: lax.while_loop(
        lambda c: c < 20.0, printer(api), x))(np_.float32(1.0)),
    "cond": lambda api, np_, lax, io_cb: api.jit(lambda x: lax.cond(
        x > 0, printer(api), lambda y: -y, x))(np_.float32(2.0)),
    "grad_scan": lambda api, np_, lax, io_cb: api.grad(lambda x: lax.scan(
        lambda c, a: (printer(api)(c), a), x, np_.arange(3.0))[0])(np_.float32(1.0)),
    "jit_vmap_grad": lambda api, np_, lax, io_cb: api.jit(api.vmap(api.grad(printer(api))))(
        np_.arange(3.0)),
    "nested_jit": lambda api, np_, lax, io_cb: api.jit(
        lambda x: api.jit(printer(api))(x) + 1)(np_.float32(4.0)),
    "grad_of_jit": lambda api, np_, lax, io_cb: api.grad(api.jit(printer(api)))(
        np_.float32(2.0)),
    "grad_grad": lambda api, np_, lax, io_cb: api.grad(api.grad(
        lambda x: printer(api)(x) * x))(np_.float32(2.0)),
    "jacrev": lambda api, np_, lax, io_cb: api.jacrev(printer(api))(np_.arange(2.0)),
    "vmap_cond": lambda api, np_, lax, io_cb: api.vmap(lambda x: lax.cond(
        x > 0, printer(api), lambda y: y, x))(np_.arange(-1.0, 2.0)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_debug_print_matches_jax(name, capsys):
    out_jax, res_jax = captured(capsys, PROGRAMS[name], JAX)
    out_fg, res_fg = captured(capsys, PROGRAMS[name], FG)
    assert out_fg == out_jax and out_fg
    for a, b in zip(jax.tree_util.tree_leaves(res_jax), fg.tree_util.tree_leaves(res_fg),
                    strict=True):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6)


def test_print_forms_and_format_rules(capsys):
    def run(api, np_, lax, io_cb):
        def f(x, n):
            api.debug.print("no placeholders", x, n, skip_format_check=True)
            api.debug.print("{:.2f} {n} {s}", x[0], n=n, s="static text")
            api.debug.print(ordered=True)("two-call {}", x)
            return x
        return api.jit(f)(np_.array([1.25, 2.5]), np_.int32(7))
    assert captured(capsys, run, FG)[0] == captured(capsys, run, JAX)[0]


def test_print_format_errors_like_jax():
    for api in (jax, fg):
        with pytest.raises(ValueError, match="Unused positional arguments"):
            api.debug.print("{}", 1.0, 2.0)
        with pytest.raises(ValueError, match="Unused keyword arguments"):
            api.debug.print("x", y=1.0)


def test_ordered_prints_come_out_in_program_order(capsys):
    def run(api, np_, lax, io_cb):
        inner = api.jit(lambda x: api.debug.print("inner {}", x, ordered=True))

        def f(x):
            for i in range(4):
                api.debug.print("step {} {}", i, x + i, ordered=True)
                inner(x * i)
            return x
        out = api.jit(f)(np_.float32(1.0))
        api.jit(f)(np_.float32(10.0))
        return out
    out = captured(capsys, run, FG)[0]
    assert out == captured(capsys, run, JAX)[0]
    lines = out.splitlines()
    assert lines[:3] == ["step 0 1.0", "inner 0.0", "step 1 2.0"] and len(lines) == 16
    assert lines[8] == "step 0 10.0"


def test_ordered_prints_in_a_loop_body_keep_program_order(capsys):
    def run(api, np_, lax, io_cb):
        def g(x):
            api.debug.print("before {}", x, ordered=True)
            y = lax.fori_loop(0, 3, lambda i, c: (
                api.debug.print("in {} {}", i, c, ordered=True), c + 1)[1], x)
            api.debug.print("after {}", y, ordered=True)
            return y
        return api.jit(g)(np_.float32(1.0))
    out = captured(capsys, run, FG)[0]
    assert out == captured(capsys, run, JAX)[0]
    assert out.splitlines() == ["before 1.0", "in 0 1.0", "in 1 2.0", "in 2 3.0", "after 4.0"]


def test_ordered_io_callbacks_keep_order_across_scan_cond_and_while():
    """The token runs through the loops' state and the branches: callbacks in them keep
    their order with those around them (without it XLA may run them first)."""
    def run(api, np_, lax, io_cb):
        log = []

        def say(tag):
            def host(v):
                log.append((tag, float(v)))
                return np.float32(v)
            return lambda v: io_cb(host, api.ShapeDtypeStruct((), np.float32), v, ordered=True)

        def f(x):  # no value flows between the parts: only the token orders them
            a = say("start")(x.sum())
            total, _ = lax.scan(lambda c, v: (c + say("scan")(v), v), np_.float32(0), x)
            b = lax.cond(x[0] >= 0, lambda v: say("then")(v), lambda v: say("else")(v), x[1])
            w = lax.while_loop(lambda v: v < 20, lambda v: say("while")(v) + 8, x[2])
            return say("end")(a + total + b + w)
        out = api.jit(f)(np_.arange(3, dtype=np_.float32))
        api.effects_barrier()
        return log, float(out)
    got, want = run(*FG), run(*JAX)
    assert got == want
    assert [t for t, _ in got[0]] == ["start", "scan", "scan", "scan", "then", "while",
                                      "while", "while", "end"]


def test_debug_callback_kwargs_static_and_vmap(capsys):
    def run(api, np_, lax, io_cb):
        def show(x, label, *, scale):
            print(label, np.asarray(x) * scale, type(x).__name__ in ("Array", "ArrayImpl"))
        f = lambda x: api.debug.callback(show, x, "lane", scale=np_.float32(2.0))
        f(np_.arange(2.0))
        api.jit(f)(np_.arange(2.0))
        api.vmap(f)(np_.arange(2.0))
    assert captured(capsys, run, FG)[0] == captured(capsys, run, JAX)[0]


def test_print_under_jit_with_unused_result_still_prints(capsys):
    def run(api, np_, lax, io_cb):
        def f(x):
            api.debug.print("side {}", x)   # the only use of x besides the output
            return np_.zeros(())
        api.jit(f)(np_.float32(3.0))
        api.jit(lambda x: api.debug.print("only {}", x))(np_.float32(4.0))
        same = api.jit(lambda x: api.debug.print("twice {}", x))
        api.jit(lambda x: (same(x), same(x), x)[2])(np_.float32(5.0))
    out = captured(capsys, run, FG)[0]
    assert out == captured(capsys, run, JAX)[0]
    assert out.count("twice 5.0") == 2


def test_passes_keep_effectful_equations():
    def f(x):
        fg.debug.print("a {}", x)
        fg.debug.print("a {}", x)
        fg.experimental.io_callback(lambda v: v, fg.ShapeDtypeStruct((), np.float32), x)
        fg.pure_callback(lambda v: v, fg.ShapeDtypeStruct((), np.float32), x)
        return x
    closed = fg.make_jaxpr(f)(1.0)
    names = [e.prim.name for e in passes.optimize(closed).eqns]
    # The unused pure callback goes, the prints (not merged) and the io callback stay.
    assert names == ["debug_print", "debug_print", "io_callback"]
    assert [e.prim.name for e in passes.dce(closed).eqns] == names


def _effects_text(text):
    match = re.search(r" : \{ (.*) \} \}$", text.strip())
    return set(match.group(1).split(", ")) if match else set()


def test_effects_printed_as_jax_prints_them():
    def program(api, io_cb):
        def f(x):
            api.debug.print("u {}", x)
            api.lax.cond(x > 0, lambda: api.debug.print("o {}", x, ordered=True), lambda: None)
            io_cb(lambda v: v, api.ShapeDtypeStruct((), np.float32), x, ordered=True)
            return x
        return f
    jax_text = jax.make_jaxpr(program(jax, JAX[3]))(1.0).pretty_print(print_effects=True)
    fg_closed = fg.make_jaxpr(program(fg, FG[3]))(1.0)
    fg_text = fg_closed.pretty_print(print_effects=True)
    assert _effects_text(fg_text) == _effects_text(jax_text) == {"Debug", "OrderedDebug",
                                                                 "OrderedIO"}
    assert {e.name for e in fg_closed.effects} == {"Debug", "OrderedDebug", "OrderedIO"}
    assert " : {" not in str(fg_closed)  # as in jax, plain printing leaves effects out
    pure = fg.make_jaxpr(lambda x: fg.pure_callback(
        lambda v: v, fg.ShapeDtypeStruct((), np.float32), x))(1.0)
    assert not pure.effects and _effects_text(pure.pretty_print(print_effects=True)) == set()


def test_ordered_effects_thread_a_token_through_main():
    f = lambda x: fg.debug.print("{}", x, ordered=True)
    text = fg.jit(f).lower(1.0).as_text()
    main = next(line for line in text.splitlines() if "@main" in line)
    assert main.count("!stablehlo.token") == 2  # an argument and a result
    unordered = fg.jit(lambda x: fg.debug.print("{}", x)).lower(1.0).as_text()
    assert "token" not in unordered and "xla_ffi_python" in unordered


def _callback_program(api, np_, vmap_method):
    def cb(x, y):
        print("shapes", np.shape(x), np.shape(y))
        return np.sin(np.asarray(x)) + np.asarray(y)

    def fun(x, y):
        shape = np.broadcast_shapes(np.shape(x), np.shape(y))
        return api.pure_callback(cb, api.ShapeDtypeStruct(shape, np.float32), x, y,
                                 vmap_method=vmap_method)
    return fun


@pytest.mark.parametrize("vmap_method", ["sequential", "sequential_unrolled", "expand_dims",
                                         "broadcast_all"])
@pytest.mark.parametrize("jitted", [False, True])
def test_pure_callback_vmap_methods_match_jax(vmap_method, jitted, capsys):
    def run(api, np_, lax, io_cb):
        f = api.vmap(_callback_program(api, np_, vmap_method), in_axes=(0, None))
        f = api.jit(f) if jitted else f
        return f(np_.arange(4.0), np_.float32(1.0))
    out_jax, res_jax = captured(capsys, run, JAX)
    out_fg, res_fg = captured(capsys, run, FG)
    assert out_fg == out_jax
    np.testing.assert_allclose(np.asarray(res_fg), np.asarray(res_jax), rtol=1e-6)


def test_pure_callback_eager_jit_and_nested_vmap(capsys):
    def run(api, np_, lax, io_cb):
        f = _callback_program(api, np_, "sequential")
        xs = np_.arange(6.0).reshape(2, 3)
        return (f(xs, np_.float32(1.0)), api.jit(f)(xs, np_.float32(1.0)),
                api.vmap(api.vmap(lambda a: f(a, 1.0)))(xs),
                api.vmap(lambda a: _callback_program(api, np_, "expand_dims")(a, 1.0),
                         in_axes=1)(xs))
    out_jax, res_jax = captured(capsys, run, JAX)
    out_fg, res_fg = captured(capsys, run, FG)
    assert out_fg == out_jax
    for a, b in zip(res_jax, res_fg, strict=True):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6)


def test_pure_callback_errors_like_jax():
    x = np.ones(3, np.float32)
    for api in (jax, fg):
        bad = lambda v: api.pure_callback(lambda a: np.zeros(2, np.float32),
                                          api.ShapeDtypeStruct((3,), np.float32), v)
        for f in (bad, api.jit(bad)):
            with pytest.raises(RuntimeError, match=re.escape(
                    "Incorrect output shape for return value #0: Expected: (3,), Actual: (2,)")):
                np.asarray(f(x))
        with pytest.raises(NotImplementedError, match="vmap_method=None"):
            api.vmap(bad)(np.ones((2, 3), np.float32))
        with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
            api.grad(lambda v: bad(v).sum())(x)
        with pytest.raises(ValueError, match="vmap_method must be on of"):
            api.pure_callback(lambda a: a, api.ShapeDtypeStruct((3,), np.float32), x,
                              vmap_method="columns")


def test_pure_callback_inside_custom_jvp():
    def make(api, np_):
        @api.custom_jvp
        def host_sin(x):
            return api.pure_callback(np.sin, api.ShapeDtypeStruct(x.shape, x.dtype), x,
                                     vmap_method="sequential")

        @host_sin.defjvp
        def host_sin_jvp(primals, tangents):
            return host_sin(primals[0]), np_.cos(primals[0]) * tangents[0]
        loss = lambda x: host_sin(x).sum()
        return api.grad(loss), api.jit(api.grad(loss)), api.vmap(api.grad(host_sin))
    x = np.linspace(-1, 1, 5).astype(np.float32)
    for f_jax, f_fg in zip(make(jax, jnp), make(fg, fnp), strict=True):
        np.testing.assert_allclose(np.asarray(f_fg(x)), np.asarray(f_jax(x)), rtol=1e-6)


def test_io_callback_ordered_and_vmap(capsys):
    def run(api, np_, lax, io_cb):
        log = []

        def record(v):
            log.append(float(v))
            return np.array(len(log), np.int32)

        def g(x):
            a = io_cb(record, api.ShapeDtypeStruct((), np.int32), x, ordered=True)
            b = io_cb(record, api.ShapeDtypeStruct((), np.int32), x + 1, ordered=True)
            return a + b
        results = [g(np_.float32(0.0)), api.jit(g)(np_.float32(1.0)),
                   api.jit(g)(np_.float32(5.0)),
                   api.vmap(lambda v: io_cb(record, api.ShapeDtypeStruct((), np.int32), v))(
                       np_.arange(3.0))]
        api.effects_barrier()
        with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
            api.vmap(g)(np_.arange(2.0))
        return [np.asarray(r) for r in results], log
    (res_jax, log_jax), (res_fg, log_fg) = captured(capsys, run, JAX)[1], captured(capsys, run, FG)[1]
    assert log_fg == log_jax == [0.0, 1.0, 1.0, 2.0, 5.0, 6.0, 0.0, 1.0, 2.0]
    for a, b in zip(res_jax, res_fg, strict=True):
        np.testing.assert_array_equal(b, a)
    with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
        fg.grad(lambda x: fg.experimental.io_callback(
            lambda v: v, fg.ShapeDtypeStruct((), np.float32), x))(1.0)


def test_breakpoint_opens_pdb_on_concrete_values(monkeypatch):
    transcript = io.StringIO()

    class ScriptedPdb(pdb.Pdb):
        def __init__(self):
            super().__init__(stdin=io.StringIO("p x\np y * 2\nc\n"), stdout=transcript)
    monkeypatch.setattr(pdb, "Pdb", ScriptedPdb)

    def f(x):
        y = x + 1
        fg.debug.breakpoint()
        return y
    assert float(f(np.float32(2.0))) == 3.0
    assert float(fg.jit(f)(np.float32(5.0))) == 6.0
    fg.effects_barrier()
    text = transcript.getvalue()
    assert "Array(2., dtype=float32)" in text and "Array(6., dtype=float32)" in text
    assert "Array(5., dtype=float32)" in text and "Array(12., dtype=float32)" in text
