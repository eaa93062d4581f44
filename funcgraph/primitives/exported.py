"""call_exported: a call of an exported function (funcgraph.export.Exported), whose
StableHLO module travels in jax.export's serialized form.

Its one parameter `exported` is the Exported object (read through its attributes:
fun_name, in_tree, in_avals, out_avals, platforms, effects, module_kept_var_idx,
disabled_checks, mlir_module_serialized).  The shape rule checks the operands against
the exported types with jax's messages; the lowering pastes the exported module's
functions into the module being built (renamed, all private) and calls its @main,
passing the platform index where the module was exported for several platforms.  An
export for several devices runs only in a program over that many devices: its meshes
become meshes over the program's devices (in their order), and its arguments and
results are constrained to its shardings, as jax does.  A
shape-polymorphic module (symbolic dimensions, from jax) is first specialized to the
operands' static types by the backend (jaxlib's shape refinement), which also gives
the result shapes.
Eagerly it runs compiled, where its committed arguments are.  Differentiation goes through the Exported's VJP function
(a custom_vjp in funcgraph.export), as in jax; like jax's, the primitive has no JVP
and no batching rule."""
import weakref

import numpy as np

from funcgraph import core, dtypes, shape_poly, tree_util
from funcgraph.array import default_device
from funcgraph.backend import export_format
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import compiled_eval, device_values, direct_impls
from funcgraph.interpreters.staging import trace_flat
from funcgraph.lowering import tensor_type
from funcgraph.primitives.helpers import declare
from funcgraph.sharding import AxisType, Mesh, NamedSharding, PartitionSpec


def argument_descriptor(in_tree, index, dim=None):
    """jax's name of flat argument `index` of an (args, kwargs) tree, e.g. "args[0]['w']"
    or, with dim, "kwargs['x'].shape[1]"."""
    dummy = tree_util.tree_unflatten(in_tree, list(range(in_tree.num_leaves)))
    paths = tree_util.tree_flatten_with_path(dummy)[0]
    (first, *rest), _ = paths[index]
    name = ("args" if first.idx == 0 else "kwargs") + tree_util.keystr(rest)
    return name if dim is None else f"{name}.shape[{dim}]"


def _call_exported_shape_rule(*avals, exported):
    expected = exported.in_avals
    if len(avals) != len(expected):
        raise ValueError(f"call_exported of '{exported.fun_name}' takes {len(expected)} "
                         f"arguments, got {len(avals)}")
    for i, (want, got) in enumerate(zip(expected, avals, strict=True)):
        if len(want.shape) != len(got.shape):
            raise ValueError(f"Rank mismatch for "
                             f"{argument_descriptor(exported.in_tree, i)}: expected "
                             f"{want.shape} and called with {got.shape}")
        if want.dtype != got.dtype:
            raise ValueError(f"Dtype mismatch for "
                             f"{argument_descriptor(exported.in_tree, i)}: expected "
                             f"{want.dtype} and called with {got.dtype}")
        for dim, (w, g) in enumerate(zip(want.shape, got.shape, strict=True)):
            if not is_symbolic(w) and w != g:
                raise ValueError(
                    f"Shape mismatch for {argument_descriptor(exported.in_tree, i, dim)} "
                    f"(expected same constant): expected {_shape_text(want.shape)} and "
                    f"called with {got.shape}")
    if not is_polymorphic(exported):
        return list(exported.out_avals)  # weak types as exported (a fresh Exported's)
    _check_dimension_variables(exported, avals)
    _, _, _, types_out = _functions(exported, avals)
    shapes = [export_format.tensor_type_to_aval(t)[0] for t in types_out]
    return [core.ShapedArray(s, a.dtype, a.weak_type)
            for s, a in zip(shapes, exported.out_avals, strict=True)]


def _shape_text(shape):
    """A shape as jax prints one with symbolic dimensions: (b, 3)."""
    inner = ", ".join(str(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def _check_dimension_variables(exported, avals):
    """jax's static checks of the dimensions that are a lone variable: each variable has
    one value, at least 1 (other expressions are checked by the module's assertions,
    when it is specialized)."""
    seen = {}
    for i, (want, got) in enumerate(zip(exported.in_avals, avals, strict=True)):
        for dim, (w, g) in enumerate(zip(want.shape, got.shape, strict=True)):
            if not (is_symbolic(w) and str(w).isidentifier()):
                continue
            w = str(w)
            where = argument_descriptor(exported.in_tree, i, dim)
            if g < 1:
                raise ValueError(f"Input shapes do not match the polymorphic shapes "
                                 f"specification. Expected value >= 1 for dimension "
                                 f"variable '{w}'. Obtained {g} for {where}.")
            if w in seen and seen[w][0] != g:
                raise ValueError(f"Input shapes do not match the polymorphic shapes "
                                 f"specification. Found inconsistency between dimension "
                                 f"size {where} (= {g}) and the specification '{w}' "
                                 f"(= {seen[w][0]}).")
            seen.setdefault(w, (g, where))


def is_symbolic(dim):
    """Whether a dimension of an exported aval is symbolic (jax's shape polymorphism:
    a string such as "b" or "2*b" when deserialized, a DimExpr when exported here)."""
    return isinstance(dim, (str, shape_poly.DimExpr))


def is_polymorphic(exported):
    return any(is_symbolic(d) for a in exported.in_avals for d in a.shape)


def _operand_types(exported, avals):
    """The MLIR types of the operands the lowering passes to the exported @main."""
    types = [tensor_type(avals[i]) for i in exported.module_kept_var_idx]
    if len(exported.platforms) > 1:
        types.insert(0, tensor_type(core.ShapedArray((), dtypes.int32)))
    return tuple(types)


def _functions(exported, avals):
    """(text, entry symbol, input types, result types) of the functions to paste in, with
    export_format.PLACEHOLDER as the prefix of their symbols; a shape-polymorphic module
    specialized to the operands' static types."""
    if is_polymorphic(exported):
        return export_format.specialized_functions(exported.mlir_module_serialized,
                                                   _operand_types(exported, avals))
    return export_format.portable_to_functions(exported.mlir_module_serialized)


def _platform_index(exported):
    """Which of the exported platforms this backend runs (jax's error when none)."""
    platform = export_format.default_platform()
    if platform in exported.platforms:
        return exported.platforms.index(platform)
    if ("platform", None) in exported.disabled_checks:
        return 0
    raise ValueError(f"Function '{exported.fun_name}' was exported for platforms "
                     f"'{exported.platforms}' but it is used on '{(platform,)}'.")


def _exported_functions(module, exported, avals_in):
    """The entry symbol of the exported module in `module` and its types, its functions
    pasted in once per exported module and operand types."""
    key = ("call_exported", id(exported), tuple(avals_in))
    found = module.function_names.get(key)
    if found is None:
        name = "".join(c if c.isalnum() else "_" for c in exported.fun_name)
        prefix = f"call_exported_{name}_{len(module.function_names)}_"
        text, entry, types_in, types_out = _functions(exported, avals_in)
        meshes = export_format.exported_meshes(exported.mlir_module_serialized)
        if meshes:
            text = export_format.replace_meshes(text, {
                mesh_name: module.mesh_symbol(_program_mesh(module, names, sizes))
                for mesh_name, names, sizes in meshes})
        module.functions.append(text.replace(export_format.PLACEHOLDER, prefix))
        entry = entry.replace(export_format.PLACEHOLDER, prefix)
        found = module.function_names[key] = (entry, list(types_in), list(types_out))
    return found


def _program_mesh(module, names, sizes, types=None):
    """A mesh of the given axes over the devices of the program being lowered, in their
    order (one the module already uses when it has one such), as jax makes the exported
    abstract mesh concrete over the devices of the computation calling it."""
    devices = module.devices if module.devices is not None else (default_device(),)
    for mesh in module.meshes:
        if (mesh.axis_names == tuple(names) and tuple(mesh.axis_sizes) == tuple(sizes)
                and mesh.local_devices == list(devices)
                and (types is None or mesh.axis_types == types)):
            return mesh
    grid = np.empty(len(devices), dtype=object)
    grid[:] = devices
    return Mesh(grid.reshape(sizes), names, types)


def _constrain(ctx, values, avals, records):
    """Each value under a sharding constraint to its exported sharding (None: as it
    is), over the program's devices."""
    out = []
    for x, aval, record in zip(values, avals, records, strict=True):
        if record is not None:
            types = tuple(AxisType[t] for t in record.axis_types)
            mesh = _program_mesh(ctx.module, record.axis_names, record.axis_sizes, types)
            sharding = NamedSharding(mesh, PartitionSpec(*record.partitions))
            x = ctx.op("sdy.sharding_constraint", [x], [aval], aval,
                       {"sharding": ctx.module.sharding_attr(sharding, aval)})
        out.append(x)
    return out


def _check_device_count(module, exported):
    count = len(module.devices) if module.devices is not None else 1
    if exported.nr_devices != 1 and count != exported.nr_devices:
        raise ValueError(f"Function {exported.fun_name} was exported for "
                         f"{exported.nr_devices} devices and is called in a context with "
                         f"{count} devices, which is not allowed.")


def _call_exported_lowering(ctx, avals_in, avals_out, *args, exported):
    if exported.ordered_effects or exported.unordered_effects:
        effects = exported.ordered_effects + exported.unordered_effects
        raise NotImplementedError(f"calling the exported function '{exported.fun_name}', "
                                  f"which has effects {effects}, is not supported")
    _check_device_count(ctx.module, exported)
    index = _platform_index(exported)
    args = _constrain(ctx, args, avals_in, exported._in_named_shardings)
    main, types_in, types_out = _exported_functions(ctx.module, exported, avals_in)
    operands = [args[i] for i in exported.module_kept_var_idx]
    if len(exported.platforms) > 1:
        scalar = core.ShapedArray((), dtypes.int32)
        operands.insert(0, ctx.constant(index, scalar))
    expected = [tensor_type(a) for a in avals_out]
    if types_out != expected:
        raise ValueError(f"the exported module of '{exported.fun_name}' returns "
                         f"{types_out}, but its Exported declares {expected}")
    outs = ctx.raw_op("func.call", operands, types_in, types_out, {"callee": f"@{main}"})
    return _constrain(ctx, outs, avals_out, exported._out_named_shardings)


call_exported_p = declare("call_exported", _call_exported_shape_rule, None,
                          _call_exported_lowering, multiple_results=True)
core.keeps_operand_vma.add(call_exported_p)

# Per Exported for several devices: its call traced once per argument types, kept so
# that the compiled program is cached with it.
_placed_calls = weakref.WeakKeyDictionary()


def _call_exported_direct(*args, exported):
    """Eagerly: compiled like any primitive without a NumPy version; an export for
    several devices compiled where its committed arguments are (jax's error when they
    are on fewer devices)."""
    if exported.nr_devices == 1:
        vals, avals = device_values(args)
        return compiled_eval["primitive"](call_exported_p, avals, {"exported": exported},
                                          vals)
    avals = tuple(core.get_aval(a) for a in args)
    calls = _placed_calls.setdefault(exported, {})
    closed = calls.get(avals)
    if closed is None:
        closed = calls[avals] = trace_flat(
            lambda *xs: list(call_exported_p.bind(*xs, exported=exported)), avals)
    return compiled_eval["jaxpr"](closed, list(args))


direct_impls[call_exported_p] = _call_exported_direct


def _call_exported_batching(axis_data, args, dims, exported):
    raise core.MissingRuleError(
        f"Batching rule for 'call_exported' not implemented (as in jax.export): vmap the "
        f"function before exporting it, or map the call of '{exported.fun_name}' over "
        f"the batch with lax.map")


batching_rules[call_exported_p] = _call_exported_batching
