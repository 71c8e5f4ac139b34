"""The compiled tree operators as JAX functions: forward dynamics and M^-1, with exact derivatives.

``tree_accelerations`` is the articulated-body forward dynamics of jaxbody._dynamics.articulated
(``calc_tree_accelerations``) run by the C++ kernel (tree_lane.h) for every lane of a batch in one XLA FFI
call: position and velocity kinematics, articulated inertias, bias forces and accelerations fused, each
lane's per-body values in a small scratch that stays in L1.

Derivatives (both modes, any order of jit/vmap/grad). With the residual
``R(theta, q, u, udot, f, F, W) = M udot + c - f - J^T (F + weights)`` (inverse dynamics, evaluated by the
JAX path), forward dynamics is the udot that makes the free rows of R vanish, so
``d udot = -M_rr^-1 dR|_(udot fixed) + d udot_known``, where ``M_rr^-1`` is Simbody's partitioned inverse
(zero rows and columns on known mobilities) and ``dR`` is the JAX tangent of R with udot held at the kernel's
solution (known mobilities carry their prescribed tangent). The JVP rule applies exactly that: one
``jax.jvp`` of R (O(n)) and one product with ``M_rr^-1`` formed by the M^-1 kernel (nu columns, O(n^2)).
Everything applied to tangents is ordinary JAX (a matrix product and R's linear tangent), so JAX transposes
it for reverse mode and batches it under vmap. Inertias are symmetric (the builders check it), so a tangent of
``inertia_Bo_B`` counts by its symmetric part and a gradient with respect to it comes back symmetric: the
JAX path's gradient can differ by a skew part no symmetric inertia can feel. The kernels themselves are never
differentiated: ``multiply_by_m_inverse`` (Simbody's multiplyByMInv on the kernel; ``M_rr^-1`` is it applied
to the identity) has its own JVP rule (``d(M^-1 f) = M^-1 (df - dM M^-1 f)``, dM by the JAX mass-matrix
product), so second and higher derivatives work and equal the JAX path's.

Cost (per state): the primal is one kernel call, O(n); a JVP or VJP adds R's tangent (JAX, O(n) level scans)
and the M^-1 kernel (O(n^2)).
"""

from __future__ import annotations

import dataclasses
import functools
import types

import jax
import jax.numpy as jnp

from jaxbody._kernels import backend
from jaxbody._kernels.layout import generic_inputs, kernel_layout


def _ffi_name(base: str, dtype) -> str:
    """The registered FFI target for ``dtype`` (loading the kernel library first if needed)."""
    if not backend.compiled_available():
        raise RuntimeError("jaxbody's compiled kernels are not available (see the warning); use jb.set_backend('jax')")
    return f"{base}_{'f64' if jnp.dtype(dtype) == jnp.float64 else 'f32'}"


def _model_inputs(prm, dtype):
    return [jnp.asarray(x, dtype) for x in (prm.R_PF, prm.p_PF, prm.R_BM, prm.p_BM, prm.mass, prm.com_B,
                                            prm.inertia_Bo_B, prm.armature)]


def _call_kernel(base, topo, out, args, dtype):
    """One FFI call of kernel ``base`` on ``args`` (cast to ``dtype``) with the topology's attributes.

    The call sits in its own ``jax.jit`` (XLA inlines it): in jax 0.10.2 an FFI call lowered straight into the
    body of a ``while`` loop can lose its attribute dictionary when XLA converts the program (observed with
    the semi-explicit Euler and Verlet time steppers: "No registered implementation for untyped custom call"),
    while a call inside its own function keeps it.
    """
    call = jax.ffi.ffi_call(_ffi_name(base, dtype), out, vmap_method="expand_dims")
    attributes = kernel_layout(topo).attributes()
    return jax.jit(lambda *a: call(*a, **attributes))(*[jnp.asarray(a, dtype) for a in args])


def _forward_dynamics_call(topo, prm, q, u, f, F, W, known, udot_p):
    """The kernel call: (udot (nu,), A_GB (nbodies, 2, 3), motion_forces (nu,))."""
    dtype = q.dtype
    gR, gp, gH, gHDu = generic_inputs(topo, prm, q, u)
    out = (jax.ShapeDtypeStruct((topo.nu,), dtype), jax.ShapeDtypeStruct((topo.nbodies, 2, 3), dtype),
           jax.ShapeDtypeStruct((topo.nu,), dtype))
    args = [q, u, f, F, W, known, udot_p] + _model_inputs(prm, dtype) + [gR, gp, gH, gHDu]
    return _call_kernel("jaxbody_forward_dynamics", topo, out, args, dtype)


def m_inverse(topo, prm, q, known, rhs):
    """``M^-1 rhs`` for rhs (nu, k), Simbody's ``[M_rr^-1 f_r; 0]`` with known udots (known: (nbodies,) 0/1).

    One kernel call: the articulated inertias once, then one inward and one outward sweep per column.
    Not differentiable (used on primal values only).
    """
    dtype = q.dtype
    gR, gp, gH, _ = generic_inputs(topo, prm, q, None)
    out = jax.ShapeDtypeStruct(rhs.shape, dtype)
    args = [q, known] + _model_inputs(prm, dtype) + [gR, gp, gH, rhs]
    return _call_kernel("jaxbody_m_inverse", topo, out, args, dtype)


def symmetric_inertia_tangent(dprm):
    """``dprm`` with its inertia tangent replaced by the symmetric part (see ``tree_accelerations``)."""
    dI = dprm.inertia_Bo_B
    return dataclasses.replace(dprm, inertia_Bo_B=0.5 * (dI + jnp.swapaxes(dI, -1, -2)))


def m_inverse_matrix(topo, prm, q, known):
    """Simbody's partitioned ``M^-1`` as a matrix (nu, nu): ``M_rr^-1`` on free mobilities, zero rows and
    columns on known ones (known: (nbodies,) 0/1). One kernel call, O(n^2).

    ``multiply_by_m_inverse`` of the identity, so it differentiates by that rule: ``d(M^-1) = -M^-1 dM M^-1``.
    """
    return multiply_by_m_inverse(topo, prm, q, known, jnp.eye(topo.nu, dtype=q.dtype))


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def multiply_by_m_inverse(topo, prm, q, known, rhs):
    """``M^-1 rhs`` for rhs (nu,) or (nu, k): Simbody's ``[M_rr^-1 f_r; 0]`` with known udots (known:
    (nbodies,) 0/1; rhs on known mobilities is ignored). One kernel call, O(n) per column.

    Differentiable to any order: ``d(M^-1 f) = M_rr^-1 (df - dM x)`` with x = M^-1 f, dM x the JAX tangent of
    the mass-matrix product (jaxbody._dynamics.mass_matrix) on the columns of x, and ``M_rr^-1`` from
    ``m_inverse_matrix`` (O(n^2), only when differentiated; its own derivative is this rule again).
    """
    columns = rhs if rhs.ndim == 2 else rhs[:, None]
    x = m_inverse(topo, prm, q, known, jnp.asarray(columns, q.dtype))
    return x if rhs.ndim == 2 else x[:, 0]


@multiply_by_m_inverse.defjvp
def _multiply_by_m_inverse_jvp(topo, primals, tangents):
    prm, q, known, rhs = primals
    dprm, dq, _, drhs = tangents
    dprm = symmetric_inertia_tangent(dprm)
    x = multiply_by_m_inverse(topo, prm, q, known, rhs)
    columns = x if x.ndim == 2 else x[:, None]

    def m_times_columns(prm, q):
        from jaxbody._dynamics import kinematics, mass_matrix

        model = _tree_model(topo, prm)
        pos = kinematics.realize_position(model, q)
        return jax.vmap(lambda y: mass_matrix.multiply_by_m(model, pos, y), in_axes=1, out_axes=1)(columns)

    _, dM_x = jax.jvp(m_times_columns, (prm, q), (dprm, dq))
    dM_x = dM_x if x.ndim == 2 else dM_x[:, 0]
    return x, m_inverse_matrix(topo, prm, q, known) @ (drhs - dM_x)


def _tree_model(topo, prm):
    """The two fields the JAX kinematics and inverse dynamics read from a Model."""
    return types.SimpleNamespace(topology=topo, parameters=prm)


def residual(topo, prm, q, u, f, F, W, udot):
    """``M udot + c - f - J^T (F + weights)`` (nu,) by the JAX path; W (nbodies, 3) weights m g at the mass
    centers."""
    from jaxbody._dynamics import inverse_dynamics, kinematics

    model = _tree_model(topo, prm)
    pos = kinematics.realize_position(model, q)
    vel = kinematics.realize_velocity(model, pos, q, u)
    c_G = pos.p_GBc - pos.p_GB
    F_total = F + jnp.stack([jnp.cross(c_G, W), W], -2)
    return inverse_dynamics.calc_residual_force_ignoring_constraints(model, pos, vel, f, F_total, udot)


def body_accelerations(topo, prm, q, u, udot):
    """``A_GB = J udot + Jdot u`` (nbodies, 2, 3) by the JAX path."""
    from jaxbody._dynamics import inverse_dynamics, kinematics

    model = _tree_model(topo, prm)
    pos = kinematics.realize_position(model, q)
    vel = kinematics.realize_velocity(model, pos, q, u)
    return inverse_dynamics.calc_body_acceleration_from_udot(model, pos, vel, udot)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def tree_accelerations(topo, prm, q, u, f, F, W, known, udot_p):
    """Forward dynamics ignoring constraints by the kernel: ``M udot + motion_forces = f + J^T (F + weights) - c``.

    Args:
        topo: Topology (static). prm: Parameters. q (nq,), u (nu,); f (nu,) mobility forces; F (nbodies, 2, 3)
        body forces at Bo in G, without gravity; W (nbodies, 3) gravity weights m g (N, in G) acting at the
        mass centers; known (nbodies,) 1.0 for bodies whose udots are known (locks, Motions); udot_p (nu,)
        the known udots (zero on free mobilities).

    Returns:
        udot (nu,), A_GB (nbodies, 2, 3) at Bo in G, motion_forces (nu,) prescribed-motion forces (zero on free ones).
    """
    return _forward_dynamics_call(topo, prm, q, u, f, F, W, known, udot_p)


@tree_accelerations.defjvp
def _tree_accelerations_jvp(topo, primals, tangents):
    prm, q, u, f, F, W, known, udot_p = primals
    dprm, dq, du, df, dF, dW, _, dudot_p = tangents
    dprm = symmetric_inertia_tangent(dprm)
    udot, A_GB, motion_forces = tree_accelerations(topo, *primals)
    known_u = known[jnp.asarray(topo.u_body)] > 0
    dudot_known = jnp.where(known_u, dudot_p, 0.0)
    res = functools.partial(residual, topo)
    _, dR = jax.jvp(res, (prm, q, u, f, F, W, udot), (dprm, dq, du, df, dF, dW, dudot_known))
    M_inv = m_inverse_matrix(topo, prm, q, known)
    dudot = dudot_known - M_inv @ dR
    _, dA = jax.jvp(functools.partial(body_accelerations, topo), (prm, q, u, udot), (dprm, dq, du, dudot))
    _, dR_full = jax.jvp(res, (prm, q, u, f, F, W, udot), (dprm, dq, du, df, dF, dW, dudot))
    dmotion_forces = jnp.where(known_u, -dR_full, 0.0)
    return (udot, A_GB, motion_forces), (dudot, dA, dmotion_forces)
