"""funcgraph.Array: a concrete array over a host (NumPy) value and/or a device buffer.

Eager CPU work keeps the NumPy value; jitted calls produce device buffers.
Each side is made from the other on first use and kept.  Operators, indexing
and methods are attached by funcgraph.numpy (the same ones tracers get).

An Array placed explicitly (device_put to a device or sharding, or made by a program
over several devices) is committed: `_sharding` says where its buffer lives, and jit
runs where its committed arguments are.  An uncommitted one (`_sharding` None) lives
on the default device, or only on the host.
"""
import numpy as np

from funcgraph import backend, core, dtypes
from funcgraph.backend import platforms, spmd
from funcgraph.config import config
from funcgraph.sharding import NamedSharding, SingleDeviceSharding


class _ArrayType(type):
    """Makes `isinstance(x, Array)` true for traced values too, as `isinstance(x,
    jax.Array)` is inside jit, grad and vmap.  An Array instance never reaches this
    (isinstance answers `type(x) is cls` first), and funcgraph's own code tests for a
    concrete array with `type(x) is Array`."""

    def __instancecheck__(cls, instance):
        return isinstance(instance, core.Tracer) or type.__instancecheck__(cls, instance)


class Array(metaclass=_ArrayType):
    # funcgraph/_cdispatch.c makes Arrays slot by slot, as __init__ does: a slot added
    # here must be set there too (tests/test_fast_dispatch.py fails until it is).
    __slots__ = ("_np", "_buf", "aval", "_deleted", "_sharding", "__weakref__")
    __array_priority__ = 100

    def __init__(self, value, aval, buf=None, sharding=None):
        self._np = value
        self._buf = buf
        self.aval = aval
        self._deleted = False
        self._sharding = sharding

    @classmethod
    def from_buffer(cls, buf, aval):
        return cls(None, aval, buf)

    # --- the two representations ---
    @property
    def _value(self):
        value = self._np
        if value is None:
            self._check_alive()
            value = backend.to_numpy(self._buf)
            if isinstance(self.aval.dtype, dtypes.ExtendedDType):
                value = dtypes.host_value(value, self.aval.dtype)
            self._np = value
        return value

    def _device_buffer(self, device=None):
        self._check_alive()
        buf = self._buf
        if buf is None:
            value = self._np
            if isinstance(self.aval.dtype, dtypes.ExtendedDType):
                value = dtypes.physical_value(value, self.aval.dtype)
            buf = self._buf = backend.device_put(value, device or default_device())
        return buf

    def _check_alive(self):
        if self._deleted:
            dims = ",".join(map(str, self.aval.shape))
            raise RuntimeError(f"Array has been deleted with shape={self.aval.dtype.name}"
                               f"[{dims}].")

    def delete(self):
        self._deleted = True
        self._np = None
        self._buf = None

    def is_deleted(self):
        return self._deleted

    def unsafe_buffer_pointer(self):
        """The address of the array's device memory (its buffer is made if the array
        lives on the host only); a donated input's output may reuse it."""
        return backend.buffer_pointer(self._device_buffer())

    # --- metadata ---
    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    @property
    def weak_type(self):
        return self.aval.weak_type

    @property
    def ndim(self):
        return len(self.aval.shape)

    @property
    def size(self):
        return self.aval.size

    @property
    def nbytes(self):
        return self.aval.size * self.aval.dtype.itemsize

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object (a 0-d array)")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))

    # --- conversion to Python and NumPy ---
    def __array__(self, dtype=None, copy=None):
        """The value as NumPy: a read-only view (Arrays are immutable), or a writable copy
        when a dtype change or copy=True asks for one."""
        if isinstance(self.aval.dtype, dtypes.ExtendedDType):
            raise TypeError(f"JAX array with PRNGKey dtype cannot be converted to a NumPy "
                            f"array. Use random.key_data(arr) if you wish to extract "
                            f"the underlying integer array.")
        value = np.asarray(self._value)
        if dtype is not None and value.dtype != dtype:
            return value.astype(dtype)
        if copy:
            return value.copy()
        view = value.view()
        view.flags.writeable = False
        return view

    def __dlpack__(self, *args, **kwargs):
        return np.asarray(self._value).__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return np.asarray(self._value).__dlpack_device__()

    def _scalar(self, kind):
        if self.aval.size != 1:
            raise TypeError(f"only arrays of one element can be converted to Python "
                            f"scalars ({kind}); this one has shape {self.aval.shape}")
        return np.asarray(self._value).reshape(())

    def __bool__(self):
        # NumPy's rule, as jax: ValueError for more than one element or none.
        return bool(np.asarray(self._value))

    def __int__(self):
        return int(self._scalar("int"))

    def __float__(self):
        return float(self._scalar("float"))

    def __complex__(self):
        return complex(self._scalar("complex"))

    def __index__(self):
        if self.aval.shape or self.aval.dtype.kind not in "iub":
            raise TypeError(f"only integer scalar arrays can be used as an index, "
                            f"not {self.aval.str_short()}")
        return int(self._value)

    def item(self, *args):
        return np.asarray(self._value).item(*args)

    def tolist(self):
        return np.asarray(self._value).tolist()

    def __hash__(self):
        raise TypeError("unhashable type: funcgraph Array (use a tuple or a Python "
                        "scalar for a static argument)")

    # --- runtime ---
    def block_until_ready(self):
        if self._buf is not None:
            self._buf.block_until_ready()
        return self

    @property
    def sharding(self):
        if self._sharding is not None:
            return self._sharding
        if self._buf is not None:
            return SingleDeviceSharding(spmd.buffer_device(self._buf))
        return SingleDeviceSharding(default_device())

    @property
    def committed(self):
        return self._sharding is not None

    @property
    def device(self):
        sharding = self.sharding
        if not isinstance(sharding, SingleDeviceSharding):
            raise ValueError(f"Array.device is only defined for arrays on a single device; "
                             f"this one has sharding {sharding}: use .devices() or .sharding")
        return sharding._device

    def devices(self):
        return self.sharding.device_set

    @property
    def is_fully_replicated(self):
        return self.sharding.is_fully_replicated

    @property
    def is_fully_addressable(self):
        return self.sharding.is_fully_addressable

    @property
    def addressable_shards(self):
        """One Shard per device: its block of the array (`index`, slices into the
        global array), the device, which copy of that block it is and its data."""
        buf = self._device_buffer()
        indices = self.sharding.devices_indices_map(self.aval.shape)
        seen = {}
        shards = []
        for device, data in spmd.shard_buffers(buf):
            index = indices[device]
            key = tuple((s.start, s.stop) for s in index)
            replica = seen[key] = seen.get(key, -1) + 1
            aval = core.ShapedArray(tuple(data.shape), self.aval.dtype, self.aval.weak_type)
            shards.append(Shard(device, index, replica, Array(None, aval, data,
                                                               SingleDeviceSharding(device))))
        return shards

    def addressable_data(self, index):
        return self.addressable_shards[index].data

    @property
    def global_shards(self):
        return self.addressable_shards

    def copy(self):
        return Array(np.array(self._value), self.aval)

    def __repr__(self):
        if isinstance(self.aval.dtype, dtypes.ExtendedDType):
            return self._extended_repr()
        value = np.asarray(self._value)
        body = np.array2string(value, separator=", ", prefix="Array(")
        weak = ", weak_type=True" if self.aval.weak_type else ""
        return f"Array({body}, dtype={self.aval.dtype.name}{weak})"

    def __str__(self):
        if isinstance(self.aval.dtype, dtypes.ExtendedDType):
            return self._extended_repr()
        return str(np.asarray(self._value))

    def _extended_repr(self):
        """jax's text of a key array: its type, then the key data it overlays."""
        data = dtypes.physical_value(self._value, self.aval.dtype)
        return (f"Array({self.aval.shape}, dtype={self.aval.dtype.name}) overlaying:\n"
                f"{data}")

    def __format__(self, spec):
        if not self.aval.shape:
            return format(np.asarray(self._value).item(), spec)
        return format(str(self), spec)

    def __reduce__(self):
        return (_rebuild, (np.asarray(self._value), self.aval))


def _rebuild(value, aval):
    return Array(value, aval)


class Shard:
    """A block of a sharded Array on one device."""
    __slots__ = ("device", "index", "replica_id", "data")

    def __init__(self, device, index, replica_id, data):
        self.device = device
        self.index = index
        self.replica_id = replica_id
        self.data = data

    def __repr__(self):
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data})")


def default_device():
    """The device uncommitted arrays and programs use: config jax_default_device (a
    device or a platform name), else the backend's first device."""
    chosen = config.jax_default_device
    if chosen is None:
        return backend.local_devices()[0]
    if isinstance(chosen, str):
        return platforms.local_devices(chosen)[0]
    return chosen


def put_sharded(value, sharding):
    """A committed Array holding `value` (NumPy) laid out as `sharding`: each device
    gets its block."""
    value = core.canonical_numpy(np.asarray(value))
    aval = core.aval_of_numpy(value)
    return Array(value, aval, _buffer_for(value, sharding), sharding)


def _buffer_for(value, sharding):
    if isinstance(sharding, SingleDeviceSharding):
        return backend.device_put(value, sharding._device)
    # Each process puts only its own blocks (every process holds the same value).
    indices = sharding.addressable_devices_indices_map(value.shape)
    devices = list(indices)
    return spmd.put_pieces(value.shape, value.dtype, sharding._backend_sharding(),
                           [value[indices[d]] for d in devices], devices)


def reshard(array, sharding):
    """array committed to `sharding` (moved only when it lives elsewhere)."""
    if array._sharding == sharding:
        return array
    if array._buf is not None and isinstance(sharding, NamedSharding):
        buf = spmd.reshard(array._buf, sharding._backend_sharding())
        return Array(array._np, array.aval, buf, sharding)
    return Array(array._np, array.aval, _buffer_for(array._value, sharding), sharding)


def array_from_numpy(x, weak_type=False):
    x = core.canonical_numpy(x)
    return Array(x, core.ShapedArray(x.shape, x.dtype, weak_type))


def scalar_array(value, dtype, weak_type=False):
    """A concrete rank-0 Array (the constants rules bind: zeros, ones, fill values)."""
    return Array(np.array(value, dtype), core.scalar_aval(dtype, weak_type))
