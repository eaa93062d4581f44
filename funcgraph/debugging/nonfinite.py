"""The NaN/Inf probe: run a program equation by equation and report the first
equation whose output holds a NaN (or inf) that none of its inputs held.

    report = find_nonfinite(fg.grad(loss))(params, batch)
    report.found, report.primitive, report.source, report.path, report.inputs

The function is traced (make_jaxpr, so `grad` gives its backward pass as equations
too) and the jaxpr is interpreted on concrete values: calls (nested jit, custom
derivatives, checkpoint) run their own jaxprs, `scan` and `while` run their body
once per step and `cond` the branch taken, so a report says where inside them the
value appeared ("inside scan at model.py:12, step 17").  Transposed equations keep
the source line of the forward equation they came from and say so ("in the
transpose of mul").  jit's jax_debug_nans/infs re-run uses the same interpreter."""
import os

import numpy as np

from funcgraph import core, ir, tree_util
from funcgraph.config import config
from funcgraph.debugging.diff import eqn_line
from funcgraph.interpreters.eval import eval_trace
from funcgraph.primitives.call import pjit_p
from funcgraph.primitives.control_flow import cond_p, scan_p, while_p
from funcgraph.transforms import jit as _jit
from funcgraph.transforms.jit import make_jaxpr

KINDS = ("nan", "inf")


def _kinds_of(value, kinds):
    """The non-finite kinds (of `kinds`) present in a value."""
    value = np.asarray(value)
    if value.dtype.kind == "V" and not value.dtype.names:  # bfloat16 and friends
        value = value.astype(np.float32)
    if value.dtype.kind not in "fc":
        return set()
    found = set()
    if "nan" in kinds and np.isnan(value).any():
        found.add("nan")
    if "inf" in kinds and np.isinf(value).any():
        found.add("inf")
    return found


def _short_source(source):
    if not source:
        return "unknown line"
    file, line, fn = source
    return f"{os.path.basename(file)}:{line} ({fn})"


class ValueSummary:
    """A value's type, its range over the finite entries and its non-finite counts."""

    def __init__(self, name, value):
        value = np.asarray(value)
        self.name = name
        self.type = f"{value.dtype.name}{list(value.shape)}"
        self.min = self.max = None
        self.nan = self.inf = 0
        if value.dtype.kind == "V" and not value.dtype.names:
            value = value.astype(np.float32)
        if value.dtype.kind in "biuf" and value.size:
            as_float = value.astype(np.float64)
            self.nan = int(np.isnan(as_float).sum())
            self.inf = int(np.isinf(as_float).sum())
            finite = as_float[np.isfinite(as_float)]
            if finite.size:
                self.min, self.max = float(finite.min()), float(finite.max())
        elif value.dtype.kind == "c" and value.size:
            self.nan = int(np.isnan(value).sum())
            self.inf = int(np.isinf(value).sum())

    def range_text(self):
        text = "empty range" if self.min is None else f"min {self.min:.4g}, max {self.max:.4g}"
        if self.nan:
            text += f", {self.nan} nan"
        if self.inf:
            text += f", {self.inf} inf"
        return text

    def __repr__(self):
        return f"{self.name}: {self.type} ({self.range_text()})"


class NonfiniteReport:
    """What find_nonfinite found: `.found`, and for the first equation that made a
    non-finite value, `.kind` ('nan' or 'inf'), `.primitive`, `.source` (file, line,
    function), `.transform` ('transpose of mul' for a backward-pass equation),
    `.path` (the enclosing equations, outermost first, e.g. 'scan at f.py:9, step 17'),
    `.inputs` and `.outputs` (ValueSummary: type, min/max, non-finite counts) and
    `.equation` (its text)."""

    def __init__(self, name, found=False, nonfinite_args=()):
        self.name = name
        self.found = found
        self.kind = self.primitive = self.source = self.transform = self.equation = None
        self.path = []
        self.inputs = []
        self.outputs = []
        self.nonfinite_args = list(nonfinite_args)  # names of arguments already non-finite

    def __bool__(self):
        return self.found

    def context_text(self):
        """', inside scan at f.py:9 (g), step 17' (outermost last) or ''."""
        return "".join(f", inside {frame}" for frame in reversed(self.path))

    def headline(self):
        if not self.found:
            where = f"running {self.name}"
            if self.nonfinite_args:
                return (f"no equation made a non-finite value while {where}; the arguments "
                        f"{', '.join(self.nonfinite_args)} already held some")
            return f"no non-finite value while {where}"
        text = f"first {self.kind} made by {self.primitive} at {_short_source(self.source)}"
        if self.transform:
            text += f", in the {self.transform}"
        return text + self.context_text()

    def __str__(self):
        lines = [self.headline()]
        if self.found:
            lines.append(f"  equation: {self.equation}")
            lines += [f"  input  {s!r}" for s in self.inputs]
            lines += [f"  output {s!r}" for s in self.outputs]
        return "\n".join(lines)

    __repr__ = __str__


class _Found(Exception):
    def __init__(self, report):
        self.report = report


def _frame(eqn, detail=""):
    name = eqn.params.get("name")
    what = f"jit({name})" if eqn.prim is pjit_p and isinstance(name, str) else eqn.prim.name
    text = f"{what} at {_short_source(eqn.source)}"
    transform = getattr(eqn.source, "transform", None)
    if transform:
        text += f" (the {transform})"
    return text + (f", {detail}" if detail else "")


class _Probe:
    """The interpreter: concrete NumPy values, every equation's output checked."""

    def __init__(self, name, kinds):
        self.name = name
        self.kinds = kinds

    def run(self, jaxpr, consts, args, path):
        env = {}

        def read(x):
            return x.val if type(x) is ir.Literal else env[x]

        for v, val in core.safe_zip(jaxpr.constvars, consts):
            env[v] = np.asarray(val, v.aval.dtype)
        for v, val in core.safe_zip(jaxpr.invars, args):
            env[v] = np.asarray(val, v.aval.dtype)
        for eqn in jaxpr.eqns:
            ins = [read(x) for x in eqn.invars]
            outs = self.eval_eqn(eqn, ins, path)
            self.check(eqn, ins, outs, path)
            for v, val in core.safe_zip(eqn.outvars, outs):
                env[v] = val
        return [read(x) for x in jaxpr.outvars]

    def eval_eqn(self, eqn, ins, path):
        p = eqn.params
        if eqn.prim is pjit_p:
            return self.run_closed(p["jaxpr"], ins, path + [_frame(eqn)])
        if isinstance(p.get("call_jaxpr"), ir.ClosedJaxpr):
            return self.run_closed(p["call_jaxpr"], ins, path + [_frame(eqn)])
        if eqn.prim is scan_p:
            return self.scan(eqn, ins, path)
        if eqn.prim is while_p:
            return self.while_loop(eqn, ins, path)
        if eqn.prim is cond_p:
            index = int(ins[0])
            return self.run_closed(p["branches"][index], ins[1:],
                                   path + [_frame(eqn, f"branch {index}")])
        outs = eqn.prim.bind(*ins, **p)
        outs = outs if eqn.prim.multiple_results else [outs]
        return [np.asarray(o) for o in outs]

    def run_closed(self, closed, args, path):
        return self.run(closed.jaxpr, closed.consts, args, path)

    def scan(self, eqn, ins, path):
        p = eqn.params
        nc, ncarry, length = p["num_consts"], p["num_carry"], p["length"]
        body = p["jaxpr"]
        consts, carry, xs = ins[:nc], ins[nc:nc + ncarry], ins[nc + ncarry:]
        ys_avals = body.out_avals[ncarry:]
        ys = [np.zeros((length,) + a.shape, a.dtype) for a in ys_avals]
        steps = range(length - 1, -1, -1) if p["reverse"] else range(length)
        for i in steps:
            outs = self.run_closed(body, consts + carry + [x[i] for x in xs],
                                   path + [_frame(eqn, f"step {i}")])
            carry = outs[:ncarry]
            for y, out in zip(ys, outs[ncarry:], strict=True):
                y[i] = out
        return carry + ys

    def while_loop(self, eqn, ins, path):
        p = eqn.params
        cn, bn = p["cond_nconsts"], p["body_nconsts"]
        cond_consts, body_consts, carry = ins[:cn], ins[cn:cn + bn], ins[cn + bn:]
        i = 0
        while True:
            (pred,) = self.run_closed(p["cond_jaxpr"], cond_consts + carry,
                                      path + [_frame(eqn, f"condition at iteration {i}")])
            if not bool(pred):
                return carry
            carry = self.run_closed(p["body_jaxpr"], body_consts + carry,
                                    path + [_frame(eqn, f"iteration {i}")])
            i += 1

    def check(self, eqn, ins, outs, path):
        had = set()
        for x in ins:
            had |= _kinds_of(x, self.kinds)
        for out in outs:
            new = _kinds_of(out, self.kinds) - had
            if new:
                raise _Found(self.report(eqn, ins, outs, path, "nan" if "nan" in new
                                         else "inf"))

    def report(self, eqn, ins, outs, path, kind):
        report = NonfiniteReport(self.name, found=True)
        report.kind = kind
        report.primitive = eqn.prim.name
        report.source = eqn.source
        report.transform = getattr(eqn.source, "transform", None)
        report.path = list(path)
        report.equation = eqn_line(eqn, ir._Names())
        names = ir._Names()
        report.inputs = [ValueSummary(names(x), v) for x, v in zip(eqn.invars, ins,
                                                                     strict=True)]
        report.outputs = [ValueSummary(names(x), v) for x, v in zip(eqn.outvars, outs,
                                                                      strict=True)]
        return report


def probe_jaxpr(closed, args, kinds=KINDS, name="the program", arg_names=None):
    """Interpret a ClosedJaxpr on flat concrete args; a NonfiniteReport."""
    probe = _Probe(name, kinds)
    saved = config.jax_debug_nans, config.jax_debug_infs
    config.update("jax_debug_nans", False)  # the probe checks; eager checks would raise
    config.update("jax_debug_infs", False)
    try:
        with core.set_trace(eval_trace):
            probe.run_closed(closed, list(args), [])
    except _Found as found:
        return found.report
    finally:
        config.update("jax_debug_nans", saved[0])
        config.update("jax_debug_infs", saved[1])
    names = arg_names or [f"argument {i}" for i in range(len(args))]
    bad = [n for n, a in zip(names, args, strict=True) if _kinds_of(a, kinds)]
    return NonfiniteReport(name, found=False, nonfinite_args=bad)


def find_nonfinite(fun, *, nan=True, inf=True, static_argnums=()):
    """find_nonfinite(f)(*args) -> NonfiniteReport: run f (traced, so grad's backward
    pass and everything under jit, scan, while and cond is seen equation by equation)
    and report the first equation whose output holds a NaN (`nan=True`) or an inf
    (`inf=True`) that none of its inputs held."""
    kinds = tuple(k for k, on in (("nan", nan), ("inf", inf)) if on)
    name = getattr(fun, "__name__", type(fun).__name__)

    def probe(*args, **kwargs):
        closed = make_jaxpr(fun, static_argnums=static_argnums)(*args, **kwargs)
        dyn = [a for i, a in enumerate(args) if i not in _as_set(static_argnums)]
        leaves = tree_util.tree_leaves((tuple(dyn), kwargs))
        return probe_jaxpr(closed, leaves, kinds, name)
    return probe


def _as_set(argnums):
    return {argnums} if isinstance(argnums, int) else set(argnums)


def _locate_for_jit(closed, leaves):
    kinds = tuple(k for k, on in (("nan", config.jax_debug_nans),
                                  ("inf", config.jax_debug_infs)) if on)
    return probe_jaxpr(closed, leaves, kinds)


_jit.nonfinite_locator["locate"] = _locate_for_jit
