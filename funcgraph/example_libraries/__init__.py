"""Small example libraries with the API of jax.example_libraries: `optimizers` (the
(init, update, get_params) triples) and `stax` (the (init_fun, apply_fun) layers)."""
