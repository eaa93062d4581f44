"""funcgraph.inspect: the HTML views (jaxprs, lowered and compiled stages, arrays) and
the text reports (ir_report, residuals_report)."""
import re

import numpy as np

import funcgraph as fg
import funcgraph.inspect as fgi
import funcgraph.numpy as fnp
from funcgraph import lax

X = np.linspace(0, 1, 3, dtype=np.float32)


def f(x, y):
    return fnp.sum(fnp.sin(x) * y + 1.0)


def nested(x):
    y = lax.cond(fnp.sum(x) > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)
    _, ys = lax.scan(lambda c, v: (c + v, c * v), 0.0, y)
    n = lax.while_loop(lambda i: i < 3, lambda i: i + 1, 0)
    return fg.jit(fnp.sin)(ys) + n


def _text(html):
    return re.sub(r"<[^>]+>", "", html.split("</style>", 1)[-1])


def test_text_form_stays_jax():
    jaxpr = fg.make_jaxpr(f)(X, X)
    assert str(jaxpr).startswith("{ lambda ; a:f32[3] b:f32[3]. let")
    assert "<" not in str(jaxpr)


def test_jaxpr_html_types_sources_and_counts():
    jaxpr = fg.make_jaxpr(f)(X, X)
    html = jaxpr._repr_html_()
    assert html == fgi.jaxpr_html(jaxpr) == jaxpr.jaxpr._repr_html_()
    text = _text(html)
    assert "a:f32[3]" in text and "f:f32[] = reduce_sum[axes=(0,)] e" in text
    assert "2 inputs · 1 output · 4 equations" in text
    assert "sin ×1" in text
    # every equation carries its source line (this file, function f)
    assert text.count("test_inspect.py:") == 4
    assert f"test_inspect.py:{f.__code__.co_firstlineno + 1} (f)" in text


def test_jaxpr_html_escapes():
    html = fgi.jaxpr_html(fg.make_jaxpr(lambda x: x < 1.0)(X))
    assert "<lambda>" not in html and "&lt;lambda&gt;" in html


def test_sub_jaxprs_fold_open():
    jaxpr = fg.make_jaxpr(nested)(X)
    html = fgi.jaxpr_html(jaxpr)
    assert html.count("<details>") == 6   # 2 branches, scan body, while cond+body, pjit
    text = _text(html)
    for label in ("cond branch 0", "cond branch 1", "scan body", "while body",
                  "while cond", "pjit jaxpr"):
        assert label in text
    assert "branches=&lt;2 jaxprs&gt;" in text
    total = fgi.count_equations(jaxpr)
    assert total == len(jaxpr.eqns) + 7
    assert f"{total} equations (7 nested)" in text


def test_weak_types_marked():
    jaxpr = fg.make_jaxpr(lambda x, s: x * s)(X, 2.0)
    html = fgi.jaxpr_html(jaxpr)
    assert html.count('class="ty weak"') == 1
    assert ":f32[]~" in _text(html)
    strong = fgi.jaxpr_html(fg.make_jaxpr(lambda x, s: x * s)(X, np.float32(2)))
    assert 'class="ty weak"' not in strong


def test_lowered_side_by_side():
    lowered = fg.jit(f).lower(X, X)
    html = lowered._repr_html_()
    assert html == fgi.lowered_html(lowered)
    assert 'class="fg-side"' in html
    text = _text(html)
    assert "jit(f) lowered (f32[3], f32[3]) -&gt; (f32[])" in text
    assert "stablehlo.sine" in text and "= sin a" in text
    ops = fgi._stablehlo_op_count(lowered.as_text())
    assert ops >= 4 and f"{ops} StableHLO ops" in text


def test_compiled_cost_and_memory():
    compiled = fg.jit(f).lower(X, X).compile()
    text = _text(fgi.compiled_html(compiled))
    cost = compiled.cost_analysis()
    assert f"transcendentals{cost['transcendentals']:g}" in text
    assert f"flops{cost['flops']:g}" in text
    mem = compiled.memory_analysis()
    assert f"argument size{fgi.format_bytes(mem.argument_size_in_bytes)}" in text
    assert "output size4 B" in text
    assert "HloModule" in text and "stablehlo.sine" in text


def test_array_html():
    html = fgi.array_html(fnp.arange(12.0).reshape(3, 4))
    assert "f32[3,4]" in html and "float32" in html and "48 B" in html
    assert "min 0 · max 11 · mean 5.5" in _text(html)
    big = _text(fgi.array_html(fnp.arange(1000.0)))
    assert "..." in big and "999." in big and "500." not in big
    assert "bool" in fgi.array_html(fnp.ones(3) > 0)
    assert "f32[0,3]" in fgi.array_html(fnp.zeros((0, 3)))


def test_array_html_weak_and_deleted():
    from funcgraph.array import array_from_numpy
    assert "weak type" in fgi.array_html(array_from_numpy(np.float32(2), weak_type=True))
    assert "weak type" not in fgi.array_html(array_from_numpy(np.float32(2)))
    y = fnp.ones(3)
    y.delete()
    assert "deleted" in fgi.array_html(y)


def test_format_bytes():
    assert fgi.format_bytes(12) == "12 B"
    assert fgi.format_bytes(1536) == "1.5 KiB"
    assert fgi.format_bytes(3 * 2 ** 20) == "3.0 MiB"


def test_ir_report_counts_nested_equations():
    jaxpr = fg.make_jaxpr(nested)(X)
    report = fgi.ir_report(jaxpr)
    rows = dict(line.split() for line in report.splitlines())
    assert rows["cond"] == "1" and rows["sin"] == "1" and rows["scan"] == "1"
    assert sum(map(int, rows.values())) == fgi.count_equations(jaxpr)
    assert fgi.ir_report(nested, X) == report


def test_residuals_report():
    w = np.ones((64, 32), np.float32)

    def g(w):
        return fnp.sum(fnp.tanh(w @ w.T))

    residuals = fg.vjp(g, w)[1].residuals
    report = fgi.residuals_report(g, w)
    lines = report.splitlines()
    total = sum(r.nbytes for r in residuals)
    assert lines[0] == (f"vjp(g) keeps {len(residuals)} residuals alive: "
                        f"{fgi.format_bytes(total)}")
    assert "f32[64,64]" in lines[1]           # largest first
    assert f"test_inspect.py:{g.__code__.co_firstlineno + 1} (g)" in report
    assert "(an input or constant)" in report


def test_residuals_report_nothing_kept():
    def linear(x):
        return 3.0 * x
    assert fg.vjp(linear, np.float32(1))[1].residuals == []
    assert fgi.residuals_report(linear, np.float32(1)) == \
        "vjp(linear) keeps 0 residuals alive: 0 B"
