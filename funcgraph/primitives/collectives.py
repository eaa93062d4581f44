"""Collectives over named axes: psum, pmax, pmin, all_gather, reduce_scatter
(lax.psum_scatter), ppermute, all_to_all, axis_index.

Over a named vmap axis, each is handled by the vmap (BatchTrace) whose axis_name it
names, through `collective_rules`; a vmap of another name batches it like an
elementwise op.  Over the mesh axes of a shard_map body they stay in the jaxpr and
lower to StableHLO's collectives (all_reduce, all_gather, reduce_scatter,
collective_permute, all_to_all) whose replica groups are the devices that differ only
along the named mesh axes (`module.manual_mesh`).  Outside both they raise NameError,
as in JAX.  In a body traced with check_vma each also says, in `core.vma_rules`, along
which mesh axes its operand must vary and its result varies."""
import math

import numpy as np

from funcgraph import core, dtypes
from funcgraph.core import ShapedArray
from funcgraph.interpreters.batching import batching_rules, collective_rules
from funcgraph.interpreters.eval import direct_impls
from funcgraph.interpreters.ad_util import Zero, instantiate, is_zero
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.transpose import transpose_rules
from funcgraph.lowering import emit_manual_computation
from funcgraph.primitives.base import move_batch_dim, reduce_sum_p, reshape_p, transpose_p
from funcgraph.primitives.batching_helpers import batch_at
from funcgraph.primitives.elementwise import mul_p
from funcgraph.primitives.helpers import declare
from funcgraph.primitives.reductions import reduce_max_p, reduce_min_p
from funcgraph.primitives.structural import concatenate_p, iota_p, slice_p
from funcgraph.sharding import PartitionSpec


def _names(axis_name):
    return axis_name if isinstance(axis_name, tuple) else (axis_name,)


def _unbound(prim):
    def impl(*args, axis_name, **params):
        name = _names(axis_name)[0]
        raise NameError(f"unbound axis name: {name!r}. {prim} needs an enclosing "
                        f"vmap(..., axis_name={name!r}), or shard_map or pmap over a mesh "
                        f"axis of that name")
    return impl


def _manual_mesh(ctx, name, axis_name):
    """The mesh of the shard_map body being lowered, whose named axes must be manual."""
    mesh = ctx.module.manual_mesh
    missing = [n for n in _names(axis_name) if n not in ctx.module.manual_axes]
    if missing:
        raise NameError(f"unbound axis name: {missing[0]!r} in {name}: collectives must be "
                        f"inside vmap(..., axis_name=...) or shard_map over a mesh with "
                        f"that axis")
    return mesh


def _partition_grid(ctx, mesh):
    """The partition id (position in the program's device order) of each mesh device."""
    position = {d: i for i, d in enumerate(ctx.module.devices)}
    return np.array([position[d] for d in mesh._flat_devices]).reshape(mesh.devices.shape)


def replica_groups(ctx, mesh, names):
    """Partitions that differ only along the named axes, one group per row, ordered
    along the names (major first)."""
    grid = _partition_grid(ctx, mesh)
    axes = [mesh.axis_names.index(n) for n in names]
    others = [i for i in range(grid.ndim) if i not in axes]
    size = math.prod(grid.shape[a] for a in axes)
    return grid.transpose(others + axes).reshape(-1, size)


def _dense_i64(rows):
    rows = np.asarray(rows, np.int64)
    text = ", ".join("[" + ", ".join(str(int(v)) for v in row) + "]" for row in rows)
    return f"dense<[{text}]> : tensor<{rows.shape[0]}x{rows.shape[1]}xi64>"


def _group_attrs(ctx, name, axis_name):
    mesh = _manual_mesh(ctx, name, axis_name)
    return {"channel_handle": ctx.module.next_channel(),
            "replica_groups": _dense_i64(replica_groups(ctx, mesh, _names(axis_name))),
            "use_global_device_ids": "unit"}


def _rebind_rest(prim, out, axis_data, axis_name, **params):
    """After reducing this vmap's axis, reduce the other named axes further out."""
    rest = tuple(n for n in _names(axis_name) if n != axis_data.name)
    return prim.bind(out, axis_name=rest, **params) if rest else out


def _declare_collective(name, shape_rule, lowering):
    prim = declare(name, shape_rule, None, lowering)
    direct_impls[prim] = _unbound(name)
    return prim


def _linear_jvp(prim):
    """A collective is linear: its tangent is the collective of the tangent."""
    def jvp(primals, tangents, **params):
        out = prim.bind(primals[0], **params)
        t = tangents[0]
        return out, (t if is_zero(t) else prim.bind(t, **params))
    jvp_rules[prim] = jvp


def _same_dim_batch(prim):
    """Under a vmap of another name: the collective acts lane by lane."""
    def rule(axis_data, args, dims, **params):
        return prim.bind(args[0], **params), dims[0]
    return rule


# Their varying manual axes (shard_map's check_vma; see funcgraph.core): an operand is
# first made to vary along the axes a collective names (psum and psum_scatter refuse one
# that varies along only some); psum, pmax and pmin leave a value invariant along them,
# the others a value varying along them.

def _reducing_vma(vma, axes):
    return vma | axes, vma - axes


def _summing_vma(name):
    """psum and psum_scatter take operands varying along all the axes they name, or
    along none (marked then)."""
    def rule(vma, axes):
        if vma & axes and not axes <= vma:
            raise ValueError(
                f"lax.{name} can only accept axis_name which corresponds to one of "
                f"varying, unreduced, reduced or invarying state of the input. Got input "
                f"varying over {set(vma)}, axes: {set(axes)} and input state: "
                f"{{'invarying', 'varying'}}")
        return (_reducing_vma if name == "psum" else _varying_vma)(vma, axes)
    return rule


def _varying_vma(vma, axes):
    return vma | axes, vma | axes


def _marking_vma(vma, axes):
    return vma, vma | axes


# --- psum / pmax / pmin -------------------------------------------------------------

def _all_reduce_lowering(name, hlo_op):
    def lower(ctx, avals_in, avals_out, x, axis_name):
        if not _names(axis_name):
            return x
        region = ctx.scalar_region(avals_in[0].dtype, 2, hlo_op)
        return ctx.op("stablehlo.all_reduce", [x], avals_in, avals_out[0],
                      _group_attrs(ctx, name, axis_name), [region])
    return lower


def _reducing_collective(name, reduce_prim, unmapped, hlo_op):
    prim = _declare_collective(name, lambda x, axis_name: x, _all_reduce_lowering(name, hlo_op))

    def collective(axis_data, args, dims, axis_name):
        (x,), (d,) = args, dims
        if d is None:
            out = unmapped(x, axis_data.size)
        else:
            out = reduce_prim.bind(x, axes=(d,))
        return _rebind_rest(prim, out, axis_data, axis_name), None

    collective_rules[prim] = collective
    batching_rules[prim] = _same_dim_batch(prim)
    return prim


def _scaled(x, size):
    aval = core.get_aval(x)
    return mul_p.bind(x, np.array(size, aval.dtype))


psum_p = _reducing_collective("psum", reduce_sum_p, _scaled, "stablehlo.add")
_linear_jvp(psum_p)
core.vma_rules[psum_p] = _summing_vma("psum")


def _psum_transpose(ct, x, axis_name):
    """Over the mesh axes along which the operand varies (check_vma), psum's result is
    one invariant value whose cotangent every device already holds: pvary.  Otherwise
    psum is its own transpose (every lane's or device's output depends on every input);
    shard_map's transpose without check_vma scales the cotangents of outputs replicated
    over mesh axes so that this holds for them too."""
    if is_zero(ct):
        return [None]
    names, vma = _names(axis_name), x.aval.vma
    summed = tuple(n for n in names if n not in vma)
    marked = tuple(n for n in names if n in vma and n not in core.get_aval(ct).vma)
    if marked:
        ct = pvary_p.bind(ct, axis_name=marked)
    return [psum_p.bind(ct, axis_name=summed) if summed else ct]


transpose_rules[psum_p] = _psum_transpose

pmax_p = _reducing_collective("pmax", reduce_max_p, lambda x, size: x, "stablehlo.maximum")
pmin_p = _reducing_collective("pmin", reduce_min_p, lambda x, size: x, "stablehlo.minimum")
core.vma_rules[pmax_p] = _reducing_vma
core.vma_rules[pmin_p] = _reducing_vma


# --- all_gather ---------------------------------------------------------------------

def _all_gather_shape(x, axis_name, axis, tiled, axis_size):
    if not 0 <= axis <= x.ndim - (1 if tiled else 0):
        raise ValueError(f"all_gather: axis {axis} out of range for {x.str_short()}")
    if tiled:
        shape = x.shape[:axis] + (x.shape[axis] * axis_size,) + x.shape[axis + 1:]
    else:
        shape = x.shape[:axis] + (axis_size,) + x.shape[axis:]
    return ShapedArray(shape, x.dtype, x.weak_type)


def _tiled_shape(aval, axis, size):
    """aval with a size-1 dimension inserted at axis (the untiled form of a collective)."""
    return aval.update(shape=aval.shape[:axis] + (size,) + aval.shape[axis:])


def _all_gather_lowering(ctx, avals_in, avals_out, x, axis_name, axis, tiled, axis_size):
    aval = avals_in[0]
    if not tiled:
        one = _tiled_shape(aval, axis, 1)
        x = ctx.op("stablehlo.reshape", [x], [aval], one)
        aval = one
    attrs = {"all_gather_dim": f"{axis} : i64", **_group_attrs(ctx, "all_gather", axis_name)}
    return ctx.op("stablehlo.all_gather", [x], [aval], avals_out[0], attrs)


all_gather_p = _declare_collective("all_gather", _all_gather_shape, _all_gather_lowering)


def _all_gather_collective(axis_data, args, dims, axis_name, axis_size, tiled, **params):
    if len(_names(axis_name)) > 1:
        raise NotImplementedError("all_gather over several vmap axis names")
    (x,), (d,) = args, dims
    target = params["axis"]
    out = move_batch_dim(batch_at(x, d, axis_data.size), 0, target) if d is None else \
        move_batch_dim(x, d, target)
    if tiled:
        shape = core.get_aval(out).shape
        merged = shape[:target] + (shape[target] * shape[target + 1],) + shape[target + 2:]
        out = reshape_p.bind(out, new_sizes=merged, dimensions=None)
    return out, None


def _all_gather_batch(axis_data, args, dims, **params):
    (x,), (d,) = args, dims
    x = move_batch_dim(x, d, 0)
    shifted = dict(params, axis=params["axis"] + 1)
    return all_gather_p.bind(x, **shifted), 0


collective_rules[all_gather_p] = _all_gather_collective
batching_rules[all_gather_p] = _all_gather_batch


_linear_jvp(all_gather_p)
core.vma_rules[all_gather_p] = _varying_vma


def _all_gather_transpose(ct, x, axis_name, axis, tiled, axis_size):
    return [None if is_zero(ct) else reduce_scatter_p.bind(
        ct, axis_name=axis_name, scatter_dimension=axis, tiled=tiled, axis_size=axis_size)]


transpose_rules[all_gather_p] = _all_gather_transpose


# --- reduce_scatter (lax.psum_scatter) ---------------------------------------------

def _psum_scatter_shape(x, axis_name, scatter_dimension, tiled, axis_size):
    d = scatter_dimension
    if not 0 <= d < x.ndim:
        raise ValueError(f"psum_scatter: scatter_dimension {d} out of range for "
                         f"{x.str_short()}")
    n = x.shape[d]
    if tiled and n % axis_size:
        raise ValueError(f"psum_scatter: the scatter dimension of {x.str_short()} (size {n}) "
                         f"must be divisible by the axis size {axis_size}")
    if not tiled and n != axis_size:
        raise ValueError(f"psum_scatter: the scatter dimension of {x.str_short()} (size {n}) "
                         f"must equal the axis size {axis_size} (or pass tiled=True)")
    shape = x.shape[:d] + ((n // axis_size,) if tiled else ()) + x.shape[d + 1:]
    return ShapedArray(shape, x.dtype, x.weak_type)


def _psum_scatter_lowering(ctx, avals_in, avals_out, x, axis_name, scatter_dimension, tiled,
                           axis_size):
    aval = avals_in[0]
    d = scatter_dimension
    scattered = aval.update(shape=aval.shape[:d] + (aval.shape[d] // axis_size,)
                            + aval.shape[d + 1:])
    attrs = {"scatter_dimension": f"{d} : i64",
             **_group_attrs(ctx, "psum_scatter", axis_name)}
    region = ctx.scalar_region(aval.dtype, 2, "stablehlo.add")
    out = ctx.op("stablehlo.reduce_scatter", [x], [aval], scattered, attrs, [region])
    if tiled:
        return out
    return ctx.op("stablehlo.reshape", [out], [scattered], avals_out[0])


reduce_scatter_p = _declare_collective("reduce_scatter", _psum_scatter_shape,
                                       _psum_scatter_lowering)
_linear_jvp(reduce_scatter_p)
core.vma_rules[reduce_scatter_p] = _summing_vma("psum_scatter")


def _psum_scatter_transpose(ct, x, axis_name, scatter_dimension, tiled, axis_size):
    return [None if is_zero(ct) else all_gather_p.bind(
        ct, axis_name=axis_name, axis=scatter_dimension, tiled=tiled, axis_size=axis_size)]


def _psum_scatter_collective(axis_data, args, dims, axis_name, scatter_dimension, tiled,
                             axis_size):
    """Lane i gets block i (along scatter_dimension) of the sum over lanes."""
    if len(_names(axis_name)) > 1:
        raise NotImplementedError("psum_scatter over several vmap axis names")
    (x,), (d,) = args, dims
    total = _scaled(x, axis_data.size) if d is None else reduce_sum_p.bind(x, axes=(d,))
    k = scatter_dimension
    if tiled:
        shape = core.get_aval(total).shape
        split = shape[:k] + (axis_size, shape[k] // axis_size) + shape[k + 1:]
        total = reshape_p.bind(total, new_sizes=split, dimensions=None)
    return total, k


def _psum_scatter_batch(axis_data, args, dims, scatter_dimension, **params):
    (x,), (d,) = args, dims
    x = move_batch_dim(x, d, 0)
    return reduce_scatter_p.bind(x, scatter_dimension=scatter_dimension + 1, **params), 0


transpose_rules[reduce_scatter_p] = _psum_scatter_transpose
collective_rules[reduce_scatter_p] = _psum_scatter_collective
batching_rules[reduce_scatter_p] = _psum_scatter_batch


# --- ppermute ---------------------------------------------------------------------------

def _ppermute_shape(x, axis_name, perm):
    sources, targets = [s for s, _ in perm], [t for _, t in perm]
    if len(set(sources)) != len(sources) or len(set(targets)) != len(targets):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
    return x


def _ppermute_lowering(ctx, avals_in, avals_out, x, axis_name, perm):
    mesh = _manual_mesh(ctx, "ppermute", axis_name)
    pairs = [(group[s], group[t]) for group in replica_groups(ctx, mesh, _names(axis_name))
             for s, t in perm]
    attrs = {"channel_handle": ctx.module.next_channel(),
             "source_target_pairs": _dense_i64(pairs)}
    return ctx.op("stablehlo.collective_permute", [x], avals_in, avals_out[0], attrs)


ppermute_p = _declare_collective("ppermute", _ppermute_shape, _ppermute_lowering)
_linear_jvp(ppermute_p)
core.vma_rules[ppermute_p] = _varying_vma


def _ppermute_transpose(ct, x, axis_name, perm):
    inverse = tuple((t, s) for s, t in perm)
    return [None if is_zero(ct) else ppermute_p.bind(ct, axis_name=axis_name, perm=inverse)]


def _ppermute_collective(axis_data, args, dims, axis_name, perm):
    """Lane t gets lane s's value for each (s, t) of perm, zeros where none is sent."""
    if len(_names(axis_name)) > 1:
        raise NotImplementedError("ppermute over several vmap axis names")
    (x,), (d,) = args, dims
    x = batch_at(x, d, axis_data.size) if d is None else move_batch_dim(x, d, 0)
    aval = core.get_aval(x)
    source = {t: s for s, t in perm}
    rest = aval.shape[1:]
    lanes = []
    for t in range(axis_data.size):
        if t in source:
            s = source[t]
            lanes.append(slice_p.bind(x, start_indices=(s,) + (0,) * len(rest),
                                      limit_indices=(s + 1,) + rest, strides=None))
        else:
            lanes.append(instantiate(Zero(aval.update(shape=(1,) + rest))))
    return concatenate_p.bind(*lanes, dimension=0), 0


transpose_rules[ppermute_p] = _ppermute_transpose
collective_rules[ppermute_p] = _ppermute_collective
batching_rules[ppermute_p] = _same_dim_batch(ppermute_p)


# --- all_to_all -------------------------------------------------------------------------

def _all_to_all_shape(x, axis_name, split_axis, concat_axis, axis_size):
    for what, a in (("split_axis", split_axis), ("concat_axis", concat_axis)):
        if not 0 <= a < x.ndim:
            raise ValueError(f"all_to_all: {what} {a} out of range for {x.str_short()}")
    if x.shape[split_axis] % axis_size:
        raise ValueError(f"The size of all_to_all split_axis ({x.shape[split_axis]}) has to "
                         f"be divisible by the size of the named axis "
                         f"{_names(axis_name)[0]} ({axis_size})")
    shape = list(x.shape)
    shape[split_axis] //= axis_size
    shape[concat_axis] *= axis_size
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _all_to_all_lowering(ctx, avals_in, avals_out, x, axis_name, split_axis, concat_axis,
                         axis_size):
    attrs = {"split_dimension": f"{split_axis} : i64",
             "concat_dimension": f"{concat_axis} : i64", "split_count": f"{axis_size} : i64",
             **_group_attrs(ctx, "all_to_all", axis_name)}
    del attrs["use_global_device_ids"]
    return ctx.op("stablehlo.all_to_all", [x], avals_in, avals_out[0], attrs)


all_to_all_p = _declare_collective("all_to_all", _all_to_all_shape, _all_to_all_lowering)
_linear_jvp(all_to_all_p)
core.vma_rules[all_to_all_p] = _varying_vma


def _all_to_all_transpose(ct, x, axis_name, split_axis, concat_axis, axis_size):
    return [None if is_zero(ct) else all_to_all_p.bind(
        ct, axis_name=axis_name, split_axis=concat_axis, concat_axis=split_axis,
        axis_size=axis_size)]


def _all_to_all_collective(axis_data, args, dims, axis_name, split_axis, concat_axis,
                           axis_size):
    """Lane j gets chunk j (along split_axis) of every lane, the lanes' chunks in order
    along concat_axis: the lane axis and the chunk axis trade places, by a reshape, a
    transpose and a reshape."""
    if len(_names(axis_name)) > 1:
        raise NotImplementedError("all_to_all over several vmap axis names")
    (x,), (d,) = args, dims
    x = batch_at(x, d, axis_data.size)
    lane_aval = core.get_aval(x).update(shape=core.get_aval(x).shape[1:])
    _all_to_all_shape(lane_aval, axis_name, split_axis, concat_axis, axis_size)  # its checks
    lane = lane_aval.shape
    # Label the axes: "lane", the split axis as ("chunk", "within"), the others by index.
    labels = ["lane"]
    for i in range(len(lane)):
        labels += ["chunk", "within"] if i == split_axis else [i]
    order = ["chunk"]
    for i in range(len(lane)):
        order += (["lane"] if i == concat_axis else []) + (["within"] if i == split_axis else [i])
    split = list(lane)
    split[split_axis:split_axis + 1] = [axis_size, lane[split_axis] // axis_size]
    x = reshape_p.bind(x, new_sizes=(axis_data.size, *split), dimensions=None)
    perm = tuple(labels.index(a) for a in order)
    if perm != tuple(range(len(perm))):
        x = transpose_p.bind(x, permutation=perm)
    out = list(lane)
    out[split_axis] //= axis_size
    out[concat_axis] *= axis_size
    return reshape_p.bind(x, new_sizes=(axis_size, *out), dimensions=None), 0


def _all_to_all_batch(axis_data, args, dims, split_axis, concat_axis, **params):
    (x,), (d,) = args, dims
    x = move_batch_dim(x, d, 0)
    return all_to_all_p.bind(x, split_axis=split_axis + 1, concat_axis=concat_axis + 1,
                             **params), 0


transpose_rules[all_to_all_p] = _all_to_all_transpose
collective_rules[all_to_all_p] = _all_to_all_collective
batching_rules[all_to_all_p] = _all_to_all_batch


# --- pvary (lax.pcast(..., to="varying")) ----------------------------------------------

def _pvary_lowering(ctx, avals_in, avals_out, x, axis_name):
    _manual_mesh(ctx, "pvary", axis_name)
    return x


pvary_p = _declare_collective("pvary", lambda x, axis_name: x, _pvary_lowering)
_linear_jvp(pvary_p)
core.vma_rules[pvary_p] = _marking_vma


def _pvary_transpose(ct, x, axis_name):
    """A value used alike on every device: its cotangent is the sum of theirs."""
    return [None if is_zero(ct) else psum_p.bind(ct, axis_name=axis_name)]


def _pvary_collective(axis_data, args, dims, axis_name):
    return _rebind_rest(pvary_p, args[0], axis_data, axis_name), dims[0]


transpose_rules[pvary_p] = _pvary_transpose
collective_rules[pvary_p] = _pvary_collective
batching_rules[pvary_p] = _same_dim_batch(pvary_p)
core.set_pvary_primitive(pvary_p)


# --- axis_index ----------------------------------------------------------------------

def _axis_index_lowering(ctx, avals_in, avals_out, axis_name):
    """The partition id's coordinate along the named mesh axes (row-major mesh order).
    Where some mesh axes are still automatic, read it in a region manual over them, as
    jax does (the partition id is only a per-device value where every axis is manual)."""
    mesh = _manual_mesh(ctx, "axis_index", axis_name)
    automatic = tuple(a for a in mesh.axis_names if a not in ctx.module.manual_axes)
    if automatic:
        return emit_manual_computation(
            ctx, mesh, automatic, [], [], [], [PartitionSpec()], avals_out, [], avals_out,
            lambda inner, _: [_axis_index_lowering(inner, avals_in, avals_out, axis_name)])[0]
    grid = _partition_grid(ctx, mesh)
    if not np.array_equal(grid.ravel(), np.arange(grid.size)):
        raise NotImplementedError("axis_index in a program whose device order differs from "
                                  "the mesh's")
    u32 = ShapedArray((), dtypes.uint32)
    pid = ctx.op("stablehlo.partition_id", [], [], u32)
    sizes = dict(zip(mesh.axis_names, grid.shape, strict=True))
    index = None
    for name in _names(axis_name):
        stride = math.prod(grid.shape[mesh.axis_names.index(name) + 1:])
        stride_c = ctx.constant(np.uint32(stride), u32)
        size_c = ctx.constant(np.uint32(sizes[name]), u32)
        quotient = ctx.op("stablehlo.divide", [pid, stride_c], [u32, u32], u32)
        coord = ctx.op("stablehlo.remainder", [quotient, size_c], [u32, u32], u32)
        if index is not None:
            scaled = ctx.op("stablehlo.multiply", [index, size_c], [u32, u32], u32)
            coord = ctx.op("stablehlo.add", [scaled, coord], [u32, u32], u32)
        index = coord
    return ctx.op("stablehlo.convert", [index], [u32], avals_out[0])


axis_index_p = _declare_collective(
    "axis_index", lambda axis_name: ShapedArray((), dtypes.int32), _axis_index_lowering)


def _axis_index_collective(axis_data, args, dims, axis_name):
    if len(_names(axis_name)) > 1:
        raise NotImplementedError("axis_index over several vmap axis names")
    return iota_p.bind(dtype=dtypes.int32, shape=(axis_data.size,), dimension=0), 0


collective_rules[axis_index_p] = _axis_index_collective
core.vma_rules[axis_index_p] = _marking_vma

