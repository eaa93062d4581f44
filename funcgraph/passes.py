"""IR-to-IR passes run by jit before lowering; each result is type checked.

Every pass takes a ClosedJaxpr and returns a new one (the input is never
mutated), recursing into the sub-jaxprs held in equation params:

    dce             dead code elimination
    cse             common subexpression elimination
    fold_constants  evaluate equations on small constants at compile time
    inline_calls    inline `pjit` calls of trivial jaxprs
    simplify        algebraic rewrites exact for every value (x*1 -> x, ...), which
                    each primitive's block registers in ir.simplify_rules
    optimize        the pipeline jit runs: inline, fold, simplify and CSE in one
                    forward sweep, then DCE in one backward sweep

    print(passes.cse(fg.make_jaxpr(f)(x)))

A sub-jaxpr keeps its signature, except that DCE prunes the unused outputs
and inputs of `pjit` calls, and sub-jaxprs never gain constants (a `pjit`
jaxpr is const-free).  Sub-jaxprs shared by several equations are rewritten
once, so they stay shared.
"""
import numpy as np

from funcgraph import core, ir
from funcgraph.array import Array
from funcgraph.core import safe_zip
from funcgraph.interpreters.eval import impl_rules
from funcgraph.ir import ClosedJaxpr, DropVar, Eqn, Jaxpr, Literal
from funcgraph.primitives.call import pjit_p

# Constants of at most this many elements are folded (larger ones would bloat
# the program with constants that XLA computes as fast as it loads them).
DEFAULT_MAX_SIZE = 16
# `pjit` calls of jaxprs with at most this many equations are inlined.
DEFAULT_MAX_INLINE_EQNS = 2


# --- shared helpers ----------------------------------------------------------------

def _map_subjaxprs(params, fn):
    """params with fn applied to each ClosedJaxpr they hold; the same dict if none changed."""
    new = None
    for key, value in params.items():
        if type(value) is ClosedJaxpr:
            mapped = fn(value)
        elif type(value) is tuple and any(type(v) is ClosedJaxpr for v in value):
            mapped = tuple(fn(v) if type(v) is ClosedJaxpr else v for v in value)
            if all(a is b for a, b in zip(mapped, value)):
                mapped = value
        else:
            continue
        if mapped is not value:
            if new is None:
                new = dict(params)
            new[key] = mapped
    return params if new is None else new


def _has_subjaxprs(params):
    return next(ir.subjaxprs(params), None) is not None


def _memoized(memo, fn):
    """fn over sub-jaxprs, once per object (memo keeps the input alive, so ids stay unique)."""
    def run(closed):
        hit = memo.get(id(closed))
        if hit is None:
            hit = memo[id(closed)] = (closed, fn(closed))
        return hit[1]
    return run


def _literal_key(lit):
    # Bit patterns, not ==: 0.0 and -0.0 must stay apart.
    return (lit.aval, np.asarray(lit.val).tobytes())


# --- forward sweep: inlining, constant folding and CSE ---------------------------------

class _Options:
    __slots__ = ("inline", "fold", "cse", "simplify", "max_size", "max_inline_eqns")

    def __init__(self, inline=False, fold=False, cse=False, simplify=False,
                 max_size=DEFAULT_MAX_SIZE, max_inline_eqns=DEFAULT_MAX_INLINE_EQNS):
        self.inline = inline
        self.fold = fold
        self.cse = cse
        self.simplify = simplify
        self.max_size = max_size
        self.max_inline_eqns = max_inline_eqns


def _small_value(const, max_size):
    """The host value of a concrete constant of at most max_size elements, else None."""
    if type(const) is Array:
        return np.asarray(const._value) if const.aval.size <= max_size else None
    if isinstance(const, (np.ndarray, np.generic)) and const.size <= max_size:
        return np.asarray(const)
    return None  # e.g. a tracer of an enclosing transformation: not concrete


def _fold(eqn, invars, params, known, max_size, scalars_only):
    """The output values of eqn evaluated with its NumPy impl, or None to keep it."""
    for v in eqn.outvars:
        size = v.aval.size  # not an int when symbolic (an export for every batch size)
        if type(size) is not int or size > max_size or (scalars_only and v.aval.shape):
            return None
    args = [np.asarray(x.val) if type(x) is Literal else known[x] for x in invars]
    try:
        with np.errstate(all="ignore"):
            out = impl_rules[eqn.prim](*args, **params)
            outs = out if eqn.prim.multiple_results else [out]
            values = [np.array(value, dtype=v.aval.dtype)
                      for v, value in safe_zip(eqn.outvars, outs)]
    except (ArithmeticError, ValueError, TypeError, NotImplementedError):
        return None  # leave it to XLA, which decides what such input means
    if any(value.shape != v.aval.shape for v, value in zip(eqn.outvars, values)):
        return None
    return values


def _forward(closed, opts, memo, top):
    """One sweep over the equations applying inlining, folding and CSE as opts say."""
    jaxpr = closed.jaxpr
    env = {}          # Var -> the atom (Var or Literal) that replaces it
    known = {}        # Var -> small host value, for folding
    seen = {}         # CSE key -> outvars of the first equation computing it
    constvars, consts = list(jaxpr.constvars), list(closed.consts)
    eqns = []
    changed = False
    sub = _memoized(memo, lambda c: _forward(c, opts, memo, False))

    if opts.fold:
        for v, c in safe_zip(constvars, consts):
            value = _small_value(c, opts.max_size)
            if value is not None:
                known[v] = value

    # Hot loop (it runs on every jit compile): locals, and no per-equation allocation
    # beyond what a rewrite needs (and, when simplifying, one producers entry).
    inline_on, fold_on, cse_on, simplify_on = opts.inline, opts.fold, opts.cse, opts.simplify
    effectful = bool(jaxpr.effects) if cse_on else False
    env_get = env.get
    simplify_get = ir.simplify_rules.get
    producers = {}    # Var -> (primitive name, first input), for the simplify rules

    def visit(eqn):
        nonlocal changed
        invars = eqn.invars
        if env:
            invars = [env_get(x, x) for x in invars]
        params = eqn.params
        if params:
            params = _map_subjaxprs(params, sub)
        prim = eqn.prim
        if inline_on and prim is pjit_p and _trivial(params["jaxpr"], opts.max_inline_eqns):
            changed = True
            inline(params["jaxpr"].jaxpr, invars, eqn.outvars, eqn.name_stack)
            return
        if fold_on and prim in impl_rules and _all_known(invars, known) \
                and not _has_subjaxprs(params):
            values = _fold(eqn, invars, params, known, opts.max_size, not top)
            if values is not None:
                changed = True
                for v, value in safe_zip(eqn.outvars, values):
                    if type(v) is DropVar:
                        continue
                    if value.shape:
                        constvars.append(v)
                        consts.append(value)
                        known[v] = value
                    else:
                        env[v] = Literal(value, v.aval)
                return
        if simplify_on and len(eqn.outvars) == 1 and not prim.multiple_results:
            outvar = eqn.outvars[0]
            rule = simplify_get(prim)
            if rule is not None:
                replacement = rule(invars, params, outvar, producers)
                if replacement is not None:
                    changed = True
                    env[outvar] = replacement
                    return
            if invars:
                producers[outvar] = (prim.name, invars[0])
        if cse_on and not (effectful and ir.eqn_effects(eqn)):  # two prints print twice
            key = (prim, tuple(sorted(params.items())) if params else (),
                   tuple([x if type(x) is not Literal else _literal_key(x) for x in invars]))
            try:
                previous = seen.get(key)
            except TypeError:  # an unhashable param: leave the equation alone
                previous = key = None
            if previous is not None:
                changed = True
                env.update(zip(eqn.outvars, previous))  # same key: same arity
                return
            if key is not None and DropVar not in map(type, eqn.outvars):
                seen[key] = eqn.outvars
        if invars != eqn.invars or params is not eqn.params:  # identity: Vars have no __eq__
            eqn = Eqn(prim, invars, eqn.outvars, params, eqn.source, eqn.name_stack)
            changed = True
        eqns.append(eqn)

    def inline(body, args, outvars, names):
        """Visit a renamed copy of body's equations (fresh variables at each call site),
        their names under the call's."""
        rename = dict(safe_zip(body.invars, args))
        for inner in body.eqns:
            new_outs = [DropVar(v.aval) if type(v) is DropVar else ir.Var(v.aval)
                        for v in inner.outvars]
            rename.update(safe_zip(inner.outvars, new_outs))
            copy = inner.replace(invars=[rename.get(x, x) for x in inner.invars],
                                 outvars=new_outs)
            copy.name_stack = names + inner.name_stack
            visit(copy)
        for v, x in safe_zip(outvars, body.outvars):
            x = rename.get(x, x)
            env[v] = env.get(x, x)

    for eqn in jaxpr.eqns:
        visit(eqn)
    if not changed:
        return closed
    outvars = [env.get(x, x) for x in jaxpr.outvars]
    return ClosedJaxpr(Jaxpr(constvars, jaxpr.invars, outvars, eqns), consts)


def _trivial(closed, max_eqns):
    return len(closed.jaxpr.eqns) <= max_eqns and not closed.consts


def _all_known(invars, known):
    for x in invars:
        if type(x) is not Literal and x not in known:
            return False
    return True


# --- backward sweep: dead code elimination ----------------------------------------------

def _dce_eqns(eqns, outvars, memo):
    """The equations needed for outvars, and the set of variables they read."""
    live = {x for x in outvars if type(x) is not Literal}
    kept = []

    def dce_sub(closed):  # other primitives' sub-jaxprs keep their signature
        return _dce_sub(closed, None, memo)[0]

    for eqn in reversed(eqns):
        outs = eqn.outvars
        if len(outs) == 1:
            used = outs[0] in live
        else:
            used = any(v in live for v in outs)
        if not used and not ir.eqn_effects(eqn):  # effects run though nothing reads them
            continue
        if eqn.prim is pjit_p:
            eqn = _prune_call(eqn, live, memo)
        elif eqn.params:
            params = _map_subjaxprs(eqn.params, dce_sub)
            if params is not eqn.params:
                eqn = eqn.replace(params=params)
        if len(outs) > 1 and not all(v in live for v in eqn.outvars):
            eqn = eqn.replace(outvars=[v if v in live else DropVar(v.aval)
                                       for v in eqn.outvars])
        for x in eqn.invars:
            if type(x) is not Literal:
                live.add(x)
        kept.append(eqn)
    kept.reverse()
    return kept, live


def _dce_sub(closed, used_outputs, memo):
    """DCE of a sub-jaxpr: (ClosedJaxpr, which inputs it still reads).

    With used_outputs None the signature is kept; otherwise only the used outputs
    remain and unread inputs are dropped (the caller drops the matching operands)."""
    key = (id(closed), used_outputs)
    hit = memo.get(key)
    if hit is not None:
        return hit[1], hit[2]
    jaxpr = closed.jaxpr
    outvars = jaxpr.outvars
    if used_outputs is not None:
        outvars = [x for x, u in safe_zip(outvars, used_outputs) if u]
    eqns, live = _dce_eqns(jaxpr.eqns, outvars, memo)
    if used_outputs is None:
        used_inputs = (True,) * len(jaxpr.invars)
    else:
        used_inputs = tuple(v in live for v in jaxpr.invars)
    constvars, consts = _live_consts(jaxpr, closed.consts, live)
    # Lists of Eqns compare element by identity (Eqn defines no __eq__).
    if (eqns == jaxpr.eqns and len(outvars) == len(jaxpr.outvars) and all(used_inputs)
            and len(constvars) == len(jaxpr.constvars)):
        result = closed
    else:
        invars = [v for v, u in safe_zip(jaxpr.invars, used_inputs) if u]
        result = ClosedJaxpr(Jaxpr(constvars, invars, outvars, eqns), consts)
    memo[key] = (closed, result, used_inputs)
    return result, used_inputs


def _prune_call(eqn, live, memo):
    """A pjit equation computing only its live outputs from the operands they need."""
    used = tuple(v in live for v in eqn.outvars)
    sub, used_inputs = _dce_sub(eqn.params["jaxpr"], used, memo)
    if sub is eqn.params["jaxpr"]:
        return eqn
    invars = [x for x, u in safe_zip(eqn.invars, used_inputs) if u]
    outvars = [v for v, u in safe_zip(eqn.outvars, used) if u]
    return Eqn(eqn.prim, invars, outvars, dict(eqn.params, jaxpr=sub), eqn.source,
               eqn.name_stack)


def _live_consts(jaxpr, consts, live):
    pairs = [(v, c) for v, c in safe_zip(jaxpr.constvars, consts) if v in live]
    return [v for v, _ in pairs], [c for _, c in pairs]


def _dce(closed, memo):
    jaxpr = closed.jaxpr
    eqns, live = _dce_eqns(jaxpr.eqns, jaxpr.outvars, memo)
    constvars, consts = _live_consts(jaxpr, closed.consts, live)
    return ClosedJaxpr(Jaxpr(constvars, jaxpr.invars, jaxpr.outvars, eqns), consts)


# --- the public passes -------------------------------------------------------------------

def _checked(closed):
    ir.check(closed)
    return closed


def dce(closed):
    """Dead code elimination: drop equations whose outputs nothing reads (unless they
    have effects, such as host callbacks) and constvars nothing reads.  Inside sub-jaxprs, `pjit` calls lose the
    outputs nobody reads and the inputs that only those needed; unused outputs of
    other multiple-result equations print as `_`."""
    return _checked(_dce(closed, {}))


def cse(closed):
    """Common subexpression elimination: an equation without effects with the same
    primitive, params (sub-jaxprs compared by identity) and inputs (literals by dtype
    and bit pattern) as an earlier one is dropped and its outputs replaced by the earlier outputs."""
    return _checked(_forward(closed, _Options(cse=True), {}, True))


def fold_constants(closed, max_size=DEFAULT_MAX_SIZE):
    """Constant folding: an equation whose inputs are all literals or constants of at
    most max_size elements, and whose primitive has a NumPy impl, is evaluated now.
    Scalar results become literals; array results of at most max_size elements become
    new constvars (top level only: sub-jaxprs gain no constants).  Equations holding
    sub-jaxprs are not folded.  Constvars only the folded equations read stay: run
    `dce` to drop them."""
    return _checked(_forward(closed, _Options(fold=True, max_size=max_size), {}, True))


def inline_calls(closed, max_eqns=DEFAULT_MAX_INLINE_EQNS):
    """Inline `pjit` equations whose jaxpr has at most max_eqns equations (with fresh
    variables at each call site; inner calls are inlined first)."""
    return _checked(_forward(closed, _Options(inline=True, max_inline_eqns=max_eqns), {}, True))


def simplify(closed):
    """Algebraic simplification: remove x*1, x/1, x-0, x+(-0), neg(neg(x)), and shape
    operations and conversions that change nothing (only rewrites exact for every
    value, NaN, infinities and -0.0 included).  Dead code is left for dce."""
    return _checked(_forward(closed, _Options(simplify=True), {}, True))


def optimize(closed, max_size=DEFAULT_MAX_SIZE, max_inline_eqns=DEFAULT_MAX_INLINE_EQNS):
    """The pipeline jit runs before lowering: inline trivial calls, fold constants,
    simplify algebraically and merge common subexpressions in one forward sweep (folding
    first, so folded results are merged by value), then drop dead code and constants in
    one backward sweep."""
    opts = _Options(inline=True, fold=True, cse=True, simplify=True, max_size=max_size,
                    max_inline_eqns=max_inline_eqns)
    with core.collections_deferred():
        forward = _forward(closed, opts, {}, True)
        return _checked(_dce(forward, {}))
