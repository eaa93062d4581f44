"""shard_map, smap and pmap: per-device programs over pytrees, with JAX's signatures.

shard_map traces its function once on the per-device blocks of its arguments (while
its manual mesh axes are named, so collectives find their sizes) and binds the
shard_map primitive.  With axis_names, only those mesh axes are manual and XLA
partitions the body over the others; a shard_map inside the body makes manual some
of the axes left automatic (the enclosing mesh and manual axes are per-thread context
while a body is traced).  smap is shard_map over one mesh axis with vmap-style axes.
pmap maps a function over a leading (or in_axes) axis with one device per element: a
jitted shard_map over a one-axis mesh whose body drops and re-adds the mapped axis, as
JAX's newer pmap is built."""
import contextvars
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


def _inferred_specs(leaves, mesh, manual):
    """in_specs left out: each argument's own spec over the manual axes when it is laid
    out over the mesh.  A traced argument (under jit) carries no sharding in funcgraph's
    types, where jax's explicit-sharding types would: that is jax's error for in_specs
    left out, rather than a guess."""
    if any(isinstance(x, core.Tracer) for x in leaves):
        raise TypeError(
            f"shard_map in_specs argument must be a pytree of PartitionSpec instances, but "
            f"it was None with traced arguments (under jit): funcgraph's types carry no "
            f"sharding to infer them from (axis_names={frozenset(manual)}); pass in_specs")
    return [_manual_part(x._sharding.spec, manual) if type(x) is Array and
            isinstance(x._sharding, NamedSharding) and x._sharding.mesh == mesh
            else PartitionSpec() for x in leaves]


def _manual_part(spec, manual):
    """spec with the automatic axes left out."""
    return PartitionSpec(*[tuple(a for a in spec.axes_of(d) if a in manual) or None
                           for d in range(len(spec))])


# (mesh, its manual axes) of the shard_map bodies being traced in this thread.
_enclosing = contextvars.ContextVar("shard_map_enclosing", default=(None, frozenset()))


def _resolve_mesh(mesh):
    """The mesh given, else an enclosing shard_map's, else the one set by set_mesh."""
    outer, _ = _enclosing.get()
    if mesh is None:
        mesh = get_mesh() if outer is None else outer
    elif outer is not None and mesh != outer:
        raise ValueError(f"The context mesh {outer} should match the mesh passed to "
                         f"shard_map {mesh}")
    if not isinstance(mesh, Mesh) or mesh.empty:
        raise ValueError("shard_map requires a `mesh`: pass mesh=... or call it under "
                         "`with fg.set_mesh(mesh):`")
    return mesh


def _manual_axis_names(mesh, axis_names):
    """The axes this shard_map makes manual, in mesh order: axis_names, or every axis
    an enclosing shard_map left automatic."""
    if not isinstance(axis_names, (set, frozenset)):
        raise TypeError(f"`axis_names` argument of shard_map should be of type `frozenset` "
                        f"or `set`. Got type: {type(axis_names)}")
    _, manual = _enclosing.get()
    free = frozenset(mesh.axis_names) - manual
    names = frozenset(axis_names) or free
    if not names <= frozenset(mesh.axis_names):
        raise ValueError(f"shard_map requires axis_names={names} to be a subset of "
                         f"mesh.axis_names={frozenset(mesh.axis_names)}")
    if names & manual:
        raise ValueError(f"shard_map axis_names={set(names)} names mesh axes "
                         f"{set(names & manual)} that an enclosing shard_map already made "
                         f"manual; a nested shard_map makes manual only axes it left "
                         f"automatic ({set(free)})")
    if not names:
        raise ValueError(f"shard_map inside a shard_map over every axis of the mesh "
                         f"{mesh}: no automatic axis is left to make manual")
    return tuple(a for a in mesh.axis_names if a in names)


def _check_specs(specs, manual, what):
    """jax's error for specs that split over an axis that is not manual."""
    refs = [f"  {what}{tree_util.keystr(path)} refers to {a!r}"
            for path, s in tree_util.tree_flatten_with_path(specs, is_leaf=_is_spec)[0]
            if _is_spec(s) for d in range(len(s)) for a in s.axes_of(d) if a not in manual]
    if refs:
        raise ValueError(f"shard_map {what} argument must refer to an axis marked as manual "
                         f"({frozenset(manual)}), but:\n\n" + "\n\n".join(refs) +
                         f"\n\nCheck the {what} values passed to shard_map.")


def _vary_as_split(out, spec, mesh):
    """An output marked (pvary) as varying along every axis its spec splits over, as
    its blocks do."""
    axes = mentioned(mesh, spec) - core.get_aval(out).vma
    if not axes:
        return out
    return pvary_p.bind(as_operand(out), axis_name=core.in_mesh_order(axes, mesh.axis_names))


def _check_replication(fun, out_avals, mesh, manual, out_specs):
    """jax's check_vma error: an out_spec that leaves out a manual axis along which the
    output varies."""
    for i, (aval, spec) in enumerate(zip(out_avals, out_specs, strict=True)):
        missing = [a for a in unmentioned(mesh, spec, manual) if a in aval.vma]
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
                   fun=None, manual=None):
    """Run flat_fun(*blocks) on every device, manual over the mesh axes `manual` (all
    when None); `out_specs_of(out_tree)` gives one spec per output leaf once the function
    has been traced.  Returns the output leaves."""
    manual = tuple(mesh.axis_names) if manual is None else manual
    leaves = [as_operand(x) for x in leaves]
    blocks = [block_aval(core.get_aval(x), mesh, s, f"in_specs[{i}]")
              for i, (x, s) in enumerate(zip(leaves, in_specs, strict=True))]
    if check_vma:  # a block varies along the axes its spec splits over (and the
        # enclosing shard_map's, for a nested one)
        blocks = [b.update(vma=b.vma | mentioned(mesh, s))
                  for b, s in zip(blocks, in_specs, strict=True)]
    out_specs = []

    def body_fun(*blocks):
        outs = flat_fun(*blocks)
        out_specs[:] = out_specs_of(store.out_tree)
        if not check_vma:
            return outs
        _check_replication(fun or flat_fun, [core.get_aval(o) for o in outs], mesh, manual,
                           out_specs)
        return [_vary_as_split(o, s, mesh) for o, s in zip(outs, out_specs, strict=True)]
    _, outer_manual = _enclosing.get()
    token = _enclosing.set((mesh, outer_manual | frozenset(manual)))
    tracked = tuple(core.current.vma_axes) + vma_axes(manual, check_vma)
    try:
        with manual_axes({a: mesh.shape[a] for a in manual}), core.vma_scope(tracked):
            body = trace_flat(body_fun, blocks)
    finally:
        _enclosing.reset(token)
    body, consts = const_free(body)
    specs_in = (PartitionSpec(),) * len(consts) + tuple(in_specs)
    return shard_map_p.bind(*consts, *leaves, jaxpr=body, mesh=mesh, manual_axes=manual,
                            in_specs=specs_in, out_specs=tuple(out_specs),
                            check_vma=check_vma)


def shard_map(f=None, /, *, out_specs, in_specs=None, mesh=None, axis_names=frozenset(),
              check_vma=True, check_rep=None):
    """Map f over the blocks of its arguments, one per device of the mesh; see JAX's
    shard_map.  in_specs=None infers each argument's spec from its sharding.
    axis_names: the mesh axes that are manual (default: all, or inside another
    shard_map's body all those it left automatic); XLA partitions f over the others."""
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
        manual = _manual_axis_names(m, axis_names)
        if in_specs is not None:
            _check_specs(in_specs, manual, "in_specs")
        _check_specs(out_specs, manual, "out_specs")
        leaves, in_tree = flatten_args(args)
        specs = _inferred_specs(leaves, m, manual) if in_specs is None else \
            _leaf_specs(in_specs, tuple(args), "in_specs")
        flat_fun, store = flatten_fun(f, in_tree)

        def out_specs_of(out_tree):
            return _leaf_specs(out_specs, tree_util.tree_unflatten(
                out_tree, [0] * out_tree.num_leaves), "out_specs")
        outs = shard_map_flat(flat_fun, store, leaves, m, specs, out_specs_of, check, f,
                              manual)
        return tree_util.tree_unflatten(store.out_tree, outs)
    return mapped


# --- smap -------------------------------------------------------------------------------

class _Infer:
    """smap's in_axes left out: each argument's own layout over the axis."""

    def __repr__(self):
        return "Infer"


_INFER = _Infer()


def smap(f=None, /, *, in_axes=_INFER, out_axes, axis_name):
    """shard_map manual over the one mesh axis axis_name of the context mesh (the other
    axes stay automatic), with vmap-style axes: in_axes / out_axes say which array axis
    is split over it (None: not split); see JAX's smap."""
    if isinstance(axis_name, (list, tuple)):
        raise TypeError(f"smap axis_name should be a `str` or a `Hashable`, but got "
                        f"{axis_name}")
    if in_axes is not _INFER and in_axes is not None and not isinstance(in_axes, (int, tuple)):
        raise TypeError(f"smap in_axes must be an int, None, or a tuple of entries "
                        f"corresponding to the positional arguments passed to the "
                        f"function, but got {in_axes}.")
    if in_axes is not _INFER and not all(isinstance(a, int)
                                         for a in tree_util.tree_leaves(in_axes)):
        raise TypeError(f"smap in_axes must be an int, None, or (nested) "
                        f"container with those types as leaves, but got {in_axes}.")
    if not all(isinstance(a, int) for a in tree_util.tree_leaves(out_axes)):
        raise TypeError(f"smap out_axes must be an int, None, or (nested) container with "
                        f"those types as leaves, but got {out_axes}.")

    def specs(axes):
        return tree_util.tree_map(lambda a: _axis_spec(axis_name, a), axes,
                                  is_leaf=lambda a: a is None)
    wrap = shard_map(in_specs=None if in_axes is _INFER else specs(in_axes),
                     out_specs=specs(out_axes), axis_names={axis_name})
    return wrap if f is None else wrap(f)


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

    statics = (static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int) \
        else tuple(static_broadcasted_argnums)

    def run(*args, **kwargs):
        # static arguments reach fun as they are; keyword arguments map over axis 0
        static = {i % len(args) for i in statics} if args else set()
        dyn = [i for i in range(len(args)) if i not in static]
        if isinstance(in_axes, (tuple, list)) and static:
            axes_per_arg = [_normalize_in_axes(in_axes, args)[i] for i in dyn]
        else:
            axes_per_arg = _normalize_in_axes(in_axes, [args[i] for i in dyn])
        leaves, in_tree = flatten_args([args[i] for i in dyn], kwargs)
        axes = []
        for spec, i in zip(axes_per_arg, dyn, strict=True):
            axes.extend(_broadcast_prefix(spec, args[i], "in_axes"))
        axes.extend([0] * len(tree_util.tree_leaves(kwargs)))

        def with_statics(*dyn_args, **kw):
            full = list(args)
            for i, value in zip(dyn, dyn_args):
                full[i] = value
            return fun(*full, **kw)
        names = [f"args[{i}]" for i in range(len(leaves))]
        size = _consistent_size(_check_axes(leaves, axes, names), axis_size)
        axes = [None if a is None else a % core.get_aval(x).ndim
                for a, x in zip(axes, leaves, strict=True)]
        mesh = _pmap_mesh(size, devices, name)
        flat_fun, store = flatten_fun(with_statics, in_tree)
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
    return functools.wraps(fun, updated=())(compiled)  # (not the __dict__ of a jit(fun))


def _pmap_mesh(size, devices, name):
    available = list(xla_backend.devices() if devices is None else devices)
    if size > len(available):
        raise ValueError(f"compiling computation that requires {size} logical devices, but "
                         f"only {len(available)} XLA devices are available (num_replicas="
                         f"{size})")
    grid = np.empty(size, dtype=object)
    grid[:] = available[:size]
    return Mesh(grid, (name,))
