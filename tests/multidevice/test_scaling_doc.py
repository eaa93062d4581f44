"""docs/scaling.md stays true: its ```python devices=8 blocks run here, in order in one
namespace (this suite has 8 virtual devices), and each prints exactly the ```text block
that follows it (tools/render_doc_outputs.py wrote those from a real run)."""
import contextlib
import io
import os
import re

import jax

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGE = os.path.join(ROOT, "docs", "scaling.md")
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*\n", re.S | re.M)

# The page shows what the pinned jax (0.10) prints. Lines jax 0.11 prints in their
# place: its XLA sends a host callback's result on from the callback's device to every
# device of the program (funcgraph takes the layout XLA chose; over Explicit axes it
# names every dimension in the spec, where jax 0.11 gives the callback's untyped result
# P()).
JAX_011_LINES = {
    "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)\n":
        "NamedSharding(mesh=Mesh('data': 2, 'model': 4, axis_types=(Explicit, Explicit)), "
        "spec=P(None,), memory_kind=device)\n",
}


def _as_installed_jax_prints(shown):
    if jax.__version_info__ < (0, 11):
        return shown
    for line, instead in JAX_011_LINES.items():
        shown = shown.replace(line, instead)
    return shown


def _blocks(text):
    """(line, source, the text block right after it or None) per `python devices=8` block."""
    fences = list(FENCE.finditer(text))
    out = []
    for m, after in zip(fences, fences[1:] + [None], strict=True):
        if m.group(1).strip() != "python devices=8":
            continue
        shown = None
        if after is not None and after.group(1).strip() == "text" and \
                not text[m.end():after.start()].strip():
            shown = after.group(2)
        out.append((text[:m.start()].count("\n") + 1, m.group(2), shown))
    return out


def test_scaling_page_blocks_print_what_the_page_shows():
    with open(PAGE) as f:
        text = f.read()
    blocks = _blocks(text)
    assert len(blocks) >= 5
    namespace = {"__name__": "__doc_example__"}
    for line, source, shown in blocks:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile("\n" * line + source, PAGE, "exec"), namespace)
        if shown is not None:
            assert printed.getvalue() == _as_installed_jax_prints(shown), \
                f"docs/scaling.md line {line}"
