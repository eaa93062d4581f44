"""The IR: variables, literals, equations and jaxprs, their type checker and printer.

A jaxpr is a typed, first-order program in A-normal form:
`{ lambda c:f32[3]; a:f32[3]. let b:f32[3] = sin a; d:f32[3] = add b c in (d,) }`.
Constants (`c` above) are inputs bound by a ClosedJaxpr.  Control flow and
nested jit calls are primitives whose params hold ClosedJaxprs.
"""
import numpy as np

from funcgraph import core
from funcgraph.config import config

# simplify_rules[prim](invars, params, outvar, producers) -> an atom (Var or Literal)
# equal to the equation's output for every input value, or None.  `producers` maps a
# Var to the (primitive name, first operand) of the equation that made it.  Each
# primitive's block registers its exact algebraic rewrites (x*1 -> x, ...); the
# simplification pass (funcgraph.passes) applies them.
simplify_rules = {}

# effect_rules[prim](params) -> frozenset of Effects: the side effects of an equation of
# a primitive that has any (host callbacks).  An equation's effects are its primitive's
# and those of the jaxprs in its params; passes never delete or merge such equations.
effect_rules = {}
core.rule_tables["effects"] = effect_rules  # Primitive.def_effectful_abstract_eval
NO_EFFECTS = frozenset()


class Effect:
    """A side effect an equation has, printed under its name as JAX prints it
    ("Debug", "OrderedDebug", "IO", "OrderedIO").  Ordered effects happen in program
    order (the lowering threads a token through them); of those, only `shardable` ones
    may be in programs over several devices (each device orders its own)."""
    __slots__ = ("name", "ordered", "shardable")

    def __init__(self, name=None, ordered=False, shardable=False):
        # JAX's effects are instances of Effect subclasses made without arguments:
        # those are named after their class.
        self.name = type(self).__name__ if name is None else name
        self.ordered = ordered
        self.shardable = shardable

    def __repr__(self):
        return self.name


class Var:
    """A variable of the IR.  Identity is object identity; names are given at printing."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Var({self.aval.str_short()})"


class Literal:
    """A scalar constant inlined in an equation."""
    __slots__ = ("val", "aval")

    def __init__(self, val, aval):
        self.val = val
        self.aval = aval

    def __repr__(self):
        return f"Literal({self.val!r}:{self.aval.str_short()})"


class DropVar(Var):
    """An output nobody reads (printed as `_`)."""
    __slots__ = ()


class JaxprEqn:
    """`outvars = prim[params] invars`, with the user's (file, line, function) and the
    names of the `named_scope`s it was traced in (relative to its jaxpr's trace).
    `primitive` is JAX's name of `prim`."""
    __slots__ = ("prim", "invars", "outvars", "params", "source", "name_stack")

    def __init__(self, prim, invars, outvars, params, source=None, name_stack=()):
        self.prim = prim
        self.invars = invars
        self.outvars = outvars
        self.params = params
        self.source = source
        self.name_stack = name_stack

    @property
    def primitive(self):
        return self.prim

    @property
    def effects(self):
        return eqn_effects(self)

    def replace(self, invars=None, outvars=None, params=None):
        return JaxprEqn(self.prim, self.invars if invars is None else invars,
                   self.outvars if outvars is None else outvars,
                   self.params if params is None else params, self.source, self.name_stack)

    def __repr__(self):
        return f"JaxprEqn({self.prim.name})"


# The short name funcgraph's own passes and interpreters use.
Eqn = JaxprEqn


def eqn_effects(eqn):
    """The effects of one equation (NO_EFFECTS for almost all)."""
    rule = effect_rules.get(eqn.prim)
    found = rule(eqn.params) if rule is not None else NO_EFFECTS
    for value in eqn.params.values():
        if type(value) is ClosedJaxpr:
            if value.jaxpr.effects:
                found = found | value.jaxpr.effects
        elif type(value) is tuple:
            for item in value:
                if type(item) is ClosedJaxpr and item.jaxpr.effects:
                    found = found | item.jaxpr.effects
    return found


class Jaxpr:
    __slots__ = ("constvars", "invars", "outvars", "eqns", "_effects", "__weakref__")

    def __init__(self, constvars, invars, outvars, eqns):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)
        self._effects = None

    @property
    def effects(self):
        """The set of effects of its equations (computed once: jaxprs are not mutated)."""
        found = self._effects
        if found is None:
            found = NO_EFFECTS
            for eqn in self.eqns:
                if eqn.params or eqn.prim in effect_rules:
                    effects = eqn_effects(eqn)
                    if effects:
                        found = found | effects
            self._effects = found
        return found

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    def pretty(self, source=False, name_stack=False):
        return pretty_print(self, source=source, name_stack=name_stack)

    def pretty_print(self, source_info=False, name_stack=False, print_effects=False):
        """JAX's spelling of `pretty`."""
        return pretty_print(self, source=source_info, name_stack=name_stack,
                            print_effects=print_effects)

    def __str__(self):
        return pretty_print(self)

    __repr__ = __str__


class ClosedJaxpr:
    """A jaxpr together with the values of its constvars."""
    __slots__ = ("jaxpr", "consts", "__weakref__")

    def __init__(self, jaxpr, consts):
        if len(jaxpr.constvars) != len(consts):
            raise ValueError("ClosedJaxpr: constvars and consts differ in length")
        self.jaxpr = jaxpr
        self.consts = list(consts)

    @property
    def literals(self):
        """JAX's other name for `consts`."""
        return self.consts

    @property
    def in_avals(self):
        return self.jaxpr.in_avals

    @property
    def out_avals(self):
        return self.jaxpr.out_avals

    @property
    def constvars(self):
        return self.jaxpr.constvars

    @property
    def invars(self):
        return self.jaxpr.invars

    @property
    def outvars(self):
        return self.jaxpr.outvars

    @property
    def eqns(self):
        return self.jaxpr.eqns

    @property
    def effects(self):
        return self.jaxpr.effects

    def pretty(self, source=False, name_stack=False):
        return pretty_print(self.jaxpr, source=source, name_stack=name_stack)

    def pretty_print(self, source_info=False, name_stack=False, print_effects=False):
        """JAX's spelling of `pretty`."""
        return pretty_print(self.jaxpr, source=source_info, name_stack=name_stack,
                            print_effects=print_effects)

    def __str__(self):
        return pretty_print(self.jaxpr)

    __repr__ = __str__


def subjaxprs(params):
    """The ClosedJaxprs held in an equation's params (control flow, calls)."""
    for value in params.values():
        if isinstance(value, ClosedJaxpr):
            yield value
        elif isinstance(value, tuple):
            for item in value:
                if isinstance(item, ClosedJaxpr):
                    yield item


# --- type checking -------------------------------------------------------------

class IRTypeError(core.FuncgraphError, TypeError):
    """The IR is malformed: a bug in a transformation or pass, not in user code."""


def check(jaxpr):
    """Type check when the `funcgraph_check_ir` flag is on (the test suite sets it)."""
    if config.funcgraph_check_ir:
        typecheck(jaxpr)


def typecheck(jaxpr):
    """Verify that every variable is bound once before use and every equation's
    output types are what its primitive's shape rule gives."""
    if isinstance(jaxpr, ClosedJaxpr):
        for var, const in core.safe_zip(jaxpr.jaxpr.constvars, jaxpr.consts):
            shape = tuple(np.shape(const)) if not hasattr(const, "aval") else const.aval.shape
            if shape != var.aval.shape:
                raise IRTypeError(f"constant of shape {shape} bound to {var.aval.str_short()}")
        jaxpr = jaxpr.jaxpr
    defined = set()

    def bind(v, where):
        if v in defined:
            raise IRTypeError(f"variable {v} bound twice ({where})")
        if not isinstance(v, DropVar):
            defined.add(v)

    def read(x, where):
        if isinstance(x, Literal):
            if np.shape(x.val) != x.aval.shape:
                raise IRTypeError(f"literal {x} has the wrong shape ({where})")
            return
        if x not in defined:
            raise IRTypeError(f"variable {x} read before it is bound ({where})")

    for v in jaxpr.constvars:
        bind(v, "constvars")
    for v in jaxpr.invars:
        bind(v, "invars")
    for i, eqn in enumerate(jaxpr.eqns):
        where = f"equation {i}: {eqn.prim.name}"
        for x in eqn.invars:
            read(x, where)
        for sub in subjaxprs(eqn.params):
            typecheck(sub)
        out = core.abstract_eval(eqn.prim, [x.aval for x in eqn.invars], eqn.params)
        out = out if eqn.prim.multiple_results else [out]
        if len(out) != len(eqn.outvars):
            raise IRTypeError(f"{where}: {len(eqn.outvars)} outputs, the rule gives {len(out)}")
        for var, aval in zip(out and eqn.outvars, out):
            if not core.same_type(var.aval, aval):
                raise IRTypeError(f"{where}: output typed {var.aval.str_short()}, "
                                  f"the shape rule gives {aval.str_short()}")
        for v in eqn.outvars:
            bind(v, where)
    for x in jaxpr.outvars:
        read(x, "outvars")


# --- printing --------------------------------------------------------------------

class _Names:
    """Gives variables the names a, b, ..., z, ba, bb, ... in order of appearance."""

    def __init__(self):
        self.names = {}

    def __call__(self, var):
        if isinstance(var, Literal):
            return format_literal(var)
        if isinstance(var, DropVar):
            return "_"
        name = self.names.get(var)
        if name is None:
            name = self.names[var] = var_name(len(self.names))
        return name


def var_name(i):
    letters = "abcdefghijklmnopqrstuvwxyz"
    name = ""
    while True:
        name = letters[i % 26] + name
        i //= 26
        if i == 0:
            return name


def _shortest(val):
    """The float with the fewest significant digits that reads back as val in its dtype."""
    x = float(val)
    if np.isfinite(x):
        for digits in range(1, 18):
            short = float(f"{x:.{digits}g}")
            if np.array(short, val.dtype) == val:
                return short
    return x


def format_literal(lit):
    val = np.asarray(lit.val)
    if val.dtype == np.bool_:
        text = "True" if val else "False"
    elif val.dtype.kind == "f" or val.dtype.kind == "V":
        text = repr(_shortest(val))
    elif val.dtype.kind == "c":
        text = repr(complex(_shortest(val.real), _shortest(val.imag)))
    else:
        text = str(int(val))
    return f"{text}:{lit.aval.str_short()}"


def format_param(value, indent, names, source):
    """A param's text; `source` is a bool (append source lines) or a _PrintSettings."""
    if isinstance(value, ClosedJaxpr):
        return _pp_jaxpr(value.jaxpr, indent + 4, names, source)
    if isinstance(value, Jaxpr):
        return _pp_jaxpr(value, indent + 4, names, source)
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, tuple) and any(isinstance(v, ClosedJaxpr) for v in value):
        return "(" + " ".join(format_param(v, indent, names, source) for v in value) + ")"
    if isinstance(value, core.Primitive):
        return value.name
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return str(value)


def _pp_var_decl(v, names):
    return f"{names(v)}:{v.aval.str_short()}"


def _pp_eqn(eqn, indent, names, source):
    outs = " ".join(_pp_var_decl(v, names) for v in eqn.outvars)
    params = ""
    if eqn.params:
        params = "[" + " ".join(f"{k}={format_param(v, indent, names, source)}"
                                for k, v in sorted(eqn.params.items())) + "]"
    ins = " ".join(names(x) for x in eqn.invars)
    binders = f"{outs} = " if outs else ""  # an effect alone binds nothing
    line = f"{binders}{eqn.prim.name}{params} {ins}".rstrip()
    if source is True and eqn.source:
        line += f"  # {_source_text(eqn.source)}"
    return line


def _source_text(source):
    file, lineno, fn = source
    return f"{_short_path(file)}:{lineno} ({fn})"


def _short_path(path):
    import os
    return os.path.basename(path)


class _PrintSettings:
    """With name stacks, equations get JAX's aligned trailing comments: the source line
    (when asked for) and the name stack as `# [outer/inner]`."""
    __slots__ = ("source",)

    def __init__(self, source):
        self.source = source


def _annotations(eqn, settings):
    notes = []
    if settings.source:
        notes.append(_source_text(eqn.source) if eqn.source else "unknown")
    notes.append("[" + "/".join(eqn.name_stack) + "]")
    return notes


def _annotate(texts, eqns, settings, pad):
    """Each equation's text with its comments in one column (continuation lines aligned)."""
    width = max(len(t.split("\n")[0]) for t in texts)
    out = []
    for text, eqn in zip(texts, eqns, strict=True):
        first, newline, rest = text.partition("\n")
        notes = _annotations(eqn, settings)
        lines = [first.ljust(width) + " # " + notes[0]]
        lines += [" " * width + " # " + n for n in notes[1:]]
        out.append("\n".join(pad + line if i else line for i, line in enumerate(lines))
                   + newline + rest)
    return out


def _pp_effects(jaxpr):
    """JAX's ` : { Debug, OrderedDebug }` after the outputs (names in sorted order)."""
    if not jaxpr.effects:
        return ""
    return " : { " + ", ".join(sorted(e.name for e in jaxpr.effects)) + " }"


def _pp_jaxpr(jaxpr, indent, names, source, print_effects=False):
    consts = " ".join(_pp_var_decl(v, names) for v in jaxpr.constvars)
    ins = " ".join(_pp_var_decl(v, names) for v in jaxpr.invars)
    pad = " " * (indent + 4)
    lines = [f"{{ lambda {consts}; {ins}. let"]
    texts = [_pp_eqn(eqn, indent, names, source) for eqn in jaxpr.eqns]
    if isinstance(source, _PrintSettings) and texts:
        texts = _annotate(texts, jaxpr.eqns, source, pad)
    lines.extend(pad + text for text in texts)
    outs = ", ".join(names(x) for x in jaxpr.outvars)
    trailing = "," if len(jaxpr.outvars) == 1 else ""
    effects = _pp_effects(jaxpr) if print_effects else ""
    lines.append(" " * (indent + 2) + f"in ({outs}{trailing}){effects} }}")
    return "\n".join(lines)


def pretty_print(jaxpr, source=False, name_stack=False, print_effects=False):
    """JAX's text form of a jaxpr; `source=True` appends each equation's user line,
    `name_stack=True` each equation's named_scope names, as JAX's
    `pretty_print(name_stack=True)` does (`# [outer/inner]`, aligned), and
    `print_effects=True` the jaxpr's effects after its outputs (as JAX prints them)."""
    settings = _PrintSettings(source) if name_stack else source
    return _pp_jaxpr(jaxpr, 0, _Names(), settings, print_effects)
