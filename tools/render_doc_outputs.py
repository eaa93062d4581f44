"""Fill in the outputs of a docs page from a real run.

    .venv/bin/python tools/render_doc_outputs.py docs/debugging.md

Runs the page's ```python blocks in order in one namespace (as tests/test_docs.py does)
and replaces the ```text block that directly follows a python block with what that
block printed (stdout and stderr).  A comment `<!-- render-html: images/x.html = expr -->`
after a block writes expr's `_repr_html_()` to docs/images/x.html.  Line numbers in the
outputs are the page's own (outputs change no line count once written, so a second run
is stable).  Blocks fenced ```python devices=8 need 8 devices: render such a page with
XLA_FLAGS=--xla_force_host_platform_device_count=8 set."""
import contextlib
import io
import os
import re
import sys

FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*\n", re.S | re.M)
HTML_NOTE = re.compile(r"<!-- render-html: (\S+) = (.+?) -->")
PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{title}</title></head>
<body>
{body}
</body></html>
"""


def _run(source, line, name, namespace):
    out = io.StringIO()
    code = compile("\n" * line + source, name, "exec")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        exec(code, namespace)
    return out.getvalue()


def _write_html(text, namespace, docs_dir):
    """The HTML files that the render-html comments in text ask for."""
    for target, expr in HTML_NOTE.findall(text):
        html = eval(expr, namespace)._repr_html_()
        with open(os.path.join(docs_dir, target), "w") as f:
            f.write(PAGE.format(title=os.path.basename(target), body=html))


def render(path):
    with open(path) as f:
        text = f.read()
    namespace = {"__name__": "__doc_example__"}
    pieces, pos, pending = [], 0, None
    docs_dir = os.path.dirname(os.path.abspath(path))
    for m in FENCE.finditer(text):
        between = text[pos:m.start()]
        _write_html(between, namespace, docs_dir)
        kind = m.group(1).strip()
        if kind == "text" and pending is not None and not between.strip():
            pieces.append(text[pos:m.start()] + "```text\n" + pending + "```\n")
        else:
            pieces.append(text[pos:m.end()])
        pending = None
        if kind.split(" ")[0] == "python":  # also `python devices=8` (docs/scaling.md)
            line = text[:m.start()].count("\n") + 1
            pending = _run(m.group(2), line, os.path.basename(path), namespace)
        pos = m.end()
    pieces.append(text[pos:])
    _write_html(text[pos:], namespace, docs_dir)
    with open(path, "w") as f:
        f.write("".join(pieces))


if __name__ == "__main__":
    for page in sys.argv[1:]:
        render(page)
