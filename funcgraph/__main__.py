"""`python -m funcgraph run script.py [args]` (or `run -m module [args]`): runs a
program written for jax on funcgraph, unmodified: `import jax` means funcgraph in this
process and in every Python process it starts (subprocesses, pytest workers), through
FUNCGRAPH_AS_JAX=1 and the startup hook in funcgraph/jax_compat/startup.

`python -m funcgraph env` prints the shell lines that do the same for tools that start
Python themselves: eval "$(python -m funcgraph env)"."""
import os
import runpy
import sys

import funcgraph

USAGE = ("usage: python -m funcgraph run script.py [args]\n"
         "       python -m funcgraph run -m module [args]\n"
         "       python -m funcgraph env")


def startup_dir():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_compat", "startup")


def environment():
    """The variables that make every Python started with them mean funcgraph by jax."""
    path = os.environ.get("PYTHONPATH", "")
    parts = [startup_dir()] + [p for p in path.split(os.pathsep) if p and p != startup_dir()]
    return {"FUNCGRAPH_AS_JAX": "1", "PYTHONPATH": os.pathsep.join(parts)}


def run(args):
    if not args or args[0] == "-m" and len(args) < 2:
        sys.exit(USAGE)
    os.environ.update(environment())
    funcgraph.install_as_jax()
    if args[0] == "-m":
        sys.argv = [args[1]] + args[2:]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(args)
        sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
        runpy.run_path(args[0], run_name="__main__")


def main(argv):
    if argv[:1] == ["run"]:
        return run(argv[1:])
    if argv == ["env"]:
        for name, value in environment().items():
            print(f"export {name}={value!r}".replace("'", '"'))
        return None
    sys.exit(USAGE)


if __name__ == "__main__":
    main(sys.argv[1:])
