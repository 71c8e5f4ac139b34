"""Simbody's UnilateralContact family (catalogue 2.20): host-side descriptions adopted by the matter.

    stop = jb.HardStopUpper(arm, 0, 1.2, 0.5)           # q0 of arm <= 1.2 rad, COR 0.5
    index = matter.adopt_unilateral_contact(stop)

Each constructor checks its arguments (InvalidArgument naming the contact and body) and records numbers;
``matter.adopt_unilateral_contact`` gives it its UnilateralContactIndex. ``realize_topology`` is not
affected: jb.SemiExplicitEulerTimeStepper gathers the adopted contacts into a batched
UnilateralContactSet whose coefficients and geometry are array leaves. Units: m, rad; COR in [0, 1];
friction coefficients ``mu_s >= mu_d >= 0``, ``mu_v >= 0`` (s/m).
"""

from __future__ import annotations

import numpy as np

from jaxbody._api.body import host_transform
from jaxbody._api.mobilized_body import MobilizedBody
from jaxbody.errors import InvalidArgument


def _body(b, what, label) -> MobilizedBody:
    if not isinstance(b, MobilizedBody):
        raise InvalidArgument(f"{label}: {what} must be a jb.MobilizedBody, got {type(b).__name__}")
    return b


def _vec3(v, what, label) -> np.ndarray:
    a = np.asarray(v, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise InvalidArgument(f"{label}: {what} must be 3 finite numbers, got {v!r}")
    return a


def _real(x, what, label, low=-np.inf, high=np.inf) -> float:
    try:
        value = float(x)
    except (TypeError, ValueError):
        raise InvalidArgument(f"{label}: {what} must be a number, got {x!r}") from None
    if not (np.isfinite(value) and low <= value <= high):
        raise InvalidArgument(f"{label}: {what} must be finite and in [{low}, {high}], got {x!r}")
    return value


def _friction(mu_s, mu_d, mu_v, label):
    mu_s, mu_d, mu_v = (_real(m, n, label, 0.0) for m, n in ((mu_s, "mu_s"), (mu_d, "mu_d"), (mu_v, "mu_v")))
    if mu_d > mu_s:
        raise InvalidArgument(f"{label}: the dynamic coefficient of friction mu_d={mu_d} can't exceed mu_s={mu_s}")
    return mu_s, mu_d, mu_v


class UnilateralContact:
    """Base of the family. ``group`` names the batched geometry group; ``index`` is set on adoption."""

    group = ""
    sign_convention = 1

    def _finish(self, label, bodies, min_cor):
        self.label = label
        self.bodies = bodies
        self.matter = bodies[0].matter
        for b in bodies:
            if b.matter is not self.matter:
                raise InvalidArgument(f"{label}: all bodies must belong to one SimbodyMatterSubsystem")
        self.min_cor = _real(min_cor, "the coefficient of restitution min_cor", label, 0.0, 1.0)
        self.index = None

    def has_friction(self) -> bool:
        return getattr(self, "mu_s", 0.0) > 0 or getattr(self, "mu_v", 0.0) > 0

    def get_sign_convention(self) -> int:
        """Simbody's sign of a good perr (+1: perr >= 0); jaxbody's kinematics fold it in."""
        return self.sign_convention

    def __repr__(self):
        return f"<{self.label} index={self.index}>"


class _HardStop(UnilateralContact):
    group = "stops"

    def __init__(self, mobod, which_q, limit, min_cor):
        mobod = _body(mobod, "mobod", type(self).__name__)
        label = f"{type(self).__name__}({mobod.name}, q{which_q})"
        mob = mobod.mobilizer_prototype
        if not isinstance(which_q, (int, np.integer)) or not 0 <= int(which_q) < mob.nu:
            raise InvalidArgument(f"{label}: which_q must be an integer in [0, {mob.nu})")
        if not mob.qdot_is_u:
            raise InvalidArgument(f"{label}: {mob.simbody_name} does not have qdot = u; a hard stop needs a mobilizer "
                                  "whose q and u coincide (Pin, Slider, ...), as Simbody's ConstantCoordinate does")
        self.which_q = int(which_q)
        self.limit = _real(limit, "limit", label)
        self._finish(label, (mobod,), min_cor)


class HardStopUpper(_HardStop):
    """Upper limit ``q <= limit`` on coordinate ``which_q`` of ``mobod`` (Simbody's sign convention -1)."""

    sign_convention = -1


class HardStopLower(_HardStop):
    """Lower limit ``q >= limit`` on coordinate ``which_q`` of ``mobod``."""


class Rope(UnilateralContact):
    """``|p2 - p1| <= length`` between station ``point1`` on ``mobod1`` and ``point2`` on ``mobod2`` (m)."""

    group = "distances"

    def __init__(self, mobod1, point1, mobod2, point2, length, min_cor):
        b1, b2 = _body(mobod1, "mobod1", "Rope"), _body(mobod2, "mobod2", "Rope")
        label = f"Rope({b1.name}, {b2.name})"
        if b1 is b2:
            raise InvalidArgument(f"{label}: a rope needs two different bodies")
        self.point1, self.point2 = _vec3(point1, "point1", label), _vec3(point2, "point2", label)
        self.length = _real(length, "length", label, 0.0)
        self.radius1 = self.radius2 = 0.0
        self.mu_s = self.mu_d = self.mu_v = 0.0
        self.sign = -1
        self._finish(label, (b1, b2), min_cor)


class SphereSphereContact(UnilateralContact):
    """Spheres (centre, radius) on two bodies may touch but not interpenetrate; Coulomb friction."""

    group = "distances"

    def __init__(self, mobod_F, center_F, radius_F, mobod_B, center_B, radius_B, min_cor, mu_s, mu_d, mu_v):
        bF, bB = _body(mobod_F, "mobod_F", "SphereSphereContact"), _body(mobod_B, "mobod_B", "SphereSphereContact")
        label = f"SphereSphereContact({bF.name}, {bB.name})"
        if bF is bB:
            raise InvalidArgument(f"{label}: the spheres must be on two different bodies")
        self.point1, self.point2 = _vec3(center_F, "center_F", label), _vec3(center_B, "center_B", label)
        self.radius1 = _real(radius_F, "radius_F", label, 0.0)
        self.radius2 = _real(radius_B, "radius_B", label, 0.0)
        self.length = 0.0
        self.mu_s, self.mu_d, self.mu_v = _friction(mu_s, mu_d, mu_v, label)
        self.sign = 1
        self._finish(label, (bF, bB), min_cor)


class EdgeEdgeContact(UnilateralContact):
    """Edges on two bodies, each an edge frame (origin at the edge centre, x along the edge, z outward from its
    solid) and a half length; the solids may touch at the lines' closest points but not interpenetrate."""

    group = "edges"

    def __init__(self, mobod_F, edge_frame_F, half_length_F, mobod_B, edge_frame_B, half_length_B,
                 min_cor, mu_s, mu_d, mu_v):
        bF, bB = _body(mobod_F, "mobod_F", "EdgeEdgeContact"), _body(mobod_B, "mobod_B", "EdgeEdgeContact")
        label = f"EdgeEdgeContact({bF.name}, {bB.name})"
        if bF is bB:
            raise InvalidArgument(f"{label}: the edges must be on two different bodies")
        self.R_FEf, self.p_FEf = host_transform(edge_frame_F, "edge_frame_F", label)
        self.R_BEb, self.p_BEb = host_transform(edge_frame_B, "edge_frame_B", label)
        self.half_length_F = _real(half_length_F, "half_length_F", label, 0.0)
        self.half_length_B = _real(half_length_B, "half_length_B", label, 0.0)
        self.mu_s, self.mu_d, self.mu_v = _friction(mu_s, mu_d, mu_v, label)
        self._finish(label, (bF, bB), min_cor)


class _PlaneContact(UnilateralContact):
    group = "planes"

    def _plane(self, plane_body, normal_B, height, follower, point_F, radius, min_cor, mu):
        name = type(self).__name__
        B, F = _body(plane_body, "plane_body", name), _body(follower, "follower_body", name)
        label = f"{name}({B.name}, {F.name})"
        if B is F:
            raise InvalidArgument(f"{label}: the plane and the follower must be different bodies")
        n = _vec3(normal_B, "normal_B", label)
        if np.linalg.norm(n) < 1e-12:
            raise InvalidArgument(f"{label}: normal_B must be nonzero")
        self.normal_B = n / np.linalg.norm(n)
        self.height = _real(height, "height", label)
        self.point_F = _vec3(point_F, "point_F", label)
        self.radius = _real(radius, "radius", label, 0.0)
        self.mu_s, self.mu_d, self.mu_v = _friction(*mu, label)
        self._finish(label, (B, F), min_cor)


class PointPlaneFrictionlessContact(_PlaneContact):
    """Point ``point_F`` on ``follower`` stays on the positive side of the plane ``n.p = height`` of ``plane_body``."""

    def __init__(self, plane_body, normal_B, height, follower, point_F, min_cor):
        self._plane(plane_body, normal_B, height, follower, point_F, 0.0, min_cor, (0.0, 0.0, 0.0))


class PointPlaneContact(_PlaneContact):
    """PointPlaneFrictionlessContact with Coulomb friction (mu_s, mu_d, mu_v)."""

    def __init__(self, plane_body, normal_B, height, follower, point_F, min_cor, mu_s, mu_d, mu_v):
        self._plane(plane_body, normal_B, height, follower, point_F, 0.0, min_cor, (mu_s, mu_d, mu_v))


class SpherePlaneContact(_PlaneContact):
    """Sphere (centre ``point_F`` on ``follower``, ``radius``) on the plane of ``plane_body``, with friction."""

    def __init__(self, plane_body, normal_B, height, follower, point_F, radius, min_cor, mu_s, mu_d, mu_v):
        self._plane(plane_body, normal_B, height, follower, point_F, radius, min_cor, (mu_s, mu_d, mu_v))


class _SpeedRow:
    """A velocity-level conditional row on mobility ``which_u`` of ``mobod`` (qdot = u not required)."""

    scale_by_mu = False
    speed = 0.0
    mu_s = mu_d = mu_v = 0.0

    def _row(self, mobod, which_u):
        name = type(self).__name__
        mobod = _body(mobod, "mobod", name)
        nu = mobod.mobilizer_prototype.nu
        self.label = f"{name}({mobod.name}, u{which_u})"
        if not isinstance(which_u, (int, np.integer)) or not 0 <= int(which_u) < nu:
            raise InvalidArgument(f"{self.label}: which_u must be an integer in [0, {nu})")
        self.mobod, self.which_u, self.matter, self.index = mobod, int(which_u), mobod.matter, None

    def __repr__(self):
        return f"<{self.label}>"


class UnilateralSpeedConstraint(_SpeedRow):
    """``u >= 0`` on one mobility (a ratchet): impulse in [0, inf). Simbody declares this class but leaves it
    unimplemented; jaxbody's stepper solves it in its dynamics phase. Registers itself with the matter."""

    lower, upper = 0.0, np.inf

    def __init__(self, mobod, which_u):
        self._row(mobod, which_u)
        self.matter._register_speed_row(self)


class BoundedSpeedConstraint(_SpeedRow):
    """Drive one mobility to ``speed`` with a generalized force in [lower, upper] (N or N m), slipping at the
    bounds (Simbody's documented BoundedSpeedConstraint, e.g. a torque-limited speed motor). Registers itself."""

    def __init__(self, mobod, which_u, lower, upper, speed=0.0):
        self._row(mobod, which_u)
        self.lower, self.upper = _real(lower, "lower", self.label), _real(upper, "upper", self.label)
        if self.lower > self.upper:
            raise InvalidArgument(f"{self.label}: lower bound {self.lower} exceeds upper bound {self.upper}")
        self.speed = _real(speed, "speed", self.label)
        self.matter._register_speed_row(self)


class StateLimitedFriction(_SpeedRow):
    """Coulomb friction on one mobility with a known normal force magnitude ``normal_force`` (N): the friction
    force is at most mu N, mu from ConditionalConstraint::calcEffectiveCOF of the slip speed |u|. Adopt it with
    ``matter.adopt_state_limited_friction``."""

    scale_by_mu = True

    def __init__(self, mobod, which_u, normal_force, mu_s, mu_d, mu_v):
        self._row(mobod, which_u)
        n = _real(normal_force, "normal_force", self.label, 0.0)
        self.lower, self.upper = -n, n
        self.mu_s, self.mu_d, self.mu_v = _friction(mu_s, mu_d, mu_v, self.label)

    def get_normal_force_magnitude(self) -> float:
        return self.upper
