"""lax control flow: cond, switch, while_loop, fori_loop, scan, map, and
optimization_barrier (JAX's signatures)."""
import functools
import weakref

import numpy as np

from funcgraph import core, dtypes, ir, tree_util
from funcgraph.array import Array
from funcgraph.config import config
from funcgraph.interpreters.batching import manual_axes_key
from funcgraph.interpreters.eval import eval_jaxpr
from funcgraph.interpreters.staging import trace_flat
from funcgraph.lax._elementwise import add, bitwise_or, clamp, convert_element_type, lt, ne
from funcgraph.lax._operands import as_operand
from funcgraph.lax._shapes import expand_dims, reshape
from funcgraph.lax._slicing import concatenate, pad, rev, slice_in_dim
from funcgraph.primitives import control_flow as cf
from funcgraph.primitives.batching_helpers import vmap_flat
from funcgraph.primitives.collectives import pvary_p
from funcgraph.primitives.jaxprs import const_free
from funcgraph.primitives.remat import optimization_barrier_p


def _avals(leaves):
    return [core.get_aval(x) for x in leaves]


def _fn_name(f):
    return getattr(f, "__name__", type(f).__name__)


def _flat_fn(f, in_tree, out_trees, spread=True):
    """f over flat leaves; spread=True calls f(*tree) (operands), else f(tree) (a carry)."""
    def flat(*leaves):
        tree = tree_util.tree_unflatten(in_tree, list(leaves))
        out = f(*tree) if spread else f(tree)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_trees.append(out_tree)
        return out_leaves
    return flat


def _check_callable(function, argument, value):
    if not callable(value):
        raise TypeError(f"lax.{function}: {argument} argument should be a callable, got "
                        f"{type(value).__name__} {value!r}")


def _operand(x):
    """A loop carry or branch operand: Python scalars become (weakly typed) arrays; weak
    types are kept, as in jax (a carry that starts as 0 and stays weak in the body comes
    out weak)."""
    return as_operand(x) if core.is_python_scalar(x) else x


def _match_output_types(outs, avals):
    """Weakly typed outputs of a branch/body adopt the expected (strong) types; outputs
    beyond `avals` (a scan's ys) pass unchanged."""
    fixed = list(outs[len(avals):])
    for o, a in reversed(list(zip(outs, avals))):
        oa = core.get_aval(o)
        if oa.dtype == a.dtype and oa.shape == a.shape and oa.weak_type != a.weak_type:
            o = convert_element_type(o, a.dtype, weak_type=a.weak_type)
        if a.vma - oa.vma:
            o = pvary_p.bind(as_operand(o), axis_name=core.in_mesh_order(
                a.vma - oa.vma, core.current.vma_axes))
        fixed.insert(0, o)
    return fixed


# --- cond and switch ------------------------------------------------------------------

def switch(index, branches, *operands):
    """branches[clamp(index, 0, len(branches) - 1)](*operands)."""
    for i, branch in enumerate(branches):
        _check_callable("switch", f"branches[{i}]", branch)
    branches = list(branches)
    return _switch(index, branches, operands, clamp_index=True,
                   labels=[f"branches[{i}]" for i in range(len(branches))])


def _describe_branches(labels, branches):
    return "\n".join(f"{label} is {core.describe_function(b)}"
                     for label, b in zip(labels, branches))


def _branch_mismatch(what, labels, branches, out_tree, out_avals):
    """JAX's message for branches whose outputs differ: the functions, where they are
    defined, and the first output (by tree path) whose type differs."""
    paths = _leaf_paths(out_tree)
    first, first_avals = labels[0], out_avals[0]
    for label, avals in zip(labels[1:], out_avals[1:]):
        for path, a, b in zip(paths, first_avals, avals):
            if not core.same_type(a, b):
                part = "shapes" if a.shape != b.shape else "dtypes"
                return TypeError(
                    f"{what} must have equal output types but they differ.\n\n"
                    f"{_describe_branches(labels, branches)}\n\n"
                    f"The output of {first} at path {path or '(the output itself)'} has type "
                    f"{a.str_short()} but the corresponding output of {label} has type "
                    f"{b.str_short()}, so the {part} do not match.\n\n"
                    f"Revise {first} and/or {label} so that all output types match.")
    raise AssertionError("no mismatch found")


def _switch(index, branches, operands, clamp_index, labels):
    branches = list(branches)
    if not branches:
        raise ValueError("switch: branches must contain at least one function")
    index_aval = core.get_aval(index)
    if index_aval.shape != () or not dtypes.is_int(index_aval.dtype):
        raise TypeError(f"switch: the index must be a scalar integer, got "
                        f"{index_aval.str_short()}")
    if config.jax_disable_jit and core.concrete_value(index) is not None:
        # As in JAX: with jit disabled a concrete index runs its branch as plain Python.
        i = int(core.concrete_value(index))
        return branches[min(max(i, 0), len(branches) - 1)](*operands)
    index = convert_element_type(index, dtypes.int32)
    if clamp_index and len(branches) > 1:
        index = clamp(np.int32(0), index, np.int32(len(branches) - 1))
    leaves, in_tree = tree_util.tree_flatten(operands)
    leaves = [_operand(x) for x in leaves]
    avals = _avals(leaves)
    out_trees = []
    fns = [_flat_fn(b, in_tree, out_trees) for b in branches]
    traced = [trace_flat(f, avals) for f in fns]
    what = "cond branches" if labels[0] == "false_fun" else "switch branches"
    # In a cond the branch taken when pred is True reads first, as in jax's messages.
    order = [1, 0] if what == "cond branches" else list(range(len(branches)))
    ordered_labels, ordered = [labels[i] for i in order], [branches[i] for i in order]
    if any(t != out_trees[0] for t in out_trees):
        raise TypeError(f"{what} must return the same tree structure, but they differ.\n\n"
                        f"{_describe_branches(ordered_labels, ordered)}\n\n" +
                        "\n".join(f"{labels[i]} returns {out_trees[i]}" for i in order))
    out_avals = [t.out_avals for t in traced]
    if any(not all(core.same_type(a, b) for a, b in zip(o, out_avals[0])) for o in out_avals):
        raise _branch_mismatch(what, ordered_labels, ordered, out_trees[0],
                               [out_avals[i] for i in order])
    # As in jax, an output is weakly typed where the first branch's is (cond's false_fun:
    # other branches adopt its type), and varies along the mesh axes along which any
    # branch's does (not along those of the index).
    target = [a.update(vma=core.NO_AXES.union(*[o[i].vma for o in out_avals]))
              for i, a in enumerate(out_avals[0])]
    typed = [lambda *xs, t=t: _match_output_types(eval_jaxpr(t.jaxpr, t.consts, *xs), target)
             for t in traced]
    joined, consts = cf.trace_joined(typed, avals)
    operands = [*consts, *leaves]
    forwarded = _forwarded_outputs(joined)
    if any(f is not None for f in forwarded):
        joined = [_drop_outputs(j, forwarded) for j in joined]
    outs = iter(cf.cond_p.bind(index, *operands, branches=tuple(joined)))
    outs = [next(outs) if f is None else operands[f] for f in forwarded]
    return tree_util.tree_unflatten(out_trees[0], outs)


def _forwarded_outputs(jaxprs):
    """Per output: the index of the input every branch returns unchanged there, or None.
    As jax's cond, such outputs are the operand itself, not results of cond_p (so a
    value passed through stays unbatched under vmap of a batched predicate)."""
    found = []
    for outs in zip(*[j.jaxpr.outvars for j in jaxprs]):
        where = [j.jaxpr.invars.index(o) if o in j.jaxpr.invars else None
                 for j, o in zip(jaxprs, outs, strict=True)]
        found.append(where[0] if where[0] is not None and len(set(where)) == 1 else None)
    return found


def _drop_outputs(closed, forwarded):
    inner = closed.jaxpr
    kept = [v for v, f in zip(inner.outvars, forwarded, strict=True) if f is None]
    return ir.ClosedJaxpr(ir.Jaxpr(inner.constvars, inner.invars, kept, inner.eqns),
                          closed.consts)


_NO_OPERAND = object()


def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    """true_fun(*operands) if pred else false_fun(*operands), traced both ways; jax's
    older keyword `operand=x` is the single operand x, and its older five-argument form
    cond(pred, true_operand, true_fun, false_operand, false_fun) is accepted too."""
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError(f"if 'operand' keyword is passed then no positional operands "
                            f"can be passed, got {operand=} and positional operands "
                            f"{operands}")
        operands = (operand,)
    if not callable(true_fun) and callable(false_fun) and len(operands) == 2 \
            and callable(operands[1]):
        # jax's older form cond(pred, true_operand, true_fun, false_operand, false_fun)
        x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
        return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
    if not callable(true_fun) or not callable(false_fun):
        raise TypeError("cond: true_fun and false_fun must be callable (operands come after "
                        "them: cond(pred, true_fun, false_fun, *operands))")
    pred_aval = core.get_aval(pred)
    if pred_aval.shape != ():
        raise TypeError(f"cond: the predicate must be a scalar, got {pred_aval.str_short()}; "
                        f"use funcgraph.numpy.where for elementwise selection")
    if pred_aval.dtype != dtypes.bool_:
        pred = ne(pred, np.zeros((), pred_aval.dtype))
    return _switch(convert_element_type(pred, dtypes.int32), [false_fun, true_fun],
                   operands, clamp_index=False, labels=["false_fun", "true_fun"])


# --- while_loop and fori_loop ------------------------------------------------------------

def while_loop(cond_fun, body_fun, init_val):
    """while cond_fun(val): val = body_fun(val); the carry keeps one type throughout."""
    _check_callable("while_loop", "cond_fun", cond_fun)
    _check_callable("while_loop", "body_fun", body_fun)
    if config.jax_disable_jit:
        try:
            return _python_while(cond_fun, body_fun, init_val)
        except core.ConcretizationTypeError:
            pass  # a traced predicate: stage the loop as usual (as JAX does)
    leaves, in_tree = tree_util.tree_flatten(init_val)
    leaves = [_operand(x) for x in leaves]
    avals = _avals(leaves)
    body_trees, cond_trees = [], []
    body = trace_flat(_flat_fn(body_fun, in_tree, body_trees, spread=False), avals)
    if body_trees[0] != in_tree:
        raise TypeError(f"while_loop body_fun ({_fn_name(body_fun)}) must return the structure "
                        f"of its input {in_tree}, got {body_trees[0]}")
    leaves, changed = _promote_weak_carry(leaves, body.out_avals)
    if changed:
        avals = _avals(leaves)
        body = trace_flat(_flat_fn(body_fun, in_tree, body_trees, spread=False), avals)
    _check_carry("while_loop body function", body_fun, avals, body.out_avals, in_tree)
    body = trace_flat(lambda *xs: _match_output_types(
        eval_jaxpr(body.jaxpr, body.consts, *xs), avals), avals)
    cond_closed = trace_flat(_flat_fn(cond_fun, in_tree, cond_trees, spread=False), avals)
    pred = cond_closed.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != dtypes.bool_:
        raise TypeError(f"while_loop cond_fun ({_fn_name(cond_fun)}) must return a boolean "
                        f"scalar, got {[a.str_short() for a in pred]}")
    cond_jaxpr, cond_consts = const_free(cond_closed)
    body_jaxpr, body_consts = const_free(body)
    outs = cf.while_p.bind(*cond_consts, *body_consts, *leaves, cond_jaxpr=cond_jaxpr,
                           body_jaxpr=body_jaxpr, cond_nconsts=len(cond_consts),
                           body_nconsts=len(body_consts))
    return tree_util.tree_unflatten(in_tree, outs)


def _leaf_paths(tree):
    dummy = tree_util.tree_unflatten(tree, list(range(tree.num_leaves)))
    return [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(dummy)[0]]


def _check_carry(what, fun, carry_avals, out_avals, tree):
    for path, c, o in zip(_leaf_paths(tree), carry_avals, out_avals):
        if core.same_type(c, o) and o.vma - c.vma:
            axes = core.in_mesh_order(o.vma - c.vma, core.current.vma_axes)
            raise TypeError(
                f"{what} carry input and carry output must have equal types, but they "
                f"differ:\n\nThe input carry component carry{path} has type {c.str_short()} "
                f"but the corresponding output carry component has type {o.str_short()}, so "
                f"the manual axis types do not match ({what} is "
                f"{core.describe_function(fun)}).\n\nThis might be fixed by applying "
                f"`lax.pcast(..., {axes}, to='varying')`, to the initial carry value "
                f"corresponding to the input carry component carry{path}.\n\nRevise the "
                f"function so that all output types match the corresponding input types.")
        if not core.same_type(c, o):
            part = "shapes" if c.shape != o.shape else "dtypes"
            raise TypeError(
                f"{what} carry input and carry output must have equal types, but they "
                f"differ:\n\nThe input carry component carry{path} has type {c.str_short()} "
                f"but the corresponding output carry component has type {o.str_short()}, so "
                f"the {part} do not match ({what} is {core.describe_function(fun)}).\n\n"
                f"Revise the function so that all output types match the corresponding input "
                f"types (for example, convert the initial value with .astype).")


def _promote_weak_carry(leaves, out_avals):
    """As in JAX: a weakly typed initial carry stays weak where the body keeps it weak,
    and takes the (strong) type the body gives it otherwise, when that dtype is where
    the two promote to (a weak 0 carry may become float32; a weak 1.0 carry may not
    become int32, which is a type error)."""
    changed, new = False, []
    for x, o in zip(leaves, out_avals, strict=True):
        a = core.get_aval(x)
        if (a.weak_type and a.shape == o.shape and (a.dtype != o.dtype or not o.weak_type)
                and dtypes.promote_weak((a.dtype, True), (o.dtype, o.weak_type))[0] == o.dtype):
            x = convert_element_type(x, o.dtype)
            changed = True
        new.append(x)
    return new, changed


def _concrete_int(x):
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    if isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iu":
        return int(x)
    if type(x) is Array and not x.shape and x.dtype.kind in "iu":
        return int(x)
    return None


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """for i in range(lower, upper): val = body_fun(i, val).  With concrete (Python int)
    bounds it is a scan, so reverse-mode differentiation works; otherwise a while_loop."""
    _check_callable("fori_loop", "body_fun", body_fun)
    lo, hi = _concrete_int(lower), _concrete_int(upper)
    if lo is not None and hi is not None:
        # The index starts as the Python int lo, so it is a weak int32, as in jax.
        @functools.wraps(body_fun)  # errors about the loop body name the user's function
        def step(carry, _):
            i, val = carry
            return (i + 1, body_fun(i, val)), None
        (_, result), _ = scan(step, (lo, init_val), None, length=max(hi - lo, 0),
                              unroll=unroll or 1)
        return result
    dtype = core.get_aval(lower).dtype if not core.is_python_scalar(lower) else \
        core.get_aval(upper).dtype
    lower = _bound(lower, dtype)
    upper = _bound(upper, dtype)

    def cond_fn(carry):
        i, u, _ = carry
        return lt(i, u)

    def body(carry):
        i, u, val = carry
        return add(i, np.array(1, dtype)), u, body_fun(i, val)
    return while_loop(cond_fn, body, (lower, upper, init_val))[2]


def _bound(x, dtype):
    """A loop bound in dtype; a Python int becomes a constant, not a conversion."""
    if core.is_python_scalar(x):
        return np.array(x, dtype)
    return convert_element_type(x, dtype)


def _python_while(cond_fun, body_fun, val):
    while cond_fun(val):
        val = body_fun(val)
    return val


# --- scan and map ---------------------------------------------------------------------------

def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """carry, ys = scan(f, init, xs): loop f(carry, x) -> (carry, y) over the leading axis."""
    _check_callable("scan", "f", f)
    if not isinstance(unroll, bool) and isinstance(unroll, int) and unroll < 0:
        raise ValueError(f"scan: unroll must be a positive int or a bool, got {unroll}")
    init_leaves, init_tree = tree_util.tree_flatten(init)
    init_leaves = [_operand(x) for x in init_leaves]
    xs_leaves, xs_tree = tree_util.tree_flatten(xs)
    lengths = {core.get_aval(x).shape[0] if core.get_aval(x).shape else None
               for x in xs_leaves}
    if None in lengths:
        raise ValueError("scan: every leaf of xs needs a leading axis to scan over")
    if length is not None:
        lengths.add(int(length))
    if len(lengths) > 1:
        raise ValueError(f"scan: the leading axes of xs (and length=) disagree: "
                         f"{sorted(lengths)}")
    if not lengths:
        raise ValueError("scan: with xs=None, length= must be given")
    n = lengths.pop()
    if config.jax_disable_jit:
        return _python_scan(f, init, xs_leaves, xs_tree, n, reverse)
    carry_avals = _avals(init_leaves)
    x_avals = [a.update(shape=a.shape[1:]) for a in _avals(xs_leaves)]
    cache_key = (init_tree, xs_tree, tuple(carry_avals), tuple(x_avals), _trace_context())
    cached = _cached_scan_body(f, cache_key)
    if cached is not None:  # as jax's, the same body over the same types is traced once
        first_carry_avals, traced, y_tree = cached
        init_leaves, _ = _promote_weak_carry(init_leaves, first_carry_avals)
        return _bind_scan(traced, init_leaves, xs_leaves, init_tree, y_tree, n, reverse,
                          unroll)
    out_trees = []

    def body(*flat):
        carry = tree_util.tree_unflatten(init_tree, list(flat[:len(carry_avals)]))
        x = tree_util.tree_unflatten(xs_tree, list(flat[len(carry_avals):]))
        result = f(carry, x)
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError(f"scan body ({_fn_name(f)}) must return a pair (carry, y)")
        new_carry, y = result
        carry_leaves, carry_tree = tree_util.tree_flatten(new_carry)
        if carry_tree != init_tree:
            raise TypeError(f"scan body ({_fn_name(f)}) must return a carry structured like "
                            f"the initial carry {init_tree}, got {carry_tree}")
        y_leaves, y_tree = tree_util.tree_flatten(y)
        out_trees.append(y_tree)
        return carry_leaves + y_leaves

    traced = trace_flat(body, carry_avals + x_avals)
    first_carry_avals = traced.out_avals[:len(carry_avals)]
    init_leaves, changed = _promote_weak_carry(init_leaves, first_carry_avals)
    if changed:
        carry_avals = _avals(init_leaves)
        out_trees.clear()
        traced = trace_flat(body, carry_avals + x_avals)
    _check_carry("scan body function", f, carry_avals, traced.out_avals[:len(carry_avals)],
                 init_tree)
    traced = trace_flat(lambda *a: _match_output_types(
        eval_jaxpr(traced.jaxpr, traced.consts, *a), carry_avals), carry_avals + x_avals)
    _cache_scan_body(f, cache_key, (first_carry_avals, traced, out_trees[0]))
    return _bind_scan(traced, init_leaves, xs_leaves, init_tree, out_trees[0], n, reverse,
                      unroll)


def _bind_scan(traced, init_leaves, xs_leaves, init_tree, y_tree, n, reverse, unroll):
    jaxpr, consts = const_free(traced)
    outs = cf.scan_p.bind(*consts, *init_leaves, *xs_leaves, jaxpr=jaxpr,
                          num_consts=len(consts), num_carry=len(init_leaves), length=n,
                          reverse=bool(reverse), unroll=_unroll(unroll, n))
    carry = tree_util.tree_unflatten(init_tree, outs[:len(init_leaves)])
    return carry, tree_util.tree_unflatten(y_tree, outs[len(init_leaves):])


# scan bodies traced so far: {body function: {(trees, avals, context): trace}}, kept
# while the function lives (jax caches the traced body the same way).
_scan_bodies = weakref.WeakKeyDictionary()


def _trace_context():
    """What a body's trace depends on besides its argument types."""
    return (config.jax_enable_x64, config.jax_default_matmul_precision,
            manual_axes_key())


def _cached_scan_body(f, key):
    try:
        return _scan_bodies.get(f, {}).get(key)
    except TypeError:  # f is not weakly referenceable or not hashable
        return None


def _cache_scan_body(f, key, entry):
    """Remember a trace whose constants are all concrete (one that closed over a value
    of an enclosing transformation belongs to that transformation only)."""
    if any(isinstance(c, core.Tracer) for c in entry[1].consts):
        return
    try:
        _scan_bodies.setdefault(f, {})[key] = entry
    except TypeError:
        pass


def _python_scan(f, carry, xs_leaves, xs_tree, length, reverse):
    """scan with jit disabled: the body runs as plain Python, step by step (JAX's rule,
    zero-length scans included, whose outputs have no known type)."""
    if length == 0:
        raise ValueError("zero-length scan is not supported in disable_jit() mode because "
                         "the output type is unknown.")
    ys, y_tree = [], None
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        x = tree_util.tree_unflatten(xs_tree, [leaf[i] for leaf in xs_leaves])
        carry, y = f(carry, x)
        y_leaves, y_tree = tree_util.tree_flatten(y)
        ys.append(y_leaves)
    if reverse:
        ys.reverse()
    stacked = [concatenate([expand_dims(as_operand(y), (0,)) for y in column], 0)
               for column in zip(*ys, strict=True)]
    return carry, tree_util.tree_unflatten(y_tree, stacked)


def _unroll(unroll, length):
    if unroll is True:
        return max(length, 1)
    if unroll is False or unroll is None:
        return 1
    return max(int(unroll), 1)


def map(f, xs, *, batch_size=None):
    """[f(x) for x in xs] along the leading axis, as a scan; with batch_size, vmapped f
    runs over batches of that size (and the remainder)."""
    _check_callable("map", "f", f)
    if batch_size is None:
        return scan(lambda _, x: (None, f(x)), None, xs)[1]
    leaves, tree = tree_util.tree_flatten(xs)
    n = core.get_aval(leaves[0]).shape[0]
    full, rest = divmod(n, batch_size)
    pieces = []
    if full:
        head = [slice_in_dim(x, 0, full * batch_size) if rest else x for x in leaves]
        batched = [reshape(x, (full, batch_size) + core.get_aval(x).shape[1:]) for x in head]
        ys = scan(lambda _, b: (None, _vmapped(f, tree, b)), None, batched)[1]
        pieces.append(tree_util.tree_map(
            lambda y: reshape(y, (full * batch_size,) + core.get_aval(y).shape[2:]), ys))
    if rest:
        tail = [slice_in_dim(x, full * batch_size, n) for x in leaves]
        pieces.append(_vmapped(f, tree, tail))
    if not pieces:
        return scan(lambda _, x: (None, f(x)), None, xs)[1]
    if len(pieces) == 1:
        return pieces[0]
    return tree_util.tree_map(lambda a, b: concatenate([a, b], 0), *pieces)


def _vmapped(f, tree, leaves):
    """f mapped over the leading axis of the leaves of an argument of structure tree."""
    out_tree = []

    def flat(*xs):
        out_leaves, treedef = tree_util.tree_flatten(f(tree_util.tree_unflatten(tree, list(xs))))
        out_tree.append(treedef)
        return out_leaves
    outs = vmap_flat(flat, list(leaves), [0] * len(leaves), core.get_aval(leaves[0]).shape[0])
    return tree_util.tree_unflatten(out_tree[0], outs)


def associative_scan(fn, elems, reverse=False, axis=0):
    """All prefix combinations of elems along `axis` under the associative fn, in
    O(log n) rounds: combine neighbouring pairs, scan the half-length sequence of pairs,
    then fill in the elements between (the classic odd/even recursion)."""
    leaves, tree = tree_util.tree_flatten(elems)
    if not leaves:
        return elems
    n = core.get_aval(leaves[0]).shape[axis]
    for x in leaves:
        if core.get_aval(x).shape[axis] != n:
            raise ValueError("associative_scan: all elems need the same length along axis")

    def combine(a, b):
        out = fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        return tree_util.tree_leaves(out)

    def slice_(xs, start, stop, step=1):
        return [slice_in_dim(x, start, stop, step, axis) for x in xs]

    def interleave(evens, odds):
        # evens to positions 0, 2, 4, ... and odds to 1, 3, ...: each padded with zeros
        # between its elements, then added (or-ed for booleans).
        out = []
        for e, o in zip(evens, odds):
            extra = core.get_aval(e).shape[axis] - core.get_aval(o).shape[axis]
            spread_e = _pad_axis(e, axis, 0, 1 - extra)
            spread_o = _pad_axis(o, axis, 1, extra)
            join = bitwise_or if core.get_aval(e).dtype == np.bool_ else add
            out.append(join(spread_e, spread_o))
        return out

    def scan(xs):
        length = core.get_aval(xs[0]).shape[axis]
        if length < 2:
            return xs
        pairs = combine(slice_(xs, 0, length - 1, 2), slice_(xs, 1, length, 2))
        odd = scan(pairs)  # prefixes ending at positions 1, 3, 5, ...
        if length % 2 == 0:
            even_rest = combine(slice_(odd, 0, len_(odd) - 1), slice_(xs, 2, length, 2))
        else:
            even_rest = combine(odd, slice_(xs, 2, length, 2))
        evens = [concatenate([slice_([x], 0, 1)[0], r], axis)
                 for x, r in zip(xs, even_rest)]
        return interleave(evens, odd)

    def len_(xs):
        return core.get_aval(xs[0]).shape[axis]

    if reverse:
        leaves = [rev(x, (axis,)) for x in leaves]
    out = scan(leaves)
    if reverse:
        out = [rev(x, (axis,)) for x in out]
    return tree_util.tree_unflatten(tree, out)


def _pad_axis(x, axis, low, high):
    """x with low and high zeros along axis and one zero between its elements there."""
    config = [(0, 0, 0)] * core.get_aval(x).ndim
    config[axis] = (low, high, 1)
    return pad(x, np.zeros((), core.get_aval(x).dtype), config)


def optimization_barrier(operand, /):
    """operand (a pytree) unchanged; XLA may not move computations across the barrier
    (nor merge the ones on either side), which controls scheduling and rematerialization."""
    leaves, tree = tree_util.tree_flatten(operand)
    if not leaves:
        return operand
    outs = optimization_barrier_p.bind(*[as_operand(x) for x in leaves])
    return tree_util.tree_unflatten(tree, outs)
