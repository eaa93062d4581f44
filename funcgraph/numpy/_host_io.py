"""Arrays from host data (frombuffer, fromstring, load) and einsum_path; fromfile and
fromiter are refused as in jnp (they consume a file or an iterator, which a traced
function must not)."""
import numpy as np
import opt_einsum

from funcgraph import dtypes
from funcgraph.numpy._core import asarray


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    return asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def _impure(name):
    def refuse(*args, **kwargs):
        raise NotImplementedError(
            f"funcgraph.numpy.{name}() is not implemented because it is not pure (it consumes "
            f"its source), as in jnp; use funcgraph.numpy.asarray(numpy.{name}(...)) "
            f"outside transformed functions instead")
    refuse.__name__ = name
    return refuse


fromfile = _impure("fromfile")
fromiter = _impure("fromiter")


def load(file, *args, **kwargs):
    """numpy.load, with bfloat16 arrays (saved by numpy as 2-byte voids) recovered."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == np.dtype("V2"):
            out = out.view(dtypes.bfloat16)
        try:
            return asarray(out)
        except TypeError:
            return out
    return out


def einsum_path(subscripts, /, *operands, optimize="auto"):
    """The contraction order opt_einsum chooses (as used by funcgraph.numpy.einsum)."""
    if optimize is True:
        optimize = "auto"
    shapes = [np.shape(o) if not hasattr(o, "aval") else o.aval.shape for o in operands]
    return opt_einsum.contract_path(subscripts, *shapes, shapes=True, optimize=optimize)
