"""Eager sin, cos, tan, atan2 and cbrt on the CPU by the C math library.

Eager ops run on NumPy where NumPy's result is XLA's bit for bit, and compiled
otherwise (interpreters/eval.py).  NumPy's sin and friends round differently from
XLA's in about 10% of float32 results, but XLA's CPU code computes these functions by
calling the C math library (sinf, sin, ...) in a floating-point mode that flushes
subnormals; funcgraph._libm calls the same functions in the same mode.  That makes an
eager sin a NumPy-speed op (about 1 us) instead of a compiled call (4-10 us).

A different XLA may compute them its own way, so before the first use for a dtype each
function is run both ways, compiled and here, on a probe of special and random inputs;
where any result differs, or funcgraph._libm was not built (no C compiler), the impl
raises NoHostImpl and the op runs compiled, as before.  (The unary functions were also
checked on every float32, float16 and bfloat16 input against jaxlib 0.10.2's CPU code:
tools/check_libm_exhaustive.py.)"""
import numpy as np

from funcgraph import dtypes
from funcgraph.core import ShapedArray
from funcgraph.interpreters.eval import NoHostImpl, compiled_eval, eager_mode

from funcgraph.native import libm as _libm  # None where not built

_FLOAT32 = np.dtype(np.float32)
_DTYPES = (_FLOAT32, np.dtype(np.float64))
_HALF = (np.dtype(np.float16), dtypes.bfloat16)  # computed in float32, as XLA does
# function name -> {dtype: whether this host's results were XLA's on the probe}
_served = {}


def libm_unary(name, primitive):
    """The eager impl of an elementwise unary primitive by funcgraph._libm's function
    `name`; primitive() gives the primitive (declared with this impl).  Its common case
    (a float32 or float64 ndarray, checked) runs in C: _libm.UnaryImpl, whose fallback is
    the Python impl below."""
    checked = _served.setdefault(name, {})

    def impl(x):
        x = np.asarray(x, order="C")
        if checked.get(x.dtype) is not True or not eager_mode.uses_numpy():
            _check_usable(primitive(), x.dtype, 1)
        return _unary(name, x)
    if _libm is None:
        return impl
    return _libm.UnaryImpl(name, checked, eager_mode.uses_numpy, np.empty_like, np.ndarray,
                           impl)


def libm_binary(name, primitive):
    """As libm_unary, for a binary primitive (a rank-0 operand meets a shaped one); in
    Python only."""
    checked = _served.setdefault(name, {})

    def impl(x, y):
        x, y = np.asarray(x), np.asarray(y)
        if checked.get(x.dtype) is not True or not eager_mode.uses_numpy():
            _check_usable(primitive(), x.dtype, 2)
        if x.shape != y.shape:
            shape = np.broadcast_shapes(x.shape, y.shape)
            x, y = np.broadcast_to(x, shape), np.broadcast_to(y, shape)
        return _binary(name, x, y)
    return impl


def _unary(name, x):
    if x.dtype in _DTYPES:
        out = np.empty_like(x)
        _libm.unary(name, x, out)
        return out
    wide = x.astype(_FLOAT32)
    _libm.unary(name, wide, wide)
    return wide.astype(x.dtype)


def _binary(name, x, y):
    dtype = x.dtype
    if dtype not in _DTYPES:
        x, y = x.astype(_FLOAT32), y.astype(_FLOAT32)
    x, y = np.asarray(x, order="C"), np.asarray(y, order="C")
    out = np.empty(x.shape, x.dtype)
    _libm.binary(name, x, y, out)
    return out if out.dtype == dtype else out.astype(dtype)


def _check_usable(prim, dtype, arity):
    """NoHostImpl where funcgraph._libm does not serve prim for dtype (checked against
    XLA on the first call for each dtype)."""
    if not eager_mode.uses_numpy():  # the default device is no CPU (constant folding)
        raise NoHostImpl
    checked = _served[prim.name]
    agrees = checked.get(dtype)
    if agrees is None and _libm is not None and (dtype in _DTYPES or dtype in _HALF):
        checked[dtype] = False  # compiled meanwhile (another thread, the check's own)
        agrees = checked[dtype] = _agrees_with_xla(prim, dtype, arity)
    if not agrees:
        raise NoHostImpl


def _agrees_with_xla(prim, dtype, arity):
    """Whether funcgraph._libm's results are the compiled primitive's on the probe, as
    one long array and as a short one (XLA's code for a function may depend on the
    array's length: its float32 atan is the library's only for some lengths)."""
    special, random = _probe(dtype)
    if arity == 1:
        args = [np.concatenate([special, random])]
    else:  # every pair of special values, then random pairs
        rng = np.random.default_rng(1)
        args = [np.concatenate([np.repeat(special, special.size), random]),
                np.concatenate([np.tile(special, special.size), rng.permutation(random)])]
    short = [np.ascontiguousarray(a[::a.size // 23][:23]) for a in args]  # spread out
    return _same_as_compiled(prim, args) and _same_as_compiled(prim, short)


def _same_as_compiled(prim, args):
    out = _unary(prim.name, *args) if len(args) == 1 else _binary(prim.name, *args)
    from_xla = np.asarray(compiled_eval["primitive"](
        prim, [ShapedArray(a.shape, a.dtype) for a in args], {}, args))
    same = (from_xla == out) & (np.signbit(from_xla) == np.signbit(out))
    return bool(np.all(same | (np.isnan(from_xla) & np.isnan(out))))


def _probe(dtype):
    """(special values, random values): zeros, subnormals, the extremes, infinities,
    NaN, multiples of pi/4 and huge arguments of both signs; random bit patterns and
    random values of every magnitude.  For 16-bit types the random values are all
    65,536 bit patterns."""
    if dtype in _HALF:
        special, _ = _probe(_FLOAT32)
        every = np.arange(2 ** 16, dtype=np.uint16).view(dtype)
        with np.errstate(over="ignore"):
            return special.astype(dtype), every
    info = np.finfo(dtype)
    special = [0.0, info.smallest_subnormal, info.smallest_normal / 2, info.smallest_normal,
               info.eps, 0.5, 1.0, 2.0, 3.0, 27.0, 1e4, 1e8, 1e15, 1e22, info.max,
               np.inf, np.nan]
    special += [k * np.pi / 4 for k in range(1, 17)]
    special = np.array(special, dtype)
    rng = np.random.default_rng(0)
    bits = np.uint32 if dtype == np.float32 else np.uint64
    random_bits = rng.integers(0, np.iinfo(bits).max, 8192, dtype=bits, endpoint=True)
    moderate = rng.standard_normal(8192) * 10.0 ** rng.integers(-8, 9, 8192)
    return (np.concatenate([special, -special]),
            np.concatenate([random_bits.view(dtype), moderate.astype(dtype)]))
