"""The public transformations over pytrees: jit (with make_jaxpr and eval_shape),
vmap, the grad family (ad), and custom derivatives.  Each flattens its arguments with
api_util and runs the flat interpreters."""
