# Quick start: `make demo` and `make test`; each creates .venv when it is missing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Whole files per worker: each process then compiles a file's common programs once
# (both libraries cache compiles in process); files are handed out in the order
# tests/conftest.py sorts them, the 8-device subprocess first.
PYTEST_ARGS ?= -n 2 --dist loadfile --no-loadscope-reorder

.PHONY: demo test test-fast bench install-cuda clean

# setup.py builds funcgraph's optional C part (the jit fast path, the C math library
# calls) into the source tree.
$(VENV)/.installed: pyproject.toml setup.py funcgraph/_cdispatch.c funcgraph/_libm.c funcgraph/_source.c
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PY) -m pip install --quiet -e ".[dev,notebook,ecosystem]"
	touch $@

demo: $(VENV)/.installed
	$(PY) examples/quickstart.py

test: $(VENV)/.installed-dev
	$(PY) -m pytest $(PYTEST_ARGS) tests

test-fast: $(VENV)/.installed-dev
	$(PY) -m pytest $(PYTEST_ARGS) -m "not slow" tests

# NVIDIA GPU support (CUDA 12): then `make test` and `make bench` run on the GPU.
install-cuda: $(VENV)/.installed-dev
	$(PY) -m pip install --quiet -e ".[cuda]"

bench: $(VENV)/.installed
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) build *.egg-info funcgraph/*.so
