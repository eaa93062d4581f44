"""Host callbacks: Python functions called from (compiled) programs.

    debug_callback  calls a function for its side effect (debug.callback, breakpoint)
    debug_print     formats and prints its operands (debug.print)
    pure_callback   a pure function of its operands with declared result types
    io_callback     an impure function (experimental.io_callback)

All but pure_callback have effects (ir.effect_rules), so passes keep them; ordered ones
thread the lowering's token.  Eagerly the function is called at once on the concrete
values; compiled, through XLA's Python host callback (lowering.emit_host_callback).
The function always receives funcgraph Arrays (copies of the host values), as JAX's
callbacks receive jax Arrays.  Nothing flows back from a debug callback, so its JVP
prints the primals only and it transposes to nothing; under vmap it runs once per
element, as in JAX.  pure_callback has no JVP (JAX's error; wrap it in custom_jvp)."""
import string
import sys
import traceback

import numpy as np

from funcgraph import backend, core, dtypes, ir, tree_util
from funcgraph.array import Array, default_device, reshard
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import direct_impls, eval_trace, to_concrete
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.staging import trace_flat
from funcgraph.interpreters.transpose import transpose_rules
from funcgraph.lowering import callback_device, emit_host_callback
from funcgraph.primitives.base import move_batch_dim
from funcgraph.primitives.batching_helpers import broadcast_batched
from funcgraph.primitives.control_flow import scan_p
from funcgraph.primitives.helpers import declare
from funcgraph.primitives.jaxprs import const_free
from funcgraph.primitives.remat import recomputed_effects
from funcgraph.primitives.structural import slice_p, squeeze_p
from funcgraph.sharding import SingleDeviceSharding

debug_effect = ir.Effect("Debug")
ordered_debug_effect = ir.Effect("OrderedDebug", ordered=True)
io_effect = ir.Effect("IO")
ordered_io_effect = ir.Effect("OrderedIO", ordered=True, shardable=True)
# checkpoint re-runs debug callbacks when it recomputes, as JAX does
recomputed_effects.update((debug_effect, ordered_debug_effect))


# --- calling the user's function ---------------------------------------------------------

class FlatCallback:
    """The user's function called with flat dynamic values: rebuilds (args, kwargs) from
    the tree of the call with its static (non-array) leaves put back."""
    __slots__ = ("fun", "in_tree", "static_args")

    def __init__(self, fun, in_tree, static_args=()):
        self.fun = fun
        self.in_tree = in_tree
        self.static_args = tuple(static_args)  # ((leaf index, value), ...)

    def __call__(self, *dyn_args):
        static = dict(self.static_args)
        dyn = iter(dyn_args)
        leaves = [static[i] if i in static else next(dyn)
                  for i in range(len(static) + len(dyn_args))]
        args, kwargs = tree_util.tree_unflatten(self.in_tree, leaves)
        return self.fun(*args, **kwargs)

    @property
    def __name__(self):
        return getattr(self.fun, "__name__", type(self.fun).__name__)


def _as_arrays(values, avals):
    """Host values as funcgraph Arrays the callback may keep (copies); as in JAX they are
    not weakly typed (they come from the device)."""
    return [Array(np.array(v, dtype=a.dtype, copy=True), _strong(a))
            for v, a in core.safe_zip(values, avals)]


def _strong(aval):
    return aval.update(weak_type=False) if aval.weak_type else aval


def _concrete_args(args):
    """Eager operands as funcgraph Arrays; those laid out over devices as whole values on
    the default device (what a compiled callback receives, as in JAX)."""
    out = []
    for a in args:
        if type(a) is Array and a._sharding is None:
            out.append(a)
        elif type(a) is Array:
            out.append(Array(np.asarray(a), a.aval))
        else:
            value, aval = to_concrete(a)
            out.append(Array(value, aval))
    return out


def _checked_results(outs, result_avals):
    """The callback's results as NumPy arrays of the declared types (JAX's errors)."""
    outs = tree_util.tree_leaves(outs)
    if len(outs) != len(result_avals):
        raise RuntimeError(f"Mismatched number of outputs from callback. Expected: "
                           f"{len(result_avals)}, Actual: {len(outs)}")
    values = []
    for i, (out, aval) in enumerate(zip(outs, result_avals)):
        value = np.asarray(out)
        value = value.astype(dtypes.canonicalize(value.dtype), copy=False)
        if value.shape != aval.shape:
            raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                               f"Expected: {aval.shape}, Actual: {value.shape}")
        if value.dtype != aval.dtype:
            raise RuntimeError(f"Incorrect output dtype for return value #{i}: "
                               f"Expected: {aval.dtype}, Actual: {value.dtype}")
        values.append(value)
    return values


def _host_function(run, avals_in):
    """What compiled code calls: NumPy operands in, a tuple of NumPy results out; the
    user's code runs eagerly whatever thread XLA calls it on."""
    def host(*values):
        with core.set_trace(eval_trace):
            return tuple(run(_as_arrays(values, avals_in)))
    return host


# --- the rules the debug callbacks share ------------------------------------------------

def _no_outputs(*avals, **params):
    return []


def _declare_debug(name, run, effects_of):
    """A debug primitive: `run(arrays, **params)` calls the user's function; nothing comes
    back.  effects_of(params) -> the equation's effect."""
    def eager(*args, **params):
        run(_concrete_args(args), **params)
        return []

    def lower(ctx, avals_in, avals_out, *args, **params):
        host = _host_function(lambda arrays: run(arrays, **params) or (), avals_in)
        return emit_host_callback(ctx, host, args, avals_in, [],
                                  ordered=effects_of(params).ordered, side_effect=True,
                                  partitioned=params["partitioned"], what=name)

    def jvp(primals, tangents, **params):
        return prim.bind(*primals, **params), []

    def transpose(cts, *args, **params):
        return [None] * len(args)

    def batch(axis_data, args, dims, **params):
        for i in range(axis_data.size):
            prim.bind(*[a if d is None else _index(a, d, i) for a, d in zip(args, dims)],
                      **params)
        return [], []

    prim = declare(name, _no_outputs, None, lower, multiple_results=True)
    direct_impls[prim] = eager
    jvp_rules[prim] = jvp
    transpose_rules[prim] = transpose
    batching_rules[prim] = batch
    ir.effect_rules[prim] = lambda params: frozenset([effects_of(params)])
    return prim


def _index(x, dim, i):
    """x[..., i, ...] along dim (a batched operand's lane i)."""
    shape = core.get_aval(x).shape
    start = tuple(i if d == dim else 0 for d in range(len(shape)))
    limit = tuple(i + 1 if d == dim else n for d, n in enumerate(shape))
    row = slice_p.bind(x, start_indices=start, limit_indices=limit, strides=None)
    return squeeze_p.bind(row, dimensions=(dim,))


# --- debug_callback ----------------------------------------------------------------------

def _run_debug_callback(arrays, callback, effect, partitioned):
    callback(*arrays)


debug_callback_p = _declare_debug("debug_callback", _run_debug_callback,
                                  lambda params: params["effect"])


# --- debug_print -------------------------------------------------------------------------

def format_message(fmt, has_placeholders, np_printoptions, args, kwargs):
    """debug.print's text: fmt.format(...) under the print options of the call site, or
    without placeholders the values after fmt, separated by spaces."""
    if has_placeholders:
        with np.printoptions(**dict(np_printoptions)):
            return fmt.format(*args, **kwargs)
    return " ".join((fmt, *(str(a) for a in args)))


def _run_debug_print(arrays, fmt, has_placeholders, in_tree, np_printoptions, ordered,
                     partitioned, static_args):
    def write(*args, **kwargs):
        message = format_message(fmt, has_placeholders, np_printoptions, args, kwargs)
        sys.stdout.write(message + "\n")
    FlatCallback(write, in_tree, static_args)(*arrays)


debug_print_p = _declare_debug(
    "debug_print", _run_debug_print,
    lambda params: ordered_debug_effect if params["ordered"] else debug_effect)


class FormatChecker(string.Formatter):
    """Checks debug.print's arguments against its format without formatting anything."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused = [a for i, a in enumerate(args) if i not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused}")
        unused = [k for k in kwargs if k not in used_args]
        if unused:
            raise ValueError(f"Unused keyword arguments to `jax.debug.print`: {unused}. You "
                             f"may be passing an f-string (i.e, `f\"{{x}}\"`) into "
                             f"`jax.debug.print` and instead should pass in a regular string.")


# --- pure_callback -----------------------------------------------------------------------

VMAP_METHODS = ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized", None]


def _result_avals(*avals, result_avals, **params):
    return list(result_avals)


def _eager_results(args, callback, result_avals, sharding, what):
    """The callback called at once; its results on the device `sharding` names (which
    must be one the operands are on, as in JAX), else the default one."""
    device = _callback_device(args, sharding, what)
    try:
        arrays = [Array(a._value, _strong(a.aval)) if a.aval.weak_type else a
                  for a in _concrete_args(args)]  # as compiled code hands them over
        outs = _checked_results(callback(*arrays), result_avals)
    except Exception as e:  # as in JAX, where eager calls run compiled: the runtime's error
        raise backend.runtime_error_type()(
            f"INTERNAL: CpuCallback error calling callback: "
            f"{''.join(traceback.format_exception(e)).rstrip()}") from e
    results = [Array(v, a) for v, a in core.safe_zip(outs, result_avals)]
    if device is None:
        return results
    return [reshard(r, SingleDeviceSharding(device)) for r in results]


def _callback_device(args, sharding, what):
    if sharding is None:
        return None
    devices = set().union(*(a._sharding.device_set for a in args
                            if type(a) is Array and a._sharding is not None))
    devices = devices or {default_device()}
    device = callback_device(sharding)
    if device not in devices:
        raise ValueError(f"Sharding provided to {what} specifies a device {device} that is "
                         f"not in the device assignment ({sorted(devices, key=str)})")
    return device


def _pure_callback_eager(*args, callback, result_avals, sharding, vmap_method):
    return _eager_results(args, callback, result_avals, sharding, "pure_callback")


def _pure_callback_lowering(ctx, avals_in, avals_out, *args, callback, result_avals,
                            sharding, vmap_method):
    host = _host_function(lambda arrays: _checked_results(callback(*arrays), result_avals),
                          avals_in)
    return emit_host_callback(ctx, host, args, avals_in, list(avals_out), ordered=False,
                              side_effect=False, sharding=sharding, what="pure_callback")


def _pure_callback_jvp(primals, tangents, **params):
    raise ValueError("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
                     "callbacks while taking gradients.")


def _pure_callback_transpose(cts, *args, **params):
    raise ValueError("Pure callbacks do not support transpose. Please use `jax.custom_vjp` "
                     "to use callbacks while taking gradients.")


def _sequential(prim, axis_data, args, dims, unroll, **params):
    """The primitive once per element: a scan over the batched operands (moved to axis 0),
    the unbatched ones its constants."""
    batched = [d is not None for d in dims]
    fixed = [a for a, b in zip(args, batched) if not b]
    rows = [move_batch_dim(a, d, 0) for a, d in zip(args, dims) if d is not None]

    def body(*values):
        fixed_in, rows_in = iter(values[:len(fixed)]), iter(values[len(fixed):])
        merged = [next(rows_in) if b else next(fixed_in) for b in batched]
        return list(prim.bind(*merged, **params))

    in_avals = [core.get_aval(a) for a in fixed] + \
        [core.get_aval(r).update(shape=core.get_aval(r).shape[1:]) for r in rows]
    jaxpr, consts = const_free(trace_flat(body, in_avals))
    outs = scan_p.bind(*consts, *fixed, *rows, jaxpr=jaxpr, num_consts=len(consts) + len(fixed),
                       num_carry=0, length=axis_data.size, reverse=False,
                       unroll=axis_data.size if unroll else 1)
    return list(outs), [0] * len(outs)


def _pure_callback_batch(axis_data, args, dims, callback, result_avals, sharding,
                         vmap_method):
    params = dict(callback=callback, result_avals=result_avals, sharding=sharding,
                  vmap_method=vmap_method)
    if vmap_method in ("sequential", "sequential_unrolled"):
        return _sequential(pure_callback_p, axis_data, args, dims,
                           vmap_method == "sequential_unrolled", **params)
    if vmap_method not in ("expand_dims", "broadcast_all", "legacy_vectorized"):
        raise NotImplementedError(
            f"vmap is only supported for the pure_callback primitive when vmap_method is one "
            f"of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got vmap_method={vmap_method!r}.")
    size = axis_data.size if vmap_method == "broadcast_all" else 1
    new_args = [move_batch_dim(a, d, 0) if d is not None
                else a if vmap_method == "legacy_vectorized" else broadcast_batched(a, size, 0)
                for a, d in zip(args, dims)]
    batched_avals = tuple(a.update(shape=(axis_data.size,) + a.shape) for a in result_avals)
    outs = pure_callback_p.bind(*new_args, callback=callback, result_avals=batched_avals,
                                sharding=sharding, vmap_method=vmap_method)
    return list(outs), [0] * len(outs)


pure_callback_p = declare("pure_callback", _result_avals, None, _pure_callback_lowering,
                          multiple_results=True)
direct_impls[pure_callback_p] = _pure_callback_eager
jvp_rules[pure_callback_p] = _pure_callback_jvp
transpose_rules[pure_callback_p] = _pure_callback_transpose
batching_rules[pure_callback_p] = _pure_callback_batch


# --- io_callback -------------------------------------------------------------------------

def _io_callback_eager(*args, callback, result_avals, sharding, ordered):
    return _eager_results(args, callback, result_avals, sharding, "io_callback")


def _io_callback_lowering(ctx, avals_in, avals_out, *args, callback, result_avals, sharding,
                          ordered):
    host = _host_function(lambda arrays: _checked_results(callback(*arrays), result_avals),
                          avals_in)
    return emit_host_callback(ctx, host, args, avals_in, list(avals_out), ordered=ordered,
                              side_effect=True, sharding=sharding, what="io_callback")


def _io_callback_jvp(primals, tangents, **params):
    raise ValueError("IO callbacks do not support JVP.")


def _io_callback_transpose(cts, *args, **params):
    raise ValueError("IO callbacks do not support transpose.")


def _io_callback_batch(axis_data, args, dims, callback, result_avals, sharding, ordered):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    return _sequential(io_callback_p, axis_data, args, dims, False, callback=callback,
                       result_avals=result_avals, sharding=sharding, ordered=False)


io_callback_p = declare("io_callback", _result_avals, None, _io_callback_lowering,
                        multiple_results=True)
direct_impls[io_callback_p] = _io_callback_eager
jvp_rules[io_callback_p] = _io_callback_jvp
transpose_rules[io_callback_p] = _io_callback_transpose
batching_rules[io_callback_p] = _io_callback_batch
ir.effect_rules[io_callback_p] = lambda params: frozenset(
    [ordered_io_effect if params["ordered"] else io_effect])
