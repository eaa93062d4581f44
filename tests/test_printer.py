"""Golden tests of the IR printer: `str(fg.make_jaxpr(f)(*args))` and `.pretty(source=True)`."""
import os

import numpy as np

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import ir, lax

THIS_FILE = os.path.basename(__file__)


def test_single_equation():
    closed = fg.make_jaxpr(lambda x: fnp.sin(x))(np.ones(3, np.float32))
    assert str(closed) == """\
{ lambda ; a:f32[3]. let
    b:f32[3] = sin a
  in (b,) }"""
    assert repr(closed) == str(closed) == closed.pretty() == str(closed.jaxpr)


def test_multiple_inputs_and_outputs():
    def f(x, y):
        s = x + y
        return s * x, s.sum()
    closed = fg.make_jaxpr(f)(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))
    assert str(closed) == """\
{ lambda ; a:f32[2,3] b:f32[2,3]. let
    c:f32[2,3] = add a b
    d:f32[2,3] = mul c a
    e:f32[] = reduce_sum[axes=(0, 1)] c
  in (d, e) }"""


def test_outputs_that_are_inputs_literals_or_nothing():
    assert str(fg.make_jaxpr(lambda x: x)(np.int32(3))) == """\
{ lambda ; a:i32[]. let
  in (a,) }"""
    assert str(fg.make_jaxpr(lambda x: 2.0)(np.int32(3))) == """\
{ lambda ; a:i32[]. let
  in (2.0:f32[],) }"""
    assert str(fg.make_jaxpr(lambda x: ())(np.int32(3))) == """\
{ lambda ; a:i32[]. let
  in () }"""


def test_literals_of_each_dtype_kind():
    def f(x):
        return (lax.add(x, np.float32(1.5)),
                lax.add(x.astype(np.int8), np.int8(-3)),
                lax.bitwise_or(x > 0, np.bool_(True)),
                lax.bitwise_and(x > 0, np.bool_(False)),
                lax.mul(x.astype(np.uint32), np.uint32(7)),
                lax.mul(x.astype(np.float16), np.float16(0.5)),
                lax.mul(x.astype(fnp.bfloat16), np.array(2.5, fnp.bfloat16)),
                lax.mul(x.astype(np.complex64), np.complex64(1 - 2j)),
                lax.add(x, np.float32(-0.0)),
                lax.add(x, np.float32(np.inf)))
    assert str(fg.make_jaxpr(f)(np.float32(1))) == """\
{ lambda ; a:f32[]. let
    b:f32[] = add a 1.5:f32[]
    c:i8[] = convert_element_type[new_dtype=int8 weak_type=False] a
    d:i8[] = add c -3:i8[]
    e:bool[] = gt a 0.0:f32[]
    f:bool[] = or e True:bool[]
    g:bool[] = gt a 0.0:f32[]
    h:bool[] = and g False:bool[]
    i:u32[] = convert_element_type[new_dtype=uint32 weak_type=False] a
    j:u32[] = mul i 7:u32[]
    k:f16[] = convert_element_type[new_dtype=float16 weak_type=False] a
    l:f16[] = mul k 0.5:f16[]
    m:bf16[] = convert_element_type[new_dtype=bfloat16 weak_type=False] a
    n:bf16[] = mul m 2.5:bf16[]
    o:c64[] = convert_element_type[new_dtype=complex64 weak_type=False] a
    p:c64[] = mul o (1-2j):c64[]
    q:f32[] = add a -0.0:f32[]
    r:f32[] = add a inf:f32[]
  in (b, d, f, h, j, l, n, p, q, r) }"""


def test_float_literals_print_the_shortest_text_of_their_dtype():
    def f(x):
        return (lax.mul(x, np.float32(0.1)), lax.add(x, np.float32(1e-8)),
                lax.mul(x.astype(fnp.bfloat16), np.array(0.1, fnp.bfloat16)),
                lax.mul(x.astype(np.complex64), np.complex64(0.1 + 0.2j)))
    assert str(fg.make_jaxpr(f)(np.float32(1))) == """\
{ lambda ; a:f32[]. let
    b:f32[] = mul a 0.1:f32[]
    c:f32[] = add a 1e-08:f32[]
    d:bf16[] = convert_element_type[new_dtype=bfloat16 weak_type=False] a
    e:bf16[] = mul d 0.1:bf16[]
    f:c64[] = convert_element_type[new_dtype=complex64 weak_type=False] a
    g:c64[] = mul f (0.1+0.2j):c64[]
  in (b, c, e, g) }"""


def test_weak_typed_values_print_like_strong_ones():
    # Python scalars are weakly typed; the text shows the dtype only (as JAX prints it).
    weak = fg.make_jaxpr(lambda x: x * 2)(3.0)
    strong = fg.make_jaxpr(lambda x: x * 2)(np.float32(3.0))
    expected = """\
{ lambda ; a:f32[]. let
    b:f32[] = mul a 2.0:f32[]
  in (b,) }"""
    assert str(weak) == str(strong) == expected
    assert weak.jaxpr.invars[0].aval.weak_type and weak.jaxpr.outvars[0].aval.weak_type
    assert not strong.jaxpr.invars[0].aval.weak_type
    assert str(fg.make_jaxpr(lambda x: x * 2)(3)) == """\
{ lambda ; a:i32[]. let
    b:i32[] = mul a 2:i32[]
  in (b,) }"""


def test_constvars_from_closed_over_arrays():
    c = np.arange(3.0, dtype=np.float32)
    closed = fg.make_jaxpr(lambda x: x * c + 1.0)(np.ones(3, np.float32))
    assert str(closed) == """\
{ lambda a:f32[3]; b:f32[3]. let
    c:f32[3] = mul b a
    d:f32[3] = add c 1.0:f32[]
  in (d,) }"""
    np.testing.assert_array_equal(np.asarray(closed.consts[0]), c)


def test_params_formatting():
    def f(x, y):
        return (x.sum(axis=(0, 1)), x.T, x.reshape(6), x.astype(np.int32),
                fnp.expand_dims(x, 0), x @ y)
    # The default matmul precision is unset (the suite sets it on a GPU; as jax, a set
    # default becomes dot_general's precision parameter).
    with fg.default_matmul_precision(None):
        closed = fg.make_jaxpr(f)(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
    assert str(closed) == """\
{ lambda ; a:f32[2,3] b:f32[3,4]. let
    c:f32[] = reduce_sum[axes=(0, 1)] a
    d:f32[3,2] = transpose[permutation=(1, 0)] a
    e:f32[6] = reshape[dimensions=None new_sizes=(6,)] a
    f:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] a
    g:f32[1,2,3] = expand_dims[dimensions=(0,)] a
    h:f32[2,4] = dot_general[dimension_numbers=(((1,), (0,)), ((), ())) \
precision=None preferred_element_type=None] a b
  in (c, d, e, f, g, h) }"""


def test_nested_jit_prints_its_sub_jaxpr_nested():
    def inner(x):
        return x * 2.0 + 1.0
    g = fg.jit(inner)
    c = np.arange(3.0, dtype=np.float32)
    closed = fg.make_jaxpr(lambda x: g(x) + g(c))(np.ones(3, np.float32))
    assert str(closed) == """\
{ lambda a:f32[3]; b:f32[3]. let
    c:f32[3] = pjit[jaxpr={ lambda ; d:f32[3]. let
        e:f32[3] = mul d 2.0:f32[]
        f:f32[3] = add e 1.0:f32[]
      in (f,) } name=inner] b
    g:f32[3] = pjit[jaxpr={ lambda ; d:f32[3]. let
        e:f32[3] = mul d 2.0:f32[]
        f:f32[3] = add e 1.0:f32[]
      in (f,) } name=inner] a
    h:f32[3] = add c g
  in (h,) }"""


def test_doubly_nested_jit_and_multiple_results():
    def pair(x):
        return fnp.sin(x), fnp.cos(x)
    inner = fg.jit(pair)
    outer = fg.jit(lambda x: inner(x)[0] * 3.0)
    closed = fg.make_jaxpr(lambda x: outer(x))(np.float32(1.0))
    assert str(closed) == """\
{ lambda ; a:f32[]. let
    b:f32[] = pjit[jaxpr={ lambda ; c:f32[]. let
        d:f32[] e:f32[] = pjit[jaxpr={ lambda ; f:f32[]. let
            g:f32[] = sin f
            h:f32[] = cos f
          in (g, h) } name=pair] c
        i:f32[] = mul d 3.0:f32[]
      in (i,) } name=<lambda>] a
  in (b,) }"""


def test_source_lines():
    def f(x):
        y = fnp.sin(x)
        return y * 2.0
    line = f.__code__.co_firstlineno
    closed = fg.make_jaxpr(f)(np.ones(3, np.float32))
    assert closed.pretty(source=True) == f"""\
{{ lambda ; a:f32[3]. let
    b:f32[3] = sin a  # {THIS_FILE}:{line + 1} (f)
    c:f32[3] = mul b 2.0:f32[]  # {THIS_FILE}:{line + 2} (f)
  in (c,) }}"""
    assert closed.jaxpr.pretty(source=True) == closed.pretty(source=True)
    assert "#" not in str(closed)


def test_source_lines_inside_nested_jit():
    def inner(x):
        return x + 1.0
    g = fg.jit(inner)

    def outer(x):
        return g(x) * x
    inner_line = inner.__code__.co_firstlineno + 1
    outer_line = outer.__code__.co_firstlineno + 1
    closed = fg.make_jaxpr(outer)(np.ones(2, np.float32))
    assert closed.pretty(source=True) == f"""\
{{ lambda ; a:f32[2]. let
    b:f32[2] = pjit[jaxpr={{ lambda ; c:f32[2]. let
        d:f32[2] = add c 1.0:f32[]  # {THIS_FILE}:{inner_line} (inner)
      in (d,) }} name=inner] a  # {THIS_FILE}:{outer_line} (outer)
    e:f32[2] = mul b a  # {THIS_FILE}:{outer_line} (outer)
  in (e,) }}"""


def test_variable_names_past_z():
    def f(x):
        for _ in range(27):
            x = fnp.sin(x)
        return x
    text = str(fg.make_jaxpr(f)(np.float32(1.0)))
    lines = text.splitlines()
    assert lines[1] == "    b:f32[] = sin a"
    assert lines[25] == "    z:f32[] = sin y"
    assert lines[26] == "    ba:f32[] = sin z"
    assert lines[27] == "    bb:f32[] = sin ba"
    assert lines[-1] == "  in (bb,) }"


def test_dropped_outputs_print_as_underscore():
    aval = fg.core.ShapedArray((), np.dtype("float32"))
    a, b = ir.Var(aval), ir.Var(aval)
    from funcgraph.primitives.call import pjit_p
    sub = fg.make_jaxpr(lambda x: (x, x + 1.0))(np.float32(0))
    eqn = ir.Eqn(pjit_p, [a], [ir.DropVar(aval), b], {"jaxpr": sub, "name": "f"})
    closed = ir.ClosedJaxpr(ir.Jaxpr([], [a], [b], [eqn]), [])
    ir.typecheck(closed)
    assert str(closed) == """\
{ lambda ; a:f32[]. let
    _:f32[] b:f32[] = pjit[jaxpr={ lambda ; c:f32[]. let
        d:f32[] = add c 1.0:f32[]
      in (c, d) } name=f] a
  in (b,) }"""
