"""docs/jaxpr_parity.md is what tools/gen_parity_docs.py writes from the parity tables."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import gen_parity_docs  # noqa: E402


def test_parity_page_is_up_to_date():
    with open(gen_parity_docs.PARITY_MD) as f:
        assert f.read() == gen_parity_docs.render(), (
            "docs/jaxpr_parity.md is stale: run .venv/bin/python tools/gen_parity_docs.py")
