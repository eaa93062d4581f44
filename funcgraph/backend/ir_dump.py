"""config jax_dump_ir_to: every module funcgraph compiles (a real compile, not a cache
hit) is written as text to that directory, named as jax names its own dumps
(jax_ir0000_jit_f_compile.mlir: a running number, the module's name)."""
import itertools
import os
import re

from funcgraph.config import config

_numbers = itertools.count()
_MODULE_NAME = re.compile(r"module @([\w.$-]+)")


def dump(text):
    directory = config.jax_dump_ir_to
    if not directory:
        return
    match = _MODULE_NAME.search(text)
    name = match.group(1) if match else "module"
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"jax_ir{next(_numbers):04d}_{name}_compile.mlir")
    with open(path, "w") as f:
        f.write(text)
