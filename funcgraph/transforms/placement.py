"""Where a jitted program runs and how its arguments and results are laid out.

jit gathers, per argument leaf, the sharding the user gave (in_shardings) or, failing
that, the one a committed argument already has; per output leaf, out_shardings.  The
devices of those shardings are the program's devices (the mesh's, in its order, or
the one device committed arguments live on).  Lowering annotates @main with them as
Shardy shardings (arguments nobody placed are replicated), XLA's SPMD partitioner
propagates them through the program and partitions it, and the outputs nobody placed
take the layouts XLA chose, named over the mesh as a PartitionSpec when one fits.
"""
from funcgraph import backend, tree_util
from funcgraph.array import Array, default_device
from funcgraph.backend import spmd
from funcgraph.sharding import (
    NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding, TiledSharding, resolve,
    sharding_from_blocks)


class Placement:
    """The devices of a program (None: the default device, unless the sharding
    constraints inside name a mesh) and the shardings of its inputs (after the consts)
    and outputs, None where unspecified.  Lowering calls `annotations`, which also
    settles `arg_shardings`: the layout every @main argument is handed over in."""

    def __init__(self, devices, in_shardings, out_shardings):
        self.devices = devices
        self.in_shardings = list(in_shardings)
        self.out_shardings = list(out_shardings)
        self.mesh = None
        self.arg_shardings = None
        # (sharding, rank) of the input whose layout outputs laid out alike reuse (jax
        # does when the arguments carry a mesh: committed ones), or None.
        self.original = None

    def annotations(self, module, in_avals, out_avals):
        n_consts = len(in_avals) - len(self.in_shardings)
        ins = [None] * n_consts + self.in_shardings
        for s in ins + self.out_shardings:
            if isinstance(s, NamedSharding):
                module.mesh_symbol(s.mesh)
        no_attrs = ([{}] * len(in_avals), [{}] * len(out_avals))
        if not module.meshes:
            if module.devices is not None:
                self.arg_shardings = [SingleDeviceSharding(module.devices[0])] * len(in_avals)
            return no_attrs
        self.mesh = next(iter(module.meshes))
        replicated = NamedSharding(self.mesh, PartitionSpec())
        self.arg_shardings = [s if isinstance(s, NamedSharding) else replicated for s in ins]
        arg_attrs = [{"sdy.sharding": module.sharding_attr(s, a)}
                     for s, a in zip(self.arg_shardings, in_avals, strict=True)]
        result_attrs = [{"sdy.sharding": module.sharding_attr(s, a)}
                        if isinstance(s, NamedSharding) else {}
                        for s, a in zip(self.out_shardings, out_avals, strict=True)]
        return arg_attrs, result_attrs


def unplaced(n_in, n_out):
    return Placement(None, [None] * n_in, [None] * n_out)


def compile_placed(module, placement, out_avals, options=()):
    """(executable, output shardings, result handlers) of a module over its devices
    (options: XLA options as sorted (name, value) pairs)."""
    devices = module.devices
    in_runtime = [s._backend_sharding() for s in placement.arg_shardings]
    given = placement.out_shardings
    executable = spmd.compile_spmd(module.text, devices, in_runtime, out_avals,
                                   [s is None for s in given], module.host_callbacks,
                                   module.ordered, options)
    outs = list(given)
    runtime = [None] * len(given)
    if placement.mesh is None:
        outs = [s or SingleDeviceSharding(devices[0]) for s in given]
    elif any(s is None for s in given):
        layouts = executable.output_layouts()
        for i, (s, layout) in enumerate(zip(given, layouts, strict=True)):
            if s is not None:
                continue
            if layout.partition is not None:
                # only one device holds it (a host callback's result): it lives there
                outs[i] = SingleDeviceSharding(devices[layout.partition])
                runtime[i] = layout.partition
                continue
            outs[i] = sharding_from_blocks(placement.mesh, layout.tiles, layout.blocks,
                                           *(placement.original or (None, None)))
            if isinstance(outs[i], TiledSharding):
                outs[i]._runtime = layout.runtime
    handlers = executable.result_handlers(
        [s._backend_sharding() if r is None else r for s, r in zip(outs, runtime, strict=True)])
    return executable, outs, handlers


# --- from jit's options and arguments to a Placement ------------------------------------

def _is_spec_leaf(x):
    return x is None or isinstance(x, (Sharding, PartitionSpec))


def leaf_shardings(spec, tree_value, what):
    """One Sharding (or None) per leaf of tree_value, from `spec`: a sharding for all of
    them, or a tree prefix of tree_value holding shardings and Nones."""
    if isinstance(spec, list):
        spec = tuple(spec)
    return [None if s is None else resolve(s, what)
            for s in tree_util.prefix_leaves(spec, tree_value, _is_spec_leaf, f"jit {what}")]


def committed_shardings(leaves):
    return tuple(x._sharding if type(x) is Array else None for x in leaves)


def argument_shardings(given, committed, avals, names):
    """Per leaf: the sharding given in in_shardings, else the committed one.  A
    committed argument laid out otherwise than in_shardings says is an error, as in
    jax."""
    out = []
    for s, c, aval, name in zip(given, committed, avals, names, strict=True):
        if s is None:
            out.append(c)
            continue
        if c is not None and not c.is_equivalent_to(s, aval.ndim):
            raise ValueError(f"Sharding passed to jit does not match the sharding on the "
                             f"respective arg. Got jit sharding: {s},\narg sharding: {c} for "
                             f"arg {name} of type {aval.str_short()}")
        out.append(s)
    return out


def program_devices(shardings):
    """The devices a program with these argument/result shardings runs on (None: the
    default device).  They must agree, as in jax."""
    spread = [s for s in shardings if s is not None and not isinstance(s, SingleDeviceSharding)]
    singles = {s._device for s in shardings if isinstance(s, SingleDeviceSharding)}
    if spread:
        devices = spread[0]._device_assignment
        for s in spread[1:]:
            if set(s._device_assignment) != set(devices):
                raise _incompatible(shardings)
        if singles and (len(devices) > 1 or singles != {devices[0]}):
            raise _incompatible(shardings)
        return tuple(devices)
    if len(singles) > 1:
        raise _incompatible(shardings)
    if singles:
        return (singles.pop(),)
    device = default_device()
    return None if device == backend.local_devices()[0] else (device,)


def _incompatible(shardings):
    listed = "\n".join(f"  {s}" for s in shardings if s is not None)
    return ValueError(f"Received incompatible devices for jitted computation. The arguments "
                      f"and results are placed on different sets of devices:\n{listed}\n"
                      f"Put them on one device or one mesh (fg.device_put(x, sharding)).")


def make_placement(in_given, committed, avals, names, out_given):
    """The Placement of a jitted call, or None when it runs on the default device
    with nothing placed."""
    ins = argument_shardings(in_given, committed, avals, names)
    devices = program_devices(ins + list(out_given))
    if devices is None and all(s is None for s in ins + list(out_given)):
        return None
    placement = Placement(devices, ins, out_given)
    if any(isinstance(c, NamedSharding) for c in committed):
        placement.original = next((s, a.ndim) for s, a in zip(ins, avals, strict=True)
                                  if isinstance(s, NamedSharding))
    return placement
