"""Lowering: jaxpr -> StableHLO text (MLIR generic form).

lowering_rules[prim](ctx, avals_in, avals_out, *operands, **params) writes ops
through `ctx.op` and returns the SSA name (or list of names) of its results.
Rules emit text, so they live next to the other rules of their primitive and
import nothing from jax; the backend parses and compiles the module.
"""
import re

import numpy as np

from funcgraph import backend, core, dtypes, shape_poly
from funcgraph.ir import Literal
from funcgraph.sharding import NamedSharding, SingleDeviceSharding

lowering_rules = {}

_ELEMENT_TYPES = {
    dtypes.bool_: "i1", dtypes.int8: "i8", dtypes.int16: "i16", dtypes.int32: "i32",
    dtypes.int64: "i64", dtypes.uint8: "ui8", dtypes.uint16: "ui16", dtypes.uint32: "ui32",
    dtypes.uint64: "ui64", dtypes.float16: "f16", dtypes.bfloat16: "bf16",
    dtypes.float32: "f32", dtypes.float64: "f64", dtypes.complex64: "complex<f32>",
    dtypes.complex128: "complex<f64>",
    dtypes.float8_e4m3fn: "f8E4M3FN", dtypes.float8_e5m2: "f8E5M2", dtypes.float8_e4m3: "f8E4M3",
    dtypes.float8_e3m4: "f8E3M4", dtypes.float8_e4m3fnuz: "f8E4M3FNUZ",
    dtypes.float8_e5m2fnuz: "f8E5M2FNUZ", dtypes.float8_e4m3b11fnuz: "f8E4M3B11FNUZ",
    dtypes.float8_e8m0fnu: "f8E8M0FNU", dtypes.float4_e2m1fn: "f4E2M1FN",
    dtypes.int4: "i4", dtypes.uint4: "ui4", dtypes.int2: "i2", dtypes.uint2: "ui2",
}


# Tensor type texts by (shape, dtype): lowering asks for three or so per op.
_tensor_types = {}
_MAX_CACHED_TYPES = 4096


def tensor_type(aval):
    """`tensor<2x?x3xf32>`: a symbolic dimension (shape_poly.DimExpr) is dynamic, `?`."""
    if aval is TOKEN:
        return TOKEN_TYPE
    key = (aval.shape, aval.dtype)
    text = _tensor_types.get(key)
    if text is None:
        if len(_tensor_types) >= _MAX_CACHED_TYPES:
            _tensor_types.clear()
        text = _tensor_types[key] = _tensor_type_text(aval)
    return text


def _tensor_type_text(aval):
    try:
        element = _ELEMENT_TYPES[aval.dtype]
    except KeyError:
        if isinstance(aval.dtype, dtypes.ExtendedDType):  # a key array: its physical type
            return tensor_type(core.physical_aval(aval))
        raise
    dims = "".join(f"{d}x" if type(d) is int else "?x" for d in aval.shape)
    return f"tensor<{dims}{element}>"


def i64_array(values):
    values = list(values)
    if not values:
        return "array<i64>"
    return "array<i64: " + ", ".join(str(int(v)) for v in values) + ">"


def dense_scalar(value, dtype):
    """The `dense<...>` text of one scalar, exact for floats (hex bit pattern)."""
    value = np.asarray(value, dtype)
    if dtype == dtypes.bool_:
        return "dense<true>" if value else "dense<false>"
    if dtypes.is_int(dtype):
        return f"dense<{int(value)}>"
    if dtypes.is_complex(dtype):
        part = np.dtype(np.float32) if dtype == dtypes.complex64 else np.dtype(np.float64)
        re = _hex_bits(np.asarray(value.real, part))
        im = _hex_bits(np.asarray(value.imag, part))
        return f"dense<({re}, {im})>"
    return f"dense<{_hex_bits(value)}>"


def _nested_bools(value):
    if value.ndim == 0:
        return "true" if value else "false"
    return "[" + ", ".join(_nested_bools(v) for v in value) + "]"


def _hex_bits(value):
    raw = value.reshape(()).view(np.dtype(f"u{value.dtype.itemsize}"))
    return "0x" + format(int(raw), f"0{2 * value.dtype.itemsize}X")


def dense_array(value, dtype):
    """The `dense<...>` text of an array constant (raw little-endian bytes)."""
    value = np.ascontiguousarray(np.asarray(value, dtype))
    if dtype == dtypes.bool_:
        return f"dense<{_nested_bools(value)}>"
    if dtype in dtypes.NARROW_INTS:  # sub-byte integers: decimal elements, not raw bytes
        return f"dense<{value.astype(np.int8).tolist()}>"
    return 'dense<"0x' + value.astype(value.dtype.newbyteorder("<")).tobytes().hex().upper() + '">'


TOKEN_TYPE = "!stablehlo.token"

# Static ops whose result type fixes the result shape, and their dynamic forms, which
# take the shape as a last operand: what they become when that shape is symbolic.
_DYNAMIC_FORMS = {"stablehlo.broadcast_in_dim": "stablehlo.dynamic_broadcast_in_dim",
                  "stablehlo.reshape": "stablehlo.dynamic_reshape",
                  "stablehlo.iota": "stablehlo.dynamic_iota"}


class DimOps:
    """The arithmetic of DimExpr.evaluate on `tensor<i32>` values (floor division and
    modulo rounding toward -inf, as Python's)."""
    scalar = core.ShapedArray((), dtypes.int32)
    flag = core.ShapedArray((), dtypes.bool_)

    def __init__(self, ctx):
        self.ctx = ctx

    def constant(self, value):
        return self.ctx.constant(np.array(value, np.int32), self.scalar)

    def _binary(self, name, a, b):
        return self.ctx.op(name, [a, b], [self.scalar, self.scalar], self.scalar)

    def add(self, a, b):
        return self._binary("stablehlo.add", a, b)

    def mul(self, a, b):
        return self._binary("stablehlo.multiply", a, b)

    def _compare(self, a, b, direction, aval=None, kind="SIGNED"):
        aval = aval or self.scalar
        return self.ctx.op("stablehlo.compare", [a, b], [aval, aval], self.flag,
                           {"comparison_direction": f"#stablehlo<comparison_direction "
                                                    f"{direction}>",
                            "compare_type": f"#stablehlo<comparison_type {kind}>"})

    def _rounds_up(self, a, b, rem):
        """Whether truncation rounded toward +inf: a nonzero remainder and signs of a
        and b that differ (ops that jaxlib's shape refinement folds, so a computed
        dimension stays static there)."""
        zero = self.constant(0)
        signs = self._compare(self._compare(a, zero, "LT"), self._compare(b, zero, "LT"),
                              "NE", self.flag, "UNSIGNED")
        nonzero = self._compare(rem, zero, "NE")
        return self.ctx.op("stablehlo.and", [signs, nonzero], [self.flag] * 2, self.flag)

    def floordiv(self, a, b):
        q = self._binary("stablehlo.divide", a, b)
        fix = self._rounds_up(a, b, self._binary("stablehlo.remainder", a, b))
        lower = self._binary("stablehlo.subtract", q, self.constant(1))
        return self.ctx.op("stablehlo.select", [fix, lower, q],
                           [self.flag, self.scalar, self.scalar], self.scalar)

    def mod(self, a, b):
        r = self._binary("stablehlo.remainder", a, b)
        fix = self._rounds_up(a, b, r)
        return self.ctx.op("stablehlo.select", [fix, self.add(r, b), r],
                           [self.flag, self.scalar, self.scalar], self.scalar)


class _Token:
    """The ordered-effects token where rules give types as avals (a loop's state, a
    branch's results): tensor_type(TOKEN) is `!stablehlo.token`."""
    shape = ()


TOKEN = _Token()


class LoweringContext:
    """Collects the ops of one function body and names SSA values.

    `name_stack` holds the named_scope names of the equations enclosing this body, and
    `location` the ` loc(...)` that the ops of the equation being lowered carry. `token`
    is the SSA name of the ordered-effects token in scope (threaded through ordered
    callbacks and the calls that hold them), or None."""

    def __init__(self, module, name_stack=(), token=None):
        self.module = module
        self.lines = []
        self.indent = "    "
        self.name_stack = name_stack
        self.location = ""
        self.token = token

    def effect_token(self):
        """The ordered-effects token: the function's, else one made here (inside the
        regions of control flow, which take no token)."""
        if self.token is None:
            self.token = self.fresh()
            self.lines.append(f'{self.indent}{self.token} = "stablehlo.after_all"() : '
                              f'() -> {TOKEN_TYPE}')
        return self.token

    def raw_op(self, name, operands, types_in, types_out, attrs):
        """Emit an op whose operand and result types are given as text (tokens); returns
        the list of result names."""
        result = self.fresh()
        n = len(types_out)
        lhs = f"{result}:{n} = " if n > 1 else (f"{result} = " if n else "")
        attr_text = ", ".join(f"{k} = {v}" for k, v in attrs.items())
        self.lines.append(f'{self.indent}{lhs}"{name}"({", ".join(operands)}) {{{attr_text}}} : '
                          f'({", ".join(types_in)}) -> ({", ".join(types_out)})'
                          + self.location)
        return [result] if n == 1 else [f"{result}#{i}" for i in range(n)]

    def fresh(self):
        return self.module.fresh()

    def op(self, name, operands, avals_in, avals_out, attrs=None, regions=None):
        """Emit `"name"(operands) ({regions}) {attrs} : (in types) -> out types`.

        Returns the result name, or a list of names when avals_out is a list."""
        single = not isinstance(avals_out, (list, tuple))
        outs = [avals_out] if single else list(avals_out)
        if name in _DYNAMIC_FORMS and not shape_poly.is_constant_shape(outs[0].shape):
            name, operands, avals_in = self._dynamic_form(name, operands, avals_in, outs[0])
        module = self.module
        module.counter += 1
        result = f"%{module.counter}"
        lhs = f"{result}:{len(outs)} = " if len(outs) > 1 else (f"{result} = " if outs else "")
        text = f'{lhs}"{name}"({", ".join(operands)})'
        if regions:
            text += " (" + ", ".join(regions) + ")"
        if attrs:
            text += " {" + ", ".join([f"{k} = {v}" for k, v in attrs.items()]) + "}"
        ins = ", ".join([tensor_type(a) for a in avals_in])
        if len(outs) == 1:
            text += f" : ({ins}) -> {tensor_type(outs[0])}"
        else:
            text += f" : ({ins}) -> ({', '.join([tensor_type(a) for a in outs])})"
        self.lines.append(self.indent + text + self.location)
        if single:
            return result
        if len(outs) == 1:
            return [result]
        return [f"{result}#{i}" for i in range(len(outs))]

    def _dynamic_form(self, name, operands, avals_in, aval_out):
        """The dynamic form of a static op whose result has symbolic dimensions: the
        result shape becomes an operand computed from the dimension variables."""
        extent, extent_aval = self.shape_tensor(aval_out.shape)
        return _DYNAMIC_FORMS[name], list(operands) + [extent], list(avals_in) + [extent_aval]

    def shape_tensor(self, dims):
        """A `tensor<Nxi32>` of dimensions (ints and DimExprs), and its aval."""
        aval = core.ShapedArray((len(dims),), dtypes.int32)
        if shape_poly.is_constant_shape(dims):
            return self.constant(np.array(dims, np.int32), aval), aval
        scalar, one = core.ShapedArray((), dtypes.int32), core.ShapedArray((1,), dtypes.int32)
        pieces = [self.op("stablehlo.reshape", [self.dim_value(d)], [scalar], one)
                  for d in dims]
        if len(pieces) == 1:
            return pieces[0], aval
        return self.op("stablehlo.concatenate", pieces, [one] * len(pieces), aval,
                       {"dimension": "0 : i64"}), aval

    def dim_value(self, dim):
        """The SSA name of a `tensor<i32>` holding a dimension (an int or a DimExpr of
        the variables the exported function receives, module.dim_values)."""
        if type(dim) is int:
            return self.constant(np.array(dim, np.int32), core.ShapedArray((), dtypes.int32))
        env = self.module.dim_values
        missing = dim.variables() - set(env or ())
        if missing:
            raise NotImplementedError(f"lowering a symbolic dimension {dim}: the dimension "
                                      f"variables {sorted(missing)} are not known here (only "
                                      f"export's @main receives them)")
        return dim.evaluate(env, DimOps(self))

    def constant(self, value, aval):
        if isinstance(aval.dtype, dtypes.ExtendedDType):
            value = dtypes.physical_value(getattr(value, "_value", value), aval.dtype)
            aval = core.physical_aval(aval)
        if any(type(d) is int and d == 0 for d in aval.shape):
            # XLA's GPU backend rejects constants without elements (a RET_CHECK in its
            # layout normalization on s32[3,0]): a broadcast scalar has the same value.
            scalar = aval.update(shape=(), weak_type=False)
            zero = self.constant(np.zeros((), aval.dtype), scalar)
            return self.op("stablehlo.broadcast_in_dim", [zero], [scalar], aval,
                           {"broadcast_dimensions": i64_array(())})
        if aval.shape:
            dense = dense_array(value, aval.dtype)
            return self.op("stablehlo.constant", [], [], aval,
                           {"value": f"{dense} : {tensor_type(aval)}"})
        return self.op("stablehlo.constant", [], [], aval,
                       {"value": f"{dense_scalar(value, aval.dtype)} : {tensor_type(aval)}"})

    def region(self, arg_avals, body):
        """A region `^bb0(args): ... stablehlo.return`; body(ctx, args) -> result names."""
        inner = LoweringContext(self.module, self.name_stack)
        inner.indent = self.indent + "    "
        args = [self.fresh() for _ in arg_avals]
        outs = body(inner, args)
        out_avals = outs[1]
        names = outs[0]
        ret_types = ", ".join(tensor_type(a) for a in out_avals)
        inner.lines.append(f'{inner.indent}"stablehlo.return"({", ".join(names)}) : ({ret_types}) -> ()')
        body_text = "\n".join(inner.lines)
        if not arg_avals:
            return "{\n" + body_text + "\n" + self.indent + "}"
        header = "^bb0(" + ", ".join(f"{n}: {tensor_type(a)}" for n, a in
                                     core.safe_zip(args, arg_avals)) + "):"
        return "{\n" + self.indent + "  " + header + "\n" + body_text + "\n" + self.indent + "}"

    def scalar_region(self, dtype, n, op_name):
        """A reducer region applying op_name to n pairs of scalars (reduce, scatter)."""
        scalar = core.ShapedArray((), dtype)

        def body(ctx, args):
            out = ctx.op(op_name, args, [scalar, scalar], scalar)
            return [out], [scalar]
        return self.region([scalar] * n, body)


class ModuleBuilder:
    """Names SSA values uniquely and collects the functions of a module.

    A module over several devices (or one that is not the default) has `devices`, its
    device order (partition i runs on devices[i]), and the Shardy meshes its sharding
    annotations name, each declared once as `sdy.mesh @name`."""

    def __init__(self, devices=None, place_callbacks=False, name="funcgraph", platforms=None):
        self.name = name  # the module's symbol: jit_f for jit(f), as jax names it
        # The platforms the module is for (an export may name several); rules whose
        # lowering differs by platform read them (lu: LAPACK's getrf on the CPU only).
        self._platforms = tuple(platforms) if platforms else None
        self.counter = 0
        self.functions = []
        self.function_names = {}
        self.host_callbacks = []  # Python functions the module calls, by index
        # Whether host callbacks outside shard_map get the sharding of the device they
        # run on (a jitted program's module: see resolve_callback_sites), and those
        # CallbackSites whose sharding waits for the program's devices.
        self.place_callbacks = place_callbacks
        self.callback_sites = []
        self.empty_mesh = False  # whether `sdy.mesh @empty_mesh` is declared
        self.devices = devices
        self.meshes = {}  # Mesh -> symbol
        self.manual_mesh = None  # the Mesh of the shard_map body being lowered
        self.manual_axes = frozenset()  # its axes that are manual there (nested: all)
        self.channels = 0  # channel handles of the collectives emitted so far
        self.dim_values = None  # dimension variable -> SSA name (exports with symbolic dims)

    def fresh(self):
        self.counter += 1
        return f"%{self.counter}"

    @property
    def platforms(self):
        """Those given, else the platform of the module's devices (the default's)."""
        if self._platforms is None:
            platform = self.devices[0].platform if self.devices else backend.platform()
            self._platforms = (platform,)
        return self._platforms

    def mesh_symbol(self, mesh):
        """The symbol of mesh's `sdy.mesh` (the first mesh used sets the device order)."""
        symbol = self.meshes.get(mesh)
        if symbol is None:
            if self.devices is None:
                self.devices = mesh._flat_devices
            elif set(self.devices) != set(mesh._flat_devices):
                raise ValueError(f"Received incompatible devices for jitted computation: a "
                                 f"sharding over {mesh} uses devices "
                                 f"{sorted(d.id for d in mesh._flat_devices)}, but the program "
                                 f"runs on devices {sorted(d.id for d in self.devices)}")
            symbol = self.meshes[mesh] = "mesh" if not self.meshes else f"mesh_{len(self.meshes)}"
        return symbol

    def next_channel(self):
        """A fresh `#stablehlo.channel_handle` (type 1: device to device)."""
        self.channels += 1
        return f"#stablehlo.channel_handle<handle = {self.channels}, type = 1>"

    def sharding_attr(self, sharding, aval, open_dims=False):
        """`#sdy.sharding<...>` of a NamedSharding on a value of type aval."""
        # a key array's sharding spans its key data's trailing dimensions too (replicated)
        ndim = len(core.physical_aval(aval).shape)
        return sharding.sdy_text(self.mesh_symbol(sharding.mesh), ndim, open_dims)

    def text(self):
        partitions = len(self.devices) if self.devices is not None else 1
        extra = resolve_callback_sites(self)
        meshes = [f'  "sdy.mesh"() {{sym_name = "{symbol}", mesh = {mesh.sdy_text(self.devices)}}}'
                  f' : () -> ()' for mesh, symbol in self.meshes.items()]
        meshes += [f'  "sdy.mesh"() {{sym_name = "{symbol}", mesh = {mesh}}} : () -> ()'
                   for symbol, mesh in extra.items()]
        return (f"module @{self.name} attributes {{mhlo.num_partitions = {partitions} : i32, "
                f"mhlo.num_replicas = 1 : i32}} {{\n" + "\n".join(meshes + self.functions)
                + "\n}\n")


def _sharding_list(module, mesh, specs, avals, open_dims):
    """`#sdy.sharding_per_value<[...]>` of global values split as specs say."""
    entries = [module.sharding_attr(NamedSharding(mesh, s), a, open_dims)[len("#sdy.sharding"):]
               for s, a in zip(specs, avals, strict=True)]
    return "#sdy.sharding_per_value<[" + ", ".join(entries) + "]>"


def emit_manual_computation(ctx, mesh, axes, operands, in_specs, avals_in, out_specs,
                            avals_out, block_avals_in, block_avals_out, lower_body):
    """Shardy's `sdy.manual_computation` making the mesh axes `axes` manual (on top of
    those an enclosing one made manual): operands enter split as in_specs say, and
    `lower_body(inner ctx, block names) -> result names` writes the per-device region.
    With other mesh axes left automatic, every dimension stays open to the partitioner
    (as jax marks them).  Returns the result names."""
    module = ctx.module
    module.mesh_symbol(mesh)
    open_dims = set(axes) != set(mesh.axis_names)
    inner = LoweringContext(module, ctx.name_stack)
    inner.indent = ctx.indent + "    "
    args = [ctx.fresh() for _ in block_avals_in]
    outer = module.manual_mesh, module.manual_axes
    module.manual_mesh, module.manual_axes = mesh, outer[1] | frozenset(axes)
    try:
        outs = lower_body(inner, args)
    finally:
        module.manual_mesh, module.manual_axes = outer
    types = ", ".join(tensor_type(a) for a in block_avals_out)
    inner.lines.append(f'{inner.indent}"sdy.return"({", ".join(outs)}) : ({types}) -> ()')
    body = "\n".join(inner.lines)
    if args:
        header = "^bb0(" + ", ".join(f"{n}: {tensor_type(a)}" for n, a in
                                     zip(args, block_avals_in, strict=True)) + "):"
        body = ctx.indent + "  " + header + "\n" + body
    region = "{\n" + body + "\n" + ctx.indent + "}"
    names = ", ".join(f'"{a}"' for a in mesh.axis_names if a in axes)
    attrs = {"in_shardings": _sharding_list(module, mesh, in_specs, avals_in, open_dims),
             "out_shardings": _sharding_list(module, mesh, out_specs, avals_out, open_dims),
             "manual_axes": f"#sdy<manual_axes{{{names}}}>"}
    return ctx.op("sdy.manual_computation", list(operands), avals_in, list(avals_out), attrs,
                  [region])


def lower_closed_body(ctx, closed, arg_names):
    """Emit the equations of a ClosedJaxpr used as a body (of a loop, a branch, a
    region); its consts, which rules building bodies may close over, become constants."""
    const_names = [ctx.constant(host_constant(c), v.aval)
                   for c, v in core.safe_zip(closed.consts, closed.jaxpr.constvars)]
    return lower_jaxpr_body(ctx, closed.jaxpr, const_names, arg_names)


def host_constant(c):
    """A constant's host value (a key array's too, which refuses np.asarray as jax's)."""
    value = getattr(c, "_value", None)
    return np.asarray(c) if value is None else value


# Lowering of equations on arrays of extended dtypes (key arrays), whose values lower to
# their physical arrays (the key data as trailing dimensions).  A primitive whose
# lowering depends only on its operands' and results' types (calls, control flow,
# reshape, concatenate, ...) lowers with the physical avals; one whose parameters name
# dimensions or sizes has a rule here (funcgraph/random/_physical.py fills it):
# extended_lowerings[prim](rule, ctx, avals_in, avals_out, *args, **params), given its
# ordinary lowering rule and the physical avals.
extended_lowerings = {}


def _has_extended(avals):
    for a in avals:
        if isinstance(getattr(a, "dtype", None), dtypes.ExtendedDType):
            return True
    return False


def _lower_extended(prim, rule, ctx, avals_in, avals_out, args, params):
    phys_in = [a if a is TOKEN else core.physical_aval(a) for a in avals_in]
    phys_out = [a if a is TOKEN else core.physical_aval(a) for a in avals_out]
    special = extended_lowerings.get(prim)
    if special is not None:
        return special(rule, ctx, phys_in, phys_out, *args, **params)
    return rule(ctx, phys_in, phys_out, *args, **params)


def lower_jaxpr_body(ctx, jaxpr, const_names, arg_names):
    """Emit the equations of `jaxpr` into ctx; return the output names."""
    env = {}
    literals = {}  # one constant per literal value in this body (all uses follow it)

    def read(x):
        if type(x) is Literal:
            key = (x.aval, np.asarray(x.val).tobytes())  # bits: 0.0 and -0.0 differ
            name = literals.get(key)
            if name is None:
                name = literals[key] = ctx.constant(x.val, x.aval)
            return name
        return env[x]

    for v, name in core.safe_zip(jaxpr.constvars, const_names):
        env[v] = name
    for v, name in core.safe_zip(jaxpr.invars, arg_names):
        env[v] = name
    enclosing = ctx.name_stack
    for eqn in jaxpr.eqns:
        try:
            rule = lowering_rules[eqn.prim]
        except KeyError:
            raise core.missing_rule(eqn.prim, "StableHLO lowering") from None
        if eqn.name_stack or enclosing:
            ctx.name_stack = enclosing + eqn.name_stack
            ctx.location = name_location(ctx.name_stack, eqn)
        args = [read(x) for x in eqn.invars]
        avals_in, avals_out = [x.aval for x in eqn.invars], [v.aval for v in eqn.outvars]
        try:
            if _has_extended(avals_in) or _has_extended(avals_out):
                outs = _lower_extended(eqn.prim, rule, ctx, avals_in, avals_out, args,
                                       eqn.params)
            else:
                outs = rule(ctx, avals_in, avals_out, *args, **eqn.params)
        finally:
            ctx.name_stack, ctx.location = enclosing, ""
        if not eqn.prim.multiple_results:
            env[eqn.outvars[0]] = outs
            continue
        for v, name in core.safe_zip(eqn.outvars, outs):
            env[v] = name
    return [read(x) for x in jaxpr.outvars]


def name_location(names, eqn):
    """JAX's location of an op: a NameLoc `loc("outer/inner/mul"("file.py":7:0))` of the
    named_scope names and the primitive, around the user's source line when known (XLA
    keeps the name as the op's metadata op_name)."""
    name = mlir_string("/".join(names + (eqn.prim.name,)))
    if eqn.source:
        file, line, _ = eqn.source
        return f" loc({name}({mlir_string(file)}:{line}:0))"
    return f" loc({name})"


def mlir_string(text):
    """text as an MLIR string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def has_ordered_effects(jaxpr):
    return any(e.ordered for e in jaxpr.effects)


def _output_aliases(jaxpr, donated, first, arg_attrs, result_attrs):
    """As jax does: each output, in order, reuses the buffer of the first donated input
    (not yet taken) of its shape, dtype and sharding: {invar index: result index}."""
    waiting = {}
    for i in sorted(donated):
        aval = jaxpr.invars[i].aval
        key = (aval.shape, aval.dtype, repr(arg_attrs[i]))
        waiting.setdefault(key, []).append(i)
    aliases = {}
    for j, v in enumerate(jaxpr.outvars):
        queue = waiting.get((v.aval.shape, v.aval.dtype, repr(result_attrs[j])))
        if queue:
            aliases[queue.pop(0)] = j + first
    return aliases


def emit_function(module, name, jaxpr, visibility="private", donated=(), name_stack=(),
                  shardings=None):
    """Add `func.func @name` for a jaxpr whose constvars come first as arguments (after
    an ordered-effects token, which is also the first result, when it has such effects).
    `shardings(module, in avals, out avals) -> (argument attrs, result attrs)`, called
    once the body is
    lowered (so that the meshes it uses are known), annotates @main."""
    token = has_ordered_effects(jaxpr)
    ctx = LoweringContext(module, name_stack, "%token" if token else None)
    in_vars = jaxpr.constvars + jaxpr.invars
    arg_names = [f"%arg{i}" for i in range(len(in_vars))]
    outs = lower_jaxpr_body(ctx, jaxpr, arg_names[:len(jaxpr.constvars)],
                            arg_names[len(jaxpr.constvars):])
    arg_attrs, result_attrs = (shardings(module, [v.aval for v in in_vars],
                                         [v.aval for v in jaxpr.outvars]) if shardings else
                               ([{}] * len(in_vars), [{}] * len(jaxpr.outvars)))
    out_types = [tensor_type(v.aval) + _attr_dict(a)
                 for v, a in core.safe_zip(jaxpr.outvars, result_attrs)]
    args = []
    n_consts = len(jaxpr.constvars)
    aliases = _output_aliases(jaxpr, donated, 1 if token else 0,
                              arg_attrs[n_consts:], result_attrs)
    for i, (n, v, attrs) in enumerate(core.safe_zip(arg_names, in_vars, arg_attrs)):
        if i >= n_consts and i - n_consts in aliases:
            attrs = {"tf.aliasing_output": f"{aliases[i - n_consts]} : i32", **attrs}
        elif i >= n_consts and i - n_consts in donated:  # donated: indices of invars
            attrs = {"jax.buffer_donor": "true", **attrs}
        args.append(f"{n}: {tensor_type(v.aval)}{_attr_dict(attrs)}")
    ret_types = [tensor_type(v.aval) for v in jaxpr.outvars]
    if token:
        args.insert(0, f"%token: {TOKEN_TYPE}")
        out_types.insert(0, TOKEN_TYPE)
        ret_types.insert(0, TOKEN_TYPE)
        outs = [ctx.token] + outs
    header = f"  func.func {visibility} @{name}({', '.join(args)}) -> ({', '.join(out_types)}) {{"
    ret = f'    "func.return"({", ".join(outs)}) : ({", ".join(ret_types)}) -> ()'
    module.functions.append("\n".join([header] + ctx.lines + [ret, "  }"]))


def _attr_dict(attrs):
    if not attrs:
        return ""
    return " {" + ", ".join(f"{k} = {v}" for k, v in attrs.items()) + "}"


class LoweredModule:
    """A module's text, the Python functions it calls back (by index), whether @main
    threads an ordered-effects token (its first argument and first result), and the
    devices it runs on (None: the default device)."""
    __slots__ = ("text", "host_callbacks", "ordered", "devices")

    def __init__(self, text, host_callbacks, ordered, devices=None):
        self.text = text
        self.host_callbacks = host_callbacks
        self.ordered = ordered
        self.devices = devices


def module_name(function_name):
    """The module symbol of jit(f) for f's name, as jax makes it (jit_f; jit__lambda)."""
    if function_name == "<lambda>":
        function_name = "_lambda"
    return "jit_" + re.sub(r"[^\w.-]", "_", function_name)


def lower_module(jaxpr, donated=(), placement=None, name="funcgraph"):
    """The LoweredModule of a jaxpr (consts are leading arguments of @main), a module
    named `name`.  A `placement` (see transforms/placement.py) gives the devices and
    the shardings of @main's arguments and results."""
    module = ModuleBuilder(placement.devices if placement is not None else None,
                           place_callbacks=True, name=name)
    shardings = placement.annotations if placement is not None else None
    with core.collections_deferred():
        emit_function(module, "main", jaxpr, "public", donated, shardings=shardings)
        text = module.text()
    if module.devices is not None and len(module.devices) > 1:
        _check_shardable_effects(jaxpr)
    return LoweredModule(text, module.host_callbacks, has_ordered_effects(jaxpr),
                         module.devices)


def _check_shardable_effects(jaxpr):
    """JAX's error for ordered effects that a program over several devices cannot keep
    in order (ordered debug callbacks; ordered io_callback can, device by device)."""
    unsupported = sorted((e for e in jaxpr.effects if e.ordered and not e.shardable),
                         key=repr)
    if unsupported:
        raise ValueError(f"The following ordered effects are not supported for more than 1 "
                         f"device: {unsupported}")


def lower_to_text(jaxpr, donated=(), placement=None):
    """The StableHLO module text of a jaxpr (consts are leading arguments of @main)."""
    return lower_module(jaxpr, donated, placement).text


def call_function(ctx, closed, name_hint):
    """Emit (once per jaxpr) a private function for a sub-jaxpr; return its symbol."""
    module = ctx.module
    key = id(closed)
    name = module.function_names.get(key)
    if name is None:
        name = f"{_sanitize(name_hint)}_{len(module.function_names)}"
        module.function_names[key] = name
        emit_function(module, name, closed.jaxpr, name_stack=ctx.name_stack)
    return name


def _sanitize(name):
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "f"


def emit_call(ctx, closed, name_hint, args, avals_in, avals_out):
    """`func.call` of a sub-jaxpr's function, passing it the ordered-effects token when
    it has ordered effects; returns the result names.  In an export with symbolic
    dimensions the body is inlined, where the dimension variables are in scope."""
    if ctx.module.dim_values is not None and not has_ordered_effects(closed.jaxpr):
        return lower_closed_body(ctx, closed, list(args))
    symbol = call_function(ctx, closed, name_hint)
    if not has_ordered_effects(closed.jaxpr):
        return ctx.op("func.call", list(args), avals_in, list(avals_out),
                      {"callee": f"@{symbol}"})
    token, *outs = ctx.raw_op(
        "func.call", [ctx.effect_token()] + list(args),
        [TOKEN_TYPE] + [tensor_type(a) for a in avals_in],
        [TOKEN_TYPE] + [tensor_type(a) for a in avals_out], {"callee": f"@{symbol}"})
    ctx.token = token
    return outs


def emit_host_callback(ctx, callback, operands, avals_in, avals_out, ordered, side_effect,
                       sharding=None, partitioned=False, what="pure_callback"):
    """Call `callback(*numpy arrays) -> tuple of numpy arrays` from compiled code (XLA's
    Python host callback); an ordered one takes and returns the ordered-effects token,
    so ordered callbacks run in program order.  Returns the result names.

    Over several devices, as in JAX: inside a shard_map body every device calls back
    with its own blocks; elsewhere the call runs once, on one device (the device of
    `sharding`, a Sharding naming one device, else the first), on whole values; a
    `partitioned` one runs on every device with its local shards."""
    module = ctx.module
    types_in = [tensor_type(a) for a in avals_in]
    types_out = [tensor_type(a) for a in avals_out]
    operands = list(operands)
    ranks_in = [len(a.shape) for a in avals_in]
    ranks = [len(a.shape) for a in avals_out]
    if ordered:
        callback = backend.pass_token(callback)
        operands.insert(0, ctx.effect_token())
        types_in.insert(0, TOKEN_TYPE)
        types_out.insert(0, TOKEN_TYPE)
        ranks_in.insert(0, 0)
        ranks.insert(0, 0)
    module.host_callbacks.append(callback)
    attrs = {"call_target_name": f'"{backend.python_callback_target(partitioned)}"',
             "api_version": "4 : i32",
             "has_side_effect": "true" if side_effect else "false",
             "backend_config": f"{{index = {len(module.host_callbacks) - 1} : ui64}}",
             # row-major layouts, which the partitioned callback's partitioner requires
             "operand_layouts": _layouts(ranks_in), "result_layouts": _layouts(ranks)}
    if module.manual_mesh is not None:
        _check_manual_callback(module, sharding, what)
        module.empty_mesh = True
        attrs["sdy.sharding"] = _per_value("empty_mesh", ranks)
    elif module.place_callbacks and not partitioned:
        site = CallbackSite(len(module.callback_sites), ranks, sharding, what)
        module.callback_sites.append(site)
        attrs["sdy.sharding"] = site.marker
    outs = ctx.raw_op("stablehlo.custom_call", operands, types_in, types_out, attrs)
    if ordered:
        ctx.token, *outs = outs
    return outs


def _check_manual_callback(module, sharding, what):
    """jax's errors for callbacks in a shard_map body that XLA cannot call per device: in
    one over some mesh axes only (the others automatic; no manual_axes recorded: all
    are manual), or with a sharding."""
    mesh = module.manual_mesh
    automatic = [a for a in mesh.axis_names if module.manual_axes and a not in module.manual_axes]
    if automatic and what in ("pure_callback", "io_callback"):
        raise NotImplementedError("callbacks are only supported in spmd computations when all "
                                  "mesh axes are partitioned manually (no partial automatic "
                                  "sharding).")
    if automatic:
        # jax calls back once per block, on the devices first along the automatic axes
        raise NotImplementedError(f"{what} in a shard_map body whose mesh axes {automatic} "
                                  f"are automatic is not supported yet")
    if sharding is not None:
        raise NotImplementedError("callbacks do not support specifying sharding inside spmd "
                                  "computations")


def _layouts(ranks):
    """`[dense<[r-1, ..., 0]> : tensor<rxindex>, ...]`: each value row-major."""
    return "[" + ", ".join(f"dense<{list(range(r - 1, -1, -1)) if r else ''}> : "
                           f"tensor<{r}xindex>" for r in ranks) + "]"


def _per_value(mesh_symbol, ranks):
    """`#sdy.sharding_per_value` of a callback's results (one entry when it has none)
    on a mesh without axes: every dimension whole."""
    entries = [f"<@{mesh_symbol}, [{', '.join(['{}'] * r)}]>" for r in ranks or [0]]
    return f"#sdy.sharding_per_value<[{', '.join(entries)}]>"


class CallbackSite:
    """A host callback outside shard_map whose sharding annotation is written once the
    program's devices are known (at the end of lowering): `sharding` names the device
    it runs on (None: the program's first)."""
    __slots__ = ("marker", "ranks", "sharding", "what")

    def __init__(self, index, ranks, sharding, what):
        self.marker = f"@callback_sharding_{index}@"
        self.ranks = ranks  # of its results (the token's 0)
        self.sharding = sharding
        self.what = what

    def partition(self, devices):
        """The index among the program's devices of the device the callback runs on."""
        if self.sharding is None:
            return 0
        device = callback_device(self.sharding)
        if device not in devices:
            raise ValueError(f"Sharding provided to {self.what} specifies a device {device} "
                             f"that is not in the device assignment ({list(devices)})")
        return devices.index(device)


def callback_device(sharding):
    """The device a callback's `sharding` names: a SingleDeviceSharding (or a
    NamedSharding over a mesh of one device and no axes), as in JAX."""
    if isinstance(sharding, NamedSharding) and sharding.mesh.size == 1 \
            and not sharding.mesh.axis_names:
        return sharding.mesh._flat_devices[0]
    if not isinstance(sharding, SingleDeviceSharding):
        # JAX's message, which names pure_callback for io_callback too
        raise NotImplementedError(f"pure_callback only supports SingleDeviceSharding, but "
                                  f"got {type(sharding)}")
    return sharding._device


def resolve_callback_sites(module):
    """Write the sharding of each CallbackSite: in a program over several devices a
    maximal sharding on its device (XLA runs it there alone), else none.  Returns the
    meshes they need, {symbol: mesh attribute}."""
    meshes = {"empty_mesh": "#sdy.mesh<[]>"} if module.empty_mesh else {}
    if not module.callback_sites:
        return meshes
    devices = list(module.devices or backend.local_devices()[:1])
    replacements = {}
    for site in module.callback_sites:
        index = site.partition(devices)
        if len(devices) == 1:
            replacements[site.marker] = ""
            continue
        symbol = f"maximal_mesh_{index}"
        meshes[symbol] = f"#sdy.mesh<[], device_ids=[{index}]>"
        # a mesh without axes and one device: every value whole there
        whole = _per_value(symbol, [0] * len(site.ranks))
        replacements[site.marker] = f", sdy.sharding = {whole}"
    module.functions = [_replace_markers(f, replacements) for f in module.functions]
    module.callback_sites = []
    return meshes


def _replace_markers(function_text, replacements):
    for marker, text in replacements.items():
        function_text = function_text.replace(f", sdy.sharding = {marker}", text)
    return function_text
