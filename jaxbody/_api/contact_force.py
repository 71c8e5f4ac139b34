"""Host-side builders of the contact force elements: ``jb.HuntCrossleyForce``, ``jb.SmoothSphereHalfSpaceForce``.

Contact geometry is declared on the handle before ``realize_topology()`` (spheres on bodies, half-spaces on
Ground or any body, with Simbody's half-space convention: material at x > 0 of its frame H, outward normal
-x); every argument is checked here and a bad one raises InvalidArgument naming the element and the body.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbody._api.body import host_transform
from jaxbody._api.force_checks import check_mobod as _check_mobod
from jaxbody._api.force_checks import positive
from jaxbody._api.force_checks import scalar as _scalar
from jaxbody._api.force_checks import vec3 as _vec3
from jaxbody._api.force_handles import ForceHandle
from jaxbody._dynamics.contact import hunt_crossley, smooth_sphere_half_space
from jaxbody.errors import InvalidArgument


def frame_on_body(X, what):
    """(R, p) numpy arrays of a jb.Transform (identity for None); InvalidArgument naming ``what`` if it is not
    one, or not a proper rotation and finite position (``body.host_transform``'s checks)."""
    return host_transform(X, what, "")


class HuntCrossleyForce(ForceHandle):
    """Simbody's HuntCrossleyForce on a contact set of spheres and half-spaces (every sphere/half-space pair
    on different bodies; sphere/sphere pairs are not evaluated).

    ``hc = jb.HuntCrossleyForce(forces)``; ``hc.add_sphere(body, radius, station, stiffness, dissipation,
    static_friction, dynamic_friction, viscous_friction)`` and ``hc.add_half_space(body, X_BH, ...)`` declare
    the surfaces with Simbody's ``setBodyParameters`` numbers; ``set_transition_velocity`` (default 0.01 m/s).
    """

    def __init__(self, forces, transition_velocity=0.01):
        self._forces = forces
        self._spheres, self._half_spaces = [], []
        self.set_transition_velocity(transition_velocity)
        super().__init__(forces, self._make, "HuntCrossleyForce")

    def set_transition_velocity(self, v):
        self._transition_velocity = positive(v, "HuntCrossleyForce transition_velocity")

    def _surface_parameters(self, label, stiffness, dissipation, static_friction, dynamic_friction, viscous_friction):
        values = (stiffness, dissipation, static_friction, dynamic_friction, viscous_friction)
        names = ("stiffness", "dissipation", "static_friction", "dynamic_friction", "viscous_friction")
        row = [float(_scalar(v, f"{label}: {n}", nonnegative=True)) for v, n in zip(values, names)]
        if row[0] <= 0:
            raise InvalidArgument(f"{label}: stiffness must be positive, got {stiffness!r}")
        return row

    def add_sphere(self, body, radius, station=(0.0, 0.0, 0.0), stiffness=1.0, dissipation=0.0,
                   static_friction=0.0, dynamic_friction=0.0, viscous_friction=0.0) -> int:
        """A sphere of ``radius`` (m) centered at ``station`` (in B) of ``body``; returns its surface index."""
        _check_mobod(self._forces, body, "HuntCrossleyForce sphere")
        label = f"HuntCrossleyForce sphere on {body.name!r}"
        params = self._surface_parameters(label, stiffness, dissipation, static_friction, dynamic_friction, viscous_friction)
        self._spheres.append((body, np.asarray(_vec3(station, f"{label}: station")), float(positive(radius, f"{label}: radius")), params))
        return len(self._spheres) + len(self._half_spaces) - 1

    def add_half_space(self, body, X_BH=None, stiffness=1.0, dissipation=0.0,
                       static_friction=0.0, dynamic_friction=0.0, viscous_friction=0.0) -> int:
        """The half-space x > 0 of frame ``X_BH`` (a jb.Transform on ``body``, e.g. Ground); its surface index."""
        _check_mobod(self._forces, body, "HuntCrossleyForce half-space")
        label = f"HuntCrossleyForce half-space on {body.name!r}"
        params = self._surface_parameters(label, stiffness, dissipation, static_friction, dynamic_friction, viscous_friction)
        self._half_spaces.append((body, *frame_on_body(X_BH, f"{label}: X_BH"), params))
        return len(self._spheres) + len(self._half_spaces) - 1

    def _make(self):
        pairs = [(h, s) for h in self._half_spaces for s in self._spheres if h[0].index != s[0].index]
        if not pairs:
            raise InvalidArgument("HuntCrossleyForce: no sphere/half-space pair on different bodies; add a sphere "
                                  "and a half-space with add_sphere and add_half_space")
        stack = lambda rows: jnp.asarray(np.stack(rows))
        return hunt_crossley.HuntCrossleyForce(
            half_space_body=tuple(h[0].index for h, _ in pairs), sphere_body=tuple(s[0].index for _, s in pairs),
            R_BH=stack([h[1] for h, _ in pairs]), p_BH=stack([h[2] for h, _ in pairs]),
            sphere_center=stack([s[1] for _, s in pairs]), radius=stack([s[2] for _, s in pairs]),
            half_space_parameters=stack([h[3] for h, _ in pairs]), sphere_parameters=stack([s[3] for _, s in pairs]),
            transition_velocity=self._transition_velocity,
        )


class SmoothSphereHalfSpaceForce(ForceHandle):
    """OpenSim/Simbody's SmoothSphereHalfSpaceForce: one parameter set, any number of sphere/half-space pairs.

    ``jb.SmoothSphereHalfSpaceForce(forces, stiffness=1, dissipation=0, static_friction=0, dynamic_friction=0,
    viscous_friction=0, transition_velocity=0.01, constant_contact_force=1e-5, hertz_smoothing=300,
    hunt_crossley_smoothing=50)`` (OpenSim's defaults), then ``add_contact(sphere_body, sphere_location,
    sphere_radius, half_space_body, X_BH)`` per pair (OpenSim's element has exactly one pair).
    """

    def __init__(self, forces, stiffness=1.0, dissipation=0.0, static_friction=0.0, dynamic_friction=0.0,
                 viscous_friction=0.0, transition_velocity=0.01, constant_contact_force=1e-5, hertz_smoothing=300.0,
                 hunt_crossley_smoothing=50.0):
        self._forces, self._pairs = forces, []
        label = "SmoothSphereHalfSpaceForce"
        self._parameters = {
            "stiffness": positive(stiffness, f"{label} stiffness"),
            "dissipation": _scalar(dissipation, f"{label} dissipation", True),
            "static_friction": _scalar(static_friction, f"{label} static_friction", True),
            "dynamic_friction": _scalar(dynamic_friction, f"{label} dynamic_friction", True),
            "viscous_friction": _scalar(viscous_friction, f"{label} viscous_friction", True),
            "transition_velocity": positive(transition_velocity, f"{label} transition_velocity"),
            "constant_contact_force": positive(constant_contact_force, f"{label} constant_contact_force"),
            "hertz_smoothing": positive(hertz_smoothing, f"{label} hertz_smoothing"),
            "hunt_crossley_smoothing": positive(hunt_crossley_smoothing, f"{label} hunt_crossley_smoothing"),
        }
        super().__init__(forces, self._make, "SmoothSphereHalfSpaceForce")

    def add_contact(self, sphere_body, sphere_location, sphere_radius, half_space_body, X_BH=None) -> int:
        """A sphere (center ``sphere_location`` in its body, m) against the half-space x > 0 of ``X_BH``."""
        _check_mobod(self._forces, sphere_body, "SmoothSphereHalfSpaceForce", "sphere_body")
        _check_mobod(self._forces, half_space_body, "SmoothSphereHalfSpaceForce", "half_space_body")
        label = f"SmoothSphereHalfSpaceForce sphere on {sphere_body.name!r}"
        if sphere_body.index == half_space_body.index:
            raise InvalidArgument(f"{label}: the half-space is on the same body {sphere_body.name!r}")
        self._pairs.append((sphere_body.index, np.asarray(_vec3(sphere_location, f"{label}: sphere_location")),
                            float(positive(sphere_radius, f"{label}: sphere_radius")), half_space_body.index,
                            *frame_on_body(X_BH, f"{label}: X_BH")))
        return len(self._pairs) - 1

    def _make(self):
        if not self._pairs:
            raise InvalidArgument("SmoothSphereHalfSpaceForce: no contact pair; call add_contact")
        col = lambda i: jnp.asarray(np.stack([p[i] for p in self._pairs]))
        return smooth_sphere_half_space.SmoothSphereHalfSpaceForce(
            sphere_body=tuple(p[0] for p in self._pairs), half_space_body=tuple(p[3] for p in self._pairs),
            sphere_center=col(1), radius=col(2), R_BH=col(4), p_BH=col(5), **self._parameters,
        )
