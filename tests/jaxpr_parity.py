"""The harness of the jaxpr-parity tests (issue 29): funcgraph's program for a library
call against jax's for the same call.

A row is `Row(name, call, args)`: `call(module)` gives the callable for a namespace (the
funcgraph one or the jax one, e.g. `lambda m: m.numpy.sum`), `args` are NumPy values
(or Python scalars) passed to both.  `compare` traces both with make_jaxpr and returns
the differences that matter:

- funcgraph's program has more equations than jax's (call wrappers such as jax's `jit`
  and `custom_jvp_call` are inlined: their bodies count, not the wrapper);
- it uses a primitive jax's program does not (a gather where jax slices, a sort where
  jax uses top_k, a loop where jax has a closed form), other than the free layout
  primitives in FREE;
- its contractions (`dot_general`) take operands of other shapes than jax's (an operand
  broadcast into a contraction);
- its outputs have other types.

A test module lists its rows and, in KNOWN_DIFFERENCES, the rows whose difference is
deliberate or not yet closed, with the reason; docs/jaxpr_parity.md shows that table
(tools/gen_parity_docs.py writes it).  A listed row that no longer differs fails too, so
the table stays true.
"""
import dataclasses
import inspect
from typing import Any, Callable

import jax
import numpy as np

import funcgraph as fg

# Equations that only call a jaxpr: their bodies are counted instead.
WRAPPERS = {"pjit", "jit", "closed_call", "core_call", "custom_jvp_call",
            "custom_jvp_call_jaxpr", "custom_vjp_call", "custom_vjp_call_jaxpr",
            "remat2", "checkpoint", "custom_lin"}

# funcgraph's name for a primitive -> jax's (funcgraph's scatter_apply is jax's scatter
# with an update_jaxpr).
JAX_NAME = {"scatter_add": "scatter-add", "scatter_mul": "scatter-mul", "scatter_apply": "scatter",
            "scatter_min": "scatter-min", "scatter_max": "scatter-max", "pjit": "jit"}

# Layout primitives XLA turns into views or folds into their users: using one jax does
# not use is no cost (the equation count still bounds them).
FREE = {"reshape", "squeeze", "expand_dims", "broadcast_in_dim", "convert_element_type",
        "copy", "stop_gradient", "optimization_barrier"}


@dataclasses.dataclass(frozen=True)
class Row:
    name: str
    call: Callable[[Any], Callable]
    args: tuple = ()
    kwargs: dict = dataclasses.field(default_factory=dict)
    x64: bool = False
    # "jaxpr" compares the programs' equations; "hlo" compares the number of StableHLO
    # ops after lowering, for calls jax keeps as one high-level primitive that lowers
    # to many ops (random_bits is threefry's rounds) where funcgraph traces those ops.
    measure: str = "jaxpr"

    @property
    def function(self):
        """The public function's name: the row name up to its first space or colon."""
        return self.name.split(":")[0].split(" ")[0]


def _sub_jaxprs(params):
    for value in params.values():
        for item in value if isinstance(value, (tuple, list)) else (value,):
            jaxpr = getattr(item, "jaxpr", item)
            if hasattr(jaxpr, "eqns"):
                yield jaxpr


def flat_equations(jaxpr):
    """(primitive name in jax's spelling, output types, operand shapes) of every
    equation, nested ones included, call wrappers inlined."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    out = []
    for eqn in jaxpr.eqns:
        prim = eqn.primitive if hasattr(eqn, "primitive") else eqn.prim
        name = JAX_NAME.get(prim.name, prim.name)
        if name not in WRAPPERS:
            out.append((name, tuple(_type(v) for v in eqn.outvars),
                        tuple(tuple(getattr(v.aval, "shape", ())) for v in eqn.invars)))
        for sub in _sub_jaxprs(eqn.params):
            out.extend(flat_equations(sub))
    return out


def _type(var):
    aval = var.aval
    return (tuple(getattr(aval, "shape", ())), str(getattr(aval, "dtype", aval)))


def _traced(row, module):
    """The row's call as a function of its array arguments only, and those arrays."""
    args = list(row.args)
    fn = row.call(module)
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

    def traced(*array_args):
        full = list(args)
        for i, a in zip(arrays, array_args, strict=True):
            full[i] = a
        return fn(*full, **row.kwargs)

    return traced, [args[i] for i in arrays]


def _framework(name):
    return (fg, fg.enable_x64) if name == "funcgraph" else (jax, jax.enable_x64)


def trace(row, framework):
    module, enable = _framework(framework)
    with enable(row.x64):
        traced, arrays = _traced(row, module)
        closed = module.make_jaxpr(traced)(*arrays)
    outs = [_type(v) for v in getattr(closed, "jaxpr", closed).outvars]
    return flat_equations(closed), outs


def hlo_op_count(row, framework):
    """The number of StableHLO ops of the row's call, lowered by jit."""
    module, enable = _framework(framework)
    with enable(row.x64):
        traced, arrays = _traced(row, module)
        text = module.jit(traced).lower(*arrays).as_text()
    return sum(line.count("stablehlo.") for line in text.splitlines())


def differences(row):
    """The differences of funcgraph's program from jax's, as sentences; [] when none."""
    ours, our_outs = trace(row, "funcgraph")
    theirs, their_outs = trace(row, "jax")
    found = []
    if our_outs != their_outs:
        found.append(f"outputs {our_outs}, jax {their_outs}")
    if row.measure == "hlo":
        our_ops, their_ops = hlo_op_count(row, "funcgraph"), hlo_op_count(row, "jax")
        if our_ops > their_ops:
            found.append(f"{our_ops} StableHLO ops, jax {their_ops}")
        return found
    if len(ours) > len(theirs):
        found.append(f"{len(ours)} equations, jax {len(theirs)}")
    extra = sorted({e[0] for e in ours} - {e[0] for e in theirs} - FREE)
    if extra:
        found.append(f"primitives jax does not use: {', '.join(extra)}")
    our_dots = sorted(e[2] for e in ours if e[0] == "dot_general")
    their_dots = sorted(e[2] for e in theirs if e[0] == "dot_general")
    if our_dots != their_dots:
        found.append(f"contractions of {our_dots}, jax {their_dots}")
    return found


def describe(row):
    ours, _ = trace(row, "funcgraph")
    theirs, _ = trace(row, "jax")
    return (f"funcgraph: {[e[0] for e in ours]}\n"
            f"jax:       {[e[0] for e in theirs]}")


def check_row(row, known_differences):
    found = differences(row)
    if row.name in known_differences:
        assert found, (f"{row.name} now has jax's program: remove it from "
                       f"KNOWN_DIFFERENCES (and docs/jaxpr_parity.md)")
    else:
        assert not found, f"{row.name}: {'; '.join(found)}\n{describe(row)}"


def public_functions(module):
    """The public callables of a module that are functions (not types or modules)."""
    names = []
    for key in dir(module):
        value = getattr(module, key)
        if key.startswith("_") or inspect.isclass(value) or inspect.ismodule(value):
            continue
        if callable(value):
            names.append(key)
    return names


def check_coverage(module, rows, not_traced):
    """Every public function of `module` has a row or a reason it is not traced."""
    covered = {r.function for r in rows} | set(not_traced)
    missing = sorted(set(public_functions(module)) - covered)
    assert not missing, f"{module.__name__}: no parity row for {missing}"
