"""Helpers shared by the families of primitives that bind no primitive themselves:
declaration, dtype kinds and checks, dimension bookkeeping, lowering snippets, the
rules of a primitive linear in its one operand, and the simplification rule of an
operation that may change nothing."""
import warnings

from funcgraph import core, dtypes, shape_poly
from funcgraph.core import shape_rules
from funcgraph.interpreters.ad_util import Zero, is_zero, tangent_aval
from funcgraph.interpreters.eval import impl_rules
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.transpose import is_undefined, transpose_rules
from funcgraph.lowering import i64_array, lowering_rules

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


def broadcast_shape(name, avals):
    """The result shape of an elementwise op that broadcasts as JAX's lax does: rank-0
    operands meet any shape, and operands of one rank meet along their size-1
    dimensions (a (3, 1) operand and a (1, 4) one give (3, 4))."""
    shapes = [a.shape for a in avals if a.shape]
    if not shapes:
        return ()
    if len(set(shapes)) == 1:
        return shapes[0]
    ranks = {len(s) for s in shapes}
    if len(ranks) > 1:
        raise TypeError(f"{name}: arrays must have the same number of dimensions, got "
                        f"{ranks}")
    joint = []
    for sizes in zip(*shapes):
        wide = [d for d in sizes if not (type(d) is int and d == 1)]
        if any(not _same_size(d, wide[0]) for d in wide[1:]):
            if not all(type(d) is int for d in sizes):  # symbolic sizes: jax's message
                check_same_shapes(name, avals, allow_scalars=True)
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            f"{', '.join(str(s) for s in shapes)}.")
        joint.append(wide[0] if wide else 1)
    return tuple(joint)


def _same_size(a, b):
    """Whether two dimension sizes (ints or symbolic) are known to be equal."""
    try:
        return bool(a == b)
    except shape_poly.InconclusiveDimensionOperation:
        return False


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


# XLA produces inf and nan silently; so do the NumPy impls.  NumPy reports floating-point
# errors as RuntimeWarnings attributed to the calling frame, which for every impl is
# funcgraph's own code, so one filter silences them at no cost per call (np.errstate
# around each impl cost about a microsecond on the eager hot path).
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"funcgraph(\.|$)")


# --- dimensions ------------------------------------------------------------------------

def shape_tuple(name, shape):
    """A static shape as a tuple of non-negative Python ints (a clear error otherwise)."""
    try:
        shape = tuple(int(d) for d in shape)
    except shape_poly.InconclusiveDimensionOperation:
        shape = shape_poly.dims_tuple(shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a tuple of Python ints, got {shape!r} "
                        f"(shapes must be static; use static_argnums for shapes passed to jit)")
    if any(d < 0 for d in shape):
        raise ValueError(f"{name}: negative dimension in shape {shape}")
    return shape


def shift_dims(dims, inserted):
    """Dimension indices after a new dimension is inserted at position `inserted`."""
    return tuple(d + (d >= inserted) for d in dims)


def inserted(items, position, item):
    """items as a tuple with item inserted at position."""
    items = tuple(items)
    return items[:position] + (item,) + items[position:]


def between(dims, k, rank, prefer):
    """A position for a new dimension that comes after dims[k - 1] and before dims[k]
    once inserted (dims sorted, among `rank` dimensions), as near to `prefer` as possible."""
    lo = dims[k - 1] + 1 if k > 0 else 0
    hi = dims[k] if k < len(dims) else rank
    return min(max(prefer, lo), hi)


def aval_of(x):
    """The type of a transpose-rule argument, linear (UndefinedPrimal) or not."""
    return x.aval if is_undefined(x) else core.get_aval(x)


# --- lowering snippets ------------------------------------------------------------------

def compare_type(dtype):
    if dtypes.is_inexact(dtype):
        return "#stablehlo<comparison_type FLOAT>"
    if dtypes.is_unsigned(dtype) or dtype == dtypes.bool_:
        return "#stablehlo<comparison_type UNSIGNED>"
    return "#stablehlo<comparison_type SIGNED>"


def lower_compare(ctx, x, y, aval, direction):
    """x <direction> y for two operands of type aval; a boolean array."""
    return ctx.op("stablehlo.compare", [x, y], [aval, aval], aval.update(dtype=dtypes.bool_),
                  {"comparison_direction": f"#stablehlo<comparison_direction {direction}>",
                   "compare_type": compare_type(aval.dtype)})


# --- narrow floats accumulate wide -----------------------------------------------------
# Sums and products of float16/bfloat16 values accumulate in float32 and round once,
# eagerly and compiled alike (XLA's CPU backend would otherwise round every partial sum).

NARROW_FLOATS = (dtypes.float16, dtypes.bfloat16)


def accumulation_dtype(dtype):
    return dtypes.float32 if dtype in NARROW_FLOATS else dtype


def lower_accumulating(ctx, aval_in, aval_out, x, lower_wide):
    """Lower a sum-like op of x: lower_wide(x, wide aval in, wide aval out) builds it; for
    narrow floats it runs on x converted to float32, and the result is converted back."""
    wide = accumulation_dtype(aval_in.dtype)
    if wide == aval_in.dtype:
        return lower_wide(x, aval_in, aval_out)
    wide_in, wide_out = aval_in.update(dtype=wide), aval_out.update(dtype=wide)
    x = ctx.op("stablehlo.convert", [x], [aval_in], wide_in)
    out = lower_wide(x, wide_in, wide_out)
    return ctx.op("stablehlo.convert", [out], [wide_out], aval_out)


def broadcast_scalar_operands(ctx, avals_in, args, shape):
    """The operands of an elementwise op broadcast to the result shape: rank-0 ones, and
    those of the result's rank with size-1 dimensions."""
    out_avals, out_args = [], []
    for aval, arg in zip(avals_in, args):
        if aval.shape != shape:
            full = aval.update(shape=shape)
            arg = ctx.op("stablehlo.broadcast_in_dim", [arg], [aval], full,
                         {"broadcast_dimensions": i64_array(range(aval.ndim))})
            aval = full
        out_avals.append(aval)
        out_args.append(arg)
    return out_avals, out_args


# --- rule sets ------------------------------------------------------------------------

def deflinear_unary(prim, transpose):
    """A primitive linear in its one operand: t_out = prim(t); ct_in = transpose(ct, aval)."""
    def jvp(primals, tangents, **params):
        return prim.bind(primals[0], **params), prim.bind(tangents[0], **params)

    def transpose_rule(ct, x, **params):
        if is_zero(ct):
            return [None]
        return [transpose(ct, x.aval, **params)]
    jvp_rules[prim] = jvp
    transpose_rules[prim] = transpose_rule


def defjvp_zero(prim):
    """JVP of a primitive whose output is piecewise constant in its operands (rounding,
    comparisons, bit operations, indices): a zero tangent, of dtype float0 for non-float
    outputs."""
    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        return out, Zero(tangent_aval(core.get_aval(out)))
    jvp_rules[prim] = rule


def unchanged_operand(invars, params, outvar, producers):
    """Simplification rule of a shape operation or conversion: its operand, when the
    output has the operand's type (the operation then changes nothing)."""
    x = invars[0]
    return x if x.aval == outvar.aval else None
