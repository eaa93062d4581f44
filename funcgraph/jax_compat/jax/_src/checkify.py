"""`jax._src.checkify` (flax's nnx.checkify imports it): jax.experimental.checkify's
names, from funcgraph.checkify."""
from funcgraph.checkify import *  # noqa: F401,F403
from funcgraph.checkify import Error, JaxException, checkify, init_error, user_checks  # noqa: F401

Out = object
