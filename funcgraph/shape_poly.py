"""Symbolic dimensions (jax.export's shape polymorphism): `DimExpr`, a polynomial with
integer coefficients over dimension variables (and `floordiv`/`mod` atoms), and the
parser of jax's shape syntax ("b, 2*b, 784").

A `DimExpr` stands in a shape where an int would: arithmetic with ints and other
expressions of the same scope gives an expression (or an int when the result is
constant), equality holds when the polynomials are the same, and an ordering comparison
is answered when it holds or fails for every value of the variables (each at least 1,
or the lower bound a constraint gives), else it raises InconclusiveDimensionOperation,
as jax does.  `str` writes jax's syntax, which the export format stores and jax parses.
"""
import math
import re

INF = math.inf

# dim -> a traced int value of the dimension; set by funcgraph.primitives (which binds
# the dimension_value primitive), since this module sits below them.
as_array_hook = None


class InconclusiveDimensionOperation(Exception):
    """A comparison or conversion of symbolic dimensions that cannot be decided."""


_INCONCLUSIVE_HINT = (
    "\nThis error arises for comparison operations with shapes that\nare non-constant, and "
    "the result of the operation cannot be represented as\na boolean value for all values "
    "of the symbolic dimensions involved.\n\nPlease see https://docs.jax.dev/en/latest/"
    "export/shape_poly.html#comparison-of-symbolic-dimensions-is-partially-supported-"
    "inside-jit for more details.")


class SymbolicScope:
    """The variables of one export share a scope, which holds their constraints
    ("b >= 16", "b <= 64"): expressions of different scopes do not mix."""
    def __init__(self, constraints=()):
        if isinstance(constraints, str):
            raise ValueError("The symbolic constraints should be a sequence of strings. "
                             f"Got {constraints!r}")
        self.constraints = tuple(constraints)
        self.lower = {}
        self.upper = {}
        for text in self.constraints:
            self._add_constraint(text)

    def _add_constraint(self, text):
        match = re.fullmatch(r"\s*(.+?)\s*(>=|<=|==)\s*(.+?)\s*", text)
        if match is None:
            raise ValueError(f"Constraint parsing error: {text!r} must be of the form "
                             f"'e1 >= e2', 'e1 <= e2' or 'e1 == e2'")
        left, op, right = match.groups()
        if op == "==":
            raise NotImplementedError(f"funcgraph: equality constraints ({text!r}) are not "
                                      f"supported; use >= and <= constraints")
        if op == "<=":
            left, right = right, left
        lhs, rhs = _parse_dim(left, self, text), _parse_dim(right, self, text)
        if is_variable(lhs) and isinstance(rhs, int):  # v >= k
            self.lower[lhs._var] = max(self.lower.get(lhs._var, 1), rhs)
        elif isinstance(lhs, int) and is_variable(rhs):  # k >= v
            self.upper[rhs._var] = min(self.upper.get(rhs._var, INF), lhs)
        else:
            raise NotImplementedError(f"funcgraph: only constraints between one dimension "
                                      f"variable and an integer are supported, got {text!r}")

    def var_bounds(self, name):
        return self.lower.get(name, 1), self.upper.get(name, INF)

    def describe(self):
        if not self.constraints:
            return ""
        return (f"\nUsing symbolic scope with constraints:\n"
                + "\n".join(f"  {c}" for c in self.constraints))


class DimExpr:
    """A sum of coefficient * monomial; a monomial is a sorted tuple of (atom, power),
    an atom a variable name or a ("floordiv" | "mod", dividend, divisor) triple."""
    __slots__ = ("_terms", "_scope", "_hash")

    def __init__(self, terms, scope):
        self._terms = terms  # tuple of (monomial, coefficient), canonical order
        self._scope = scope
        self._hash = hash(terms)

    # --- construction ----------------------------------------------------------------
    @staticmethod
    def var(name, scope):
        monomial = ((name, 1),)
        return DimExpr(((monomial, 1),), scope)

    @staticmethod
    def _make(coeffs, scope):
        """A DimExpr (or int, when constant) of a {monomial: coefficient} dict."""
        items = [(m, c) for m, c in coeffs.items() if c != 0]
        if all(m == () for m, _ in items):
            return items[0][1] if items else 0
        items.sort(key=_term_order)
        return DimExpr(tuple(items), scope)

    @property
    def _var(self):
        return self._terms[0][0][0][0]

    def _coeffs(self):
        return dict(self._terms)

    def _scope_with(self, other):
        if isinstance(other, DimExpr) and other._scope is not self._scope:
            raise ValueError(f"Invalid mixing of symbolic scopes: '{self}' and '{other}' come "
                             f"from different calls of symbolic_shape; create them with one "
                             f"call or pass scope=. See https://docs.jax.dev/en/latest/"
                             f"export/shape_poly.html#user-specified-symbolic-constraints")
        return self._scope

    # --- arithmetic ------------------------------------------------------------------
    # With another dimension or an int the result is a dimension; with anything else (a
    # float, an array, a traced value) the operation is on the dimension's value, as in
    # jax: x.shape[0] + 1.0, x.shape[0] / 2.
    def _on_value(self, method, other):
        return getattr(self.__jax_array__(), method)(other)

    def __truediv__(self, other):
        return self._on_value("__truediv__", other)

    def __rtruediv__(self, other):
        return self._on_value("__rtruediv__", other)

    def __add__(self, other):
        if not _is_dim(other):
            return self._on_value("__add__", other)
        scope = self._scope_with(other)
        coeffs = self._coeffs()
        for m, c in _terms_of(other):
            coeffs[m] = coeffs.get(m, 0) + c
        return DimExpr._make(coeffs, scope)

    __radd__ = __add__

    def __neg__(self):
        return DimExpr._make({m: -c for m, c in self._terms}, self._scope)

    def __sub__(self, other):
        if not _is_dim(other):
            return self._on_value("__sub__", other)
        return self + (-other)

    def __rsub__(self, other):
        if not _is_dim(other):
            return self._on_value("__rsub__", other)
        return (-self) + other

    def __mul__(self, other):
        if not _is_dim(other):
            return self._on_value("__mul__", other)
        scope = self._scope_with(other)
        coeffs = {}
        for m1, c1 in self._terms:
            for m2, c2 in _terms_of(other):
                m = _mul_monomials(m1, m2)
                coeffs[m] = coeffs.get(m, 0) + c1 * c2
        return DimExpr._make(coeffs, scope)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        if not _is_dim(other):
            return self._on_value("__floordiv__", other)
        if isinstance(other, int):
            if other == 0:
                raise ZeroDivisionError("integer division or modulo by zero")
            if all(c % other == 0 for _, c in self._terms):
                return DimExpr._make({m: c // other for m, c in self._terms}, self._scope)
        return _atom("floordiv", self, other, self._scope_with(other))

    def __rfloordiv__(self, other):
        if not _is_dim(other):
            return self._on_value("__rfloordiv__", other)
        return _atom("floordiv", other, self, self._scope)

    def __mod__(self, other):
        if not _is_dim(other):
            return self._on_value("__mod__", other)
        if isinstance(other, int):
            if other == 0:
                raise ZeroDivisionError("integer division or modulo by zero")
            if all(c % other == 0 for _, c in self._terms):
                return 0
        return _atom("mod", self, other, self._scope_with(other))

    def __rmod__(self, other):
        if not _is_dim(other):
            return self._on_value("__rmod__", other)
        return _atom("mod", other, self, self._scope)

    def __divmod__(self, other):
        return self // other, self % other

    # --- comparisons -----------------------------------------------------------------
    def __eq__(self, other):
        if not _is_dim(other):
            return NotImplemented
        if isinstance(other, DimExpr) and other._scope is not self._scope:
            return False
        # As jax: equal when the polynomials are; a difference that is not constant
        # counts as unequal (== must not raise: dimensions are hashed and looked up).
        return isinstance(other, DimExpr) and self._terms == other._terms

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self):
        return self._hash

    def __ge__(self, other):
        return _compare(self, other, ">=")

    def __gt__(self, other):
        return _compare(self, other, ">")

    def __le__(self, other):
        return _compare(self, other, "<=")

    def __lt__(self, other):
        return _compare(self, other, "<")

    @property
    def scope(self):
        """The SymbolicScope of the dimension (symbolic_shape(..., scope=a.scope) makes
        dimensions that mix with it)."""
        return self._scope

    def bounds(self):
        """(lower, upper) bounds over every value of the variables (±inf if unbounded)."""
        lo = hi = 0
        for m, c in self._terms:
            mlo, mhi = _monomial_bounds(m, self._scope)
            lo += c * (mlo if c > 0 else mhi)
            hi += c * (mhi if c > 0 else mlo)
        return lo, hi

    # --- conversions -----------------------------------------------------------------
    def __int__(self):
        raise InconclusiveDimensionOperation(
            f"Symbolic dimension '{self}' used in a context that requires a constant"
            + _INCONCLUSIVE_HINT)

    __index__ = __int__

    def __bool__(self):
        return True  # a dimension is at least 1

    def __jax_array__(self):
        """The dimension as a value (an int array computed from the arguments' shapes
        when the exported function runs)."""
        if as_array_hook is None:
            raise TypeError(f"the symbolic dimension {self} cannot be used as a value here")
        return as_array_hook(self)

    def as_linear(self):
        """(variable, k, c) when the expression is k*v + c with k > 0, else None."""
        var, k, c = None, 0, 0
        for m, coeff in self._terms:
            if not m:
                c = coeff
            elif var is None and len(m) == 1 and m[0][1] == 1 and isinstance(m[0][0], str):
                var, k = m[0][0], coeff
            else:
                return None
        return (var, k, c) if var is not None and k > 0 else None

    def variables(self):
        """The names of the dimension variables the expression uses."""
        names = set()
        for m, _ in self._terms:
            for atom, _ in m:
                if isinstance(atom, str):
                    names.add(atom)
                else:
                    names.update(*(a.variables() for a in atom[1:] if isinstance(a, DimExpr)))
        return names

    def evaluate(self, env, ops):
        """The expression built with `ops` (add, mul, floordiv, mod, constant) over the
        values `env` gives the variables: how lowering computes it from the arguments."""
        total = None
        for m, c in self._terms:
            value = None if c == 1 and m else ops.constant(c)
            for atom, power in m:
                base = _evaluate_atom(atom, env, ops)
                for _ in range(power):
                    value = base if value is None else ops.mul(value, base)
            total = value if total is None else ops.add(total, value)
        return total

    def __str__(self):
        parts = []
        for m, c in self._terms:
            text = "*".join(_atom_str(a) + (f"^{p}" if p > 1 else "") for a, p in m)
            magnitude = abs(c)
            if not m:
                text = str(magnitude)
            elif magnitude != 1:
                text = f"{magnitude}*{text}"
            if not parts:
                parts.append(f"- {text}" if c < 0 else text)
            else:
                parts.append(f" - {text}" if c < 0 else f" + {text}")
        return "".join(parts)

    __repr__ = __str__


def _is_dim(x):
    return isinstance(x, (int, DimExpr)) and not isinstance(x, bool)


def is_variable(e):
    """Whether e is one dimension variable alone (`b`, not `2*b`)."""
    return isinstance(e, DimExpr) and len(e._terms) == 1 and e._terms[0][1] == 1 \
        and len(e._terms[0][0]) == 1 and e._terms[0][0][0][1] == 1 \
        and isinstance(e._terms[0][0][0][0], str)


def is_symbolic_dim(d):
    return isinstance(d, DimExpr)


def is_constant_shape(shape):
    return all(type(d) is int for d in shape)


def _terms_of(x):
    return x._terms if isinstance(x, DimExpr) else (((), x),)


def _mul_monomials(m1, m2):
    powers = dict(m1)
    for atom, p in m2:
        powers[atom] = powers.get(atom, 0) + p
    return tuple(sorted(powers.items(), key=lambda ap: _atom_str(ap[0])))


def _term_order(term):
    """jax's order: higher degree first, then larger monomials first; constant last."""
    m, _ = term
    degree = sum(p for _, p in m)
    return (-degree, tuple((_Reverse(_atom_str(a)), -p) for a, p in reversed(m)))


class _Reverse(str):
    __slots__ = ()

    def __lt__(self, other):
        return str.__gt__(self, other)


def _atom(kind, dividend, divisor, scope):
    monomial = (((kind, dividend, divisor), 1),)
    return DimExpr(((monomial, 1),), scope)


def _atom_str(atom):
    return atom if isinstance(atom, str) else f"{atom[0]}({atom[1]}, {atom[2]})"


def _bounds_of(x):
    return x.bounds() if isinstance(x, DimExpr) else (x, x)


def _atom_bounds(atom, scope):
    if isinstance(atom, str):
        return scope.var_bounds(atom)
    kind, dividend, divisor = atom
    if not isinstance(divisor, int) or divisor <= 0:
        return -INF, INF
    if kind == "mod":
        return 0, divisor - 1
    lo, hi = _bounds_of(dividend)
    return (lo // divisor if lo != -INF else -INF), (hi // divisor if hi != INF else INF)


def _monomial_bounds(m, scope):
    lo = hi = 1
    for atom, p in m:
        alo, ahi = _atom_bounds(atom, scope)
        if alo < 0:
            return -INF, INF
        lo, hi = lo * alo ** p, hi * ahi ** p
    return lo, hi


def _compare(a, b, op):
    if not _is_dim(b):
        return NotImplemented
    diff = a - b if op in (">=", ">") else b - a  # decide diff >= 0 or diff > 0
    strict = op in (">", "<")
    lo, hi = _bounds_of(diff)
    if (lo > 0) if strict else (lo >= 0):
        return True
    if (hi <= 0) if strict else (hi < 0):
        return False
    raise InconclusiveDimensionOperation(
        f"Symbolic dimension comparison '{a}' {op} '{b}' is inconclusive."
        + a._scope.describe() + _INCONCLUSIVE_HINT)


def _evaluate_atom(atom, env, ops):
    if isinstance(atom, str):
        return env[atom]
    kind, dividend, divisor = atom
    values = [x.evaluate(env, ops) if isinstance(x, DimExpr) else ops.constant(x)
              for x in (dividend, divisor)]
    return getattr(ops, kind)(*values)


# --- parsing jax's syntax ------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(?P<num>\d+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
                    r"|(?P<op>\.\.\.|[-+*^(),]))")


def _tokens(text, spec):
    pos, out = 0, []
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ValueError(f"syntax error in symbolic shape {spec!r}: unexpected "
                             f"{text[pos:].strip()!r}")
        kind = match.lastgroup
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


class _Parser:
    """dim := term (('+' | '-') term)*; term := factor ('*' factor)*;
    factor := ['-'] (NUMBER | NAME ['^' NUMBER] | mod(dim, dim) | floordiv(dim, dim))."""

    def __init__(self, text, scope, spec):
        self.tokens = _tokens(text, spec)
        self.pos = 0
        self.scope = scope
        self.spec = spec

    def peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else (None, None)

    def take(self, value=None):
        kind, text = self.peek()
        if kind is None or (value is not None and text != value):
            raise ValueError(f"syntax error in symbolic shape {self.spec!r}: expecting "
                             f"{value or 'a dimension'} but found "
                             f"{text if text is not None else 'the end'}")
        self.pos += 1
        return kind, text

    def dim(self):
        value = self.term()
        while self.peek()[1] in ("+", "-"):
            _, op = self.take()
            rhs = self.term()
            value = value + rhs if op == "+" else value - rhs
        return value

    def term(self):
        value = self.factor()
        while self.peek()[1] == "*":
            self.take()
            value = value * self.factor()
        return value

    def factor(self):
        kind, text = self.take()
        if text == "-":
            return -self.factor()
        if kind == "num":
            return int(text)
        if kind != "name":
            raise ValueError(f"syntax error in symbolic shape {self.spec!r}: expecting "
                             f"a dimension but found {text}")
        if text in ("mod", "floordiv") and self.peek()[1] == "(":
            self.take("(")
            a = self.dim()
            self.take(",")
            b = self.dim()
            self.take(")")
            return a % b if text == "mod" else a // b
        if self.peek()[1] == "(":
            raise NotImplementedError(f"funcgraph: the symbolic operation {text}(...) in "
                                      f"{self.spec!r} is not supported (only mod and "
                                      f"floordiv)")
        value = DimExpr.var(text, self.scope)
        if self.peek()[1] == "^":
            self.take("^")
            _, power = self.take()
            value = _power(value, int(power))
        return value


def _power(value, n):
    out = 1
    for _ in range(n):
        out = out * value
    return out


def _parse_dim(text, scope, spec):
    parser = _Parser(text, scope, spec)
    value = parser.dim()
    if parser.pos != len(parser.tokens):
        raise ValueError(f"syntax error in symbolic shape {spec!r}: unexpected "
                         f"{parser.peek()[1]!r} after a dimension")
    return value


def _split_dims(spec):
    """The dimension texts of "b, 4" or "(b, 4)" (commas inside parentheses kept)."""
    text = spec.strip()
    if text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1]
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    if parts and not parts[-1].strip():
        parts.pop()  # a trailing comma: "b,"
    return parts


def _balanced(text):
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def parse_shape(spec, scope, like=None):
    """The shape (ints and DimExprs) of jax's shape syntax: "b, 2*b, 784"; `_` takes
    the dimension of `like`, and a final `...` the rest of `like`'s dimensions."""
    if not isinstance(spec, str):
        raise ValueError(f"polymorphic shape spec should be a string. Found {spec!r}.")
    parts = _split_dims(spec)
    dims = []
    for i, part in enumerate(parts):
        text = part.strip()
        if text == "...":
            if i != len(parts) - 1 or like is None:
                raise ValueError(f"syntax error in symbolic shape {spec!r}: '...' must be "
                                 f"last and needs a `like` shape")
            dims.extend(like[i:])
            continue
        if text == "_":
            if like is None or i >= len(like):
                raise ValueError(f"syntax error in symbolic shape {spec!r}: '_' in dimension "
                                 f"{i} needs a `like` shape with that dimension")
            dims.append(like[i])
            continue
        if not text:
            raise ValueError(f"syntax error in symbolic shape {spec!r} in dimension {i}: "
                             f"expecting a dimension but found ','")
        dims.append(_parse_dim(text, scope, spec))
    if like is not None and len(dims) != len(like):
        raise ValueError(f"polymorphic shape {spec!r} has {len(dims)} dimensions, but the "
                         f"actual shape {tuple(like)} has {len(like)}")
    return tuple(dims)


def dims_tuple(shape):
    """A shape with symbolic dimensions as a tuple of ints and DimExprs (the slow path of
    the int conversions of shape arguments, taken when int() met a DimExpr)."""
    return tuple(d if isinstance(d, DimExpr) else int(d) for d in shape)
