"""Seeing inside transformed code: disable_jit, ensure_compile_time_eval, the
jax_debug_nans/infs and jax_log_compiles flags (against jax), and funcgraph's own
recompilation inspector (cache_info), NaN/Inf probe (find_nonfinite) and jaxpr diff."""
import inspect
import logging
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax, passes
from funcgraph.inspect import diff, find_nonfinite

HERE = "test_debug_tools.py"


def line_of(fn, text):
    """The line number in this file of the first line of fn containing text."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


@pytest.fixture
def flag():
    """Set config flags in both libraries for one test."""
    saved = []

    def set_flag(name, value):
        saved.append((name, fg.config.read(name), getattr(jax.config, name)))
        fg.config.update(name, value)
        jax.config.update(name, value)
    yield set_flag
    for name, fg_value, jax_value in reversed(saved):
        fg.config.update(name, fg_value)
        jax.config.update(name, jax_value)


# --- disable_jit and ensure_compile_time_eval -------------------------------------------

def test_disable_jit_runs_python_on_concrete_values(capsys):
    seen = []

    def body(x):
        seen.append(type(x).__name__)
        print("x =", x)
        return x * 2

    x = np.arange(3.0, dtype=np.float32)
    with jax.disable_jit():
        expected = jax.jit(body)(jnp.asarray(x))
    jax_out = capsys.readouterr().out
    with fg.disable_jit():
        got = fg.jit(body)(fnp.asarray(x))
    fg_out = capsys.readouterr().out
    assert fg_out == jax_out == "x = [0. 1. 2.]\n"
    np.testing.assert_array_equal(got, expected)
    assert seen[-1] == "Array"
    # outside the context jit traces again
    fg.jit(body)(fnp.asarray(x))
    assert "Traced" in capsys.readouterr().out
    assert not fg.config.jax_disable_jit


def test_disable_jit_flag_and_nesting(flag, capsys):
    flag("jax_disable_jit", True)
    f = fg.jit(lambda x: (print("inner", x), x + 1)[1])
    g = fg.jit(lambda x: f(x) * 3)
    assert float(g(1.0)) == 6.0
    assert capsys.readouterr().out.count("inner 1.0") == 1
    # grad still works on the plain Python it runs
    assert float(fg.grad(g)(2.0)) == pytest.approx(float(jax.grad(lambda x: (x + 1) * 3)(2.0)))


def _control_flow_program(np_mod, lax_mod, log):
    def f(x):
        y = lax_mod.cond(x > 0, lambda v: (log.append(("cond", float(v))), v * 2)[1],
                         lambda v: v, x)
        n = lax_mod.while_loop(lambda i: i < 3, lambda i: (log.append(("while", int(i))),
                                                           i + 1)[1], 0)

        def step(c, v):
            log.append(("scan", float(c)))
            return c + v, c * v
        c, ys = lax_mod.scan(step, y, np_mod.arange(3.0), reverse=True)
        return c + n, ys
    return f


def test_disable_jit_runs_control_flow_as_python():
    jax_log, fg_log = [], []
    with jax.disable_jit():
        expected = jax.jit(_control_flow_program(jnp, jax.lax, jax_log))(2.0)
    with fg.disable_jit():
        got = fg.jit(_control_flow_program(fnp, lax, fg_log))(2.0)
    # the bodies ran on concrete values, in the same order as in jax
    assert fg_log == jax_log and ("scan", 4.0) in fg_log and ("while", 2) in fg_log
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e)
    with fg.disable_jit(), pytest.raises(ValueError, match="zero-length scan"):
        lax.scan(lambda c, x: (c, x), 0.0, np.zeros((0,), np.float32))


def test_ensure_compile_time_eval_computes_concrete_values_inside_jit():
    kinds = {}

    def make(np_mod, ctx, store):
        def f(x):
            with ctx():
                y = np_mod.sin(1.0)
                store["y"] = float(y)  # concrete: float() works
                z = x + y              # a traced argument: staged
                store["z_concrete"] = not type(z).__name__.endswith("Tracer")
            return z
        return f

    jax_store = {}
    expected = jax.jit(make(jnp, jax.ensure_compile_time_eval, jax_store))(2.0)
    f = make(fnp, fg.ensure_compile_time_eval, kinds)
    got = fg.jit(f)(2.0)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert kinds["y"] == pytest.approx(jax_store["y"])
    assert kinds["z_concrete"] is False and jax_store["z_concrete"] is False
    # sin was computed at trace time: the jaxpr only adds a literal
    jaxpr = fg.make_jaxpr(f)(2.0)
    assert "sin" not in str(jaxpr) and "add" in str(jaxpr)


# --- jax_debug_nans / jax_debug_infs -----------------------------------------------------

def _jax_message(fn, *args):
    # jax's eager dispatch may reuse an executable cached before the flag was set (by
    # an earlier test in the same process), which then does not check for NaNs
    jax.clear_caches()
    with pytest.raises(FloatingPointError) as info:
        fn(*args)
    return str(info.value)


def log_times_zero(np_mod):
    def f(x):
        y = np_mod.log(x)
        return y * 0.0  # -inf * 0 = nan
    return f


def test_debug_nans_jit_names_primitive_and_line(flag):
    flag("jax_debug_nans", True)
    x = np.array([0.0, 1.0], np.float32)
    expected = _jax_message(jax.jit(log_times_zero(jnp)), x)
    got = _jax_message(fg.jit(log_times_zero(fnp)), x)
    assert expected == "invalid value (nan) encountered in mul"
    assert got.startswith(expected)
    assert f"{HERE}:{line_of(log_times_zero, 'y * 0.0')}" in got


def test_debug_nans_finite_results_and_flag_off(flag):
    f = fg.jit(log_times_zero(fnp))
    assert np.isnan(np.asarray(f(np.array([0.0], np.float32)))).all()  # off: silent
    flag("jax_debug_nans", True)
    np.testing.assert_allclose(f(np.array([1.0, 2.0], np.float32)), [0.0, 0.0])


def sqrt_loss(np_mod):
    def loss(x):
        return np_mod.sum(np_mod.sqrt(x) * 0.0)
    return loss


def test_debug_nans_in_backward_pass_of_jit_grad(flag):
    flag("jax_debug_nans", True)
    x = np.array([0.0, 1.0], np.float32)
    expected = _jax_message(jax.jit(jax.grad(sqrt_loss(jnp))), x)
    got = _jax_message(fg.jit(fg.grad(sqrt_loss(fnp))), x)
    assert expected.startswith("invalid value (nan) encountered in ")
    assert got.startswith("invalid value (nan) encountered in ")
    # the backward-pass equation carries the forward line it came from
    assert f"{HERE}:{line_of(sqrt_loss, 'np_mod.sqrt')}" in got
    assert "transpose of" in got


def test_debug_nans_eager_ops(flag):
    flag("jax_debug_nans", True)
    expected = _jax_message(jnp.log, jnp.array(-1.0))
    got = _jax_message(fnp.log, fnp.array(-1.0))
    assert expected == "invalid value (nan) encountered in log"
    assert got.startswith(expected) and HERE in got
    # eager grad: the backward pass runs op by op and is checked too
    got = _jax_message(fg.grad(sqrt_loss(fnp)), np.array([0.0, 1.0], np.float32))
    assert f"{HERE}:{line_of(sqrt_loss, 'np_mod.sqrt')}" in got


def test_debug_nans_inside_scan_names_the_step(flag):
    flag("jax_debug_nans", True)

    def f(xs):
        def step(c, x):
            return c + fnp.sqrt(x), c
        return lax.scan(step, 0.0, xs)[0]
    got = _jax_message(fg.jit(f), np.array([4.0, 1.0, -1.0], np.float32))
    assert got.startswith("invalid value (nan) encountered in sqrt")
    assert "step 2" in got


def test_debug_infs(flag):
    flag("jax_debug_infs", True)
    expected = _jax_message(jax.jit(lambda x: 1.0 / x), jnp.array(0.0))
    got = _jax_message(fg.jit(lambda x: 1.0 / x), fnp.array(0.0))
    assert expected == "invalid value (inf) encountered in div"
    assert got.startswith(expected)
    # a NaN alone does not trip debug_infs
    assert np.isnan(fg.jit(lambda x: x * 0.0)(np.float32(np.nan)))


# --- jax_log_compiles --------------------------------------------------------------------

def test_log_compiles(flag, caplog):
    flag("jax_log_compiles", True)

    def scaled_sum(x, y):
        return fnp.sum(x * y)
    f = fg.jit(scaled_sum)
    with caplog.at_level(logging.WARNING, logger="funcgraph.jit"):
        f(np.ones(3, np.float32), 2.0)
        f(np.ones(3, np.float32), 3.0)  # cache hit: no log
        f(np.ones(4, np.float32), 2.0)
    messages = [r.getMessage() for r in caplog.records if r.name == "funcgraph.jit"]
    assert len(messages) == 2
    assert "jit(scaled_sum)" in messages[0]
    assert "x: f32[3], y: f32[]~" in messages[0] and "x: f32[4]" in messages[1]
    assert re.search(r"in \d+\.\d+ sec", messages[0])


def test_log_compiles_off_logs_nothing(caplog):
    with caplog.at_level(logging.WARNING, logger="funcgraph.jit"):
        fg.jit(lambda x: x + 1)(np.ones(2, np.float32))
    assert not [r for r in caplog.records if r.name == "funcgraph.jit"]


# --- the recompilation inspector ---------------------------------------------------------

def test_cache_info_lists_variants_and_why():
    def model(x, y, n):
        return x * y + n
    f = fg.jit(model, static_argnames="n")
    f(np.ones(3, np.float32), 2.0, n=1)
    f(np.ones(3, np.float32), 5.0, n=1)                   # hit
    f(np.ones(4, np.float32), 2.0, n=1)                   # shape
    f(np.ones(4, np.int32), 2.0, n=1)                     # dtype
    f(np.ones(4, np.int32), np.float32(2.0), n=1)         # weak type
    f(np.ones(4, np.int32), np.float32(2.0), n=2)         # static
    call_line = line_of(test_cache_info_lists_variants_and_why, "n=2)")
    info = f.cache_info()
    assert len(info.compiled) == 5 == f._cache_size()
    whys = [v.why() for v in info]
    assert whys[0] == "first call"
    assert whys[1] == "x changed shape: f32[3] -> f32[4]"
    assert whys[2] == "x changed dtype: f32[4] -> i32[4]"
    assert whys[3] == "y changed weak type: f32[]~ -> f32[]"
    assert whys[4] == "static argument n changed: 1 -> 2"
    assert info.variants[4].caller_text().startswith(f"{HERE}:{call_line}")
    assert all(v.compile_time is not None and v.compile_time >= 0 for v in info)
    text = str(info)
    assert "5 compiled variants" in text and "(x: i32[4], y: f32[], n=2)" in text
    html = info._repr_html_()
    assert "<table" in html and "static argument n changed: 1 -&gt; 2" in html


def test_cache_info_traced_variants_and_clear():
    f = fg.jit(lambda x: x * 2)
    fg.grad(lambda x: f(x))(1.0)
    info = f.cache_info()
    assert [v.kind for v in info] == ["traced"]
    f(1.0)
    assert [v.kind for v in f.cache_info()] == ["traced", "compiled"]
    f.clear_cache()
    assert len(f.cache_info()) == 0


# --- the NaN/Inf probe --------------------------------------------------------------------

def test_find_nonfinite_forward():
    x = np.array([0.0, 1.0, 2.0], np.float32)
    report = find_nonfinite(log_times_zero(fnp), inf=False)(x)
    assert report.found and report.kind == "nan" and report.primitive == "mul"
    assert report.source[1] == line_of(log_times_zero, "y * 0.0")
    assert report.inputs[0].inf == 1 and report.inputs[0].max == pytest.approx(np.log(2))
    # with infs too, the first bad value is log(0) = -inf
    report = find_nonfinite(log_times_zero(fnp))(x)
    assert (report.kind, report.primitive) == ("inf", "log")
    assert report.inputs[0].min == 0 and report.inputs[0].max == 2
    assert f"{HERE}:{line_of(log_times_zero, 'np_mod.log')}" in str(report)


def test_find_nonfinite_is_in_funcgraph_debug_too():
    assert fg.debug.find_nonfinite is find_nonfinite
    report = fg.debug.find_nonfinite(log_times_zero(fnp))(np.array([0.0, 1.0], np.float32))
    assert isinstance(report, fg.debug.NonfiniteReport) and report.primitive == "log"


def test_find_nonfinite_in_backward_pass():
    # sqrt's derivative 0.5 / sqrt(x) is computed with the forward pass (as jax's rule):
    # the first inf is made there, at the sqrt's line
    report = find_nonfinite(fg.grad(sqrt_loss(fnp)))(np.array([0.0, 1.0], np.float32))
    assert report.found and report.kind == "inf" and report.primitive == "div"
    assert report.source[1] == line_of(sqrt_loss, "np_mod.sqrt")

    def overflowing_gradient(x):  # finite forward values, an inf only going back
        return fnp.sum((x * 1e30) * 1e30)
    report = find_nonfinite(fg.grad(overflowing_gradient))(np.array([1e-30], np.float32))
    assert report.found and report.kind == "inf"
    assert report.transform is not None and report.transform.startswith("transpose of")
    assert report.source[1] == line_of(overflowing_gradient, "1e30) * 1e30")
    assert "transpose of" in str(report)


def test_find_nonfinite_inside_scan_names_the_step():
    def f(xs):
        def step(c, x):
            return c + fnp.sqrt(x - 1.0), c
        return lax.scan(step, 0.0, xs)[0]
    xs = np.array([5.0, 4.0, 3.0, 2.0, 1.0, 0.5, 2.0], np.float32)
    report = find_nonfinite(fg.jit(f))(xs)
    assert report.primitive == "sqrt" and report.kind == "nan"
    assert any("scan" in p and "step 5" in p for p in report.path)
    assert any(p.startswith("jit(f)") for p in report.path)
    assert "step 5" in str(report)
    # through grad: the backward scan runs in reverse, step index kept
    report = find_nonfinite(fg.grad(f))(np.array([3.0, 1.0, 2.0], np.float32))
    assert report.found and any("step 1" in p for p in report.path)


def test_find_nonfinite_while_and_cond_and_clean():
    def f(x):
        x = lax.cond(x > 0, lambda v: v, lambda v: fnp.log(v), x)
        return lax.while_loop(lambda v: v < 10.0, lambda v: v + 5.0, x)
    assert find_nonfinite(f)(np.float32(1.0)).found is False
    report = find_nonfinite(f)(np.float32(-1.0))
    assert report.primitive == "log" and any("branch 0" in p for p in report.path)
    html = report._repr_html_()
    assert "log" in html and "<table" in html
    clean = find_nonfinite(f)(np.float32(3.0))
    assert not clean and "no non-finite value" in str(clean)
    assert "no non-finite" in clean._repr_html_()


def test_find_nonfinite_results_agree_with_jax_values():
    # the probe evaluates the same numbers as running the function
    def f(x):
        return fnp.exp(x) / fnp.sum(fnp.exp(x))
    x = np.array([1.0, 100.0], np.float32)
    report = find_nonfinite(f)(x)
    assert report.primitive == "exp" and report.kind == "inf"
    assert np.isinf(jnp.exp(jnp.asarray(x))).any()


# --- the transformation diff ----------------------------------------------------------------

def loss(x):
    return fnp.sum(fnp.sin(x) * x)


def test_diff_grad_adds_backward_equations():
    x = np.ones(3, np.float32)
    before, after = fg.make_jaxpr(loss)(x), fg.make_jaxpr(fg.grad(loss))(x)
    d = before.diff(after)
    assert len(d.unchanged) == len(before.eqns)  # the forward pass is kept as is
    assert len(d.added) == len(after.eqns) - len(before.eqns) > 0
    assert any(" cos " in line for line in d.added)
    text = str(d)
    assert text.startswith("--- before\n+++ after")
    assert sum(line.startswith("+ ") for line in text.splitlines()) >= len(d.added)
    assert all(f"+     {a}" in text for a in d.added)


def test_diff_matches_modulo_renaming_and_shows_rewrites():
    x = np.ones(3, np.float32)
    a = fg.make_jaxpr(lambda x: fnp.cos(x) * 2.0 + 1.0)(x)
    b = fg.make_jaxpr(lambda x: fnp.cos(x) * 3.0 + 1.0)(x)
    d = diff(a, b, labels=("two", "three"))
    assert len(d.unchanged) == 1 and len(d.rewritten) == 2  # mul and the add after it
    (old, new), _ = d.rewritten
    assert "2.0" in old and "3.0" in new
    assert diff(a, a).summary() == f"0 added, 0 removed, 0 rewritten, {len(a.eqns)} unchanged"


def test_diff_of_optimization_pass_and_html():
    def f(x):
        y = fnp.sin(x)
        z = fnp.sin(x)  # merged by CSE
        return y + z * 1.0
    before = fg.make_jaxpr(f)(np.ones(3, np.float32))
    after = passes.optimize(before)
    d = diff(before, after, labels=("traced", "optimized"))
    assert d.removed and not d.added
    html = d._repr_html_()
    assert "<table" in html and "traced" in html and "optimized" in html
    assert "fg-diff-removed" in html and "#ffebe9" in html


def test_debug_key_reuse_may_be_turned_off_not_on():
    """jax.debug_key_reuse(False) wraps code that splits keys by hand (flax's tests);
    funcgraph has no key-reuse checker, so turning it on is a clear error, not a no-op."""
    with fg.debug_key_reuse(False):
        assert fg.config.jax_debug_key_reuse is False
    with pytest.raises(NotImplementedError, match="does not check PRNG keys for reuse"):
        with fg.debug_key_reuse(True):
            pass
    assert fg.config.jax_debug_key_reuse is False
    assert jax.config.jax_debug_key_reuse is False  # the oracle's default too
