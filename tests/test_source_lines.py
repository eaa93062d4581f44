"""Each traced equation's user source line (core.user_source_info): the innermost frame
outside funcgraph, found in C where funcgraph._source is built and in Python otherwise;
both must give the same lines."""
import inspect

import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import core
from funcgraph.native import source as c_source

X = np.ones(3, np.float32)


def _line_of(marker):
    lines, start = inspect.getsourcelines(_programs)
    return start + next(i for i, line in enumerate(lines) if marker in line)


def _programs():
    def plain(x):
        return fnp.sin(x) * 2.0  # plain-line

    def inner(x):
        return fnp.cos(x)  # inner-line

    def nested(x):
        return fg.vmap(inner)(x[None])[0] + 1.0  # outer-line

    def grad_of(x):
        return fg.grad(lambda y: fnp.sum(fnp.tanh(y)))(x)  # grad-line

    return {"plain": plain, "nested": nested, "grad": grad_of}


def _sources(fun):
    jaxpr = fg.make_jaxpr(fun)(X).jaxpr
    return [(e.primitive.name, e.source[1] if e.source else None) for e in jaxpr.eqns]


@pytest.mark.parametrize("name", ["plain", "nested", "grad"])
def test_equations_carry_the_innermost_user_line(name):
    sources = dict(_sources(_programs()[name]))
    if name == "plain":
        assert sources["sin"] == sources["mul"] == _line_of("# plain-line")
    elif name == "nested":
        assert sources["cos"] == _line_of("# inner-line")
        assert sources["add"] == _line_of("# outer-line")
    else:
        assert set(sources.values()) == {_line_of("# grad-line")}


@pytest.mark.skipif(c_source is None, reason="funcgraph._source is not built")
@pytest.mark.parametrize("name", ["plain", "nested", "grad"])
def test_the_c_and_python_walks_agree(name, monkeypatch):
    with_c = _sources(_programs()[name])
    monkeypatch.setattr(core, "_source", None)
    assert _sources(_programs()[name]) == with_c


@pytest.mark.skipif(c_source is None, reason="funcgraph._source is not built")
def test_user_frame_checks_its_arguments_and_reaches_the_outermost_frame():
    with pytest.raises(TypeError, match="user_frame"):
        c_source.user_frame("2", {}, (), None, None)
    assert c_source.user_frame(0, {}, ("",), None, None) is None  # every file excluded
    cache = {}
    c_source.user_frame(0, cache, ("/a", "/b"), None, None)  # a tuple of prefixes
    assert cache[__file__] is False
    here = c_source.user_frame(0, {}, ("/nowhere",), None, None)
    assert here[0] == __file__
    assert here[2] == "test_user_frame_checks_its_arguments_and_reaches_the_outermost_frame"
