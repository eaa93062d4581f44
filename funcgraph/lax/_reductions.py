"""Reductions (reduce_sum, ...), argmax/argmin, cumulative ops, sort and top_k."""
import operator

from funcgraph import core, dtypes
from funcgraph.lax._operands import as_operand
from funcgraph.primitives import reductions as _red
from funcgraph.primitives import sorting as _sorting


def _reducer(prim):
    def fn(x, axes):
        return prim.bind(as_operand(x), axes=tuple(int(a) for a in axes))
    core.named_function(fn, prim.name)
    return fn


reduce_sum = _reducer(_red.reduce_sum_p)
reduce_prod = _reducer(_red.reduce_prod_p)
reduce_max = _reducer(_red.reduce_max_p)
reduce_min = _reducer(_red.reduce_min_p)
reduce_and = _reducer(_red.reduce_and_p)
reduce_or = _reducer(_red.reduce_or_p)


def _axis(name, axis, ndim):
    """axis as an int in [0, ndim); negative axes count from the end."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an operand of rank {ndim}; "
                         f"it must be in [{-ndim}, {ndim})")
    return axis % ndim


def _argminmax(prim, operand, axis, index_dtype):
    x = as_operand(operand)
    axis = _axis(prim.name, axis, x.aval.ndim)
    return prim.bind(x, axes=(axis,), index_dtype=dtypes.canonicalize(index_dtype))


def argmax(operand, axis, index_dtype):
    """Index of the first maximum along `axis` (a NaN counts as the maximum)."""
    return _argminmax(_red.argmax_p, operand, axis, index_dtype)


def argmin(operand, axis, index_dtype):
    """Index of the first minimum along `axis` (a NaN counts as the minimum)."""
    return _argminmax(_red.argmin_p, operand, axis, index_dtype)


def _cumulative(prim, doc):
    def fn(operand, axis=0, reverse=False):
        x = as_operand(operand)
        return prim.bind(x, axis=_axis(prim.name, axis, x.aval.ndim), reverse=bool(reverse))
    core.named_function(fn, prim.name)
    fn.__doc__ = doc
    return fn


cumsum = _cumulative(_red.cumsum_p, "Cumulative sum along `axis` (from the end if reverse).")
cumprod = _cumulative(_red.cumprod_p, "Cumulative product along `axis` (from the end if reverse).")
cummax = _cumulative(_red.cummax_p, "Cumulative maximum along `axis` (from the end if reverse).")
cummin = _cumulative(_red.cummin_p, "Cumulative minimum along `axis` (from the end if reverse).")
cumlogsumexp = _cumulative(_red.cumlogsumexp_p,
                           "Cumulative log-sum-exp along `axis` (from the end if reverse).")


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sort one array, or a sequence of arrays of one shape by their first num_keys
    (lexicographically); a sequence gives back a tuple."""
    single = not isinstance(operand, (list, tuple))
    operands = [as_operand(x) for x in ([operand] if single else operand)]
    if not operands:
        raise TypeError("lax.sort needs at least one operand")
    dimension = _axis("sort", dimension, operands[0].aval.ndim)
    outs = _sorting.sort_p.bind(*operands, dimension=dimension, is_stable=bool(is_stable),
                                num_keys=operator.index(num_keys))
    return outs[0] if single else tuple(outs)


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sort `keys` along `dimension` and permute `values` alike."""
    return sort((keys, values), dimension, is_stable, num_keys=1)


def top_k(operand, k, *, axis=-1):
    """The k largest entries along `axis` (largest first, ties to the lower index) and
    their int32 indices."""
    x = as_operand(operand)
    if x.aval.ndim == 0:
        raise ValueError(f"top_k needs an operand of rank >= 1, got {x.aval.str_short()}")
    axis = _axis("top_k", axis, x.aval.ndim)
    return tuple(_sorting.top_k_p.bind(x, k=operator.index(k), axis=axis))
