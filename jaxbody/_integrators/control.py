"""Simbody's step machinery (catalogue 6.2): error norm, step-size rule, local projection, Hermite interpolation.

All functions are pure and lane-wise, so a vmapped rollout gives every lane its own step sequence.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._constraints.projection import ProjectOptions, project
from jaxbody._dynamics import prescribed
from jaxbody._integrators.methods import split_y, with_y
from jaxbody._integrators.settings import IntegratorSettings

SAFETY, MIN_SHRINK, MAX_GROW, HYSTERESIS_LOW, HYSTERESIS_HIGH = 0.9, 0.1, 5.0, 0.9, 1.2


def _vector_norm(v, infinity: bool):
    if v.shape[0] == 0:
        return jnp.zeros((), v.dtype)
    if infinity:
        return jnp.max(jnp.abs(v))
    return jnp.sqrt(jnp.mean(v**2))


def remove_quaternion_radial(model, q, q_vector):
    """``N N^+ v`` for a q-like v: each quaternion's component along its (normalized) q removed; others unchanged."""
    idx = model.topology.quaternion_q_index
    if len(idx) == 0:
        return q_vector
    idx = jnp.asarray(idx)
    qh = q[idx] / jnp.linalg.norm(q[idx], axis=-1, keepdims=True)
    e = q_vector[idx]
    return q_vector.at[idx].set(e - jnp.sum(e * qh, -1, keepdims=True) * qh)


def calc_error_norm(model, base, y0, y1, err, infinity: bool):
    """Simbody's weighted error norm ``max(|q err|, |u err|, |z err|)``.

    q error weighted by ``N Wu N^+`` (Wu = 1: the quaternion-length direction removed), absolute; u and z
    errors scaled by ``1/max(|x_i|, 1)`` frozen at the step start y0. RMS over each whole vector, or infinity.
    """
    eq, eu, ez = split_y(base, err)
    _, u0, z0 = split_y(base, y0)
    q1 = split_y(base, y1)[0]
    eq = remove_quaternion_radial(model, q1, eq)
    norms = [_vector_norm(eq, infinity), _vector_norm(eu / jnp.maximum(jnp.abs(u0), 1.0), infinity),
             _vector_norm(ez / jnp.maximum(jnp.abs(z0), 1.0), infinity)]
    return jnp.maximum(jnp.maximum(norms[0], norms[1]), norms[2])


def adjust_step_size(h, err, order: int, accuracy: float, limited, bounds):
    """Simbody's adjustStepSize: (h_new, accepted). ``limited``: the step was shortened to hit a time."""
    ratio = jnp.where(err > 0, accuracy / jnp.where(err > 0, err, 1.0), 1.0)
    h_new = jnp.where(err == 0, MAX_GROW * h, SAFETY * h * ratio ** (1.0 / order))
    h_new = jnp.where(jnp.isfinite(err), h_new, MIN_SHRINK * h)
    h_new = jnp.where((h_new > h) & (limited | (h_new < HYSTERESIS_HIGH * h)), h, h_new)
    h_new = jnp.where((h_new < h) & (err <= accuracy), h, h_new)
    h_new = jnp.where(h_new < h, jnp.minimum(h_new, HYSTERESIS_LOW * h), h_new)
    h_new = jnp.clip(h_new, MIN_SHRINK * h, MAX_GROW * h)
    accepted = h_new >= h
    h_new = jnp.clip(h_new, bounds[0], bounds[1])
    return h_new, accepted


def projection_options(settings: IntegratorSettings, local: bool = True, force=None) -> ProjectOptions:
    """Simbody's local projection after a step: LocalOnly, accuracy = constraint tolerance, projection limit
    ``max(2 tol, sqrt(tol))``; ForceProjection with project_every_step (or ``force``)."""
    tol = settings.constraint_tolerance_in_use
    return ProjectOptions(
        accuracy=tol, local_only=local, projection_limit=max(2 * tol, tol**0.5) if local else float("inf"),
        use_infinity_norm=settings.use_infinity_norm,
        force_projection=settings.project_every_step if force is None else force)


def project_with_error(model, state, err, options: ProjectOptions):
    """``projection.project`` with the q and u parts of the error estimate ``err`` (y layout: q, u, z).

    Returns (state, err, success, projected): the error estimate loses its component normal to the
    manifold where a projection ran (Simbody's attemptDAEStep); ``projected`` counts q and u projections.
    """
    nq, nu = state.q.shape[0], state.u.shape[0]
    eq, eu, ez = err[:nq], err[nq:nq + nu], err[nq + nu:]
    s, results = project(model, state, options, q_err_estimate=eq, u_err_estimate=eu)
    moved_q, moved_u = results.q_iterations > 0, results.u_iterations > 0
    eq = jnp.where(moved_q, results.q_err_estimate, eq)
    eu = jnp.where(moved_u, results.u_err_estimate, eu)
    projected = moved_q.astype(jnp.int32) + moved_u.astype(jnp.int32)
    return s, jnp.concatenate([eq, eu, ez]), results.success, projected


def hermite(t0, y0, f0, t1, y1, f1, t):
    """Cubic Hermite between (t0, y0, f0) and (t1, y1, f1) at t (Simbody's coefficients)."""
    h = t1 - t0
    d = jnp.where(h > 0, (t - t0) / jnp.where(h > 0, h, 1.0), 1.0)
    cy1 = d * d * (3 - 2 * d)
    cy0 = 1 - cy1
    cf1 = h * d * d * (d - 1)
    cf0 = h * d * (d - 1) ** 2
    return cy0 * y0 + cy1 * y1 + cf0 * f0 + cf1 * f1


def interpolated_state(model, base, t0, y0, f0, t1, y1, f1, t, options: ProjectOptions | None):
    """The state at t in [t0, t1] by Hermite interpolation, prescribed and (if options) projected."""
    s = prescribed.prescribe(model, with_y(base, t, hermite(t0, y0, f0, t1, y1, f1, t)))
    if options is not None:
        s, _, _, _ = project_with_error(model, s, jnp.zeros_like(y0), options)
    return s


__all__ = [
    "adjust_step_size", "calc_error_norm", "hermite", "interpolated_state", "join_y", "project_with_error",
    "projection_options", "remove_quaternion_radial",
]
