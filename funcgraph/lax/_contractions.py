"""Contractions: dot_general, dot and batch_matmul."""
from funcgraph import dtypes
from funcgraph.lax._operands import as_operand
from funcgraph.primitives import contractions as con


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    dims = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    if preferred_element_type is not None:
        preferred_element_type = dtypes.canonicalize(preferred_element_type)
    return con.dot_general_p.bind(as_operand(lhs), as_operand(rhs), dimension_numbers=dims,
                                  precision=None, preferred_element_type=preferred_element_type)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    if lhs.aval.ndim not in (1, 2) or rhs.aval.ndim not in (1, 2):
        raise TypeError(f"lax.dot takes operands of rank 1 or 2, got {lhs.aval.str_short()} "
                        f"and {rhs.aval.str_short()}")
    return dot_general(lhs, rhs, (((lhs.aval.ndim - 1,), (0,)), ((), ())),
                       precision, preferred_element_type)


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over matching leading (batch) dimensions: [..., m, k] @ [..., k, n]."""
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    nd = lhs.aval.ndim
    if nd < 2 or rhs.aval.ndim != nd or lhs.aval.shape[:-2] != rhs.aval.shape[:-2]:
        raise TypeError(f"batch_matmul: operands need equal rank >= 2 and equal batch "
                        f"dimensions, got {lhs.aval.str_short()} and {rhs.aval.str_short()}")
    batch = tuple(range(nd - 2))
    return dot_general(lhs, rhs, (((nd - 1,), (nd - 2,)), (batch, batch)), precision)
