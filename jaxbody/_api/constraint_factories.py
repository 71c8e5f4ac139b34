"""The construction half of ``jb.Constraint``: one factory classmethod per Simbody Constraint type, and the
host-side checks of their arguments, as a mixin that Constraint inherits.

``jb.Constraint.Rod(body1, station1, body2, station2, length)`` and friends check their arguments on the
host (InvalidArgument), add a constraint to the bodies' matter subsystem (before ``realize_topology()``)
and return a Constraint handle. Arguments follow Simbody's constructors and order, in Simbody's units:
stations and lengths m, angles rad, stations and directions expressed in the frame of the body they are
fixed on. Numbers become differentiable array leaves of the model (``Parameters.constraint_params``);
user functions (couplers, prescribed motion, Custom) are pure JAX functions checked by a trial call.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbody._api.arguments import integer
from jaxbody._api.body import host_transform
from jaxbody._api.mobilized_body import MobilizedBody
from jaxbody._constraints.types import contact, coordinate, custom, geometric
from jaxbody._math import spatial
from jaxbody._math.spatial import Rotation, Transform
from jaxbody.errors import InvalidArgument


def _vec3(x, what, name):
    v = np.asarray(x, dtype=float)
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise InvalidArgument(f"{name}: {what} must be a finite 3-vector, got {x!r}")
    return v


def _unit(x, what, name):
    v = _vec3(x, what, name)
    n = np.linalg.norm(v)
    if n == 0:
        raise InvalidArgument(f"{name}: {what} must be nonzero")
    return v / n


def _scalar(x, what, name):
    v = float(np.asarray(x, dtype=float))
    if not np.isfinite(v):
        raise InvalidArgument(f"{name}: {what} must be finite, got {x!r}")
    return v


def _positive(x, what, name):
    v = _scalar(x, what, name)
    if v <= 0:
        raise InvalidArgument(f"{name}: {what} must be positive, got {v}")
    return v


def _label(kind, *bodies) -> str:
    """'Ball(arm, hand)': a constraint's type (or name) and its bodies, as its error messages name it."""
    names = dict.fromkeys(b.name if isinstance(b, MobilizedBody) else repr(b) for b in bodies)
    return f"{kind}({', '.join(names)})"


def _mobod(x, what, name) -> MobilizedBody:
    if not isinstance(x, MobilizedBody):
        raise InvalidArgument(f"{name}: {what} must be a jb.MobilizedBody, got {type(x).__name__}")
    return x


def _rotation(R, what, name):
    if R is None:
        return np.eye(3)
    if isinstance(R, Transform):
        raise InvalidArgument(f"{name}: {what} must be a rotation, got a Transform")
    return host_transform(Rotation(np.asarray(R.R if isinstance(R, Rotation) else R, dtype=float)), what, name)[0]


class ConstraintFactories:
    """Mixin of Constraint: the factories ``Constraint.Rod(...)`` etc.; each ends in ``cls._create`` (Constraint)."""

    @staticmethod
    def _check_q(mobod, which, name):
        n = mobod.mobilizer_prototype.nq_alloc
        which = integer(which, f"{name}: q index")
        if not 0 <= which < n:
            raise InvalidArgument(f"{name}: q index {which} out of range for {mobod.name} ({n} q)")
        return mobod, int(which)

    @staticmethod
    def _check_u(mobod, which, name):
        n = mobod.mobilizer_prototype.nu
        which = integer(which, f"{name}: u index")
        if not 0 <= which < n:
            raise InvalidArgument(f"{name}: u index {which} out of range for {mobod.name} ({n} u)")
        return mobod, int(which)

    @classmethod
    def Rod(cls, body1, station1, body2=None, station2=None, length=None, *, name=None):
        """Constant distance between station1 on body1 and station2 on body2 (or ``Rod(body1, body2, length)``)."""
        if not isinstance(station1, MobilizedBody):
            b1, s1, b2, s2, d = body1, station1, body2, station2, length
        else:  # Rod(body1, body2, length): body origins
            b1, s1, b2, s2, d = body1, np.zeros(3), station1, np.zeros(3), body2
        nm = _label(name or "Rod", b1, b2)
        d = _scalar(d, "length", nm)
        if d <= 0:
            raise InvalidArgument(f"{nm}: length must be positive, got {d}")
        return cls._create(
            geometric.Rod(), [_mobod(b1, "body1", nm), _mobod(b2, "body2", nm)],
            np.concatenate([_vec3(s1, "station1", nm), _vec3(s2, "station2", nm), [d]]), name=name,
        )

    @classmethod
    def Ball(cls, body1, point1, body2=None, point2=None, *, name=None):
        """point1 on body1 coincides with point2 on body2 (or ``Ball(body1, body2)``: origins)."""
        if isinstance(point1, MobilizedBody):
            body1, point1, body2, point2 = body1, np.zeros(3), point1, np.zeros(3)
        nm = _label(name or "Ball", body1, body2)
        return cls._create(
            geometric.Ball(), [_mobod(body1, "body1", nm), _mobod(body2, "body2", nm)],
            np.concatenate([_vec3(point1, "point1", nm), _vec3(point2, "point2", nm)]), name=name,
        )

    @classmethod
    def Weld(cls, body1, frame1=None, body2=None, frame2=None, *, name=None):
        """Frame2 on body2 is welded to frame1 on body1 (or ``Weld(body1, body2)``: body frames)."""
        if isinstance(frame1, MobilizedBody):
            body1, frame1, body2, frame2 = body1, None, frame1, None
        nm = _label(name or "Weld", body1, body2)
        R1, p1 = host_transform(frame1, "frame1", nm)
        R2, p2 = host_transform(frame2, "frame2", nm)
        return cls._create(
            geometric.Weld(), [_mobod(body1, "body1", nm), _mobod(body2, "body2", nm)],
            np.concatenate([R1.ravel(), p1, R2.ravel(), p2]), name=name,
        )

    @classmethod
    def PointInPlane(cls, plane_body, plane_normal, plane_height, follower_body, follower_point, *, name=None):
        """Point on the follower stays in the plane ``p . n = h`` of the plane body."""
        nm = _label(name or "PointInPlane", plane_body, follower_body)
        return cls._create(
            geometric.PointInPlane(), [_mobod(plane_body, "plane_body", nm), _mobod(follower_body, "follower_body", nm)],
            np.concatenate([_unit(plane_normal, "plane_normal", nm), [_scalar(plane_height, "plane_height", nm)],
                            _vec3(follower_point, "follower_point", nm)]), name=name,
        )

    @classmethod
    def PointOnLine(cls, line_body, line_direction, point_on_line, follower_body, follower_point, *, name=None):
        """Point on the follower stays on the line (direction, point) of the line body."""
        nm = _label(name or "PointOnLine", line_body, follower_body)
        z = _unit(line_direction, "line_direction", nm)
        x = np.asarray(spatial.perp(jnp.asarray(z)))
        y = np.cross(z, x)
        y = y / np.linalg.norm(y)
        return cls._create(
            geometric.PointOnLine(), [_mobod(line_body, "line_body", nm), _mobod(follower_body, "follower_body", nm)],
            np.concatenate([x, y, _vec3(point_on_line, "point_on_line", nm), _vec3(follower_point, "follower_point", nm)]),
            name=name,
        )

    @classmethod
    def ConstantAngle(cls, base_body, axis_on_base, follower_body, axis_on_follower, angle=np.pi / 2, *, name=None):
        """The angle between an axis of the base and an axis of the follower stays ``angle`` (rad)."""
        nm = _label(name or "ConstantAngle", base_body, follower_body)
        return cls._create(
            geometric.ConstantAngle(), [_mobod(base_body, "base_body", nm), _mobod(follower_body, "follower_body", nm)],
            np.concatenate([_unit(axis_on_base, "axis_on_base", nm), _unit(axis_on_follower, "axis_on_follower", nm),
                            [np.cos(_scalar(angle, "angle", nm))]]), name=name,
        )

    @classmethod
    def ConstantOrientation(cls, base_body, frame_on_base, follower_body, frame_on_follower, *, name=None):
        """The follower's frame keeps its orientation relative to the base's frame (rotations, or None = identity)."""
        nm = _label(name or "ConstantOrientation", base_body, follower_body)
        return cls._create(
            geometric.ConstantOrientation(),
            [_mobod(base_body, "base_body", nm), _mobod(follower_body, "follower_body", nm)],
            np.concatenate([_rotation(frame_on_base, "frame_on_base", nm).ravel(),
                            _rotation(frame_on_follower, "frame_on_follower", nm).ravel()]), name=name,
        )

    @classmethod
    def NoSlip1D(cls, case_body, contact_point, direction, moving_body0, moving_body1, *, name=None):
        """No relative slip along ``direction`` (fixed in the case body) at ``contact_point`` (in the case body)."""
        nm = _label(name or "NoSlip1D", case_body, moving_body0, moving_body1)
        bodies = [_mobod(case_body, "case_body", nm), _mobod(moving_body0, "moving_body0", nm),
                  _mobod(moving_body1, "moving_body1", nm)]
        if bodies[1] is bodies[2]:
            raise InvalidArgument(f"{nm}: the two moving bodies must differ, got {bodies[1].name!r} twice")
        return cls._create(
            geometric.NoSlip1D(), bodies,
            np.concatenate([_vec3(contact_point, "contact_point", nm), _unit(direction, "direction", nm)]), name=name,
            distinct_bodies=False,  # the case body may be one of the moving bodies (e.g. Ground)
        )

    @classmethod
    def _on_one_coordinate(cls, ctype, mobilizer, which, value, what, name, speed: bool):
        """ConstantCoordinate/Speed/Acceleration: Simbody's (mobilizer, which, value) or (mobilizer, value) forms."""
        if value is None:
            which, value = 0, which
        nm = _label(name or ctype.simbody_name, mobilizer)
        mobod = _mobod(mobilizer, "mobilizer", nm)
        sel = cls._check_u(mobod, which, nm) if speed else cls._check_q(mobod, which, nm)
        selects = {"u_select" if speed else "q_select": [sel]}
        return cls._create(ctype, [], [_scalar(value, what, nm)], name=name, **selects)

    @classmethod
    def ConstantCoordinate(cls, mobilizer, which_q, position=None, *, name=None):
        """q[which_q] of ``mobilizer`` stays at ``position`` (``ConstantCoordinate(mobilizer, position)``: its only q)."""
        return cls._on_one_coordinate(coordinate.ConstantCoordinate(), mobilizer, which_q, position, "position", name, False)

    @classmethod
    def ConstantSpeed(cls, mobilizer, which_u, speed=None, *, name=None):
        """u[which_u] of ``mobilizer`` stays at ``speed``."""
        return cls._on_one_coordinate(coordinate.ConstantSpeed(), mobilizer, which_u, speed, "speed", name, True)

    @classmethod
    def ConstantAcceleration(cls, mobilizer, which_u, acceleration=None, *, name=None):
        """udot[which_u] of ``mobilizer`` equals ``acceleration``."""
        return cls._on_one_coordinate(
            coordinate.ConstantAcceleration(), mobilizer, which_u, acceleration, "acceleration", name, True
        )

    @classmethod
    def CoordinateCoupler(cls, matter, function, coordinate_bodies, coordinate_indices, *, params=(), name=None):
        """``function(q_sel, params) = 0`` for the listed (body, q index) coordinates (a pure JAX scalar function)."""
        nm = _label(name or "CoordinateCoupler", *coordinate_bodies)
        sel = [cls._check_q(_mobod(b, "coordinate body", nm), i, nm) for b, i in zip(coordinate_bodies, coordinate_indices, strict=True)]
        params = np.asarray(params, dtype=float).reshape(-1)
        ctype = coordinate.CoordinateCoupler(function=function, num_coordinates=len(sel), num_function_params=params.size)
        _check_scalar_function(nm, lambda: function(jnp.zeros(len(sel)), jnp.asarray(params)))
        return cls._create(ctype, [], params, q_select=sel, name=name)

    @classmethod
    def SpeedCoupler(cls, matter, function, speed_bodies, speed_indices, coordinate_bodies=(), coordinate_indices=(),
                     *, params=(), name=None):
        """``function(u_sel, q_sel, params) = 0`` (pure JAX scalar); only the u's mobilizers are constrained."""
        nm = _label(name or "SpeedCoupler", *speed_bodies, *coordinate_bodies)
        us = [cls._check_u(_mobod(b, "speed body", nm), i, nm) for b, i in zip(speed_bodies, speed_indices, strict=True)]
        qs = [cls._check_q(_mobod(b, "coordinate body", nm), i, nm) for b, i in zip(coordinate_bodies, coordinate_indices, strict=True)]
        params = np.asarray(params, dtype=float).reshape(-1)
        ctype = coordinate.SpeedCoupler(function=function, num_speeds=len(us), num_coordinates=len(qs),
                                        num_function_params=params.size)
        _check_scalar_function(nm, lambda: function(jnp.zeros(len(us)), jnp.zeros(len(qs)), jnp.asarray(params)))
        return cls._create(ctype, [], params, q_select=qs, u_select=us, name=name)

    @classmethod
    def PrescribedMotion(cls, matter, function, mobilizer, which_q, *, params=(), name=None):
        """``q = function(t, params)`` enforced by a multiplier (twice differentiable pure JAX function)."""
        nm = _label(name or "PrescribedMotion", mobilizer)
        sel = cls._check_q(_mobod(mobilizer, "mobilizer", nm), which_q, nm)
        params = np.asarray(params, dtype=float).reshape(-1)
        _check_scalar_function(nm, lambda: function(jnp.zeros(()), jnp.asarray(params)))
        ctype = coordinate.PrescribedMotion(function=function, num_function_params=params.size)
        return cls._create(ctype, [], params, q_select=[sel], name=name)

    @classmethod
    def SphereOnPlaneContact(cls, plane_body, plane_frame, sphere_body, sphere_center, sphere_radius,
                             enforce_rolling=False, *, name=None):
        """Sphere (center and radius on sphere_body) touching the x-y plane of plane_frame (on plane_body)."""
        nm = _label(name or "SphereOnPlaneContact", plane_body, sphere_body)
        R, p = host_transform(plane_frame, "plane_frame", nm)
        radius = _positive(sphere_radius, "sphere_radius", nm)
        return cls._create(
            contact.SphereOnPlaneContact(enforce_rolling=bool(enforce_rolling)),
            [_mobod(plane_body, "plane_body", nm), _mobod(sphere_body, "sphere_body", nm)],
            np.concatenate([R.ravel(), p, _vec3(sphere_center, "sphere_center", nm), [radius]]), name=name,
        )

    @classmethod
    def SphereOnSphereContact(cls, body_f, center_f, radius_f, body_b, center_b, radius_b, enforce_rolling=False,
                              *, name=None):
        """Two spheres (center, radius on each body) touching."""
        nm = _label(name or "SphereOnSphereContact", body_f, body_b)
        return cls._create(
            contact.SphereOnSphereContact(enforce_rolling=bool(enforce_rolling)),
            [_mobod(body_f, "body_f", nm), _mobod(body_b, "body_b", nm)],
            np.concatenate([_vec3(center_f, "center_f", nm), [_positive(radius_f, "radius_f", nm)],
                            _vec3(center_b, "center_b", nm), [_positive(radius_b, "radius_b", nm)]]), name=name,
        )

    @classmethod
    def LineOnLineContact(cls, body_f, edge_frame_f, half_length_f, body_b, edge_frame_b, half_length_b,
                          enforce_rolling=False, *, name=None):
        """Two edges (frame: origin = center, x = direction, z = outward) whose lines touch."""
        nm = _label(name or "LineOnLineContact", body_f, body_b)
        Rf, pf = host_transform(edge_frame_f, "edge_frame_f", nm)
        Rb, pb = host_transform(edge_frame_b, "edge_frame_b", nm)
        return cls._create(
            contact.LineOnLineContact(enforce_rolling=bool(enforce_rolling)),
            [_mobod(body_f, "body_f", nm), _mobod(body_b, "body_b", nm)],
            np.concatenate([Rf.ravel(), pf, [_positive(half_length_f, "half_length_f", nm)], Rb.ravel(), pb,
                            [_positive(half_length_b, "half_length_b", nm)]]), name=name,
        )

    @classmethod
    def PointOnPlaneContact(cls, plane_body, plane_frame, follower_body, follower_point, *, name=None):
        """A point of the follower stays in (and does not slip on) the x-y plane of plane_frame."""
        nm = _label(name or "PointOnPlaneContact", plane_body, follower_body)
        R, p = host_transform(plane_frame, "plane_frame", nm)
        return cls._create(
            contact.PointOnPlaneContact(),
            [_mobod(plane_body, "plane_body", nm), _mobod(follower_body, "follower_body", nm)],
            np.concatenate([R.ravel(), p, _vec3(follower_point, "follower_point", nm)]), name=name,
        )

    @classmethod
    def Custom(cls, matter, *, bodies=(), coordinates=(), speeds=(), position_error=None, velocity_error=None,
               acceleration_error=None, params=(), name=None):
        """A constraint from user JAX functions of one constraint's kinematics (see jaxbody._constraints.types.custom).

        bodies: constrained MobilizedBodies (kinematics in their Ancestor); coordinates / speeds:
        (MobilizedBody, index) pairs. Equation counts are read from a trial evaluation.
        """
        nm = _label(name or "Custom", *bodies, *(b for b, _ in coordinates), *(b for b, _ in speeds))
        bodies = [_mobod(b, "constrained body", nm) for b in bodies]
        qs = [cls._check_q(_mobod(b, "coordinate body", nm), i, nm) for b, i in coordinates]
        us = [cls._check_u(_mobod(b, "speed body", nm), i, nm) for b, i in speeds]
        params = np.asarray(params, dtype=float).reshape(-1)
        if position_error is None and velocity_error is None and acceleration_error is None:
            raise InvalidArgument(f"{nm}: give at least one of position_error, velocity_error, acceleration_error")
        nb, nq, nu = len(bodies), len(qs), len(us)
        from jaxbody._constraints.types.base import ConstrainedKinematics

        z3 = jnp.zeros((nb, 3))
        trial = ConstrainedKinematics(
            t=jnp.zeros(()), params=jnp.asarray(params), R=jnp.broadcast_to(jnp.eye(3), (nb, 3, 3)), p=z3,
            q=jnp.zeros(nq), w=z3, v=z3, qdot=jnp.zeros(nq), u=jnp.zeros(nu), alpha=z3, a=z3,
            qdotdot=jnp.zeros(nq), udot=jnp.zeros(nu),
        )
        sizes = []
        for what, fn in (("position_error", position_error), ("velocity_error", velocity_error),
                         ("acceleration_error", acceleration_error)):
            if fn is None:
                sizes.append(0)
                continue
            try:
                out = jnp.asarray(fn(trial))
            except Exception as e:  # noqa: BLE001 - report any failure of the user's function at build time
                raise InvalidArgument(f"{nm}: calling {what} on zero kinematics failed: {e}") from e
            if out.ndim != 1 or out.shape[0] == 0:
                raise InvalidArgument(f"{nm}: {what} must return a nonempty 1-D array, got shape {out.shape}")
            sizes.append(out.shape[0])
        ctype = custom.Custom(
            position_error=position_error, velocity_error=velocity_error, acceleration_error=acceleration_error,
            num_bodies=nb, num_coordinates=nq, num_speeds=nu, num_params=params.size,
            num_position=sizes[0], num_velocity=sizes[1], num_acceleration=sizes[2],
        )
        return cls._create(ctype, bodies, params, q_select=qs, u_select=us, name=name)


def _check_scalar_function(name, call):
    try:
        out = call()
    except Exception as e:  # noqa: BLE001 - report any failure of the user's function at build time
        raise InvalidArgument(f"{name}: calling the user function on zeros failed: {e}") from e
    if jnp.shape(out) != ():
        raise InvalidArgument(f"{name}: the user function must return a scalar, got shape {jnp.shape(out)}")
