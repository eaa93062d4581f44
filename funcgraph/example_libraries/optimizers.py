"""First-order optimizers as (init_fun, update_fun, get_params) triples, with the API and
update rules of jax.example_libraries.optimizers:

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    state = opt_init(params)
    state = opt_update(step, grads, state)
    params = get_params(state)

Each optimizer is written for one array; `optimizer` lifts it to pytrees of parameters.
The state, an OptimizerState, is a pytree, so it passes through jit."""
import collections
import functools
import warnings

import funcgraph.numpy as fnp
from funcgraph import tree_util

OptimizerState = collections.namedtuple("OptimizerState",
                                        ["packed_state", "tree_def", "subtree_defs"])
# As in JAX, only packed_state holds leaves; the treedefs are aux data.  (optree warns that
# a namedtuple subclass gets its own flattening: that is the point here.)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)
    tree_util.register_pytree_node(
        OptimizerState,
        lambda state: ((state.packed_state,), (state.tree_def, state.subtree_defs)),
        lambda aux, children: OptimizerState(children[0], *aux))

Optimizer = collections.namedtuple("Optimizer", ["init_fn", "update_fn", "params_fn"])


def optimizer(opt_maker):
    """Decorator: an optimizer over one array -> the same optimizer over pytrees."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        def tree_init(x0_tree):
            x0_flat, treedef = tree_util.tree_flatten(x0_tree)
            flat_states = [tree_util.tree_flatten(init(x0)) for x0 in x0_flat]
            return OptimizerState([leaves for leaves, _ in flat_states], treedef,
                                  [sub for _, sub in flat_states])

        def tree_update(i, grad_tree, opt_state):
            packed, treedef, subtrees = opt_state
            grads, grad_treedef = tree_util.tree_flatten(grad_tree)
            if grad_treedef != treedef:
                raise TypeError(f"optimizer update function was passed a gradient tree that "
                                f"did not match the parameter tree structure with which it "
                                f"was initialized: parameter tree {treedef} and grad tree "
                                f"{grad_treedef}.")
            new_packed = []
            for g, leaves, sub in zip(grads, packed, subtrees, strict=True):
                new_leaves, new_sub = tree_util.tree_flatten(
                    update(i, g, tree_util.tree_unflatten(sub, leaves)))
                if new_sub != sub:
                    raise TypeError(f"optimizer update function produced an output structure "
                                    f"that did not match its input structure: input {sub} "
                                    f"and output {new_sub}.")
                new_packed.append(new_leaves)
            return OptimizerState(new_packed, treedef, subtrees)

        def tree_get_params(opt_state):
            packed, treedef, subtrees = opt_state
            params = [get_params(tree_util.tree_unflatten(sub, leaves))
                      for leaves, sub in zip(packed, subtrees, strict=True)]
            return tree_util.tree_unflatten(treedef, params)
        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


def _first(state):
    return state[0]


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x -= step_size(i) * g."""
    step_size = make_schedule(step_size)
    return (lambda x0: x0), (lambda i, g, x: x - step_size(i) * g), (lambda x: x)


@optimizer
def momentum(step_size, mass):
    """Heavy-ball momentum: v = mass * v + g; x -= step_size(i) * v."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity
    return (lambda x0: (x0, fnp.zeros_like(x0))), update, _first


@optimizer
def nesterov(step_size, mass):
    """Nesterov momentum: v = mass * v + g; x -= step_size(i) * (mass * v + g)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity
    return (lambda x0: (x0, fnp.zeros_like(x0))), update, _first


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad with momentum over the normalized gradient."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + fnp.square(g)
        g_sq_inv_sqrt = fnp.where(g_sq > 0, 1. / fnp.sqrt(g_sq), 0.0)
        m = (1. - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m
    return (lambda x0: (x0, fnp.zeros_like(x0), fnp.zeros_like(x0))), update, _first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: x -= step_size(i) * g / sqrt(running mean of g**2 + eps)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + fnp.square(g) * (1. - gamma)
        return x - step_size(i) * g / fnp.sqrt(avg_sq_grad + eps), avg_sq_grad
    return (lambda x0: (x0, fnp.zeros_like(x0))), update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum on the scaled step."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + fnp.square(g) * (1. - gamma)
        mom = momentum * mom + step_size(i) * g / fnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom
    return (lambda x0: (x0, fnp.zeros_like(x0), fnp.zeros_like(x0))), update, _first


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba, 2015) with bias-corrected moment estimates."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * fnp.square(g) + b2 * v
        mhat = m / (1 - fnp.asarray(b1, m.dtype) ** (i + 1))
        vhat = v / (1 - fnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * mhat / (fnp.sqrt(vhat) + eps), m, v
    return (lambda x0: (x0, fnp.zeros_like(x0), fnp.zeros_like(x0))), update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax: Adam with the infinity norm of past gradients."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = fnp.maximum(b2 * u, fnp.abs(g))
        x = x - (step_size(i) / (1 - fnp.asarray(b1, m.dtype) ** (i + 1))) * m / (u + eps)
        return x, m, u
    return (lambda x0: (x0, fnp.zeros_like(x0), fnp.zeros_like(x0))), update, _first


# --- step-size schedules ---

@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (memory-efficient adaptive optimizer, Anil et al. 2019): one accumulator vector
    per axis of each parameter; their broadcast minimum bounds the squared-gradient sum."""
    step_size = make_schedule(step_size)

    def along_axis(ndim, v, axis):
        shape = [1] * ndim
        shape[axis:axis + 1] = [-1]  # a scalar gradient (ndim 0) keeps v's one axis
        return v.reshape(shape)

    def init(x0):
        x_shape = fnp.shape(x0)
        x0 = fnp.atleast_1d(x0)
        return x0, fnp.zeros_like(x0), [fnp.zeros(n, x0.dtype) for n in x0.shape], x_shape

    def update(i, g, state):
        x, m, vs, x_shape = state
        bounds = [along_axis(g.ndim, v, axis) for axis, v in enumerate(vs)]
        accum = functools.reduce(fnp.minimum, bounds) + fnp.square(g)
        inv_sqrt = fnp.where(accum > 0, 1.0 / fnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        others = lambda axis: tuple(a for a in range(x.ndim) if a != axis)  # noqa: E731
        vs = [accum.max(others(axis)) for axis in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state):
        x, _, _, x_shape = state
        return x.reshape(x_shape)

    return init, update, get_params


def constant(step_size):
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate):
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    if staircase:
        return lambda i: step_size / (1 + decay_rate * fnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    def schedule(i):
        i = fnp.minimum(i, decay_steps)
        return (step_size - final_step_size) * (1 - i / decay_steps) ** power + final_step_size
    return schedule


def piecewise_constant(boundaries, values):
    boundaries, values = fnp.array(boundaries), fnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")
    return lambda i: values[fnp.sum(i > boundaries)]


def make_schedule(scalar_or_schedule):
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if fnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# --- utilities ---

class JoinPoint:
    """Marks where an optimizer state's per-parameter pytree joins the parameter tree."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An OptimizerState as the parameter tree with a JoinPoint holding each parameter's
    state (a plain pytree, for serialization)."""
    packed, treedef, subtrees = opt_state
    joins = [JoinPoint(tree_util.tree_unflatten(sub, leaves))
             for leaves, sub in zip(packed, subtrees, strict=True)]
    return tree_util.tree_unflatten(treedef, joins)


def pack_optimizer_state(marked_pytree):
    """The inverse of unpack_optimizer_state."""
    joins, treedef = tree_util.tree_flatten(
        marked_pytree, is_leaf=lambda x: isinstance(x, JoinPoint))
    if not all(isinstance(j, JoinPoint) for j in joins):
        raise TypeError("pack_optimizer_state expects a pytree whose leaves are JoinPoints")
    flat = [tree_util.tree_flatten(j.subtree) for j in joins]
    return OptimizerState([leaves for leaves, _ in flat], treedef, [sub for _, sub in flat])


def l2_norm(tree):
    """The l2 norm of all the leaves of tree together."""
    leaves = tree_util.tree_leaves(tree)
    return fnp.sqrt(sum(fnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """grad_tree scaled down so that its l2 norm is at most max_norm."""
    norm = l2_norm(grad_tree)
    return tree_util.tree_map(lambda g: fnp.where(norm < max_norm, g, g * (max_norm / norm)),
                              grad_tree)


__all__ = ["OptimizerState", "Optimizer", "optimizer", "sm3", "JoinPoint",
           "pack_optimizer_state", "unpack_optimizer_state", "sgd", "momentum", "nesterov",
           "adagrad", "rmsprop", "rmsprop_momentum", "adam", "adamax", "constant",
           "exponential_decay", "inverse_time_decay", "polynomial_decay",
           "piecewise_constant", "make_schedule", "l2_norm", "clip_grads"]
