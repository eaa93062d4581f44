"""`jax._src.compiler`: backend_compile_and_load, the call every compile of the process
goes through (funcgraph.backend.compile_and_load calls it here), so that patching this
module's attribute (chex.restrict_backends does) sees each compile with its backend."""
from funcgraph import backend as _backend


def backend_compile_and_load(backend, module, executable_devices, options, host_callbacks):
    """Compile `module` (StableHLO text or a parsed module) on the client `backend`."""
    if host_callbacks is None:
        return backend.compile_and_load(module, executable_devices, options)
    return backend.compile_and_load(module, executable_devices=executable_devices,
                                    compile_options=options, host_callbacks=host_callbacks)


def _through_this_module(client, module, devices, options, host_callbacks):
    # looked up at each call: a patched backend_compile_and_load takes effect at once
    return _this["backend_compile_and_load"](client, module, devices, options, host_callbacks)


_this = globals()  # setattr on this module writes here
_backend.compile_hook = _through_this_module
