import contextlib
import math
from typing import cast

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import optimistix as optx
import pytest

from .helpers import tree_allclose


def test_results():
    assert len(diffrax.RESULTS) > 5
    assert isinstance(diffrax.RESULTS[diffrax.RESULTS.max_steps_reached], str)

    # In principle no code should rely on this, but in practice something may slip
    # through the cracks so it's worth checking anyway.
    assert diffrax.RESULTS.successful._value == 0


_t0 = jnp.array(0.1)
_t1 = jnp.array(1.1)
_y0 = jnp.array([2.1])


def _integrate(saveat):
    term = diffrax.ODETerm(lambda t, y, args: -0.5 * y)
    stepsize_controller = diffrax.PIDController(rtol=1e-8, atol=1e-8)
    return diffrax.diffeqsolve(
        term,
        t0=_t0,
        t1=_t1,
        y0=_y0,
        dt0=None,
        solver=diffrax.Dopri5(),
        saveat=saveat,
        stepsize_controller=stepsize_controller,
    )


def test_saveat_solution():
    saveat = diffrax.SaveAt(t0=True)
    sol = _integrate(saveat)
    assert sol.t0 == _t0
    assert sol.t1 == _t1
    assert sol.ts.shape == (1,)  # pyright: ignore
    assert sol.ys.shape == (1, 1)  # pyright: ignore
    assert sol.ts[0] == _t0  # pyright: ignore
    assert sol.ys[0, 0] == _y0  # pyright: ignore
    assert sol.controller_state is None
    assert sol.solver_state is None
    with pytest.raises(ValueError):
        sol.evaluate(0.2, 0.8)
    with pytest.raises(ValueError):
        sol.derivative(0.2)
    assert sol.stats["num_steps"] > 0
    assert sol.result == diffrax.RESULTS.successful

    for controller_state in (True, False):
        for solver_state in (True, False):
            saveat = diffrax.SaveAt(
                t1=True, solver_state=solver_state, controller_state=controller_state
            )
            sol = _integrate(saveat)
            assert sol.t0 == _t0
            assert sol.t1 == _t1
            assert sol.ts.shape == (1,)  # pyright: ignore
            assert sol.ys.shape == (1, 1)  # pyright: ignore
            assert sol.ts[0] == _t1  # pyright: ignore
            assert tree_allclose(sol.ys[0], _y0 * math.exp(-0.5))  # pyright: ignore
            if controller_state:
                assert sol.controller_state is not None
            else:
                assert sol.controller_state is None
            if solver_state:
                assert sol.solver_state is not None
            else:
                assert sol.solver_state is None
            with pytest.raises(ValueError):
                sol.evaluate(0.2, 0.8)
            with pytest.raises(ValueError):
                sol.derivative(0.2)
            assert sol.stats["num_steps"] > 0
            assert sol.result == diffrax.RESULTS.successful

    # Outside [t0, t1]
    saveat = diffrax.SaveAt(ts=[0])
    with pytest.raises(RuntimeError):
        sol = _integrate(saveat)
    saveat = diffrax.SaveAt(ts=[3])
    with pytest.raises(RuntimeError):
        sol = _integrate(saveat)

    saveat = diffrax.SaveAt(ts=[0.5, 0.8])
    sol = _integrate(saveat)
    assert sol.t0 == _t0
    assert sol.t1 == _t1
    assert sol.ts.shape == (2,)  # pyright: ignore
    assert sol.ys.shape == (2, 1)  # pyright: ignore
    assert sol.ts[0] == jnp.asarray(0.5)  # pyright: ignore
    assert sol.ts[1] == jnp.asarray(0.8)  # pyright: ignore
    assert tree_allclose(sol.ys[0], _y0 * math.exp(-0.2))  # pyright: ignore
    assert tree_allclose(sol.ys[1], _y0 * math.exp(-0.35))  # pyright: ignore
    assert sol.controller_state is None
    assert sol.solver_state is None
    with pytest.raises(ValueError):
        sol.evaluate(0.2, 0.8)
    with pytest.raises(ValueError):
        sol.derivative(0.2)
    assert sol.stats["num_steps"] > 0
    assert sol.result == diffrax.RESULTS.successful

    saveat = diffrax.SaveAt(steps=1)
    sol = _integrate(saveat)
    assert sol.t0 == _t0
    assert sol.t1 == _t1
    assert sol.ts.shape == (4096,)  # pyright: ignore
    assert sol.ys.shape == (4096, 1)  # pyright: ignore
    _ts = jnp.where(sol.ts == jnp.inf, jnp.nan, sol.ts)
    _ts = cast(jax.Array, _ts)
    with jax.numpy_rank_promotion("allow"):
        _ys = _y0 * jnp.exp(-0.5 * (_ts - _t0))[:, None]
    _ys = jnp.where(jnp.isnan(_ys), jnp.inf, _ys)
    assert tree_allclose(sol.ys, _ys)
    assert sol.controller_state is None
    assert sol.solver_state is None
    with pytest.raises(ValueError):
        sol.evaluate(0.2, 0.8)
    with pytest.raises(ValueError):
        sol.derivative(0.2)
    assert sol.stats["num_steps"] > 0
    assert sol.result == diffrax.RESULTS.successful

    saveat = diffrax.SaveAt(steps=2)
    sol = _integrate(saveat)
    assert sol.t0 == _t0
    assert sol.t1 == _t1
    n = (4096 - 1) // 2 + 1
    assert sol.ts.shape == (n,)  # pyright: ignore
    assert sol.ys.shape == (n, 1)  # pyright: ignore
    _ts = jnp.where(sol.ts == jnp.inf, jnp.nan, sol.ts)
    _ts = cast(jax.Array, _ts)
    with jax.numpy_rank_promotion("allow"):
        _ys = _y0 * jnp.exp(-0.5 * (_ts - _t0))[:, None]
    _ys = jnp.where(jnp.isnan(_ys), jnp.inf, _ys)
    assert tree_allclose(sol.ys, _ys)
    assert sol.controller_state is None
    assert sol.solver_state is None
    with pytest.raises(ValueError):
        sol.evaluate(0.2, 0.8)
    with pytest.raises(ValueError):
        sol.derivative(0.2)
    assert sol.stats["num_steps"] > 0
    assert sol.result == diffrax.RESULTS.successful

    saveat = diffrax.SaveAt(steps=2, t1=True)
    sol = _integrate(saveat)
    assert sol.t0 == _t0
    assert sol.t1 == _t1
    n = (4096 - 1) // 2 + 1
    assert sol.ts.shape == (n,)  # pyright: ignore
    assert sol.ys.shape == (n, 1)  # pyright: ignore
    _ts = jnp.where(sol.ts == jnp.inf, jnp.nan, sol.ts)
    _ts = cast(jax.Array, _ts)
    with jax.numpy_rank_promotion("allow"):
        _ys = _y0 * jnp.exp(-0.5 * (_ts - _t0))[:, None]
    _ys = jnp.where(jnp.isnan(_ys), jnp.inf, _ys)
    print(_ys)
    assert tree_allclose(sol.ys, _ys)
    assert sol.controller_state is None
    assert sol.solver_state is None
    with pytest.raises(ValueError):
        sol.evaluate(0.2, 0.8)
    with pytest.raises(ValueError):
        sol.derivative(0.2)
    assert sol.stats["num_steps"] > 0
    assert sol.result == diffrax.RESULTS.successful

    saveat = diffrax.SaveAt(dense=True)
    sol = _integrate(saveat)
    assert sol.t0 == _t0
    assert sol.t1 == _t1
    assert sol.ts is None
    assert sol.ys is None
    assert sol.controller_state is None
    assert sol.solver_state is None
    assert tree_allclose(sol.evaluate(0.2, 0.8), sol.evaluate(0.8) - sol.evaluate(0.2))
    assert tree_allclose(sol.evaluate(0.2), _y0 * math.exp(-0.05))
    assert tree_allclose(sol.evaluate(0.8), _y0 * math.exp(-0.35))
    assert tree_allclose(sol.derivative(0.2), -0.5 * _y0 * math.exp(-0.05))
    assert sol.stats["num_steps"] > 0
    assert sol.result == diffrax.RESULTS.successful


def test_saveat_solution_skip_steps():
    def _step_integrate(saveat: diffrax.SaveAt, with_7: bool):
        term = diffrax.ODETerm(lambda t, y, args: -0.5 * y)
        if with_7:
            ts = jnp.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
        else:
            ts = jnp.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
        sol_ts = diffrax.diffeqsolve(
            term,
            t0=ts[0],
            t1=ts[-1],
            y0=jnp.array([1.0]),
            dt0=None,
            solver=diffrax.Euler(),
            saveat=saveat,
            stepsize_controller=diffrax.StepTo(ts=ts),
            max_steps=10,
        ).ts
        assert sol_ts is not None
        return sol_ts[jnp.isfinite(sol_ts)]

    ts = _step_integrate(diffrax.SaveAt(steps=2), with_7=True)
    assert jnp.allclose(ts, jnp.array([2.0, 4.0, 6.0]))
    ts = _step_integrate(diffrax.SaveAt(steps=2), with_7=False)
    assert jnp.allclose(ts, jnp.array([2.0, 4.0, 6.0]))

    ts = _step_integrate(diffrax.SaveAt(steps=2, t1=True), with_7=True)
    assert jnp.allclose(ts, jnp.array([2.0, 4.0, 6.0, 7.0]))
    ts = _step_integrate(diffrax.SaveAt(steps=2, t1=True), with_7=False)
    assert jnp.allclose(ts, jnp.array([2.0, 4.0, 6.0]))

    ts = _step_integrate(diffrax.SaveAt(steps=2, t1=True, t0=True), with_7=True)
    assert jnp.allclose(ts, jnp.array([0.0, 2.0, 4.0, 6.0, 7.0]))
    ts = _step_integrate(diffrax.SaveAt(steps=2, t1=True, t0=True), with_7=False)
    assert jnp.allclose(ts, jnp.array([0.0, 2.0, 4.0, 6.0]))

    ts = _step_integrate(diffrax.SaveAt(steps=3), with_7=True)
    assert jnp.allclose(ts, jnp.array([3.0, 6.0]))
    ts = _step_integrate(diffrax.SaveAt(steps=3), with_7=False)
    assert jnp.allclose(ts, jnp.array([3.0, 6.0]))

    ts = _step_integrate(diffrax.SaveAt(steps=3, t1=True), with_7=True)
    assert jnp.allclose(ts, jnp.array([3.0, 6.0, 7.0]))
    ts = _step_integrate(diffrax.SaveAt(steps=3, t1=True), with_7=False)
    assert jnp.allclose(ts, jnp.array([3.0, 6.0]))

    ts = _step_integrate(diffrax.SaveAt(steps=3, t1=True, t0=True), with_7=True)
    assert jnp.allclose(ts, jnp.array([0.0, 3.0, 6.0, 7.0]))
    ts = _step_integrate(diffrax.SaveAt(steps=3, t1=True, t0=True), with_7=False)
    assert jnp.allclose(ts, jnp.array([0.0, 3.0, 6.0]))


def test_saveat_solution_skip_vs_saveat():
    ts = jnp.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    n = 2
    saveat_skip = diffrax.SaveAt(steps=n, t0=True)
    saveat = diffrax.SaveAt(ts=ts[::n])
    term = diffrax.ODETerm(lambda t, y, args: -0.5 * y)

    def solve(saveat):
        return diffrax.diffeqsolve(
            term,
            t0=ts[0],
            t1=ts[-1],
            y0=jnp.array([1.0]),
            dt0=None,
            solver=diffrax.Euler(),
            saveat=saveat,
            stepsize_controller=diffrax.StepTo(ts=ts),
            max_steps=6,
        )

    sol_skip = solve(saveat_skip)
    sol = solve(saveat)
    assert sol is not None
    assert sol.ts is not None
    assert sol.ys is not None
    assert sol_skip is not None
    assert sol_skip.ts is not None
    assert sol_skip.ys is not None
    assert jnp.allclose(sol_skip.ts, sol.ts)
    assert jnp.allclose(sol_skip.ys, sol.ys)


def test_saveat_steps_with_event():
    def solve(saveat):
        sol = diffrax.diffeqsolve(
            diffrax.ODETerm(lambda t, y, args: -0.5 * y),
            t0=0,
            t1=5,
            y0=1.0,
            dt0=1,
            solver=diffrax.Euler(),
            saveat=saveat,
            event=diffrax.Event(
                cond_fn=lambda t, y, args, **k: t - 3.5,
                root_finder=optx.Newton(rtol=1e-5, atol=1e-5),
            ),
            max_steps=6,
        )
        assert sol.result == diffrax.RESULTS.event_occurred
        assert sol.ts is not None
        assert sol.ys is not None
        return sol.ts, sol.ys

    ts1, ys1 = solve(diffrax.SaveAt(steps=2))
    assert jnp.allclose(ts1, jnp.array([2.0, 3.5, jnp.inf]))
    # Computed using Euler
    # y(1) = 0.5
    # y(2) = 0.25
    # y(3) = 0.125
    # y(4) = 0.0625
    # linearly interpolate => y(3.5) = 0.09375
    assert jnp.allclose(ys1, jnp.array([0.25, 0.09375, jnp.inf]))
    ts2, ys2 = solve(diffrax.SaveAt(steps=2, t1=True))
    assert jnp.allclose(ts2, jnp.array([2.0, 3.5, jnp.inf]))
    assert jnp.allclose(ys2, jnp.array([0.25, 0.09375, jnp.inf]))
    ts3, ys3 = solve(diffrax.SaveAt(steps=3))
    assert jnp.allclose(ts3, jnp.array([3.0, jnp.inf]))
    assert jnp.allclose(ys3, jnp.array([0.125, jnp.inf]))
    ts4, ys4 = solve(diffrax.SaveAt(steps=3, t1=True))
    assert jnp.allclose(ts4, jnp.array([3.0, 3.5]))
    assert jnp.allclose(ys4, jnp.array([0.125, 0.09375]))


@pytest.mark.parametrize("subs", [True, False])
def test_t0_eq_t1(subs):
    y0 = jnp.array([2.0])
    ts = jnp.linspace(1.0, 1.0, 3)
    max_steps = 256
    if subs:
        get0 = diffrax.SubSaveAt(
            ts=ts,
            t1=True,
        )
        get1 = diffrax.SubSaveAt(
            t0=True,
            ts=ts,
        )
        get2 = diffrax.SubSaveAt(
            t0=True,
            ts=ts,
            steps=1,
        )
        subs = (get0, get1, get2)
        saveat = diffrax.SaveAt(subs=subs)
    else:
        saveat = diffrax.SaveAt(t0=True, t1=True, ts=ts)
    term = diffrax.ODETerm(lambda t, y, args: y)
    sol = diffrax.diffeqsolve(
        term,
        t0=ts[0],
        t1=ts[-1],
        y0=y0,
        dt0=0.1,
        solver=diffrax.Dopri5(),
        saveat=saveat,
        max_steps=max_steps,
    )
    if subs:
        compare = jnp.full((len(ts) + 1, *y0.shape), y0)
        compare_2 = jnp.concatenate(
            (compare, jnp.full((max_steps, *y0.shape), jnp.inf))
        )
        ya, yb, yc = sol.ys  # pyright: ignore[reportGeneralTypeIssues]
        assert tree_allclose(ya, compare)
        assert tree_allclose(yb, compare)
        assert tree_allclose(yc, compare_2)
    else:
        compare = jnp.full((len(ts) + 2, *y0.shape), y0)
        assert tree_allclose(sol.ys, compare)


def test_t0_eq_t1_complicated():
    """This test case also checks:

    - vmap'ing
    - non-float32 dtypes
    - `SubSaveAt(fn=...)`
    """
    ntsave = 4
    dtype = jnp.float16
    y0 = jnp.array([2.0], dtype=dtype)
    term = diffrax.ODETerm(lambda t, y, args: y)

    def _solve(tf):
        ts = jnp.linspace(0.0, tf, ntsave, dtype=dtype)
        get0 = diffrax.SubSaveAt(
            ts=ts,
            t1=True,
        )
        get1 = diffrax.SubSaveAt(
            t0=True,
            ts=ts,
        )
        get2 = diffrax.SubSaveAt(
            t0=True,
            ts=ts,
            steps=1,
            fn=lambda t, y, args: jnp.where(jnp.isinf(y), 3.0, 4.0),
        )
        subs = (get0, get1, get2)
        saveat = diffrax.SaveAt(subs=subs)
        sol = diffrax.diffeqsolve(
            term,
            t0=ts[0],
            t1=ts[-1],
            y0=y0,
            dt0=0.1,
            solver=diffrax.Dopri5(),
            saveat=saveat,
            max_steps=15,
        )
        return sol.ys

    compare = jnp.full((ntsave + 1, *y0.shape), y0, dtype=dtype)
    compare_c = jnp.concatenate(
        [
            jnp.full((ntsave + 1, *y0.shape), 4.0, dtype=jnp.float64),
            jnp.full((15, *y0.shape), jnp.inf, dtype=jnp.float64),
        ]
    )
    true_ya, true_yb, true_yc = _solve(1.0)  # pyright: ignore[reportGeneralTypeIssues]
    true_ya = jnp.stack([compare, true_ya])
    true_yb = jnp.stack([compare, true_yb])
    true_yc = jnp.stack([compare_c, true_yc])

    ya, yb, yc = jax.vmap(_solve)(jnp.array([0.0, 1.0]))  # pyright: ignore[reportGeneralTypeIssues]
    assert tree_allclose(ya, true_ya)
    assert tree_allclose(yb, true_yb)
    assert tree_allclose(yc, true_yc)


def test_trivial_dense():
    term = diffrax.ODETerm(lambda t, y, args: -0.5 * y)
    y0 = jnp.array([2.1])
    saveat = diffrax.SaveAt(dense=True)
    stepsize_controller = diffrax.PIDController(rtol=1e-8, atol=1e-8)
    sol = diffrax.diffeqsolve(
        term,
        t0=2.0,
        t1=2.0,
        y0=y0,
        dt0=None,
        solver=diffrax.Dopri5(),
        saveat=saveat,
        stepsize_controller=stepsize_controller,
    )
    assert tree_allclose(sol.evaluate(2.0), y0)


@pytest.mark.parametrize(
    "adjoint",
    [
        diffrax.RecursiveCheckpointAdjoint(),
        diffrax.DirectAdjoint(),
        diffrax.ImplicitAdjoint(),
        diffrax.BacksolveAdjoint(),
    ],
)
@pytest.mark.parametrize("multi_subs", [True, False])
@pytest.mark.parametrize("with_fn", [True, False])
def test_subsaveat(adjoint, multi_subs, with_fn, getkey):
    if with_fn:
        mlp = eqx.nn.MLP(3, 1, 32, 2, key=getkey())
        apply = lambda _, x, __: mlp(x)
        subsaveat_kwargs: dict = dict(fn=apply)
    else:
        mlp = lambda x: x
        subsaveat_kwargs: dict = dict()
    get2 = diffrax.SubSaveAt(t0=True, ts=jnp.linspace(0.5, 1.5, 3), **subsaveat_kwargs)
    if multi_subs:
        get0 = diffrax.SubSaveAt(steps=1, fn=lambda _, y, __: y[0])
        get1 = diffrax.SubSaveAt(
            ts=jnp.linspace(0, 1, 5), t1=True, fn=lambda _, y, __: y[1]
        )
        subs = (get0, get1, get2)
    else:
        subs = get2

    context = contextlib.nullcontext()
    if isinstance(adjoint, diffrax.ImplicitAdjoint):
        context = pytest.raises(ValueError)
    elif isinstance(adjoint, diffrax.BacksolveAdjoint):
        if with_fn or multi_subs:
            context = pytest.raises(NotImplementedError)

    term = diffrax.ODETerm(lambda t, y, args: -0.5 * y)
    y0 = jnp.array([2.1, 1.1, 0.1])
    saveat = diffrax.SaveAt(subs=subs)
    stepsize_controller = diffrax.PIDController(rtol=1e-8, atol=1e-8)

    with context:
        sol = diffrax.diffeqsolve(
            term,
            t0=0,
            t1=2,
            y0=y0,
            dt0=None,
            solver=diffrax.Dopri5(),
            saveat=saveat,
            stepsize_controller=stepsize_controller,
            adjoint=adjoint,
        )
        steps = sol.stats["num_accepted_steps"]

        sol2 = diffrax.diffeqsolve(
            term,
            t0=0,
            t1=2,
            y0=y0,
            dt0=None,
            solver=diffrax.Dopri5(),
            saveat=diffrax.SaveAt(dense=True),
            stepsize_controller=stepsize_controller,
        )

        if multi_subs:
            ts0, ts1, ts2 = sol.ts  # pyright: ignore
            ys0, ys1, ys2 = sol.ys  # pyright: ignore
            assert ts0.shape == (4096,)
            assert tree_allclose(ts1, jnp.array([0, 0.25, 0.5, 0.75, 1, 2]))
            assert tree_allclose(
                ys0[:steps], jax.vmap(sol2.evaluate)(ts0[:steps])[:, 0]
            )
            assert tree_allclose(ys1, jax.vmap(sol2.evaluate)(ts1)[:, 1])
        else:
            ts2 = sol.ts
            ys2 = sol.ys
        assert tree_allclose(ts2, jnp.array([0, 0.5, 1.0, 1.5]))
        assert tree_allclose(ys2, jax.vmap(mlp)(jax.vmap(sol2.evaluate)(ts2)))  # pyright: ignore


def test_backprop_none_subs():
    saveat = diffrax.SaveAt(dense=True)

    @jax.grad
    def run(y0):
        sol = diffrax.diffeqsolve(
            diffrax.ODETerm(lambda t, y, args: -y),
            diffrax.Tsit5(),
            0,
            1,
            0.1,
            y0,
            saveat=saveat,
        )
        return sol.evaluate(0.5)

    run(1.0)
