"""The compiled tree operators as JAX functions: forward dynamics and M^-1, with exact derivatives.

``tree_accelerations`` is the articulated-body forward dynamics of jaxbody._dynamics.articulated
(``calc_tree_accelerations``) run by the C++ kernel (tree_lane.h) for every lane of a batch in one XLA FFI
call: position and velocity kinematics, articulated inertias, bias forces and accelerations fused, each
lane's per-body values in a small scratch that stays in L1.

Derivatives (both modes, any order of jit/vmap/grad). With the residual
``R(theta, q, u, udot, f, F, W) = M udot + c - f - J^T (F + weights)`` (inverse dynamics), forward dynamics is
the udot that makes the free rows of R vanish, so ``d udot = d udot_known - M_rr^-1 dR|_(udot fixed)``,
where ``M_rr^-1`` is Simbody's partitioned inverse (zero rows and columns on known mobilities) and ``dR`` is
R's tangent with udot held at the kernel's solution (known mobilities carry their prescribed tangent). The
JVP rule applies exactly that with the two linear maps of jaxbody._kernels.linear_ops: ``residual_tangent``
(JAX's tangent of R in forward mode, the residual adjoint kernel in reverse mode) and
``multiply_by_m_inverse`` (the M^-1 kernel, its own transpose). A reverse-mode gradient therefore costs the
forward kernel, one M^-1 column and one adjoint sweep, all O(n) kernels. Inertias are symmetric (the builders
check it), so a tangent of ``inertia_Bo_B`` counts by its symmetric part and a gradient with respect to it
comes back symmetric: the JAX path's gradient can differ by a skew part no symmetric inertia can feel. The
kernels themselves are never differentiated: the linear maps' own JVP rules give second and higher
derivatives, equal to the JAX path's.

Cost (per state): the primal is one kernel call, O(n); a VJP adds one M^-1 column and one adjoint sweep
(kernels, O(n)); a JVP adds R's tangent (JAX, O(n) level scans) and one M^-1 column.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from jaxbody._kernels.layout import generic_inputs
from jaxbody._kernels.linear_ops import (call_kernel, model_inputs, multiply_by_m_inverse, residual_tangent,
                                         symmetric_inertia_tangent, tree_model)


def _forward_dynamics_call(topo, prm, q, u, f, F, W, known, udot_p, generic):
    """The kernel call: (udot (nu,), A_GB (nbodies, 2, 3), motion_forces (nu,))."""
    dtype = q.dtype
    gR, gp, gH, gHDu = generic
    out = (jax.ShapeDtypeStruct((topo.nu,), dtype), jax.ShapeDtypeStruct((topo.nbodies, 2, 3), dtype),
           jax.ShapeDtypeStruct((topo.nu,), dtype))
    args = [q, u, f, F, W, known, udot_p] + model_inputs(prm, dtype) + [gR, gp, gH, gHDu]
    return call_kernel("jaxbody_forward_dynamics", topo, out, args, dtype)


def m_inverse_matrix(topo, prm, q, known):
    """Simbody's partitioned ``M^-1`` as a matrix (nu, nu): ``M_rr^-1`` on free mobilities, zero rows and
    columns on known ones (known: (nbodies,) 0/1). One kernel call, O(n^2); differentiable to any order."""
    return multiply_by_m_inverse(topo, prm, q, known, jnp.eye(topo.nu, dtype=q.dtype))


def body_accelerations(topo, prm, q, u, udot):
    """``A_GB = J udot + Jdot u`` (nbodies, 2, 3) by the JAX path."""
    from jaxbody._dynamics import inverse_dynamics, kinematics

    model = tree_model(topo, prm)
    pos = kinematics.realize_position(model, q)
    vel = kinematics.realize_velocity(model, pos, q, u)
    return inverse_dynamics.calc_body_acceleration_from_udot(model, pos, vel, udot)


def tree_accelerations(topo, prm, q, u, f, F, W, known, udot_p, generic=None):
    """Forward dynamics ignoring constraints by the kernel: ``M udot + motion_forces = f + J^T (F + weights) - c``.

    Args:
        topo: Topology (static). prm: Parameters. q (nq,), u (nu,); f (nu,) mobility forces; F (nbodies, 2, 3)
        body forces at Bo in G, without gravity; W (nbodies, 3) gravity weights m g (N, in G) acting at the
        mass centers; known (nbodies,) 1.0 for bodies whose udots are known (locks, Motions); udot_p (nu,)
        the known udots (zero on free mobilities). generic: the GENERIC bodies' (R_FM, p_FM, H_FM, HDot_FM u)
        at (prm, q, u) when the caller has them (a realized State's caches:
        ``layout.generic_inputs_from_caches``), else None and they are evaluated here
        (``layout.generic_inputs``). They enter the kernel's primal only: derivatives are those of (prm, q, u),
        so ``generic`` must be those functions' values there.

    Returns:
        udot (nu,), A_GB (nbodies, 2, 3) at Bo in G, motion_forces (nu,) prescribed-motion forces (zero on free ones).
    """
    if generic is None:
        generic = generic_inputs(topo, prm, q, u)
    return _tree_accelerations(topo, prm, q, u, f, F, W, known, udot_p, tuple(generic))


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _tree_accelerations(topo, prm, q, u, f, F, W, known, udot_p, generic):
    return _forward_dynamics_call(topo, prm, q, u, f, F, W, known, udot_p, generic)


@_tree_accelerations.defjvp
def _tree_accelerations_jvp(topo, primals, tangents):
    prm, q, u, f, F, W, known, udot_p, _ = primals
    dprm, dq, du, df, dF, dW, _, dudot_p, _ = tangents  # generic's tangent is (prm, q, u)'s: not read
    dprm = symmetric_inertia_tangent(dprm)
    udot, A_GB, motion_forces = _tree_accelerations(topo, *primals)
    known_u = known[jnp.asarray(topo.u_body)] > 0
    dudot_known = jnp.where(known_u, dudot_p, 0.0)
    primals = (prm, q, u, F, W, udot)
    dR = residual_tangent(topo, primals, (dprm, dq, du, dF, dW, dudot_known)) - df
    dudot = dudot_known - multiply_by_m_inverse(topo, prm, q, known, dR)
    _, dA = jax.jvp(functools.partial(body_accelerations, topo), (prm, q, u, udot), (dprm, dq, du, dudot))
    dR_full = residual_tangent(topo, primals, (dprm, dq, du, dF, dW, dudot)) - df
    dmotion_forces = jnp.where(known_u, -dR_full, 0.0)
    return (udot, A_GB, motion_forces), (dudot, dA, dmotion_forces)
