"""The precision of float matmuls and convolutions: lax.Precision, the config flag
`jax_default_matmul_precision`, and the StableHLO precision_config they lower to.

On GPUs DEFAULT lets XLA use TF32 (Ampere and later) for float32 and accumulate
bfloat16/float16 products in float32; HIGH is bf16_3x (about TF32's accuracy);
HIGHEST is full float32.  The CPU computes float32 exactly whatever is asked.
"""
import enum

from funcgraph.config import config


class Precision(enum.Enum):
    """lax.Precision: XLA's operand precision for dot_general and conv_general_dilated."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        """Precision("highest"), as jax accepts the strings of the config flag."""
        return _NAMES.get(value.lower()) if isinstance(value, str) else None

    def __repr__(self):
        return f"Precision.{self.name}"

    def __str__(self):
        return self.name


# The strings jax accepts (for `precision=` and for the config flag), by what they mean.
_NAMES = {
    "default": Precision.DEFAULT, "fastest": Precision.DEFAULT, "bfloat16": Precision.DEFAULT,
    "high": Precision.HIGH, "tensorfloat32": Precision.HIGH, "bfloat16_3x": Precision.HIGH,
    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST,
}


def _one(precision):
    if isinstance(precision, Precision):
        return precision
    if isinstance(precision, str) and precision.lower() in _NAMES:
        return _NAMES[precision.lower()]
    raise ValueError(f"Precision argument must be one of: None, a lax.Precision, one of the "
                     f"strings {sorted(_NAMES)}, or a pair of them; got {precision!r}")


def canonicalize_precision(precision):
    """None or a (lhs, rhs) pair of Precision: the argument, else the config flag."""
    if precision is None:
        precision = config.jax_default_matmul_precision
        if precision is None:
            return None
    if isinstance(precision, (tuple, list)):
        if len(precision) != 2:
            raise ValueError(f"precision must be a pair (lhs, rhs), got {precision!r}")
        return (_one(precision[0]), _one(precision[1]))
    one = _one(precision)
    return (one, one)


def precision_config(precision):
    """The precision_config attribute of a dot_general or convolution (DEFAULT for None,
    as jax writes it)."""
    pair = precision or (Precision.DEFAULT, Precision.DEFAULT)
    return "[" + ", ".join(f"#stablehlo<precision {p.name}>" for p in pair) + "]"
