"""Views of what a program became: HTML renderings of jaxprs, lowered and compiled
stages and arrays for Jupyter (`_repr_html_`), and text reports.

The text form of a jaxpr stays JAX's (`str(jaxpr)`); the HTML form adds colour
for types, marks weak types, folds sub-jaxprs (cond branches, loop bodies, nested
jit calls) under `<details>` and shows each equation's source line.

Text reports: `ir_report` (equations by primitive) and `residuals_report` (what
reverse mode keeps alive between the forward and the backward pass).

Debugging views (text and HTML): `jit(f).cache_info()` (every compiled variant and
why it was made), `find_nonfinite(f)(*args)` (the first equation making a NaN/inf,
funcgraph.debugging.nonfinite) and `diff(jaxpr_a, jaxpr_b)` or `jaxpr_a.diff(jaxpr_b)`
(what a transformation or pass changed, funcgraph.debugging.diff)."""
import html
import os

import numpy as np

from funcgraph import ir
from funcgraph.array import Array as _Array
from funcgraph.debugging.diff import JaxprDiff, diff
from funcgraph.debugging.nonfinite import NonfiniteReport, find_nonfinite
from funcgraph.transforms.ad import vjp as _vjp
from funcgraph.transforms.jit import Compiled as _Compiled
from funcgraph.transforms.jit import Lowered as _Lowered
from funcgraph.transforms.jit import make_jaxpr as _make_jaxpr
from funcgraph.transforms.jit_cache import CacheInfo

_STYLE = (
    "<style>"
    ".fg-ir{font-family:var(--jp-code-font-family,monospace);font-size:12.5px;line-height:1.45}"
    ".fg-ir .ty{color:#6a7f9a}.fg-ir .prim{color:#7c3aed;font-weight:600}"
    ".fg-ir .weak{color:#b45309;border-bottom:1px dotted #b45309}"
    ".fg-ir .param{color:#9a6700}.fg-ir .src{color:#8a8a8a;font-style:italic;margin-left:2em}"
    ".fg-ir .lit{color:#0a7d32}.fg-ir details{margin-left:2em;border-left:2px solid #e5e7eb;"
    "padding-left:.5em}"
    ".fg-ir summary{cursor:pointer;color:#555}"
    ".fg-ir .body{margin-left:2em}"
    ".fg-head{font-family:sans-serif;font-size:12.5px;color:#333;margin:.2em 0 .4em}"
    ".fg-head b{font-weight:600}"
    ".fg-side{display:flex;gap:1.5em;align-items:flex-start}"
    ".fg-side>div{flex:1;min-width:0;overflow:auto;max-height:40em}"
    ".fg-side pre,.fg-pre{margin:0;font-size:12px;white-space:pre}"
    ".fg-tab{border-collapse:collapse;font-size:12.5px;font-family:sans-serif}"
    ".fg-tab td,.fg-tab th{padding:1px 10px;text-align:left;border-bottom:1px solid #eee}"
    ".fg-tab td.num{text-align:right;font-family:monospace}"
    "</style>"
)


def _esc(text):
    return html.escape(str(text))


def _as_jaxpr(jaxpr):
    return jaxpr.jaxpr if isinstance(jaxpr, ir.ClosedJaxpr) else jaxpr


def _type_html(aval):
    """`:f32[3]`, with weak types marked (they come from Python scalars and give
    way to the other operand's dtype in arithmetic)."""
    text = _esc(aval.str_short())
    if getattr(aval, "weak_type", False):
        return (f'<span class="ty weak" title="weakly typed: from a Python scalar">'
                f':{text}~</span>')
    return f'<span class="ty">:{text}</span>'


class _HtmlNames(ir._Names):
    def decl(self, var):
        return f"{_esc(self(var))}{_type_html(var.aval)}"

    def use(self, x):
        if isinstance(x, ir.Literal):
            return f'<span class="lit">{_esc(ir.format_literal(x))}</span>'
        return _esc(self(x))


def _short_source(source):
    file, line, fn = source
    return f"{os.path.basename(file)}:{line} ({fn})"


# --- counting ------------------------------------------------------------------------

def count_equations(jaxpr):
    """The number of equations in a jaxpr, those of its sub-jaxprs included."""
    total = 0
    for eqn in _as_jaxpr(jaxpr).eqns:
        total += 1
        for sub in ir.subjaxprs(eqn.params):
            total += count_equations(sub.jaxpr)
    return total


def primitive_counts(jaxpr):
    """{primitive name: number of equations}, sub-jaxprs included."""
    counts = {}

    def visit(jx):
        for eqn in jx.eqns:
            counts[eqn.prim.name] = counts.get(eqn.prim.name, 0) + 1
            for sub in ir.subjaxprs(eqn.params):
                visit(sub.jaxpr)
    visit(_as_jaxpr(jaxpr))
    return counts


def _plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


# --- jaxprs ---------------------------------------------------------------------------

_SUB_LABELS = {"branches": "branch", "cond_jaxpr": "cond", "body_jaxpr": "body",
               "jaxpr": "body"}


def _sub_label(prim_name, key, index, count):
    if prim_name == "pjit" and key == "jaxpr":
        return "jaxpr"
    label = _SUB_LABELS.get(key, key)
    return label if count == 1 else f"{label} {index}"


def _nested(value):
    if isinstance(value, ir.ClosedJaxpr):
        return [value]
    if isinstance(value, tuple):
        return [v for v in value if isinstance(v, ir.ClosedJaxpr)]
    return []


def _eqn_html(eqn, names):
    outs = " ".join(names.decl(v) for v in eqn.outvars)
    params, subs = [], []
    for key, value in sorted(eqn.params.items()):
        nested = _nested(value)
        if not nested:
            params.append(f"{_esc(key)}={_esc(ir.format_param(value, 0, names, False))}")
            continue
        for i, sub in enumerate(nested):
            label = _sub_label(eqn.prim.name, key, i, len(nested))
            n = count_equations(sub)
            subs.append(f"<details><summary>{_esc(eqn.prim.name)} {_esc(label)}: "
                        f"{_plural(n, 'equation')}</summary>"
                        f"{_jaxpr_body(sub.jaxpr, names)}</details>")
        params.append(f"{_esc(key)}=&lt;{_plural(len(nested), 'jaxpr')}&gt;")
    param_text = f'<span class="param">[{" ".join(params)}]</span>' if params else ""
    ins = " ".join(names.use(x) for x in eqn.invars)
    src = ""
    if eqn.source:
        where = _short_source(eqn.source)
        src = (f'<span class="src" title="{_esc(eqn.source[0])}:{eqn.source[1]}">'
               f'# {_esc(where)}</span>')
    return (f'<div class="eqn">{outs} = <span class="prim">{_esc(eqn.prim.name)}</span>'
            f"{param_text} {ins}{src}</div>" + "".join(subs))


def _jaxpr_body(jaxpr, names):
    consts = " ".join(names.decl(v) for v in jaxpr.constvars)
    ins = " ".join(names.decl(v) for v in jaxpr.invars)
    rows = [f"<div>{{ lambda {consts}; {ins}. let</div>", '<div class="body">']
    rows += [_eqn_html(e, names) for e in jaxpr.eqns]
    outs = ", ".join(names.use(x) for x in jaxpr.outvars)
    rows.append(f"</div><div>&nbsp;in ({outs}{',' if len(jaxpr.outvars) == 1 else ''}) }}</div>")
    return "".join(rows)


def _jaxpr_summary(jaxpr):
    """`3 inputs · 1 output · 7 equations (2 nested) · sin ×2, mul ×1`."""
    jx = _as_jaxpr(jaxpr)
    top, total = len(jx.eqns), count_equations(jx)
    eqns = _plural(total, "equation") + (f" ({total - top} nested)" if total > top else "")
    parts = [_plural(len(jx.invars), "input"), _plural(len(jx.outvars), "output"), eqns]
    if jx.constvars:
        parts.insert(0, _plural(len(jx.constvars), "constant"))
    counts = sorted(primitive_counts(jx).items(), key=lambda kv: (-kv[1], kv[0]))
    top_prims = ", ".join(f"{k} ×{v}" for k, v in counts[:6])
    if len(counts) > 6:
        top_prims += ", …"
    return " · ".join(parts) + (f" · {top_prims}" if top_prims else "")


def _jaxpr_block(jaxpr):
    return (f'<div class="fg-head">{_esc(_jaxpr_summary(jaxpr))}</div>'
            f'<div class="fg-ir">{_jaxpr_body(_as_jaxpr(jaxpr), _HtmlNames())}</div>')


def jaxpr_html(jaxpr):
    """A jaxpr (or ClosedJaxpr) as HTML: a summary line with counts, typed variables
    (weak types marked `~`), sub-jaxprs that fold open, each equation's source line."""
    return _STYLE + _jaxpr_block(jaxpr)


# --- stages ------------------------------------------------------------------------------

def _signature(closed):
    ins = ", ".join(a.str_short() for a in closed.in_avals)
    outs = ", ".join(a.str_short() for a in closed.out_avals)
    return f"({ins}) -> ({outs})"


def _stage_name(lowered):
    fun = getattr(lowered.traced, "fun", None)
    return getattr(fun, "name", "f")


def _stablehlo_op_count(text):
    return sum(1 for line in text.splitlines() if " = stablehlo." in line
               or line.strip().startswith("stablehlo."))


def lowered_html(lowered):
    """The (optimized) jaxpr and its StableHLO module side by side."""
    text = lowered.as_text()
    head = (f"<b>jit({_esc(_stage_name(lowered))})</b> lowered "
            f"{_esc(_signature(lowered.jaxpr))} · "
            f"{_plural(_stablehlo_op_count(text), 'StableHLO op')}")
    return (_STYLE + f'<div class="fg-head">{head}</div>'
            '<div class="fg-side"><div><b class="fg-head">jaxpr</b>'
            f"{_jaxpr_block(lowered.jaxpr)}</div>"
            '<div><b class="fg-head">StableHLO</b>'
            f'<pre class="fg-pre">{_esc(text)}</pre></div></div>')


def format_bytes(n):
    """1536 -> '1.5 KiB'."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{int(n)} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def _table(rows, header=None):
    head = ("<tr>" + "".join(f"<th>{_esc(h)}</th>" for h in header) + "</tr>") if header else ""
    body = "".join("<tr>" + "".join(
        f'<td class="num">{_esc(c)}</td>' if i else f"<td>{_esc(c)}</td>"
        for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f'<table class="fg-tab">{head}{body}</table>'


def _cost_rows(cost):
    """XLA's cost analysis, the totals first; per-operand entries ('bytes accessed0{}')
    are left out."""
    main = ("flops", "transcendentals", "bytes accessed", "optimal_seconds")
    rows = []
    for key in main:
        if key in cost:
            value = cost[key]
            shown = format_bytes(value) if key == "bytes accessed" else f"{value:g}"
            rows.append((key, shown))
    return rows


def _memory_rows(stats):
    rows = []
    for name in dir(stats):
        if name.endswith("_in_bytes") and not name.startswith("host_"):
            rows.append((name[:-len("_in_bytes")].replace("_", " "),
                         format_bytes(getattr(stats, name))))
    return rows


def _try(fn):
    try:
        return fn(), None
    except Exception as e:  # a backend may not implement an analysis: show why
        return None, f"{type(e).__name__}: {e}"


def compiled_html(compiled):
    """A compiled stage: XLA's cost and memory analyses, with the jaxpr, the
    StableHLO and XLA's optimized HLO folded below."""
    lowered = compiled.lowered
    head = (f"<b>jit({_esc(_stage_name(lowered))})</b> compiled "
            f"{_esc(_signature(lowered.jaxpr))}")
    cost, cost_err = _try(compiled.cost_analysis)
    memory, mem_err = _try(compiled.memory_analysis)
    cost_html = _table(_cost_rows(cost)) if cost else f"<i>{_esc(cost_err or 'none')}</i>"
    mem_html = _table(_memory_rows(memory)) if memory is not None else \
        f"<i>{_esc(mem_err or 'none')}</i>"
    hlo, hlo_err = _try(compiled.as_text)
    return (_STYLE + f'<div class="fg-head">{head}</div>'
            '<div class="fg-side">'
            f'<div><b class="fg-head">cost analysis</b>{cost_html}</div>'
            f'<div><b class="fg-head">memory analysis</b>{mem_html}</div></div>'
            f'<details><summary class="fg-head">jaxpr</summary>{_jaxpr_block(lowered.jaxpr)}'
            "</details>"
            f'<details><summary class="fg-head">StableHLO</summary>'
            f'<pre class="fg-pre">{_esc(lowered.as_text())}</pre></details>'
            f'<details><summary class="fg-head">optimized HLO</summary>'
            f'<pre class="fg-pre">{_esc(hlo if hlo is not None else hlo_err)}</pre></details>')


# --- arrays ---------------------------------------------------------------------------------

def _stats(values):
    """min / max / mean of a real, non-empty array as text ('' otherwise)."""
    if values.size == 0 or values.dtype.kind in "bcOSU":
        return ""
    with np.errstate(all="ignore"):
        as_float = values.astype(np.float64)
        return (f"min {as_float.min():.4g} · max {as_float.max():.4g} · "
                f"mean {as_float.mean():.4g}")


def array_html(array, threshold=200, edgeitems=3):
    """An array: a `f32[3,4]` header with dtype, size and weak type, then its values
    (arrays over `threshold` elements show only `edgeitems` at each edge)."""
    aval = array.aval
    parts = [f"<b>{_esc(aval.str_short())}</b>", _esc(aval.dtype.name),
             format_bytes(aval.size * aval.dtype.itemsize)]
    if aval.weak_type:
        parts.append('<span class="weak" title="from a Python scalar">weak type</span>')
    if array.is_deleted():
        return _STYLE + f'<div class="fg-head">Array {" · ".join(parts)} · deleted</div>'
    values = np.asarray(array)
    stats = _stats(values)
    if stats and values.size > 1:
        parts.append(_esc(stats))
    body = np.array2string(values, threshold=threshold, edgeitems=edgeitems,
                           separator=", ", max_line_width=100)
    return (_STYLE + f'<div class="fg-head">Array {" · ".join(parts)}</div>'
            f'<pre class="fg-pre">{_esc(body)}</pre>')


# --- text reports ------------------------------------------------------------------------------

def ir_report(closed, *args, **kwargs):
    """Counts of equations by primitive, as text: a quick picture of a program's size.

    Takes a jaxpr, or a function and its arguments (then traced with make_jaxpr)."""
    if callable(closed) and not isinstance(closed, (ir.Jaxpr, ir.ClosedJaxpr)):
        closed = _make_jaxpr(closed)(*args, **kwargs)
    counts = primitive_counts(closed)
    width = max((len(k) for k in counts), default=0)
    return "\n".join(f"{k:<{width}}  {v}"
                     for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _residual_where(residual):
    # Values made by no traced equation are the function's inputs or closed-over constants.
    return _short_source(residual.source) if residual.source else "(an input or constant)"


def residuals_report(f, *args):
    """What reverse mode keeps alive for `vjp(f, *args)`: each residual's type, size and
    the source line that made it, largest first, then the totals per line."""
    _, pullback = _vjp(f, *args)
    residuals = list(pullback.residuals)
    name = getattr(f, "__name__", type(f).__name__)
    total = sum(r.nbytes for r in residuals)
    lines = [f"vjp({name}) keeps {_plural(len(residuals), 'residual')} alive: "
             f"{format_bytes(total)}"]
    if not residuals:
        return lines[0]
    rows = [(r.aval.str_short(), format_bytes(r.nbytes),
             _residual_where(r)) for r in
            sorted(residuals, key=lambda r: -r.nbytes)]
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    lines += [f"  {t:<{w0}}  {b:>{w1}}  {s}" for t, b, s in rows]
    per_line = {}
    for r in residuals:
        key = _residual_where(r)
        per_line[key] = per_line.get(key, 0) + r.nbytes
    if len(per_line) > 1:
        lines.append("by source line:")
        lines += [f"  {format_bytes(n):>{w1}}  {where}" for where, n in
                  sorted(per_line.items(), key=lambda kv: -kv[1])]
    return "\n".join(lines)


# --- debugging views -------------------------------------------------------------------------

def cache_info_html(info):
    """jit(f).cache_info(): one row per variant: kind, argument types, why it was made,
    where it was first called, trace and compile times."""
    head = (f"<b>jit({_esc(info.name)})</b> · {_plural(len(info.compiled), 'compiled variant')}"
            f" · {_plural(len(info.variants) - len(info.compiled), 'traced variant')}")
    rows = "".join(
        f"<tr><td>{i}</td><td>{_esc(v.kind)}</td><td><code>{_esc(v.signature())}</code></td>"
        f"<td>{_esc(v.why())}</td><td>{_esc(v.caller_text())}</td>"
        f"<td>{_esc(v.times_text())}</td></tr>" for i, v in enumerate(info.variants))
    header = "".join(f"<th>{h}</th>" for h in ("#", "kind", "arguments", "why", "first call",
                                                "time"))
    return (_STYLE + f'<div class="fg-head">{head}</div>'
            f'<table class="fg-tab"><tr>{header}</tr>{rows}</table>')


def nonfinite_html(report):
    """find_nonfinite's report: the headline, the equation, its inputs' and outputs'
    types, ranges and non-finite counts, and the enclosing equations."""
    head = f'<div class="fg-head"><b>{_esc(report.headline())}</b></div>'
    if not report.found:
        return _STYLE + head
    path = "".join(f"<li>{_esc(p)}</li>" for p in report.path)
    rows = [(f"input {s.name}", s.type, s.range_text()) for s in report.inputs]
    rows += [(f"output {s.name}", s.type, s.range_text()) for s in report.outputs]
    return (_STYLE + head + f'<pre class="fg-pre">{_esc(report.equation)}</pre>'
            + _table(rows, ("value", "type", "range"))
            + (f'<div class="fg-head">inside (outermost first):<ol>{path}</ol></div>'
               if path else ""))


# --- what Jupyter shows ---------------------------------------------------------------------
# The types live in lower layers, which cannot import their renderers; they get their HTML
# view here, the way funcgraph.numpy gives arrays their operators.

ir.Jaxpr._repr_html_ = jaxpr_html
ir.ClosedJaxpr._repr_html_ = jaxpr_html
ir.Jaxpr.diff = diff
ir.ClosedJaxpr.diff = diff
CacheInfo._repr_html_ = cache_info_html
NonfiniteReport._repr_html_ = nonfinite_html
_Array._repr_html_ = array_html
_Lowered._repr_html_ = lowered_html
_Compiled._repr_html_ = compiled_html
