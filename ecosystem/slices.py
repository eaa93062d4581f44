"""Which of each library's own test files run: `suite` is the bounded slice the test
suite runs (tests/test_ecosystem.py), `full` the slice measured for docs/ecosystem.md."""
import glob
import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
UPSTREAM = os.path.join(HERE, "upstream")


def _site(package):
    """The folder that holds an installed package (its tests ship in its wheel)."""
    spec = importlib.util.find_spec(package)
    return os.path.dirname(os.path.dirname(spec.origin))


# library -> (where its tests run from, files of the suite's slice, files of the full
# slice: globs relative to that folder); each test file's own deselections follow.
SLICES = {
    "optax": (lambda: _site("optax"),
              ["optax/_src/update_test.py", "optax/_src/transform_test.py",
               "optax/_src/numerics_test.py", "optax/transforms/_clipping_test.py"],
              ["optax/_src/*_test.py", "optax/losses/*_test.py",
               "optax/schedules/*_test.py", "optax/transforms/*_test.py"]),
    "chex": (lambda: _site("chex"),
             ["chex/_src/asserts_test.py", "chex/_src/dataclass_test.py"],
             ["chex/_src/*_test.py"]),
    "flax_linen": (lambda: os.path.join(UPSTREAM, "flax"),
                   ["tests/linen/linen_linear_test.py", "tests/linen/linen_activation_test.py"],
                   ["tests/linen/*_test.py"]),
    "flax_nnx": (lambda: os.path.join(UPSTREAM, "flax"),
                 ["tests/nnx/nn/linear_test.py", "tests/nnx/rngs_test.py"],
                 ["tests/nnx/*_test.py", "tests/nnx/nn/*_test.py"]),
    "equinox": (lambda: os.path.join(UPSTREAM, "equinox"),
                ["tests/test_filters.py", "tests/test_tree.py"],
                ["tests/test_*.py"]),
    "numpyro": (lambda: os.path.join(UPSTREAM, "numpyro"),
                ["test/test_constraints.py"],
                ["test/test_handlers.py", "test/test_transforms.py",
                 "test/test_constraints.py", "test/test_util.py",
                 "test/test_distributions_util.py", "test/test_optimizers.py"]),
    "distrax": (lambda: _site("distrax"),
                ["distrax/_src/distributions/normal_test.py"],
                [f"distrax/_src/distributions/{name}_test.py"
                 for name in ("normal", "beta", "gamma", "uniform")]
                + [f"distrax/_src/bijectors/{name}_test.py"
                   for name in ("tanh", "scalar_affine", "sigmoid", "block")]),
    "diffrax": (lambda: os.path.join(UPSTREAM, "diffrax"),
                ["test/test_term.py"],
                [f"test/test_{name}.py" for name in (
                    "term", "vmap", "interpolation", "misc", "global_interpolation",
                    "local_interpolation", "saveat_solution", "adaptive_stepsize_controller",
                    "step_to", "progress_meter", "event")]),
}

# Tests left out of both runs (jax's and funcgraph's), with the reason.
DESELECTED = {
    "chex": {
        "chex/_src/asserts_chexify_test.py::AssertsChexifyTest::test_uninspected_checks":
            "runs atexit's exit functions in the middle of the run: optree (funcgraph's "
            "pytrees) empties its registry at exit, so every later test of the process "
            "fails on funcgraph",
    },
}

LIBRARIES = list(SLICES)


def root(lib):
    return SLICES[lib][0]()


def test_files(lib, *, full):
    """The test files of the slice (paths relative to root(lib)) and pytest's extra
    arguments."""
    where, suite, whole = SLICES[lib]
    base = where()
    patterns = whole if full else suite
    files = sorted({os.path.relpath(path, base) for pattern in patterns
                    for path in glob.glob(os.path.join(base, pattern))})
    deselect = [arg for test in DESELECTED.get(lib, {}) for arg in ("--deselect", test)]
    return files, deselect
