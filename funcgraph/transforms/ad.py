"""Automatic differentiation, JAX's API over pytrees: jvp, linearize, vjp, grad,
value_and_grad, jacfwd, jacrev, hessian."""
import os

import numpy as np

from funcgraph import core, dtypes, lax, tree_util
from funcgraph.array import Array
from funcgraph.interpreters.ad_util import Zero, instantiate, tangent_aval, zeros_of
from funcgraph.interpreters.eval import eval_jaxpr, to_concrete, wrap_value
from funcgraph.interpreters.jvp import jvp_flat
from funcgraph.interpreters.partial_eval import PartialEvalTrace
from funcgraph.interpreters.transpose import backward_pass
from funcgraph.ir import ClosedJaxpr, var_name
from funcgraph.transforms.api_util import flatten_fun
from funcgraph.transforms.jit import jit
from funcgraph.transforms.vmap import vmap


# --- linearize: JVP under partial evaluation -------------------------------------------
# linearize_flat runs fun once: the primal computation happens now (at the current trace,
# so outside jit the primal values are concrete) and the tangent computation is staged
# into a linear jaxpr whose constvars are the residuals.  The LinearMap it returns is
# applied in forward mode and transposed in reverse mode (vjp = linearize + transpose).

class Residual:
    """A value the backward pass keeps alive: its type, size and where it was made."""
    __slots__ = ("aval", "source")

    def __init__(self, aval, source):
        self.aval = aval
        self.source = source

    @property
    def nbytes(self):
        return self.aval.size * self.aval.dtype.itemsize

    def __repr__(self):
        where = f"{self.source[0]}:{self.source[1]} ({self.source[2]})" if self.source else "?"
        return f"Residual({self.aval.str_short()}, {self.nbytes} bytes, {where})"


class LinearMap:
    """The linear tangent map of a function at a point.

    in_avals/out_avals are the tangent types; inputs and outputs without a
    tangent (float0) or known to be zero are not part of the jaxpr."""

    def __init__(self, closed, in_avals, in_mask, out_avals, out_mask, sources):
        self.jaxpr = closed
        self.in_avals = in_avals
        self.in_mask = in_mask      # which inputs are jaxpr invars
        self.out_avals = out_avals
        self.out_mask = out_mask    # which outputs are jaxpr outvars (others are zero)
        self.sources = sources
        self.residuals = [Residual(v.aval, s)
                          for v, s in core.safe_zip(closed.jaxpr.constvars, sources)]

    def with_residual_values(self, values):
        """The same map with other values of its residuals (a pytree's new leaves)."""
        return LinearMap(ClosedJaxpr(self.jaxpr.jaxpr, values), self.in_avals, self.in_mask,
                         self.out_avals, self.out_mask, self.sources)

    def __call__(self, tangents):
        ins = [t for t, m in core.safe_zip(tangents, self.in_mask) if m]
        outs = iter(eval_jaxpr(self.jaxpr.jaxpr, self.jaxpr.consts, *ins))
        return [next(outs) if m else zeros_of(a) for a, m in
                core.safe_zip(self.out_avals, self.out_mask)]

    def transpose(self, cotangents, instantiate_zeros=True):
        cts = [c for c, m in core.safe_zip(cotangents, self.out_mask) if m]
        cts_in = iter(backward_pass(self.jaxpr.jaxpr, self.jaxpr.consts, cts))
        result = []
        for aval, m in core.safe_zip(self.in_avals, self.in_mask):
            ct = next(cts_in) if m else Zero(aval)
            if instantiate_zeros:
                ct = _typed_as_input(instantiate(ct), aval)
            result.append(ct)
        return result


def _typed_as_input(ct, aval):
    """A cotangent has its input's type, weak type included (as in jax: the gradient of
    a Python scalar argument is weakly typed, whatever the function multiplied it by)."""
    if aval.weak_type and isinstance(ct, (Array, core.Tracer)) and not ct.aval.weak_type \
            and ct.aval.dtype == aval.dtype:
        return lax.convert_element_type(ct, aval.dtype, weak_type=True)
    return ct


def linearize_flat(fun, primals):
    """(primal outputs, LinearMap) of fun(*primals) -> flat list of outputs."""
    primals = [_scalar_as_array(p) for p in primals]
    pe = PartialEvalTrace(core.current.trace)
    in_avals = [tangent_aval(core.get_aval(p)) for p in primals]
    in_mask = [a.dtype != dtypes.float0 for a in in_avals]
    tangent_tracers = [pe.new_arg(a) for a, m in zip(in_avals, in_mask) if m]
    it = iter(tangent_tracers)
    tangents = [next(it) if m else Zero(a) for a, m in zip(in_avals, in_mask)]
    with core.set_trace(pe):
        out_primals, out_tangents = jvp_flat(fun, primals, tangents)
    out_avals = [tangent_aval(core.get_aval(p)) for p in out_primals]
    out_mask = [type(t) is not Zero and a.dtype != dtypes.float0
                for t, a in core.safe_zip(out_tangents, out_avals)]
    closed = pe.finish(tangent_tracers, [t for t, m in zip(out_tangents, out_mask) if m])
    return out_primals, LinearMap(closed, in_avals, in_mask, out_avals, out_mask,
                                  pe.residual_sources())


def _scalar_as_array(x):
    """A Python scalar primal as a (weakly typed) Array, as jax's differentiation sees
    it: rules that read the primal (a custom_vjp's fwd) find a shape and a dtype."""
    if not core.is_python_scalar(x):
        return x
    value, aval = to_concrete(x)
    return wrap_value(value, aval)


# --- flattening helpers -------------------------------------------------------------

def _primal_of(x):
    """aux outputs are not differentiated: their value under the current JVP trace."""
    trace = core.current.trace
    if isinstance(x, core.Tracer) and x._trace is trace:
        return trace.lift(x)[0]
    return x


def _flatten_positional(fun, primals, has_aux):
    """(leaves, tree of the primals tuple, flat fun, store) of fun called on primals.
    store.aux holds the aux output's leaves and tree (_aux rebuilds it)."""
    leaves, p_tree = tree_util.tree_flatten(tuple(primals))

    def flat_aux(aux):
        aux_leaves, aux_tree = tree_util.tree_flatten(aux)
        return [_primal_of(x) for x in aux_leaves], aux_tree
    flat, store = flatten_fun(fun, tree_util.tree_structure((tuple(primals), {})), has_aux,
                              post=flat_aux)
    return leaves, p_tree, flat, store


def _aux(store):
    """The aux output, rebuilt once the transformation's trace has ended (as jax's:
    pytree nodes that record the trace they were made in, such as flax's Variables,
    then belong to the caller's)."""
    leaves, tree = store.aux
    return tree_util.tree_unflatten(tree, leaves)


def _check_tangent(primal, tangent, where):
    p_aval, t_aval = tangent_aval(core.get_aval(primal)), core.get_aval(tangent)
    if p_aval.shape != t_aval.shape:
        raise ValueError(f"{where}: primal of shape {p_aval.shape} has a tangent of shape "
                         f"{t_aval.shape}; they must match")
    if p_aval.dtype == dtypes.float0:
        if t_aval.dtype != dtypes.float0:
            raise TypeError(f"{where}: the primal is {core.get_aval(primal).str_short()}, an "
                            f"integer/boolean value, whose tangent must have dtype float0 "
                            f"(got {t_aval.dtype.name}); use np.zeros(shape, dtype=jax.dtypes.float0)")
        return Zero(p_aval)
    if p_aval.dtype != t_aval.dtype:
        raise TypeError(f"{where}: primal dtype {p_aval.dtype.name} needs a tangent of the same "
                        f"dtype, got {t_aval.dtype.name}")
    return tangent


# --- forward mode -----------------------------------------------------------------

def _computed_tangent(primal, tangent):
    """A tangent passed through unchanged (a Python or NumPy input tangent) as an Array
    of the computed output's tangent type, as jax's rules return them; outputs that are
    inputs themselves keep their tangents as given."""
    if type(tangent) is Array or isinstance(tangent, core.Tracer) \
            or not isinstance(primal, (Array, core.Tracer)):
        return tangent
    aval = tangent_aval(core.get_aval(primal))
    if aval.dtype == dtypes.float0:
        return tangent
    return Array(np.asarray(tangent, aval.dtype), aval)


def jvp(fun, primals, tangents, has_aux=False):
    """(fun(*primals), the directional derivative of fun at primals along tangents)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples or lists of arguments, got "
                        f"{type(primals).__name__} and {type(tangents).__name__}")
    p_leaves, p_tree, flat, store = _flatten_positional(fun, primals, has_aux)
    t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(f"jvp: primal and tangent arguments must have the same tree structure; "
                        f"got {p_tree} and {t_tree}")
    t_leaves = [_check_tangent(p, t, f"jvp argument {i}")
                for i, (p, t) in enumerate(zip(p_leaves, t_leaves))]
    out_p, out_t = jvp_flat(flat, p_leaves, t_leaves)
    out_tree = store.out_tree
    out_t = [_computed_tangent(p, instantiate(t)) for p, t in zip(out_p, out_t)]
    result = (tree_util.tree_unflatten(out_tree, out_p),
              tree_util.tree_unflatten(out_tree, out_t))
    return result + (_aux(store),) if has_aux else result


def linearize(fun, *primals, has_aux=False):
    """(fun(*primals), f_jvp) where f_jvp(*tangents) applies the linearized function."""
    p_leaves, p_tree, flat, store = _flatten_positional(fun, primals, has_aux)
    out_p, linear = linearize_flat(flat, p_leaves)
    f_jvp = Linearized(linear, p_tree, [core.get_aval(p) for p in p_leaves], store.out_tree)
    out = tree_util.tree_unflatten(store.out_tree, out_p)
    return (out, f_jvp, _aux(store)) if has_aux else (out, f_jvp)


class _Typed:
    """A primal value standing in by its type alone (tangent checks read its aval)."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval


class Linearized:
    """The function linearize returns: f_jvp(*tangents) -> output tangents.  As jax's (a
    Partial), it is a pytree whose leaves are the residuals' values, so that a jitted
    function can return it; `.linear_map` is the LinearMap it applies."""

    def __init__(self, linear, primals_tree, primal_avals, out_tree):
        self.linear_map = linear
        self.primals_tree = primals_tree
        self.primal_avals = primal_avals
        self.out_tree = out_tree

    def __call__(self, *tangents):
        t_leaves, t_tree = tree_util.tree_flatten(tangents)
        if t_tree != self.primals_tree:
            raise TypeError(f"linearized function expects tangents structured like the "
                            f"primals {self.primals_tree}, got {t_tree}")
        t_leaves = [_check_tangent(_Typed(a), t, f"tangent {i}")
                    for i, (a, t) in enumerate(zip(self.primal_avals, t_leaves))]
        return tree_util.tree_unflatten(self.out_tree, self.linear_map(t_leaves))


def _flatten_linearized(f):
    # One static part per linearize (handed on by unflatten), as for Pullback, so that
    # jitted calls taking the function share their cache entry.
    linear = f.linear_map
    static = getattr(f, "static", None)
    if static is None:
        static = f.static = _Static((
            linear.with_residual_values([None] * len(linear.jaxpr.consts)),
            f.primals_tree, tuple(f.primal_avals), f.out_tree))
    return linear.jaxpr.consts, static


class _Static:
    """Aux data compared by identity (what it holds has no useful equality)."""
    __slots__ = ("parts",)

    def __init__(self, parts):
        self.parts = parts


def _unflatten_linearized(static, values):
    linear, primals_tree, primal_avals, out_tree = static.parts
    f = Linearized(linear.with_residual_values(list(values)), primals_tree,
                   list(primal_avals), out_tree)
    f.static = static
    return f


tree_util.register_pytree_node(Linearized, _flatten_linearized, _unflatten_linearized)


# --- reverse mode -----------------------------------------------------------------

class NotNeeded:
    """In a pullback's args_res: an argument the backward pass does not keep."""

    def __repr__(self):
        return "NotNeeded()"


class Pullback:
    """The function vjp returns: maps output cotangents to input cotangents.

    `.residuals` lists what the backward pass keeps alive, and `.jaxpr` is the
    linear (tangent) jaxpr that the pullback transposes.  As in jax's VJP object,
    `.args_res` holds the arguments the backward pass keeps as they are and
    `.opaque_residuals` the values the forward pass computed for it.  A pullback is a
    pytree whose leaves are the residuals' values, as jax's is: a jitted function can
    return one, and a jitted backward pass can take one (fwd_and_bwd)."""

    def __init__(self, linear, primals_tree, out_tree, out_avals, arg_of_residual=None):
        self.linear = linear
        self.primals_tree = primals_tree
        self.out_tree = out_tree
        self.out_avals = out_avals
        # per residual, the index of the argument leaf it is (None: computed)
        self.arg_of_residual = arg_of_residual or (None,) * len(linear.jaxpr.consts)
        self.static = None  # its pytree structure, made when first flattened

    @property
    def residuals(self):
        return self.linear.residuals

    @property
    def jaxpr(self):
        return self.linear.jaxpr

    @property
    def args_res(self):
        """Per argument (structured as the arguments), the values of it the backward
        pass keeps verbatim; NotNeeded() for the leaves it does not keep."""
        kept = {i: value for i, value in zip(self.arg_of_residual, self.linear.jaxpr.consts,
                                             strict=True) if i is not None}
        leaves = [kept.get(i, NotNeeded()) for i in range(self.primals_tree.num_leaves)]
        return list(tree_util.tree_unflatten(self.primals_tree, leaves))

    @property
    def opaque_residuals(self):
        """The residuals the forward pass computed (not arguments), in order."""
        return [value for i, value in zip(self.arg_of_residual, self.linear.jaxpr.consts,
                                          strict=True) if i is None]

    def pretty(self, source=False):
        """The linear jaxpr this pullback transposes, after a legend of its constvars: the
        residuals the forward pass saved, with their size and the line that made them."""
        lines = ["# residuals kept for the backward pass:"]
        for i, r in enumerate(self.residuals):
            where = f"{os.path.basename(r.source[0])}:{r.source[1]} ({r.source[2]})" if r.source \
                else "an input or a constant"
            lines.append(f"#   {var_name(i)}:{r.aval.str_short()}  {r.nbytes} B  from {where}")
        if not self.residuals:
            lines.append("#   (none)")
        return "\n".join(lines) + "\n" + self.jaxpr.pretty(source=source)

    def __repr__(self):
        return self.pretty()

    def __call__(self, cotangent):
        ct_leaves, ct_tree = tree_util.tree_flatten(cotangent)
        if ct_tree != self.out_tree:
            raise TypeError(f"vjp pullback: the cotangent must be structured like the output "
                            f"{self.out_tree}, got {ct_tree}")
        cts = []
        for i, (ct, aval) in enumerate(zip(ct_leaves, self.out_avals)):
            ct_aval = core.get_aval(ct)
            expected = tangent_aval(aval)
            if ct_aval.shape != expected.shape or (
                    expected.dtype != dtypes.float0 and ct_aval.dtype != expected.dtype):
                raise ValueError(f"vjp pullback: cotangent {i} has type {ct_aval.str_short()}, "
                                 f"but the output has type {expected.str_short()}")
            cts.append(ct)
        cts_in = self.linear.transpose(cts)
        return tree_util.tree_unflatten(self.primals_tree, cts_in)


def _flatten_pullback(pullback):
    # The static part is the pullback with its residual values left out, one object per
    # vjp (handed on by unflatten), so that calls taking pullbacks of one vjp share jit's
    # cache entries; holding no values, it keeps none alive.
    static = pullback.static
    if static is None:
        linear = pullback.linear
        static = pullback.static = Pullback(
            linear.with_residual_values([None] * len(linear.jaxpr.consts)),
            pullback.primals_tree, pullback.out_tree, pullback.out_avals,
            pullback.arg_of_residual)
    return pullback.linear.jaxpr.consts, static


def _unflatten_pullback(static, values):
    pullback = Pullback(static.linear.with_residual_values(list(values)), static.primals_tree,
                        static.out_tree, static.out_avals, static.arg_of_residual)
    pullback.static = static
    return pullback


tree_util.register_pytree_node(Pullback, _flatten_pullback, _unflatten_pullback)


def vjp(fun, *primals, has_aux=False):
    """(fun(*primals), pullback): pullback(cotangent) -> cotangents of primals (a tuple)."""
    p_leaves, p_tree, flat, store = _flatten_positional(fun, primals, has_aux)
    out_p, linear = linearize_flat(flat, p_leaves)
    out_tree = store.out_tree
    leaf_index = {id(leaf): i for i, leaf in enumerate(p_leaves)}
    arg_of_residual = tuple(leaf_index.get(id(r)) for r in linear.jaxpr.consts)
    pullback = Pullback(linear, p_tree, out_tree, [core.get_aval(o) for o in out_p],
                        arg_of_residual)
    out = tree_util.tree_unflatten(out_tree, out_p)
    return (out, pullback, _aux(store)) if has_aux else (out, pullback)


def fwd_and_bwd(fun, argnums, has_aux=False, jitted=True):
    """(fwd, bwd): fwd(*args) is (fun(*args), residuals) (plus aux with has_aux) and
    bwd(residuals, cotangent) the cotangents of the arguments argnums names, as jax's.
    The residuals are the vjp pullback, a pytree: with jitted (the default) both are
    jitted and bwd compiles once for every call of fwd with the same types."""
    def fwd(*args):
        _, nums = _normalize_positions(argnums, len(args))

        def partial_fun(*diff):
            full = list(args)
            for i, d in zip(nums, diff, strict=True):
                full[i] = d
            return fun(*full)
        return vjp(partial_fun, *(args[i] for i in nums), has_aux=has_aux)

    def bwd(residuals, cotangent):
        cts = residuals(cotangent)
        return cts[0] if isinstance(argnums, int) else cts
    return (jit(fwd), jit(bwd)) if jitted else (fwd, bwd)


def _normalize_positions(argnums, nargs):
    """argnums as fwd_and_bwd takes them (jax's check and message for positions)."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for n in nums:
        if not -nargs <= n < nargs:
            raise ValueError(f"Positional argument indices, e.g. for `argnums`, must have "
                             f"value greater than or equal to -len(args) and less than "
                             f"len(args), but got value {n} for len(args) == {nargs}.")
    return isinstance(argnums, int), tuple(n % nargs for n in nums)


def _normalize_argnums(argnums, nargs, name):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums:
        raise ValueError(f"{name}: argnums must name at least one argument")
    for n in nums:
        if not isinstance(n, int) or not -nargs <= n < nargs:
            raise TypeError(f"{name}: argnums={argnums} is out of range for a function called "
                             f"with {nargs} positional arguments")
    normalized = tuple(n % nargs for n in nums)
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"{name}: argnums={argnums} names an argument more than once; each "
                         f"argument can be differentiated once")
    return single, normalized


def _check_differentiable_inputs(leaves, name, allow_int):
    for leaf in leaves:
        aval = core.get_aval(leaf)
        if not dtypes.is_inexact(aval.dtype) and not allow_int:
            raise TypeError(f"{name} requires real- or complex-valued inputs (float or complex "
                            f"dtypes), but got {aval.str_short()}. Convert the input to a float "
                            f"dtype, leave it out of argnums, or pass allow_int=True to get a "
                            f"float0 (zero) gradient for it")


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=()):
    """Function returning (fun(*args), gradient of fun w.r.t. the args named by argnums)."""
    name = f"value_and_grad({getattr(fun, '__name__', 'fun')})"

    @core.wraps(fun)
    def value_and_grad_fun(*args, **kwargs):
        single, nums = _normalize_argnums(argnums, len(args), "grad")
        diff_args = tuple(args[i] for i in nums)
        _check_differentiable_inputs(tree_util.tree_leaves(diff_args), "grad", allow_int)

        def partial_fun(*diff):
            full = list(args)
            for i, d in zip(nums, diff):
                full[i] = d
            return fun(*full, **kwargs)

        vjp_out = vjp(partial_fun, *diff_args, has_aux=has_aux)
        out, pullback = vjp_out[0], vjp_out[1]
        out_aval = core.get_aval(out) if not isinstance(out, (tuple, list, dict)) else None
        if out_aval is None or out_aval.shape != () or not dtypes.is_inexact(out_aval.dtype):
            got = out_aval.str_short() if out_aval else type(out).__name__
            raise TypeError(f"grad requires a real-valued scalar output (shape (), float dtype), "
                            f"but {getattr(fun, '__name__', 'the function')} returned {got}. "
                            f"Reduce it to a scalar (e.g. with .sum()), or use vjp or jacrev for "
                            f"non-scalar outputs")
        if dtypes.is_complex(out_aval.dtype) and not holomorphic:
            raise TypeError("grad requires a real-valued output; got a complex output. Use "
                            "holomorphic=True for holomorphic functions, or take .real")
        one = _ones_like(out, out_aval)
        grads = pullback(one)
        if not holomorphic:  # as jax: the gradient at a complex point is strongly typed
            grads = tree_util.tree_map(_strong_if_complex, grads)
        grads = grads[0] if single else grads
        if has_aux:
            return (out, vjp_out[2]), grads
        return out, grads

    value_and_grad_fun.__name__ = name
    return value_and_grad_fun


def _strong_if_complex(g):
    if isinstance(g, (Array, core.Tracer)) and g.aval.weak_type and dtypes.is_complex(
            g.aval.dtype):
        return lax.convert_element_type(g, g.aval.dtype, weak_type=False)
    return g


def _ones_like(out, aval):
    return Array(np.ones((), aval.dtype), core.scalar_aval(aval.dtype, aval.weak_type))


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """The gradient of a scalar-valued fun w.r.t. the args named by argnums."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @core.wraps(fun)
    def grad_fun(*args, **kwargs):
        (value, aux), g = vg(*args, **kwargs) if has_aux else ((None, None), vg(*args, **kwargs)[1])
        return (g, aux) if has_aux else g
    return grad_fun


# --- Jacobians and Hessians --------------------------------------------------------

def _basis(leaves):
    """One-hot rows spanning all leaves: per leaf an array (N,) + leaf.shape, where N is
    the total number of elements (row k is 1 at the k-th element overall), weakly typed
    where the leaf is (so that a Jacobian keeps weak types, as jax's)."""
    avals = [core.get_aval(x) for x in leaves]
    total = sum(a.size for a in avals)
    rows, offset = [], 0
    for a in avals:
        eye = np.zeros((total, a.size), a.dtype)
        eye[np.arange(offset, offset + a.size), np.arange(a.size)] = 1
        eye = eye.reshape((total,) + a.shape)
        rows.append(Array(eye, a.update(shape=eye.shape)) if a.weak_type else eye)
        offset += a.size
    return rows, avals


def _split_axis(x, axis, in_avals):
    """Split `axis` of x (length = total input size) into blocks shaped like the inputs."""
    pieces, offset = [], 0
    x_aval = core.get_aval(x)
    axis = axis % x_aval.ndim
    for a in in_avals:
        block = lax.slice_in_dim(x, offset, offset + a.size, axis=axis)
        shape = x_aval.shape[:axis] + a.shape + x_aval.shape[axis + 1:]
        pieces.append(block.reshape(shape))
        offset += a.size
    return pieces


def _partial(fun, args, nums):
    def partial_fun(*diff):
        full = list(args)
        for i, d in zip(nums, diff):
            full[i] = d
        return fun(*full)
    return partial_fun


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian by forward mode: jvp vmapped over the standard basis of the inputs."""

    @core.wraps(fun)
    def jac_fun(*args):
        single, nums = _normalize_argnums(argnums, len(args), "jacfwd")
        diff = tuple(args[i] for i in nums)
        in_struct = diff[0] if single else diff
        in_leaves, in_tree = tree_util.tree_flatten(in_struct)
        _check_differentiable_inputs(in_leaves, "jacfwd", False)
        partial_fun = _partial(fun, args, nums)
        basis, in_avals = _basis(in_leaves)

        def push(*tangent_leaves):
            tangents = tree_util.tree_unflatten(in_tree, list(tangent_leaves))
            res = jvp(partial_fun, diff, (tangents,) if single else tangents, has_aux=has_aux)
            return (res[1], res[2]) if has_aux else res[1]

        out_axes = (-1, None) if has_aux else -1
        result = vmap(push, out_axes=out_axes)(*basis)
        jac, aux = result if has_aux else (result, None)
        out_leaves, out_tree = tree_util.tree_flatten(jac)
        blocks = [tree_util.tree_unflatten(in_tree, _split_axis(o, -1, in_avals))
                  for o in out_leaves]
        jac = tree_util.tree_unflatten(out_tree, blocks)
        return (jac, aux) if has_aux else jac
    return jac_fun


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian by reverse mode: the pullback vmapped over the output basis."""

    @core.wraps(fun)
    def jac_fun(*args):
        single, nums = _normalize_argnums(argnums, len(args), "jacrev")
        diff = tuple(args[i] for i in nums)
        in_struct = diff[0] if single else diff
        in_leaves, in_tree = tree_util.tree_flatten(in_struct)
        _check_differentiable_inputs(in_leaves, "jacrev", allow_int)
        res = vjp(_partial(fun, args, nums), *diff, has_aux=has_aux)
        out, pullback = res[0], res[1]
        out_leaves, out_tree = tree_util.tree_flatten(out)
        basis, out_avals = _basis(out_leaves)

        def pull(*ct_leaves):
            cts = pullback(tree_util.tree_unflatten(out_tree, list(ct_leaves)))
            return tree_util.tree_leaves(cts[0] if single else cts)

        rows = vmap(pull)(*basis)  # per input leaf: (M,) + in.shape
        per_input = [_split_axis(r, 0, out_avals) for r in rows]
        blocks = []
        for oi in range(len(out_leaves)):
            blocks.append(tree_util.tree_unflatten(
                in_tree, [per_input[ii][oi] for ii in range(len(in_leaves))]))
        jac = tree_util.tree_unflatten(out_tree, blocks)
        return (jac, res[2]) if has_aux else jac
    return jac_fun


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Hessian: jacfwd of jacrev."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux), argnums, has_aux=has_aux)
