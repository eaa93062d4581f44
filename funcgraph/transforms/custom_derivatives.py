"""custom_jvp, custom_vjp, custom_gradient and closure_convert, with JAX's API."""
import functools
import inspect

import numpy as np

from funcgraph import core, dtypes, tree_util
from funcgraph.interpreters.eval import eval_jaxpr, wrap_value
from funcgraph.interpreters.ad_util import Zero, is_zero, tangent_aval, zeros_of
from funcgraph.interpreters.staging import trace_flat
from funcgraph.primitives import custom_ad
from funcgraph.primitives.jaxprs import const_free
from funcgraph.transforms.api_util import flatten_fun


class SymbolicZero:
    """A zero tangent or cotangent of type `aval`, as the rules of a custom_jvp or
    custom_vjp defined with symbolic_zeros=True see them (JAX's SymbolicZero)."""

    def __init__(self, aval):
        self.aval = aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)

    def instantiate(self):
        return zeros_of(self.aval)

    @staticmethod
    def from_primal_value(value):
        return SymbolicZero(tangent_aval(core.get_aval(value)))

    def __repr__(self):
        return f"SymbolicZero({self.aval.str_short()})"


def zero_from_primal(value, symbolic_zeros=False):
    """The zero tangent of each leaf of value: SymbolicZeros, or arrays of zeros."""
    def zero(x):
        z = SymbolicZero.from_primal_value(x)
        return z if symbolic_zeros else z.instantiate()
    return tree_util.tree_map(zero, value)


class CustomVJPPrimal:
    """A primal input as the fwd of a custom_vjp with symbolic_zeros=True sees it: its
    value and whether it is perturbed (has a nonzero tangent)."""

    def __init__(self, value, perturbed):
        self.value = value
        self.perturbed = perturbed

    def __repr__(self):
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


def _to_symbolic(t):
    return SymbolicZero(t.aval) if is_zero(t) else t


def _from_symbolic(t):
    return Zero(t.aval) if type(t) is SymbolicZero else t


def _resolve_kwargs(kind, name, signature, args, kwargs):
    """args and kwargs as positional arguments by the function's signature, defaults
    filled in, as JAX resolves a custom_jvp/custom_vjp call (a functools.partial's
    signature is opaque: no keyword arguments); a TypeError for keywords that have no
    position."""
    if signature is None:
        return args
    try:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        unplaced = [k for k in bound.kwargs if k in kwargs]
        if unplaced:
            raise TypeError(f"The following keyword arguments could not be resolved to "
                            f"positions: {', '.join(unplaced)}")
    except TypeError as e:
        raise TypeError(f"The input arguments to the {kind}-decorated function {name} could "
                        f"not be resolved to positional-only arguments. Binding failed with "
                        f"the error:\n{e}") from e
    return bound.args


def _signature(fun):
    """fun's signature for _resolve_kwargs (None: accept the positional args as given)."""
    if isinstance(fun, functools.partial):
        return inspect.signature(lambda *args, **kwargs: None)
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def _split_nondiff(args, nondiff_argnums):
    nondiff = tuple(args[i] for i in nondiff_argnums)
    diff = tuple(a for i, a in enumerate(args) if i not in nondiff_argnums)
    return nondiff, diff


def _merge(nondiff_argnums, nondiff, diff):
    out, nd, d = [], iter(nondiff), iter(diff)
    for i in range(len(nondiff) + len(diff)):
        out.append(next(nd) if i in nondiff_argnums else next(d))
    return out


class SplitCall:
    """fun's arguments split into nondiff (static) ones and differentiable leaves, and fun
    as a function of those leaves (its output tree lands in .store when it runs)."""

    def __init__(self, fun, nondiff_argnums, args, name):
        self.name = name
        self.nondiff, self.diff = _split_nondiff(args, nondiff_argnums)
        self.leaves, self.in_tree = tree_util.tree_flatten(self.diff)
        self.flat, self.store = flatten_fun(
            lambda *diff: fun(*_merge(nondiff_argnums, self.nondiff, diff)),
            tree_util.tree_structure((self.diff, {})))

    def traced(self):
        """(const-free jaxpr of fun on the leaves, the values it closes over)."""
        return const_free(trace_flat(self.flat, [core.get_aval(x) for x in self.leaves]))

    def record_out_tree(self, what, tree):
        """The output tree a rule produced: the first one seen, checked against later ones."""
        if self.store.out_tree is None:
            self.store.out_tree = tree
        else:
            _check_structure(what, self.name, self.store.out_tree, tree)


def _check_structure(what, name, expected_tree, got_tree):
    if expected_tree != got_tree:
        raise TypeError(f"{name}: {what} must have the structure of the function's output "
                        f"{expected_tree}, got {got_tree}")


class custom_jvp:
    """A function with a custom JVP rule: `f = custom_jvp(f); f.defjvp(f_jvp)`."""

    def __init__(self, fun, nondiff_argnums=()):
        core.wraps(fun)(self)
        self.fun = fun
        self._signature = _signature(fun)
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None
        self.symbolic_zeros = False

    def defjvp(self, jvp, symbolic_zeros=False):
        """jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out); with
        symbolic_zeros, zero tangents reach it as SymbolicZeros (it may return them)."""
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps):
        """One rule per argument: jvp_i(tangent_i, primal_out, *primals) -> tangent_out
        contribution (None for an argument without one)."""
        def jvp(primals, tangents):
            # the output through this custom_jvp itself, so that a derivative of it (a
            # higher order) uses these rules too, not the plain function's
            out = self(*primals)
            total = None
            for rule, t in zip(jvps, tangents):
                if rule is None:
                    continue
                term = rule(t, out, *primals)
                total = term if total is None else tree_util.tree_map(
                    lambda a, b: a + b, total, term)
            return out, total
        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise AttributeError(f"no JVP defined for custom_jvp function {self.__name__}; "
                                 f"call defjvp first")
        name = getattr(self.fun, "__name__", "custom_jvp")
        args = _resolve_kwargs("custom_jvp", name, self._signature, args, kwargs)
        call = SplitCall(self.fun, self.nondiff_argnums, args, name)
        nondiff, in_tree = call.nondiff, call.in_tree
        user_jvp, symbolic = self.jvp, self.symbolic_zeros

        def flat_jvp(primals, tangents):
            p = tree_util.tree_unflatten(in_tree, primals)
            if symbolic:
                tangents = [_to_symbolic(t) for t in tangents]
            t = tree_util.tree_unflatten(in_tree, tangents)
            result = user_jvp(*nondiff, tuple(p), tuple(t))
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise TypeError(f"custom_jvp rule of {name} must return a pair "
                                f"(primal_out, tangent_out)")
            out, out_t = result
            out_leaves, tree = tree_util.tree_flatten(out)
            t_leaves, t_tree = tree_util.tree_flatten(out_t)
            call.record_out_tree("the primal output of the custom_jvp rule", tree)
            _check_structure("the tangent output of the custom_jvp rule", name, tree, t_tree)
            for i, (o, t) in enumerate(zip(out_leaves, t_leaves)):
                if core.get_aval(t).shape != core.get_aval(o).shape:
                    raise ValueError(f"custom_jvp rule of {name}: tangent output {i} has shape "
                                     f"{core.get_aval(t).shape}, the primal output has "
                                     f"{core.get_aval(o).shape}")
            return out_leaves, [_from_symbolic(t) for t in t_leaves]
        flat_jvp.symbolic_zeros = symbolic

        outs = custom_ad.custom_jvp_call_p.bind(
            *call.leaves, call_jaxpr=call.flat, jvp=flat_jvp, num_consts=0, name=name)
        return tree_util.tree_unflatten(call.store.out_tree, outs)


class custom_vjp:
    """A function with custom forward and backward passes:
    `f = custom_vjp(f); f.defvjp(f_fwd, f_bwd)`."""

    def __init__(self, fun, nondiff_argnums=()):
        core.wraps(fun)(self)
        self.fun = fun
        self._signature = _signature(fun)
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = self.bwd = None
        self.symbolic_zeros = False

    def defvjp(self, fwd, bwd, symbolic_zeros=False):
        """fwd(*args) -> (out, residuals); bwd(*nondiff_args, residuals, cotangent) ->
        a tuple with one cotangent (or None) per differentiable argument.  With
        symbolic_zeros, fwd sees each differentiable leaf as a CustomVJPPrimal and bwd
        zero cotangents as SymbolicZeros."""
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros = symbolic_zeros

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise AttributeError(f"no VJP defined for custom_vjp function {self.__name__}; "
                                 f"call defvjp first")
        name = getattr(self.fun, "__name__", "custom_vjp")
        args = _resolve_kwargs("custom_vjp", name, self._signature, args, kwargs)
        call = SplitCall(self.fun, self.nondiff_argnums, args, name)
        nondiff, diff, in_tree = call.nondiff, call.diff, call.in_tree
        user_fwd, user_bwd, nondiff_argnums = self.fwd, self.bwd, self.nondiff_argnums
        symbolic = self.symbolic_zeros
        res_tree_box = {}

        def flat_fwd(primals, perturbed=None):
            if symbolic:
                perturbed = [True] * len(primals) if perturbed is None else perturbed
                primals = [CustomVJPPrimal(p, bool(q)) for p, q in zip(primals, perturbed)]
            diff_args = tree_util.tree_unflatten(in_tree, primals)
            result = user_fwd(*_merge(nondiff_argnums, nondiff, diff_args))
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise TypeError(f"custom_vjp fwd of {name} must return a pair (output, "
                                f"residuals)")
            out, res = result
            out_leaves, tree = tree_util.tree_flatten(out)
            call.record_out_tree("the output of fwd", tree)
            res_leaves, res_tree_box["tree"] = tree_util.tree_flatten(res)
            # Python numbers among the residuals reach bwd as they are (as in jax)
            res_tree_box["python"] = {i: r for i, r in enumerate(res_leaves)
                                      if core.is_python_scalar(r)}
            return out_leaves, [r for r in res_leaves if not core.is_python_scalar(r)]

        def flat_bwd(res_leaves, cts):
            given, python = iter(res_leaves), res_tree_box["python"]
            n = res_tree_box["tree"].num_leaves
            res_leaves = [python[i] if i in python else _residual_array(next(given))
                          for i in range(n)]
            res = tree_util.tree_unflatten(res_tree_box["tree"], res_leaves)
            if symbolic:
                cts = [_to_symbolic(c) for c in cts]
            ct = tree_util.tree_unflatten(call.store.out_tree, cts)
            result = user_bwd(*nondiff, res, ct)
            if not isinstance(result, (tuple, list)) or len(result) != len(diff):
                raise TypeError(f"custom_vjp bwd of {name} must return a tuple with one "
                                f"cotangent per differentiable argument ({len(diff)}), got "
                                f"{type(result).__name__}"
                                f"{' of length ' + str(len(result)) if isinstance(result, (tuple, list)) else ''}")
            flat = []
            for i, (ct_i, arg) in enumerate(zip(result, diff)):
                arg_leaves, arg_tree = tree_util.tree_flatten(arg)
                if ct_i is None:
                    flat.extend(tangent_zero(a) for a in arg_leaves)
                    continue
                ct_leaves, ct_tree = tree_util.tree_flatten(ct_i)
                if ct_tree != arg_tree:
                    ct_leaves = _cotangents_by_prefix(ct_i, arg, name, i, arg_tree)
                for a, c in zip(arg_leaves, ct_leaves):
                    if c is None or type(c) is SymbolicZero:
                        flat.append(tangent_zero(a))
                        continue
                    a_aval, c_aval = tangent_aval(core.get_aval(a)), core.get_aval(c)
                    if a_aval.shape != c_aval.shape:
                        raise ValueError(f"custom_vjp bwd of {name}: cotangent {i} has shape "
                                         f"{c_aval.shape}, but argument {i} has shape "
                                         f"{a_aval.shape}")
                    flat.append(c)
            return flat
        flat_fwd.symbolic_zeros = flat_bwd.symbolic_zeros = symbolic

        outs = custom_ad.custom_vjp_call_p.bind(
            *call.leaves, call_jaxpr=call.flat, fwd=flat_fwd, bwd=flat_bwd, num_consts=0,
            name=name)
        return tree_util.tree_unflatten(call.store.out_tree, outs)


def _cotangents_by_prefix(ct, arg, name, i, arg_tree):
    """One cotangent per leaf of `arg`, from a bwd result `ct` whose structure is a tree
    prefix of arg's (as jax's): a None stands for zeros of its whole subtree, any other
    leaf for the one leaf of its subtree (a raw array for a pytree node wrapping one,
    such as flax's Variables)."""
    ct_leaves, ct_tree = tree_util.tree_flatten(ct, is_leaf=lambda c: c is None)
    try:
        subtrees = ct_tree.flatten_up_to(arg)
    except (ValueError, TypeError):
        subtrees = None
    flat = []
    for c, sub in zip(ct_leaves, subtrees or ()):
        n = len(tree_util.tree_leaves(sub))
        if c is None:
            flat.extend([None] * n)
        elif n == 1:
            flat.append(c)
        else:
            subtrees = None
            break
    if subtrees is None:
        raise TypeError(f"custom_vjp bwd of {name}: cotangent {i} has structure "
                        f"{tree_util.tree_structure(ct)}, but argument {i} has structure "
                        f"{arg_tree}")
    return flat


def _residual_array(value):
    """A residual as bwd sees it in jax, an Array: the backward pass holds the linear
    jaxpr's constants as NumPy values."""
    if isinstance(value, (np.ndarray, np.generic)):
        return wrap_value(np.asarray(value), core.get_aval(value))
    return value


def tangent_zero(x):
    return zeros_of(tangent_aval(core.get_aval(x)))


# --- custom_gradient ------------------------------------------------------------------

class _GradientRule:
    """custom_gradient's residuals: the traced vjp rule, its closed-over values as the
    pytree's leaves and the jaxpr and trees as static data."""

    def __init__(self, jaxpr, in_tree, out_tree, consts):
        self.jaxpr, self.in_tree, self.out_tree, self.consts = jaxpr, in_tree, out_tree, consts


tree_util.register_pytree_node(
    _GradientRule,
    lambda r: (tuple(r.consts), (r.jaxpr, r.in_tree, r.out_tree)),
    lambda static, consts: _GradientRule(static[0], static[1], static[2], list(consts)))


def custom_gradient(fun):
    """fun(*args) returns (value, vjp) where vjp(cotangent) gives the cotangents of args
    (JAX's custom_gradient: a custom_vjp whose backward pass is that vjp)."""
    @custom_vjp
    def wrapped_fun(*args):
        ans, _ = fun(*args)
        return ans

    def fwd(*args):
        ans, rule = fun(*args)
        ans_leaves, out_tree = tree_util.tree_flatten((ans,))
        rule_trees = []

        def flat_rule(*cts):
            (ct,) = tree_util.tree_unflatten(out_tree, list(cts))
            leaves, tree = tree_util.tree_flatten(rule(ct))
            rule_trees.append(tree)
            return leaves
        avals = [tangent_aval(core.get_aval(x)) for x in ans_leaves]
        jaxpr, consts = const_free(trace_flat(flat_rule, avals))
        return ans, _GradientRule(jaxpr, rule_trees[0], out_tree, consts)

    def bwd(res, cts):
        cts_leaves, cts_tree = tree_util.tree_flatten((cts,))
        if cts_tree != res.out_tree:
            raise TypeError(f"{res.out_tree}\n!=\n{cts_tree}")
        outs = eval_jaxpr(res.jaxpr.jaxpr, [], *res.consts, *cts_leaves)
        cts_out = tree_util.tree_unflatten(res.in_tree, outs)
        return (cts_out,) if tree_util.treedef_is_leaf(res.in_tree) else cts_out

    wrapped_fun.defvjp(fwd, bwd)
    return wrapped_fun


# --- closure_convert ----------------------------------------------------------------

def _maybe_perturbed(x):
    """Could x carry a nonzero tangent?  Tracers of inexact dtype may; constants cannot."""
    return isinstance(x, core.Tracer) and dtypes.is_inexact(core.get_aval(x).dtype)


def closure_convert(fun, *example_args):
    """(converted, hoisted): converted(*args, *hoisted) == fun(*args), where hoisted are
    the values fun reads from its closure that may be differentiated (tracers), so that
    custom derivative rules can take them as explicit arguments."""
    leaves, in_tree = tree_util.tree_flatten(example_args)
    flat, store = flatten_fun(lambda *args: fun(*args),
                              tree_util.tree_structure((example_args, {})))
    closed = trace_flat(flat, [core.get_aval(x) for x in leaves])
    out_tree = store.out_tree
    consts = list(closed.consts)
    hoist = [_maybe_perturbed(c) for c in consts]
    hoisted = [c for c, h in zip(consts, hoist) if h]
    kept = [c for c, h in zip(consts, hoist) if not h]

    def converted_fun(*args_and_consts):
        n_args = len(args_and_consts) - len(hoisted)
        args, const_args = args_and_consts[:n_args], args_and_consts[n_args:]
        arg_leaves, tree = tree_util.tree_flatten(tuple(args))
        if tree != in_tree:
            raise TypeError(f"The inputs to the closure produced by closure_convert must have "
                            f"the same Pytree structure as the example arguments passed when "
                            f"closure_convert was called. Expected {in_tree}, but got {tree}")
        it_kept, it_hoisted = iter(kept), iter(const_args)
        all_consts = [next(it_hoisted) if h else next(it_kept) for h in hoist]
        outs = eval_jaxpr(closed.jaxpr, all_consts, *arg_leaves)
        return tree_util.tree_unflatten(out_tree, outs)

    return converted_fun, hoisted


def linear_call(fun, fun_transpose, residual_args, linear_args):
    """fun(residual_args, linear_args), for a fun linear in linear_args, whose transpose
    is fun_transpose(residual_args, cotangent) (returning a cotangent shaped like
    linear_args).  Differentiation and transposition never look inside fun: the
    transpose of a linear_call is a linear_call of fun_transpose."""
    res_leaves, res_tree = tree_util.tree_flatten(residual_args)
    lin_leaves, lin_tree = tree_util.tree_flatten(linear_args)
    res_avals = [core.get_aval(x) for x in res_leaves]
    lin_avals = [core.get_aval(x) for x in lin_leaves]
    n_res = len(res_leaves)
    out_tree_box = {}

    def flat_fun(*leaves):
        out = fun(tree_util.tree_unflatten(res_tree, leaves[:n_res]),
                  tree_util.tree_unflatten(lin_tree, leaves[n_res:]))
        out_leaves, out_tree_box["tree"] = tree_util.tree_flatten(out)
        return out_leaves

    callee, callee_consts = const_free(trace_flat(flat_fun, res_avals + lin_avals))
    out_avals = callee.out_avals
    out_tree = out_tree_box["tree"]

    def flat_transpose(*leaves):
        ct = fun_transpose(tree_util.tree_unflatten(res_tree, leaves[:n_res]),
                           tree_util.tree_unflatten(out_tree, leaves[n_res:]))
        ct_leaves, ct_tree = tree_util.tree_flatten(ct)
        if ct_tree != lin_tree:
            raise TypeError(f"linear_call: fun_transpose must return a cotangent with the "
                            f"structure of linear_args {lin_tree}, got {ct_tree}")
        for aval, c in zip(lin_avals, ct_leaves, strict=True):
            if core.get_aval(c).shape != aval.shape or core.get_aval(c).dtype != aval.dtype:
                raise TypeError(f"linear_call: fun_transpose returned a cotangent of type "
                                f"{core.get_aval(c).str_short()} for a linear argument of type "
                                f"{aval.str_short()}")
        return ct_leaves

    transpose, transpose_consts = const_free(
        trace_flat(flat_transpose, res_avals + list(out_avals)))
    outs = custom_ad.linear_call_p.bind(
        *callee_consts, *transpose_consts, *res_leaves, *lin_leaves, callee=callee,
        transpose=transpose, num_callee_consts=len(callee_consts),
        num_transpose_consts=len(transpose_consts), num_res=n_res)
    return tree_util.tree_unflatten(out_tree, outs)
