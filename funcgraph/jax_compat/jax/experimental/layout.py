"""`jax.experimental.layout`: the Layout and Format records (a device layout, and a
layout paired with a sharding).  funcgraph lets XLA choose every layout, so these are
descriptions that code written for jax can build and compare (flax maps shardings
through them); jit does not take layouts."""
from funcgraph.sharding import Sharding


class AutoLayout:
    """Layout.AUTO: let the compiler choose."""

    def __repr__(self):
        return "AUTO"


class Layout:
    """The order of an array's dimensions in memory (major to minor), with tiling."""
    __slots__ = ("major_to_minor", "tiling", "sub_byte_element_size_in_bits")

    AUTO = AutoLayout()

    def __init__(self, major_to_minor, tiling=None, sub_byte_element_size_in_bits=0):
        self.major_to_minor = tuple(major_to_minor)
        self.tiling = None if tiling is None else tuple(tuple(t) for t in tiling)
        self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

    def _key(self):
        return (self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits)

    def update(self, **kwargs):
        values = dict(zip(("major_to_minor", "tiling", "sub_byte_element_size_in_bits"),
                          self._key()))
        values.update(kwargs)
        return Layout(**values)

    def __eq__(self, other):
        return isinstance(other, Layout) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
                f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})")


class Format:
    """A layout (None, Layout.AUTO or a Layout) and a sharding (None or a Sharding)."""
    __slots__ = ("layout", "sharding")

    def __init__(self, layout=None, sharding=None):
        if isinstance(layout, Layout) and sharding is None:
            raise ValueError(
                f"Sharding has to be concrete when layout is of type {type(layout)}. "
                f"Please pass a `jax.sharding.NamedSharding` or "
                f"`jax.sharding.SingleDeviceSharding` to the sharding argument. Got "
                f"sharding {sharding}")
        if not isinstance(layout, (Layout, AutoLayout, type(None))):
            raise TypeError(f"Invalid value received for the layout argument. Expected "
                            f"values are `None`, `Layout.AUTO` or an instance of `Layout`. "
                            f"Got {layout} of type {type(layout)}")
        if not isinstance(sharding, (Sharding, type(None))):
            raise TypeError(f"Invalid value received for the sharding argument. Expected "
                            f"values are `None` or an instance of `jax.Sharding`. Got "
                            f"{sharding} of type {type(sharding)}")
        self.layout = layout
        self.sharding = sharding

    def __eq__(self, other):
        return isinstance(other, Format) and (self.layout, self.sharding) == \
            (other.layout, other.sharding)

    def __hash__(self):
        return hash((self.layout, self.sharding))

    def __repr__(self):
        return f"Format(layout={self.layout}, sharding={self.sharding})"


__all__ = ["Format", "Layout"]
