"""The two linear maps of the kernels' derivative rules, as JAX primitives whose transposes run on kernels.

Forward dynamics differentiates through the inverse-dynamics residual R (jaxbody._kernels.tree):
``d udot = d udot_known - M^-1 dR``. Both maps are linear in the tangents, and reverse mode applies their
transposes, which here are kernels rather than JAX's transposes of level scans:

* ``multiply_by_m_inverse`` (primitive ``jaxbody_m_inverse``): ``x = M^-1 rhs``, Simbody's partitioned
  ``[M_rr^-1 f_r; 0]`` with known mobilities. Linear in rhs and its own transpose (M_rr^-1, padded with
  zeros, is symmetric). Evaluated by the M^-1 kernel: O(n) per column.
* ``residual_tangent`` (primitive ``jaxbody_residual_tangent``): ``dR = dR/d(theta, q, u, F, W, udot) . t``.
  Evaluated by JAX's jvp of the residual (forward mode); transposed by the residual adjoint kernel
  (tree_adjoint.h, O(n), about three forward passes) followed by JAX's vjp of the generic mobilizers'
  X_FM, H_FM and HDot_FM u (layout.generic_inputs; nothing when every body is native).

Batching (vmap, nested vmaps): a primitive's arguments all carry ``nbatch`` leading dimensions, each of
full size or 1 (numpy broadcasting, as the kernels read them), so a Model's numbers are not copied per lane.
A transpose sums the cotangent of a broadcast argument over its size-1 dimensions.

Higher derivatives: each primitive's JVP rule differentiates its non-linear arguments exactly (the M^-1 rule
by ``d(M^-1) = -M^-1 dM M^-1`` with dM from the JAX mass-matrix product; the residual tangent by JAX's
second-order jvp of the residual), so second and higher derivatives equal the JAX path's; only first-order
reverse mode runs entirely on kernels.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types

import jax
import jax.numpy as jnp
import numpy as np
from jax.core import ShapedArray
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from jaxbody._kernels import backend
from jaxbody._kernels.ffi_primitive import kernel_call
from jaxbody._kernels.layout import generic_inputs, kernel_layout


def ffi_name(base: str, dtype) -> str:
    """The registered FFI target for ``dtype`` (loading the kernel library first if needed)."""
    if not backend.compiled_available():
        raise RuntimeError("jaxbody's compiled kernels are not available (see the warning); use jb.set_backend('jax')")
    return f"{base}_{'f64' if jnp.dtype(dtype) == jnp.float64 else 'f32'}"


def model_inputs(prm, dtype):
    """The Parameters fields the kernels read, cast to ``dtype``, in the kernels' argument order."""
    return [jnp.asarray(x, dtype) for x in (prm.R_PF, prm.p_PF, prm.R_BM, prm.p_BM, prm.mass, prm.com_B,
                                            prm.inertia_Bo_B, prm.armature)]


#: The name scope around every kernel call: ``jax.export`` refuses custom calls it cannot guarantee and prints
#: each one's location, so its error then says how to export a jaxbody function.
EXPORT_HINT = "jaxbody compiled kernel; to jax.export this function, trace it under jb.use_backend('jax')"


def call_kernel(base, topo, out, args, dtype):
    """One FFI call of kernel ``base`` on ``args`` (cast to ``dtype``) with the topology's attributes.

    ``out``: ShapeDtypeStructs, leading batch dimensions included. The call is the primitive
    ``ffi_primitive.kernel_call`` (why not ``jax.ffi.ffi_call``: that module's docstring), traced inside the
    name scope ``EXPORT_HINT``.
    """
    target, attributes = ffi_name(base, dtype), kernel_layout(topo).attributes()

    with jax.named_scope(EXPORT_HINT):
        return kernel_call(target, out, [jnp.asarray(a, dtype) for a in args], attributes)


def symmetric_inertia_tangent(dprm):
    """``dprm`` with its inertia tangent replaced by the symmetric part (inertias are symmetric: the builders
    check it, so only the symmetric part of a tangent can be felt)."""
    dI = dprm.inertia_Bo_B
    return dataclasses.replace(dprm, inertia_Bo_B=0.5 * (dI + jnp.swapaxes(dI, -1, -2)))


def tree_model(topo, prm):
    """The two fields the JAX kinematics and dynamics read from a Model."""
    return types.SimpleNamespace(topology=topo, parameters=prm)


# ---- leading batch dimensions ----------------------------------------------------------------------------

def _lead(flat, nbatch):
    """The broadcast leading shape of arguments (pytrees) whose leaves carry ``nbatch`` leading dimensions."""
    leaves = jax.tree_util.tree_leaves(flat)
    return tuple(np.broadcast_shapes(*[x.shape[:nbatch] for x in leaves])) if nbatch else ()


def per_lane(fn, args, nbatch):
    """``fn(*args)`` on each lane of arguments (pytrees) whose leaves carry ``nbatch`` broadcast leading
    dimensions: a leaf with only size-1 leading dimensions is shared (vmap in_axes None), the others are
    broadcast and flattened. Returns fn's outputs (a pytree) with the leading shape restored."""
    if nbatch == 0:
        return fn(*args)
    lead = _lead(args, nbatch)
    size = math.prod(lead)
    leaves, treedef = jax.tree_util.tree_flatten(list(args))
    shared = [all(d == 1 for d in x.shape[:nbatch]) for x in leaves]
    lanes = [x.reshape(x.shape[nbatch:]) if s else
             jnp.broadcast_to(x, lead + x.shape[nbatch:]).reshape((size,) + x.shape[nbatch:])
             for x, s in zip(leaves, shared)]
    call = lambda *xs: fn(*jax.tree_util.tree_unflatten(treedef, list(xs)))  # noqa: E731
    if all(shared):
        return jax.tree_util.tree_map(lambda y: y.reshape(lead + y.shape), call(*lanes))
    out = jax.vmap(call, in_axes=tuple(None if s else 0 for s in shared))(*lanes)
    return jax.tree_util.tree_map(lambda y: y.reshape(lead + y.shape[1:]), out)


def _reduce_to(ct, shape, nbatch):
    """A cotangent with full leading dimensions summed to an argument's ``shape`` (size-1 leading dims)."""
    axes = tuple(i for i in range(nbatch) if shape[i] == 1 and ct.shape[i] != 1)
    ct = jnp.sum(ct, axis=axes, keepdims=True) if axes else ct
    return jnp.broadcast_to(ct, shape)


def _batch_rule(primitive):
    """vmap rule: the mapped axis becomes a new leading dimension of every argument (size 1 if unmapped)."""
    def rule(args, dims, *, nbatch, **params):
        moved = [jnp.moveaxis(x, d, 0) if d is not None else jnp.expand_dims(x, 0) for x, d in zip(args, dims)]
        return primitive.bind(*moved, nbatch=nbatch + 1, **params), 0
    return rule


def _register(primitive, evaluate, abstract, jvp, transpose):
    """A linear-map primitive's rules: evaluation (eager and lowered), shapes, JVP, transpose and vmap."""
    primitive.def_impl(evaluate)
    primitive.def_abstract_eval(abstract)
    mlir.register_lowering(primitive, mlir.lower_fun(evaluate, multiple_results=False))
    ad.primitive_jvps[primitive] = jvp
    ad.primitive_transposes[primitive] = transpose
    batching.primitive_batchers[primitive] = _batch_rule(primitive)


def _zeros_if_symbolic(tangents, primals):
    return [jnp.zeros(p.shape, p.dtype) if type(t) is ad.Zero else t for t, p in zip(tangents, primals)]


# ---- M^-1 ------------------------------------------------------------------------------------------------

m_inverse_p = Primitive("jaxbody_m_inverse")


def multiply_by_m_inverse(topo, prm, q, known, rhs):
    """``M^-1 rhs`` for rhs (nu,) or (nu, k): Simbody's ``[M_rr^-1 f_r; 0]`` with known udots (known:
    (nbodies,) 0/1; rhs on known mobilities is ignored). One kernel call, O(n) per column. Differentiable to
    any order in every argument but ``known``; its reverse mode applies the same kernel to the cotangent."""
    columns = rhs if rhs.ndim == 2 else rhs[:, None]
    leaves, treedef = jax.tree_util.tree_flatten(prm)
    x = m_inverse_p.bind(*leaves, q, known, jnp.asarray(columns, q.dtype), topo=topo, treedef=treedef, nbatch=0)
    return x if rhs.ndim == 2 else x[:, 0]


def _m_inverse_eval(*flat, topo, treedef, nbatch):
    *leaves, q, known, rhs = flat
    prm = jax.tree_util.tree_unflatten(treedef, leaves)
    dtype = q.dtype
    if kernel_layout(topo).n_generic:
        gR, gp, gH, _ = per_lane(lambda prm, q: generic_inputs(topo, prm, q, None), [prm, q], nbatch)
    else:  # empty inputs: the kernel reads none
        gR, gp, gH, _ = generic_inputs(topo, prm, q, None)
    lead = _lead(flat, nbatch)
    out = jax.ShapeDtypeStruct(lead + rhs.shape[nbatch:], dtype)
    return call_kernel("jaxbody_m_inverse", topo, out, [q, known] + model_inputs(prm, dtype) + [gR, gp, gH, rhs],
                       dtype)


def _m_inverse_abstract(*flat, topo, treedef, nbatch):
    rhs = flat[-1]
    return ShapedArray(_lead(flat, nbatch) + rhs.shape[nbatch:], rhs.dtype)


def _m_inverse_jvp(primals, tangents, *, topo, treedef, nbatch):
    from jaxbody._dynamics import kinematics, mass_matrix

    *leaves, q, known, rhs = primals
    *dleaves, dq, _, drhs = tangents
    x = m_inverse_p.bind(*primals, topo=topo, treedef=treedef, nbatch=nbatch)
    lhs = _zeros_if_symbolic([drhs], [rhs])[0]
    if any(type(t) is not ad.Zero for t in (*dleaves, dq)):
        dprm = symmetric_inertia_tangent(jax.tree_util.tree_unflatten(treedef, _zeros_if_symbolic(dleaves, leaves)))
        prm = jax.tree_util.tree_unflatten(treedef, leaves)
        dq = _zeros_if_symbolic([dq], [q])[0]

        def dM_x(prm, q, dprm, dq, x):
            def m_times_columns(prm, q):
                model = tree_model(topo, prm)
                pos = kinematics.realize_position(model, q)
                return jax.vmap(lambda y: mass_matrix.multiply_by_m(model, pos, y), in_axes=1, out_axes=1)(x)
            return jax.jvp(m_times_columns, (prm, q), (dprm, dq))[1]

        lhs = lhs - per_lane(dM_x, [prm, q, dprm, dq, x], nbatch)
    return x, m_inverse_p.bind(*leaves, q, known, lhs, topo=topo, treedef=treedef, nbatch=nbatch)


def _m_inverse_transpose(ct, *flat, topo, treedef, nbatch):
    *leaves, q, known, rhs = flat
    none = [None] * (len(leaves) + 2)
    if type(ct) is ad.Zero:
        return none + [None]
    x = m_inverse_p.bind(*leaves, q, known, ct, topo=topo, treedef=treedef, nbatch=nbatch)
    return none + [_reduce_to(x, rhs.aval.shape, nbatch)]


_register(m_inverse_p, _m_inverse_eval, _m_inverse_abstract, _m_inverse_jvp, _m_inverse_transpose)


# ---- the residual's tangent --------------------------------------------------------------------------------

residual_tangent_p = Primitive("jaxbody_residual_tangent")


def residual(topo, prm, q, u, F, W, udot):
    """``M udot + c - J^T (F + weights)`` (nu,) by the JAX path (R without its ``- f`` term); W (nbodies, 3)
    weights m g at the mass centers."""
    from jaxbody._dynamics import inverse_dynamics, kinematics

    model = tree_model(topo, prm)
    pos = kinematics.realize_position(model, q)
    vel = kinematics.realize_velocity(model, pos, q, u)
    c_G = pos.p_GBc - pos.p_GB
    F_total = F + jnp.stack([jnp.cross(c_G, W), W], -2)
    return inverse_dynamics.calc_residual_force_ignoring_constraints(model, pos, vel, jnp.zeros_like(u), F_total,
                                                                     udot)


def residual_tangent(topo, primals, tangents):
    """``dR``: the tangent of ``residual(topo, prm, q, u, F, W, udot)`` at ``primals`` along ``tangents``
    (both tuples (prm, q, u, F, W, udot)). Linear in ``tangents``; reverse mode transposes it on the residual
    adjoint kernel."""
    flat_p, treedef = jax.tree_util.tree_flatten(tuple(primals))
    flat_t = jax.tree_util.tree_leaves(tuple(tangents))
    return residual_tangent_p.bind(*flat_p, *flat_t, topo=topo, treedef=treedef, nbatch=0)


def _residual_tangent_eval(*flat, topo, treedef, nbatch):
    half = len(flat) // 2

    def one(*xs):
        primals = jax.tree_util.tree_unflatten(treedef, xs[:half])
        tangents = jax.tree_util.tree_unflatten(treedef, xs[half:])
        return jax.jvp(functools.partial(residual, topo), primals, tangents)[1]

    return per_lane(one, list(flat), nbatch)


def _residual_tangent_abstract(*flat, topo, treedef, nbatch):
    return ShapedArray(_lead(flat, nbatch) + (topo.nu,), flat[len(flat) // 2 - 1].dtype)


def _residual_tangent_jvp(primals, tangents, *, topo, treedef, nbatch):
    half = len(primals) // 2
    params = dict(topo=topo, treedef=treedef, nbatch=nbatch)
    out = residual_tangent_p.bind(*primals, **params)
    dout = jnp.zeros(out.shape, out.dtype)
    if any(type(t) is not ad.Zero for t in tangents[half:]):
        dout = dout + residual_tangent_p.bind(*primals[:half], *_zeros_if_symbolic(tangents[half:], primals[half:]),
                                              **params)
    if any(type(t) is not ad.Zero for t in tangents[:half]):
        def at_fixed_tangent(*res):  # R's tangent along the primitive's own tangent, as a function of (prm, q, ...)
            return _residual_tangent_eval(*res, *primals[half:], **params)

        dout = dout + jax.jvp(at_fixed_tangent, tuple(primals[:half]),
                              tuple(_zeros_if_symbolic(tangents[:half], primals[:half])))[1]
    return out, dout


def _residual_tangent_transpose(ct, *flat, topo, treedef, nbatch):
    half = len(flat) // 2
    if type(ct) is ad.Zero:
        return [None] * len(flat)
    prm, q, u, F, W, udot = jax.tree_util.tree_unflatten(treedef, flat[:half])
    targets = [x.aval.shape for x in flat[half:]]
    # Cotangents are owed only to the tangents being transposed (undefined primals); when no Model number or
    # body force is among them (a gradient with respect to q, u and f), the kernel leaves those out.
    wanted = jax.tree_util.tree_unflatten(treedef, [ad.is_undefined_primal(x) for x in flat[half:]])
    with_model = any(jax.tree_util.tree_leaves((wanted[0], wanted[3], wanted[4])))
    cts = residual_adjoint(topo, prm, q, u, F, W, udot, ct, nbatch, with_model)
    cts = jax.tree_util.tree_leaves(cts)
    return [None] * half + [_reduce_to(c, s, nbatch) if ad.is_undefined_primal(x) else None
                            for c, s, x in zip(cts, targets, flat[half:])]


_register(residual_tangent_p, _residual_tangent_eval, _residual_tangent_abstract, _residual_tangent_jvp,
          _residual_tangent_transpose)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0, 8, 9))
def residual_adjoint(topo, prm, q, u, F, W, udot, lam, nbatch=0, with_model=True):
    """The gradient of ``lam . residual(topo, prm, q, u, F, W, udot)`` with respect to (prm, q, u, F, W, udot),
    a tuple of that structure, leading dimensions of the lanes (``nbatch`` of them) first.

    One adjoint kernel call (O(n) per lane) and, for generic bodies, JAX's vjp of their X_FM, H_FM and
    HDot_FM u. The inertia's cotangent is the adjoint of ``R_GB I R_GB^T`` (not symmetrized). With
    ``with_model`` False the Model's, F's and W's entries are zeros the kernel never writes (a gradient with
    respect to q, u and f need not move them through memory). Differentiable (second derivatives of R)
    through the JAX path: ``residual_adjoint_by_jax``.
    """
    dtype = q.dtype
    flat = [*jax.tree_util.tree_leaves(prm), q, u, F, W, udot, lam]
    lead = _lead(flat, nbatch)
    layout = kernel_layout(topo)
    nb1, nq, nu, ng = topo.nbodies, topo.nq, topo.nu, layout.n_generic
    if ng:
        gen = per_lane(lambda prm, q, u: generic_inputs(topo, prm, q, u), [prm, q, u], nbatch)
    else:  # empty inputs: the kernel reads none
        gen = generic_inputs(topo, prm, q, u)
    shapes = [(nq,), (nu,), (nu,), (nb1, 2, 3), (nb1, 3), (nb1, 3, 3), (nb1, 3), (nb1, 3, 3), (nb1, 3), (nb1,),
              (nb1, 3), (nb1, 3, 3), (nu,), (ng, 3, 3), (ng, 3), (ng, 6, topo.nu_max), (ng, 6)]
    model_outputs = range(3, 13)  # F, W and the eight Model inputs: empty arrays unless asked for
    shapes = [(0,) + s[1:] if i in model_outputs and not with_model else s for i, s in enumerate(shapes)]
    out = [jax.ShapeDtypeStruct(lead + s, dtype) for s in shapes]
    args = [q, u, udot, F, W] + model_inputs(prm, dtype) + list(gen) + [lam]
    (q_b, u_b, udot_b, F_b, W_b, R_PF_b, p_PF_b, R_BM_b, p_BM_b, mass_b, com_b, inertia_b, arm_b,
     gR_b, gp_b, gH_b, gHDu_b) = call_kernel("jaxbody_residual_adjoint", topo, out, args, dtype)
    prm_b = jax.tree_util.tree_map(lambda x: jnp.zeros(lead + x.shape[nbatch:], x.dtype), prm)
    if ng:
        def pull(prm, q, u, cts):
            return jax.vjp(lambda prm, q, u: generic_inputs(topo, prm, q, u), prm, q, u)[1](cts)

        prm_g, q_g, u_g = per_lane(pull, [prm, q, u, (gR_b, gp_b, gH_b, gHDu_b)], nbatch)
        prm_b = jax.tree_util.tree_map(lambda a, b: a + jnp.broadcast_to(b, a.shape), prm_b, prm_g)
        q_b, u_b = q_b + q_g, u_b + u_g
    if not with_model:
        return _without_model((prm_b, q_b, u_b, F_b, W_b, udot_b), lead, nbatch, (prm, F, W))
    prm_b = dataclasses.replace(
        prm_b, R_PF=prm_b.R_PF + R_PF_b, p_PF=prm_b.p_PF + p_PF_b, R_BM=prm_b.R_BM + R_BM_b,
        p_BM=prm_b.p_BM + p_BM_b, mass=prm_b.mass + mass_b, com_B=prm_b.com_B + com_b,
        inertia_Bo_B=prm_b.inertia_Bo_B + inertia_b, armature=prm_b.armature + arm_b)
    return prm_b, q_b, u_b, F_b, W_b, udot_b


def residual_adjoint_by_jax(topo, prm, q, u, F, W, udot, lam, nbatch=0):
    """``residual_adjoint`` by JAX's vjp of ``residual`` (the reference; differentiable to any order)."""
    def one(prm, q, u, F, W, udot, lam):
        return jax.vjp(functools.partial(residual, topo), prm, q, u, F, W, udot)[1](lam)

    return per_lane(one, [prm, q, u, F, W, udot, lam], nbatch)


def _without_model(cts, lead, nbatch, like):
    """``cts`` (prm, q, u, F, W, udot) with the Model's, F's and W's entries zero (``like``: prm, F, W)."""
    prm, F, W = like
    zeros = lambda x: jnp.zeros(lead + x.shape[nbatch:], x.dtype)  # noqa: E731
    return jax.tree_util.tree_map(zeros, prm), cts[1], cts[2], zeros(F), zeros(W), cts[5]


@residual_adjoint.defjvp
def _residual_adjoint_jvp(topo, nbatch, with_model, primals, tangents):
    out = residual_adjoint(topo, *primals, nbatch, with_model)
    d_out = jax.jvp(lambda *a: residual_adjoint_by_jax(topo, *a, nbatch), primals, tangents)[1]
    if not with_model:
        prm, _, _, F, W, *_ = primals
        d_out = _without_model(d_out, _lead(jax.tree_util.tree_leaves(primals), nbatch), nbatch, (prm, F, W))
    return out, d_out
