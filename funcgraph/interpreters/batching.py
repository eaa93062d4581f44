"""Batching: the vmap interpreter.

A BatchTracer holds a value whose dimension `batch_dim` is the batch axis (or
None when the value is the same for every lane).
batching_rules[prim](axis_data, args, dims, **params) -> (out, out_dim) (lists of each
for multiple results), where `axis_data` is the vmap's AxisData (size, name), args are
values of the parent level and dims their batch dimensions.  Rules move batch dimensions only when they must: an
unbatched operand stays unbatched wherever the primitive allows it."""
import contextlib
import contextvars

from funcgraph import core
from funcgraph.core import Tracer

batching_rules = {}

# Collectives over a named axis: rule(axis_data, args, dims, **params) -> (out, out_dim),
# called by the BatchTrace whose axis name is among params["axis_name"].
collective_rules = {}


class AxisData:
    """The mapped axis of one vmap: its size, (optional) name, and the mesh axis (or
    tuple of axes) that splits it in sharding constraints (vmap's spmd_axis_name)."""
    __slots__ = ("size", "name", "spmd_axis_name")

    def __init__(self, size, name=None, spmd_axis_name=None):
        self.size = size
        self.name = name
        self.spmd_axis_name = spmd_axis_name

    @property
    def spmd_name(self):
        """JAX's name of spmd_axis_name."""
        return self.spmd_axis_name

    @property
    def explicit_mesh_axis(self):
        return None

    def __repr__(self):
        return f"AxisData(size={self.size}, name={self.name!r})"


class BatchTracer(Tracer):
    __slots__ = ("val", "batch_dim")

    def __init__(self, trace, val, batch_dim):
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim

    @property
    def aval(self):
        aval = core.get_aval(self.val)
        if self.batch_dim is None:
            return aval
        shape = aval.shape[:self.batch_dim] + aval.shape[self.batch_dim + 1:]
        return aval.update(shape=shape)


class BatchTrace(core.Trace):
    description = "vmap"

    def __init__(self, parent, axis_size, axis_name=None, spmd_axis_name=None):
        super().__init__(parent)
        self.axis = AxisData(axis_size, axis_name, spmd_axis_name)

    def lift(self, x):
        if type(x) is BatchTracer and x._trace is self:
            return x.val, x.batch_dim
        if isinstance(x, Tracer) and not x._trace.alive:
            raise core.leaked_tracer_error(x)
        return x, None

    def process_primitive(self, prim, args, params):
        axis_name = params.get("axis_name") if prim in collective_rules else None
        if axis_name is not None and self._names_me(axis_name):
            vals, dims = self._lift_all(args)
            with core.set_trace(self.parent):
                out, out_dim = collective_rules[prim](self.axis, vals, dims, **params)
            return self._wrap(prim, out, out_dim)
        vals, dims = self._lift_all(args)
        if all(d is None for d in dims):
            with core.set_trace(self.parent):
                return prim.bind(*vals, **params)
        rule = batching_rules.get(prim)
        if rule is None:
            raise core.missing_rule(prim, "batching (vmap)")
        with core.set_trace(self.parent):
            out, out_dim = rule(self.axis, vals, dims, **params)
        return self._wrap(prim, out, out_dim)

    def _names_me(self, axis_name):
        names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
        return self.axis.name is not None and self.axis.name in names

    def _lift_all(self, args):
        vals, dims = [], []
        for a in args:
            v, d = self.lift(a)
            vals.append(v)
            dims.append(d)
        return vals, dims

    def _wrap(self, prim, out, out_dim):
        if prim.multiple_results:
            return [o if d is None else BatchTracer(self, o, d)
                    for o, d in core.safe_zip(out, out_dim)]
        return out if out_dim is None else BatchTracer(self, out, out_dim)


def batch_flat(fun, args, in_dims, axis_size, axis_name=None, spmd_axis_name=None):
    """Run fun(*flat args) with the given batch dims (None: unbatched).
    Returns (outputs, their batch dims), None for outputs that do not depend on the batch."""
    trace = BatchTrace(core.current.trace, axis_size, axis_name, spmd_axis_name)
    ins = [a if d is None else BatchTracer(trace, a, d) for a, d in core.safe_zip(args, in_dims)]
    with core.set_trace(trace):
        outs = fun(*ins)
    vals, dims = trace._lift_all(outs)
    trace.alive = False
    return vals, dims


# The mesh axes of the shard_map bodies being traced: {name: AxisData} (per thread).
_manual_axes = contextvars.ContextVar("manual_axes", default={})


@contextlib.contextmanager
def manual_axes(sizes):
    """Name the axes {name: size} of a shard_map body while it is traced, for
    collectives (all_gather, axis_size, ...) to find."""
    token = _manual_axes.set({**_manual_axes.get(),
                              **{n: AxisData(s, n) for n, s in sizes.items()}})
    try:
        yield
    finally:
        _manual_axes.reset(token)


def manual_axes_key():
    """The mesh axes named while a shard_map body is traced and those whose variance it
    tracks (check_vma), hashable: what a trace that binds collectives depends on besides
    its arguments."""
    return tuple((n, a.size) for n, a in _manual_axes.get().items()), core.current.vma_axes


def manual_axis_names():
    """The mesh axes named while a shard_map body is traced."""
    return tuple(_manual_axes.get())


def find_axis(name):
    """The AxisData of the innermost enclosing vmap named `name`, else of the mesh axis
    of an enclosing shard_map (NameError if none)."""
    trace = core.current.trace
    while trace is not None:
        if isinstance(trace, BatchTrace) and trace.axis.name == name:
            return trace.axis
        trace = trace.parent
    manual = _manual_axes.get().get(name)
    if manual is not None:
        return manual
    raise NameError(f"unbound axis name: {name!r}. Collectives (psum, pmean, all_gather, "
                    f"axis_index, ...) need an enclosing vmap(..., axis_name={name!r}), or "
                    f"shard_map or pmap over a mesh axis of that name")
