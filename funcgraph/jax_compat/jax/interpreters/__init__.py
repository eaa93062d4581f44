"""`jax.interpreters`: the shim package holding jax.interpreters.<name> shims."""


def __getattr__(name):
    # `import jax` makes jax.interpreters.<name> reachable as attributes (jax imports
    # them eagerly); here each is imported when first reached.
    import importlib
    try:
        return importlib.import_module(f"jax.interpreters.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"jax.interpreters.{name}":
            raise
        raise AttributeError(
            f"module 'jax.interpreters' has no attribute {name!r}") from None
