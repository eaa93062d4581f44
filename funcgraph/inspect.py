"""Views of what a program became: HTML renderings of jaxprs, lowered modules and
arrays for Jupyter (`_repr_html_`), and text reports.

The text form of a jaxpr stays JAX's (`str(jaxpr)`); the HTML form adds colour
for types, sub-jaxprs that fold open, and each equation's source line."""
import html
import os

from funcgraph import ir

_STYLE = (
    "<style>"
    ".fg-ir{font-family:var(--jp-code-font-family,monospace);font-size:12.5px;line-height:1.45}"
    ".fg-ir .ty{color:#6a7f9a}.fg-ir .prim{color:#7c3aed;font-weight:600}"
    ".fg-ir .param{color:#9a6700}.fg-ir .src{color:#8a8a8a;font-style:italic}"
    ".fg-ir .lit{color:#0a7d32}.fg-ir details{margin-left:2em}"
    ".fg-ir summary{cursor:pointer;color:#555}"
    ".fg-side{display:flex;gap:1.5em;align-items:flex-start}"
    ".fg-side pre{margin:0;font-size:12px}"
    "</style>"
)


def _esc(text):
    return html.escape(str(text))


class _HtmlNames(ir._Names):
    def decl(self, var):
        return f'{_esc(self(var))}<span class="ty">:{_esc(var.aval.str_short())}</span>'

    def use(self, x):
        if isinstance(x, ir.Literal):
            return f'<span class="lit">{_esc(ir.format_literal(x))}</span>'
        return _esc(self(x))


def _eqn_html(eqn, names):
    outs = " ".join(names.decl(v) for v in eqn.outvars)
    params, subs = [], []
    for key, value in sorted(eqn.params.items()):
        nested = [value] if isinstance(value, ir.ClosedJaxpr) else (
            [v for v in value if isinstance(v, ir.ClosedJaxpr)] if isinstance(value, tuple) else [])
        if nested:
            for i, sub in enumerate(nested):
                label = key if len(nested) == 1 else f"{key}[{i}]"
                subs.append(f"<details><summary>{_esc(label)}: "
                            f"{len(sub.jaxpr.eqns)} equations</summary>"
                            f"{_jaxpr_body(sub.jaxpr, names)}</details>")
            params.append(f"{_esc(key)}=&lt;jaxpr&gt;")
        else:
            params.append(f"{_esc(key)}={_esc(ir.format_param(value, 0, names, False))}")
    param_text = f'<span class="param">[{" ".join(params)}]</span>' if params else ""
    ins = " ".join(names.use(x) for x in eqn.invars)
    src = ""
    if eqn.source:
        file, line, fn = eqn.source
        src = f'  <span class="src"># {_esc(os.path.basename(file))}:{line} ({_esc(fn)})</span>'
    return (f"<div>{outs} = <span class=\"prim\">{_esc(eqn.prim.name)}</span>{param_text} "
            f"{ins}{src}</div>" + "".join(subs))


def _jaxpr_body(jaxpr, names):
    consts = " ".join(names.decl(v) for v in jaxpr.constvars)
    ins = " ".join(names.decl(v) for v in jaxpr.invars)
    rows = [f"<div>{{ lambda {consts}; {ins}. let</div>", '<div style="margin-left:2em">']
    rows += [_eqn_html(e, names) for e in jaxpr.eqns]
    outs = ", ".join(names.use(x) for x in jaxpr.outvars)
    rows.append(f"</div><div>&nbsp;in ({outs}{',' if len(jaxpr.outvars) == 1 else ''}) }}</div>")
    return "".join(rows)


def jaxpr_html(jaxpr):
    """A jaxpr as HTML: typed variables, folding sub-jaxprs, source lines."""
    return _STYLE + f'<div class="fg-ir">{_jaxpr_body(jaxpr, _HtmlNames())}</div>'


def lowered_html(lowered):
    """The jaxpr and its StableHLO side by side."""
    return (_STYLE + '<div class="fg-side"><div><b>jaxpr</b>'
            f'<div class="fg-ir">{_jaxpr_body(lowered.jaxpr.jaxpr, _HtmlNames())}</div></div>'
            f"<div><b>StableHLO</b><pre>{_esc(lowered.as_text())}</pre></div></div>")


def array_html(array):
    return f"<pre>{_esc(repr(array))}</pre>"


def ir_report(closed):
    """Counts of equations by primitive, as text: a quick picture of a program's size."""
    counts = {}

    def visit(jaxpr):
        for eqn in jaxpr.eqns:
            counts[eqn.prim.name] = counts.get(eqn.prim.name, 0) + 1
            for sub in ir.subjaxprs(eqn.params):
                visit(sub.jaxpr)
    visit(closed.jaxpr if isinstance(closed, ir.ClosedJaxpr) else closed)
    width = max((len(k) for k in counts), default=0)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))
