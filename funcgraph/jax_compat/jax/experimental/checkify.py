"""`jax.experimental.checkify`: checkify, check, debug_check, check_error, Error,
JaxRuntimeError, the error classes and check sets (user_checks, nan_checks, index_checks,
div_checks, float_checks, automatic_checks, all_checks): funcgraph.checkify."""
from funcgraph.checkify import (  # noqa: F401
    BatchedError, DivisionByZeroError, Error, ErrorCategory, FailedCheckError,
    JaxException, JaxRuntimeError, NaNError, OOBError, all_checks, automatic_checks,
    check, check_error, checkify, debug_check, div_checks, float_checks, index_checks,
    init_error, nan_checks, user_checks)
