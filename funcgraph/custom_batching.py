"""funcgraph.custom_batching: functions with their own vmap rule (JAX's custom_vmap)."""

from funcgraph import core, tree_util
from funcgraph.interpreters.staging import trace_flat
from funcgraph.lax import map as _lax_map
from funcgraph.primitives.custom_batching import custom_vmap_p
from funcgraph.primitives.jaxprs import const_free
from funcgraph.transforms.api_util import flatten_fun


def _check_rule_trees(rule, original_out_tree, out_tree, out_batched_tree):
    name = getattr(rule, "__name__", "<unnamed rule>")
    if out_tree != out_batched_tree:
        raise ValueError(f"structure of output value and output batching specification "
                         f"returned by custom vmap rule ({name}) do not match.\n"
                         f"Output values: {out_tree}\nBatching spec: {out_batched_tree}")
    if out_tree != original_out_tree:
        raise ValueError(f"structure of output returned by custom vmap rule ({name}) does not "
                         f"match that of original custom-vmapped function.\n"
                         f"Original output: {original_out_tree}\nRule output: {out_tree}")


class custom_vmap:
    """A function with a custom vmap rule: `f = custom_vmap(f); f.def_vmap(rule)` with
    rule(axis_size, in_batched, *args) -> (out, out_batched), where in_batched and
    out_batched are pytrees of bools and batched values carry their batch axis first."""

    def __init__(self, fun):
        core.wraps(fun)(self)
        self.fun = fun
        self.vmap_rule = None

    def def_vmap(self, vmap_rule):
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", "custom_vmap")
        if kwargs:
            raise TypeError(f"The input arguments to the custom_vmap-decorated function {name} "
                            f"must be positional")
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function {name} "
                                 f"using def_vmap.")
        leaves, in_tree = tree_util.tree_flatten(args)
        flat, store = flatten_fun(self.fun, tree_util.tree_structure((args, {})))
        call, consts = const_free(trace_flat(flat, [core.get_aval(x) for x in leaves]))
        out_tree = store.out_tree
        user_rule, n_consts = self.vmap_rule, len(consts)

        def flat_rule(axis_size, in_batched, flat_args):
            if any(in_batched[:n_consts]):
                raise ValueError(f"custom_vmap function {name} closes over a value that is "
                                 f"batched by vmap; pass it as an argument instead")
            tree_args = tree_util.tree_unflatten(in_tree, flat_args[n_consts:])
            tree_batched = tree_util.tree_unflatten(in_tree, in_batched[n_consts:])
            out, out_batched = user_rule(axis_size, list(tree_batched), *tree_args)
            outs, tree1 = tree_util.tree_flatten(out)
            outs_batched, tree2 = tree_util.tree_flatten(out_batched)
            _check_rule_trees(user_rule, out_tree, tree1, tree2)
            return outs, [bool(b) for b in outs_batched]

        outs = custom_vmap_p.bind(*consts, *leaves, call=call, rule=flat_rule, name=name)
        return tree_util.tree_unflatten(out_tree, outs)


def sequential_vmap(f):
    """A custom_vmap of f whose vmap rule maps f over the batch with lax.map."""
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        batched_args = [a for a, b in zip(args, in_batched, strict=True) if b]

        def one(mapped):
            it = iter(mapped)
            return f.fun(*[next(it) if b else a for a, b in zip(args, in_batched, strict=True)])
        out = _lax_map(one, batched_args)
        return out, tree_util.tree_map(lambda _: True, out)
    return f


__all__ = ["custom_vmap", "sequential_vmap"]
