"""Typed key arrays: `random.key(0)` is a `key<fry>[]` array, as in jax.

A key array's dtype is funcgraph.dtypes.KeyTy (an extended dtype) and its shape leaves
out the key data; its physical array is uint32[..., 2] (what it lowers to, and its
device buffer).  Two primitives convert between the two: random_wrap (key data ->
keys) and random_unwrap (keys -> key data).  The samplers unwrap a typed key and run on
its data; split and fold_in wrap their results again.
"""
from funcgraph import lax
from funcgraph import core, dtypes
from funcgraph.core import ShapedArray
from funcgraph.interpreters.ad_util import Zero, tangent_aval
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import impl_rules
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.lowering import lowering_rules
from funcgraph.random import _physical  # noqa: F401  (key lowering rules)


def _is_key_aval(aval):
    return isinstance(aval.dtype, dtypes.KeyTy)


# --- random_wrap: uint32[..., 2] -> key<fry>[...] ------------------------------------

random_wrap_p = core.Primitive("random_wrap")


def _wrap_shape(x, impl):
    dtype = dtypes.key_dtype(impl)
    trailing = dtype.physical_shape
    if (x.dtype != dtype.physical_dtype
            or tuple(x.shape[x.ndim - len(trailing):]) != trailing):
        dims = ",".join(["..."] + [str(d) for d in trailing])
        raise TypeError(f"random.wrap_key_data: the {impl} key data must be an array of "
                        f"type uint32[{dims}], got {x.str_short()}")
    return ShapedArray(tuple(x.shape[:x.ndim - len(trailing)]), dtype, False, x.vma)


def _wrap_impl(x, impl):
    return dtypes.host_value(x, dtypes.key_dtype(impl))


def _wrap_batch(axis_data, args, dims, impl):
    (x,), (d,) = args, dims
    ndim = core.get_aval(x).ndim
    trailing = len(dtypes.key_dtype(impl).physical_shape)
    if d >= ndim - trailing:  # the batch axis among the key data: move it first
        x = lax.transpose(x, (d,) + tuple(i for i in range(ndim) if i != d))
        d = 0
    return random_wrap_p.bind(x, impl=impl), d


core.shape_rules[random_wrap_p] = _wrap_shape
impl_rules[random_wrap_p] = _wrap_impl
batching_rules[random_wrap_p] = _wrap_batch
lowering_rules[random_wrap_p] = lambda ctx, avals_in, avals_out, x, impl: x


# --- random_unwrap: key<fry>[...] -> uint32[..., 2] ------------------------------------

random_unwrap_p = core.Primitive("random_unwrap")


def _unwrap_shape(keys):
    if not _is_key_aval(keys):
        raise TypeError(f"random.key_data: expected a key array, got {keys.str_short()}")
    return ShapedArray(tuple(keys.shape) + keys.dtype.physical_shape,
                       keys.dtype.physical_dtype, False, keys.vma)


def _unwrap_impl(keys):
    return dtypes.physical_value(keys, dtypes.threefry_key)


def _unwrap_batch(axis_data, args, dims):
    (x,), (d,) = args, dims
    return random_unwrap_p.bind(x), d


core.shape_rules[random_unwrap_p] = _unwrap_shape
impl_rules[random_unwrap_p] = _unwrap_impl
batching_rules[random_unwrap_p] = _unwrap_batch
lowering_rules[random_unwrap_p] = lambda ctx, avals_in, avals_out, x: x


def _jvp_zero(prim):
    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        return out, Zero(tangent_aval(core.get_aval(out)))
    jvp_rules[prim] = rule


_jvp_zero(random_wrap_p)
_jvp_zero(random_unwrap_p)


# --- the API --------------------------------------------------------------------------

def is_key_array(x):
    """Whether x is a typed key array (concrete or traced)."""
    aval = getattr(x, "aval", None)
    return aval is not None and _is_key_aval(aval)


def wrap(data, impl="threefry2x32"):
    return random_wrap_p.bind(data, impl=impl)


def unwrap(keys):
    return random_unwrap_p.bind(keys)


def impl_name(impl):
    """The implementation a key of `impl` (None, a name, or jax's PRNGImpl-like object)
    uses: only threefry2x32 exists."""
    if impl is None:
        return "threefry2x32"
    name = getattr(impl, "name", impl)
    if name not in ("threefry2x32", "threefry", "fry"):
        raise ValueError(f"funcgraph.random implements only the threefry2x32 PRNG, got "
                         f"impl={impl!r}")
    return "threefry2x32"
