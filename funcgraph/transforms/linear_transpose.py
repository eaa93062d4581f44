"""linear_transpose: the transpose of a linear function, with JAX's API."""
import numpy as np

from funcgraph import core, dtypes, tree_util
from funcgraph.interpreters.ad_util import instantiate
from funcgraph.interpreters.staging import trace_flat
from funcgraph.interpreters.transpose import backward_pass
from funcgraph.transforms.api_util import flatten_fun


def _kinds_match(in_dtypes, out_dtypes):
    everything = list(in_dtypes) + list(out_dtypes)
    return (all(dtypes.is_inexact(d) for d in everything) or
            all(np.issubdtype(d, np.integer) for d in everything))


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function fun, traced at the types of primals: a
    function mapping an output cotangent to the tuple of input cotangents."""
    del reduce_axes  # removed in JAX too: accepted and ignored
    leaves, in_tree = tree_util.tree_flatten(primals)
    flat, store = flatten_fun(lambda *args: fun(*args),
                              tree_util.tree_structure((primals, {})))
    # primals may be values or types (avals, ShapeDtypeStructs), as in JAX
    in_avals = [(x if type(x) is core.ShapedArray else core.get_aval(x)).update(weak_type=False)
                for x in leaves]
    closed = trace_flat(flat, in_avals)
    out_avals = closed.out_avals
    in_dtypes, out_dtypes = [a.dtype for a in in_avals], [a.dtype for a in out_avals]
    if not _kinds_match(in_dtypes, out_dtypes):
        raise TypeError(f"linear_transpose only supports [float or complex] -> [float or "
                        f"complex], and integer -> integer functions, but got "
                        f"{[d.name for d in in_dtypes]} -> {[d.name for d in out_dtypes]}.")
    out_tree = store.out_tree

    def transposed_fun(out_cotangent):
        cts, ct_tree = tree_util.tree_flatten(out_cotangent)
        if ct_tree != out_tree:
            raise TypeError(f"cotangent tree does not match function output, expected "
                            f"{out_tree} but got {ct_tree}")
        ct_avals = [core.get_aval(c) for c in cts]
        if any(a.shape != b.shape or a.dtype != b.dtype for a, b in
               zip(ct_avals, out_avals, strict=True)):
            raise TypeError(f"cotangent type does not match function output, expected "
                            f"{[a.str_short() for a in out_avals]} but got "
                            f"{[a.str_short() for a in ct_avals]}")
        in_cts = backward_pass(closed.jaxpr, closed.consts, cts)
        return tree_util.tree_unflatten(in_tree, [instantiate(c) for c in in_cts])
    return transposed_fun
