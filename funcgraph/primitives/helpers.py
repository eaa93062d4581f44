"""Helpers shared by families of primitives: declaration, dtype checks and the
standard unary/binary elementwise rule sets."""
import warnings

from funcgraph import core, dtypes
from funcgraph.core import ShapedArray, shape_rules
from funcgraph.interpreters.eval import impl_rules
from funcgraph.lowering import lowering_rules

# Kinds of dtypes a primitive accepts.
BOOL = "bool"
INT = "int"      # signed and unsigned
FLOAT = "float"
COMPLEX = "complex"
NUMBER = (INT, FLOAT, COMPLEX)
INEXACT = (FLOAT, COMPLEX)
INTEGRAL = (BOOL, INT)
ANY = (BOOL, INT, FLOAT, COMPLEX)


def _kind_of(dtype):
    if dtype == dtypes.bool_:
        return BOOL
    if dtypes.is_int(dtype):
        return INT
    if dtypes.is_float(dtype):
        return FLOAT
    return COMPLEX


KIND = {d: _kind_of(d) for d in dtypes.SUPPORTED}


def kind_of(dtype):
    return KIND[dtype]


def check_dtype(name, aval, kinds, arg="operand"):
    if KIND[aval.dtype] not in kinds:
        accepted = ", ".join(sorted(kinds))
        raise TypeError(f"{name} does not accept {arg} of dtype {aval.dtype.name} "
                        f"(type {aval.str_short()}); it accepts {accepted} dtypes")


def check_same_dtypes(name, avals):
    kinds = {a.dtype for a in avals}
    if len(kinds) > 1:
        got = ", ".join(a.dtype.name for a in avals)
        raise TypeError(f"{name} requires arguments of one dtype, got {got}; convert them "
                        f"with lax.convert_element_type or use funcgraph.numpy, which promotes")


def check_same_shapes(name, avals, allow_scalars=False):
    shapes = {a.shape for a in avals}
    if allow_scalars and len(shapes) > 1:
        shapes.discard(())
    if len(shapes) > 1:
        got = ", ".join(str(a.shape) for a in avals)
        raise TypeError(f"{name} requires arguments of one shape, got {got}; broadcast "
                        f"them first (funcgraph.numpy broadcasts automatically)")


def declare(name, shape_rule, impl=None, lowering=None, multiple_results=False):
    """Create a primitive and register its shape rule, NumPy impl and lowering."""
    prim = core.Primitive(name, multiple_results)
    shape_rules[prim] = shape_rule
    if impl is not None:
        impl_rules[prim] = impl
    if lowering is not None:
        lowering_rules[prim] = lowering
    return prim


def normalize_axis(axis, ndim, name="axis"):
    if not -ndim <= axis < max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise ValueError(f"{name} {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim if ndim else 0


def compare_type(dtype):
    if dtypes.is_inexact(dtype):
        return "#stablehlo<comparison_type FLOAT>"
    if dtypes.is_unsigned(dtype) or dtype == dtypes.bool_:
        return "#stablehlo<comparison_type UNSIGNED>"
    return "#stablehlo<comparison_type SIGNED>"


# --- elementwise families ------------------------------------------------------

def _unary_shape_rule(name, kinds, out_dtype):
    def rule(x):
        check_dtype(name, x, kinds)
        if out_dtype is None:
            return x
        return ShapedArray(x.shape, out_dtype(x.dtype), x.weak_type)
    return rule


def _hlo_op_lowering(hlo_name, attrs=None):
    def lower(ctx, avals_in, avals_out, *args):
        return ctx.op(hlo_name, list(args), avals_in, avals_out[0], attrs)
    return lower


def _register_elementwise_batching(prim):
    from funcgraph.interpreters.batching import batching_rules
    from funcgraph.primitives.batching_helpers import batch_elementwise
    batching_rules[prim] = batch_elementwise(prim)
    return prim


def unary(name, np_fn, hlo_name, kinds, out_dtype=None, lowering=None):
    """An elementwise unary primitive: same shape; dtype kept unless out_dtype maps it.

    np_fn may be None when NumPy lacks the function: eager calls then run compiled.
    Batching is elementwise (the batch dimension stays where it is)."""
    return _register_elementwise_batching(declare(
        name, _unary_shape_rule(name, kinds, out_dtype), np_fn,
        lowering or _hlo_op_lowering(hlo_name)))


def _binary_shape_rule(name, kinds, out_dtype):
    def rule(x, y):
        if x.dtype != y.dtype:
            check_same_dtypes(name, [x, y])
        if KIND[x.dtype] not in kinds:
            check_dtype(name, x, kinds, "arguments")
        if x.shape != y.shape and x.shape and y.shape:
            check_same_shapes(name, [x, y], allow_scalars=True)
        weak = x.weak_type and y.weak_type
        if out_dtype is None and x.shape and x.weak_type == weak:
            return x
        dtype = x.dtype if out_dtype is None else out_dtype
        return ShapedArray(x.shape or y.shape, dtype, weak)
    return rule


def broadcast_scalar_operands(ctx, avals_in, args, shape):
    """Rank-0 operands of an elementwise op, broadcast to the result shape."""
    out_avals, out_args = [], []
    for aval, arg in zip(avals_in, args):
        if aval.shape != shape:
            full = aval.update(shape=shape)
            arg = ctx.op("stablehlo.broadcast_in_dim", [arg], [aval], full,
                         {"broadcast_dimensions": "array<i64>"})
            aval = full
        out_avals.append(aval)
        out_args.append(arg)
    return out_avals, out_args


def _hlo_binary_lowering(hlo_name, attrs=None):
    def lower(ctx, avals_in, avals_out, *args):
        avals_in, args = broadcast_scalar_operands(ctx, avals_in, args, avals_out[0].shape)
        return ctx.op(hlo_name, args, avals_in, avals_out[0], attrs)
    return lower


def binary(name, np_fn, hlo_name, kinds, out_dtype=None, lowering=None):
    """An elementwise binary primitive: operands of one dtype and one shape, except
    that a rank-0 operand may meet a shaped one (it is broadcast, as in JAX's IR).
    Batching is elementwise."""
    return _register_elementwise_batching(declare(
        name, _binary_shape_rule(name, kinds, out_dtype), np_fn,
        lowering or _hlo_binary_lowering(hlo_name)))


# XLA produces inf and nan silently; so do the NumPy impls.  NumPy reports floating-point
# errors as RuntimeWarnings attributed to the calling frame, which for every impl is
# funcgraph's own code, so one filter silences them at no cost per call (np.errstate
# around each impl cost about a microsecond on the eager hot path).
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"funcgraph(\.|$)")


def silence_numpy(fn):
    """Marks a NumPy impl that may produce inf/nan (silenced by the filter above)."""
    return fn


# --- differentiation helpers shared by families ------------------------------------
# Rules bind primitives directly (not funcgraph.lax), so these import the elementwise
# primitives lazily: helpers.py is imported by elementwise.py itself.

def _ew():
    from funcgraph.primitives import elementwise
    return elementwise


def broadcast_to_aval(x, aval):
    """A rank-0 value broadcast to aval's shape (other values unchanged)."""
    from funcgraph.primitives.structural import broadcast_in_dim_p
    x_aval = core.get_aval(x)
    if x_aval.shape == aval.shape:
        return x
    return broadcast_in_dim_p.bind(x, shape=aval.shape, broadcast_dimensions=())


def unbroadcast(ct, aval):
    """The cotangent of a rank-0 operand that met a shaped one: sum over the shape."""
    from funcgraph.primitives.reductions import reduce_sum_p
    ct_aval = core.get_aval(ct)
    if ct_aval.shape == aval.shape:
        return ct
    return reduce_sum_p.bind(ct, axes=tuple(range(ct_aval.ndim)))


def defjvp_unary(prim, derivative):
    """JVP of an elementwise unary primitive: t_out = t * derivative(x, out, **params)."""
    from funcgraph.interpreters.ad_util import Zero, tangent_aval
    from funcgraph.interpreters.jvp import jvp_rules

    def rule(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, **params)
        out_aval = core.get_aval(out)
        if not dtypes.is_inexact(out_aval.dtype):
            return out, Zero(tangent_aval(out_aval))
        return out, _ew().mul_p.bind(t, derivative(x, out, **params))
    jvp_rules[prim] = rule


def defjvp_binary(prim, d_x, d_y):
    """JVP of an elementwise binary primitive: t_out = t_x * d_x(x, y, out) + t_y * d_y(...).
    A derivative given as None means the output does not depend on that operand."""
    from funcgraph.interpreters.ad_util import Zero, is_zero, tangent_aval
    from funcgraph.interpreters.jvp import jvp_rules

    def rule(primals, tangents, **params):
        x, y = primals
        out = prim.bind(x, y, **params)
        out_aval = core.get_aval(out)
        terms = []
        for t, d in ((tangents[0], d_x), (tangents[1], d_y)):
            if d is not None and not is_zero(t):
                terms.append(_ew().mul_p.bind(t, d(x, y, out, **params)))
        if not terms or not dtypes.is_inexact(out_aval.dtype):
            return out, Zero(tangent_aval(out_aval))
        total = terms[0] if len(terms) == 1 else _ew().add_p.bind(*terms)
        return out, broadcast_to_aval(total, out_aval)
    jvp_rules[prim] = rule


def deflinear_unary(prim, transpose):
    """A primitive linear in its one operand: t_out = prim(t); ct_in = transpose(ct, aval)."""
    from funcgraph.interpreters.jvp import jvp_rules
    from funcgraph.interpreters.transpose import transpose_rules

    def jvp(primals, tangents, **params):
        return prim.bind(primals[0], **params), prim.bind(tangents[0], **params)

    def transpose_rule(ct, x, **params):
        from funcgraph.interpreters.ad_util import is_zero
        if is_zero(ct):
            return [None]
        return [transpose(ct, x.aval, **params)]
    jvp_rules[prim] = jvp
    transpose_rules[prim] = transpose_rule
