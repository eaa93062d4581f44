"""funcgraph.distributed: several processes, each with its own devices, as one mesh.

    fg.distributed.initialize("10.0.0.1:1234", num_processes=2, process_id=0)
    mesh = fg.make_mesh((fg.device_count(),), ("data",))   # every process's devices

Call `initialize` first thing in every process (before any device is used).  Then
`fg.devices()` lists the devices of all processes, `fg.local_devices()` this one's,
`fg.process_index()`/`fg.process_count()` say who is who, and a jitted program over a
mesh spanning processes runs as one SPMD program: each process runs it on its own
devices, and XLA's collectives carry data between processes.  Arrays spanning
processes are built from each process's own blocks (`fg.make_array_from_callback`,
`fg.make_array_from_single_device_arrays`), as in jax.  The work is jaxlib's
distributed runtime (see funcgraph/backend/distributed.py and docs/scaling.md).
"""
from funcgraph.backend import distributed as _runtime

__all__ = ["initialize", "is_initialized", "shutdown"]


def initialize(coordinator_address=None, num_processes=None, process_id=None,
               local_device_ids=None, *, initialization_timeout=300):
    """Join the group of `num_processes` processes as `process_id`; process 0 serves
    the coordination service at `coordinator_address` ("host:port"), which the others
    connect to.  `local_device_ids` restricts this process to some of its devices.  As
    in jax, the arguments may be left out on clusters jax detects (SLURM, TPU pods)."""
    _runtime.initialize(coordinator_address, num_processes, process_id, local_device_ids,
                        initialization_timeout)


def shutdown():
    """Leave the group (done at exit anyway)."""
    _runtime.shutdown()


def is_initialized():
    return _runtime.is_initialized()
