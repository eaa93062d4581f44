"""jit: trace once per argument signature, lower to StableHLO, compile with XLA,
cache the executable and dispatch to it.

Dispatch is one dict lookup keyed by (tree structure, static values, the
abstract value of every leaf).  Under another transformation (grad, vmap, an
outer jit) a jitted call becomes one `pjit` equation holding the traced jaxpr.
"""
import functools
import inspect
import logging
import math
import threading
import time
import warnings
import weakref

import numpy as np

from funcgraph import backend, core, dtypes, lowering, passes, refs, shape_poly, tree_util
from funcgraph.array import Array, default_device
from funcgraph.config import config, disable_jit
from funcgraph.interpreters.batching import manual_axes_key
from funcgraph.interpreters.eval import (compiled_eval, eval_jaxpr, eval_trace, is_eager,
                                         nonfinite_error, nonfinite_kind)
from funcgraph.interpreters.staging import trace_flat
from funcgraph.ir import ClosedJaxpr, Jaxpr, Literal, check as ir_check
from funcgraph.primitives.call import bind_call
from funcgraph.primitives.sharding_constraint import sharding_constraint_p
from funcgraph.sharding import NamedSharding, SingleDeviceSharding
from funcgraph.transforms import jit_cache, placement as placing
from funcgraph.transforms.api_util import arg_names, debug_info, flatten_args, flatten_fun
from funcgraph.transforms.fast_dispatch import FastJit, FlatCall, container_key, flat_key

logger = logging.getLogger("funcgraph.jit")

# Human-readable explanations of retraces, newest last (with jax_explain_cache_misses on).
retrace_log = []

# Filled by funcgraph.debugging.nonfinite (a higher layer): locate(closed, flat_args) ->
# the report of re-running a jaxpr equation by equation, checking each output for the
# values the jax_debug_nans/infs flags ask about.
nonfinite_locator = {}


# --- device buffers and compiled jaxprs ------------------------------------------

def to_buffer(x, aval, may_alias=False):
    """x's device buffer; a host value is transferred at its traced dtype (may_alias: see
    backend.device_put; only for buffers that live during one call and are not donated)."""
    if type(x) is Array:
        buf = x._buf
        return buf if buf is not None else x._device_buffer()
    if isinstance(x, core.Tracer):
        raise core.leaked_tracer_error(x)
    if type(x) is ShapeDtypeStruct:  # closed over: fine for eval_shape/make_jaxpr only
        raise TypeError("A ShapeDtypeStruct does not have a value and cannot be used as a "
                        "constant in a JAX function.")
    return backend.device_put(np.asarray(x, aval.dtype), may_alias=may_alias)


def to_buffers(leaves, avals, may_alias=True):
    """The device buffers of a call's argument leaves: an Array's own buffer, a host
    value (NumPy, Python scalar) transferred at its traced dtype by one jaxlib call
    (sharing its memory during the call where the device can, as jax's jit does).  The
    Array case is inlined: it is the common one, once per leaf per call."""
    return [x._buf if type(x) is Array and x._buf is not None else to_buffer(x, aval, may_alias)
            for x, aval in zip(leaves, avals, strict=True)]


def leaf_types(leaves):
    """(the avals of the leaves, their shardings (None: uncommitted), whether any is
    committed), in one pass: the full path's per-leaf work."""
    avals, committed, any_committed = [], [], False
    for x in leaves:
        if type(x) is Array:
            avals.append(x.aval)
            committed.append(x._sharding)
            any_committed = any_committed or x._sharding is not None
        else:
            avals.append(core.get_aval(x))
            committed.append(None)
    return tuple(avals), tuple(committed), any_committed


class CompiledJaxpr:
    """An executable with the device buffers of its constants and its output types.
    A program over several devices (or a non-default one) also has the shardings of
    its outputs and the handlers that make them arrays (`placement.py`)."""
    __slots__ = ("executable", "const_bufs", "out_avals", "text", "jaxpr", "out_shardings",
                 "handlers", "kept", "donated_args")

    def __init__(self, closed, donated=(), placement=None, module=None, options=(),
                 kept=None, donated_args=(), name="funcgraph"):
        """`module`: the jaxpr already lowered (by Lowered, with this placement), so
        that it is not lowered a second time; `options`: XLA options as sorted (name,
        value) pairs (jit's compiler_options); `kept`: the indices of the function's
        arguments that the program takes (drop_unused_inputs), None: all of them.  It is
        called with the buffers of those only; `donated_args`: the argument leaves whose
        buffers it takes over (deleted after a call); `name`: the module's name (jit_f
        for jit(f), as jax names it: XLA's dumps and profiles show it)."""
        self.kept = kept
        self.donated_args = donated_args
        self.jaxpr = closed
        jaxpr = closed.jaxpr
        placement = placement or placing.unplaced(len(jaxpr.invars), len(jaxpr.outvars))
        if module is None:
            module = lowering.lower_module(jaxpr, donated, placement, name)
        self.text = module.text
        self.out_avals = [v.aval for v in jaxpr.outvars]
        self.const_bufs = [to_buffer(c, v.aval) for c, v in
                           core.safe_zip(closed.consts, jaxpr.constvars)]
        if module.devices is None:
            self.out_shardings = self.handlers = None
            self.executable = backend.compile(self.text, self.out_avals, module.host_callbacks,
                                              module.ordered, options)
            return
        self.executable, self.out_shardings, self.handlers = placing.compile_placed(
            module, placement, self.out_avals, options)
        self.const_bufs = self.executable.place(self.const_bufs)

    def __call__(self, bufs):
        if self.const_bufs:
            bufs = self.const_bufs + bufs
        if self.handlers is None:
            outs = self.executable.run(bufs)
            return [Array(None, aval, buf) for aval, buf in zip(self.out_avals, outs)]
        outs = self.executable.run(bufs, self.handlers)
        return [Array(None, aval, buf, s)
                for aval, buf, s in zip(self.out_avals, outs, self.out_shardings)]

    def run_leaves(self, leaves, avals, may_alias):
        """The outputs for all the function's argument leaves (of types avals): those
        the program takes are transferred (see to_buffers) and passed."""
        if self.kept is not None:
            leaves, avals = [leaves[i] for i in self.kept], [avals[i] for i in self.kept]
        return self(to_buffers(leaves, avals, may_alias))

    def delete_donated(self, leaves):
        """Delete the argument Arrays whose buffers the program took over (as jax)."""
        for i in self.donated_args:
            if type(leaves[i]) is Array:
                leaves[i].delete()


_compiled_calls = weakref.WeakKeyDictionary()
_compiled_calls_lock = threading.Lock()


def run_jaxpr(closed, args):
    """Run a const-free ClosedJaxpr compiled (the evaluation rule of pjit), where its
    committed arguments are."""
    if _has_float0(closed):
        return _run_float0_jaxpr(closed, args)
    committed = placing.committed_shardings(args)
    with _compiled_calls_lock:
        variants = _compiled_calls.setdefault(closed.jaxpr, {})
        compiled = variants.get(committed)
    if compiled is None:
        placement = None
        if any(s is not None for s in committed):
            placement = placing.make_placement([None] * len(args), committed, closed.in_avals,
                                               [f"args[{i}]" for i in range(len(args))],
                                               [None] * len(closed.out_avals))
        compiled = CompiledJaxpr(optimize(closed), placement=placement)
        with _compiled_calls_lock:
            variants[committed] = compiled
    avals = closed.in_avals
    return compiled(to_buffers(args, avals))


def _has_float0(closed):
    return any(aval.dtype == dtypes.float0 for aval in closed.in_avals + closed.out_avals)


def _run_float0_jaxpr(closed, args):
    """float0 values (tangents of integers) hold nothing and have no device type: a
    program that takes or gives them runs equation by equation (its other calls
    compiled)."""
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def optimize(closed):
    if not config.funcgraph_jit_passes:
        return closed
    return passes.optimize(closed)


def drop_unused_inputs(closed, donated):
    """jit's keep_unused=False, as in jax: the program without the inputs that nothing
    reads (after optimization), so that such arguments are neither transferred nor
    passed.  (closed, kept, donated): kept is None where every input is read, else the
    indices of the inputs kept; donated, the donated inputs' indices among those kept."""
    jaxpr = closed.jaxpr
    read = {x for eqn in jaxpr.eqns for x in eqn.invars if type(x) is not Literal}
    read.update(v for v in jaxpr.outvars if type(v) is not Literal)
    kept = tuple(i for i, v in enumerate(jaxpr.invars) if v in read)
    if len(kept) == len(jaxpr.invars):
        return closed, None, donated
    pruned = Jaxpr(jaxpr.constvars, [jaxpr.invars[i] for i in kept], jaxpr.outvars,
                   jaxpr.eqns)
    ir_check(pruned)
    position = {old: new for new, old in enumerate(kept)}
    return (ClosedJaxpr(pruned, closed.consts), kept,
            tuple(position[i] for i in donated if i in position))


def usable_donations(closed, donated):
    """jax's rule for donated inputs: one is donated only where an output of its shape
    and dtype can take its buffer (each output once, in order); the others are not
    donated (nor deleted), with jax's warning."""
    outs = [v.aval for v in closed.jaxpr.outvars]
    free = list(range(len(outs)))
    usable, unusable = [], []
    for i in donated:
        aval = closed.jaxpr.invars[i].aval
        match = next((j for j in free if outs[j].shape == aval.shape
                      and outs[j].dtype == aval.dtype), None)
        if match is None:
            unusable.append(aval.str_short())
        else:
            free.remove(match)
            usable.append(i)
    if unusable:
        warnings.warn(f"Some donated buffers were not usable: {', '.join(unusable)}.\n"
                      f"See an explanation at "
                      f"https://docs.jax.dev/en/latest/faq.html#buffer-donation.",
                      stacklevel=4)
    return tuple(usable)


def program_inputs(closed, donated, keep_unused, placed):
    """The optimized program's inputs: (closed, kept, donated, donated_args).  Unread
    inputs dropped unless keep_unused (or the program is placed over devices: kept is
    None where nothing is dropped); donated: the inputs donated, among those kept, where
    an output can reuse them; donated_args: the same as argument leaf indices."""
    closed, kept = optimize(closed), None
    if not keep_unused and not placed:
        closed, kept, donated = drop_unused_inputs(closed, donated)
    donated = usable_donations(closed, donated) if donated else ()
    return closed, kept, donated, tuple(i if kept is None else kept[i] for i in donated)


# Eager primitives run compiled (off the CPU, or those without a bit-exact NumPy
# version) are cached per (primitive, argument types, params): after the first call of
# each type, one dict lookup, the transfer of host arguments and the executable call.
_primitive_cache = {}


def _compiled_primitive(prim, avals, params, args):
    key = (prim, tuple(avals), tuple(sorted(params.items())) if params else ())
    call = _primitive_cache.get(key)
    if call is None:
        closed = trace_flat(lambda *xs: _as_list(prim.bind(*xs, **params), prim), avals)
        # The jit fast path's call: a primitive's output list is a plain list of leaves.
        out_tree = tree_util.tree_structure(list(closed.out_avals)) \
            if prim.multiple_results else tree_util.tree_structure(0)
        compiled = CompiledJaxpr(closed, name=lowering.module_name(prim.name))
        call = _primitive_cache[key] = flat_caller(compiled, closed.in_avals,
                                                   OutputSpec(out_tree, {}))
    return call(args)


def _as_list(out, prim):
    return list(out) if prim.multiple_results else [out]


_placed_primitive_jaxprs = {}


def _placed_primitive(prim, avals, params, args):
    """A primitive on arguments placed off the default device runs as the jaxpr of its
    bind, by run_jaxpr, where its committed arguments are (one jaxpr per primitive,
    argument types and params; run_jaxpr keeps a compiled program per placement)."""
    key = (prim, tuple(avals), tuple(sorted(params.items())) if params else ())
    closed = _placed_primitive_jaxprs.get(key)
    if closed is None:
        closed = _placed_primitive_jaxprs[key] = trace_flat(
            lambda *xs: _as_list(prim.bind(*xs, **params), prim), avals)
    outs = run_jaxpr(closed, args)
    return outs if prim.multiple_results else outs[0]


compiled_eval["primitive"] = _compiled_primitive
compiled_eval["placed_primitive"] = _placed_primitive
compiled_eval["jaxpr"] = run_jaxpr


# --- the jit wrapper ------------------------------------------------------------------

class OutputSpec:
    """How the compiled outputs become the function's result: the output tree, and its
    float0 leaves (tangents of integer values), which are constants and not compiled."""
    __slots__ = ("tree", "float0", "single", "refs")

    def __init__(self, tree, float0, refs=None):
        self.tree = tree
        self.float0 = float0  # {leaf index: NumPy float0 array}
        # With Ref arguments (refs.py): a _RefOutputs saying which outputs are Refs.
        self.refs = refs
        self.single = tree.is_leaf() and not float0 and refs is None

    def unflatten(self, outs):
        if self.float0:
            it = iter(outs)
            outs = [self.float0[i] if i in self.float0 else next(it)
                    for i in range(self.tree.num_leaves)]
        return tree_util.tree_unflatten(self.tree, outs)


def flat_caller(compiled, in_avals, out_tree):
    """The fast path's call of a compiled entry on flat positional arguments: for the
    common program (one device, no constants) a FlatCall (fast_dispatch.py: the
    arguments' buffers, host values copied at their traced dtype, the executable, Arrays
    of the results); otherwise the general call of the CompiledJaxpr.  An argument the
    program dropped (unused) has no put: it is not transferred."""
    kept = range(len(in_avals)) if compiled.kept is None else set(compiled.kept)
    puts = tuple(_host_put(aval) if i in kept else None for i, aval in enumerate(in_avals))
    fast_parts = compiled.executable.fast_parts if compiled.handlers is None else None
    if fast_parts and not compiled.const_bufs:
        unflatten = None if out_tree.single else out_tree.unflatten
        return FlatCall(*fast_parts, tuple(compiled.out_avals), unflatten, puts)

    def call(args):
        bufs = [a._buf if type(a) is Array and a._buf is not None else put(a)
                for a, put in zip(args, puts, strict=True) if put is not None]
        outs = compiled(bufs)
        return outs[0] if out_tree.single else out_tree.unflatten(outs)
    return call


def _host_put(aval):
    """The fast path's transfer of an argument that is not an Array with a device buffer:
    a NumPy array of the traced dtype goes straight to the backend (read in place during
    the call); anything else (scalars, other dtypes, Arrays held on the host) through
    to_buffer."""
    return backend.host_putter(aval.shape, aval.dtype, lambda x: to_buffer(x, aval, True))


def _split_float0(out_leaves):
    float0 = {i: o for i, o in enumerate(out_leaves)
              if isinstance(o, np.ndarray) and o.dtype == dtypes.float0}
    return [o for i, o in enumerate(out_leaves) if i not in float0], float0


class _RefOutputs:
    """A jitted function given Refs (funcgraph.refs): inside the trace each Ref argument
    is a Ref of its own holding the traced value (reads and writes stage as array
    operations); the program returns, after the function's outputs, the value each
    holds at the end, which the call writes back into the argument Refs (jax's state
    discharge).  As in jax, a Ref may not be returned."""

    def __init__(self, avals):
        self.positions = [i for i, a in enumerate(avals) if type(a) is refs.AbstractRef]

    def wrap(self, flat, store, name):
        def with_refs(*leaves):
            leaves = list(leaves)
            inner = [refs.Ref(leaves[i]) for i in self.positions]
            for ref, i in zip(inner, self.positions, strict=True):
                leaves[i] = ref
            outs = flat(*leaves)
            for i, o in enumerate(outs):
                if isinstance(o, refs.Ref):
                    raise _returned_ref(name, o, i, store.out_tree,
                                        any(o is r for r in inner))
            return list(outs) + [r._get_value() for r in inner]
        return with_refs

    def finish(self, leaves, outs, spec):
        """Write the final values into the argument Refs; the function's result."""
        n = len(self.positions)
        for i, value in zip(self.positions, outs[len(outs) - n:], strict=True):
            leaves[i]._value = value
        return OutputSpec(spec.tree, spec.float0).unflatten(outs[:len(outs) - n])


def _returned_ref(name, ref, i, out_tree, passed_in):
    dummy = tree_util.tree_unflatten(out_tree, list(range(out_tree.num_leaves)))
    paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(dummy)[0]]
    where = ("passed in as an argument" if passed_in else
             "created inside the function")
    at = f" at output tree path result{paths[i]}" if paths[i] else ""
    return ValueError(f"function {name} traced for jit returned a mutable array reference "
                      f"of type {ref.aval}{at}, but mutable array references cannot be "
                      f"returned.\n\nThe returned mutable array was {where}.")


def _ref_values(leaves):
    """The leaves with each Ref replaced by the value it holds."""
    return [x._get_value() if isinstance(x, refs.Ref) else x for x in leaves]


class _CacheEntry:
    __slots__ = ("closed", "out_tree", "compiled", "donated", "lock", "variant", "placement",
                 "in_avals", "flat_caller", "options", "keep_unused", "module_name")

    def __init__(self, closed, out_tree, donated, variant=None, placement=None, options=(),
                 keep_unused=True, module_name="funcgraph"):
        self.module_name = module_name  # jit_f, as jax names the module of jit(f)
        self.placement = placement  # where it runs (placement.py); None: default device
        self.options = options  # XLA's compiler options, sorted (name, value) pairs
        self.keep_unused = keep_unused  # False: the program drops unread arguments
        self.closed = closed
        self.in_avals = closed.in_avals  # the traced leaf types (host values' dtypes)
        self.out_tree = out_tree  # an OutputSpec
        self.compiled = None
        self.donated = donated
        self.lock = threading.Lock()  # threads calling a fresh entry compile it once
        self.variant = variant  # a jit_cache.Variant: why it exists, what it cost
        self.flat_caller = None  # the fast path's call, made on its first use

    def make_flat_caller(self):
        self.flat_caller = flat_caller(self.compiled or self.get_compiled(), self.in_avals,
                                       self.out_tree)
        return self.flat_caller

    def get_compiled(self):
        compiled = self.compiled
        if compiled is None:
            with self.lock:
                compiled = self.compiled
                if compiled is None:
                    start = time.perf_counter()
                    closed, kept, donated, donated_args = program_inputs(
                        self.closed, self.donated, self.keep_unused, self.placement is not None)
                    compiled = CompiledJaxpr(closed, donated, self.placement,
                                             options=self.options, kept=kept,
                                             donated_args=donated_args,
                                             name=self.module_name)
                    self._compiled_in(time.perf_counter() - start)
                    self.compiled = compiled
        return compiled

    def run_leaves(self, leaves):
        """The compiled outputs (Arrays) for the argument leaves."""
        compiled = self.compiled or self.get_compiled()
        return compiled.run_leaves(leaves, self.in_avals, may_alias=not self.donated)

    def _compiled_in(self, seconds):
        variant = self.variant
        if variant is None:
            return
        variant.compile_time = seconds
        # As jax: a warning with jax_log_compiles, a debug message otherwise.
        level = logging.WARNING if config.jax_log_compiles else logging.DEBUG
        if logger.isEnabledFor(level):
            logger.log(level, "Finished compiling %s for arguments (%s) in %.4f sec "
                       "(traced in %.4f sec)", variant.function, variant.signature(),
                       seconds, variant.trace_time)


def _check_hashable(value, where):
    try:
        hash(value)
    except TypeError:
        raise ValueError(f"jit: static argument {where} has unhashable type "
                        f"{type(value).__name__} ({value!r}); static arguments are cache keys "
                        f"and must be hashable: use a tuple instead of a list, or pass the "
                        f"value as a regular (traced) argument") from None


def _as_tuple(x):
    if x is None:
        return ()
    return (x,) if isinstance(x, (int, str)) else tuple(x)


# Every live jit(fun), so that clear_caches reaches their trace and compile caches.
_jit_functions = weakref.WeakSet()

# The caches of jit(fun) by function, then by jit's options: jit made again of the same
# function with the same options shares them, as in jax, so that `jit(f)(x)` in a loop
# traces once (and, also as in jax, a global that f reads keeps its traced value until
# the cache is cleared).  Held while the function lives.
_caches_by_function = weakref.WeakKeyDictionary()


def _shared_caches(fun, options):
    """(cache, flat cache, container cache, variants) of jit(fun) with these options;
    new ones where fun or an option cannot be a key (no weak reference, unhashable)."""
    try:
        return _caches_by_function.setdefault(fun, {}).setdefault(options, ({}, {}, {}, []))
    except TypeError:
        return {}, {}, {}, []


def clear_caches():
    """Clear all of funcgraph's staging and compilation caches: each jitted function's
    traces and executables, the eagerly compiled primitives and jaxprs, and the backend's
    compiled modules.  The next call of anything traces and compiles anew."""
    for fn in list(_jit_functions):
        fn.clear_cache()
    with _compiled_calls_lock:
        _compiled_calls.clear()
    _primitive_cache.clear()
    backend.clear_caches()


class JitFunction(FastJit):
    """The callable `jit(fun)` returns.  Its __call__ (FastJit's, fast_dispatch.py) serves
    cached calls of positional arrays, scalars and Python containers of them, and hands
    any other call to _slow_call."""

    def __init__(self, fun, static_argnums=None, static_argnames=None, donate_argnums=None,
                 donate_argnames=None, in_shardings=None, out_shardings=None, inline=False,
                 compiler_options=None, keep_unused=False):
        _jit_functions.add(self)
        if not callable(fun):
            raise TypeError(f"jit expects a callable, got {fun!r}")
        self.fun = fun
        self.name = getattr(fun, "__name__", type(fun).__name__)
        try:
            self.signature = inspect.signature(fun)
        except (TypeError, ValueError):
            self.signature = None
        self._check_against_signature("static_argnums", _as_tuple(static_argnums),
                                      "static_argnames", _as_tuple(static_argnames))
        self._check_against_signature("donate_argnums", _as_tuple(donate_argnums),
                                      "donate_argnames", _as_tuple(donate_argnames))
        self.static_argnums, self.static_argnames = self._names_and_numbers(
            static_argnums, static_argnames)
        self.donate_argnums, self.donate_argnames = self._names_and_numbers(
            donate_argnums, donate_argnames)
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        self.inline = inline
        self.compiler_options = compiler_option_pairs(compiler_options)
        self.keep_unused = keep_unused
        self._placed = in_shardings is not None or out_shardings is not None
        # _cache: traces and executables by argument types and statics.  Calls whose
        # positional arguments are all arrays or scalars skip pytree flattening:
        # _flat_cache, keyed by flat_key(args) (avals, with the sharding of committed
        # Arrays); the same for positional Python containers of arrays: _container_cache,
        # keyed by container_key(args), filled only by such calls.  _variants: a
        # jit_cache.Variant per cache entry, oldest first.
        self._cache, self._flat_cache, self._container_cache, self._variants = _shared_caches(
            fun, (self.static_argnums, self.static_argnames, self.donate_argnums,
                  self.donate_argnames, in_shardings, out_shardings, inline,
                  self.compiler_options, keep_unused))
        self._flat_fast_path = not (self.static_argnums or self.static_argnames
                                    or self.donate_argnums or self.donate_argnames)
        self._last_key = None
        core.wraps(fun, updated=())(self)
        if self.signature is not None:
            self.__signature__ = self.signature  # inspect.signature(jit(f)), as jax's

    def _nparams(self):
        return len(self.signature.parameters) if self.signature else 0

    def _check_against_signature(self, option, argnums, names_option, argnames):
        """Out-of-range argnums and unknown argnames are errors naming the signature (a
        function taking *args or **kwargs accepts any)."""
        if self.signature is None:
            return
        params = self.signature.parameters.values()
        kinds = {p.kind for p in params}
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        where = f"jit({self.name}) with signature {self.name}{self.signature}"
        if inspect.Parameter.VAR_POSITIONAL not in kinds:
            bad = [a for a in argnums if not -len(positional) <= a < len(positional)]
            if bad:
                raise ValueError(f"{where}: {option}={tuple(argnums)} names positional "
                                 f"argument {bad[0]}, but the function takes "
                                 f"{len(positional)} positional arguments")
        if inspect.Parameter.VAR_KEYWORD not in kinds:
            names = {p.name for p in params if p.kind != p.POSITIONAL_ONLY}
            unknown = sorted(set(argnames) - names)
            if unknown:
                raise ValueError(f"{where}: {names_option} names {unknown}, which the "
                                 f"function does not take")

    def _names_and_numbers(self, argnums, argnames):
        """(argnums, argnames) sorted.  As in JAX, where only one of the two is given (not
        None), the other is inferred from the signature (a parameter named or numbered
        is the same parameter); where both are, each is taken as it is."""
        nums = {a % self._nparams() if a < 0 else a for a in _as_tuple(argnums)}
        names = set(_as_tuple(argnames))
        if self.signature is not None and (argnums is None or argnames is None):
            params = list(self.signature.parameters)
            names.update(params[i] for i in nums if i < len(params))
            nums.update(params.index(n) for n in names if n in params)
        return tuple(sorted(nums)), tuple(sorted(names))

    # --- splitting arguments into dynamic leaves and static values ---
    def _split(self, args, kwargs):
        statics = []
        dyn_args = []
        for i, a in enumerate(args):
            if i in self.static_argnums:
                _check_hashable(a, f"{i} (positional)")
                statics.append((i, a))
            else:
                dyn_args.append(a)
        dyn_kwargs = {}
        for k in sorted(kwargs):
            if k in self.static_argnames:
                _check_hashable(kwargs[k], repr(k))
                statics.append((k, kwargs[k]))
            else:
                dyn_kwargs[k] = kwargs[k]
        return tuple(statics), dyn_args, dyn_kwargs

    def _call_with(self, statics, dyn_args, dyn_kwargs):
        """Rebuild the user call from static values and dynamic (traced) ones."""
        static_pos = {k: v for k, v in statics if isinstance(k, int)}
        static_kw = {k: v for k, v in statics if isinstance(k, str)}
        args, it = [], iter(dyn_args)
        for i in range(len(dyn_args) + len(static_pos)):
            args.append(static_pos[i] if i in static_pos else next(it))
        return self.fun(*args, **dyn_kwargs, **static_kw)

    def _trace(self, statics, in_tree, avals, what="jit"):
        flat, store = flatten_fun(lambda *a, **k: self._call_with(statics, a, k), in_tree)
        float0 = {}
        ref_outputs = None
        if any(type(a) is refs.AbstractRef for a in avals):
            # Ref arguments: the program takes the values they hold and returns the
            # values they hold at the end (written back after the call), as jax's
            # state discharge does.
            ref_outputs = _RefOutputs(avals)
            flat = ref_outputs.wrap(flat, store, self.name)
            avals = tuple(a.inner_aval if type(a) is refs.AbstractRef else a for a in avals)

        def traced(*leaves):
            # A symbolic dimension returned (x.shape[0] under export) is its value.
            outs = [o.__jax_array__() if type(o) is shape_poly.DimExpr else o
                    for o in flat(*leaves)]
            out_leaves, found = _split_float0(outs)
            float0.update(found)
            return out_leaves

        dyn_args, dyn_kwargs = tree_util.tree_unflatten(in_tree, list(range(len(avals))))
        debug = self._debug_info(what, statics, dyn_args, dyn_kwargs)
        if all(shape_poly.is_constant_shape(a.shape) for a in avals):
            closed = trace_flat(traced, avals, debug)
        else:  # symbolic dimensions (export, eval_shape): primitives that support them only
            with core.symbolic_tracing():
                closed = trace_flat(traced, avals, debug)
        return closed, OutputSpec(store.out_tree, float0, ref_outputs)

    def _debug_info(self, what, statics, dyn_args, dyn_kwargs):
        """Names of the dynamic leaves (static arguments are left out, as they are not
        traced)."""
        static_pos = {k for k, _ in statics if isinstance(k, int)}
        positions = [i for i in range(len(dyn_args) + len(static_pos)) if i not in static_pos]
        return debug_info(what, self.fun, dyn_args, dyn_kwargs, positions)

    def _donated_leaves(self, args, kwargs, statics):
        """The indices of the donated argument leaves: those of donated positional
        arguments, then of donated keyword arguments (leaves come in flatten_args's
        order: positional arguments, then keyword arguments by sorted name)."""
        if not (self.donate_argnums or self.donate_argnames):
            return ()
        donated, offset = [], 0
        static_pos = {k for k, _ in statics if isinstance(k, int)}
        for i, a in enumerate(args):
            if i in static_pos:
                continue
            n = len(tree_util.tree_leaves(a))
            if i in self.donate_argnums:
                donated.extend(range(offset, offset + n))
            offset += n
        for name in sorted(kwargs):
            if name in self.static_argnames:
                continue
            n = len(tree_util.tree_leaves(kwargs[name]))
            if name in self.donate_argnames:
                donated.extend(range(offset, offset + n))
            offset += n
        return tuple(donated)

    def _slow_call(self, args, kwargs):
        """A call the fast path (FastJit's __call__) did not serve: the full path
        (_dispatch), which fills the fast path's caches."""
        if config.dispatch_checks:
            return self._call_checked(args, kwargs)
        return self._dispatch(args, kwargs)

    def _dispatch(self, args, kwargs):
        statics, dyn_args, dyn_kwargs = self._split(args, kwargs)
        leaves, in_tree = flatten_args(dyn_args, dyn_kwargs)
        avals, committed, any_committed = leaf_types(leaves)
        if not is_eager():
            return self._bind_call(statics, in_tree, avals, leaves)
        key = (in_tree, statics, avals)
        if config.jax_default_device is not None or any_committed:
            key += (committed, config.jax_default_device)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._miss(key, statics, in_tree, avals, args, kwargs, dyn_args, committed)
        if entry.out_tree.refs is not None:  # Ref arguments: never the fast path
            outs = entry.run_leaves(_ref_values(leaves))
            entry.compiled.delete_donated(leaves)
            return entry.out_tree.refs.finish(leaves, outs, entry.out_tree)
        if (self._flat_fast_path and not kwargs and config.jax_default_device is None
                and not config.check_nonfinite):
            # Whatever the first call's argument kinds (Arrays, NumPy values, Python
            # scalars), later calls of the same types take the fast path.
            fast_key = flat_key(args)
            if fast_key is not None:
                self._flat_cache[fast_key] = entry
            else:
                self._remember_container_call(args, leaves, entry)
        outs = entry.run_leaves(leaves)
        if config.check_nonfinite:
            self._check_outputs(entry, leaves, outs, args, kwargs)
        entry.compiled.delete_donated(leaves)
        return entry.out_tree.unflatten(outs)

    def _remember_container_call(self, args, leaves, entry):
        """Arguments that are Python containers (dicts, lists, tuples) of arrays: later
        calls of the same structure and leaf types take the fast path, keyed by jaxlib's
        flatten.  Stored only where that flatten gives tree_util's very leaves, in order:
        then an equal container structure means an equal in_tree."""
        c_leaves, key = container_key(args)
        if (key is not None and key[1] is not None and len(c_leaves) == len(leaves)
                and all(a is b for a, b in zip(c_leaves, leaves, strict=True))):
            self._container_cache[key] = entry

    def _call_checked(self, args, kwargs):
        """A call with jax_disable_jit or jax_debug_nans/infs on: the slow path."""
        if config.jax_disable_jit:
            return self.fun(*args, **kwargs)
        return self._dispatch(args, kwargs)

    def _check_outputs(self, entry, leaves, outs, args, kwargs):
        """jax_debug_nans/infs: a NaN (inf) in the outputs re-runs the program op by op
        (de-optimized) to name the primitive that made it and its line."""
        for out in outs:
            kind = nonfinite_kind(out)
            if kind is not None:
                print(f"Invalid {kind} value encountered in the output of a funcgraph.jit "
                      f"function. Calling the de-optimized version.")  # JAX's words, our name
                raise self._locate_nonfinite(kind, entry, leaves, args, kwargs)

    def _locate_nonfinite(self, kind, entry, leaves, args, kwargs):
        where = f" (found by re-running jit({self.name}) op by op)"
        locate = nonfinite_locator.get("locate")
        if locate is not None:
            report = locate(entry.closed, leaves)
            if report.found:
                return nonfinite_error(report.kind, report.primitive, report.source,
                                       report.context_text() + where)
        with disable_jit():
            try:
                self.fun(*args, **kwargs)
            except FloatingPointError as e:
                return e
        return FloatingPointError(f"invalid value ({kind}) encountered in the output of "
                                  f"jit({self.name}); running it op by op did not make one "
                                  f"(XLA's compiled arithmetic differs from the op-by-op one)")

    def _miss(self, key, statics, in_tree, avals, args, kwargs, dyn_args, committed):
        if config.jax_explain_cache_misses:
            self._explain(key)
        start = time.perf_counter()
        closed, out_tree = self._trace(statics, in_tree, avals)
        variant = self._record_variant(jit_cache.COMPILED, statics, in_tree, avals,
                                       time.perf_counter() - start)
        placement = self._placement(statics, in_tree, avals, dyn_args, committed, out_tree)
        entry = self._cache[key] = _CacheEntry(closed, out_tree,
                                               self._donated_leaves(args, kwargs, statics),
                                               variant, placement, self.compiler_options,
                                               self.keep_unused,
                                               lowering.module_name(self.name))
        self._last_key = key
        return entry

    def _placement(self, statics, in_tree, avals, dyn_args, committed, out_tree):
        """Where the call runs: from in/out_shardings and the committed arguments."""
        if not self._placed and not any(s is not None for s in committed) \
                and config.jax_default_device is None:
            return None
        in_given, out_given = self._given_shardings(dyn_args, len(avals), out_tree)
        names = self._variants[-1].leaf_names
        return placing.make_placement(in_given, list(committed), avals, names, out_given)

    def _given_shardings(self, dyn_args, n_leaves, out_tree):
        """in_shardings per argument leaf (keyword arguments: unspecified) and
        out_shardings per compiled output leaf."""
        in_given = placing.leaf_shardings(self.in_shardings, tuple(dyn_args), "in_shardings")
        in_given += [None] * (n_leaves - len(in_given))
        dummy = tree_util.tree_unflatten(out_tree.tree, [0] * out_tree.tree.num_leaves)
        out_given = placing.leaf_shardings(self.out_shardings, dummy, "out_shardings")
        out_given = [s for i, s in enumerate(out_given) if i not in out_tree.float0]
        return in_given, out_given

    def _record_variant(self, kind, statics, in_tree, avals, trace_time):
        """Note a new cache entry, why it was made and by which caller."""
        dyn_args, dyn_kwargs = tree_util.tree_unflatten(in_tree, list(range(len(avals))))
        static_pos = {k for k, _ in statics if isinstance(k, int)}
        positions = [i for i in range(len(dyn_args) + len(static_pos)) if i not in static_pos]
        names = arg_names(self.fun, dyn_args, dyn_kwargs, positions)
        if len(names) != len(avals):
            # a pytree node rebuilt around placeholder leaves flattens differently (a
            # library's class that computes its fields): the leaves' plain positions
            names = [f"leaf[{i}]" for i in range(len(avals))]
        params = list(self.signature.parameters) if self.signature else []
        static_values = {(params[k] if isinstance(k, int) and k < len(params) else k): v
                         for k, v in statics}
        variant = jit_cache.Variant(f"jit({self.name})", kind, names, avals, static_values,
                                    core.user_source_info(), trace_time)
        variant.reasons = jit_cache.differences(jit_cache.closest(self._variants, variant),
                                                variant)
        self._variants.append(variant)
        return variant

    def cache_info(self):
        """Every variant traced and compiled for this function, with its argument types,
        why it was made (what changed from the closest earlier one), its caller and
        its trace and compile times (a jit_cache.CacheInfo; HTML in Jupyter)."""
        return jit_cache.CacheInfo(self.name, self._variants)

    def _explain(self, key):
        message = explain_retrace(self.name, self._last_key, key)
        retrace_log.append(message)
        logger.warning(message)

    def _bind_call(self, statics, in_tree, avals, leaves):
        """Under a transformation: one pjit equation (closed-over values as inputs).
        Traced inside a shard_map body, the trace also depends on the mesh axes."""
        entry = self._traced_entry(statics, in_tree, avals, listed=True)
        if entry.out_tree.refs is not None:
            outs = bind_call(entry.closed, _ref_values(leaves), self.name)
            return entry.out_tree.refs.finish(leaves, outs, entry.out_tree)
        if self._placed:
            dyn_args, _ = tree_util.tree_unflatten(in_tree, list(leaves))
            in_given, out_given = self._given_shardings(dyn_args, len(leaves), entry.out_tree)
            leaves = _constrain(leaves, in_given)
            return entry.out_tree.unflatten(
                _constrain(bind_call(entry.closed, leaves, self.name), out_given))
        if self.inline:  # the equations themselves, in the enclosing trace
            return entry.out_tree.unflatten(
                eval_jaxpr(entry.closed.jaxpr, entry.closed.consts, *leaves))
        outs = bind_call(entry.closed, leaves, self.name)
        return entry.out_tree.unflatten(outs)

    def _traced_entry(self, statics, in_tree, avals, what="jit", listed=False):
        """The trace for these argument types, made once and shared, as jax's trace cache
        is, by calls under transformations and the ahead-of-time stages (trace, lower,
        eval_shape): a function traced for lower() and then called is traced once.
        Traced inside a shard_map body, the trace also depends on the mesh axes.  Calls
        (listed) list the trace among the function's variants (cache_info)."""
        key = ("traced", in_tree, statics, avals, manual_axes_key())
        entry = self._cache.get(key)
        trace_time = 0.0  # a trace made earlier cost this call nothing
        if entry is None:
            start = time.perf_counter()
            closed, out_tree = self._trace(statics, in_tree, avals, what)
            trace_time = time.perf_counter() - start
            entry = self._cache[key] = _CacheEntry(closed, out_tree, ())
        if listed and entry.variant is None:
            entry.variant = self._record_variant(jit_cache.TRACED, statics, in_tree, avals,
                                                 trace_time)
        return entry

    # --- ahead-of-time stages ---
    def trace(self, *args, **kwargs):
        return self._trace_for("jit", args, kwargs)

    def _trace_for(self, what, args, kwargs):
        statics, dyn_args, dyn_kwargs = self._split(args, kwargs)
        leaves, in_tree = flatten_args(dyn_args, dyn_kwargs)
        avals = tuple(map(core.get_aval, leaves))
        entry = self._traced_entry(statics, in_tree, avals, what)
        closed, out_tree = entry.closed, entry.out_tree
        placement = None
        if what in ("jit", "export"):
            names = [f"args[{i}]" for i in range(len(avals))]
            committed = placing.committed_shardings(leaves)
            if self._placed or any(s is not None for s in committed):
                in_given, out_given = self._given_shardings(dyn_args, len(avals), out_tree)
                placement = placing.make_placement(in_given, list(committed), avals, names,
                                                   out_given)
        return Traced(self, closed, in_tree, out_tree,
                      self._donated_leaves(args, kwargs, statics), placement)

    def lower(self, *args, **kwargs):
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args, **kwargs):
        return self.trace(*args, **kwargs).out_info

    def clear_cache(self):
        self._cache.clear()
        self._flat_cache.clear()
        self._container_cache.clear()
        self._variants.clear()

    def _cache_size(self):
        return sum(1 for k in self._cache if k[0] != "traced")

    def __reduce__(self):
        """copy and pickle make a new jit of the same function and options (which, as
        any such jit, shares the caches of the others)."""
        return (JitFunction, (self.fun, self.static_argnums, self.static_argnames,
                              self.donate_argnums, self.donate_argnames, self.in_shardings,
                              self.out_shardings, self.inline, dict(self.compiler_options),
                              self.keep_unused))

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __repr__(self):
        return f"<jit-compiled function {self.name}>"


def _constrain(values, shardings):
    """Each value under a sharding_constraint to its NamedSharding (None: as it is)."""
    return [sharding_constraint_p.bind(v, sharding=s) if isinstance(s, NamedSharding) else v
            for v, s in zip(values, shardings, strict=True)]


def explain_retrace(name, old_key, new_key):
    if old_key is None:
        return f"jit({name}): tracing for the first time"
    old_tree, old_statics, old_avals = old_key[:3]
    new_tree, new_statics, new_avals = new_key[:3]
    reasons = []
    if old_tree != new_tree:
        reasons.append(f"the argument structure changed from {old_tree} to {new_tree}")
    if old_statics != new_statics:
        old, new = dict(old_statics), dict(new_statics)
        for k in sorted(set(old) | set(new), key=str):
            if old.get(k, "<absent>") != new.get(k, "<absent>"):
                reasons.append(f"static argument {k!r} changed from {old.get(k, '<absent>')!r} "
                               f"to {new.get(k, '<absent>')!r}")
    if old_tree == new_tree:
        paths = _leaf_paths(new_tree)
        for path, a, b in zip(paths, old_avals, new_avals):
            if a != b:
                reasons.append(f"argument {path} changed from {_describe(a)} to {_describe(b)}")
    return f"jit({name}) retraced because " + ("; ".join(reasons) or "its cache was cleared")


def _describe(aval):
    return aval.str_short() + (" (weak type)" if aval.weak_type else "")


def _leaf_paths(treedef):
    dummy = tree_util.tree_unflatten(treedef, list(range(treedef.num_leaves)))
    paths, _ = tree_util.tree_flatten_with_path(dummy)
    out = []
    for path, _ in paths:
        (args_or_kwargs, *rest) = path
        prefix = "args" if args_or_kwargs.idx == 0 else "kwargs"
        out.append(prefix + tree_util.keystr(rest))
    return out


class Traced:
    """jit(f).trace(...): the traced jaxpr; `.lower()` goes on to StableHLO."""

    def __init__(self, jit_fun, closed, in_tree, out_spec, donated, placement=None):
        self.fun = jit_fun
        self.jaxpr = closed
        self.in_tree = in_tree  # the tree of (positional arguments, keyword arguments)
        self.out_spec = out_spec  # an OutputSpec: the output tree and its float0 leaves
        self.donated = donated  # the indices of the donated argument leaves
        self.placement = placement

    fun_name = property(lambda self: self.fun.name)
    donate_argnums = property(lambda self: self.fun.donate_argnums)
    out_tree = property(lambda self: self.out_spec.tree)

    @property
    def in_avals(self):
        """The arguments' types, in the tree of (positional, keyword) arguments."""
        return tree_util.tree_unflatten(self.in_tree, list(self.jaxpr.in_avals))

    @property
    def out_avals(self):
        return self.out_spec.unflatten(list(self.jaxpr.out_avals))

    @property
    def args_info(self):
        """An ArgInfo (type, whether donated) per argument, in the arguments' tree."""
        donated = set(self.donated)
        return tree_util.tree_unflatten(self.in_tree, [
            ArgInfo(aval, i in donated) for i, aval in enumerate(self.jaxpr.in_avals)])

    @property
    def out_info(self):
        return self.out_spec.unflatten([ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
                                        for a in self.jaxpr.out_avals])

    def lower(self):
        placement = self._fresh_placement()
        optimized, kept, donated, donated_args = program_inputs(
            self.jaxpr, self.donated, self.fun.keep_unused, placement is not None)
        if placement is None:  # as CompiledJaxpr's: lowering may still find devices
            placement = placing.unplaced(len(optimized.jaxpr.invars),
                                         len(optimized.jaxpr.outvars))
        module = lowering.lower_module(optimized.jaxpr, donated, placement,
                                       lowering.module_name(self.fun.name))
        return Lowered(self, optimized, module, placement, kept, donated, donated_args)

    def _fresh_placement(self):
        """A copy of the placement for one lowering (lowering settles its details)."""
        p = self.placement
        if p is None:
            return None
        fresh = placing.Placement(p.devices, p.in_shardings, p.out_shardings)
        fresh.original = p.original
        return fresh


class ArgInfo:
    """An argument of a traced, lowered or compiled function: its type and whether it is
    donated (jax.stages.ArgInfo)."""
    __slots__ = ("_aval", "donated")

    def __init__(self, aval, donated):
        self._aval = aval
        self.donated = donated

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)

    def __repr__(self):
        return f"ArgInfo(_aval={self._aval!r}, donated={self.donated})"


class _StageInfo:
    """What Lowered and Compiled tell of the traced function (as jax's stages do)."""
    in_tree = property(lambda self: self.traced.in_tree)
    out_tree = property(lambda self: self.traced.out_tree)
    out_info = property(lambda self: self.traced.out_info)
    in_avals = property(lambda self: self.traced.in_avals)
    args_info = property(lambda self: self.traced.args_info)
    donate_argnums = property(lambda self: self.traced.donate_argnums)


class Lowered(_StageInfo):
    """jit(f).lower(...): the StableHLO module; `.compile()` goes on to XLA."""

    def __init__(self, traced, closed, module, placement, kept=None, donated=(),
                 donated_args=()):
        self.traced = traced
        self.jaxpr = closed
        self.module = module  # a lowering.LoweredModule, compiled as it is
        self.placement = placement  # the one the module was lowered with
        self.kept = kept  # the arguments the module takes (None: all; jit's keep_unused)
        self.donated = donated  # the donated ones, among those
        self.donated_args = donated_args  # the same, as argument leaf indices
        self.text = module.text

    def as_text(self, dialect="stablehlo", *, debug_info=False):
        if dialect == "hlo":
            return backend.hlo_computation(self.text).as_hlo_text()
        if dialect != "stablehlo":
            raise ValueError(f"as_text: unknown dialect {dialect!r} (\"stablehlo\" or "
                             f"\"hlo\")")
        return backend.pretty_mlir(self.text, debug_info)

    def cost_analysis(self):
        """XLA's cost estimate of the module before optimization (a dict), or None."""
        return backend.lowered_cost_analysis(self.text)

    def compiler_ir(self, dialect=None):
        """The module as an MLIR module object (jaxlib's MLIR bindings), or with
        dialect="hlo" as XLA's HLO computation (before optimization)."""
        if dialect == "hlo":
            return backend.hlo_computation(self.text)
        if dialect not in (None, "stablehlo"):
            raise ValueError(f"compiler_ir: unknown dialect {dialect!r} (\"stablehlo\" or "
                             f"\"hlo\")")
        return backend.parse_mlir(self.text)

    def compile(self, compiler_options=None):
        """XLA's executable; compiler_options (XLA option name -> value) replace the
        jit's own."""
        options = (compiler_option_pairs(compiler_options) if compiler_options is not None
                   else self.traced.fun.compiler_options)
        return Compiled(self, options)


def compiler_option_pairs(options):
    """jit's compiler_options as sorted (name, value) pairs: hashable, a cache key."""
    if options is None:
        return ()
    if not isinstance(options, dict) or not all(isinstance(k, str) for k in options):
        raise TypeError(f"compiler_options must be a dict of XLA option names to values, "
                        f"got {options!r}")
    return tuple(sorted(options.items()))


class Compiled(_StageInfo):
    """jit(f).lower(...).compile(): call it like the function, or inspect XLA's view."""

    def __init__(self, lowered, options=()):
        self.lowered = lowered
        self.traced = lowered.traced
        self.compiled = CompiledJaxpr(lowered.jaxpr, lowered.donated, lowered.placement,
                                      lowered.module, options, lowered.kept,
                                      lowered.donated_args)
        self.flat_in_avals = lowered.traced.jaxpr.in_avals

    def __call__(self, *args, **kwargs):
        """Called with the dynamic arguments only (the static ones were given to lower
        and are part of the program), as jax's compiled functions are."""
        leaves, in_tree = flatten_args(args, kwargs)
        for x in leaves:
            if isinstance(x, core.Tracer):
                raise TypeError(f"Cannot apply transformations to a function lowered and "
                                f"compiled for a particular signature (as in JAX). Detected "
                                f"argument of Tracer type {type(x)}; transform the function "
                                f"before jit(...).lower(...).compile() instead.")
        if in_tree != self.in_tree:
            raise TypeError(f"compiled function called with argument structure {in_tree}, "
                            f"but it was compiled for {self.in_tree}")
        avals = list(map(core.get_aval, leaves))
        for i, (a, b) in enumerate(zip(avals, self.flat_in_avals)):
            if not core.same_type(a, b):
                raise TypeError(f"compiled function argument {i} has type {a.str_short()}, "
                                f"but it was compiled for {b.str_short()}")
        outs = self.compiled.run_leaves(leaves, avals, not self.lowered.traced.donated)
        self.compiled.delete_donated(leaves)
        return self.lowered.traced.out_spec.unflatten(outs)

    @property
    def input_shardings(self):
        """Each argument's sharding, in the arguments' tree (those the program dropped
        too, as jax shows them)."""
        placement = self.lowered.placement
        if placement is None or placement.arg_shardings is None:  # the default device
            shardings = [SingleDeviceSharding(default_device())] * len(self.flat_in_avals)
        else:
            shardings = list(placement.arg_shardings)
        return tree_util.tree_unflatten(self.in_tree, shardings)

    @property
    def output_shardings(self):
        shardings = self.compiled.out_shardings
        if shardings is None:
            shardings = [SingleDeviceSharding(default_device())] * len(self.compiled.out_avals)
        return self.traced.out_spec.unflatten(list(shardings))

    def runtime_executable(self):
        """jaxlib's loaded executable."""
        return self.compiled.executable.loaded

    def as_text(self):
        return self.compiled.executable.hlo_text()

    def cost_analysis(self):
        return self.compiled.executable.cost_analysis()

    def memory_analysis(self):
        return self.compiled.executable.memory_analysis()


class ShapeDtypeStruct:
    """A shape and dtype standing in for an array (eval_shape results, AOT arguments)."""
    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, weak_type=False, *, sharding=None):
        self.shape = tuple(shape)
        self.dtype = dtype if isinstance(dtype, dtypes.ExtendedDType) else np.dtype(dtype)
        self.weak_type = weak_type
        self.sharding = sharding  # where the array is (or will be) placed; None: anywhere

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)  # a DimExpr when a dimension is symbolic

    @property
    def aval(self):
        return core.ShapedArray(self.shape, dtypes.canonicalize(self.dtype), self.weak_type)

    @classmethod
    def like(cls, x):
        """The shape, dtype and weak type of x: an array, a scalar, a traced value or a
        ShapeDtypeStruct (a pure_callback's result_shape_dtypes, say)."""
        aval = x.aval if isinstance(x, ShapeDtypeStruct) else core.get_aval(x)
        return cls(aval.shape, aval.dtype, aval.weak_type)

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"


def jit(fun=None, *, in_shardings=None, out_shardings=None, static_argnums=None,
        static_argnames=None, donate_argnums=None, donate_argnames=None, keep_unused=False,
        device=None, backend=None, inline=False, compiler_options=None, **unsupported):
    """Compile `fun` with XLA; its semantics are JAX's jit.  in_shardings/out_shardings
    (a sharding, a PartitionSpec under set_mesh, or a tree prefix of the positional
    arguments / the output holding them and Nones) lay the program out over a mesh;
    XLA's SPMD partitioner splits it into per-device programs.

    keep_unused: False (the default), as in JAX, compiles a program without the arguments
    it does not read, which are then neither transferred nor passed (nor donated); True
    keeps them all.  (Programs laid out over devices keep them all.)  inline: under another
    transformation the function's equations go into the enclosing program instead of
    one `pjit` equation.  device/backend (deprecated in JAX, with its warning): the
    program runs on that device (or the backend's first), its inputs and outputs there.
    compiler_options: XLA options (name -> value) for this function's compiles."""
    if unsupported:
        raise TypeError(f"jit: unsupported options {sorted(unsupported)}")
    if device is not None or backend is not None:
        in_shardings, out_shardings = _device_shardings(device, backend, in_shardings,
                                                        out_shardings)
    options = dict(static_argnums=static_argnums, static_argnames=static_argnames,
                   donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                   in_shardings=in_shardings, out_shardings=out_shardings, inline=inline,
                   compiler_options=compiler_options, keep_unused=keep_unused)
    if fun is None:
        return lambda f: JitFunction(f, **options)
    return JitFunction(fun, **options)


def _device_shardings(device, backend_name, in_shardings, out_shardings):
    """jit's deprecated device= and backend=: in and out shardings on that device."""
    warnings.warn("backend and device argument on jit is deprecated. You can use "
                  "`funcgraph.device_put(..., funcgraph.local_devices(backend=\"cpu\")[0])` "
                  "on the inputs to the jitted function to get the same behavior.",
                  DeprecationWarning, stacklevel=3)
    if device is not None and backend_name is not None:
        raise ValueError("can't specify both a device and a backend for jit, got "
                         f"device={device!r} and backend={backend_name!r}")
    for name, given in (("in_shardings", in_shardings), ("out_shardings", out_shardings)):
        if given is not None:
            raise ValueError(f"If backend or device is specified on jit, then {name} "
                             f"should not be specified.")
    if device is None:
        device = backend.platforms.local_devices(backend_name)[0]
    sharding = SingleDeviceSharding(device)
    return sharding, sharding


def make_jaxpr(fun, static_argnums=(), return_shape=False):
    """make_jaxpr(f)(*args) -> the ClosedJaxpr of f at the types of args (jit's trace,
    before any pass runs)."""
    traceable = JitFunction(fun, static_argnums=static_argnums)

    @core.wraps(fun)
    def make(*args, **kwargs):
        traced = traceable._trace_for("make_jaxpr", args, kwargs)
        return (traced.jaxpr, traced.out_info) if return_shape else traced.jaxpr
    return make


def eval_shape(fun, *args, **kwargs):
    """The output shapes and dtypes of fun(*args) as ShapeDtypeStructs, without computing.
    Arguments may be anything with a `shape` and `dtype` (ShapeDtypeStructs, avals)."""
    args, kwargs = tree_util.tree_map(_as_shape_dtype, (args, kwargs))
    return JitFunction(fun)._trace_for("eval_shape", args, kwargs).out_info


def _as_shape_dtype(x):
    if isinstance(x, (Array, core.Tracer, np.ndarray, np.generic, ShapeDtypeStruct)) \
            or type(x) in core.PYTHON_SCALARS:
        return x
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    if shape is None or dtype is None:
        return x
    return ShapeDtypeStruct(tuple(shape), dtype, weak_type=bool(getattr(x, "weak_type", False)))
