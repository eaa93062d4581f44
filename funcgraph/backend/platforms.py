"""Which platforms (cpu, cuda/gpu, rocm, tpu) funcgraph runs on, as jax chooses them.

The default backend is the first platform of config `jax_platforms` ("cuda,cpu"; from
the environment variable FUNCGRAPH_PLATFORMS or JAX_PLATFORMS), or jax's default
(accelerators before the CPU) when it is unset.  A platform asked for by name that is
not present raises jax's own error ("Unknown backend: 'gpu' requested, but no
platforms that are instances of gpu are present. ...").
"""
from funcgraph.backend import _client, _jax


def get_backend(name=None):
    """jaxlib's client for platform `name` ("cpu", "gpu", "cuda", ...); None: the default."""
    if name is None:
        return _client()
    return _jax().backend.get_backend(name)


def devices(name=None):
    """Every device of platform `name`, of every process."""
    return list(get_backend(name).devices())


def local_devices(name=None):
    """The devices of platform `name` this process drives."""
    return list(get_backend(name).local_devices())


def default_platform():
    """The default backend's platform name ("cpu", "gpu", "tpu"), as jax.default_backend()."""
    return _client().platform
