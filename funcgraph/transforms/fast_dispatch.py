"""The jit fast path: a cached call whose positional arguments are arrays, scalars or
Python containers of them.

Three pieces, each in Python here and in C in `funcgraph._cdispatch` (built by pip where
a C compiler exists; see setup.py):

- `FastJit`, the base class of JitFunction: its `__call__` keys the positional
  arguments by their avals (`flat_key`) and looks the key up in the function's
  `_flat_cache`, or, where they are Python containers of arrays, keys them by jaxlib's
  flatten (`container_key`) in `_container_cache`; it checks that no transformation is
  tracing in this thread and calls the entry's flat caller.  Any other call goes to
  the method `_slow_call(args, kwargs)`.
- `FlatCall`, the flat caller of a program on one device with no constants: the
  arguments' device buffers (`puts` transfers host values), jaxlib's `execute_sharded`
  with its C++ result handlers, Arrays of the results (the one result, or unflattened
  into the output tree).
- `flat_key`, the key of the fast-path cache.

The C module also holds `eager_numpy`, the common case of the eager NumPy path, which
interpreters/eval.py runs where this module hands it over (`set_fast_numpy_op`); the
Python loop in EvalTrace.process_primitive is its twin.

jax runs its dispatch in C++; each Python step here (a frame, a list comprehension,
an object) costs a few percent of that, which is why the C version exists.  The Python
classes are the reference and the fallback, and they run when the C module was not
built or when the environment variable FUNCGRAPH_PYTHON_DISPATCH=1 asks for them (the
suite runs the dispatch tests both ways).
"""
import os

import numpy as np

from funcgraph import backend, core
from funcgraph.array import Array
from funcgraph.config import config
from funcgraph.interpreters import eval as eval_module
from funcgraph.interpreters.eval import eval_trace

from funcgraph.native import cdispatch as _cdispatch  # None where not built

# Argument types looked up by their abstract value in the fast path; anything else
# (pytrees, tracers, other array-likes) takes the full path.
_HOST_LEAF_TYPES = frozenset(core.PYTHON_SCALARS) | {np.ndarray}


def py_flat_key(args):
    """The fast-path cache key of positional arguments that are all arrays or scalars:
    per argument its aval's token (an int per distinct dtype, shape, weak type: Python
    scalars are weak), with the sharding of a committed Array (it decides where the
    program runs).  NumPy values and
    Arrays of one aval share a key: they trace alike.  None where an argument is of
    another kind (a container, a tracer): such calls are not keyed here."""
    key = []
    for a in args:
        if type(a) is Array:
            token = a.aval.token
            key.append(token if a._sharding is None else (token, a._sharding))
        else:
            k = host_leaf_key(a)
            if k is None:
                return None
            key.append(k)
    return tuple(key)


# The aval tokens of NumPy arrays by (dtype, shape, x64 flag): making the aval costs
# more than the rest of a NumPy argument's key.  The flag is in the key because it
# decides the aval's dtype (a float64 array is float32 without x64).  The C fast path
# reads this dict too; it is emptied when it grows large (shapes that keep changing).
_ndarray_tokens = {}
_NDARRAY_TOKENS_KEPT = 4096


def host_leaf_key(a):
    """The key of a host argument (NumPy array or scalar, Python scalar): its aval's
    token; None for anything else."""
    t = type(a)
    if t is np.ndarray:
        k = (a.dtype, a.shape, config.jax_enable_x64)
        token = _ndarray_tokens.get(k)
        if token is None:
            token = core.get_aval(a).token
            if len(_ndarray_tokens) >= _NDARRAY_TOKENS_KEPT:
                _ndarray_tokens.clear()
            _ndarray_tokens[k] = token
        return token
    if t in _HOST_LEAF_TYPES or issubclass(t, np.generic):
        return core.get_aval(a).token
    return None


def container_key(args):
    """(leaves, fast-path key) of positional arguments that are Python containers: the
    key is jaxlib's treedef of the containers with flat_key of the leaves (None there
    where a leaf has no flat key); (None, None) where that flatten is unavailable or
    fails (a dict with keys that do not sort)."""
    flatten = backend.container_flattener()
    if flatten is None:
        return None, None
    try:
        leaves, treedef = flatten(args)
    except (TypeError, ValueError):
        return None, None
    return leaves, (treedef, flat_key(leaves))


class PyFastJit:
    """The Python version of FastJit (see the module docstring)."""

    def __call__(self, *args, **kwargs):
        if not (kwargs or config.dispatch_checks):
            leaves, key = args, flat_key(args)
            if key is not None:
                entry = self._flat_cache.get(key)
            elif self._container_cache:
                leaves, key = container_key(args)
                entry = self._container_cache.get(key)
            else:
                entry = None
            if entry is not None and core.current.trace is eval_trace:
                return (entry.flat_caller or entry.make_flat_caller())(leaves)
        return self._slow_call(args, kwargs)


class PyFlatCall:
    """The Python version of FlatCall (see the module docstring)."""
    __slots__ = ("execute", "handlers", "plain", "out_avals", "unflatten", "puts")

    def __init__(self, execute, handlers, plain, out_avals, unflatten, puts):
        self.execute = execute  # the executable's execute_sharded
        self.handlers = handlers  # its result handlers
        self.plain = plain  # its plain execute: the fallback on a TypeError
        self.out_avals = out_avals
        self.unflatten = unflatten  # outputs -> result; None: the one output is the result
        # per argument: put(x) -> buffer, for those with no buffer; None: the program
        # does not take this argument (unused)
        self.puts = puts

    def __call__(self, args):
        bufs = [a._buf if type(a) is Array and a._buf is not None else put(a)
                for a, put in zip(args, self.puts, strict=True) if put is not None]
        try:
            outs = self.execute(bufs).consume_with_handlers(self.handlers)
        except TypeError:
            outs = self.plain(bufs)
        arrays = [Array(None, aval, buf) for aval, buf in zip(self.out_avals, outs, strict=True)]
        return arrays[0] if self.unflatten is None else self.unflatten(arrays)


IN_C = _cdispatch is not None and os.environ.get("FUNCGRAPH_PYTHON_DISPATCH") != "1"
if IN_C:
    _cdispatch.setup(Array, core.ShapedArray, core.current, eval_trace, config, host_leaf_key,
                     _ndarray_tokens, backend.container_flattener, eval_module.wrap_value,
                     eval_module.LARGE_OP_SIZE)
    eval_module.set_fast_numpy_op(_cdispatch.eager_numpy)
    FastJit, FlatCall, flat_key = _cdispatch.FastJit, _cdispatch.FlatCall, _cdispatch.flat_key
else:
    FastJit, FlatCall, flat_key = PyFastJit, PyFlatCall, py_flat_key
