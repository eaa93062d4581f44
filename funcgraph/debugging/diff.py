"""The transformation diff: what a transformation or a pass did to a program.

    diff(make_jaxpr(f)(x), make_jaxpr(grad(f))(x))
    make_jaxpr(f)(x).diff(passes.optimize(make_jaxpr(f)(x)))

Equations are matched modulo variable names: every value gets a number from what
computes it (value numbering: an input by its position and type, a literal by its
value, an equation's output by its primitive, parameters and the numbers of its
inputs), so `mul b a` in one program matches `mul d c` in the other when both
multiply the same things.  The two equation sequences are aligned on those numbers
(longest matching blocks, difflib); what is left is removed (-), added (+), or, when
an unmatched equation on each side has the same primitive, rewritten (~).

`str()` gives a unified-diff-like text; `_repr_html_` a side-by-side table."""
import difflib
import html

from funcgraph import ir

SAME, ADDED, REMOVED, REWRITTEN = "=", "+", "-", "~"


def _param_text(value):
    if isinstance(value, ir.ClosedJaxpr):
        return ir.pretty_print(value.jaxpr)
    if isinstance(value, ir.Jaxpr):
        return ir.pretty_print(value)
    if isinstance(value, tuple) and any(isinstance(v, ir.ClosedJaxpr) for v in value):
        return "(" + " ".join(_param_text(v) for v in value) + ")"
    return ir.format_param(value, 0, ir._Names(), False)


def eqn_line(eqn, names):
    """`c:f32[3] = mul b a`, sub-jaxprs shown as their equation count."""
    ins = " ".join(names(x) for x in eqn.invars)  # named first: they appear first
    outs = " ".join(f"{names(v)}:{v.aval.str_short()}" for v in eqn.outvars)
    params = []
    for k, v in sorted(eqn.params.items()):
        subs = list(ir.subjaxprs({k: v}))
        if subs:
            n = sum(len(s.jaxpr.eqns) for s in subs)
            params.append(f"{k}={{{n} eqn{'' if n == 1 else 's'}}}")
        else:
            params.append(f"{k}={ir.format_param(v, 0, names, False)}")
    return f"{outs} = {eqn.prim.name}{'[' + ' '.join(params) + ']' if params else ''} {ins}"


class _Numbering:
    """Value numbers shared by the two programs compared."""

    def __init__(self):
        self.table = {}

    def number(self, key):
        n = self.table.get(key)
        if n is None:
            n = self.table[key] = len(self.table)
        return n

    def eqn_keys(self, jaxpr):
        """One number per equation (from its primitive, params and input numbers)."""
        env = {}
        for i, v in enumerate(jaxpr.constvars):
            env[v] = self.number(("const", i, v.aval.str_short()))
        for i, v in enumerate(jaxpr.invars):
            env[v] = self.number(("in", i, v.aval.str_short()))

        def read(x):
            if isinstance(x, ir.Literal):
                return self.number(("lit", ir.format_literal(x)))
            if x not in env:  # unbound (malformed): its own number
                env[x] = self.number(("free", id(x)))
            return env[x]

        keys = []
        for eqn in jaxpr.eqns:
            params = tuple((k, _param_text(v)) for k, v in sorted(eqn.params.items()))
            key = self.number((eqn.prim.name, params, tuple(read(x) for x in eqn.invars),
                               tuple(v.aval.str_short() for v in eqn.outvars)))
            keys.append(key)
            for i, v in enumerate(eqn.outvars):
                env[v] = self.number(("out", key, i))
        return keys


class Row:
    """One line of the diff: its kind (=, +, -, ~) and the equation on each side."""
    __slots__ = ("kind", "old", "new")

    def __init__(self, kind, old, new):
        self.kind = kind
        self.old = old  # text or None
        self.new = new


def _as_jaxpr(x):
    if isinstance(x, ir.ClosedJaxpr):
        return x.jaxpr
    if isinstance(x, ir.Jaxpr):
        return x
    raise TypeError(f"diff compares jaxprs (make_jaxpr(f)(x)), got {type(x).__name__}")


def _replace_rows(old_eqns, new_eqns, old_lines, new_lines):
    """Unmatched blocks: pair equations of the same primitive in order as rewritten."""
    rows, j = [], 0
    used = set()
    for i, eqn in enumerate(old_eqns):
        match = next((k for k in range(j, len(new_eqns))
                      if k not in used and new_eqns[k].prim is eqn.prim), None)
        if match is None:
            rows.append(Row(REMOVED, old_lines[i], None))
            continue
        for k in range(j, match):
            if k not in used:
                rows.append(Row(ADDED, None, new_lines[k]))
                used.add(k)
        rows.append(Row(REWRITTEN, old_lines[i], new_lines[match]))
        used.add(match)
        j = match + 1
    rows += [Row(ADDED, None, new_lines[k]) for k in range(len(new_eqns)) if k not in used]
    return rows


class JaxprDiff:
    """The equations two programs share, and what was added, removed or rewritten."""

    def __init__(self, old, new, labels=("before", "after")):
        self.labels = tuple(labels)
        old_j, new_j = _as_jaxpr(old), _as_jaxpr(new)
        numbering = _Numbering()
        old_keys, new_keys = numbering.eqn_keys(old_j), numbering.eqn_keys(new_j)
        old_names, new_names = ir._Names(), ir._Names()
        self.old_head = _head(old_j, old_names)
        self.new_head = _head(new_j, new_names)
        old_lines = [eqn_line(e, old_names) for e in old_j.eqns]
        new_lines = [eqn_line(e, new_names) for e in new_j.eqns]
        self.old_tail = _tail(old_j, old_names)
        self.new_tail = _tail(new_j, new_names)
        self.rows = []
        matcher = difflib.SequenceMatcher(None, old_keys, new_keys, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                self.rows += [Row(SAME, old_lines[i], new_lines[j])
                              for i, j in zip(range(i1, i2), range(j1, j2), strict=True)]
            else:
                self.rows += _replace_rows(old_j.eqns[i1:i2], new_j.eqns[j1:j2],
                                           old_lines[i1:i2], new_lines[j1:j2])

    def _of(self, kind):
        return [r for r in self.rows if r.kind == kind]

    @property
    def added(self):
        return [r.new for r in self._of(ADDED)]

    @property
    def removed(self):
        return [r.old for r in self._of(REMOVED)]

    @property
    def rewritten(self):
        return [(r.old, r.new) for r in self._of(REWRITTEN)]

    @property
    def unchanged(self):
        return [r.new for r in self._of(SAME)]

    def summary(self):
        return (f"{len(self.added)} added, {len(self.removed)} removed, "
                f"{len(self.rewritten)} rewritten, {len(self.unchanged)} unchanged")

    def __str__(self):
        old, new = self.labels
        lines = [f"--- {old}", f"+++ {new}", f"@@ {self.summary()} @@"]
        if self.old_head != self.new_head:
            lines += [f"- {self.old_head}", f"+ {self.new_head}"]
        else:
            lines.append(f"  {self.new_head}")
        for r in self.rows:
            if r.kind == SAME:
                lines.append(f"      {r.new}")
            elif r.kind == ADDED:
                lines.append(f"+     {r.new}")
            elif r.kind == REMOVED:
                lines.append(f"-     {r.old}")
            else:
                lines.append(f"~     {r.new}")
                lines.append(f"~       (was: {r.old})")
        if self.old_tail != self.new_tail:
            lines += [f"-   {self.old_tail}", f"+   {self.new_tail}"]
        else:
            lines.append(f"    {self.new_tail}")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self):
        return diff_html(self)


def _head(jaxpr, names):
    consts = " ".join(f"{names(v)}:{v.aval.str_short()}" for v in jaxpr.constvars)
    ins = " ".join(f"{names(v)}:{v.aval.str_short()}" for v in jaxpr.invars)
    return f"{{ lambda {consts}; {ins}. let"


def _tail(jaxpr, names):
    outs = ", ".join(names(x) for x in jaxpr.outvars)
    return f"in ({outs}{',' if len(jaxpr.outvars) == 1 else ''}) }}"


_COLORS = {SAME: "", ADDED: "background:#e6ffec", REMOVED: "background:#ffebe9",
           REWRITTEN: "background:#fff8c5"}
_ROW_CLASS = {SAME: "same", ADDED: "added", REMOVED: "removed", REWRITTEN: "rewritten"}
_HTML_STYLE = (
    "<style>.fg-diff{border-collapse:collapse;font-family:var(--jp-code-font-family,"
    "monospace);font-size:12px}.fg-diff td,.fg-diff th{padding:1px 8px;text-align:left;"
    "vertical-align:top;white-space:pre}.fg-diff th{font-family:sans-serif;"
    "border-bottom:1px solid #ccc}.fg-diff td.mark{color:#888;text-align:center}"
    ".fg-diff-head{font-family:sans-serif;font-size:12.5px;color:#333;margin:.2em 0}</style>")


def diff_html(d):
    """Side by side: the old program left, the new right, one row per aligned equation;
    added rows green, removed red, rewritten yellow."""
    esc = html.escape
    old, new = d.labels
    rows = [f'<tr><th></th><th>{esc(old)}</th><th>{esc(new)}</th></tr>',
            f'<tr><td class="mark"></td><td>{esc(d.old_head)}</td>'
            f'<td>{esc(d.new_head)}</td></tr>']
    for r in d.rows:
        style = _COLORS[r.kind]
        left = esc(r.old) if r.old is not None else ""
        right = esc(r.new) if r.new is not None else ""
        left_style = f' style="{style}"' if style and r.old is not None else ""
        right_style = f' style="{style}"' if style and r.new is not None else ""
        rows.append(f'<tr class="fg-diff-{_ROW_CLASS[r.kind]}">'
                    f'<td class="mark">{esc(r.kind if r.kind != SAME else "")}</td>'
                    f"<td{left_style}>{left}</td><td{right_style}>{right}</td></tr>")
    rows.append(f'<tr><td class="mark"></td><td>{esc(d.old_tail)}</td>'
                f'<td>{esc(d.new_tail)}</td></tr>')
    return (_HTML_STYLE + f'<div class="fg-diff-head">{esc(d.summary())}</div>'
            f'<table class="fg-diff">{"".join(rows)}</table>')


def diff(old, new, labels=("before", "after")):
    """What changed from jaxpr `old` to jaxpr `new` (a JaxprDiff: text by `str()`,
    a side-by-side table in Jupyter)."""
    return JaxprDiff(old, new, labels)
