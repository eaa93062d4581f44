"""The optional C part of funcgraph (everything else is in pyproject.toml).

funcgraph._cdispatch is the jit fast path in C (funcgraph/transforms/fast_dispatch.py
says what it does).  It is optional: where no C compiler is found, pip installs
funcgraph without it and the same path runs in Python.
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension("funcgraph._cdispatch", ["funcgraph/_cdispatch.c"],
                             optional=True)])
