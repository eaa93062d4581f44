"""Collectives over a named vmap axis: psum, pmax, pmin, all_gather, axis_index.

Each is handled by the vmap (BatchTrace) whose axis_name it names, through
`collective_rules`; a vmap of another name batches it like an elementwise op.
Outside any vmap of that name they raise NameError, as in JAX."""
import numpy as np

from funcgraph import core, dtypes
from funcgraph.core import ShapedArray
from funcgraph.interpreters.batching import batching_rules, collective_rules
from funcgraph.interpreters.eval import direct_impls
from funcgraph.interpreters.ad_util import is_zero
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.transpose import transpose_rules
from funcgraph.primitives.base import move_batch_dim, reduce_sum_p, reshape_p
from funcgraph.primitives.batching_helpers import batch_at
from funcgraph.primitives.elementwise import mul_p
from funcgraph.primitives.helpers import declare
from funcgraph.primitives.reductions import reduce_max_p, reduce_min_p
from funcgraph.primitives.structural import iota_p


def _names(axis_name):
    return axis_name if isinstance(axis_name, tuple) else (axis_name,)


def _unbound(prim):
    def impl(*args, axis_name, **params):
        raise NameError(f"unbound axis name: {_names(axis_name)[0]!r}. {prim} needs an "
                        f"enclosing vmap(..., axis_name={_names(axis_name)[0]!r})")
    return impl


def _unbound_lowering(name):
    def lower(ctx, avals_in, avals_out, *args, axis_name, **params):
        raise NameError(f"unbound axis name: {_names(axis_name)[0]!r} in {name}: collectives "
                        f"must be inside vmap(..., axis_name=...)")
    return lower


def _rebind_rest(prim, out, axis_data, axis_name, **params):
    """After reducing this vmap's axis, reduce the other named axes further out."""
    rest = tuple(n for n in _names(axis_name) if n != axis_data.name)
    return prim.bind(out, axis_name=rest, **params) if rest else out


def _declare_collective(name, shape_rule):
    prim = declare(name, shape_rule, None, _unbound_lowering(name))
    direct_impls[prim] = _unbound(name)
    return prim


def _same_dim_batch(prim):
    """Under a vmap of another name: the collective acts lane by lane."""
    def rule(axis_data, args, dims, **params):
        return prim.bind(args[0], **params), dims[0]
    return rule


# --- psum / pmax / pmin -------------------------------------------------------------

def _reducing_collective(name, reduce_prim, unmapped):
    prim = _declare_collective(name, lambda x, axis_name: x)

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


psum_p = _reducing_collective("psum", reduce_sum_p, _scaled)


def _psum_jvp(primals, tangents, axis_name):
    out = psum_p.bind(primals[0], axis_name=axis_name)
    t = tangents[0]
    return out, (t if is_zero(t) else psum_p.bind(t, axis_name=axis_name))


def _psum_transpose(ct, x, axis_name):
    return [None if is_zero(ct) else psum_p.bind(ct, axis_name=axis_name)]


jvp_rules[psum_p] = _psum_jvp
transpose_rules[psum_p] = _psum_transpose

pmax_p = _reducing_collective("pmax", reduce_max_p, lambda x, size: x)
pmin_p = _reducing_collective("pmin", reduce_min_p, lambda x, size: x)


# --- all_gather ---------------------------------------------------------------------

def _all_gather_shape(x, axis_name, axis, tiled, axis_size):
    if not 0 <= axis <= x.ndim - (1 if tiled else 0):
        raise ValueError(f"all_gather: axis {axis} out of range for {x.str_short()}")
    if tiled:
        shape = x.shape[:axis] + (x.shape[axis] * axis_size,) + x.shape[axis + 1:]
    else:
        shape = x.shape[:axis] + (axis_size,) + x.shape[axis:]
    return ShapedArray(shape, x.dtype, x.weak_type)


all_gather_p = _declare_collective("all_gather", _all_gather_shape)


def _all_gather_collective(axis_data, args, dims, axis_name, axis_size, tiled, **params):
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


def _all_gather_jvp(primals, tangents, **params):
    out = all_gather_p.bind(primals[0], **params)
    t = tangents[0]
    return out, (t if is_zero(t) else all_gather_p.bind(t, **params))


jvp_rules[all_gather_p] = _all_gather_jvp


# --- axis_index ----------------------------------------------------------------------

axis_index_p = _declare_collective(
    "axis_index", lambda axis_name: ShapedArray((), dtypes.int32))


def _axis_index_collective(axis_data, args, dims, axis_name):
    return iota_p.bind(dtype=dtypes.int32, shape=(axis_data.size,), dimension=0), 0


collective_rules[axis_index_p] = _axis_index_collective

