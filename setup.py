"""The optional C part of funcgraph (everything else is in pyproject.toml).

funcgraph._cdispatch is the jit fast path in C (funcgraph/transforms/fast_dispatch.py
says what it does); funcgraph._libm runs the C math library's functions that XLA's CPU
code calls, for eager results equal to XLA's (funcgraph/primitives/host_math.py);
funcgraph._source finds the user's source line of each traced equation.  All three
are optional: where no C compiler is found, pip installs funcgraph without them and the
same paths run in Python or compiled.
"""
from setuptools import Extension, setup

_MODE = ["funcgraph/_xla_mode.h"]  # XLA's floating-point mode, shared by both

setup(ext_modules=[Extension("funcgraph._cdispatch", ["funcgraph/_cdispatch.c"], depends=_MODE,
                             optional=True),
                   Extension("funcgraph._libm", ["funcgraph/_libm.c"], depends=_MODE,
                             optional=True),
                   Extension("funcgraph._source", ["funcgraph/_source.c"], optional=True)])
