"""Global configuration flags, set with `funcgraph.config.update(name, value)`.

Flag names follow JAX where JAX has the same flag (`jax_enable_x64`,
`jax_explain_cache_misses`, `jax_disable_jit`, `jax_debug_nans`, `jax_debug_infs`,
`jax_log_compiles`, the persistent compilation cache's `jax_compilation_cache_dir`
and its companions, `jax_logging_level`, `jax_dump_ir_to`, `jax_num_cpu_devices`), so
code written for JAX keeps working.
"""
import contextlib
import logging
import os
import sys


def _env_flag(name, default):
    value = os.environ.get(name.upper())
    if value is None:
        return default
    return value.lower() in ("1", "true", "yes", "on")


def _env_value(name, default, kind=str):
    value = os.environ.get(name.upper())
    return default if value is None else kind(value)


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
        # jit-decorated functions run op by op, as plain Python (see `disable_jit`).
        self.jax_disable_jit = _env_flag("jax_disable_jit", False)
        # A NaN (inf) made by an eager primitive or in the outputs of a jitted function
        # raises FloatingPointError naming the primitive that made it and its line.
        self.jax_debug_nans = _env_flag("jax_debug_nans", False)
        self.jax_debug_infs = _env_flag("jax_debug_infs", False)
        # Log (logger "funcgraph.jit") every compilation: function, argument types, time.
        self.jax_log_compiles = _env_flag("jax_log_compiles", False)
        # The device (or platform name) uncommitted arrays and jitted programs use;
        # None: the backend's first device.
        self.jax_default_device = None
        # The platforms to use, in order ("cuda,cpu"): the first is the default backend.
        # None: jax's choice (every platform present, accelerators first).
        self.jax_platforms = (os.environ.get("FUNCGRAPH_PLATFORMS")
                              or os.environ.get("JAX_PLATFORMS") or None)
        # The precision of float matmuls and convolutions whose `precision` is None:
        # "bfloat16"/"fastest" (XLA's DEFAULT; TF32 on Ampere+ GPUs),
        # "tensorfloat32"/"high" (HIGH), "float32"/"highest" (HIGHEST); None: DEFAULT.
        self.jax_default_matmul_precision = (
            os.environ.get("JAX_DEFAULT_MATMUL_PRECISION") or None)
        # The persistent compilation cache (backend/compilation_cache.py): its directory
        # (None: off), whether it is used at all, the shortest compile worth saving,
        # the smallest entry worth saving, the directory's size limit in bytes (-1: none,
        # 0: off), and whether errors reading or writing it raise (else: warnings).
        self.jax_compilation_cache_dir = _env_value("jax_compilation_cache_dir", None)
        self.jax_enable_compilation_cache = _env_flag("jax_enable_compilation_cache", True)
        self.jax_persistent_cache_min_compile_time_secs = _env_value(
            "jax_persistent_cache_min_compile_time_secs", 1.0, float)
        self.jax_persistent_cache_min_entry_size_bytes = _env_value(
            "jax_persistent_cache_min_entry_size_bytes", 0, int)
        self.jax_compilation_cache_max_size = _env_value(
            "jax_compilation_cache_max_size", -1, int)
        self.jax_raise_persistent_cache_errors = _env_flag(
            "jax_raise_persistent_cache_errors", False)
        # The level of funcgraph's loggers ("DEBUG", "INFO", ...), which then also write
        # to stderr; None or "NOTSET": as Python's logging is configured.
        self.jax_logging_level = _env_value("jax_logging_level", None)
        # jax's switch to its next implementation of remat (checkpoint); funcgraph has
        # one, so the flag is accepted (code written for jax sets it) and changes nothing.
        self.jax_remat3 = _env_flag("jax_remat3", False)
        # jax's eager check for tracers leaked out of a transformation; funcgraph always
        # reports a leaked tracer where it is used, so the flag is accepted and changes nothing.
        self.jax_check_tracer_leaks = _env_flag("jax_check_tracer_leaks", False)
        # jax's check that no PRNG key is used twice; funcgraph has no such check, so
        # the flag may be set off (code written for jax turns it off around a block)
        # but turning it on is an error (see the hook below).
        self.jax_debug_key_reuse = False
        # jax's switch to typed PRNG keys: random.PRNGKey, split and fold_in return key
        # arrays (key<fry>) rather than raw uint32 data.
        self.jax_enable_custom_prng = _env_flag("jax_enable_custom_prng", False)
        # A directory every compiled module is written to as text (backend/ir_dump.py).
        self.jax_dump_ir_to = _env_value("jax_dump_ir_to", None)
        # How many CPU devices the CPU backend has (-1: jax's default, one); read when
        # the backend starts, so it must be set before funcgraph runs anything.
        self.jax_num_cpu_devices = _env_value("jax_num_cpu_devices", -1, int)
        # JAX's implicit dtype promotion: "standard" (the lattice) or "strict" (only
        # weakly typed scalars promote, to any dtype of their kind or a wider kind).
        self.jax_numpy_dtype_promotion = _env_value("jax_numpy_dtype_promotion", "standard")
        # Operands of different non-zero ranks in a NumPy operation: "allow" (NumPy's
        # broadcasting), "warn" (and a warning) or "raise" (a ValueError).
        self.jax_numpy_rank_promotion = _env_value("jax_numpy_rank_promotion", "allow")
        # XLA's GPU caches kept in that directory too ("all" or their option names).
        self.jax_persistent_cache_enable_xla_caches = _env_value(
            "jax_persistent_cache_enable_xla_caches", "xla_gpu_per_fusion_autotune_cache_dir")
        # jax's older way to choose the default platform ("cpu", "gpu", ...; "": none),
        # which the default backend follows over jax_platforms where set.
        self.jax_platform_name = os.environ.get("JAX_PLATFORM_NAME", "").lower()

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name in _DISPATCH_FLAGS:
            # One attribute for the dispatch hot paths to test: is any of them on?
            object.__setattr__(self, "dispatch_checks",
                               any(getattr(self, f, False) for f in _DISPATCH_FLAGS))
            object.__setattr__(self, "check_nonfinite",
                               bool(getattr(self, "jax_debug_nans", False)
                                    or getattr(self, "jax_debug_infs", False)))

    def update(self, name, value):
        if not hasattr(self, name):
            raise AttributeError(f"unknown config option {name!r}")
        hook = update_hooks.get(name)
        if hook is not None:
            hook(value)  # may refuse the value (raise), which is then not set
        setattr(self, name, value)

    @property
    def x64_enabled(self):
        """jax's older spelling of jax_enable_x64."""
        return self.jax_enable_x64

    def read(self, name):
        return getattr(self, name)

    def parse_flags_with_absl(self):
        """Set the options given on the command line (before any `--`) as
        `--jax_<name>=value`, `--jax_<name>` or `--nojax_<name>`; jax reads them through
        absl, funcgraph parses these forms itself."""
        for arg in sys.argv[1:]:
            if arg == "--":
                break
            name, _, text = arg.lstrip("-").partition("=")
            negated = name.startswith("nojax_") and not text
            name = name[2:] if negated else name
            if not arg.startswith("--") or not name.startswith("jax_") or not hasattr(self, name):
                continue
            current = getattr(self, name)
            if isinstance(current, bool) or negated or not text:
                value = not negated if not text else text.lower() in ("1", "true", "yes", "on")
            elif isinstance(current, (int, float)):
                value = type(current)(text)
            else:
                value = text
            self.update(name, value)

    config_with_absl = parse_flags_with_absl


# update_hooks[name](value): called by config.update before an option changes, by
# whoever must act on it (the backend hands jax the options jax's runtime reads).
update_hooks = {}

_log_handler = logging.StreamHandler()


def _set_logging_level(value):
    """jax_logging_level: set the "funcgraph" logger's level, with a handler to stderr."""
    logger = logging.getLogger("funcgraph")
    logger.removeHandler(_log_handler)
    if value is None or value == "NOTSET":
        logger.setLevel(logging.NOTSET)
        return
    levels = logging.getLevelNamesMapping()
    if value not in levels:
        raise ValueError(f"jax_logging_level must be one of {sorted(levels)} or None, got "
                         f"{value!r}")
    logger.setLevel(levels[value])
    logger.addHandler(_log_handler)


update_hooks["jax_logging_level"] = _set_logging_level


def _one_of(name, allowed):
    def check(value):
        if value not in allowed:
            raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return check


update_hooks["jax_numpy_dtype_promotion"] = _one_of("jax_numpy_dtype_promotion",
                                                    ("standard", "strict"))
update_hooks["jax_numpy_rank_promotion"] = _one_of("jax_numpy_rank_promotion",
                                                   ("allow", "warn", "raise"))

_DISPATCH_FLAGS = ("jax_disable_jit", "jax_debug_nans", "jax_debug_infs",
                   "jax_default_device")

config = Config()
if config.jax_logging_level is not None:
    _set_logging_level(config.jax_logging_level)


class _FlagContext(contextlib.ContextDecorator):
    """`with`: set a config flag, restoring its previous value on exit; as jax's, also a
    decorator (`@numpy_rank_promotion("raise")`), which may be entered again inside."""

    def __init__(self, name, value):
        self.name = name
        self.value = value
        self._saved = []

    def __enter__(self):
        self._saved.append(getattr(config, self.name))
        config.update(self.name, self.value)
        return self

    def __exit__(self, *exc):
        config.update(self.name, self._saved.pop())


def disable_jit(disable=True):
    """Context manager: inside it, jit-decorated functions run their Python op by op on
    concrete values (prints show values; pdb works), as with JAX's `jax.disable_jit`."""
    return _FlagContext("jax_disable_jit", bool(disable))


def default_matmul_precision(precision):
    """Context manager: float matmuls and convolutions without an explicit `precision`
    use `precision` in its body (JAX's `jax.default_matmul_precision`)."""
    return _FlagContext("jax_default_matmul_precision", precision)


def default_device(device):
    """Context manager: uncommitted arrays and jitted computations on them use `device`
    in its body (JAX's `jax.default_device`)."""
    return _FlagContext("jax_default_device", device)


def numpy_dtype_promotion(value):
    """Context manager: JAX's dtype promotion ("standard" or "strict") in its body."""
    return _FlagContext("jax_numpy_dtype_promotion", value)


def numpy_rank_promotion(value):
    """Context manager: JAX's rank promotion ("allow", "warn", "raise") in its body."""
    return _FlagContext("jax_numpy_rank_promotion", value)


class _FlagState:
    """A flag as JAX exposes it at the top level (`jax.debug_nans`): called with a value,
    a context manager setting the flag inside its block; `.value` reads it."""

    def __init__(self, name):
        self.name = name

    def __call__(self, value=True):
        return _FlagContext(self.name, bool(value))

    @property
    def value(self):
        return getattr(config, self.name)

    def __repr__(self):
        return f"<flag {self.name}={self.value}>"


debug_nans = _FlagState("jax_debug_nans")
debug_key_reuse = _FlagState("jax_debug_key_reuse")


def _refuse_key_reuse_checks(value):
    if value:
        raise NotImplementedError("jax_debug_key_reuse: funcgraph does not check PRNG keys "
                                  "for reuse; only False is accepted")


update_hooks["jax_debug_key_reuse"] = _refuse_key_reuse_checks
debug_infs = _FlagState("jax_debug_infs")
log_compiles = _FlagState("jax_log_compiles")
enable_x64 = _FlagState("jax_enable_x64")
explain_cache_misses = _FlagState("jax_explain_cache_misses")
check_tracer_leaks = _FlagState("jax_check_tracer_leaks")
enable_custom_prng = _FlagState("jax_enable_custom_prng")


def checking_leaks():
    return check_tracer_leaks(True)
