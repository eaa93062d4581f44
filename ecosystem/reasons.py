"""Why a test that passes under jax does not pass under funcgraph: patterns over test
ids, per library, written into expected/LIB.tsv's reason column and rendered into
docs/ecosystem.md (`python ecosystem/reasons.py` does both)."""
import collections
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402
import slices  # noqa: E402

UNDIAGNOSED = "not diagnosed yet"

# (library, regular expression over the test id, reason); the first match wins.
REASONS = [
    ("chex", r"test_uninspected_checks", slices.DESELECTED["chex"].get(
        "chex/_src/asserts_chexify_test.py::AssertsChexifyTest::test_uninspected_checks", "")),
    ("chex", r"test_is_traceable__with_jit|test_incorrect_ordering",
     "chex recognises a jitted function by 'PjitFunction' in its type's name"),
    ("chex", r"test_parallel_ops_equivalence",
     "all_to_all over a vmap axis is not supported by funcgraph's collectives"),
    ("flax_linen", r"Fp8Test::test_fp8_(einsum|dot_general_injection)",
     "funcgraph's dot_general converts mixed fp8 operands (e4m3 x e5m2) to one dtype; "
     "jax's keeps them mixed"),
    ("flax_linen", r"Fp8Test::test_fp8_meta_dtype",
     "flax's fp8_meta32 is a user-defined extended dtype, which convert_element_type refuses"),
    ("flax_linen", r"summary_test.*test_module_reuse",
     "funcgraph's CSE merges the shared parameters' work across calls: the model costs 128 "
     "fewer flops than the sum of its blocks, which the test expects"),
    ("flax_nnx", r"spmd_test", "sharding in types (float32[2@X,4]) and layouts passed to "
     "with_sharding_constraint: funcgraph's types carry no sharding"),
    ("flax_nnx", r"mutable_array_test|test_eval_shape_mutable_array",
     "flax's hijax Variables need jax's high-level types under transformations, which "
     "funcgraph does not have"),
    ("numpyro", r"test_bijective_transforms",
     "rounding: the smoothed DCT's log-determinant is -1.19e-6 against a tolerance of 1e-6 "
     "(jax: -7.2e-7); funcgraph's DCT is the closer to float64 SciPy per element"),
    ("equinox", r"test_speed_", "a timing ratio, measured on a loaded 2-core machine"),
    ("equinox", r"test_make_jaxpr",
     "program differs: funcgraph emits expand_dims for x[None] where jax emits broadcast_in_dim"),
    ("equinox", r"test_finalise_jaxpr.*test_custom_jvp",
     "equinox reads jax's custom_jvp_call params (subfuns, call_wrapped)"),
    ("flax_linen", r"TransformTest::test_jit(_decorated|_with_setup_helpers)?$",
     "compares an eager model with its jit bit for bit: funcgraph's eager dot_general runs "
     "NumPy's einsum on the CPU, whose sums round differently from XLA's in the last bit "
     "(issue 29: eager results as XLA's bits)"),
    ("flax_nnx", r"integration_test",
     "the test file imports orbax.checkpoint, which needs jax internals funcgraph does not "
     "provide (jax.experimental.colocated_python, array_serialization, "
     "jax.extend.ifrt_programs)"),
]


def reason_for(lib, test):
    for library, pattern, reason in REASONS:
        if library == lib and re.search(pattern, test):
            return reason
    return UNDIAGNOSED


def annotate(lib):
    """Write the reasons into expected/LIB.tsv; the failing tests by reason."""
    table = run.read_expected(lib)
    failing = {t: reason_for(lib, t) for t, (a, b, _) in table.items()
               if a == "passed" and b != "passed"}
    run.write_expected(lib, {t: a for t, (a, _, _) in table.items() if a != "absent"},
                       {t: b for t, (_, b, _) in table.items() if b != "absent"}, failing)
    by_reason = collections.defaultdict(list)
    for test, reason in sorted(failing.items()):
        by_reason[reason].append(test)
    return by_reason


def render():
    lines = []
    for lib in slices.LIBRARIES:
        by_reason = annotate(lib)
        if not by_reason:
            continue
        lines.append(f"**{lib}**\n")
        for reason, tests in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"- {reason} ({len(tests)}):")
            lines.extend(f"  - `{t}`" for t in tests)
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    section = render()
    path = os.path.join(HERE, "..", "docs", "ecosystem.md")
    with open(path) as f:
        doc = f.read()
    start, end = "<!-- failures: ecosystem/reasons.py -->", "<!-- end of failures -->"
    head, _, rest = doc.partition(start)
    _, _, tail = rest.partition(end)
    with open(path, "w") as f:
        f.write(head + start + "\n\n" + section + "\n" + end + tail)
