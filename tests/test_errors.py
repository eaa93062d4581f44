"""Error messages for the bad inputs DESIGN.md names: each names the value's shape/dtype
(or the argument, primitive and rule) and points to the fix."""
import re

import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import core, lax
from funcgraph.core import ConcretizationTypeError, MissingRuleError, UnexpectedTracerError
from funcgraph.primitives.contractions import dot_general_p

F32 = np.ones((2, 3), np.float32)
FIXES = ("lax.cond", "lax.while_loop", "static_argnums")


def assert_points_to_fixes(message):
    for fix in FIXES:
        assert fix in message, (fix, message)


def raising_frame_line(excinfo, function_name):
    """The line of `function_name` (user code) that the traceback runs through."""
    lines = [entry.lineno + 1 for entry in excinfo.traceback if entry.name == function_name]
    assert lines, f"{function_name} is not in the traceback"
    return lines[-1]


# --- Python control flow and conversions on traced values -------------------------

def test_python_if_on_a_traced_value():
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    with pytest.raises(ConcretizationTypeError, match=r"bool\(\).*bool\[\]") as excinfo:
        fg.jit(f)(F32)
    assert_points_to_fixes(str(excinfo.value))
    # The traceback runs through the user's `if` line.
    assert raising_frame_line(excinfo, "f") == f.__code__.co_firstlineno + 1


def test_python_while_on_a_traced_value():
    def f(x):
        while x < 10.0:
            x = x * 2.0
        return x
    with pytest.raises(ConcretizationTypeError, match=re.escape("bool[]")) as excinfo:
        fg.jit(f)(1.0)
    assert_points_to_fixes(str(excinfo.value))


@pytest.mark.parametrize("convert,name", [(bool, "bool()"), (int, "int()"),
                                          (float, "float()"), (complex, "complex()")])
@pytest.mark.parametrize("shape,text", [((), "f32[]"), ((2, 3), "f32[2,3]")])
def test_conversions_of_traced_values_name_the_type(convert, name, shape, text):
    x = np.ones(shape, np.float32)
    with pytest.raises(ConcretizationTypeError) as excinfo:
        fg.jit(lambda x: convert(x))(x)
    message = str(excinfo.value)
    assert message.startswith(name), message
    assert text in message
    assert_points_to_fixes(message)


def test_conversion_names_integer_dtype():
    with pytest.raises(ConcretizationTypeError, match=re.escape("i32[4]")):
        fg.jit(lambda n: int(n))(np.arange(4, dtype=np.int32))


def test_traced_value_as_python_size():
    with pytest.raises(ConcretizationTypeError, match=re.escape("i32[]")) as excinfo:
        fg.jit(lambda n: list(range(n)))(3)
    assert_points_to_fixes(str(excinfo.value))


def test_traced_value_passed_to_numpy():
    with pytest.raises(ConcretizationTypeError, match=re.escape("f32[2,3]")):
        fg.jit(lambda x: np.sin(x))(F32)


def test_static_argnums_is_the_fix():
    def f(x, n):
        if n > 0:
            return x * n
        return x
    np.testing.assert_allclose(fg.jit(f, static_argnums=1)(F32, 3), F32 * 3)
    with pytest.raises(ConcretizationTypeError):
        fg.jit(f)(F32, 3)


# --- shape and dtype mismatches -----------------------------------------------------

@pytest.mark.parametrize("under_jit", [False, True])
def test_numpy_broadcast_mismatch_names_the_shapes(under_jit):
    """jax's errors: operands of one rank meet in the lax operation (its TypeError);
    other mismatches are broadcast_shapes' ValueError."""
    add = (lambda a, b: a + b)
    add = fg.jit(add) if under_jit else add
    with pytest.raises(TypeError, match=re.escape("add got incompatible shapes for "
                                                  "broadcasting: (2, 3), (3, 2).")):
        add(fnp.asarray(F32), np.ones((3, 2), np.float32))
    with pytest.raises(ValueError, match=re.escape("shapes=[(2, 3), (4, 1, 2)]")):
        add(fnp.asarray(F32), np.ones((4, 1, 2), np.float32))
    where = fg.jit(fnp.where) if under_jit else fnp.where
    with pytest.raises(ValueError, match=re.escape("(2, 3), (2, 3), (4,)")):
        where(F32 > 0, F32, np.ones(4, np.float32))


@pytest.mark.parametrize("under_jit", [False, True])
def test_lax_binary_shape_and_dtype_mismatches(under_jit):
    add = fg.jit(lax.add) if under_jit else lax.add
    # jax's message; size-1 dimensions broadcast, as in jax's lax
    with pytest.raises(TypeError, match=r"add got incompatible shapes for broadcasting: "
                                        r"\(2, 3\), \(3, 2\)\."):
        add(F32, np.ones((3, 2), np.float32))
    assert add(F32, np.ones((1, 3), np.float32)).shape == (2, 3)
    with pytest.raises(TypeError, match=r"add: arrays must have the same number of "
                                        r"dimensions, got \{1, 2\}"):
        add(F32, np.ones(3, np.float32))
    with pytest.raises(TypeError, match="add requires arguments of one dtype, got "
                                        "float32, int32.*convert_element_type"):
        add(F32, np.ones((2, 3), np.int32))


def test_lax_dtype_kind_errors_name_the_dtype():
    with pytest.raises(TypeError, match=re.escape("sin does not accept operand of dtype int32 "
                                                  "(type i32[2,3])")):
        lax.sin(np.ones((2, 3), np.int32))
    with pytest.raises(TypeError, match=re.escape("and does not accept arguments of dtype "
                                                  "float32 (type f32[2,3])")):
        fg.jit(fnp.bitwise_and)(F32, F32)


def test_contraction_mismatches_name_the_shapes():
    with pytest.raises(TypeError, match=re.escape("(3 vs 2) for f32[2,3] and f32[2,3]")):
        fg.jit(lax.dot)(F32, F32)
    with pytest.raises(TypeError, match=re.escape("shapes (3,) and (4,)")):
        fnp.matmul(np.ones(3, np.float32), np.ones(4, np.float32))
    # lax.dot_general promotes mixed dtypes as jax does; the primitive itself takes one.
    with pytest.raises(TypeError, match="dot_general requires arguments of one dtype, got "
                                        "float32, int32"):
        dot_general_p.bind(F32, np.ones((3, 2), np.int32),
                           dimension_numbers=(((1,), (0,)), ((), ())), precision=None,
                           preferred_element_type=None)


def test_structural_mismatches_name_the_shapes():
    with pytest.raises(TypeError, match=re.escape("cannot reshape f32[2,3] (6 elements) into "
                                                  "shape (4,)")):
        lax.reshape(F32, (4,))
    with pytest.raises(TypeError, match=re.escape("shape (2, 3) (size 6) into shape (4, 2)")):
        fg.jit(lambda x: x.reshape(4, 2))(F32)
    with pytest.raises(TypeError, match=re.escape("operand f32[2,3] cannot broadcast to (4, 3)")):
        lax.broadcast_in_dim(F32, (4, 3), (0, 1))
    with pytest.raises(TypeError, match=re.escape("(0, 0) is not a permutation of the 2 "
                                                  "dimensions of f32[2,3]")):
        lax.transpose(F32, (0, 0))


def test_traced_shape_argument_points_to_static_argnums():
    with pytest.raises(TypeError, match="static_argnums"):
        fg.jit(lambda x, n: fnp.zeros(n))(F32, 3)


# --- tracers leaked out of jit -----------------------------------------------------------

@pytest.fixture
def leaked():
    store = []

    def f(x):
        store.append(x)
        return x * 2.0
    fg.jit(f)(np.ones(3, np.float32))
    return store[0]


@pytest.mark.parametrize("use", [
    lambda t: t + 1.0,
    lambda t: fnp.sin(t),
    lambda t: lax.mul(t, t),
    lambda t: fg.jit(lambda y: y + t)(np.ones(3, np.float32)),
    lambda t: fg.jit(lambda y: y)(t),
    lambda t: fg.make_jaxpr(lambda y: y * t)(np.ones(3, np.float32)),
], ids=["operator", "numpy", "lax", "closed_over_by_jit", "jit_argument", "make_jaxpr"])
def test_leaked_tracer(leaked, use):
    with pytest.raises(UnexpectedTracerError) as excinfo:
        use(leaked)
    message = str(excinfo.value)
    assert "f32[3]" in message and "escaped" in message
    assert "Return the value from the function" in message


def test_leaked_tracer_is_a_funcgraph_error(leaked):
    assert issubclass(UnexpectedTracerError, fg.core.FuncgraphError)
    with pytest.raises(fg.UnexpectedTracerError):
        leaked * 3


# --- static arguments ----------------------------------------------------------------------

def test_unhashable_static_positional_argument():
    f = fg.jit(lambda x, s: x * len(s), static_argnums=1)
    with pytest.raises(ValueError, match=r"static argument 1 .*unhashable type list "
                                        r"\(\[1, 2\]\).*use a tuple"):
        f(F32, [1, 2])
    np.testing.assert_allclose(f(F32, (1, 2)), F32 * 2)


def test_unhashable_static_keyword_argument():
    f = fg.jit(lambda x, s: x * len(s), static_argnames="s")
    with pytest.raises(ValueError, match=r"static argument 's' has unhashable type dict"):
        f(F32, s={"a": 1})


# --- primitives missing a rule -----------------------------------------------------------

def _shape_only_primitive(name):
    prim = core.Primitive(name)
    core.shape_rules[prim] = lambda x: x
    return prim


def test_primitive_without_lowering_under_jit():
    prim = _shape_only_primitive("test_errors_no_lowering")
    f = fg.jit(lambda x: prim.bind(x) * 2.0)
    with pytest.raises(MissingRuleError, match="primitive 'test_errors_no_lowering' has no "
                                               "StableHLO lowering rule"):
        f(F32)
    with pytest.raises(MissingRuleError, match="test_errors_no_lowering"):
        f.lower(F32)
    # Tracing alone only needs the shape rule.
    assert "test_errors_no_lowering" in str(fg.make_jaxpr(lambda x: prim.bind(x))(F32))


def test_primitive_without_impl_or_lowering_eagerly():
    prim = _shape_only_primitive("test_errors_no_impl")
    with pytest.raises(MissingRuleError, match="'test_errors_no_impl' has no StableHLO lowering"):
        prim.bind(F32)


def test_primitive_without_shape_rule():
    prim = core.Primitive("test_errors_no_shape")
    with pytest.raises(MissingRuleError, match="primitive 'test_errors_no_shape' has no shape "
                                               "rule"):
        fg.jit(lambda x: prim.bind(x))(F32)
    assert issubclass(MissingRuleError, NotImplementedError)


# --- invalid arguments to jit ------------------------------------------------------------

@pytest.mark.parametrize("arg,type_name", [("hello", "str"), (object(), "object"),
                                           ({"a": "s"}, "str")])
def test_invalid_argument_type_to_jit(arg, type_name):
    with pytest.raises(TypeError, match=rf"argument of type {type_name} is not a valid array"
                                        r".*static_argnums"):
        fg.jit(lambda x: x)(arg)


def test_string_is_fine_as_a_static_argument():
    f = fg.jit(lambda x, mode: x * 2.0 if mode == "double" else x, static_argnums=1)
    np.testing.assert_allclose(f(F32, "double"), F32 * 2)


def test_jit_of_a_non_callable():
    with pytest.raises(TypeError, match="jit expects a callable, got 3"):
        fg.jit(3)


def test_jit_unsupported_option():
    with pytest.raises(TypeError, match="unsupported options"):
        fg.jit(lambda x: x, backend_options=1)
