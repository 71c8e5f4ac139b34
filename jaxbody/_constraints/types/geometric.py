"""Geometric constraints between bodies (catalogue 2.1-2.8), Simbody's equations in the Ancestor frame A.

Naming follows the catalogue: a station S fixed on one body, C the material
point of the other body instantaneously coincident with S. Every vector is
expressed in A; ``k.p``, ``k.R``, ... are the constrained bodies' kinematics in
A, in constructor order. Parameters (one row per constraint) are listed in
each class docstring, in order.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxbody._constraints.types.base import (
    ConstrainedKinematics,
    ConstraintType,
    HolonomicByLevel,
    dot,
    safe_unit,
)


def _split(params, sizes):
    out, i = [], 0
    for n in sizes:
        out.append(params[:, i : i + n] if n > 1 else params[:, i])
        i += n
    return out


def _coincident_difference(k: ConstrainedKinematics, base: int, follower: int, s_F, level: int):
    """Station S (on ``follower``) minus the coincident point C of ``base``, at position/velocity/acceleration level."""
    p_S = k.station_location(follower, s_F)
    if level == 0:
        return p_S
    if level == 1:
        return k.station_velocity(follower, s_F) - k.point_velocity(base, p_S)
    return k.station_acceleration(follower, s_F) - k.point_acceleration(base, p_S)


@dataclasses.dataclass(frozen=True)
class Rod(ConstraintType):
    """Constant distance between station sf on body 1 (F) and sb on body 2 (B). Params: sf (3), sb (3), length.

    perr = |p_SfSb| - d; pverr = (v_Sb - v_Sf).Cz; paerr = (a_Sb - a_Sf).Cz + (v_Sb - v_Sf).Cz_dot with
    Cz = p_SfSb / |p_SfSb| (F's z axis where the stations coincide).
    """

    simbody_name = "Rod"
    n_bodies = 2
    n_params = 7
    mp = 1

    def _geometry(self, k):
        sf, sb, length = _split(k.params, (3, 3, 1))
        p = k.station_location(1, sb) - k.station_location(0, sf)
        Cz, r, singular = safe_unit(p, k.direction(0, jnp.broadcast_to(jnp.array([0.0, 0.0, 1.0], p.dtype), p.shape)))
        return sf, sb, length, p, Cz, r, singular

    def position_errors(self, k):
        _, _, length, _, _, r, _ = self._geometry(k)
        return (r - length)[:, None]

    def velocity_errors(self, k):
        sf, sb, _, _, Cz, _, _ = self._geometry(k)
        return dot(k.station_velocity(1, sb) - k.station_velocity(0, sf), Cz)[:, None]

    def acceleration_errors(self, k):
        sf, sb, _, _, Cz, r, singular = self._geometry(k)
        pdot = k.station_velocity(1, sb) - k.station_velocity(0, sf)
        safe_r = jnp.where(singular, 1.0, r)[:, None]
        Cz_dot = jnp.where(
            singular[:, None], jnp.cross(k.w[:, 0], Cz), (pdot - Cz * dot(pdot, Cz)[:, None]) / safe_r
        )
        pddot = k.station_acceleration(1, sb) - k.station_acceleration(0, sf)
        return (dot(pddot, Cz) + dot(pdot, Cz_dot))[:, None]


@dataclasses.dataclass(frozen=True)
class Ball(ConstraintType):
    """Coincident points: point1 on body 1 at point2 on body 2 (3 equations in A). Params: point1 (3), point2 (3).

    perr = p_S - p_P; pverr = v_S - v_C; paerr = a_S - a_C (S = point2, C = body 1's point at S).
    """

    simbody_name = "Ball"
    n_bodies = 2
    n_params = 6
    mp = 3

    def position_errors(self, k):
        p1, p2 = _split(k.params, (3, 3))
        return k.station_location(1, p2) - k.station_location(0, p1)

    def velocity_errors(self, k):
        return _coincident_difference(k, 0, 1, k.params[:, 3:6], 1)

    def acceleration_errors(self, k):
        return _coincident_difference(k, 0, 1, k.params[:, 3:6], 2)


def _orientation_pairs(k, RB, RF):
    """The pairs (a, b) = (RFx, RBy), (RFy, RBz), (RFz, RBx) of axes in A, each (k, 3, 3): [pair, xyz]."""
    a = jnp.stack([RF[..., 0], RF[..., 1], RF[..., 2]], 1)
    b = jnp.stack([RB[..., 1], RB[..., 2], RB[..., 0]], 1)
    return a, b


def _perpendicular_axes_errors(k, base: int, follower: int, RB_in_base, RF_in_follower, level: int):
    """Three perpendicularity conditions of frame axes (ConstantOrientation / Weld rows 0-2), (k, 3)."""
    RB = jnp.einsum("kij,kjl->kil", k.R[:, base], RB_in_base)
    RF = jnp.einsum("kij,kjl->kil", k.R[:, follower], RF_in_follower)
    a, b = _orientation_pairs(k, RB, RF)
    if level == 0:
        return dot(a, b)
    wB, wF = k.w[:, base, None], k.w[:, follower, None]
    axb = jnp.cross(a, b)
    if level == 1:
        return dot(wF - wB, axb)
    alB, alF = k.alpha[:, base, None], k.alpha[:, follower, None]
    bias = jnp.cross(jnp.cross(wF, a), b) - jnp.cross(jnp.cross(wB, b), a)
    return dot(alF - alB, axb) + dot(wF - wB, bias)


@dataclasses.dataclass(frozen=True)
class ConstantOrientation(HolonomicByLevel):
    """Follower frame RF (on body 2) keeps its orientation relative to base frame RB (on body 1).

    Params: RB (9, row-major, in body 1), RF (9, in body 2). perr = (RFx.RBy, RFy.RBz, RFz.RBx).
    """

    simbody_name = "ConstantOrientation"
    n_bodies = 2
    n_params = 18
    mp = 3

    def _frames(self, k):
        return k.params[:, :9].reshape(-1, 3, 3), k.params[:, 9:18].reshape(-1, 3, 3)

    def errors(self, k, level):
        return _perpendicular_axes_errors(k, 0, 1, *self._frames(k), level)


@dataclasses.dataclass(frozen=True)
class Weld(HolonomicByLevel):
    """Coincident frames: frame F on body 2 welded to frame B on body 1 (6 equations).

    Params: R_B1B (9), p_B1B (3), R_B2F (9), p_B2F (3). Rows 0-2: orientation as ConstantOrientation;
    rows 3-5: p(origin F) - p(origin B) in A, derivatives as Ball with S = F's origin.
    """

    simbody_name = "Weld"
    n_bodies = 2
    n_params = 24
    mp = 6

    def errors(self, k, level):
        RB, pB = k.params[:, :9].reshape(-1, 3, 3), k.params[:, 9:12]
        RF, pF = k.params[:, 12:21].reshape(-1, 3, 3), k.params[:, 21:24]
        rot = _perpendicular_axes_errors(k, 0, 1, RB, RF, level)
        if level == 0:
            trans = k.station_location(1, pF) - k.station_location(0, pB)
        else:
            trans = _coincident_difference(k, 0, 1, pF, level)
        return jnp.concatenate([rot, trans], -1)


def _in_plane_or_line_errors(k, s_F, level):
    """(S - C) at the given level, with the -2 w_AB x (v_S - v_C) term at acceleration level (body 0 = B)."""
    if level < 2:
        return _coincident_difference(k, 0, 1, s_F, level)
    dv = _coincident_difference(k, 0, 1, s_F, 1)
    return _coincident_difference(k, 0, 1, s_F, 2) - 2 * jnp.cross(k.w[:, 0], dv)


@dataclasses.dataclass(frozen=True)
class PointInPlane(HolonomicByLevel):
    """Point S on the follower (body 2) stays in a plane of the plane body (body 1).

    Params: normal n (3, unit, in body 1), height h, S (3, in body 2). perr = p_BC.n - h.
    """

    simbody_name = "PointInPlane"
    n_bodies = 2
    n_params = 7
    mp = 1

    def errors(self, k, level):
        n_B, h, s_F = _split(k.params, (3, 1, 3))
        n_A = k.direction(0, n_B)
        if level == 0:
            return (dot(k.station_location(1, s_F) - k.p[:, 0], n_A) - h)[:, None]
        return dot(_in_plane_or_line_errors(k, s_F, level), n_A)[:, None]


@dataclasses.dataclass(frozen=True)
class PointOnLine(HolonomicByLevel):
    """Point S on the follower (body 2) stays on a line of the line body (body 1).

    Params: x (3), y (3) (the two unit perpendiculars of the line direction, in body 1, fixed at
    construction as Simbody: x = z.perp(), y = unit(z x x)), point P on the line (3), S (3, in body 2).
    perr = ((p_BC - P).x, (p_BC - P).y).
    """

    simbody_name = "PointOnLine"
    n_bodies = 2
    n_params = 12
    mp = 2

    def errors(self, k, level):
        x, y, P, s_F = _split(k.params, (3, 3, 3, 3))
        if level == 0:
            d = k.station_location(1, s_F) - k.station_location(0, P)
        else:
            d = _in_plane_or_line_errors(k, s_F, level)
        return jnp.stack([dot(d, k.direction(0, x)), dot(d, k.direction(0, y))], -1)


@dataclasses.dataclass(frozen=True)
class ConstantAngle(HolonomicByLevel):
    """Angle between axis b on the base (body 1) and axis f on the follower (body 2) stays theta.

    Params: b (3, unit, in body 1), f (3, unit, in body 2), cos(theta). perr = b.f - cos(theta).
    Singular (the torque direction f x b vanishes) at theta = 0 or pi.
    """

    simbody_name = "ConstantAngle"
    n_bodies = 2
    n_params = 7
    mp = 1

    def errors(self, k, level):
        b_B, f_F, cos_theta = _split(k.params, (3, 3, 1))
        b, f = k.direction(0, b_B), k.direction(1, f_F)
        if level == 0:
            return (dot(b, f) - cos_theta)[:, None]
        wB, wF = k.w[:, 0], k.w[:, 1]
        fxb = jnp.cross(f, b)
        if level == 1:
            return dot(wF - wB, fxb)[:, None]
        bias = jnp.cross(jnp.cross(wF, f), b) - jnp.cross(jnp.cross(wB, b), f)
        return (dot(k.alpha[:, 1] - k.alpha[:, 0], fxb) + dot(wF - wB, bias))[:, None]


@dataclasses.dataclass(frozen=True)
class NoSlip1D(ConstraintType):
    """No relative slip of moving bodies 0 and 1 along direction n at point P, both fixed in the case body.

    Constrained bodies: (case, moving body 0, moving body 1). Params: P (3, in case), n (3, unit, in case).
    verr = (v_P1 - v_P0).n_A; vaerr = (a_P1 - a_P0 - w_AC x (v_P1 - v_P0)).n_A.
    """

    simbody_name = "NoSlip1D"
    n_bodies = 3
    n_params = 6
    mv = 1

    def _contact(self, k):
        P_C, n_C = _split(k.params, (3, 3))
        return k.station_location(0, P_C), k.direction(0, n_C)

    def velocity_errors(self, k):
        p_AP, n_A = self._contact(k)
        return dot(k.point_velocity(2, p_AP) - k.point_velocity(1, p_AP), n_A)[:, None]

    def acceleration_errors(self, k):
        p_AP, n_A = self._contact(k)
        dv = k.point_velocity(2, p_AP) - k.point_velocity(1, p_AP)
        da = k.point_acceleration(2, p_AP) - k.point_acceleration(1, p_AP)
        return dot(da - jnp.cross(k.w[:, 0], dv), n_A)[:, None]
