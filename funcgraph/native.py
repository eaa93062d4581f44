"""funcgraph's optional C extensions, built by setup.py where a C compiler was found:
`cdispatch` (the jit fast path and the eager NumPy path's common case,
transforms/fast_dispatch.py) and `libm` (C math library functions and calls in XLA's
floating-point mode, primitives/host_math.py and interpreters/eval.py) and `source`
(the user's source line of a traced equation, core.user_source_info).  Each is None
where it was not built; the same paths then run in Python (or compiled)."""
import importlib


def _optional(name):
    try:
        return importlib.import_module(f"funcgraph.{name}")
    except ImportError:
        return None


cdispatch = _optional("_cdispatch")
libm = _optional("_libm")
source = _optional("_source")
