"""Tendon armature (MuJoCo's ``tendon_armature``): a rotor inertia a_k (kg m^2 per unit^2 of the tendon's length)
moving with the length L_k of a path, i.e. the kinetic energy ``1/2 sum_k a_k Ldot_k^2``.

It is not a force element: it couples the mobilities in the mass matrix. With the tendon rows J (nt, nu),
``Ldot = J u``, and the tendons' length accelerations at udot = 0, ``b = Jdot u`` (nt,), the equations of motion
become

    (M + J^T A J) udot + J^T A b + motion_forces = f - c,        A = diag(a)

which is MuJoCo's: ``mj_tendonArmature`` adds ``a J^T J`` to qM, ``mj_tendonBias`` adds ``a J^T (Jdot qvel)`` to
qfrc_bias. Both are coordinate-free (``Lddot = J udot + b`` is the same in MuJoCo's qvel and jaxbody's u), so the
rows are the exact derivatives of each path's length function in jaxbody's own coordinates: J by forward-mode
differentiation of ``Ldot(u)`` (nu directions, vectorized), b as the second time derivative of the length
along the body motion at udot = 0.

Forward dynamics solves this on top of any tree solve (the JAX articulated solve or the compiled kernels), with
the linear operator ``S(g)``: the tree's (udot, A_GB, motion_forces) for mobility forces g at u = 0 (M^-1 g, with
known udots Simbody's [M_rr^-1 g_r; 0]). The push-through (Woodbury) identity gives the tendons' inertial
"tensions" ``tau = A (J udot + b)`` from the uncorrected solution udot0 as

    tau = (I + A J W^T)^-1 A (J udot0 + b),    W = rows S(J_k).udot  (nt, nu),

and the corrected solution is ``tree0 - sum_k tau_k S(J_k)`` (all three fields, since the solve is affine in the
mobility forces; no division by a_k, so a zero armature is allowed). Cost: nt tree solves at u = 0, nu
forward passes of the speeds, nested forward passes of the paths' geometry, an nt x nt solve. With constraints,
the constrained solve's ``M^-1 G^T`` rows go through the same correction (``corrected_solve_rows``), so the
multipliers see ``M + J^T A J`` as MuJoCo's do. Needs Velocity (b) or Position (J).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbody._dynamics import jacobians
from jaxbody._dynamics.articulated import TreeAccelerations
from jaxbody._math import spatial
from jaxbody._topology import mobilizer_groups


class TendonArmature(eqx.Module):
    """One tendon's armature: its path (a jaxbody._dynamics.paths.base.Path) and a (scalar leaf, >= 0)."""

    path: eqx.Module
    armature: jnp.ndarray
    name: str = eqx.field(static=True)


def armatures(model) -> jnp.ndarray:
    """(nt,) every tendon's armature."""
    return jnp.stack([t.armature for t in model.tendon_armatures])


def _poses_and_rates(model, pos, q, u):
    """``(X, Xdot)``: the paths' arguments (R_GB, p_GB, q) and their rates ([w] R_GB, v_GB, qdot) for speeds u."""
    V = jacobians.multiply_by_system_jacobian(model, pos, u)
    qdot = mobilizer_groups.multiply_by_n(model.topology, model.parameters, q, u)
    return (pos.R_GB, pos.p_GB, q), (spatial.skew(V[:, 0]) @ pos.R_GB, V[:, 1], qdot)


def tendon_speeds(model, pos, q, u) -> jnp.ndarray:
    """``Ldot`` (nt,) of every armature tendon at speeds u: each path's length differentiated along the body
    velocities ``J_sys u`` and ``qdot = N u``. Needs Position. Cost: one outward scan, one forward pass per path."""
    X, X_dot = _poses_and_rates(model, pos, q, u)
    return jnp.stack([jax.jvp(t.path.calc_length_from_poses, X, X_dot)[1] for t in model.tendon_armatures])


def calc_tendon_rows(model, pos, vel, q, u):
    """``(J (nt, nu), b (nt,))``: ``Ldot = J u`` and the length accelerations at udot = 0,
    ``b = D^2 L[Xdot, Xdot] + DL[Xddot]`` with the body accelerations at udot = 0 (``vel.total_coriolis``: R_GB''
    = ([alpha] + [w]^2) R_GB, p_GB'' = a) and ``qddot = NDot u``. Needs Velocity. Cost: nu forward passes of the
    speeds, two nested forward passes of each path's geometry."""
    J = jax.jacfwd(lambda v: tendon_speeds(model, pos, q, v))(u)
    X, X_dot = _poses_and_rates(model, pos, q, u)
    alpha, a = vel.total_coriolis[:, 0], vel.total_coriolis[:, 1]
    w = spatial.skew(vel.V_GB[:, 0])
    qddot = mobilizer_groups.calc_qdotdot(model.topology, model.parameters, q, u, jnp.zeros_like(u))
    X_ddot = ((spatial.skew(alpha) + w @ w) @ pos.R_GB, a, qddot)

    def second_derivative(length):
        speed = lambda R, p, x: jax.jvp(length, (R, p, x), X_dot)[1]  # noqa: E731
        return jax.jvp(speed, X, X_dot)[1] + jax.jvp(length, X, X_ddot)[1]

    b = jnp.stack([second_derivative(t.path.calc_length_from_poses) for t in model.tendon_armatures])
    return J, b


def calc_tendon_jacobian(model, pos, q) -> jnp.ndarray:
    """J (nt, nu) with ``Ldot = J u`` (Ldot is linear in u: forward mode at u = 0, nu directions). Needs Position."""
    u0 = jnp.zeros(model.topology.nu, q.dtype)
    return jax.jacfwd(lambda v: tendon_speeds(model, pos, q, v))(u0)


def correct_tree_accelerations(model, pos, vel, q, u, tree: TreeAccelerations, solve_rows) -> TreeAccelerations:
    """The tree solution ``tree`` (udot, A_GB, motion_forces without the tendons) corrected for the tendons'
    armature (module doc). ``solve_rows(G)``: the tree solve at u = 0 of each row of G (k, nu), a
    TreeAccelerations with a leading axis k (the caller's M^-1 operator, JAX or compiled)."""
    J, b = calc_tendon_rows(model, pos, vel, q, u)
    a = armatures(model).astype(J.dtype)
    rows = solve_rows(J)
    K = jnp.eye(J.shape[0], dtype=J.dtype) + a[:, None] * (J @ rows.udot.T)
    tau = jnp.linalg.solve(K, a * (J @ tree.udot + b))
    return TreeAccelerations(*(x - jnp.tensordot(tau, r, axes=1) for x, r in zip(tree, rows)))


def corrected_solve_rows(model, pos, q, solve_rows):
    """``solve_rows`` (G (k, nu) -> the tree's TreeAccelerations at u = 0 of each row as mobility force, leading
    axis k) for ``M + J^T A J``: each row's solution corrected as in correct_tree_accelerations with b = 0 (at
    u = 0 the tendons' length accelerations are ``J udot``). The constrained solve's ``M^-1 G^T`` goes through
    it (jaxbody._realize.constraint_operators). Cost: nt tree solves and an nt x nt factorization once, then
    per call the k tree solves and O(k nt nu)."""
    J = calc_tendon_jacobian(model, pos, q)
    a = armatures(model).astype(J.dtype)
    tendon_rows = solve_rows(J)
    K = jnp.eye(J.shape[0], dtype=J.dtype) + a[:, None] * (J @ tendon_rows.udot.T)

    def solve(G):
        rows = solve_rows(G)
        tau = jnp.linalg.solve(K, a[:, None] * (J @ rows.udot.T))    # (nt, k)
        return TreeAccelerations(*(x - jnp.tensordot(tau.T, r, axes=1) for x, r in zip(rows, tendon_rows)))

    return solve


def mass_matrix_term(model, pos, q) -> jnp.ndarray:
    """``J^T A J`` (nu, nu): the tendons' part of the mass matrix."""
    J = calc_tendon_jacobian(model, pos, q)
    return J.T @ (armatures(model).astype(J.dtype)[:, None] * J)


def multiply_by_m_term(model, pos, q, v) -> jnp.ndarray:
    """``J^T A J v`` (nu,)."""
    J = calc_tendon_jacobian(model, pos, q)
    return J.T @ (armatures(model).astype(J.dtype) * (J @ v))


def correct_m_inv(model, pos, q, y, m_inv) -> jnp.ndarray:
    """``(M + J^T A J)^-1 f`` from ``y = M^-1 f`` (nu,) or (nu, k) and the operator ``m_inv`` (nu,) -> (nu,):
    ``y - W^T (I + A J W^T)^-1 A J y`` with ``W = rows m_inv(J_k)`` (with known udots, M^-1 is [M_rr^-1; 0])."""
    J = calc_tendon_jacobian(model, pos, q)
    a = armatures(model).astype(J.dtype)
    W = jax.vmap(m_inv)(J)
    K = jnp.eye(J.shape[0], dtype=J.dtype) + a[:, None] * (J @ W.T)
    return y - W.T @ jnp.linalg.solve(K, a[:, None] * (J @ y.reshape(y.shape[0], -1))).reshape(
        (J.shape[0],) + y.shape[1:])
