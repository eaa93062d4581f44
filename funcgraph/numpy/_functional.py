"""Functions of functions: vectorize (by vmap over the broadcast batch dimensions),
piecewise and fromfunction, with JAX's semantics (each function sees one element,
or one core-shaped slice, at a time)."""
import functools
import re

import numpy as np

from funcgraph.transforms.vmap import vmap
from funcgraph.numpy._compiled import compiled_when_eager
from funcgraph.numpy._core import asarray, aval_of
from funcgraph.numpy._creation import arange, zeros_like
from funcgraph.numpy._shapes import expand_dims, squeeze
from funcgraph.numpy._math import select

_DIMS = r"\((?:\w+(?:,\s*\w+)*)?\)"
_SIGNATURE = re.compile(rf"^\s*{_DIMS}(?:\s*,\s*{_DIMS})*\s*->\s*{_DIMS}(?:\s*,\s*{_DIMS})*\s*$")


def _parse_signature(signature):
    """'(m,n),(n)->(m)' -> ([('m','n'), ('n',)], [('m',)])."""
    if not _SIGNATURE.match(signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    inputs, outputs = signature.split("->")

    def dims(text):
        return [tuple(d.strip() for d in group.split(",") if d.strip())
                for group in re.findall(r"\(([^)]*)\)", text)]
    return dims(inputs), dims(outputs)


def _core_sizes(args, in_core):
    """{dimension name: size}, checking that each name has one size and each argument
    enough dimensions."""
    sizes = {}
    for arg, core in zip(args, in_core, strict=True):
        shape = aval_of(arg).shape
        if len(shape) < len(core):
            raise ValueError(f"vectorize: input with shape {shape} has fewer dimensions than "
                             f"its core dimensions {core}")
        for name, size in zip(core, shape[len(shape) - len(core):], strict=True):
            if sizes.setdefault(name, size) != size:
                raise ValueError(f"vectorize: inconsistent size for core dimension {name!r}: "
                                 f"{size} vs {sizes[name]}")
    return sizes


def _checked_outputs(func, sizes, out_core):
    """func, checking its outputs against the signature's output core dimensions."""
    def checked(*args):
        out = func(*args)
        outs = out if isinstance(out, tuple) else (out,)
        if len(outs) != len(out_core):
            raise TypeError(f"vectorize: the function returned {len(outs)} outputs, the "
                            f"signature names {len(out_core)}")
        for value, core in zip(outs, out_core, strict=True):
            shape = aval_of(value).shape
            if len(shape) != len(core):
                raise ValueError(f"vectorize: output of shape {shape} does not have the core "
                                 f"dimensions {core} of the signature")
            for name, size in zip(core, shape, strict=True):
                if sizes.setdefault(name, size) != size:
                    raise ValueError(f"vectorize: inconsistent size for core dimension "
                                     f"{name!r}: {size} vs {sizes[name]}")
        return out
    return checked


def _vectorized_call(func, args, in_core):
    """Call func on core-shaped slices: one vmap per broadcast batch dimension, mapping
    only the arguments whose batch dimension there is longer than 1."""
    batch_shapes = [aval_of(a).shape[:aval_of(a).ndim - len(c)] for a, c in zip(args, in_core,
                                                                                 strict=True)]
    broadcast = np.broadcast_shapes(*batch_shapes)
    padded = [(1,) * (len(broadcast) - len(s)) + s for s in batch_shapes]
    squeezed = [squeeze(a, tuple(i for i, n in enumerate(s) if n == 1)) if 1 in s else a
                for a, s in zip(args, batch_shapes, strict=True)]
    unmapped_dims = []
    for dim in reversed(range(len(broadcast))):
        in_axes = tuple(0 if shape[dim] != 1 else None for shape in padded)
        if all(axis is None for axis in in_axes):
            unmapped_dims.append(dim)
        else:
            func = vmap(func, in_axes=in_axes)
    out = func(*squeezed)
    if not unmapped_dims:
        return out
    axes = tuple(sorted(unmapped_dims))
    if isinstance(out, tuple):
        return tuple(expand_dims(o, axes) for o in out)
    return expand_dims(out, axes)


class vectorize:
    """Like numpy.vectorize, but compiled: pyfunc is vmapped over the batch dimensions.

    `signature` ('(n),(n)->()') names the core dimensions each call sees; `excluded`
    holds the positions or names of arguments passed through unchanged."""

    def __init__(self, pyfunc, *, excluded=frozenset(), signature=None):
        self.pyfunc = pyfunc
        self.excluded = frozenset(excluded)
        self.signature = signature
        functools.update_wrapper(self, pyfunc)

    def __call__(self, *args, **kwargs):
        excluded_kwargs = {k: v for k, v in kwargs.items() if k in self.excluded}
        kwargs = {k: v for k, v in kwargs.items() if k not in self.excluded}
        if kwargs:
            raise TypeError(f"vectorize: keyword arguments {sorted(kwargs)} must be in "
                            f"`excluded` (only positional arguments are vectorized)")
        fixed = {i: a for i, a in enumerate(args) if i in self.excluded or a is None}
        mapped = [asarray(a) for i, a in enumerate(args) if i not in fixed]

        def inner(*values):
            it = iter(values)
            full = [fixed[i] if i in fixed else next(it) for i in range(len(args))]
            return self.pyfunc(*full, **excluded_kwargs)
        if self.signature is None:
            return _vectorized_call(inner, mapped, [()] * len(mapped))
        in_core, out_core = _parse_signature(self.signature)
        in_core = [c for i, c in enumerate(in_core) if i not in fixed]
        if len(in_core) != len(mapped):
            raise TypeError(f"vectorize: wrong number of positional arguments: the signature "
                            f"{self.signature} expects {len(in_core)}, got {len(mapped)}")
        sizes = _core_sizes(mapped, in_core)
        return _vectorized_call(_checked_outputs(inner, sizes, out_core), mapped, in_core)


def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[k](x) (or the constant funclist[k]) where condlist[k] holds, the last true
    condition winning; where none holds, 0, or funclist[-1] given one function more than
    conditions.  The result has x's dtype."""
    funclist = tuple(funclist)
    try:
        hash(funclist)
    except TypeError:  # array constants among the functions: traced inline
        return _piecewise(x, condlist, funclist, args, kw)
    # one compiled program when eager, as jax's (the functions static)
    return _piecewise_program(x, condlist, funclist, args, kw)


def _piecewise(x, condlist, funclist, args, kw):
    x = asarray(x)
    dtype = aval_of(x).dtype
    conds = asarray(condlist, dtype=bool)
    if aval_of(conds).ndim == aval_of(x).ndim:
        conds = conds[None]
    count = aval_of(conds).shape[0]
    if len(funclist) not in (count, count + 1):
        raise ValueError(f"piecewise: with {count} conditions, funclist must have {count} or "
                         f"{count + 1} entries, got {len(funclist)}")

    def value(f):
        if callable(f):
            return vectorize(lambda v: asarray(f(v, *args, **kw), dtype=dtype))(x)
        return zeros_like(x) + asarray(f, dtype=dtype)
    default = value(funclist[count]) if len(funclist) == count + 1 else zeros_like(x)
    # select() takes the first true condition: reversed, the last one given wins.
    order = range(count - 1, -1, -1)
    return select([conds[k] for k in order], [value(funclist[k]) for k in order], default)


_piecewise_program = compiled_when_eager(static_argnames=("funclist",))(_piecewise)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """function(*indices, **kwargs) over the index grid of `shape`, called on one index
    tuple at a time (vmapped; output axis k is index argument k)."""
    shape = tuple(int(n) for n in shape)
    function = functools.partial(function, **kwargs)
    for axis in reversed(range(len(shape))):
        function = vmap(function, in_axes=tuple(0 if other == axis else None
                                                for other in range(len(shape))))
    return function(*(arange(n, dtype=dtype) for n in shape))
