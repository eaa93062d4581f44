"""Implicitly differentiated solves: custom_linear_solve and custom_root (JAX's lax API).

Both trace the user's functions into const-free jaxprs whose closed-over values become
explicit operands, so that derivatives with respect to those values flow through the
implicit function theorem rather than through the solver's iterations."""
from funcgraph import core, ir, tree_util
from funcgraph.interpreters.ad_util import Zero, instantiate, tangent_aval
from funcgraph.interpreters.eval import eval_jaxpr
from funcgraph.interpreters.jvp import jvp_flat
from funcgraph.interpreters.staging import trace_flat
from funcgraph.interpreters.transpose import backward_pass
from funcgraph.lax._operands import as_operand
from funcgraph.primitives.custom_ad import custom_jvp_call_p
from funcgraph.primitives.elementwise import neg_p
from funcgraph.primitives.jaxprs import const_free
from funcgraph.primitives.linear_solve import linear_solve_p


def _check_tree(func_name, expected_name, actual_tree, expected_tree, has_aux=False):
    if has_aux:
        children = actual_tree.children()
        if len(children) != 2:
            raise ValueError(f"{func_name}() produced a pytree with structure {actual_tree}, "
                             f"but a pytree tuple with auxiliary output was expected because "
                             f"has_aux was set to True.")
        actual_tree = children[0]
    if actual_tree != expected_tree:
        raise TypeError(f"{func_name}() output pytree structure must match {expected_name}, "
                        f"got {actual_tree} and {expected_tree}.")


def _check_shapes(func_name, expected_name, actual, expected):
    actual_shapes = [core.get_aval(x).shape for x in actual]
    expected_shapes = [core.get_aval(x).shape for x in expected]
    if actual_shapes != expected_shapes:
        raise ValueError(f"{func_name}() output shapes must match {expected_name}, "
                         f"got {actual_shapes} and {expected_shapes}")


def _trace_tree_fun(fun, in_tree, avals):
    """(const-free jaxpr of fun(*tree) on flat leaves, its consts, its output tree)."""
    out_trees = []

    def flat(*leaves):
        out_leaves, out_tree = tree_util.tree_flatten(fun(*tree_util.tree_unflatten(in_tree,
                                                                                    leaves)))
        out_trees.append(out_tree)
        return out_leaves
    jaxpr, consts = const_free(trace_flat(flat, list(avals)))
    return jaxpr, consts, out_trees[0]


def _jaxpr_fun(jaxpr, consts, out_tree):
    """The pytree function a const-free jaxpr computes, its consts applied."""
    def fun(*args):
        leaves = tree_util.tree_leaves(args)
        return tree_util.tree_unflatten(out_tree, eval_jaxpr(jaxpr.jaxpr, [], *consts, *leaves))
    return fun


def _shape_checked(fun, name, b_leaves, has_aux):
    def checked(x):
        out = fun(x)
        _check_shapes(name, "b", tree_util.tree_leaves(out[0] if has_aux else out), b_leaves)
        return out
    return checked


def _transposed(matvec_jaxpr, matvec_consts, tree):
    """vecmat: the transpose of the linear map matvec (x -> A^T x)."""
    inner = matvec_jaxpr.jaxpr
    n = len(matvec_consts)
    # The consts become defined inputs (constvars); the vector leaves are the linear ones.
    linear = ir.Jaxpr(inner.invars[:n], inner.invars[n:], inner.outvars, inner.eqns)

    def vecmat(ct):
        cts = backward_pass(linear, list(matvec_consts), tree_util.tree_leaves(ct))
        return tree_util.tree_unflatten(tree, [instantiate(c) for c in cts])
    return vecmat


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False,
                        has_aux=False):
    """x = solve(matvec, b), differentiated as x = A^-1 b for the linear map A = matvec
    (JAX's lax.custom_linear_solve; the required invariant matvec(x) == b is not
    checked)."""
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_leaves, tree = tree_util.tree_flatten(b)
    b_leaves = [as_operand(x) for x in b_leaves]
    b_avals = [core.get_aval(x) for x in b_leaves]
    in_tree = tree_util.tree_structure((b,))

    matvec_jaxpr, matvec_consts, out_tree = _trace_tree_fun(
        _shape_checked(matvec, "matvec", b_leaves, False), in_tree, b_avals)
    _check_tree("matvec", "b", out_tree, tree)
    matvec_fun = _jaxpr_fun(matvec_jaxpr, matvec_consts, tree)

    def solve_with(solver, linear_map):
        return lambda x: solver(linear_map, x)

    solve_jaxpr, solve_consts, out_tree = _trace_tree_fun(
        _shape_checked(solve_with(solve, matvec_fun), "solve", b_leaves, has_aux), in_tree,
        b_avals)
    _check_tree("solve", "b", out_tree, tree, has_aux)

    if transpose_solve is None:
        vecmat_jaxpr = tr_solve_jaxpr = None
        vecmat_consts = tr_solve_consts = []
    else:
        if symmetric:
            vecmat_jaxpr, vecmat_consts, vecmat_fun = matvec_jaxpr, matvec_consts, matvec_fun
        else:
            vecmat_jaxpr, vecmat_consts, _ = _trace_tree_fun(
                _transposed(matvec_jaxpr, matvec_consts, tree), in_tree, b_avals)
            vecmat_fun = _jaxpr_fun(vecmat_jaxpr, vecmat_consts, tree)
        tr_solve_jaxpr, tr_solve_consts, tr_tree = _trace_tree_fun(
            _shape_checked(solve_with(transpose_solve, vecmat_fun), "transpose_solve",
                           b_leaves, has_aux), in_tree, b_avals)
        _check_tree("transpose_solve", "b", tr_tree, tree, has_aux)

    groups = [matvec_consts, vecmat_consts, solve_consts, tr_solve_consts]
    num_aux = len(solve_jaxpr.out_avals) - len(b_leaves)
    outs = linear_solve_p.bind(
        *[c for g in groups for c in g], *b_leaves,
        const_lengths=tuple(len(g) for g in groups), matvec=matvec_jaxpr, vecmat=vecmat_jaxpr,
        solve=solve_jaxpr, transpose_solve=tr_solve_jaxpr, num_aux=num_aux)
    return tree_util.tree_unflatten(out_tree, outs)


# --- custom_root ---------------------------------------------------------------------

def _root_call(lengths, jaxprs, args):
    """The solution (and aux) of f(x) = 0 by the traced solve, as a custom_jvp call whose
    JVP is the implicit function theorem's."""
    f_jaxpr, solve_jaxpr, tangent_jaxpr = jaxprs
    n_f, n_solve, n_tangent = lengths

    def call(*xs):
        solve_consts = xs[n_f:n_f + n_solve]
        guess = xs[n_f + n_solve + n_tangent:]
        return list(eval_jaxpr(solve_jaxpr.jaxpr, [], *solve_consts, *guess))

    def jvp(primals, tangents):
        outs = _root_call(lengths, jaxprs, primals)
        n_x = len(f_jaxpr.out_avals)
        solution = outs[:n_x]
        f_consts, f_tangents = primals[:n_f], tangents[:n_f]
        tangent_consts = primals[n_f + n_solve:n_f + n_solve + n_tangent]
        # f(m, x*(m)) = 0, so dx* = -(d_x f)^-1 (d_m f dm): tangent_solve inverts d_x f.
        _, rhs = jvp_flat(lambda *ms: eval_jaxpr(f_jaxpr.jaxpr, [], *ms, *solution),
                          list(f_consts), list(f_tangents))
        rhs = [instantiate(t) for t in rhs]
        solved = eval_jaxpr(tangent_jaxpr.jaxpr, [], *tangent_consts, *solution, *rhs)
        dx = [neg_p.bind(t) for t in solved]
        aux_tangents = [instantiate(Zero(tangent_aval(core.get_aval(a)))) for a in outs[n_x:]]
        return outs, dx + aux_tangents

    return custom_jvp_call_p.bind(*args, call_jaxpr=call, jvp=jvp, num_consts=0,
                                  name="custom_root")


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """Find a root x of f (f(x) = 0) with solve(f, initial_guess), differentiated
    implicitly: tangent_solve(g, y) solves the linear system g(x) = y for the
    linearization g of f at the solution (JAX's lax.custom_root)."""
    guess_leaves, guess_tree = tree_util.tree_flatten(initial_guess)
    guess_leaves = [as_operand(x) for x in guess_leaves]
    avals = [core.get_aval(x) for x in guess_leaves]
    in_tree = tree_util.tree_structure((initial_guess,))

    f_jaxpr, f_consts, out_tree = _trace_tree_fun(f, in_tree, avals)
    _check_tree("f", "initial_guess", out_tree, guess_tree)
    f_fun = _jaxpr_fun(f_jaxpr, f_consts, guess_tree)
    solve_jaxpr, solve_consts, solution_tree = _trace_tree_fun(
        lambda x: solve(f_fun, x), in_tree, avals)
    _check_tree("solve", "initial_guess", solution_tree, guess_tree, has_aux)

    def linearize_and_solve(x, b):
        x_leaves = tree_util.tree_leaves(x)

        def f_jvp(t):
            _, out = jvp_flat(lambda *xs: tree_util.tree_leaves(
                f_fun(tree_util.tree_unflatten(guess_tree, xs))),
                x_leaves, tree_util.tree_leaves(t))
            return tree_util.tree_unflatten(guess_tree, [instantiate(o) for o in out])
        return tangent_solve(f_jvp, b)

    tangent_jaxpr, tangent_consts, out_tree = _trace_tree_fun(
        linearize_and_solve, tree_util.tree_structure((initial_guess, initial_guess)),
        avals * 2)
    _check_tree("tangent_solve", "x", out_tree, guess_tree)

    lengths = (len(f_consts), len(solve_consts), len(tangent_consts))
    outs = _root_call(lengths, (f_jaxpr, solve_jaxpr, tangent_jaxpr),
                      [*f_consts, *solve_consts, *tangent_consts, *guess_leaves])
    return tree_util.tree_unflatten(solution_tree, outs)
