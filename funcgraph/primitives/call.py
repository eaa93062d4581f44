"""pjit: a call of a jaxpr (a nested `jit`).  Its param `jaxpr` is a ClosedJaxpr
without consts (closed-over values are passed as leading arguments)."""
from funcgraph import core
from funcgraph.interpreters.eval import direct_impls
from funcgraph.lowering import call_function
from funcgraph.primitives.helpers import declare


def _pjit_shape(*avals, jaxpr, name):
    expected = jaxpr.in_avals
    if len(avals) != len(expected) or not all(map(core.same_type, avals, expected)):
        got = ", ".join(a.str_short() for a in avals)
        want = ", ".join(a.str_short() for a in expected)
        raise TypeError(f"pjit {name}: called with ({got}), its jaxpr takes ({want})")
    return jaxpr.out_avals


def _pjit_direct(*args, jaxpr, name):
    from funcgraph import jit_function as jit
    return jit.run_jaxpr(jaxpr, args)


def _pjit_lowering(ctx, avals_in, avals_out, *args, jaxpr, name):
    symbol = call_function(ctx, jaxpr, name)
    return ctx.op("func.call", list(args), avals_in, list(avals_out),
                  {"callee": f"@{symbol}"})


pjit_p = declare("pjit", _pjit_shape, None, _pjit_lowering, multiple_results=True)
direct_impls[pjit_p] = _pjit_direct
