"""jax.export's serialized format, read and written for funcgraph (backend only).

An exported artifact is a flatbuffer (schema: jax's `serialization_generated` module,
built with the `flatbuffers` package) holding the calling convention, the pytree
structure and abstract values of the arguments and results, and the StableHLO module
as a portable artifact (VHLO bytecode, readable by any StableHLO consumer within the
compatibility window).  funcgraph writes the same bytes jax does, so each side loads
what the other exports.

The rest of funcgraph sees plain Python values only: a `Record` whose trees are nested
tuples (`("leaf",)`, `("none",)`, `("tuple", children)`, `("list", children)`,
`("dict", keys, children)`, `("custom", name, auxdata, children)`) and whose abstract
values are `(dims, dtype name)` with every dimension a string, as jax stores them.
A sharding is None (unspecified) or a `ShardingRecord`: a NamedSharding over an
abstract mesh (axis names, sizes and types, and the kind of device), as jax stores it.
"""
import collections
import functools
import io
import re
import types

import numpy as np

from funcgraph.backend import _client, _jax, _mlir_context

# The flatbuffer schema version jax stores in the header (newer readers accept 3 and
# look for the fields added since).
_SERIALIZATION_VERSION_FIELD = 3

_DTYPE_KINDS = {
    "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "ui8", "uint16": "ui16", "uint32": "ui32", "uint64": "ui64",
    "float16": "f16", "float32": "f32", "float64": "f64", "complex64": "c64",
    "complex128": "c128", "bfloat16": "bf16", "float0": "f0", "int4": "i4", "uint4": "ui4",
    "float8_e4m3fn": "f8_e4m3fn", "float8_e5m2": "f8_e5m2",
}

_TREE_KINDS = ("leaf", "none", "tuple", "list", "dict", "custom")


# A NamedSharding over an abstract mesh: axis_types are names ("Auto", "Explicit",
# "Manual"), device is (device kind, number of cores or None, platform) or None,
# partitions is a PartitionSpec's entries (None, an axis name or a tuple of them).
ShardingRecord = collections.namedtuple(
    "ShardingRecord", "axis_names axis_sizes axis_types device partitions memory_kind")


def Record(**fields):
    """One exported function, as plain values (see the module docstring)."""
    return types.SimpleNamespace(**fields)


@functools.lru_cache(maxsize=None)
def _schema():
    """jax's flatbuffer schema module and the flatbuffers package (imported on first
    use: only exporting needs them)."""
    try:
        import flatbuffers
        serialization_generated = _jax().serialization_generated
    except ImportError as e:
        raise ImportError(f"exporting needs the 'flatbuffers' package ({e}); "
                          f"pip install flatbuffers") from e
    return flatbuffers, serialization_generated


# --- StableHLO modules ---------------------------------------------------------------

def _stablehlo():
    return _jax().stablehlo


def module_to_portable(text):
    """The portable artifact (VHLO bytecode) of a StableHLO module's text, targeting the
    StableHLO version at least 4 weeks old (what jax targets, so consumers updated
    monthly can read it).  jaxlib's serializer, as jax's: with the backend's mixed
    serialization it carries the Shardy meshes and shardings of a sharded module."""
    stablehlo = _stablehlo()
    target = stablehlo.get_version_from_compatibility_requirement(
        stablehlo.StablehloCompatibilityRequirement.WEEK_4)
    with_sdy = bool(getattr(_client(), "serialize_with_sdy", True))
    with _mlir_context():
        module = _jax().mlir_ir.Module.parse(text)
        return bytes(_jax_lib().mlir.serialize_portable_artifact(module, target, with_sdy))


def _portable_to_module(artifact):
    return _stablehlo().deserialize_portable_artifact(_mlir_context(), bytes(artifact))


def portable_to_text(artifact):
    """The StableHLO module of a portable artifact, in MLIR's pretty form."""
    with _mlir_context():
        return str(_portable_to_module(artifact))


# Symbols of pasted functions start with this; the caller replaces it with a prefix
# unique in its module.
PLACEHOLDER = "__funcgraph_exported__"
# References to the module's Shardy meshes become @MESH_PLACEHOLDER + mesh name; the
# caller replaces each with the symbol of the host module's mesh over its devices.
MESH_PLACEHOLDER = "__funcgraph_exported_mesh__"


def replace_meshes(text, symbols):
    """The pasted text with each mesh placeholder reference replaced: `symbols` maps
    the exported module's mesh names to the host's mesh symbols."""
    return re.sub(r"@" + MESH_PLACEHOLDER + r"([A-Za-z0-9_$.]+)",
                  lambda m: "@" + symbols[m.group(1)], text)


@functools.lru_cache(maxsize=64)
def exported_meshes(artifact):
    """The Shardy meshes of a portable artifact: (name, axis names, axis sizes) each."""
    out = []
    with _mlir_context():
        for op in _portable_to_module(artifact).body.operations:
            if op.operation.name != "sdy.mesh":
                continue
            name = _jax().mlir_ir.StringAttr(op.attributes["sym_name"]).value
            text = str(op.attributes["mesh"])
            if "device_ids" in text:
                raise NotImplementedError(f"calling an exported module whose mesh {text} "
                                          f"lists device ids is not supported")
            axes = re.findall(r'"([^"]+)"\s*=\s*(\d+)', text)
            out.append((name, tuple(n for n, _ in axes), tuple(int(k) for _, k in axes)))
    return tuple(out)


@functools.lru_cache(maxsize=64)
def portable_to_functions(artifact, prefix=PLACEHOLDER):
    """The functions of a portable artifact as generic-form text to paste into another
    module: every symbol renamed `prefix` + name and made private, so that they cannot
    clash with the host module's; its Shardy meshes left out, their uses renamed
    MESH_PLACEHOLDER + name (see exported_meshes).  Returns (text, main symbol, main's
    input types, main's result types), the types as MLIR text."""
    with _mlir_context():
        module = _portable_to_module(artifact)
        ir = _jax().mlir_ir
        symbols = ir.SymbolTable(module.operation)
        ops = []
        for op in list(module.body.operations):
            if op.operation.name == "sdy.mesh":
                name = ir.StringAttr(op.attributes["sym_name"]).value
                ir.SymbolTable.replace_all_symbol_uses(name, MESH_PLACEHOLDER + name,
                                                       module.operation)
                continue
            ops.append(op)
        names = []
        for op in ops:
            if op.operation.name != "func.func":
                raise NotImplementedError(
                    f"calling an exported module holding a top-level "
                    f"{op.operation.name} is not supported")
            names.append(ir.StringAttr(op.attributes["sym_name"]).value)
        for name in names:
            ir.SymbolTable.replace_all_symbol_uses(name, prefix + name, module.operation)
        main = None
        for op, name in zip(ops, names, strict=True):
            symbols.set_symbol_name(op, prefix + name)
            op.attributes["sym_visibility"] = ir.StringAttr.get("private")
            if name == "main":
                main = op
        if main is None:
            raise ValueError("the exported module has no @main function")
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        text = "\n".join(op.operation.get_asm(print_generic_op_form=True,
                                              enable_debug_info=False) for op in ops)
        return (text, prefix + "main", tuple(str(t) for t in ftype.inputs),
                tuple(str(t) for t in ftype.results))


_ELEMENT_DTYPES = {
    "i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "ui8": "uint8", "ui16": "uint16", "ui32": "uint32", "ui64": "uint64",
    "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
    "complex<f32>": "complex64", "complex<f64>": "complex128",
}


def tensor_type_to_aval(text):
    """(shape, dtype name) of a static `tensor<3x4xf32>` type."""
    body = text[len("tensor<"):-1]
    if "complex<" in body:
        split = body.index("complex<")
        dims, element = body[:split].rstrip("x"), body[split:]
    else:
        dims, _, element = body.rpartition("x")
    return tuple(int(d) for d in dims.split("x") if d), _ELEMENT_DTYPES[element]


@functools.lru_cache(maxsize=256)
def specialized_functions(artifact, arg_types, prefix=PLACEHOLDER):
    """portable_to_functions of a module with dynamic (`?`) dimensions, specialized to
    static argument types: an entry function `prefix + "entry"` taking `arg_types`
    calls the module's @main, and jaxlib's shape refinement (the pass jax runs before
    compiling such modules; it also checks the module's shape assertions) makes every
    shape static.  Returns (text, entry symbol, input types, static result types)."""
    text, main, types_in, types_out = portable_to_functions(artifact, prefix)
    if len(arg_types) != len(types_in):
        raise ValueError(f"the exported module takes {len(types_in)} arguments, "
                         f"not {len(arg_types)}")
    lines = ["  func.func public @main("
             + ", ".join(f"%a{i}: {t}" for i, t in enumerate(arg_types))
             + f") -> ({', '.join(types_out)}) {{"]
    operands = []
    for i, (have, want) in enumerate(zip(arg_types, types_in, strict=True)):
        if have == want:
            operands.append(f"%a{i}")
        else:
            lines.append(f'    %c{i} = "stablehlo.convert"(%a{i}) : ({have}) -> {want}')
            operands.append(f"%c{i}")
    results = ", ".join(f"%r#{i}" for i in range(len(types_out)))
    lines.append(f'    %r:{len(types_out)} = "func.call"({", ".join(operands)}) '
                 f'{{callee = @{main}}} : ({", ".join(types_in)}) -> '
                 f'({", ".join(types_out)})' if types_out else
                 f'    "func.call"({", ".join(operands)}) {{callee = @{main}}} : '
                 f'({", ".join(types_in)}) -> ()')
    lines.append(f'    "func.return"({results}) : ({", ".join(types_out)}) -> ()')
    lines.append("  }")
    wrapper = "module {\n" + text + "\n" + "\n".join(lines) + "\n}\n"
    jax = _jax()
    refine = _jax_lib().mlir.refine_polymorphic_shapes
    with _mlir_context():
        module = jax.mlir_ir.Module.parse(wrapper)
        bytecode = _module_bytecode(module)
    try:
        refined = refine(bytecode, enable_shape_assertions=True, validate_static_shapes=True)
    except Exception as e:
        raise ValueError(f"the shape-polymorphic exported module does not accept "
                         f"arguments of types {', '.join(arg_types)}: {e}") from None
    return _rename_entry(refined, prefix)


def _jax_lib():
    return _jax().jaxlib_extension


def _module_bytecode(module):
    out = io.BytesIO()
    module.operation.write_bytecode(out)
    return out.getvalue()


def _rename_entry(refined, prefix):
    """The refined module's functions, its public @main renamed prefix + "entry" and made
    private, with the entry's (now static) types."""
    ir = _jax().mlir_ir
    with _mlir_context():
        module = ir.Module.parse(refined)
        symbols = ir.SymbolTable(module.operation)
        entry = symbols["main"]
        ir.SymbolTable.replace_all_symbol_uses("main", prefix + "entry", module.operation)
        symbols.set_symbol_name(entry, prefix + "entry")
        entry.attributes["sym_visibility"] = ir.StringAttr.get("private")
        ftype = ir.FunctionType(ir.TypeAttr(entry.attributes["function_type"]).value)
        text = "\n".join(op.operation.get_asm(print_generic_op_form=True,
                                               enable_debug_info=False)
                         for op in module.body.operations)
        return (text, prefix + "entry", tuple(str(t) for t in ftype.inputs),
                tuple(str(t) for t in ftype.results))


def unstable_custom_calls(text):
    """The custom-call targets of a module that jax gives no compatibility guarantee
    for (such modules cannot be exported), in order of appearance."""
    stable = _jax().export_internal._CUSTOM_CALL_TARGETS_GUARANTEED_STABLE
    found = []
    with _mlir_context():
        module = _jax().mlir_ir.Module.parse(text)

        def walk(op):
            if op.name == "stablehlo.custom_call":
                target = _jax().mlir_ir.StringAttr(op.attributes["call_target_name"]).value
                if target not in stable and target not in found:
                    found.append(target)
            for region in op.regions:
                for block in region:
                    for inner in block.operations:
                        walk(inner.operation)
        walk(module.operation)
    return found


def reads_back_hlo_shardings():
    """Whether a deserialized Exported carries HloShardings (`in_shardings_hlo`,
    `out_shardings_hlo`) as the installed jax reads them back: jax 0.10 derives them
    from the named shardings; jax 0.11 leaves them None, as on a fresh export (the
    named shardings are what it uses)."""
    return _jax().jax.__version_info__ < (0, 11)


def hlo_sharding(sharding, ndim):
    """XLA's HloSharding of a ShardingRecord on a value of rank ndim (what jax gives as
    `in_shardings_hlo` of a deserialized Exported): the devices of the mesh, in its
    order, tiled along each dimension by the axes splitting it, replicated over the
    axes that split none."""
    xla_client = _jax().xla_client
    names, sizes = list(sharding.axis_names), list(sharding.axis_sizes)
    per_dim = [() if p is None else (p,) if isinstance(p, str) else tuple(p)
               for p in list(sharding.partitions) + [None] * (ndim - len(sharding.partitions))]
    used = [a for axes in per_dim for a in axes]
    unused = [a for a in names if a not in used]
    tiles = [int(np.prod([sizes[names.index(a)] for a in axes])) for axes in per_dim]
    if int(np.prod(tiles)) == 1:
        return xla_client.HloSharding.replicate()
    replicas = int(np.prod([sizes[names.index(a)] for a in unused]))
    dims = tiles + ([replicas] if replicas > 1 else [])
    subgroups = [xla_client.OpSharding.Type.REPLICATED] if replicas > 1 else []
    return xla_client.HloSharding.iota_tile(dims, sizes, [names.index(a) for a in used + unused],
                                            subgroups)


def default_platform():
    """The platform name exports target by default: 'cpu', 'cuda', 'rocm' or 'tpu'."""
    return _jax().export.default_export_platform()


# --- writing ---------------------------------------------------------------------------

def serialize(record, vjp_order=0):
    """The bytes of `record` in jax.export's format, with `vjp_order` levels of VJP
    functions (`record.vjp()` gives the next level's record)."""
    flatbuffers, _ = _schema()
    builder = flatbuffers.Builder(65536)
    builder.Finish(_write_exported(builder, record, vjp_order))
    return bytes(builder.Output())


def _offsets_vector(builder, offsets):
    builder.StartVector(4, len(offsets), 4)
    for offset in reversed(offsets):
        builder.PrependUOffsetTRelative(offset)
    return builder.EndVector()


def _strings_vector(builder, strings):
    return _offsets_vector(builder, [builder.CreateString(s) for s in strings])


def _write_tree(builder, tree):
    fb = _schema()[1]
    kind = tree[0]
    children = names = custom_name = auxdata = None
    if kind in ("tuple", "list"):
        children = tree[1]
    elif kind == "dict":
        names = _strings_vector(builder, tree[1])
        children = tree[2]
    elif kind == "custom":
        custom_name = builder.CreateString(tree[1])
        auxdata = builder.CreateByteVector(tree[2])
        children = tree[3]
    children = _offsets_vector(builder, [_write_tree(builder, c) for c in children]) \
        if children else None
    fb.PyTreeDefStart(builder)
    fb.PyTreeDefAddKind(builder, _TREE_KINDS.index(kind))
    if children is not None:
        fb.PyTreeDefAddChildren(builder, children)
    if names is not None:
        fb.PyTreeDefAddChildrenNames(builder, names)
    if custom_name is not None:
        fb.PyTreeDefAddCustomName(builder, custom_name)
        fb.PyTreeDefAddCustomAuxdata(builder, auxdata)
    return fb.PyTreeDefEnd(builder)


def _write_aval(builder, aval):
    fb = _schema()[1]
    dims, dtype = aval
    shape = _strings_vector(builder, dims)
    fb.AbstractValueStart(builder)
    fb.AbstractValueAddKind(builder, fb.AbstractValueKind.shapedArray)
    fb.AbstractValueAddShape(builder, shape)
    fb.AbstractValueAddDtype(builder, getattr(fb.DType, _DTYPE_KINDS[dtype]))
    fb.AbstractValueAddMemorySpace(builder, fb.MemorySpace.Device)
    return fb.AbstractValueEnd(builder)


def _mesh_of(sharding):
    return sharding[:4]


def _write_abstract_mesh(builder, mesh):
    fb = _schema()[1]
    axis_names, axis_sizes, axis_types, device = mesh
    fb.AbstractMeshStartAxisSizesVector(builder, len(axis_sizes))
    for size in reversed(axis_sizes):
        builder.PrependUint32(size)
    sizes = builder.EndVector()
    names = _strings_vector(builder, axis_names)
    fb.AbstractMeshStartAxisTypesVector(builder, len(axis_types))
    for kind in reversed(axis_types):
        builder.PrependByte(getattr(fb.AxisType, kind))
    kinds = builder.EndVector()
    abstract_device = None
    if device is not None:
        device_kind, num_cores, platform = device
        device_kind = builder.CreateString(device_kind)
        platform = builder.CreateString(platform) if platform else None
        fb.AbstractDeviceStart(builder)
        fb.AbstractDeviceAddDeviceKind(builder, device_kind)
        if num_cores is not None:
            fb.AbstractDeviceAddNumCores(builder, num_cores)
        if platform is not None:
            fb.AbstractDeviceAddPlatform(builder, platform)
        abstract_device = fb.AbstractDeviceEnd(builder)
    fb.AbstractMeshStart(builder)
    fb.AbstractMeshAddAxisSizes(builder, sizes)
    fb.AbstractMeshAddAxisNames(builder, names)
    fb.AbstractMeshAddAxisTypes(builder, kinds)
    if abstract_device is not None:
        fb.AbstractMeshAddAbstractDevice(builder, abstract_device)
    return fb.AbstractMeshEnd(builder)


def _write_partition_spec(builder, partitions):
    fb = _schema()[1]
    entries = []
    for p in partitions:
        axes = _strings_vector(builder, () if p is None else (p,) if isinstance(p, str) else p)
        fb.PartitionSpecOneAxisStart(builder)
        fb.PartitionSpecOneAxisAddAxes(builder, axes)
        entries.append(fb.PartitionSpecOneAxisEnd(builder))
    entries = _offsets_vector(builder, entries)
    reduced, unreduced = _strings_vector(builder, ()), _strings_vector(builder, ())
    fb.PartitionSpecStart(builder)
    fb.PartitionSpecAddPartitions(builder, entries)
    fb.PartitionSpecAddReduced(builder, reduced)
    fb.PartitionSpecAddUnreduced(builder, unreduced)
    return fb.PartitionSpecEnd(builder)


def _write_named_sharding(builder, sharding, meshes):
    """A NamedSharding table (its mesh written in full, as jax 0.10 still does for older
    readers, and as an index into the unique meshes)."""
    fb = _schema()[1]
    mesh = _write_abstract_mesh(builder, _mesh_of(sharding))
    spec = _write_partition_spec(builder, sharding.partitions)
    kind = builder.CreateString(sharding.memory_kind) if sharding.memory_kind else None
    fb.NamedShardingStart(builder)
    fb.NamedShardingAddMesh(builder, mesh)
    fb.NamedShardingAddSpec(builder, spec)
    if kind is not None:
        fb.NamedShardingAddMemoryKind(builder, kind)
    fb.NamedShardingAddAbstractMeshIdx(builder, meshes.index(_mesh_of(sharding)))
    return fb.NamedShardingEnd(builder)


def _write_sharding(builder, sharding, meshes):
    """A Sharding table: empty when unspecified, else holding a NamedSharding."""
    fb = _schema()[1]
    named = _write_named_sharding(builder, sharding, meshes) if sharding is not None else None
    fb.ShardingStart(builder)
    if named is not None:
        fb.ShardingAddNamedSharding(builder, named)
    return fb.ShardingEnd(builder)


def _write_disabled_check(builder, check):
    fb = _schema()[1]
    kind, target = check
    target = builder.CreateString(target) if target is not None else None
    fb.DisabledSafetyCheckStart(builder)
    fb.DisabledSafetyCheckAddKind(builder, getattr(fb.DisabledSafetyCheckKind, kind))
    if target is not None:
        fb.DisabledSafetyCheckAddCustomCallTarget(builder, target)
    return fb.DisabledSafetyCheckEnd(builder)


def _write_effect(builder, name):
    fb = _schema()[1]
    name = builder.CreateString(name)
    fb.EffectStart(builder)
    fb.EffectAddTypeName(builder, name)
    return fb.EffectEnd(builder)


def _u32_vector(builder, values):
    return builder.CreateNumpyVector(np.asarray(values, np.uint32))


def _write_exported(builder, record, vjp_order):
    """The Exported table of `record` (children written first, as flatbuffers need),
    with its shardings both per argument and as indices into the unique ones."""
    fb = _schema()[1]
    unique_avals = list(dict.fromkeys(record.in_avals + record.out_avals))
    all_shardings = record.in_shardings + record.out_shardings
    unique_shardings = list(dict.fromkeys(s for s in all_shardings if s is not None))
    unique_meshes = list(dict.fromkeys(_mesh_of(s) for s in unique_shardings))
    fun_name = builder.CreateString(record.fun_name)
    in_tree = _write_tree(builder, record.in_tree)
    in_avals = _offsets_vector(builder, [_write_aval(builder, a) for a in record.in_avals])
    out_tree = _write_tree(builder, record.out_tree)
    out_avals = _offsets_vector(builder, [_write_aval(builder, a) for a in record.out_avals])
    in_shardings = _offsets_vector(
        builder, [_write_sharding(builder, s, unique_meshes) for s in record.in_shardings])
    out_shardings = _offsets_vector(
        builder, [_write_sharding(builder, s, unique_meshes) for s in record.out_shardings])
    ordered = _offsets_vector(builder, [_write_effect(builder, e)
                                        for e in record.ordered_effects])
    unordered = _offsets_vector(builder, [_write_effect(builder, e)
                                          for e in record.unordered_effects])
    checks = _offsets_vector(builder, [_write_disabled_check(builder, c)
                                       for c in record.disabled_checks])
    platforms = _strings_vector(builder, record.platforms)
    module = builder.CreateByteVector(record.mlir_module_serialized)
    kept = builder.CreateNumpyVector(np.asarray(record.module_kept_var_idx, np.uint16))
    vjp = None
    if vjp_order > 0:
        if record.vjp is None:
            raise ValueError("serialization of an Exported that does not have vjps of "
                             "high-enough order")
        vjp = _write_exported(builder, record.vjp(), vjp_order - 1)
    uniques = _offsets_vector(builder, [_write_aval(builder, a) for a in unique_avals])
    meshes = _offsets_vector(builder, [_write_abstract_mesh(builder, m)
                                       for m in unique_meshes])
    shardings = _offsets_vector(builder, [_write_named_sharding(builder, s, unique_meshes)
                                          for s in unique_shardings])
    in_idxs = _u32_vector(builder, [unique_avals.index(a) for a in record.in_avals])
    out_idxs = _u32_vector(builder, [unique_avals.index(a) for a in record.out_avals])
    in_sharding_idxs = _u32_vector(builder, [_sharding_index(s, unique_shardings)
                                             for s in record.in_shardings])
    out_sharding_idxs = _u32_vector(builder, [_sharding_index(s, unique_shardings)
                                              for s in record.out_shardings])

    fb.ExportedStart(builder)
    fb.ExportedAddSerializationVersion(builder, _SERIALIZATION_VERSION_FIELD)
    fb.ExportedAddFunctionName(builder, fun_name)
    fb.ExportedAddInTree(builder, in_tree)
    fb.ExportedAddInAvals(builder, in_avals)
    fb.ExportedAddOutTree(builder, out_tree)
    fb.ExportedAddOutAvals(builder, out_avals)
    fb.ExportedAddNrDevices(builder, record.nr_devices)
    fb.ExportedAddInShardings(builder, in_shardings)
    fb.ExportedAddOutShardings(builder, out_shardings)
    fb.ExportedAddPlatforms(builder, platforms)
    fb.ExportedAddOrderedEffects(builder, ordered)
    fb.ExportedAddUnorderedEffects(builder, unordered)
    fb.ExportedAddDisabledChecks(builder, checks)
    fb.ExportedAddMlirModuleSerialized(builder, module)
    fb.ExportedAddCallingConventionVersion(builder, record.calling_convention_version)
    fb.ExportedAddModuleKeptVarIdx(builder, kept)
    fb.ExportedAddUsesGlobalConstants(builder, record.uses_global_constants)
    if vjp is not None:
        fb.ExportedAddVjp(builder, vjp)
    fb.ExportedAddUniqueAvals(builder, uniques)
    fb.ExportedAddUniqueAbstractMeshes(builder, meshes)
    fb.ExportedAddUniqueNamedShardings(builder, shardings)
    fb.ExportedAddInAvalsIdxs(builder, in_idxs)
    fb.ExportedAddOutAvalsIdxs(builder, out_idxs)
    fb.ExportedAddInShardingsIdxs(builder, in_sharding_idxs)
    fb.ExportedAddOutShardingsIdxs(builder, out_sharding_idxs)
    return fb.ExportedEnd(builder)


def _sharding_index(sharding, unique):
    """0 for unspecified, else 1 + the index among the unique shardings (jax's)."""
    return 0 if sharding is None else 1 + unique.index(sharding)


# --- reading ---------------------------------------------------------------------------

def deserialize(blob):
    """The Record of bytes in jax.export's format (its `vjp` a function giving the next
    level's Record, or None)."""
    fb = _schema()[1]
    return _read_exported(fb.Exported.GetRootAsExported(bytearray(blob), 0))


def _read_tree(tree):
    kind = _TREE_KINDS[tree.Kind()]
    children = tuple(_read_tree(tree.Children(i)) for i in range(tree.ChildrenLength()))
    if kind in ("leaf", "none"):
        return (kind,)
    if kind == "dict":
        keys = tuple(tree.ChildrenNames(i).decode() for i in range(tree.ChildrenNamesLength()))
        return (kind, keys, children)
    if kind == "custom":
        return (kind, tree.CustomName().decode(), tree.CustomAuxdataAsNumpy().tobytes(),
                children)
    return (kind, children)


_DTYPE_NAMES = None


def _read_aval(aval):
    global _DTYPE_NAMES
    fb = _schema()[1]
    if _DTYPE_NAMES is None:
        _DTYPE_NAMES = {getattr(fb.DType, kind): name for name, kind in _DTYPE_KINDS.items()}
    kind = aval.Dtype()
    if kind not in _DTYPE_NAMES:
        raise NotImplementedError(f"deserializing an abstract value of dtype kind {kind} "
                                  f"(a dtype funcgraph does not have)")
    dims = tuple(aval.Shape(i).decode() for i in range(aval.ShapeLength()))
    return dims, _DTYPE_NAMES[kind]


_AXIS_TYPE_NAMES = None


def _read_abstract_mesh(mesh):
    global _AXIS_TYPE_NAMES
    fb = _schema()[1]
    if _AXIS_TYPE_NAMES is None:
        _AXIS_TYPE_NAMES = {v: k for k, v in vars(fb.AxisType).items() if not k.startswith("_")}
    device = mesh.AbstractDevice()
    if device is not None:
        platform = device.Platform()
        device = (device.DeviceKind().decode(), device.NumCores(),
                  platform.decode() if platform else None)
    return (tuple(mesh.AxisNames(i).decode() for i in range(mesh.AxisNamesLength())),
            tuple(mesh.AxisSizes(i) for i in range(mesh.AxisSizesLength())),
            tuple(_AXIS_TYPE_NAMES[mesh.AxisTypes(i)] for i in range(mesh.AxisTypesLength())),
            device)


def _read_named_sharding(sharding, meshes):
    """The ShardingRecord of a NamedSharding table (its mesh from the unique meshes when
    the artifact has them)."""
    mesh = (meshes[sharding.AbstractMeshIdx()] if meshes
            else _read_abstract_mesh(sharding.Mesh()))
    spec = sharding.Spec()
    if spec.ReducedLength() or spec.UnreducedLength():
        raise NotImplementedError("deserializing a sharding with reduced or unreduced mesh "
                                  "axes (jax's sharding-in-types) is not supported")
    partitions = []
    for i in range(spec.PartitionsLength()):
        one = spec.Partitions(i)
        names = tuple(one.Axes(j).decode() for j in range(one.AxesLength()))
        partitions.append(None if not names else names[0] if len(names) == 1 else names)
    kind = sharding.MemoryKind()
    return ShardingRecord(*mesh, tuple(partitions), kind.decode() if kind else None)


def _read_sharding(table, meshes):
    named = table.NamedSharding()
    if named is not None:
        return _read_named_sharding(named, meshes)
    if not table.HloShardingProtoIsNone():
        raise NotImplementedError("deserializing an HloSharding (exports made by jax before "
                                  "2026, without named shardings) is not supported")
    return None


def _read_shardings(exp, idxs_length, idx, table_length, table):
    meshes = [_read_abstract_mesh(exp.UniqueAbstractMeshes(i))
              for i in range(exp.UniqueAbstractMeshesLength())]
    if idxs_length():
        named = [_read_named_sharding(exp.UniqueNamedShardings(i), meshes)
                 for i in range(exp.UniqueNamedShardingsLength())]
        return tuple(None if idx(i) == 0 else named[idx(i) - 1] for i in range(idxs_length()))
    return tuple(_read_sharding(table(i), meshes) for i in range(table_length()))


def _read_exported(exp):
    unique = [_read_aval(exp.UniqueAvals(i)) for i in range(exp.UniqueAvalsLength())]
    if exp.InAvalsIdxsLength() or exp.OutAvalsIdxsLength():
        in_avals = tuple(unique[exp.InAvalsIdxs(i)] for i in range(exp.InAvalsIdxsLength()))
        out_avals = tuple(unique[exp.OutAvalsIdxs(i)] for i in range(exp.OutAvalsIdxsLength()))
    else:
        in_avals = tuple(_read_aval(exp.InAvals(i)) for i in range(exp.InAvalsLength()))
        out_avals = tuple(_read_aval(exp.OutAvals(i)) for i in range(exp.OutAvalsLength()))
    vjp_table = exp.Vjp()
    kinds = {v: k for k, v in vars(_schema()[1].DisabledSafetyCheckKind).items()
             if not k.startswith("_")}
    checks = []
    for i in range(exp.DisabledChecksLength()):
        check = exp.DisabledChecks(i)
        target = check.CustomCallTarget()
        checks.append((kinds[check.Kind()], target.decode() if target else None))
    return Record(
        fun_name=exp.FunctionName().decode(),
        in_tree=_read_tree(exp.InTree()), out_tree=_read_tree(exp.OutTree()),
        in_avals=in_avals, out_avals=out_avals,
        in_shardings=_read_shardings(exp, exp.InShardingsIdxsLength, exp.InShardingsIdxs,
                                     exp.InShardingsLength, exp.InShardings),
        out_shardings=_read_shardings(exp, exp.OutShardingsIdxsLength,
                                      exp.OutShardingsIdxs, exp.OutShardingsLength,
                                      exp.OutShardings),
        nr_devices=exp.NrDevices() or exp.NrDevicesShort(),
        platforms=tuple(exp.Platforms(i).decode() for i in range(exp.PlatformsLength())),
        ordered_effects=tuple(exp.OrderedEffects(i).TypeName().decode()
                              for i in range(exp.OrderedEffectsLength())),
        unordered_effects=tuple(exp.UnorderedEffects(i).TypeName().decode()
                                for i in range(exp.UnorderedEffectsLength())),
        disabled_checks=tuple(checks),
        mlir_module_serialized=exp.MlirModuleSerializedAsNumpy().tobytes(),
        calling_convention_version=exp.CallingConventionVersion(),
        module_kept_var_idx=tuple(exp.ModuleKeptVarIdxAsNumpy().tolist())
        if exp.ModuleKeptVarIdxLength() else (),
        uses_global_constants=bool(exp.UsesGlobalConstants()),
        vjp=(lambda: _read_exported(vjp_table)) if vjp_table is not None else None)
