"""shard_map: a per-device program over the blocks of its arguments.

Params: `jaxpr` (a const-free ClosedJaxpr over the per-device blocks), `mesh`,
`manual_axes` (the mesh axes it makes manual, in mesh order: all of them, or some, the
others staying automatic: XLA partitions the body over those, which sees values whole
along them; inside another shard_map's body, axes the enclosing ones left automatic),
and `in_specs` / `out_specs` (one PartitionSpec per input / output, naming manual axes
only: how the global value is split into blocks over them; manual axes a spec leaves
out see the same block on every device).  It lowers to Shardy's
`sdy.manual_computation` over its manual axes, and the collectives of the body to
StableHLO's over the mesh.

With check_vma (the default) the body is traced with the varying manual axes of each
value on its aval (funcgraph.core): an input varies along the axes its in_spec splits
over, a replicated value used with varying ones is marked by pvary, whose transpose is
psum, and psum over axes along which its operand varies transposes to pvary; so the
body's own transpose gives replicated inputs their summed cotangents, as in JAX.  A
nested shard_map's body, and the bodies derived from it (JVP, partial eval, transpose,
batching), track the enclosing shard_maps' manual axes as well as its own.

Without check_vma, differentiation follows JAX's rule for programs whose replication is
not tracked: psum transposes to psum, so the cotangent of an output replicated over
manual axes is divided by their size, and the cotangent of an input replicated over
manual axes is summed over them.  Both are exact for outputs that really are replicated
(and lax.pcast does nothing there, so no pvary is summed twice)."""
import math
import weakref

import numpy as np

from funcgraph import core, dtypes, ir
from funcgraph.interpreters.ad_util import Zero, instantiate, is_zero
from funcgraph.interpreters.batching import batching_rules
from funcgraph.interpreters.eval import compiled_eval, direct_impls, eval_jaxpr
from funcgraph.interpreters.jvp import jvp_rules
from funcgraph.interpreters.partial_eval import partial_eval_rules
from funcgraph.interpreters.staging import trace_flat
from funcgraph.interpreters.transpose import backward_pass, is_undefined, transpose_rules
from funcgraph.lowering import emit_manual_computation, lower_closed_body
from funcgraph.primitives.base import reshape_p
from funcgraph.primitives.call import merge_tangents
from funcgraph.primitives.collectives import psum_p
from funcgraph.primitives.elementwise import div_p
from funcgraph.primitives.helpers import declare
from funcgraph.primitives.jaxprs import batch_jaxpr, jvp_jaxpr, partial_eval_jaxpr
from funcgraph.sharding import NamedSharding, PartitionSpec


def tiles(mesh, spec, ndim):
    """How many blocks each dimension of a rank-ndim value is split into."""
    sizes = mesh.shape
    return [math.prod(sizes[a] for a in spec.axes_of(d)) for d in range(ndim)]


def block_aval(aval, mesh, spec, what):
    """The per-device block of a global value split as spec says."""
    if len(spec) > aval.ndim:
        raise ValueError(f"shard_map {what} {spec} has length {len(spec)}, but the value "
                         f"{aval.str_short()} has rank {aval.ndim}")
    shape = []
    for d, (n, t) in enumerate(zip(aval.shape, tiles(mesh, spec, aval.ndim), strict=True)):
        if n % t:
            raise ValueError(f"shard_map {what} {spec} splits dimension {d} of "
                             f"{aval.str_short()} into {t} blocks, which does not divide "
                             f"its size {n}")
        shape.append(n // t)
    return aval.update(shape=tuple(shape))


def global_aval(aval, mesh, spec, what):
    """The global value whose blocks (split as spec says) have type aval."""
    if len(spec) > aval.ndim:
        raise ValueError(f"shard_map {what} {spec} has length {len(spec)}, but the "
                         f"function's output {aval.str_short()} has rank {aval.ndim}. For "
                         f"scalar values use P()")
    shape = tuple(n * t for n, t in zip(aval.shape, tiles(mesh, spec, aval.ndim), strict=True))
    return aval.update(shape=shape, vma=core.NO_AXES)


def unmentioned(mesh, spec, axes=None):
    """The mesh axes (in mesh order; of `axes` only, when given) a spec does not split
    over."""
    used = {a for d in range(len(spec)) for a in spec.axes_of(d)}
    return tuple(a for a in mesh.axis_names if a not in used and (axes is None or a in axes))


def mentioned(mesh, spec):
    """The mesh axes a spec splits over: those along which its blocks vary."""
    return frozenset(mesh.axis_names) - frozenset(unmentioned(mesh, spec))


def vma_axes(manual_axes, check_vma):
    """The manual axes whose variance the body's values track (none without check_vma)."""
    return tuple(manual_axes) if check_vma else ()


def tracked_axes(manual_axes, check_vma):
    """The manual axes whose variance a body traced now tracks: those of the enclosing
    shard_map bodies (for a nested one) and its own."""
    return tuple(core.current.vma_axes) + vma_axes(manual_axes, check_vma)


def _tracing_body(manual_axes, check_vma, make):
    """make() retraces the body (or a jaxpr derived from it) as shard_map traced it,
    inside the bodies (or derived bodies) of the enclosing shard_maps."""
    with core.vma_scope(tracked_axes(manual_axes, check_vma)):
        return make()


def _shard_map_shape(*avals, jaxpr, mesh, manual_axes, in_specs, out_specs, check_vma):
    blocks = [block_aval(a, mesh, s, f"in_specs[{i}]")
              for i, (a, s) in enumerate(zip(avals, in_specs, strict=True))]
    expected = jaxpr.in_avals
    if not all(map(core.same_type, blocks, expected)):
        got = ", ".join(a.str_short() for a in blocks)
        want = ", ".join(a.str_short() for a in expected)
        raise TypeError(f"shard_map: blocks ({got}) do not match its jaxpr's inputs ({want})")
    # Nested in another shard_map's body, results keep the enclosing manual axes they
    # vary along.
    return [global_aval(a, mesh, s, f"out_specs[{i}]").update(
                vma=a.vma - frozenset(manual_axes))
            for i, (a, s) in enumerate(zip(jaxpr.out_avals, out_specs, strict=True))]


# --- lowering ----------------------------------------------------------------------------

def _shard_map_lowering(ctx, avals_in, avals_out, *args, jaxpr, mesh, manual_axes, in_specs,
                        out_specs, check_vma):
    enclosing = ctx.module.manual_mesh
    if enclosing is not None and (enclosing != mesh or ctx.module.manual_axes & set(manual_axes)):
        raise ValueError(f"a shard_map over the mesh axes {manual_axes} of {mesh} inside the "
                         f"body of a shard_map over {tuple(ctx.module.manual_axes)} of "
                         f"{enclosing}: a nested shard_map must use the same mesh and make "
                         f"manual only axes the enclosing ones left automatic")
    return emit_manual_computation(
        ctx, mesh, manual_axes, args, in_specs, avals_in, out_specs, avals_out,
        jaxpr.in_avals, jaxpr.out_avals,
        lambda inner, names: lower_closed_body(inner, jaxpr, names))


shard_map_p = declare("shard_map", _shard_map_shape, None, _shard_map_lowering,
                      multiple_results=True)
core.keeps_operand_vma.add(shard_map_p)

# Derived jaxprs, cached per (body, what) while the body lives.
_derived = weakref.WeakKeyDictionary()


def _cached(jaxpr, key, make):
    table = _derived.setdefault(jaxpr.jaxpr, {})
    key = key + (core.current.vma_axes,)
    if key not in table:
        table[key] = make()
    return table[key]


def _params(jaxpr, mesh, manual_axes, in_specs, out_specs, check_vma):
    return dict(jaxpr=jaxpr, mesh=mesh, manual_axes=manual_axes, in_specs=tuple(in_specs),
                out_specs=tuple(out_specs), check_vma=check_vma)


def _shard_map_direct(*args, jaxpr, mesh, manual_axes, in_specs, out_specs, check_vma):
    """Eagerly: the program of this one equation, compiled over the mesh."""
    params = _params(jaxpr, mesh, manual_axes, in_specs, out_specs, check_vma)
    avals = [core.get_aval(a) for a in args]

    def make():
        return trace_flat(lambda *xs: shard_map_p.bind(*xs, **params), avals)
    program = _cached(jaxpr, ("eager", mesh, manual_axes, tuple(in_specs), tuple(out_specs),
                              tuple(avals)), make)
    outs = compiled_eval["jaxpr"](program, list(args))
    if set(manual_axes) == set(mesh.axis_names):
        # as jax's, an eager shard_map's results carry NamedSharding(mesh, out_spec) as
        # written (P(None) stays P(None,)), where that is the layout XLA gave them
        for out, spec in zip(outs, out_specs, strict=True):
            given = getattr(out, "_sharding", None)
            if isinstance(given, NamedSharding) and given.mesh == mesh and \
                    len(spec) <= out.ndim:
                named = NamedSharding(mesh, spec)
                if given.is_equivalent_to(named, out.ndim):
                    out._sharding = named
    return outs


direct_impls[shard_map_p] = _shard_map_direct


# --- differentiation --------------------------------------------------------------------

def _shard_map_jvp(primals, tangents, jaxpr, mesh, manual_axes, in_specs, out_specs,
                   check_vma):
    mask = tuple(not is_zero(t) for t in tangents)
    body, out_mask = _cached(jaxpr, ("jvp", mask), lambda: _tracing_body(
        manual_axes, check_vma, lambda: jvp_jaxpr(jaxpr, mask)))
    specs_in = list(in_specs) + [s for s, m in zip(in_specs, mask, strict=True) if m]
    specs_out = list(out_specs) + [s for s, m in zip(out_specs, out_mask, strict=True) if m]
    outs = shard_map_p.bind(*primals, *[t for t in tangents if not is_zero(t)],
                            **_params(body, mesh, manual_axes, specs_in, specs_out, check_vma))
    n = len(out_specs)
    out_avals = [global_aval(a, mesh, s, "out_specs")
                 for a, s in zip(jaxpr.out_avals, out_specs, strict=True)]
    return outs[:n], merge_tangents(outs[n:], out_mask, out_avals)


def _residual_spec(manual_axes):
    """Residuals travel with a leading axis of size 1 per device, split over every
    manual axis."""
    return PartitionSpec(tuple(manual_axes))


def _with_leading_axis(x):
    aval = core.get_aval(x)
    return reshape_p.bind(x, new_sizes=(1,) + aval.shape, dimensions=None)


def _without_leading_axis(x):
    aval = core.get_aval(x)
    return reshape_p.bind(x, new_sizes=aval.shape[1:], dimensions=None)


def _split_bodies(jaxpr, unknowns):
    """(known body returning known outputs and residuals with a leading axis, unknown
    body taking them, which outputs are unknown, how many residuals)."""
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(jaxpr, unknowns)
    n_known_out = len(known.out_avals) - num_res

    def known_body(*xs):
        outs = eval_jaxpr(known.jaxpr, known.consts, *xs)
        return list(outs[:n_known_out]) + [_with_leading_axis(r) for r in outs[n_known_out:]]

    def unknown_body(*xs):
        residuals = [_without_leading_axis(r) for r in xs[:num_res]]
        return eval_jaxpr(unknown.jaxpr, unknown.consts, *residuals, *xs[num_res:])

    res_avals = known.out_avals[n_known_out:]
    lead = [a.update(shape=(1,) + a.shape) for a in res_avals]
    return (trace_flat(known_body, known.in_avals),
            trace_flat(unknown_body, lead + list(unknown.in_avals[num_res:])),
            out_unknowns, num_res)


def _shard_map_partial_eval(trace, args, params):
    """Known inputs run the known part of the body now; the rest is staged."""
    jaxpr, mesh, axes = params["jaxpr"], params["mesh"], params["manual_axes"]
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    unknowns = tuple(trace.is_unknown(a) for a in args)
    known, unknown, out_unknowns, num_res = _cached(
        jaxpr, ("partial_eval", unknowns), lambda: _tracing_body(
            axes, params["check_vma"], lambda: _split_bodies(jaxpr, unknowns)))
    res_specs = [_residual_spec(axes)] * num_res
    known_in = [s for s, u in zip(in_specs, unknowns, strict=True) if not u]
    known_out = [s for s, u in zip(out_specs, out_unknowns, strict=True) if not u]
    with core.set_trace(trace.parent):
        known_outs = shard_map_p.bind(
            *[a for a, u in zip(args, unknowns, strict=True) if not u],
            **_params(known, mesh, axes, known_in, known_out + res_specs,
                      params["check_vma"]))
    residuals = known_outs[len(known_outs) - num_res:]
    known_outs = iter(known_outs[:len(known_outs) - num_res])
    unknown_in = res_specs + [s for s, u in zip(in_specs, unknowns, strict=True) if u]
    unknown_out = [s for s, u in zip(out_specs, out_unknowns, strict=True) if u]
    staged = iter(trace.stage(
        shard_map_p, list(residuals) + [a for a, u in zip(args, unknowns, strict=True) if u],
        _params(unknown, mesh, axes, unknown_in, unknown_out, params["check_vma"])))
    return [next(staged) if u else next(known_outs) for u in out_unknowns]


def _backward_body(jaxpr, mesh, manual_axes, in_specs, out_specs, undefined, ct_mask,
                   check_vma):
    """The per-device body of the transpose: (defined inputs, output cotangents) ->
    input cotangents (see the module doc for how replicated axes are handled)."""
    inner = jaxpr.jaxpr
    variant = ir.Jaxpr([v for v, u in zip(inner.invars, undefined, strict=True) if not u],
                       [v for v, u in zip(inner.invars, undefined, strict=True) if u],
                       inner.outvars, inner.eqns)
    n_defined = len(variant.constvars)
    undefined_specs = [s for s, u in zip(in_specs, undefined, strict=True) if u]
    undefined_avals = [v.aval for v in variant.invars]
    adjust_out, adjust_in = (_vma_out_ct, _vma_in_ct) if check_vma else \
        (_replicated_out_ct, _replicated_in_ct)

    def backward(*xs):
        given = iter(xs[n_defined:])
        cts = [adjust_out(next(given), aval, spec, mesh, manual_axes) if m else Zero(aval)
               for aval, spec, m in zip(jaxpr.out_avals, out_specs, ct_mask, strict=True)]
        return [adjust_in(instantiate(ct), aval, spec, mesh, manual_axes)
                for ct, aval, spec in zip(backward_pass(variant, list(xs[:n_defined]), cts),
                                          undefined_avals, undefined_specs, strict=True)]
    in_avals = [v.aval for v in variant.constvars] + \
        [_ct_aval(a, s, mesh, manual_axes, check_vma)
         for a, s, m in zip(jaxpr.out_avals, out_specs, ct_mask, strict=True) if m]
    return trace_flat(backward, in_avals)


def _block_vma(aval, spec, mesh, manual_axes):
    """The axes a block of a value varies along: those its spec splits over, and the
    enclosing shard_maps' axes along which it varies (for a nested one)."""
    return (aval.vma - frozenset(manual_axes)) | mentioned(mesh, spec)


def _ct_aval(aval, spec, mesh, manual_axes, check_vma):
    """A block of an output's cotangent varies as the output's block does."""
    return aval.update(vma=_block_vma(aval, spec, mesh, manual_axes)) if check_vma else aval


def _vma_out_ct(ct, aval, spec, mesh, manual_axes):
    """An output invariant along a mesh axis its spec splits over was used by every
    device's block: its cotangent is the sum of theirs.  (shard_map marks the outputs of
    the user's body as varying so; those of the bodies derived here may not be.)"""
    axes = core.in_mesh_order(mentioned(mesh, spec) - aval.vma, mesh.axis_names)
    return psum_p.bind(ct, axis_name=axes) if axes else ct


def _vma_in_ct(ct, aval, spec, mesh, manual_axes):
    """The cotangent of an input is invariant along the axes its spec leaves out (pvary's
    transpose summed it), and along the enclosing shard_maps' axes along which the input
    is; should it still vary along one, sum it there."""
    axes = core.in_mesh_order(
        core.get_aval(ct).vma - _block_vma(aval, spec, mesh, manual_axes), mesh.axis_names)
    return psum_p.bind(ct, axis_name=axes) if axes else ct


def _replicated_out_ct(ct, aval, spec, mesh, manual_axes):
    """Without check_vma: an output replicated over manual axes has its cotangent divided
    among the replicas (psum transposes to psum)."""
    replicas = math.prod(mesh.shape[a] for a in unmentioned(mesh, spec, manual_axes))
    if replicas > 1 and dtypes.is_inexact(aval.dtype):
        return div_p.bind(ct, np.array(replicas, aval.dtype))
    return ct


def _replicated_in_ct(ct, aval, spec, mesh, manual_axes):
    """Without check_vma: the cotangent of an input replicated over manual axes is summed
    over them."""
    axes = unmentioned(mesh, spec, manual_axes)
    if axes and dtypes.is_inexact(core.get_aval(ct).dtype):
        return psum_p.bind(ct, axis_name=axes)
    return ct


def _shard_map_transpose(cts, *args, jaxpr, mesh, manual_axes, in_specs, out_specs,
                         check_vma):
    undefined = tuple(is_undefined(a) for a in args)
    ct_mask = tuple(not is_zero(c) for c in cts)
    body = _cached(jaxpr, ("transpose", undefined, ct_mask), lambda: _tracing_body(
        manual_axes, check_vma, lambda: _backward_body(
            jaxpr, mesh, manual_axes, in_specs, out_specs, undefined, ct_mask, check_vma)))
    specs_in = [s for s, u in zip(in_specs, undefined, strict=True) if not u] + \
        [s for s, m in zip(out_specs, ct_mask, strict=True) if m]
    specs_out = [s for s, u in zip(in_specs, undefined, strict=True) if u]
    outs = iter(shard_map_p.bind(
        *[a for a, u in zip(args, undefined, strict=True) if not u],
        *[c for c in cts if not is_zero(c)],
        **_params(body, mesh, manual_axes, specs_in, specs_out, check_vma)))
    return [next(outs) if u else None for u in undefined]


jvp_rules[shard_map_p] = _shard_map_jvp
partial_eval_rules[shard_map_p] = _shard_map_partial_eval
transpose_rules[shard_map_p] = _shard_map_transpose


# --- batching ---------------------------------------------------------------------------

def _spec_with_batch(spec, ndim, d):
    """spec of a value of rank ndim (unbatched) with an unsplit batch dimension at d."""
    entries = list(spec) + [None] * (ndim - len(spec))
    entries.insert(d, None)
    return PartitionSpec(*entries)


def _shard_map_batch(axis_data, args, dims, jaxpr, mesh, manual_axes, in_specs, out_specs,
                     check_vma):
    body = _cached(jaxpr, ("batch", tuple(dims), axis_data.size, axis_data.name),
                   lambda: _tracing_body(manual_axes, check_vma,
                                         lambda: batch_jaxpr(jaxpr, dims, axis_data)))
    specs_in = [s if d is None else _spec_with_batch(s, a.ndim, d)
                for s, d, a in zip(in_specs, dims, jaxpr.in_avals, strict=True)]
    specs_out = [_spec_with_batch(s, a.ndim, 0)
                 for s, a in zip(out_specs, jaxpr.out_avals, strict=True)]
    outs = shard_map_p.bind(*args, **_params(body, mesh, manual_axes, specs_in, specs_out,
                                             check_vma))
    return outs, [0] * len(outs)


batching_rules[shard_map_p] = _shard_map_batch
