"""The recompilation inspector: what `jit(f).cache_info()` reports.

Every cache miss of a jitted function records a Variant: the argument signature it
was traced for (each leaf named after the parameter it came from, with its type),
the static values, why it was created (what differs from the closest variant already
cached: a leaf's shape, dtype or weak type, a static value, the argument structure),
the caller's line, and the time tracing and compiling took."""
import os

# The kinds of variant: compiled for a call, or traced to be inlined into an outer
# transformation (grad, vmap, an enclosing jit), which compiles the whole program.
COMPILED = "compiled"
TRACED = "traced"


class Variant:
    """One entry of a jitted function's cache."""

    def __init__(self, function, kind, leaf_names, avals, statics, caller, trace_time):
        self.function = function      # 'jit(f)'
        self.kind = kind
        self.leaf_names = list(leaf_names)
        self.avals = tuple(avals)
        self.statics = dict(statics)  # {parameter name: value}
        self.reasons = []
        self.caller = caller          # (file, line, function) of the call that missed
        self.trace_time = trace_time  # seconds
        self.compile_time = None      # seconds, once compiled

    def signature(self):
        """'x: f32[3], n=2' (weak types marked ~)."""
        parts = [f"{n}: {_aval_text(a)}" for n, a in zip(self.leaf_names, self.avals)]
        parts += [f"{k}={v!r}" for k, v in self.statics.items()]
        return ", ".join(parts)

    def caller_text(self):
        if not self.caller:
            return "unknown caller"
        file, line, fn = self.caller
        return f"{os.path.basename(file)}:{line} ({fn})"

    def why(self):
        return "; ".join(self.reasons)

    def times_text(self):
        text = f"traced in {_ms(self.trace_time)}"
        if self.compile_time is not None:
            text += f", compiled in {_ms(self.compile_time)}"
        elif self.kind == COMPILED:
            text += ", not compiled yet"
        return text


def _ms(seconds):
    return f"{seconds * 1e3:.1f} ms"


def _aval_text(aval):
    return aval.str_short() + ("~" if aval.weak_type else "")


def _describe_type_change(name, old, new):
    if old.shape != new.shape:
        what = "shape"
    elif old.dtype != new.dtype:
        what = "dtype"
    else:
        what = "weak type"
    return f"{name} changed {what}: {_aval_text(old)} -> {_aval_text(new)}"


def differences(old, new):
    """Why `new` (a Variant) needed its own trace given `old`: a list of sentences."""
    if old is None:
        return ["first call"]
    reasons = []
    if old.leaf_names != new.leaf_names or len(old.avals) != len(new.avals):
        reasons.append(f"the argument structure changed: ({', '.join(old.leaf_names)}) -> "
                       f"({', '.join(new.leaf_names)})")
    else:
        for name, a, b in zip(old.leaf_names, old.avals, new.avals, strict=True):
            if a != b:
                reasons.append(_describe_type_change(name, a, b))
    for k in sorted(set(old.statics) | set(new.statics), key=str):
        a, b = old.statics.get(k, "<absent>"), new.statics.get(k, "<absent>")
        if a != b or type(a) is not type(b):
            reasons.append(f"static argument {k} changed: {a!r} -> {b!r}")
    return reasons or ["the cache was cleared"]


def _distance(old, new):
    """How many shapes, dtypes, weak types and static values differ."""
    if old.leaf_names != new.leaf_names or len(old.avals) != len(new.avals):
        return 1000
    return (sum((a.shape != b.shape) + (a.dtype != b.dtype) + (a.weak_type != b.weak_type)
                for a, b in zip(old.avals, new.avals, strict=True))
            + sum(old.statics.get(k) != new.statics.get(k)
                  for k in set(old.statics) | set(new.statics)))


def closest(variants, new):
    """The cached variant of the same kind that differs least from `new`, the newest of
    those that differ equally (None if there is none)."""
    same_kind = [v for v in reversed(variants) if v.kind == new.kind]
    return min(same_kind, key=lambda v: _distance(v, new), default=None)


class CacheInfo:
    """The variants of a jitted function, oldest first: `str()` explains each."""

    def __init__(self, name, variants):
        self.name = name
        self.variants = list(variants)

    @property
    def compiled(self):
        return [v for v in self.variants if v.kind == COMPILED]

    def __len__(self):
        return len(self.variants)

    def __iter__(self):
        return iter(self.variants)

    def __str__(self):
        n = len(self.compiled)
        lines = [f"jit({self.name}): {n} compiled variant{'' if n == 1 else 's'}"
                 + (f", {len(self.variants) - n} traced for outer transformations"
                    if len(self.variants) > n else "")]
        for i, v in enumerate(self.variants):
            lines.append(f"  [{i}] {v.kind} ({v.signature()})")
            lines.append(f"      why: {v.why()}")
            lines.append(f"      first called at {v.caller_text()}; {v.times_text()}")
        return "\n".join(lines)

    __repr__ = __str__
