"""Small helpers under the names JAX code uses for them (`jax._src.util`)."""
from funcgraph.core import safe_zip


def safe_map(f, *lists):
    """`list(map(f, *lists))`, refusing lists of different lengths."""
    return [f(*args) for args in safe_zip(*lists)] if lists else []


def scipy_linalg():
    """SciPy's linalg module, for the decompositions funcgraph runs on the host: imported
    at its first use, since importing SciPy takes longer than importing funcgraph."""
    import scipy.linalg
    return scipy.linalg


__all__ = ["safe_map", "safe_zip"]
