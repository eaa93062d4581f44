"""`jax.interpreters.mlir`: registering how a primitive lowers (register_lowering,
lower_fun, emit_python_callback, LoweringRuleContext).  funcgraph emits its own StableHLO
(funcgraph.lowering), so the rules it runs are those made with `lower_fun(fun)` (the
primitive lowers as funcgraph's lowering of `fun` traced on the operands' types) and
rules whose only MLIR is `emit_python_callback` (funcgraph's host-callback lowering:
equinox's noinline).  A rule that builds other MLIR with jax's builder fails when the
primitive lowers, saying that funcgraph cannot run it."""
import numpy as np

from funcgraph.api import default_backend
from funcgraph import core, dtypes
from funcgraph.interpreters.eval import eval_trace
from funcgraph.interpreters.staging import trace_flat
from funcgraph.lowering import emit_host_callback, lower_closed_body, lowering_rules

# Every rule registered here, as given: {primitive: rule} (per platform in
# _platform_specific_lowerings).
_lowerings = {}
_platform_specific_lowerings = {}

_GPU_PLATFORMS = ("cuda", "rocm", "gpu")


class LoweredFun:
    """What lower_fun returns: a lowering rule that is `fun` traced."""

    def __init__(self, fun, multiple_results):
        self.fun = fun
        self.multiple_results = multiple_results

    def __call__(self, ctx, *args, **params):
        raise NotImplementedError("a rule made by jax.interpreters.mlir.lower_fun runs only "
                                  "inside funcgraph's lowering (register it with "
                                  "register_lowering)")

    def rule_for(self, prim):
        """funcgraph's lowering rule of prim: trace fun on the operand types and emit its
        equations in place."""
        fun, multiple = self.fun, self.multiple_results

        def rule(ctx, avals_in, avals_out, *args, **params):
            def traced(*xs):
                out = fun(*xs, **params)
                return list(out) if multiple else [out]
            outs = lower_closed_body(ctx, trace_flat(traced, list(avals_in)), list(args))
            return outs if prim.multiple_results else outs[0]
        return rule


def lower_fun(fun, multiple_results=True):
    """A lowering rule: the primitive computes what `fun(*operands, **params)` does."""
    return LoweredFun(fun, multiple_results)


class ModuleContext:
    """The part of jax's module context a rule may touch: platforms, keepalives."""

    def __init__(self, platform):
        self.platforms = (platform,)
        self.keepalives = []

    def add_keepalive(self, keepalive):
        if keepalive is not None:
            self.keepalives.append(keepalive)


class LoweringRuleContext:
    """What a jax-style rule receives as `ctx`: the operand and result types, the module
    context, and (for emit_python_callback) funcgraph's lowering context."""

    def __init__(self, fg_ctx, avals_in, avals_out):
        self.fg_ctx = fg_ctx
        self.avals_in = list(avals_in)
        self.avals_out = list(avals_out)
        self.module_context = ModuleContext(_current_platform())
        self.tokens_in = None
        self.tokens_out = None

    def set_tokens_out(self, tokens_out):
        self.tokens_out = tokens_out


def _jax_style_rule(prim, rule):
    """funcgraph's lowering rule running a rule written for jax's lowering: it works
    where the rule emits only through emit_python_callback."""
    def lowering(ctx, avals_in, avals_out, *args, **params):
        jctx = LoweringRuleContext(ctx, avals_in, avals_out)
        try:
            outs = rule(jctx, *args, **params)
        except (TypeError, AttributeError, ValueError, ImportError) as e:
            raise core.MissingRuleError(
                f"primitive '{prim.name}' has a lowering rule written against jax's MLIR "
                f"builder, which funcgraph cannot run ({type(e).__name__}: {e}); register "
                f"one made with jax.interpreters.mlir.lower_fun instead") from e
        outs = [o[0] if isinstance(o, (list, tuple)) and len(o) == 1 else o for o in outs]
        return outs if prim.multiple_results else outs[0]
    return lowering


def emit_python_callback(ctx, callback, token, operands, operand_avals, result_avals, *,
                         has_side_effect, returns_token=True, partitioned=False,
                         sharding=None):
    """Call `callback(*numpy arrays) -> sequence of arrays` from compiled code, through
    funcgraph's host-callback lowering: (results, token, keepalive)."""
    del returns_token
    if not isinstance(ctx, LoweringRuleContext):
        raise TypeError("emit_python_callback: ctx must be the context a lowering rule "
                        "registered with jax.interpreters.mlir.register_lowering receives")
    if token is not None:
        raise NotImplementedError("emit_python_callback with an effect token: funcgraph "
                                  "orders callbacks through jax.experimental.io_callback")
    result_avals = list(result_avals)

    def host(*values):
        with core.set_trace(eval_trace):
            outs = callback(*values)
        if len(outs) != len(result_avals):
            raise RuntimeError(f"Mismatched number of outputs from callback. Expected: "
                               f"{len(result_avals)}, Actual: {len(outs)}")
        outs = tuple(np.asarray(o) for o in outs)
        for i, (out, aval) in enumerate(zip(outs, result_avals)):
            if out.shape != aval.shape or dtypes.canonicalize(out.dtype) != aval.dtype:
                raise RuntimeError(f"Incorrect output for return value #{i}: expected "
                                   f"{aval.str_short()}, got {out.dtype}{list(out.shape)}")
        return tuple(o.astype(a.dtype, copy=False) for o, a in zip(outs, result_avals))
    outs = emit_host_callback(ctx.fg_ctx, host, list(operands), list(operand_avals),
                              result_avals, ordered=False, side_effect=has_side_effect,
                              sharding=sharding, partitioned=partitioned,
                              what="emit_python_callback")
    return list(outs), None, None


def _current_platform():
    return default_backend()


def register_lowering(prim, rule, platform=None, inline=True, cacheable=True):
    """Register `rule` as prim's lowering (for `platform` only when given)."""
    del inline, cacheable
    if platform is None:
        _lowerings[prim] = rule
    else:
        _platform_specific_lowerings.setdefault(platform, {})[prim] = rule
        current = _current_platform()
        if platform != current and not (platform in _GPU_PLATFORMS
                                        and current in _GPU_PLATFORMS):
            return
    if isinstance(rule, LoweredFun):
        lowering_rules[prim] = rule.rule_for(prim)
    elif prim not in lowering_rules or platform is not None:
        lowering_rules[prim] = _jax_style_rule(prim, rule)


__all__ = ["LoweringRuleContext", "ModuleContext", "emit_python_callback", "lower_fun",
           "register_lowering"]
