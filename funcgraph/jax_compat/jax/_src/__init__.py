"""`jax._src`: the shim package holding the few jax._src modules libraries import."""


def __getattr__(name):
    # jax._src.<module> as an attribute (jax imports its modules eagerly; libraries read
    # e.g. jax._src.dispatch without importing it)
    import importlib
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
