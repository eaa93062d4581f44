"""vmap: vectorizing map over pytrees, with JAX's in_axes/out_axes semantics."""

from funcgraph import core, lax, tree_util
from funcgraph.interpreters.batching import batch_flat
from funcgraph.primitives.batching_helpers import place_outputs
from funcgraph.transforms.api_util import arg_names, flatten_args, flatten_fun


def _broadcast_prefix(prefix, tree, what, paths=None):
    """One axis per leaf of `tree`, from `prefix` (an axis spec that is a tree prefix);
    `paths`, when given, gets the key path of each leaf (as jax's errors name it)."""
    result = []

    def visit(spec, subtree, path):
        if spec is None or isinstance(spec, int):
            if paths is None:
                result.extend([spec] * len(tree_util.tree_leaves(subtree)))
                return
            leaf_paths = [path + tuple(p) for p, _ in
                          tree_util.tree_flatten_with_path(subtree)[0]]
            result.extend([spec] * len(leaf_paths))
            paths.extend(leaf_paths)
            return
        spec_children, spec_tree = tree_util.tree_flatten_with_path(
            spec, is_leaf=lambda x: x is None)
        try:
            subtrees = spec_tree.flatten_up_to(subtree)
        except (ValueError, TypeError):
            raise ValueError(f"vmap {what} specification must be a tree prefix of the "
                             f"corresponding value, got specification {spec!r} for value tree "
                             f"{tree_util.tree_structure(subtree)}") from None
        for (child_path, child_spec), child in zip(spec_children, subtrees):
            visit(child_spec, child, path + tuple(child_path))
    visit(prefix, tree, ())
    return result


def _check_axes(leaves, axes, names):
    sizes = []
    for leaf, axis, name in zip(leaves, axes, names):
        if axis is None:
            continue
        aval = core.get_aval(leaf)
        if not -aval.ndim <= axis < aval.ndim:
            raise ValueError(
                f"vmap was asked to map argument {name} along axis {axis}, which needs an array "
                f"of rank at least {axis + 1 if axis >= 0 else -axis}, but it has rank "
                f"{aval.ndim} (type {aval.str_short()})")
        sizes.append((aval.shape[axis % aval.ndim], axis % aval.ndim, name, aval))
    return sizes


def _consistent_size(sizes, axis_size):
    distinct = {s for s, _, _, _ in sizes}
    if axis_size is not None:
        distinct.add(axis_size)
    if len(distinct) > 1:
        lines = [f"  * axis {ax} of {name} (type {aval.str_short()}) has size {s}"
                 for s, ax, name, aval in sizes]
        if axis_size is not None:
            lines.append(f"  * axis_size is {axis_size}")
        raise ValueError("vmap got inconsistent sizes for the mapped axes:\n" + "\n".join(lines))
    if not distinct:
        raise ValueError("vmap must have at least one non-None value in in_axes, or be given "
                         "axis_size")
    return distinct.pop()


def _normalize_in_axes(in_axes, args):
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if in_axes is None or isinstance(in_axes, int):
        return (in_axes,) * len(args)
    if not isinstance(in_axes, tuple) or len(in_axes) != len(args):
        raise ValueError(f"vmap in_axes must be an int, None, or a tuple with one entry per "
                         f"positional argument; got in_axes={in_axes!r} for {len(args)} "
                         f"arguments")
    return in_axes


def vmap(fun, in_axes=0, out_axes=0, axis_size=None, axis_name=None, chunk_size=None,
         spmd_axis_name=None):
    """Map fun over an axis of its inputs; see JAX's vmap."""
    if not callable(fun):
        raise TypeError(f"vmap expects a callable, got {fun!r}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"vmap chunk_size must be a positive int, got {chunk_size!r}")

    @core.wraps(fun)
    def vmapped(*args, **kwargs):
        axes_per_arg = _normalize_in_axes(in_axes, args) + (0,) * len(kwargs)
        all_args = list(args) + [kwargs[k] for k in sorted(kwargs)]
        leaves, in_tree = flatten_args(args, kwargs)
        axes = []
        for spec, arg in zip(axes_per_arg, all_args):
            axes.extend(_broadcast_prefix(spec, arg, "in_axes"))
        names = arg_names(fun, args, kwargs)
        size = _consistent_size(_check_axes(leaves, axes, names), axis_size)
        axes = [None if a is None else a % core.get_aval(l).ndim for a, l in zip(axes, leaves)]
        flat_fun, store = flatten_fun(fun, in_tree)
        if chunk_size is None or chunk_size >= size:
            outs, _ = _run(flat_fun, store, leaves, axes, size, (axis_name, spmd_axis_name),
                           out_axes)
        else:
            outs = _run_chunked(flat_fun, store, leaves, axes, size, (axis_name, spmd_axis_name),
                               out_axes,
                                chunk_size)
        return tree_util.tree_unflatten(store.out_tree, outs)
    return vmapped


def _run(flat_fun, store, leaves, axes, size, names, out_axes):
    """Batch flat_fun, then move each output's batch axis to its out_axes entry (known
    only once the function has run and the output structure is known).  `names` is
    (axis_name, spmd_axis_name).  Returns the outputs and their out_axes."""
    vals, dims = batch_flat(flat_fun, leaves, axes, size, *names)
    paths = []
    out_dims = _broadcast_prefix(out_axes, tree_util.tree_unflatten(store.out_tree, vals),
                                 "out_axes", paths)
    for i, (val, dim, want) in enumerate(zip(vals, dims, out_dims)):
        if want is None and dim is not None:
            raise ValueError(
                f"at vmap out_axes{tree_util.keystr(paths[i])}, got axis spec None but "
                f"output was batched on axis {dim}: out_axes is None for output {i}, but "
                f"that output depends on the mapped inputs; give it an integer out_axes, or "
                f"make it independent of the mapped arguments")
        rank = core.get_aval(val).ndim + (dim is None)  # of the batched output
        if want is not None and not -rank <= want < rank:
            raise ValueError(f"vmap out_axes={want} is out of bounds for output {i}, which "
                             f"has rank {rank} once batched (valid: {-rank} to {rank - 1})")
    return place_outputs(vals, dims, out_dims, size), out_dims


def _run_chunked(flat_fun, store, leaves, axes, size, names, out_axes, chunk_size):
    """Evaluate the map chunk by chunk (bounded memory), then join the pieces."""
    pieces = []
    for start in range(0, size, chunk_size):
        stop = min(start + chunk_size, size)
        chunk = [leaf if a is None else lax.slice_in_dim(leaf, start, stop, axis=a)
                 for leaf, a in zip(leaves, axes)]
        outs, out_dims = _run(flat_fun, store, chunk, axes, stop - start, names, out_axes)
        pieces.append(outs)
    outs = []
    for i, d in enumerate(out_dims):
        parts = [p[i] for p in pieces]
        if d is None:
            outs.append(parts[0])
        else:
            ndim = core.get_aval(parts[0]).ndim
            outs.append(lax.concatenate(parts, d % ndim))
    return outs
