"""einsum: opt_einsum picks the contraction order; each pairwise contraction is one
dot_general (batch = shared and kept, contracting = shared and summed), followed by
one transpose to the requested output order."""
import collections

import numpy as np
import opt_einsum

from funcgraph.numpy._compiled import compiled_when_eager
from funcgraph import core, dtypes, lax
from funcgraph.lax._sharding import sharded_result
from funcgraph.numpy._core import asarray_operand, aval_of, convert
from funcgraph.primitives import elementwise as ew
from funcgraph.primitives import reductions as red


def einsum(subscripts, *operands, optimize="auto", precision=None,
           preferred_element_type=None, _dot_general=None, out_sharding=None):
    """JAX's einsum; `_dot_general` (jax's private hook, which flax uses) replaces
    lax.dot_general in the pairwise contractions."""
    einsum_fn = _einsum
    if isinstance(subscripts, str):
        try:
            hash((optimize, precision, preferred_element_type, _dot_general))
            einsum_fn = _einsum_program  # one compiled program when eager, as jax's
        except TypeError:
            pass
    return sharded_result(einsum_fn(subscripts, operands, optimize, precision,
                                    preferred_element_type, _dot_general), out_sharding)


def _einsum(subscripts, operands, optimize, precision, preferred_element_type,
            dot_general=None):
    if not isinstance(subscripts, str):
        # the interleaved form einsum(op0, sublist0, op1, sublist1, ..., [out])
        subscripts, operands = _interleaved_to_subscripts((subscripts,) + operands)
    operands = [asarray_operand(x) for x in operands]
    avals = [aval_of(x) for x in operands]
    shapes = [a.shape for a in avals]
    inputs, output = _parse(subscripts, shapes)
    compute = dtypes.promote_weak(*[(a.dtype, a.weak_type) for a in avals])
    if preferred_element_type is None:
        dtype, weak = compute
    else:
        dtype, weak = dtypes.canonicalize(np.dtype(preferred_element_type)), False
    operands = [convert(x, *compute) for x in operands]
    names = list(inputs)
    # as jax's: the contractions accumulate in (and return) the result dtype
    accumulate = dtype if preferred_element_type is None else preferred_element_type
    for inds, einsum_str in _contractions(inputs, output, shapes, optimize):
        result = einsum_str.split("->")[1]
        keep = set(result)
        picked = [operands.pop(i) for i in inds]
        picked_names = [names.pop(i) for i in inds]
        if len(picked) == 1:
            out, out_names = _unary(picked[0], picked_names[0], keep)
        elif len(picked) == 2:
            out, out_names = _binary(picked[0], picked_names[0], picked[1], picked_names[1],
                                     result, accumulate, precision,
                                     dot_general or lax.dot_general)
        else:
            raise NotImplementedError(f"einsum: contraction of {len(picked)} operands at once "
                                      f"(use optimize='greedy' or 'optimal')")
        operands.append(out)
        names.append(out_names)
    (out,), (out_names,) = operands, names
    out, out_names = _unary(out, out_names, set(output))
    out = lax.transpose(out, tuple(out_names.index(c) for c in output))
    return convert(out, dtype, weak)


def _parse(subscripts, shapes):
    """(per-operand names, output names) with ellipses spelled out as letters."""
    try:
        inputs, output, _ = opt_einsum.parser.parse_einsum_input([subscripts] + list(shapes),
                                                                 shapes=True)
    except ValueError as e:
        shown = ", ".join(str(tuple(s)) for s in shapes)
        raise ValueError(f"einsum: subscripts {subscripts!r} don't match the operand shapes "
                         f"{shown}: {e}") from None
    inputs = inputs.split(",")
    for term, shape in core.safe_zip(inputs, shapes):
        if len(term) != len(shape):
            raise ValueError(f"einsum: subscripts {term!r} name {len(term)} dimensions but the "
                             f"operand has shape {tuple(shape)}")
    return inputs, output


def _interleaved_to_subscripts(args):
    args = list(args)
    output = args.pop() if len(args) % 2 else None
    letters = {}

    def term(sublist):
        chars = []
        for s in sublist:
            if s is Ellipsis:
                chars.append("...")
            else:
                chars.append(letters.setdefault(s, opt_einsum.get_symbol(len(letters))))
        return "".join(chars)

    ops, terms = args[0::2], [term(s) for s in args[1::2]]
    subscripts = ",".join(terms)
    if output is not None:
        subscripts += "->" + term(output)
    return subscripts, ops


def _contractions(inputs, output, shapes, optimize):
    """[(operand positions to pop, "ab,bc->ac")] in the order opt_einsum chooses."""
    n = len(shapes)
    if optimize is True:
        optimize = "optimal"
    elif optimize is False or optimize is None:
        # left to right, one pair at a time
        optimize = [(0, 1)] * (n - 1) if n > 1 else [(0,)]
    explicit = ",".join(inputs) + "->" + output
    try:
        _, contractions = opt_einsum.contract_path(explicit, *shapes, shapes=True,
                                                   einsum_call=True, use_blas=True,
                                                   optimize=optimize)
    except ValueError as e:
        shown = ", ".join(str(tuple(s)) for s in shapes)
        raise ValueError(f"einsum: subscripts {explicit!r} don't match the operand shapes "
                         f"{shown}: {e}") from None
    return [(c[0], c[2]) for c in contractions]


def _sum(x, axes):
    if not axes:
        return x
    prim = red.reduce_or_p if aval_of(x).dtype == dtypes.bool_ else red.reduce_sum_p
    return prim.bind(x, axes=tuple(sorted(axes)))


def _delta(shape, axes):
    """bool mask of `shape`: True where the coordinates along `axes` are all equal."""
    iotas = [lax.broadcasted_iota(np.int32, shape, a) for a in axes]
    mask = None
    for other in iotas[1:]:
        eq = ew.eq_p.bind(iotas[0], other)
        mask = eq if mask is None else ew.and_p.bind(mask, eq)
    return mask


def _mask_diagonals(x, names):
    """Zero x off the diagonals of every name repeated within one operand; returns the
    masked x and the repeats' axes (all but each name's first), still to be summed."""
    counts = collections.Counter(names)
    repeats = []
    for name, count in counts.items():
        if count < 2:
            continue
        axes = [i for i, c in enumerate(names) if c == name]
        aval = aval_of(x)
        zero = lax.broadcast_in_dim(np.zeros((), aval.dtype), aval.shape, ())
        x = ew.select_n_p.bind(_delta(aval.shape, axes), zero, x)
        repeats.extend(axes[1:])
    return x, repeats


def _take_diagonals(x, names):
    """Collapse every name repeated within one operand onto its diagonal."""
    x, repeats = _mask_diagonals(x, names)
    return _sum(x, repeats), "".join(c for i, c in enumerate(names) if i not in repeats)


def _unary(x, names, keep):
    """The diagonals and the sums over names not kept, in one reduction."""
    x, repeats = _mask_diagonals(x, names)
    summed = [i for i, c in enumerate(names) if i in repeats or c not in keep]
    x = _sum(x, summed)
    return x, "".join(c for i, c in enumerate(names) if i not in summed)


def _drop_broadcast_ones(x, names, other_shape, other_names):
    """Squeeze size-1 dims whose name has a larger size in the other operand (the
    broadcasting of ellipsis dims); the name then belongs to the other operand alone."""
    shape = aval_of(x).shape
    drop = [i for i, c in enumerate(names)
            if shape[i] == 1 and c in other_names and other_shape[other_names.index(c)] != 1]
    if not drop:
        return x, names
    return lax.squeeze(x, drop), "".join(c for i, c in enumerate(names) if i not in drop)


def _binary(lhs, lhs_names, rhs, rhs_names, result, preferred_element_type, precision,
            dot_general):
    """One pairwise contraction; as jax's, the operands go to dot_general as (rhs, lhs)
    when that order gives the names of `result` directly (no transpose), else as
    (lhs, rhs)."""
    keep = set(result)
    lhs, lhs_names = _take_diagonals(lhs, lhs_names)
    rhs, rhs_names = _take_diagonals(rhs, rhs_names)
    lhs, lhs_names = _drop_broadcast_ones(lhs, lhs_names, aval_of(rhs).shape, rhs_names)
    rhs, rhs_names = _drop_broadcast_ones(rhs, rhs_names, aval_of(lhs).shape, lhs_names)
    # names in one operand only and not kept are summed out before the dot
    lhs, lhs_names = _unary(lhs, lhs_names, keep | set(rhs_names))
    rhs, rhs_names = _unary(rhs, rhs_names, keep | set(lhs_names))
    batch = [c for c in lhs_names if c in rhs_names and c in keep]
    contract = [c for c in lhs_names if c in rhs_names and c not in keep]
    dims = ((tuple(lhs_names.index(c) for c in contract),
             tuple(rhs_names.index(c) for c in contract)),
            (tuple(lhs_names.index(c) for c in batch), tuple(rhs_names.index(c) for c in batch)))
    lhs, rhs = _same_dtype(lhs, rhs)
    lhs_free = "".join(c for c in lhs_names if c not in rhs_names)
    rhs_free = "".join(c for c in rhs_names if c not in lhs_names)
    if "".join(batch) + rhs_free + lhs_free == result:
        (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dims
        out = dot_general(rhs, lhs, ((rhs_contract, lhs_contract), (rhs_batch, lhs_batch)),
                          precision, preferred_element_type=preferred_element_type)
        return out, result
    out = dot_general(lhs, rhs, dims, precision,
                      preferred_element_type=preferred_element_type)
    return out, "".join(batch) + lhs_free + rhs_free


def _same_dtype(lhs, rhs):
    a, b = aval_of(lhs), aval_of(rhs)
    if a.dtype == b.dtype:
        return lhs, rhs
    dtype, _ = dtypes.promote_weak((a.dtype, False), (b.dtype, False))
    return convert(lhs, dtype), convert(rhs, dtype)


_einsum_program = compiled_when_eager(static_argnames=(
    "subscripts", "optimize", "precision", "preferred_element_type", "dot_general"))(_einsum)
