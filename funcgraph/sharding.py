"""funcgraph.sharding: how an array is laid out over devices, with JAX's classes.

A `Mesh` is an n-d grid of devices with named axes; a `NamedSharding(mesh, P(...))`
says, per array dimension, which mesh axes split it (`None`: not split).  Every
sharding answers the same questions: which devices hold the array, which block of it
each device holds (`devices_indices_map`), and the shape of those blocks.  jit lowers
a NamedSharding to a Shardy annotation over its mesh (`sdy_text`), and XLA's SPMD
partitioner does the rest; the backend turns these objects into its runtime ones.
"""
import collections
import contextlib
import enum
import itertools
import math
import threading
import warnings

import numpy as np

from funcgraph import backend, core
from funcgraph.backend import spmd

__all__ = ["AbstractMesh", "AxisType", "Mesh", "NamedSharding", "PartitionSpec", "P", "Sharding",
           "SingleDeviceSharding", "get_abstract_mesh", "get_mesh", "make_mesh", "make_single_device_sharding",
           "set_mesh", "use_abstract_mesh"]


class AxisType(enum.Enum):
    """How jit treats a mesh axis.  funcgraph partitions every axis as `Auto` (XLA's
    propagation decides intermediate shardings); the type is kept for JAX's API."""
    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self):
        return self.name


class _AxisTypes:
    """What a mesh (concrete or abstract) answers about its axes' types."""

    @property
    def _name_to_type(self):
        return dict(zip(self.axis_names, self.axis_types, strict=True))

    def _axes_of_type(self, kind):
        return tuple(n for n, t in zip(self.axis_names, self.axis_types, strict=True) if t == kind)

    @property
    def auto_axes(self):
        return self._axes_of_type(AxisType.Auto)

    @property
    def explicit_axes(self):
        return self._axes_of_type(AxisType.Explicit)

    @property
    def manual_axes(self):
        return self._axes_of_type(AxisType.Manual)

    @property
    def are_all_axes_auto(self):
        return all(t == AxisType.Auto for t in self.axis_types)

    @property
    def are_all_axes_explicit(self):
        return all(t == AxisType.Explicit for t in self.axis_types)

    @property
    def are_all_axes_manual(self):
        return all(t == AxisType.Manual for t in self.axis_types)

    @property
    def _any_axis_auto(self):
        return AxisType.Auto in self.axis_types

    @property
    def _any_axis_explicit(self):
        return AxisType.Explicit in self.axis_types

    @property
    def _any_axis_manual(self):
        return AxisType.Manual in self.axis_types

    @property
    def shape_tuple(self):
        return tuple(zip(self.axis_names, self.axis_sizes, strict=True))

    @property
    def shape(self):
        return collections.OrderedDict(self.shape_tuple)

    @property
    def empty(self):
        return not self.axis_names


class Mesh(_AxisTypes):
    """An n-d array of devices with one name per axis."""

    def __init__(self, devices, axis_names, axis_types=None):
        devices = np.asarray(devices, dtype=object)
        axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if devices.ndim != len(axis_names):
            raise ValueError(f"Mesh requires the ndim of its first argument (`devices`) to "
                             f"equal the length of its second argument (`axis_names`), got "
                             f"devices.ndim == {devices.ndim} and len(axis_names) == "
                             f"{len(axis_names)}.")
        if len(set(axis_names)) != len(axis_names):
            raise ValueError(f"Mesh axis names must be unique, got {axis_names}")
        axis_types = (AxisType.Auto,) * len(axis_names) if axis_types is None else tuple(axis_types)
        if len(axis_types) != len(axis_names):
            raise ValueError(f"Number of axis names should match the number of axis_types. "
                             f"Got axis_names={axis_names} and axis_types={axis_types}")
        self.devices = devices
        self.axis_names = axis_names
        self.axis_types = axis_types
        self._flat_devices = tuple(devices.flat) if axis_names else ()
        self._key = (axis_names, axis_types, devices.shape, tuple(d.id for d in self._flat_devices))

    @property
    def axis_sizes(self):
        return self.devices.shape

    @property
    def size(self):
        return len(self._flat_devices)

    def __enter__(self):
        """jax's deprecated `with mesh:` (its legacy resource environment, which jit no
        longer reads for PartitionSpecs): a warning, and nothing else."""
        warnings.warn("`with mesh:` context manager has been deprecated. Please use `with "
                      "jax.set_mesh(mesh):` instead.", DeprecationWarning, stacklevel=2)
        return self

    def __exit__(self, *exc):
        return False

    @property
    def device_ids(self):
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def local_devices(self):
        return list(self._flat_devices)

    def __eq__(self, other):
        return isinstance(other, Mesh) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
                f"axis_types={self.axis_types})")

    def __str__(self):
        sizes = ", ".join(f"{n!r}: {s}" for n, s in self.shape_tuple)
        return f"Mesh({sizes}, axis_types={self.axis_types})"

    @property
    def abstract_mesh(self):
        return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types)

    def sdy_text(self, device_order):
        """The Shardy mesh attribute, with device ids when the mesh's order differs from
        the program's device order (`device_order`: its devices, partition by partition)."""
        axes = ", ".join(f'"{n}"={s}' for n, s in self.shape_tuple)
        position = {d: i for i, d in enumerate(device_order)}
        ids = [position[d] for d in self._flat_devices]
        if ids == list(range(len(ids))):
            return f"#sdy.mesh<[{axes}]>"
        return f"#sdy.mesh<[{axes}], device_ids=[{', '.join(map(str, ids))}]>"


class AbstractMesh(_AxisTypes):
    """A mesh's axis names, sizes and types without its devices (what tracing needs):
    `jax.typeof(x).sharding.mesh`, `get_abstract_mesh()`.  A NamedSharding over one is
    placed on the concrete mesh of the same shape that set_mesh holds."""

    def __init__(self, axis_sizes, axis_names, axis_types=None, *, abstract_device=None):
        self.axis_sizes = tuple(axis_sizes)
        self.axis_names = tuple(axis_names)
        if len(self.axis_sizes) != len(self.axis_names):
            raise ValueError(f"AbstractMesh: {len(self.axis_sizes)} axis sizes for "
                             f"{len(self.axis_names)} axis names")
        self.axis_types = ((AxisType.Auto,) * len(self.axis_names) if axis_types is None
                           else tuple(axis_types))

        self.abstract_device = abstract_device

    @property
    def size(self):
        return math.prod(self.axis_sizes)

    @property
    def abstract_mesh(self):
        return self

    def _no_devices(name):
        def missing(self):
            raise ValueError(f"{name} is not implemented for `jax.sharding.AbstractMesh`.")
        return property(missing)

    devices = _no_devices("devices")
    device_ids = _no_devices("device_ids")
    local_devices = _no_devices("local_devices")
    _flat_devices = _no_devices("_device_assignment")
    del _no_devices

    def __enter__(self):
        raise ValueError("AbstractMesh does not implement __enter__: use "
                         "jax.sharding.use_abstract_mesh(mesh)")

    def __exit__(self, *exc):
        raise ValueError("AbstractMesh does not implement __exit__")

    def update_axis_types(self, name_to_type):
        """This mesh with the types of some axes ({name: AxisType}) replaced."""
        return self.update(axis_types=tuple(name_to_type.get(n, t) for n, t in
                                            zip(self.axis_names, self.axis_types, strict=True)))

    def update(self, axis_sizes=None, axis_names=None, axis_types=None):
        return AbstractMesh(self.axis_sizes if axis_sizes is None else axis_sizes,
                            self.axis_names if axis_names is None else axis_names,
                            self.axis_types if axis_types is None else axis_types)

    def _key(self):
        return (self.axis_sizes, self.axis_names, self.axis_types)

    def __eq__(self, other):
        return isinstance(other, AbstractMesh) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        sizes = ", ".join(f"{n!r}: {s}" for n, s in self.shape_tuple) or "()"
        return f"AbstractMesh({sizes}, axis_types={self.axis_types})"


def get_abstract_mesh():
    """The AbstractMesh set by use_abstract_mesh, else that of the mesh set by set_mesh
    (empty when neither is)."""
    mesh = _mesh_state.abstract
    if mesh is None:
        mesh = get_mesh()
        mesh = AbstractMesh(mesh.axis_sizes, mesh.axis_names, mesh.axis_types)
    return mesh


class use_abstract_mesh(contextlib.AbstractContextManager):
    """`with use_abstract_mesh(abstract_mesh):` get_abstract_mesh() (and so the
    shardings jax.typeof reports) is abstract_mesh in the body."""

    def __init__(self, mesh):
        if not isinstance(mesh, AbstractMesh):
            raise ValueError(f"Expected mesh of type `jax.sharding.AbstractMesh`. Got "
                             f"{type(mesh)}")
        self.mesh = mesh

    def __enter__(self):
        self.previous = _mesh_state.abstract
        if self.previous is not None and not self.previous.empty and not self.mesh.empty \
                and self.previous.size != self.mesh.size:
            raise ValueError(f"use_abstract_mesh cannot change the size of the mesh: the "
                             f"current mesh {self.previous} has size {self.previous.size}, "
                             f"{self.mesh} has size {self.mesh.size}")
        _mesh_state.abstract = self.mesh
        return self.mesh

    def __exit__(self, *exc):
        _mesh_state.abstract = self.previous


class _Unconstrained:
    """PartitionSpec.UNCONSTRAINED: the partitioner may split this dimension as it likes."""
    __slots__ = ()

    def __repr__(self):
        return "UNCONSTRAINED"

    def __reduce__(self):
        return (_unconstrained, ())


def _unconstrained():
    return UNCONSTRAINED


UNCONSTRAINED = _Unconstrained()


class PartitionSpec:
    """Per array dimension: the mesh axis (or tuple of axes, major first) that splits it,
    or None.  Trailing dimensions not named are not split."""
    __slots__ = ("_partitions",)

    def __init__(self, *partitions):
        for p in partitions:
            if not (p is None or p is UNCONSTRAINED or isinstance(p, str)
                    or (isinstance(p, tuple) and all(isinstance(a, str) for a in p))):
                raise TypeError(f"PartitionSpec entries must be None, an axis name or a tuple "
                                f"of axis names, got {p!r}")
        self._partitions = tuple(partitions)

    def __getitem__(self, i):
        return self._partitions[i]

    def __len__(self):
        return len(self._partitions)

    def index(self, value):
        return self._partitions.index(value)

    def count(self, value):
        return self._partitions.count(value)

    def __add__(self, other):
        if not isinstance(other, (PartitionSpec, tuple)):
            return NotImplemented
        return PartitionSpec(*self._partitions, *other)

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return PartitionSpec(*other, *self._partitions)

    @property
    def unreduced(self):
        """jax's unreduced mesh axes (funcgraph has none)."""
        return frozenset()

    reduced = unreduced

    def __iter__(self):
        return iter(self._partitions)

    def __eq__(self, other):
        return isinstance(other, PartitionSpec) and self._partitions == other._partitions

    def __hash__(self):
        return hash(self._partitions)

    def __repr__(self):
        if len(self._partitions) == 1:
            return f"P({self._partitions[0]!r},)"
        return "P(" + ", ".join(map(repr, self._partitions)) + ")"

    def axes_of(self, dim):
        """The mesh axes splitting dimension `dim`, as a tuple."""
        if dim >= len(self._partitions) or self._partitions[dim] in (None, UNCONSTRAINED):
            return ()
        p = self._partitions[dim]
        return (p,) if isinstance(p, str) else p


PartitionSpec.UNCONSTRAINED = UNCONSTRAINED
P = PartitionSpec


class Sharding:
    """What every sharding answers (subclasses give `_device_assignment` and
    `devices_indices_map`)."""
    memory_kind = "device"

    @property
    def device_set(self):
        return set(self._device_assignment)

    @property
    def addressable_devices(self):
        """The devices of this process (all of them unless several processes share a
        mesh: funcgraph.distributed)."""
        here = spmd.process_index()
        return {d for d in self._device_assignment if d.process_index == here}

    @property
    def num_devices(self):
        return len(self._device_assignment)

    @property
    def is_fully_addressable(self):
        here = spmd.process_index()
        return all(d.process_index == here for d in self._device_assignment)

    def addressable_devices_indices_map(self, global_shape):
        here = spmd.process_index()
        return {d: index for d, index in self.devices_indices_map(global_shape).items()
                if d.process_index == here}

    def shard_shape(self, global_shape):
        index = next(iter(self.devices_indices_map(tuple(global_shape)).values()))
        return tuple(len(range(*s.indices(n))) for s, n in zip(index, global_shape, strict=True))

    def is_equivalent_to(self, other, ndim):
        """Same devices, each holding the same block of an array of rank ndim."""
        shape = (self.num_devices * other.num_devices,) * ndim  # divisible by any tiling
        return self._blocks(shape) == other._blocks(shape)

    def _blocks(self, shape):
        """{device: (start, stop) of its block along each dimension}."""
        return {d: tuple((s.start or 0, s.stop) for s in idx)
                for d, idx in self.devices_indices_map(shape).items()}


class SingleDeviceSharding(Sharding):
    """The whole array on one device."""

    def __init__(self, device, *, memory_kind=None):
        self._device = device
        self._device_assignment = (device,)

    def devices_indices_map(self, global_shape):
        return {self._device: (slice(None),) * len(global_shape)}

    @property
    def is_fully_replicated(self):
        return True

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and self._device == other._device

    def __hash__(self):
        return hash(("single", self._device))

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self.memory_kind})"

    def _backend_sharding(self):
        return spmd.single_device_sharding(self._device)


def make_single_device_sharding(device, *, memory_kind=None):
    """The SingleDeviceSharding of `device` (jax's constructor function)."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)


class NamedSharding(Sharding):
    """Blocks of an array over a Mesh, as a PartitionSpec names them."""

    def __init__(self, mesh, spec=PartitionSpec(), *, memory_kind=None):
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(f"NamedSharding expects a Mesh or an AbstractMesh, got {mesh!r}")
        if not isinstance(spec, PartitionSpec):
            raise TypeError(f"NamedSharding expects a PartitionSpec (P(...)), got {spec!r}")
        used = [a for dim in range(len(spec)) for a in spec.axes_of(dim)]
        unknown = [a for a in used if a not in mesh.axis_names]
        if unknown:
            raise ValueError(f"Resource axis: {unknown[0]} of {spec} is not found in mesh: "
                             f"{tuple(mesh.axis_names)}.")
        if len(set(used)) != len(used):
            repeated = next(a for a in used if used.count(a) > 1)
            raise ValueError(f"A single NamedSharding spec specification can map every mesh "
                             f"axis to at most one positional dimension, but {spec} has "
                             f"duplicate entries for `{repeated}`")
        self.mesh = mesh
        self.spec = spec
        if isinstance(mesh, Mesh):
            self._device_assignment = mesh._flat_devices

    def __getattr__(self, name):
        if name == "_device_assignment":  # over an AbstractMesh: no devices to name
            raise ValueError(f"{self} has an AbstractMesh, which has no devices: place it "
                             f"with funcgraph.set_mesh(mesh) and lax.with_sharding_constraint, "
                             f"or use NamedSharding(mesh, spec) over a concrete Mesh")
        raise AttributeError(f"'NamedSharding' object has no attribute '{name}'")

    @property
    def num_devices(self):
        return self.mesh.size

    def concrete(self, what):
        """This sharding over a concrete mesh: itself, or (over an AbstractMesh) the
        same spec over the mesh set by set_mesh, which must have the abstract mesh's
        axis names and sizes."""
        if isinstance(self.mesh, Mesh):
            return self
        mesh = get_mesh()
        if mesh.empty:
            raise ValueError(f"{what}: {self} is over an AbstractMesh; placing it needs the "
                             f"concrete mesh: run it under `with jax.set_mesh(mesh):`")
        if mesh.shape_tuple != self.mesh.shape_tuple:
            raise ValueError(f"{what}: {self} is over {self.mesh}, but the mesh set by "
                             f"set_mesh is {mesh}: their axis names and sizes differ")
        return NamedSharding(mesh, self.spec)

    def update(self, *, mesh=None, spec=None, memory_kind=None):
        """This sharding with the mesh and/or spec replaced."""
        del memory_kind
        return NamedSharding(self.mesh if mesh is None else mesh,
                             self.spec if spec is None else spec)

    def __eq__(self, other):
        return (isinstance(other, NamedSharding) and self.mesh == other.mesh
                and self.spec == other.spec)

    def __hash__(self):
        return hash((self.mesh, self.spec))

    def __repr__(self):
        return (f"NamedSharding(mesh={self.mesh}, spec={self.spec}, "
                f"memory_kind={self.memory_kind})")

    @property
    def is_fully_replicated(self):
        return self._tiles_used() == 1

    def _tiles_used(self):
        sizes = self.mesh.shape
        return math.prod(sizes[a] for d in range(len(self.spec)) for a in self.spec.axes_of(d))

    def tile_counts(self, ndim):
        """How many blocks each of the ndim dimensions is split into."""
        self._check_rank(ndim)
        sizes = self.mesh.shape
        return tuple(math.prod(sizes[a] for a in self.spec.axes_of(d)) for d in range(ndim))

    def _check_rank(self, ndim):
        if len(self.spec) > ndim:
            raise ValueError(f"One of pjit arguments with pytree key path  was given the "
                             f"sharding of {self}, which implies that the global size of its "
                             f"dimension {ndim} should be divisible by 1, but the array has "
                             f"only {ndim} dimension(s): the PartitionSpec {self.spec} is "
                             f"longer than the array's rank {ndim}")

    def block_coordinates(self, ndim):
        """Per device of the mesh (in its flat order): the block index along each dim."""
        names = self.mesh.axis_names
        out = []
        for coords in itertools.product(*map(range, self.mesh.axis_sizes)):
            at = dict(zip(names, coords, strict=True))
            block = []
            for d in range(ndim):
                index = 0
                for a in self.spec.axes_of(d):  # major to minor
                    index = index * self.mesh.shape[a] + at[a]
                block.append(index)
            out.append(tuple(block))
        return out

    def devices_indices_map(self, global_shape):
        global_shape = tuple(global_shape)
        tiles = self.tile_counts(len(global_shape))
        for d, (n, t) in enumerate(zip(global_shape, tiles, strict=True)):
            if n % t:
                raise ValueError(f"One of device_put args was given the sharding of {self}, "
                                 f"which implies that the global size of its dimension {d} "
                                 f"should be divisible by {t}, but it is equal to {n} (full "
                                 f"shape: {global_shape})")
        result = {}
        for device, block in zip(self.mesh._flat_devices,
                                 self.block_coordinates(len(global_shape)), strict=True):
            result[device] = tuple(
                slice(None) if t == 1 else slice(b * (n // t), (b + 1) * (n // t))
                for b, n, t in zip(block, global_shape, tiles, strict=True))
        return result

    def sdy_text(self, mesh_symbol, ndim, open_dims=False):
        """The Shardy sharding attribute of a rank-ndim value: `#sdy.sharding<@mesh,
        [{"x"}, {}]>` (every dimension closed: nothing but what the spec says), or with
        open_dims `[{"x", ?}, {?}]` (the partitioner may split dimensions further)."""
        self._check_rank(ndim)
        spec = self.spec
        dims = ", ".join("{" + ", ".join([f'"{a}"' for a in spec.axes_of(d)]
                                         + (["?"] if open_dims or d < len(spec)
                                            and spec[d] is UNCONSTRAINED else [])) + "}"
                         for d in range(ndim))
        return f"#sdy.sharding<@{mesh_symbol}, [{dims}]>"

    def _backend_sharding(self):
        return spmd.named_sharding(self.mesh._flat_devices, self.mesh.devices.shape,
                                      self.mesh.axis_names,
                                      tuple(None if p is UNCONSTRAINED else p
                                            for p in self.spec))


class TiledSharding(Sharding):
    """A layout XLA chose that no PartitionSpec over the mesh describes (kept as its
    device order and per-device blocks)."""

    def __init__(self, devices, tiles, blocks):
        self._device_assignment = tuple(devices)
        self._tiles = tuple(tiles)
        self._block_list = list(blocks)
        self._runtime = None  # the backend's sharding of the same layout, set by jit

    def devices_indices_map(self, global_shape):
        return {dev: tuple(slice(None) if t == 1 else slice(b * (n // t), (b + 1) * (n // t))
                           for b, n, t in zip(block, global_shape, self._tiles, strict=True))
                for dev, block in zip(self._device_assignment, self._block_list, strict=True)}

    @property
    def is_fully_replicated(self):
        return math.prod(self._tiles) == 1

    def __eq__(self, other):
        return (isinstance(other, TiledSharding) and self._device_assignment ==
                other._device_assignment and self._block_list == other._block_list)

    def __hash__(self):
        return hash((self._device_assignment, self._tiles))

    def __repr__(self):
        return f"TiledSharding(tiles={self._tiles}, devices={len(self._device_assignment)})"

    def _backend_sharding(self):
        return self._runtime


def sharding_from_blocks(mesh, tiles, blocks, original=None, original_ndim=None):
    """The sharding of an array of rank len(tiles) whose device i (of the mesh's flat
    order) holds block `blocks[i]`: `original` (an input's sharding, of an input of rank
    original_ndim) when it is the same layout of an array of the same rank, as jax
    reuses it, else a NamedSharding over the mesh without trailing Nones, else a
    TiledSharding.  Over a mesh with Explicit axes the spec names every dimension
    (P('x', None)), as jax's result types do."""
    ndim = len(tiles)
    c = original
    if c is not None and c.mesh == mesh and original_ndim == ndim and \
            c.tile_counts(ndim) == tuple(tiles) and c.block_coordinates(ndim) == blocks:
        return spelled_out(c, ndim)
    for spec in _specs_with_tiles(mesh, tiles):
        sharding = NamedSharding(mesh, spec)
        if sharding.block_coordinates(ndim) == blocks:
            return spelled_out(sharding, ndim)
    return TiledSharding(mesh._flat_devices, tiles, blocks)


def spelled_out(sharding, ndim):
    """sharding with its spec naming all ndim dimensions when its mesh has Explicit axes
    (jax's typed shardings do)."""
    spec = sharding.spec
    if len(spec) >= ndim or AxisType.Explicit not in sharding.mesh.axis_types:
        return sharding
    return NamedSharding(sharding.mesh, PartitionSpec(*spec, *[None] * (ndim - len(spec))))


def _specs_with_tiles(mesh, tiles):
    """Every PartitionSpec over the mesh splitting dimension d into tiles[d] blocks."""
    axes = [a for a, s in mesh.shape.items() if s > 1]

    def choices(t, free):
        if t == 1:
            yield ()
            return
        for r in range(1, len(free) + 1):
            for combo in itertools.permutations(free, r):
                if math.prod(mesh.shape[a] for a in combo) == t:
                    yield combo

    def search(d, free):
        if d == len(tiles):
            yield ()
            return
        for combo in choices(tiles[d], free):
            rest = [a for a in free if a not in combo]
            for tail in search(d + 1, rest):
                yield (combo,) + tail

    for parts in search(0, axes):
        entries = [None if not c else (c[0] if len(c) == 1 else c) for c in parts]
        while entries and entries[-1] is None:
            entries.pop()
        yield PartitionSpec(*entries)


# --- meshes ---------------------------------------------------------------------------

def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    """A Mesh of the given shape over `devices` (default: all), in device order; axis
    types default to Explicit, as in jax 0.10."""
    axis_shapes = tuple(axis_shapes)
    axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
    if len(axis_shapes) != len(axis_names):
        raise ValueError(f"Length of axis_shapes {axis_shapes} must match the length of "
                         f"axis_names {axis_names}")
    devices = list(backend.devices() if devices is None else devices)
    size = math.prod(axis_shapes)
    if size > len(devices):
        raise ValueError(f"Number of devices {len(devices)} must be >= the product of mesh "
                         f"shape {axis_shapes}")
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(axis_names)
    grid = np.empty(size, dtype=object)
    grid[:] = devices[:size]
    return Mesh(grid.reshape(axis_shapes), axis_names, axis_types)


class _MeshState(threading.local):
    mesh = None  # the concrete mesh of set_mesh's `with`
    abstract = None  # the AbstractMesh of use_abstract_mesh's `with`


_mesh_state = _MeshState()
_global_mesh = [None]


def get_mesh():
    """The mesh set by set_mesh (innermost `with`), or an empty Mesh."""
    mesh = _mesh_state.mesh or _global_mesh[0]
    return mesh if mesh is not None else Mesh(np.empty((), dtype=object), ())


class set_mesh(contextlib.AbstractContextManager):
    """`fg.set_mesh(mesh)` makes mesh the default for PartitionSpecs given to jit,
    device_put and with_sharding_constraint; as a `with` it does so in its body only."""

    def __init__(self, mesh):
        if mesh is not None and not isinstance(mesh, Mesh):
            raise TypeError(f"set_mesh expects a Mesh, got {mesh!r}")
        self.previous_global = _global_mesh[0]
        _global_mesh[0] = mesh
        self.mesh = mesh

    def __enter__(self):
        _global_mesh[0] = self.previous_global
        self.previous = _mesh_state.mesh
        _mesh_state.mesh = self.mesh
        return self.mesh

    def __exit__(self, *exc):
        _mesh_state.mesh = self.previous


def resolve(sharding, what):
    """A Sharding, or a PartitionSpec over the mesh set by set_mesh."""
    if isinstance(sharding, PartitionSpec):
        mesh = get_mesh()
        if mesh.empty:
            raise ValueError(f"{what}: a PartitionSpec {sharding} needs a mesh: use "
                             f"NamedSharding(mesh, {sharding}) or `with fg.set_mesh(mesh):`")
        return NamedSharding(mesh, sharding)
    if isinstance(sharding, NamedSharding):
        return sharding.concrete(what)
    if not isinstance(sharding, Sharding):
        raise TypeError(f"{what} expects a funcgraph.sharding.Sharding or PartitionSpec, got "
                        f"{sharding!r}")
    return sharding


def _type_sharding(aval):
    """ShapedArray.sharding: replicated over the context's abstract mesh."""
    return NamedSharding(get_abstract_mesh(), P(*(None,) * len(aval.shape)))


core.type_sharding = _type_sharding
