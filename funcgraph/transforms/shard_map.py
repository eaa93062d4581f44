"""shard_map and pmap: per-device programs over pytrees, with JAX's signatures.

shard_map traces its function once on the per-device blocks of its arguments (while
the mesh axes are named, so collectives find their sizes) and binds the shard_map
primitive.  pmap maps a function over a leading (or in_axes) axis with one device per
element: a jitted shard_map over a one-axis mesh whose body drops and re-adds the
mapped axis, as JAX's newer pmap is built."""
import functools

import numpy as np

from funcgraph import core, tree_util
from funcgraph import backend as xla_backend
from funcgraph.array import Array
from funcgraph.interpreters.batching import manual_axes
from funcgraph.interpreters.staging import trace_flat
from funcgraph.lax._operands import as_operand
from funcgraph.primitives.base import reshape_p
from funcgraph.primitives.collectives import pvary_p
from funcgraph.primitives.jaxprs import const_free
from funcgraph.primitives.shard_map import block_aval, mentioned, shard_map_p, unmentioned, \
    vma_axes
from funcgraph.sharding import Mesh, NamedSharding, PartitionSpec, get_mesh
from funcgraph.transforms.api_util import flatten_args, flatten_fun, fun_name
from funcgraph.transforms.jit import jit
from funcgraph.transforms.vmap import _broadcast_prefix, _check_axes, _consistent_size, \
    _normalize_in_axes


def _is_spec(x):
    return isinstance(x, PartitionSpec)


def _leaf_specs(specs, tree, what):
    """One PartitionSpec per leaf of tree, from specs (a tree prefix of it)."""
    out = tree_util.prefix_leaves(specs, tree, _is_spec, f"shard_map {what}")
    for s in out:
        if not _is_spec(s):
            raise TypeError(f"shard_map {what} entries must be PartitionSpecs (P(...)), got "
                            f"{s!r}")
    return out


def _inferred_specs(leaves, mesh):
    """in_specs left out: each argument's own spec when it is laid out over the mesh."""
    return [x._sharding.spec if type(x) is Array and isinstance(x._sharding, NamedSharding)
            and x._sharding.mesh == mesh else PartitionSpec() for x in leaves]


def _resolve_mesh(mesh):
    mesh = get_mesh() if mesh is None else mesh
    if not isinstance(mesh, Mesh) or mesh.empty:
        raise ValueError("shard_map requires a `mesh`: pass mesh=... or call it under "
                         "`with fg.set_mesh(mesh):`")
    return mesh


def _check_specs(mesh, specs, what):
    for s in specs:
        for d in range(len(s)):
            for a in s.axes_of(d):
                if a not in mesh.axis_names:
                    raise ValueError(f"shard_map {what} {s} names the axis {a!r}, which is "
                                     f"not in the mesh {mesh}")


def _vary_as_split(out, spec, mesh):
    """An output marked (pvary) as varying along every axis its spec splits over, as
    its blocks do."""
    axes = mentioned(mesh, spec) - core.get_aval(out).vma
    if not axes:
        return out
    return pvary_p.bind(as_operand(out), axis_name=core.in_mesh_order(axes, mesh.axis_names))


def _check_replication(fun, out_avals, mesh, out_specs):
    """jax's check_vma error: an out_spec that leaves out a mesh axis along which the
    output varies."""
    for i, (aval, spec) in enumerate(zip(out_avals, out_specs, strict=True)):
        missing = [a for a in unmentioned(mesh, spec) if a in aval.vma]
        if missing:
            where = "out_specs" if len(out_specs) == 1 else f"out_specs[{i}]"
            raise ValueError(
                f"shard_map applied to the function '{fun_name(fun)}' was given out_specs "
                f"which require replication which can't be statically inferred given the "
                f"mesh:\n\nThe mesh given has shape {mesh.axis_sizes} with corresponding axis "
                f"names {mesh.axis_names}.\n\n{where} is {spec} which implies that the "
                f"corresponding output value {_replication_claim(mesh, spec, aval, missing)}"
                f"\n\nCheck if these output values are meant to "
                f"be replicated over those mesh axes. If not, consider revising the "
                f"corresponding out_specs entries. If so, consider disabling the check by "
                f"passing the check_vma=False argument to `shard_map`.")


def _replication_claim(mesh, spec, aval, missing):
    if len(unmentioned(mesh, spec)) == 1:
        return (f"is replicated across mesh axis {missing[0]!r}, but could not infer "
                f"replication over any axes")
    return (f"is only varying across mesh axes {_axes_text(mentioned(mesh, spec), mesh)} and "
            f"not {_axes_text(missing, mesh)}, but it was inferred to be possibly varying "
            f"over {_axes_text(aval.vma, mesh)}")


def _axes_text(axes, mesh):
    """{i,j}, as jax names sets of mesh axes in this message."""
    return "{" + ",".join(map(str, core.in_mesh_order(axes, mesh.axis_names))) + "}"


def shard_map_flat(flat_fun, store, leaves, mesh, in_specs, out_specs_of, check_vma=True,
                   fun=None):
    """Run flat_fun(*blocks) on every device; `out_specs_of(out_tree)` gives one spec
    per output leaf once the function has been traced.  Returns the output leaves."""
    leaves = [as_operand(x) for x in leaves]
    _check_specs(mesh, in_specs, "in_specs")
    blocks = [block_aval(core.get_aval(x), mesh, s, f"in_specs[{i}]")
              for i, (x, s) in enumerate(zip(leaves, in_specs, strict=True))]
    if check_vma:
        blocks = [b.update(vma=mentioned(mesh, s)) for b, s in zip(blocks, in_specs,
                                                                 strict=True)]
    out_specs = []

    def body_fun(*blocks):
        outs = flat_fun(*blocks)
        out_specs[:] = out_specs_of(store.out_tree)
        _check_specs(mesh, out_specs, "out_specs")
        if not check_vma:
            return outs
        _check_replication(fun or flat_fun, [core.get_aval(o) for o in outs], mesh, out_specs)
        return [_vary_as_split(o, s, mesh) for o, s in zip(outs, out_specs, strict=True)]
    with manual_axes(dict(mesh.shape)), core.vma_scope(vma_axes(mesh, check_vma)):
        body = trace_flat(body_fun, blocks)
    body, consts = const_free(body)
    specs_in = (PartitionSpec(),) * len(consts) + tuple(in_specs)
    return shard_map_p.bind(*consts, *leaves, jaxpr=body, mesh=mesh, in_specs=specs_in,
                            out_specs=tuple(out_specs), check_vma=check_vma)


def shard_map(f=None, /, *, out_specs, in_specs=None, mesh=None, axis_names=frozenset(),
              check_vma=True, check_rep=None):
    """Map f over the blocks of its arguments, one per device of the mesh; see JAX's
    shard_map.  in_specs=None infers each argument's spec from its sharding."""
    if f is None:
        return lambda g: shard_map(g, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                   axis_names=axis_names, check_vma=check_vma,
                                   check_rep=check_rep)
    if not callable(f):
        raise TypeError(f"shard_map requires a callable for its first argument, got {f!r}")
    check = check_vma if check_rep is None else check_rep

    @functools.wraps(f)
    def mapped(*args):
        m = _resolve_mesh(mesh)
        if axis_names and set(axis_names) != set(m.axis_names):
            raise NotImplementedError(f"shard_map over some mesh axes only (axis_names="
                                      f"{set(axis_names)} of {m.axis_names}) is not "
                                      f"supported yet: every mesh axis is manual")
        leaves, in_tree = flatten_args(args)
        specs = _inferred_specs(leaves, m) if in_specs is None else \
            _leaf_specs(in_specs, tuple(args), "in_specs")
        flat_fun, store = flatten_fun(f, in_tree)

        def out_specs_of(out_tree):
            return _leaf_specs(out_specs, tree_util.tree_unflatten(
                out_tree, [0] * out_tree.num_leaves), "out_specs")
        outs = shard_map_flat(flat_fun, store, leaves, m, specs, out_specs_of, check, f)
        return tree_util.tree_unflatten(store.out_tree, outs)
    return mapped


# --- pmap ---------------------------------------------------------------------------------

def _axis_spec(name, axis):
    return PartitionSpec() if axis is None else PartitionSpec(*([None] * axis + [name]))


def _drop_axis(x, axis):
    if axis is None:
        return x
    shape = core.get_aval(x).shape
    return reshape_p.bind(x, new_sizes=shape[:axis] + shape[axis + 1:], dimensions=None)


def _add_axis(x, axis):
    if axis is None:
        return x
    shape = core.get_aval(x).shape
    return reshape_p.bind(x, new_sizes=shape[:axis] + (1,) + shape[axis:], dimensions=None)


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=()):
    """Map fun over an axis of its inputs with one device per element; see JAX's pmap.
    Collectives over axis_name act across the devices."""
    if not callable(fun):
        raise TypeError(f"pmap requires a callable, got {fun!r}")
    name = axis_name if axis_name is not None else "_pmap_axis"

    def run(*args):
        axes_per_arg = _normalize_in_axes(in_axes, args)
        leaves, in_tree = flatten_args(args)
        axes = []
        for spec, arg in zip(axes_per_arg, args, strict=True):
            axes.extend(_broadcast_prefix(spec, arg, "in_axes"))
        names = [f"args[{i}]" for i in range(len(leaves))]
        size = _consistent_size(_check_axes(leaves, axes, names), axis_size)
        axes = [None if a is None else a % core.get_aval(x).ndim
                for a, x in zip(axes, leaves, strict=True)]
        mesh = _pmap_mesh(size, devices, name)
        flat_fun, store = flatten_fun(fun, in_tree)
        out_axes_list = []

        def body(*blocks):
            outs = flat_fun(*[_drop_axis(b, a) for b, a in zip(blocks, axes, strict=True)])
            out_tree = store.out_tree
            out_axes_list[:] = [None if a is None else a % (core.get_aval(o).ndim + 1)
                                for a, o in zip(_broadcast_prefix(
                                    out_axes, tree_util.tree_unflatten(out_tree, outs),
                                    "out_axes"), outs, strict=True)]
            return [_add_axis(o, a) for o, a in zip(outs, out_axes_list, strict=True)]

        outs = shard_map_flat(body, store, leaves, mesh,
                              [_axis_spec(name, a) for a in axes],
                              lambda out_tree: [_axis_spec(name, a) for a in out_axes_list],
                              check_vma=False)
        return tree_util.tree_unflatten(store.out_tree, outs)
    compiled = jit(run, static_argnums=static_broadcasted_argnums,
                   donate_argnums=donate_argnums)
    return functools.wraps(fun)(compiled)


def _pmap_mesh(size, devices, name):
    available = list(xla_backend.devices() if devices is None else devices)
    if size > len(available):
        raise ValueError(f"compiling computation that requires {size} logical devices, but "
                         f"only {len(available)} XLA devices are available (num_replicas="
                         f"{size})")
    grid = np.empty(size, dtype=object)
    grid[:] = available[:size]
    return Mesh(grid, (name,))
