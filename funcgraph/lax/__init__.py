"""funcgraph.lax: the primitive-level operations, with JAX's lax names.

Unlike funcgraph.numpy these do not promote dtypes or broadcast (except that
Python scalars and 0-d operands adopt the other operand's dtype and shape)."""
import numpy as np

from funcgraph import core, dtypes
from funcgraph.array import Array
from funcgraph.primitives import elementwise as ew
from funcgraph.primitives import structural as st
from funcgraph.primitives import reductions as red
from funcgraph.primitives import contractions as con
from funcgraph.primitives.call import pjit_p


def _aval(x):
    if isinstance(x, (Array, core.Tracer)):
        return x.aval
    if core.is_python_scalar(x):
        return core.aval_of_python_scalar(x)
    return core.aval_of_numpy(np.asarray(x))


def _as_operand(x):
    if isinstance(x, (Array, core.Tracer)):
        return x
    if core.is_python_scalar(x):
        aval = core.aval_of_python_scalar(x)
        return Array(np.array(x, aval.dtype), aval)
    x = core.canonical_numpy(x)
    return Array(x, core.aval_of_numpy(x))


def _unary(prim):
    def fn(x):
        return prim.bind(_as_operand(x))
    fn.__name__ = prim.name
    fn.__doc__ = f"Elementwise {prim.name} (the `{prim.name}` primitive)."
    return fn


def _match_scalars(args):
    """As in JAX's lax: a Python scalar becomes a weakly typed array of its default dtype
    (float32, int32, ...), with no promotion, so its dtype must match the other operands'."""
    return [_as_operand(a) for a in args]


def _binary(prim):
    def fn(x, y):
        return prim.bind(*_match_scalars([x, y]))
    fn.__name__ = prim.name
    fn.__doc__ = f"Elementwise {prim.name} (the `{prim.name}` primitive)."
    return fn


neg = _unary(ew.neg_p)
sign = _unary(ew.sign_p)
floor = _unary(ew.floor_p)
ceil = _unary(ew.ceil_p)
is_finite = _unary(ew.is_finite_p)
exp = _unary(ew.exp_p)
exp2 = _unary(ew.exp2_p)
log = _unary(ew.log_p)
log1p = _unary(ew.log1p_p)
expm1 = _unary(ew.expm1_p)
tanh = _unary(ew.tanh_p)
logistic = _unary(ew.logistic_p)
sin = _unary(ew.sin_p)
cos = _unary(ew.cos_p)
tan = _unary(ew.tan_p)
asin = _unary(ew.asin_p)
acos = _unary(ew.acos_p)
atan = _unary(ew.atan_p)
sinh = _unary(ew.sinh_p)
cosh = _unary(ew.cosh_p)
asinh = _unary(ew.asinh_p)
acosh = _unary(ew.acosh_p)
atanh = _unary(ew.atanh_p)
sqrt = _unary(ew.sqrt_p)
rsqrt = _unary(ew.rsqrt_p)
cbrt = _unary(ew.cbrt_p)
abs = _unary(ew.abs_p)
erf = _unary(ew.erf_p)
erf_inv = _unary(ew.erf_inv_p)
lgamma = _unary(ew.lgamma_p)
digamma = _unary(ew.digamma_p)
real = _unary(ew.real_p)
imag = _unary(ew.imag_p)
conj = _unary(ew.conj_p)
bitwise_not = _unary(ew.not_p)
population_count = _unary(ew.population_count_p)

add = _binary(ew.add_p)
sub = _binary(ew.sub_p)
mul = _binary(ew.mul_p)
div = _binary(ew.div_p)
rem = _binary(ew.rem_p)
max = _binary(ew.max_p)
min = _binary(ew.min_p)
pow = _binary(ew.pow_p)
atan2 = _binary(ew.atan2_p)
nextafter = _binary(ew.nextafter_p)
polygamma = _binary(ew.polygamma_p)
eq = _binary(ew.eq_p)
ne = _binary(ew.ne_p)
lt = _binary(ew.lt_p)
le = _binary(ew.le_p)
gt = _binary(ew.gt_p)
ge = _binary(ew.ge_p)
bitwise_and = _binary(ew.and_p)
bitwise_or = _binary(ew.or_p)
bitwise_xor = _binary(ew.xor_p)
shift_left = _binary(ew.shift_left_p)
shift_right_arithmetic = _binary(ew.shift_right_arithmetic_p)
shift_right_logical = _binary(ew.shift_right_logical_p)


class RoundingMethod:
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    return ew.round_p.bind(_as_operand(x), rounding_method=int(rounding_method))


def integer_pow(x, y):
    if isinstance(y, bool) or not isinstance(y, (int, np.integer)):
        raise TypeError(f"lax.integer_pow needs a static integer exponent, got {y!r}")
    return ew.integer_pow_p.bind(_as_operand(x), y=int(y))


def square(x):
    return integer_pow(x, 2)


def reciprocal(x):
    return integer_pow(x, -1)


def select_n(which, *cases):
    if not cases:
        raise ValueError("select_n needs at least one case")
    cases = _match_scalars(cases)
    shapes = [c.aval.shape for c in cases if c.aval.shape]
    if shapes:
        cases = [c if c.aval.shape else broadcast_in_dim(c, shapes[0], ()) for c in cases]
    return ew.select_n_p.bind(_as_operand(which), *cases)


def select(pred, on_true, on_false):
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):
    return ew.clamp_p.bind(*_match_scalars([min, x, max]))


def convert_element_type(x, new_dtype, weak_type=False):
    new_dtype = dtypes.canonicalize(new_dtype)
    x = _as_operand(x)
    if x.aval.dtype == new_dtype and x.aval.weak_type == weak_type:
        return x
    return ew.convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)


def bitcast_convert_type(x, new_dtype):
    return ew.bitcast_convert_type_p.bind(_as_operand(x), new_dtype=dtypes.canonicalize(new_dtype))


def copy_p_bind(x):
    return ew.copy_p.bind(_as_operand(x))


# --- shapes ---

def broadcast_in_dim(x, shape, broadcast_dimensions):
    x = _as_operand(x)
    shape, dims = tuple(shape), tuple(broadcast_dimensions)
    if x.aval.shape == shape and dims == tuple(range(len(shape))):
        return x
    return st.broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims)


def broadcast(x, sizes):
    x = _as_operand(x)
    sizes = tuple(sizes)
    dims = tuple(range(len(sizes), len(sizes) + x.aval.ndim))
    return broadcast_in_dim(x, sizes + x.aval.shape, dims)


def reshape(x, new_sizes, dimensions=None):
    x = _as_operand(x)
    if dimensions is not None:
        x = transpose(x, dimensions)
    new_sizes = tuple(int(d) for d in new_sizes)
    if x.aval.shape == new_sizes:
        return x
    return st.reshape_p.bind(x, new_sizes=new_sizes, dimensions=None)


def transpose(x, permutation):
    x = _as_operand(x)
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))):
        return x
    return st.transpose_p.bind(x, permutation=permutation)


# --- reductions ---

def _reducer(prim):
    def fn(x, axes):
        return prim.bind(_as_operand(x), axes=tuple(int(a) for a in axes))
    fn.__name__ = prim.name
    return fn


reduce_sum = _reducer(red.reduce_sum_p)
reduce_prod = _reducer(red.reduce_prod_p)
reduce_max = _reducer(red.reduce_max_p)
reduce_min = _reducer(red.reduce_min_p)
reduce_and = _reducer(red.reduce_and_p)
reduce_or = _reducer(red.reduce_or_p)


# --- contractions ---

def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    dims = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    if preferred_element_type is not None:
        preferred_element_type = dtypes.canonicalize(preferred_element_type)
    return con.dot_general_p.bind(_as_operand(lhs), _as_operand(rhs), dimension_numbers=dims,
                                  precision=None, preferred_element_type=preferred_element_type)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    lhs, rhs = _as_operand(lhs), _as_operand(rhs)
    if lhs.aval.ndim not in (1, 2) or rhs.aval.ndim not in (1, 2):
        raise TypeError(f"lax.dot takes operands of rank 1 or 2, got {lhs.aval.str_short()} "
                        f"and {rhs.aval.str_short()}")
    return dot_general(lhs, rhs, (((lhs.aval.ndim - 1,), (0,)), ((), ())),
                       precision, preferred_element_type)


def squeeze(x, dimensions):
    x = _as_operand(x)
    dimensions = tuple(sorted(int(d) % builtins_max(x.aval.ndim, 1) for d in dimensions))
    if not dimensions:
        return x
    return st.squeeze_p.bind(x, dimensions=dimensions)


def expand_dims(x, dimensions):
    x = _as_operand(x)
    ndim = x.aval.ndim + len(dimensions)
    dimensions = tuple(sorted(int(d) % ndim for d in dimensions))
    if not dimensions:
        return x
    return st.expand_dims_p.bind(x, dimensions=dimensions)


def builtins_max(a, b):
    return a if a > b else b


def stop_gradient(x):
    """x, with no derivative flowing through it (applied to every leaf of a pytree)."""
    from funcgraph import tree_util
    from funcgraph.primitives.custom_ad import stop_gradient_p

    def stop(leaf):
        leaf = _as_operand(leaf)
        if not dtypes.is_inexact(leaf.aval.dtype):
            return leaf
        return stop_gradient_p.bind(leaf)
    return tree_util.tree_map(stop, x)


# --- collectives over a named vmap axis ---

def _axis_names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _collective(prim_name):
    def fn(x, axis_name):
        from funcgraph import tree_util
        from funcgraph.primitives import collectives
        prim = getattr(collectives, prim_name)
        return tree_util.tree_map(
            lambda leaf: prim.bind(_as_operand(leaf), axis_name=_axis_names(axis_name)), x)
    fn.__name__ = prim_name[:-2]
    return fn


psum = _collective("psum_p")
pmax = _collective("pmax_p")
pmin = _collective("pmin_p")


def pmean(x, axis_name):
    """The mean over the named axis: psum(x) / (the axis size)."""
    from funcgraph import tree_util
    size = psum(1, axis_name)
    return tree_util.tree_map(lambda leaf: div(psum(leaf, axis_name),
                                               convert_element_type(size, _aval(leaf).dtype)), x)


def all_gather(x, axis_name, *, axis=0, tiled=False):
    """Every lane's x, stacked (or concatenated with tiled=True) along `axis`."""
    from funcgraph import tree_util
    from funcgraph.interpreters.batching import find_axis
    from funcgraph.primitives.collectives import all_gather_p
    names = _axis_names(axis_name)
    if len(names) != 1:
        raise NotImplementedError("all_gather over several axis names")
    size = find_axis(names[0]).size

    def gather(leaf):
        leaf = _as_operand(leaf)
        ax = axis % (leaf.aval.ndim + (0 if tiled else 1))
        return all_gather_p.bind(leaf, axis_name=names, axis=ax, tiled=tiled, axis_size=size)
    return tree_util.tree_map(gather, x)


def axis_index(axis_name):
    """This lane's index along the named vmap axis."""
    from funcgraph.primitives.collectives import axis_index_p
    return axis_index_p.bind(axis_name=_axis_names(axis_name))


from funcgraph.lax._slicing import *  # noqa: E402,F401,F403
from funcgraph.lax._reductions import *  # noqa: E402,F401,F403
from funcgraph.lax._control_flow import *  # noqa: E402,F401,F403
from funcgraph.lax import linalg  # noqa: E402,F401


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over matching leading (batch) dimensions: [..., m, k] @ [..., k, n]."""
    lhs, rhs = _as_operand(lhs), _as_operand(rhs)
    nd = lhs.aval.ndim
    if nd < 2 or rhs.aval.ndim != nd or lhs.aval.shape[:-2] != rhs.aval.shape[:-2]:
        raise TypeError(f"batch_matmul: operands need equal rank >= 2 and equal batch "
                        f"dimensions, got {lhs.aval.str_short()} and {rhs.aval.str_short()}")
    batch = tuple(range(nd - 2))
    return dot_general(lhs, rhs, (((nd - 1,), (nd - 2,)), (batch, batch)), precision)
