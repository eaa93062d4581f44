"""Run a JAX library's own tests on funcgraph (under `python -m funcgraph run`) or on
the real jax (--oracle), and compare with the recorded outcomes.

    python ecosystem/run.py optax                 # funcgraph: the suite's slice
    python ecosystem/run.py optax --full          # the whole measured slice
    python ecosystem/run.py optax --record        # both libraries: rewrite expected/
    python ecosystem/run.py all --full --summary  # the table of docs/ecosystem.md

The slices are listed in slices.py; the tests of optax, chex and distrax run from their
installed wheels, the others from upstream/ (the libraries' test files at the pinned
versions, with their licenses).  expected/LIB.tsv holds, per test, its outcome under jax,
its outcome under funcgraph, and the reason where funcgraph's differs.
"""
import argparse
import collections
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import slices  # noqa: E402


def run_slice(lib, *, oracle, full, timeout=3000):
    """{test id: 'passed' | 'failed' | 'skipped'} of the library's slice."""
    files, extra = slices.test_files(lib, full=full)
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.xml")
        runner = ["-m", "pytest"] if oracle else ["-m", "funcgraph", "run", "-m", "pytest"]
        command = [sys.executable, *runner, *files, *extra, "-q",
                   "-c", os.path.join(HERE, "pytest.ini"), "--rootdir", slices.root(lib),
                   "--continue-on-collection-errors",
                   "--junitxml", report, "-o", "junit_family=xunit1"]
        env = dict(os.environ, JAX_PLATFORMS=os.environ.get("JAX_PLATFORMS", "cpu"))
        env.pop("FUNCGRAPH_AS_JAX", None)
        done = subprocess.run(command, cwd=slices.root(lib), env=env, capture_output=True,
                              text=True, timeout=timeout)
        if not os.path.exists(report):
            raise RuntimeError(f"{lib}: pytest wrote no report\n{done.stdout[-4000:]}\n"
                               f"{done.stderr[-4000:]}")
        return parse_junit(report, slices.root(lib))


def parse_junit(path, root):
    outcomes = {}
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        file = case.get("file") or case.get("classname", "").replace(".", "/") + ".py"
        name = f"{os.path.relpath(os.path.join(root, file), root)}::{case.get('name')}"
        if case.get("classname") and "." in case.get("classname"):
            name = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        if kinds & {"failure", "error"}:
            outcome = "failed"
        elif "skipped" in kinds:
            outcome = "skipped"
        else:
            outcome = "passed"
        outcomes[name] = outcome
    return outcomes


def read_expected(lib):
    """{test id: (jax outcome, funcgraph outcome, reason)} recorded for the library."""
    path = os.path.join(HERE, "expected", f"{lib}.tsv")
    table = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    test, under_jax, under_funcgraph, reason = (line.rstrip("\n").split("\t") + [""])[:4]
                    table[test] = (under_jax, under_funcgraph, reason)
    return table


def write_expected(lib, under_jax, under_funcgraph, reasons):
    path = os.path.join(HERE, "expected", f"{lib}.tsv")
    with open(path, "w") as f:
        f.write("# test\tunder jax\tunder funcgraph\treason (where funcgraph's differs)\n")
        for test in sorted(set(under_jax) | set(under_funcgraph)):
            a, b = under_jax.get(test, "absent"), under_funcgraph.get(test, "absent")
            reason = reasons.get(test, "") if a != b else ""
            f.write(f"{test}\t{a}\t{b}\t{reason}\n")


def regressions(lib, outcomes):
    """Tests recorded as passing under both that do not pass now."""
    return sorted(test for test, (a, b, _) in read_expected(lib).items()
                  if a == b == "passed" and test in outcomes and outcomes[test] != "passed")


def summary(lib):
    table = read_expected(lib)
    passing_jax = [t for t, (a, _, _) in table.items() if a == "passed"]
    both = [t for t in passing_jax if table[t][1] == "passed"]
    return len(both), len(passing_jax)


def summary_rows(libs):
    """The rows of docs/ecosystem.md's results table, one per library and the total."""
    rows, total = [], [0, 0]
    for lib in libs:
        passed, of = summary(lib)
        total[0] += passed
        total[1] += of
        rows.append(f"| {lib} | {passed} / {of} | {100 * passed / max(of, 1):.1f}% |")
    rows.append(f"| all | {total[0]} / {total[1]} | {100 * total[0] / max(total[1], 1):.1f}% |")
    return rows


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lib", help=f"one of {', '.join(slices.LIBRARIES)}, or all")
    parser.add_argument("--full", action="store_true", help="the whole measured slice")
    parser.add_argument("--oracle", action="store_true", help="run on the real jax")
    parser.add_argument("--record", action="store_true", help="run on both; rewrite expected/")
    parser.add_argument("--jax-only", action="store_true",
                        help="with --record: rerun jax alone, keep funcgraph's column")
    parser.add_argument("--keep-jax", action="store_true",
                        help="with --record: rerun funcgraph alone, keep jax's column")
    parser.add_argument("--summary", action="store_true", help="print the recorded table")
    args = parser.parse_args(argv)
    libs = slices.LIBRARIES if args.lib == "all" else [args.lib]
    if args.summary:
        print("| library | passing under funcgraph / under jax | share |")
        print("|---|---|---|")
        print("\n".join(summary_rows(libs)))
        return 0
    status = 0
    for lib in libs:
        if args.record:
            recorded = read_expected(lib)
            reasons = {t: r for t, (_, _, r) in recorded.items()}
            under_jax = ({t: a for t, (a, _, _) in recorded.items() if a != "absent"}
                         if args.keep_jax else run_slice(lib, oracle=True, full=args.full))
            under_funcgraph = ({t: b for t, (_, b, _) in recorded.items() if b != "absent"}
                               if args.jax_only else
                               run_slice(lib, oracle=False, full=args.full))
            write_expected(lib, under_jax, under_funcgraph, reasons)
            print(lib, "recorded; passing under jax and funcgraph / under jax:", *summary(lib))
            continue
        outcomes = run_slice(lib, oracle=args.oracle, full=args.full)
        counts = collections.Counter(outcomes.values())
        print(lib, dict(counts))
        lost = regressions(lib, outcomes)
        if lost and not args.oracle:
            status = 1
            print(f"{lib}: {len(lost)} tests pass under jax and passed before, but fail now:")
            print("\n".join("  " + t for t in lost))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
