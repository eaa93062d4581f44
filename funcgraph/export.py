"""funcgraph.export: jax.export's API.  Export a jitted function to StableHLO with its
calling convention, serialize it in jax.export's own format, and load and call such
artifacts, whether funcgraph or jax made them.

    exp = export.export(fg.jit(f))(fg.ShapeDtypeStruct((8, 784), np.float32))
    blob = exp.serialize(vjp_order=1)      # jax.export.deserialize(blob).call(x) works
    fg.grad(lambda x: export.deserialize(blob).call(x).sum())(x)

The bytes are written and read by funcgraph.backend.export_format; this module knows
pytrees and abstract values, and nothing of jax.
"""
import numpy as np

from funcgraph import core, dtypes, export_poly, shape_poly, tree_util
from funcgraph.backend import export_format
from funcgraph.interpreters.eval import eval_closed_jaxpr
from funcgraph.lowering import LoweringContext, ModuleBuilder, lower_jaxpr_body, tensor_type
from funcgraph.primitives.exported import call_exported_p
from funcgraph.shape_poly import (  # noqa: F401 (InconclusiveDimensionOperation: jax.core's)
    InconclusiveDimensionOperation, SymbolicScope, is_symbolic_dim)
from funcgraph.sharding import Mesh, NamedSharding, PartitionSpec
from funcgraph.transforms.ad import vjp as _vjp
from funcgraph.transforms.api_util import flatten_args
from funcgraph.transforms.custom_derivatives import custom_vjp
from funcgraph.transforms.jit import (
    JitFunction, ShapeDtypeStruct, drop_unused_inputs, jit, optimize)

__all__ = ["DisabledSafetyCheck", "Exported", "call", "default_export_platform",
           "deserialize", "export", "maximum_supported_calling_convention_version",
           "minimum_supported_calling_convention_version", "symbolic_shape",
           "symbolic_args_specs", "SymbolicScope", "is_symbolic_dim"]

minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 10
_CALLING_CONVENTION_VERSION = 10


class DisabledSafetyCheck:
    """A safety check to skip when calling an export (jax's API): the platform check, or
    the compatibility check of one custom-call target."""
    __slots__ = ("kind", "target")

    def __init__(self, kind, target=None):
        self.kind = kind
        self.target = target

    @classmethod
    def platform(cls):
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name):
        return cls("custom_call", target_name)

    def is_custom_call(self):
        return self.target if self.kind == "custom_call" else None

    def as_pair(self):
        return (self.kind, self.target)

    def __eq__(self, other):
        return isinstance(other, DisabledSafetyCheck) and self.as_pair() == other.as_pair()

    def __hash__(self):
        return hash(self.as_pair())

    def __repr__(self):
        return "platform" if self.kind == "platform" else f"custom_call:{self.target}"


class Exported:
    """A function lowered to StableHLO with its calling convention (jax.export.Exported's
    fields).  `call` runs it (eagerly, under jit, grad); `serialize` writes jax's format."""

    def __init__(self, *, fun_name, in_tree, in_avals, out_tree, out_avals, nr_devices,
                 platforms, ordered_effects, unordered_effects, disabled_safety_checks,
                 mlir_module_serialized, calling_convention_version, module_kept_var_idx,
                 uses_global_constants, get_vjp=None, in_named_shardings=None,
                 out_named_shardings=None, in_shardings_hlo=None, out_shardings_hlo=None):
        self.fun_name = fun_name
        self.in_tree = in_tree
        self.in_avals = tuple(in_avals)
        self.out_tree = out_tree
        self.out_avals = tuple(out_avals)
        # Per flat argument and result: its sharding as export_format.ShardingRecord (a
        # NamedSharding over an abstract mesh), None where unspecified.  As in jax, the
        # HloShardings are None on a fresh export; deserialize fills them in where the
        # installed jax does (0.10, not 0.11).
        self._in_named_shardings = tuple(in_named_shardings or (None,) * len(self.in_avals))
        self._out_named_shardings = tuple(out_named_shardings
                                          or (None,) * len(self.out_avals))
        self.in_shardings_hlo = tuple(in_shardings_hlo or (None,) * len(self.in_avals))
        self.out_shardings_hlo = tuple(out_shardings_hlo or (None,) * len(self.out_avals))
        self.nr_devices = nr_devices
        self.platforms = tuple(platforms)
        self.ordered_effects = tuple(ordered_effects)
        self.unordered_effects = tuple(unordered_effects)
        self.disabled_safety_checks = tuple(disabled_safety_checks)
        self.mlir_module_serialized = bytes(mlir_module_serialized)
        self.calling_convention_version = calling_convention_version
        self.module_kept_var_idx = tuple(module_kept_var_idx)
        self.uses_global_constants = uses_global_constants
        self._get_vjp = get_vjp
        self._vjp = None
        self._flat_call = None

    def in_shardings_jax(self, mesh):
        """The NamedSharding over `mesh` of each flat argument (None where unspecified),
        to place arguments with device_put or give jit; `mesh` must have the exported
        mesh's axis names, sizes and types (its devices may be any)."""
        return tuple(_sharding_on(s, mesh) for s in self._in_named_shardings)

    def out_shardings_jax(self, mesh):
        """The NamedSharding over `mesh` of each flat result (None where unspecified)."""
        return tuple(_sharding_on(s, mesh) for s in self._out_named_shardings)

    @property
    def disabled_checks(self):
        """The disabled checks as (kind, target) pairs (what call_exported reads)."""
        return tuple(c.as_pair() for c in self.disabled_safety_checks)

    def mlir_module(self):
        """The StableHLO module, as text."""
        return export_format.portable_to_text(self.mlir_module_serialized)

    def has_vjp(self):
        return self._get_vjp is not None

    def vjp(self):
        """The Exported of the VJP: takes the primal arguments then one cotangent per
        primal output (flat) and returns the cotangents of the flat primal arguments."""
        if self._get_vjp is None:
            raise ValueError("No VJP is available")
        if self._vjp is None:
            self._vjp = self._get_vjp(self)
        return self._vjp

    def serialize(self, vjp_order=0):
        """jax.export's bytes for this function and `vjp_order` levels of its VJP."""
        return bytearray(export_format.serialize(_to_record(self), vjp_order))

    def call(self, *args, **kwargs):
        return call(self)(*args, **kwargs)

    def __str__(self):
        return f"Exported(fun_name={self.fun_name}, ...)"

    __repr__ = __str__


# --- exporting ---------------------------------------------------------------------------

def default_export_platform():
    """'cpu', 'cuda', 'rocm' or 'tpu': the platform of the default backend."""
    return export_format.default_platform()


def symbolic_shape(shape_spec, *, constraints=(), scope=None, like=None):
    """The shape (ints and symbolic dimensions) of jax's syntax: "b, 2*b, 784".  The
    variables live in `scope` (a new one holding `constraints` such as "b >= 16" when
    not given); `_` takes the dimension of `like`."""
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot use both `scope` and `constraints`")
    return shape_poly.parse_shape(shape_spec, scope, like)


def symbolic_args_specs(args, shapes_specs, constraints=(), scope=None):
    """ShapeDtypeStructs for `args` (a pytree of arrays) with the shapes given by
    `shapes_specs`: one string for every leaf, or a pytree prefix of strings (None:
    the leaf's own shape); all in one scope."""
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot use both `scope` and `constraints`")
    leaves, tree = tree_util.tree_flatten(args)
    specs = tree_util.prefix_leaves(shapes_specs, args, lambda s: s is None or isinstance(s, str),
                                    "symbolic_args_specs shapes_specs")
    out = []
    for leaf, spec in zip(leaves, specs, strict=True):
        shape = tuple(leaf.shape) if hasattr(leaf, "shape") else np.shape(leaf)
        dtype = dtypes.canonicalize(np.dtype(leaf.dtype if hasattr(leaf, "dtype")
                                             else np.result_type(leaf)))
        if spec is not None:
            shape = shape_poly.parse_shape(spec, scope, like=shape)
        out.append(ShapeDtypeStruct(shape, dtype))
    return tree_util.tree_unflatten(tree, out)


def export(fun_jit, *, platforms=None, disabled_checks=()):
    """export(jit(f))(*args_specs, **kwargs_specs) -> Exported, for arguments given as
    ShapeDtypeStructs or arrays; `platforms` (default: this backend's) are those the
    module may run on (with more than one, @main takes a platform index first)."""
    if not isinstance(fun_jit, JitFunction):
        if not (getattr(fun_jit, "__module__", None) or "").startswith("funcgraph."):
            raise ValueError(f"Function to be exported must be the result of `jit` but is: "
                             f"{fun_jit}")
        # funcgraph's own functions (funcgraph.numpy.cos) are jitted ones in jax
        fun_jit = jit(fun_jit)

    def do_export(*args_specs, **kwargs_specs):
        targets = tuple(platforms) if platforms is not None else (default_export_platform(),)
        traced = fun_jit._trace_for("export", args_specs, kwargs_specs)
        return _export_traced(traced, fun_jit.name, targets, tuple(disabled_checks),
                              fun_jit.keep_unused)
    return do_export


def _export_traced(traced, name, platforms, disabled_checks, keep_unused):
    closed = optimize(traced.jaxpr)
    if traced.out_spec.float0:
        raise NotImplementedError(f"exporting {name}: outputs of dtype float0 (tangents of "
                                  f"integer values) are not supported")
    if closed.jaxpr.effects:
        raise ValueError(f"Cannot export {name}: it has effects "
                         f"{sorted(str(e) for e in closed.jaxpr.effects)} (host callbacks "
                         f"run Python, which a serialized module cannot carry)")
    out_tree = traced.out_tree
    placement = traced.placement
    in_shardings, out_shardings, devices = _named_shardings(placement, closed)
    # As jax: the module takes only the arguments it reads (module_kept_var_idx), unless
    # keep_unused or a symbolic shape (whose dimensions the arguments define).
    module_closed, kept = closed, None
    if not keep_unused and not export_poly.is_symbolic_avals(closed.in_avals):
        module_closed, kept, _ = drop_unused_inputs(closed, ())
    kept = tuple(range(len(closed.in_avals))) if kept is None else kept
    text, nr_devices = export_module_text(module_closed, f"jit_{name}", platforms,
                                          _result_names(out_tree),
                                          [in_shardings[i] for i in kept],
                                          out_shardings, devices)
    _check_custom_calls(text, disabled_checks)
    # Weak types as traced, as jax's Exported has them (its serialized form drops them).
    in_avals, out_avals = list(closed.in_avals), list(closed.out_avals)

    def get_vjp(primal):
        return _export_vjp(closed, primal, in_shardings, out_shardings)

    return Exported(
        fun_name=name, in_tree=traced.in_tree, in_avals=in_avals, out_tree=out_tree,
        out_avals=out_avals, nr_devices=nr_devices,
        in_named_shardings=[_sharding_record(s) if i in kept else None  # as jax's
                            for i, s in enumerate(in_shardings)],
        out_named_shardings=[_sharding_record(s) for s in out_shardings],
        platforms=platforms, ordered_effects=(),
        unordered_effects=(), disabled_safety_checks=disabled_checks,
        mlir_module_serialized=export_format.module_to_portable(text),
        calling_convention_version=_CALLING_CONVENTION_VERSION,
        module_kept_var_idx=kept,
        uses_global_constants=len(platforms) > 1 or export_poly.is_symbolic_avals(in_avals),
        get_vjp=get_vjp)


def _named_shardings(placement, closed):
    """(the NamedSharding or None of each argument, of each result, the devices the
    program runs on or None) from jit's in/out_shardings and committed arguments."""
    if placement is None:
        return [None] * len(closed.in_avals), [None] * len(closed.out_avals), None
    ins = [s if isinstance(s, NamedSharding) else None for s in placement.in_shardings]
    outs = [s if isinstance(s, NamedSharding) else None for s in placement.out_shardings]
    return ins, outs, placement.devices


def _sharding_record(sharding):
    """The NamedSharding over an abstract mesh that jax stores for a funcgraph one."""
    if sharding is None:
        return None
    mesh = sharding.mesh
    first = mesh.local_devices[0] if mesh.size else None
    device = None if first is None else (first.device_kind, getattr(first, "num_cores", None),
                                         first.platform)
    return export_format.ShardingRecord(
        tuple(mesh.axis_names), tuple(int(n) for n in mesh.axis_sizes),
        tuple(t.name for t in mesh.axis_types), device, tuple(sharding.spec),
        sharding.memory_kind)


def _abstract_mesh_text(record):
    """jax's text of the abstract mesh of a sharding record."""
    axes = ", ".join(f"{n!r}: {k}" for n, k in zip(record.axis_names, record.axis_sizes,
                                                   strict=True))
    text = f"AbstractMesh({axes}, axis_types=({', '.join(record.axis_types)})"
    if record.device is not None:
        kind, cores, platform = record.device
        text += f", device_kind={kind}, num_cores={cores}, platform={platform}"
    return text + ")"


def _sharding_on(record, mesh):
    """The NamedSharding of a sharding record over a concrete mesh like the exported one."""
    if record is None:
        return None
    if not isinstance(mesh, Mesh):
        raise TypeError(f"expected a funcgraph.sharding.Mesh, got {mesh!r}")
    if (tuple(mesh.axis_sizes) != tuple(record.axis_sizes)
            or tuple(mesh.axis_names) != tuple(record.axis_names)
            or tuple(t.name for t in mesh.axis_types) != tuple(record.axis_types)):
        raise ValueError(f"NamedSharding new mesh {mesh} does not match the mesh used for "
                         f"export {_abstract_mesh_text(record)}.")
    return NamedSharding(mesh, PartitionSpec(*record.partitions))


def _check_custom_calls(text, disabled_checks):
    allowed = {c.is_custom_call() for c in disabled_checks}
    bad = [t for t in export_format.unstable_custom_calls(text) if t not in allowed]
    if bad:
        raise ValueError(f"Cannot serialize code with custom calls whose targets have no "
                         f"compatibility guarantees: {', '.join(bad)}. See "
                         f"https://docs.jax.dev/en/latest/export/export.html"
                         f"#compatibility-guarantees-for-custom-calls")


def _result_names(out_tree):
    """jax's `jax.result_info` of each result: "result", "result[0]", "result['a']"."""
    dummy = tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    return ["result" + tree_util.keystr(path)
            for path, _ in tree_util.tree_flatten_with_path(dummy)[0]]


def _mlir_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def export_module_text(closed, module_name, platforms, result_names,
                       in_shardings=None, out_shardings=None, devices=None):
    """The StableHLO module for `platforms` that jax's calling convention expects: a
    public @main taking (a platform index when exported for several, then) the
    arguments, with the jaxpr's constants inside it, and private functions for the
    calls in it.  Over
    several devices, the arguments and results with a NamedSharding carry it as a
    Shardy sharding over the module's mesh (the others are left to XLA's propagation,
    as jax leaves unspecified ones).  Returns (text, number of devices): those of the
    shardings given, else of the sharding constraints inside, else 1.  With symbolic
    dimensions, export_poly builds the module (for one device)."""
    if export_poly.is_symbolic_avals(closed.in_avals):
        if devices is not None and len(devices) > 1:
            raise NotImplementedError("exporting with symbolic dimensions for several "
                                      "devices is not supported")
        return export_poly.symbolic_module_text(closed, module_name, platforms,
                                                result_names), 1
    platform_index = len(platforms) > 1
    module = ModuleBuilder(devices, platforms=platforms)
    ctx = LoweringContext(module)
    jaxpr = closed.jaxpr
    consts = [ctx.constant(np.asarray(c), v.aval)
              for c, v in zip(closed.consts, jaxpr.constvars, strict=True)]
    args = [f"%arg{i}" for i in range(len(jaxpr.invars))]
    outs = lower_jaxpr_body(ctx, jaxpr, consts, args)
    in_shardings = in_shardings or [None] * len(args)
    out_shardings = out_shardings or [None] * len(outs)
    params = [f"{a}: {tensor_type(v.aval)}{_sharding_attr(module, s, v.aval)}"
              for a, v, s in zip(args, jaxpr.invars, in_shardings, strict=True)]
    if platform_index:
        params.insert(0, '%platform_index: tensor<i32> {jax.global_constant = '
                         '"_platform_index"}')
    types = [tensor_type(v.aval) for v in jaxpr.outvars]
    results = [f"{t} {{jax.result_info = {_mlir_string(n)}"
               f"{_sharding_attr(module, s, v.aval, inner=True)}}}"
               for t, n, s, v in zip(types, result_names, out_shardings, jaxpr.outvars,
                                     strict=True)]
    main = "\n".join(
        [f"  func.func public @main({', '.join(params)}) -> ({', '.join(results)}) {{"]
        + ctx.lines
        + [f'    "func.return"({", ".join(outs)}) : ({", ".join(types)}) -> ()', "  }"])
    polymorphic = "true" if platform_index else "false"
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in module_name)
    partitions = len(module.devices) if module.devices is not None else 1
    meshes = [f'  "sdy.mesh"() {{sym_name = "{symbol}", mesh = {mesh.sdy_text(module.devices)}}}'
              f' : () -> ()' for mesh, symbol in module.meshes.items()]
    return (f"module @{name} attributes {{jax.uses_shape_polymorphism = {polymorphic}, "
            f"mhlo.num_partitions = {partitions} : i32, mhlo.num_replicas = 1 : i32}} {{\n"
            + "\n".join(meshes + [main] + module.functions) + "\n}\n"), partitions


def _sharding_attr(module, sharding, aval, inner=False):
    """The `sdy.sharding` attribute of an argument (` {...}`) or, inner, of a result
    (`, ...` inside its attribute dictionary); empty when unspecified."""
    if sharding is None:
        return ""
    attr = f"sdy.sharding = {module.sharding_attr(sharding, aval)}"
    return f", {attr}" if inner else f" {{{attr}}}"


def _export_vjp(closed, primal, in_shardings, out_shardings):
    """The Exported of the primal's VJP: (flat primals, flat output cotangents) -> flat
    primal cotangents, as jax exports it: the primals and cotangents laid out as the
    primal's arguments and results, the cotangents of the arguments as the arguments."""
    for aval in primal.in_avals + primal.out_avals:
        if not dtypes.is_float(aval.dtype) and not dtypes.is_complex(aval.dtype):
            raise NotImplementedError(
                f"exporting the VJP of {primal.fun_name}: its arguments and results must "
                f"be floating point (float0 cotangents of {aval.str_short()} are not "
                f"supported)")
    n = len(primal.in_avals)

    def fun_vjp(*primals_and_cts):
        primals, cts = primals_and_cts[:n], primals_and_cts[n:]
        _, pullback = _vjp(lambda *xs: list(eval_closed_jaxpr(closed, *xs)), *primals)
        return tuple(pullback(list(cts)))

    specs = [ShapeDtypeStruct(a.shape, a.dtype) for a in primal.in_avals + primal.out_avals]
    checks = primal.disabled_safety_checks
    placed = any(s is not None for s in in_shardings + out_shardings)
    fun = (jit(fun_vjp, in_shardings=tuple(in_shardings + out_shardings),
               out_shardings=tuple(in_shardings)) if placed else jit(fun_vjp))
    return export(fun, platforms=primal.platforms, disabled_checks=checks)(*specs)


# --- calling -----------------------------------------------------------------------------

def call(exported):
    """The function that calls `exported` with the pytree arguments it was exported for;
    differentiable in reverse mode through its VJP, as jax's."""
    if not isinstance(exported, Exported):
        raise ValueError(f"The exported argument must be an export.Exported. Found "
                         f"{exported}.")

    def imported(*args, **kwargs):
        leaves, in_tree = flatten_args(args, kwargs)
        if in_tree != exported.in_tree:
            raise ValueError(_structure_error(exported, in_tree))
        return tree_util.tree_unflatten(exported.out_tree, _flat_call(exported)(*leaves))
    return imported


def _flat_call(exported):
    """call_exported_p as a custom_vjp over flat arguments (made once per Exported)."""
    if exported._flat_call is not None:
        return exported._flat_call

    def flat(*args):
        return call_exported_p.bind(*args, exported=exported)

    def fwd(*args):
        return flat(*args), args

    def bwd(args, cts):
        return tuple(call(exported.vjp())(*args, *cts))

    flat.__name__ = f"call_exported_{exported.fun_name}"
    wrapped = custom_vjp(flat)
    wrapped.defvjp(fwd, bwd)
    exported._flat_call = wrapped
    return wrapped


def _structure_error(exported, in_tree):
    return (f"The invocation args and kwargs must have the same pytree structure as when "
            f"the function '{exported.fun_name}' was exported, but the call has structure "
            f"{in_tree} and the export {exported.in_tree}")


# --- serialized form ---------------------------------------------------------------------

def deserialize(blob):
    """The Exported held by bytes in jax.export's format (made by jax or funcgraph)."""
    return _from_record(export_format.deserialize(bytes(blob)))


def _to_record(exp):
    return export_format.Record(
        fun_name=exp.fun_name, in_tree=_tree_to_plain(exp.in_tree),
        out_tree=_tree_to_plain(exp.out_tree), in_avals=_avals_to_plain(exp.in_avals),
        out_avals=_avals_to_plain(exp.out_avals), in_shardings=exp._in_named_shardings,
        out_shardings=exp._out_named_shardings, nr_devices=exp.nr_devices,
        platforms=exp.platforms, ordered_effects=exp.ordered_effects,
        unordered_effects=exp.unordered_effects, disabled_checks=exp.disabled_checks,
        mlir_module_serialized=exp.mlir_module_serialized,
        calling_convention_version=exp.calling_convention_version,
        module_kept_var_idx=exp.module_kept_var_idx,
        uses_global_constants=exp.uses_global_constants,
        vjp=(lambda: _to_record(exp.vjp())) if exp.has_vjp() else None)


def _from_record(record):
    in_avals = _avals_from_plain(record.in_avals)
    out_avals = _avals_from_plain(record.out_avals)
    version = record.calling_convention_version
    if not (minimum_supported_calling_convention_version <= version
            <= maximum_supported_calling_convention_version):
        raise NotImplementedError(
            f"The exported function '{record.fun_name}' uses calling convention version "
            f"{version}, outside the supported range "
            f"[{minimum_supported_calling_convention_version}.."
            f"{maximum_supported_calling_convention_version}]")
    vjp_record = record.vjp
    return Exported(
        fun_name=record.fun_name, in_tree=_tree_from_plain(record.in_tree),
        in_avals=in_avals, out_tree=_tree_from_plain(record.out_tree), out_avals=out_avals,
        nr_devices=record.nr_devices, platforms=record.platforms,
        in_named_shardings=record.in_shardings, out_named_shardings=record.out_shardings,
        in_shardings_hlo=_hlo_shardings(record.in_shardings, in_avals),
        out_shardings_hlo=_hlo_shardings(record.out_shardings, out_avals),
        ordered_effects=record.ordered_effects, unordered_effects=record.unordered_effects,
        disabled_safety_checks=[DisabledSafetyCheck(k, t) for k, t in record.disabled_checks],
        mlir_module_serialized=record.mlir_module_serialized,
        calling_convention_version=version, module_kept_var_idx=record.module_kept_var_idx,
        uses_global_constants=record.uses_global_constants,
        get_vjp=(lambda _: _from_record(vjp_record())) if vjp_record is not None else None)


def _hlo_shardings(shardings, avals):
    if not export_format.reads_back_hlo_shardings():
        return (None,) * len(avals)
    return tuple(None if s is None else export_format.hlo_sharding(s, len(a.shape))
                 for s, a in zip(shardings, avals, strict=True))


def _avals_to_plain(avals):
    return tuple((tuple(str(d) for d in a.shape), a.dtype.name) for a in avals)


def _avals_from_plain(avals):
    """ShapedArrays of (dims, dtype name); a symbolic dimension (jax's shape
    polymorphism, e.g. "b" or "2*b") stays its string."""
    out = []
    for dims, dtype in avals:
        shape = tuple(int(d) if d.isdigit() else d.strip() for d in dims)
        # Not canonicalized: a float64 export takes float64 arguments whatever the flag.
        out.append(core.ShapedArray(shape, dtypes.bfloat16 if dtype == "bfloat16"
                                    else np.dtype(dtype)))
    return out


def _tree_to_plain(treedef):
    """A treedef as export_format's nested tuples (containers jax can rebuild)."""
    if treedef.is_leaf():
        return ("leaf",)
    kind = treedef.type
    children = tuple(_tree_to_plain(c) for c in treedef.children())
    if kind is type(None):
        return ("none",)
    if kind is tuple:
        return ("tuple", children)
    if kind is list:
        return ("list", children)
    if kind is dict:
        keys = tuple(treedef.entries())
        bad = [k for k in keys if not isinstance(k, str)]
        if bad:
            raise TypeError(f"Serialization is supported only for dictionaries with string "
                            f"keys. Found key {bad[0]} of type {type(bad[0])}.")
        return ("dict", keys, children)
    raise ValueError(f"Cannot serialize PyTreeDef containing an unregistered type "
                     f"`{kind}`: funcgraph serializes tuples, lists, dicts and None")


def _tree_from_plain(plain):
    return tree_util.tree_structure(_example_tree(plain))


def _example_tree(plain):
    kind = plain[0]
    if kind == "leaf":
        return 0
    if kind == "none":
        return None
    if kind == "tuple":
        return tuple(_example_tree(c) for c in plain[1])
    if kind == "list":
        return [_example_tree(c) for c in plain[1]]
    if kind == "dict":
        return {k: _example_tree(c) for k, c in zip(plain[1], plain[2], strict=True)}
    raise ValueError(f"Cannot deserialize a PyTreeDef containing the custom type "
                     f"`{plain[1]}`: funcgraph rebuilds tuples, lists, dicts and None")
