"""checkpoint (remat), checkpoint_name, checkpoint_policies and print_saved_residuals,
with JAX's API (jax.checkpoint, jax.ad_checkpoint)."""
import dataclasses
import types

from funcgraph import core, tree_util
from funcgraph.interpreters.staging import trace_flat
from funcgraph.ir import Literal
from funcgraph.primitives.call import pjit_p
from funcgraph.primitives.contractions import dot_general_p
from funcgraph.primitives.remat import Offloadable, Recompute, Saveable, name_p, remat_p
from funcgraph.transforms.ad import linearize_flat
from funcgraph.transforms.api_util import arg_names, flatten_args, flatten_fun
from funcgraph.transforms.custom_derivatives import SplitCall


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=()):
    """Recompute fun's intermediates in the backward pass instead of saving them (all of
    them with the default policy None; `policy(prim, *avals, **params)` chooses which
    may be saved).  With prevent_cse, the recomputation sits behind an
    optimization_barrier so that XLA cannot merge it with the forward pass."""
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @core.wraps(fun)
    def remat_fun(*args, **kwargs):
        call = SplitCall(lambda *a: fun(*a, **kwargs), static_argnums, args,
                         getattr(fun, "__name__", "checkpoint"))
        jaxpr, consts = call.traced()
        outs = remat_p.bind(*consts, *call.leaves, jaxpr=jaxpr, prevent_cse=prevent_cse,
                            differentiated=False, policy=policy)
        return tree_util.tree_unflatten(call.store.out_tree, outs)
    return remat_fun


remat = checkpoint


def checkpoint_name(x, name):
    """x (a pytree) unchanged, its leaves named `name` for checkpoint policies."""
    leaves, tree = tree_util.tree_flatten(x)
    return tree_util.tree_unflatten(tree, [name_p.bind(leaf, name=name) for leaf in leaves])


# --- policies: policy(prim, *avals, **params) -> bool, Saveable, Recompute or Offloadable

def everything_saveable(*_, **__):
    """Save everything, as without checkpoint."""
    return True


def nothing_saveable(*_, **__):
    """Save nothing: recompute everything (the default policy of checkpoint)."""
    return False


class _DotsSaveable:
    """Save the results of dot_general (only those without batch dimensions if asked)."""
    __slots__ = ("only_if_no_batch_dims",)

    def __init__(self, only_if_no_batch_dims):
        self.only_if_no_batch_dims = only_if_no_batch_dims

    def __call__(self, prim, *avals, **params):
        if prim is not dot_general_p:
            return False
        return not self.only_if_no_batch_dims or _no_batch_dims(params)

    def __repr__(self):
        return f"DotsSaveable(only_if_no_batch_dims={self.only_if_no_batch_dims})"


def _no_batch_dims(params):
    (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


dots_saveable = _DotsSaveable(False)
dots_with_no_batch_dims_saveable = _DotsSaveable(True)


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """As dots_with_no_batch_dims_saveable, offloading the saved dots from memory space
    offload_src to offload_dst (funcgraph saves them in place)."""
    def policy(prim, *_, **params):
        if prim is dot_general_p and _no_batch_dims(params):
            return Offloadable(src=offload_src, dst=offload_dst)
        return Recompute
    return policy


def save_anything_except_these_names(*names_not_to_save):
    """Meant to save every value except the named ones given; as in JAX (whose version
    says it 'probably just doesn't work'), it saves everything."""
    return lambda *_, **__: True


@dataclasses.dataclass(frozen=True)
class SaveOnlyTheseNames:
    """Save only outputs of checkpoint_name whose name is in saveable_names (a frozenset)."""
    saveable_names: frozenset

    def __call__(self, prim, *_, **params):
        return prim is name_p and params["name"] in self.saveable_names


@dataclasses.dataclass(frozen=True)
class SaveAnyNamesButThese:
    """Save only outputs of checkpoint_name whose name is not in names (a frozenset)."""
    names: frozenset

    def __call__(self, prim, *_, **params):
        return prim is name_p and params["name"] not in self.names


@dataclasses.dataclass(frozen=True)
class SaveAndOffloadOnlyTheseNames:
    """Save the outputs of checkpoint_name named in names_which_can_be_saved, offload
    (from memory space offload_src to offload_dst) those named in
    names_which_can_be_offloaded, recompute the rest."""
    names_which_can_be_saved: frozenset
    names_which_can_be_offloaded: frozenset
    offload_src: str
    offload_dst: str

    def __call__(self, prim, *_, **params):
        if prim is name_p and params["name"] in self.names_which_can_be_saved:
            return Saveable
        if prim is name_p and params["name"] in self.names_which_can_be_offloaded:
            return Offloadable(src=self.offload_src, dst=self.offload_dst)
        return Recompute


def save_only_these_names(*names_which_can_be_saved):
    """Save only named values, and only among the names given."""
    return SaveOnlyTheseNames(frozenset(names_which_can_be_saved))


def save_any_names_but_these(*names_not_to_save):
    """Save only named values, except the names given."""
    return SaveAnyNamesButThese(frozenset(names_not_to_save))


def save_and_offload_only_these_names(*, names_which_can_be_saved,
                                      names_which_can_be_offloaded, offload_src, offload_dst):
    """As save_only_these_names, and the names in names_which_can_be_offloaded are
    offloaded from offload_src to offload_dst (funcgraph saves them in place)."""
    saved, offloaded = frozenset(names_which_can_be_saved), frozenset(names_which_can_be_offloaded)
    intersection = saved & offloaded
    if intersection:
        raise ValueError(
            f"The names should be exclusive and should not intersect in "
            f"`names_which_can_be_saved` and `names_which_can_be_offloaded`. Got "
            f"names_which_can_be_saved={set(saved)}, names_which_can_be_offloaded="
            f"{set(offloaded)} and the intersection={set(intersection)}")
    return SaveAndOffloadOnlyTheseNames(saved, offloaded, offload_src, offload_dst)


def save_from_both_policies(policy_1, policy_2):
    """A value is saveable iff either policy saves it (both must answer with a bool)."""
    def policy(prim, *args, **params):
        out1 = policy_1(prim, *args, **params)
        out2 = policy_2(prim, *args, **params)
        if not (isinstance(out1, bool) and isinstance(out2, bool)):
            raise ValueError(
                f"The return value of the policies should be a boolean. Got: {out1} and "
                f"{out2}. Please write a custom policy function directly, rather than "
                f"using this helper function.")
        return out1 or out2
    return policy


checkpoint_policies = types.SimpleNamespace(
    SaveOnlyTheseNames=SaveOnlyTheseNames,
    SaveAnyNamesButThese=SaveAnyNamesButThese,
    SaveAndOffloadOnlyTheseNames=SaveAndOffloadOnlyTheseNames,
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies,
    save_and_offload_only_these_names=save_and_offload_only_these_names)


# --- what reverse mode saves ----------------------------------------------------------------

def saved_residuals(f, *args, **kwargs):
    """[(aval, where it comes from)] for each value vjp(f, *args) keeps for the backward
    pass, in JAX's order: literals, constants, arguments, then equation outputs."""
    leaves, in_tree = flatten_args(args, kwargs)
    flat, _ = flatten_fun(f, in_tree)

    def residuals_of(*xs):
        _, linear_map = linearize_flat(flat, list(xs))
        return list(linear_map.jaxpr.consts)
    closed = trace_flat(residuals_of, [core.get_aval(x) for x in leaves])
    return _describe(closed.jaxpr, arg_names(f, args, kwargs))


def _describe(jaxpr, names):
    res_vars = {x for x in jaxpr.outvars if type(x) is not Literal}
    results = [(x.aval, "from a literal") for x in jaxpr.outvars if type(x) is Literal]
    results += [(v.aval, "from a constant") for v in jaxpr.constvars if v in res_vars]
    results += [(v.aval, f"from the argument {name}")
                for v, name in zip(jaxpr.invars, names, strict=True) if v in res_vars]
    for eqn in jaxpr.eqns:
        where = _summarize(eqn.source)
        for v in eqn.outvars:
            if v not in res_vars:
                continue
            if eqn.prim is name_p:
                results.append((v.aval, f"named '{eqn.params['name']}' from {where}"))
            elif eqn.prim is pjit_p:
                results.append((v.aval, f"output of jitted function '{eqn.params['name']}' "
                                        f"from {where}"))
            else:
                results.append((v.aval, f"output of {eqn.prim.name} from {where}"))
    return results


def _summarize(source):
    if source is None:
        return "unknown"
    file, line, fn = source
    return f"{file}:{line} ({fn})"


def print_saved_residuals(f, *args, **kwargs):
    """Print what vjp(f, *args) saves for the backward pass, one value a line."""
    for aval, where in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short()} {where}")
