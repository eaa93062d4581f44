"""call_exported: a call of an exported function (funcgraph.export.Exported), whose
StableHLO module travels in jax.export's serialized form.

Its one parameter `exported` is the Exported object (read through its attributes:
fun_name, in_tree, in_avals, out_avals, platforms, effects, module_kept_var_idx,
disabled_checks, mlir_module_serialized).  The shape rule checks the operands against
the exported types with jax's messages; the lowering pastes the exported module's
functions into the module being built (renamed, all private) and calls its @main,
passing the platform index where the module was exported for several platforms.
Eagerly it runs compiled.  Differentiation goes through the Exported's VJP function
(a custom_vjp in funcgraph.export), as in jax; like jax's, the primitive has no JVP
and no batching rule."""
from funcgraph import core, dtypes, tree_util
from funcgraph.backend import export_format
from funcgraph.interpreters.batching import batching_rules
from funcgraph.lowering import tensor_type
from funcgraph.primitives.helpers import declare


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
            if w != g:
                raise ValueError(
                    f"Shape mismatch for {argument_descriptor(exported.in_tree, i, dim)} "
                    f"(expected same constant): expected {want.shape} and called with "
                    f"{got.shape}")
    return [core.ShapedArray(a.shape, a.dtype) for a in exported.out_avals]


def _platform_index(exported):
    """Which of the exported platforms this backend runs (jax's error when none)."""
    platform = export_format.default_platform()
    if platform in exported.platforms:
        return exported.platforms.index(platform)
    if ("platform", None) in exported.disabled_checks:
        return 0
    raise ValueError(f"Function '{exported.fun_name}' was exported for platforms "
                     f"'{exported.platforms}' but it is used on '{(platform,)}'.")


def _exported_functions(module, exported):
    """The symbol of the exported @main in `module`, its functions pasted in once."""
    key = ("call_exported", id(exported))
    found = module.function_names.get(key)
    if found is None:
        name = "".join(c if c.isalnum() else "_" for c in exported.fun_name)
        prefix = f"call_exported_{name}_{len(module.function_names)}_"
        text, main, types_in, types_out = export_format.portable_to_functions(
            exported.mlir_module_serialized, prefix)
        module.functions.append(text)
        found = module.function_names[key] = (main, types_in, types_out)
    return found


def _call_exported_lowering(ctx, avals_in, avals_out, *args, exported):
    if exported.ordered_effects or exported.unordered_effects:
        effects = exported.ordered_effects + exported.unordered_effects
        raise NotImplementedError(f"calling the exported function '{exported.fun_name}', "
                                  f"which has effects {effects}, is not supported")
    if exported.nr_devices != 1:
        raise NotImplementedError(f"calling the exported function '{exported.fun_name}', "
                                  f"exported for {exported.nr_devices} devices, is not "
                                  f"supported: funcgraph calls exports for one device")
    index = _platform_index(exported)
    main, types_in, types_out = _exported_functions(ctx.module, exported)
    operands = [args[i] for i in exported.module_kept_var_idx]
    if len(exported.platforms) > 1:
        scalar = core.ShapedArray((), dtypes.int32)
        operands.insert(0, ctx.constant(index, scalar))
    expected = [tensor_type(a) for a in avals_out]
    if types_out != expected:
        raise ValueError(f"the exported module of '{exported.fun_name}' returns "
                         f"{types_out}, but its Exported declares {expected}")
    return ctx.raw_op("func.call", operands, types_in, types_out, {"callee": f"@{main}"})


call_exported_p = declare("call_exported", _call_exported_shape_rule, None,
                          _call_exported_lowering, multiple_results=True)


def _call_exported_batching(axis_data, args, dims, exported):
    raise core.MissingRuleError(
        f"Batching rule for 'call_exported' not implemented (as in jax.export): vmap the "
        f"function before exporting it, or map the call of '{exported.fun_name}' over "
        f"the batch with lax.map")


batching_rules[call_exported_p] = _call_exported_batching
