"""The StableHLO module of an export with symbolic dimensions, in jax's calling
convention: the public @main takes the arguments with dynamic (`?`) dimensions, reads
each dimension variable off an argument's shape (`stablehlo.get_dimension_size`),
checks the shape constraints with `shape_assertion` custom calls, and calls
@_wrapped_jax_export_main, which takes the variables' values as leading
`tensor<i32> {jax.global_constant = "b"}` arguments and holds the function's body."""
import numpy as np

from funcgraph import core, dtypes, shape_poly
from funcgraph.lowering import (
    DimOps, LoweringContext, ModuleBuilder, lower_jaxpr_body, mlir_string, tensor_type)

_I32 = core.ShapedArray((), dtypes.int32)
_BOOL = core.ShapedArray((), dtypes.bool_)
_INNER = "_wrapped_jax_export_main"
_HELP = ("Please see https://docs.jax.dev/en/latest/export/shape_poly.html"
         "#shape-assertion-errors for more details.")


def is_symbolic_avals(avals):
    return any(not shape_poly.is_constant_shape(a.shape) for a in avals)


def dimension_variables(in_avals):
    """{variable: (argument index, axis, k, c)}: the variable is (size - c) / k of that
    argument dimension, the first that is the variable alone, else the first that is
    k*v + c; in the order of the variables' names (the inner function's order)."""
    alone, linear, used = {}, {}, set()
    for i, aval in enumerate(in_avals):
        for axis, d in enumerate(aval.shape):
            if shape_poly.is_symbolic_dim(d):
                used |= d.variables()
                solved = d.as_linear()
                if solved is not None:
                    name, k, c = solved
                    (alone if (k, c) == (1, 0) else linear).setdefault(name, (i, axis, k, c))
    found = {**linear, **alone}
    missing = sorted(used - set(found))
    if missing:
        raise NotImplementedError(
            f"funcgraph.export: the dimension variables {missing} appear in argument shapes "
            f"only inside non-linear or multi-variable expressions; funcgraph needs each "
            f"variable alone or as k*v + c in some dimension of an argument")
    return dict(sorted(found.items()))


def symbolic_module_text(closed, module_name, platforms, result_names):
    """The module text for `platforms` (see the module docstring)."""
    jaxpr = closed.jaxpr
    in_avals = [v.aval for v in jaxpr.invars]
    variables = dimension_variables(in_avals)
    module = ModuleBuilder(platforms=platforms)
    lead = ['%arg0: tensor<i32> {jax.global_constant = "_platform_index"}'] \
        if len(platforms) > 1 else []
    first = len(lead)
    module.dim_values = {name: f"%arg{first + k}" for k, name in enumerate(variables)}
    lead += [f"%arg{first + k}: tensor<i32> {{jax.global_constant = {mlir_string(name)}}}"
             for k, name in enumerate(variables)]
    args = [f"%arg{len(lead) + i}" for i in range(len(in_avals))]
    ctx = LoweringContext(module)
    consts = [ctx.constant(np.asarray(c), v.aval)
              for c, v in zip(closed.consts, jaxpr.constvars, strict=True)]
    outs = lower_jaxpr_body(ctx, jaxpr, consts, args)
    types = [tensor_type(v.aval) for v in jaxpr.outvars]
    results = ", ".join(f"{t} {{jax.result_info = {mlir_string(n)}}}"
                        for t, n in zip(types, result_names, strict=True))
    params = lead + [f"{a}: {tensor_type(v)}" for a, v in zip(args, in_avals, strict=True)]
    inner = "\n".join(
        [f"  func.func private @{_INNER}({', '.join(params)}) -> ({results}) {{"] + ctx.lines
        + [f'    "func.return"({", ".join(outs)}) : ({", ".join(types)}) -> ()', "  }"])
    main = _main_text(module, in_avals, variables, len(platforms) > 1, types, results)
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in module_name)
    return (f"module @{name} attributes {{jax.uses_shape_polymorphism = true, "
            f"mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32}} {{\n"
            + "\n".join([main, inner] + module.functions) + "\n}\n")


def _main_text(module, in_avals, variables, platform_index, types, results):
    """@main: the variables from the argument shapes, the assertions, the call."""
    lead = ['%arg0: tensor<i32> {jax.global_constant = "_platform_index"}'] \
        if platform_index else []
    args = [f"%arg{len(lead) + i}" for i in range(len(in_avals))]
    ctx = LoweringContext(module)
    specs = ", ".join(f"args[{i}].shape = ({', '.join(map(str, a.shape))})"
                      for i, a in enumerate(in_avals))
    values = {name: _solve(ctx, args[i], in_avals[i], axis, k, c, name, specs)
              for name, (i, axis, k, c) in variables.items()}
    saved, module.dim_values = module.dim_values, values
    defining = {(i, axis) for i, axis, _, _ in variables.values()}
    for name, (i, axis, _, _) in variables.items():
        low, high = _bounds(in_avals, name)
        obtained = (f"Using the following polymorphic shapes specifications: {specs}. "
                    f"Obtained dimension variables: '{name}' = {{0}} from specification "
                    f"'{name}' for dimension args[{i}].shape[{axis}] (= {{0}}), . {_HELP}")
        _assert(ctx, values[name], ctx.dim_value(low), "GE",
                f"Input shapes do not match the polymorphic shapes specification. Expected "
                f"value >= {low} for dimension variable '{name}'. {obtained}", [values[name]])
        if high != shape_poly.INF:
            _assert(ctx, values[name], ctx.dim_value(high), "LE",
                    f"Input shapes do not match the symbolic shape constraint {name} <= "
                    f"{high}. {obtained}", [values[name]])
    for i, aval in enumerate(in_avals):
        for axis, d in enumerate(aval.shape):
            if shape_poly.is_symbolic_dim(d) and (i, axis) not in defining:
                size = ctx.op("stablehlo.get_dimension_size", [args[i]], [aval], _I32,
                              {"dimension": f"{axis} : i64"})
                _assert(ctx, size, ctx.dim_value(d), "EQ",
                        f"Input shapes do not match the polymorphic shapes specification. "
                        f"Found inconsistency between dimension size args[{i}].shape[{axis}] "
                        f"(= {{0}}) and the specification '{d}' (= {{1}}). Using the "
                        f"following polymorphic shapes specifications: {specs}. {_HELP}",
                        [size, ctx.dim_value(d)])
    module.dim_values = saved
    operands = (["%arg0"] if platform_index else []) + list(values.values()) + args
    in_types = (["tensor<i32>"] if platform_index else []) + ["tensor<i32>"] * len(values) \
        + [tensor_type(a) for a in in_avals]
    outs = ctx.raw_op("func.call", operands, in_types, types, {"callee": f"@{_INNER}"})
    params = lead + [f"{a}: {tensor_type(v)}" for a, v in zip(args, in_avals, strict=True)]
    return "\n".join(
        [f"  func.func public @main({', '.join(params)}) -> ({results}) {{"] + ctx.lines
        + [f'    "func.return"({", ".join(outs)}) : ({", ".join(types)}) -> ()', "  }"])


def _solve(ctx, arg, aval, axis, k, c, name, specs):
    """The value of a variable v from the argument dimension k*v + c that defines it
    (asserting that the division is exact)."""
    size = ctx.op("stablehlo.get_dimension_size", [arg], [aval], _I32,
                  {"dimension": f"{axis} : i64"})
    if (k, c) == (1, 0):
        return size
    ops = DimOps(ctx)
    rest = ops.add(size, ops.constant(-c)) if c else size
    remainder = ops.mod(rest, ops.constant(k))
    _assert(ctx, remainder, ops.constant(0), "EQ",
            f"Input shapes do not match the polymorphic shapes specification. Division had "
            f"remainder {{0}} when computing the value of '{name}'. Using the following "
            f"polymorphic shapes specifications: {specs}. {_HELP}", [remainder])
    return ops.floordiv(rest, ops.constant(k))


def _bounds(in_avals, name):
    """The least and greatest values of a variable: (1, inf), or what its scope's
    constraints say."""
    for aval in in_avals:
        for d in aval.shape:
            if shape_poly.is_symbolic_dim(d) and str(d) == name:
                return d._scope.var_bounds(name)
    return 1, shape_poly.INF


def _assert(ctx, lhs, rhs, direction, message, error_operands):
    """A `shape_assertion` that `lhs direction rhs`, with jax's message, whose `{i}`
    the shape refinement fills with error_operands[i]."""
    ok = ctx.op("stablehlo.compare", [lhs, rhs], [_I32, _I32], _BOOL,
                {"comparison_direction": f"#stablehlo<comparison_direction {direction}>",
                 "compare_type": "#stablehlo<comparison_type SIGNED>"})
    ctx.raw_op("stablehlo.custom_call", [ok] + error_operands,
               ["tensor<i1>"] + ["tensor<i32>"] * len(error_operands), [],
               {"call_target_name": '"shape_assertion"', "api_version": "2 : i32",
                "error_message": mlir_string(message), "has_side_effect": "true"})
