"""Several processes, one mesh: jaxlib's distributed runtime (a coordination service
that process 0 hosts and every process connects to) makes each process's client see
the devices of all of them, and XLA's CPU collectives (gloo) carry the data between
processes.  funcgraph builds no runtime of its own: this is jax.distributed's
initialization, called before the backend's client exists.  The jaxlib surface:
`jax.distributed.initialize`/`shutdown`, the `jax_cpu_collectives_implementation`
config, `Client.local_devices`, `Device.process_index`.
"""
from funcgraph.backend import _default_client, _jax


def initialize(coordinator_address, num_processes, process_id, local_device_ids=None,
               initialization_timeout=300):
    """Join the distributed runtime as `process_id` of `num_processes`; must come before
    anything creates the backend's client (before any device is used)."""
    if _default_client.cache_info().currsize:
        raise RuntimeError("funcgraph.distributed.initialize() must be called before any "
                           "device is used (fg.devices(), arrays, jit): call it first "
                           "thing in the program")
    jax = _jax().jax
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=coordinator_address,
                               num_processes=num_processes, process_id=process_id,
                               local_device_ids=local_device_ids,
                               initialization_timeout=initialization_timeout)


def shutdown():
    """Leave the distributed runtime (every process should, before it exits)."""
    _jax().jax.distributed.shutdown()


def is_initialized():
    return _jax().jax.distributed.is_initialized()
