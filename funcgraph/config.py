"""Global configuration flags, set with `funcgraph.config.update(name, value)`.

Flag names follow JAX where JAX has the same flag (`jax_enable_x64`,
`jax_explain_cache_misses`), so code written for JAX keeps working.
"""
import os


def _env_flag(name, default):
    value = os.environ.get(name.upper())
    if value is None:
        return default
    return value.lower() in ("1", "true", "yes", "on")


class Config:
    def __init__(self):
        # 64-bit types; off means float64/int64 inputs are narrowed to 32 bits.
        self.jax_enable_x64 = _env_flag("jax_enable_x64", False)
        # Log (through `logging` and `funcgraph.config.retrace_log`) why a jit retraced.
        self.jax_explain_cache_misses = _env_flag("jax_explain_cache_misses", False)
        # Run the IR type checker after every construction and pass.
        self.funcgraph_check_ir = _env_flag("funcgraph_check_ir", False)
        # Eager primitives on the CPU run their NumPy reference implementation;
        # off (or on any other backend) they run as compiled XLA computations.
        self.funcgraph_eager_numpy = _env_flag("funcgraph_eager_numpy", True)
        # Run IR passes (DCE, CSE, constant folding) inside jit.
        self.funcgraph_jit_passes = _env_flag("funcgraph_jit_passes", True)

    def update(self, name, value):
        if not hasattr(self, name):
            raise AttributeError(f"unknown config option {name!r}")
        setattr(self, name, value)

    def read(self, name):
        return getattr(self, name)


config = Config()
