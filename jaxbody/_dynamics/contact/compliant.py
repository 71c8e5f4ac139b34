"""Simbody's CompliantContactSubsystem as one force element: every tracked pair, grouped by pair kind.

Static: ``surface_body`` (ns,) each surface's mobilized body, ``groups`` (the pair list, grouped by pair kind,
``PairGroup``). Leaves (per surface, so each is one number of the Model): ``shapes`` (one ``shapes`` record
per kind and static structure), ``R_BS`` (ns, 3, 3), ``p_BS`` (ns, 3) each surface's frame on its body,
``material`` (ns, 5) (stiffness Pa, dissipation s/m, static, dynamic, viscous (s/m) friction), ``thickness``
(ns,) m, ``transition_velocity`` m/s. ``force_model`` (static): None for the pair table's models (Simbody's), or
"smooth_hertz" / "exponential_spring" on every pair (``compliant_smooth_models``), with their parameters in the
leaf ``model_parameters`` ((0,) for None, (3,) and (11,)); the exponential spring's points own State.z entries
(p0x, p0y, K each, in pair order).
Static ``broad_phase_capacity`` (0: off): a group of more pairs runs its
tracker on that many candidate pairs (``broad_phase.py``; same forces).

At Dynamics each group runs its tracker once on all its pairs (one vectorized call per pair kind, MJX's
collision-driver pattern) and its force model (``compliant_models``); forces on surface 2 act at the model's
points, their negatives on surface 1. Cost: O(pairs x points) per State, no Python loop over pairs.
"""

from __future__ import annotations

from typing import NamedTuple

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.contact import compliant_smooth_models as smooth
from jaxbody._dynamics.contact import geometry
from jaxbody._dynamics.contact.broad_phase import track_candidates
from jaxbody._dynamics.contact.compliant_models import FORCE_MODELS
from jaxbody._dynamics.contact.trackers.table import PAIR_TABLE
from jaxbody._dynamics.forces import ForceElement


class PairGroup(NamedTuple):
    """The pairs of one pair kind (static). ``kinds``: (kind1, kind2) as the table orders them; ``records``:
    the shape record of each side; ``slots``: each pair's surface in its record, per side (tuples of n);
    ``surfaces``: each pair's surface index (into the element's per-surface arrays), per side."""

    kinds: tuple
    records: tuple
    slots: tuple
    surfaces: tuple


class ContactForces(NamedTuple):
    """Simbody's ContactForce per tracked pair (npairs, in ``CompliantContactForce.pairs()`` order), in G.

    ``active`` (npairs,) bool: any point overlapping; ``depth`` (npairs,) m: the deepest point's (<= 0 when
    apart); ``point_G`` (npairs, 3): the contact point (one-point contacts: the force model's point;
    several points: their center of pressure, weighted by normal force, the deepest point when none pushes);
    ``normal_G`` (npairs, 3): the deepest point's normal, from surface 1 into surface 2; ``force_G``
    (npairs, 3) and ``moment_G`` (npairs, 3) about ``point_G``: the spatial force on surface 2;
    ``potential_energy`` (npairs,) J; ``power_loss`` (npairs,) W."""

    active: jnp.ndarray
    depth: jnp.ndarray
    point_G: jnp.ndarray
    normal_G: jnp.ndarray
    force_G: jnp.ndarray
    moment_G: jnp.ndarray
    potential_energy: jnp.ndarray
    power_loss: jnp.ndarray


def _summarize(contact, out) -> ContactForces:
    """Per-pair report (n,) of a group's per-point contact (n, m) and forces."""
    depth = jnp.max(contact.depth, -1)
    deepest = jnp.argmax(contact.depth, -1)
    pick = lambda a: jnp.take_along_axis(a, deepest[:, None, None], 1)[:, 0]  # noqa: E731
    weight = jnp.abs(jnp.sum(out.force_G * contact.normal_G, -1))
    total = jnp.sum(weight, -1)
    pushing = total > 0
    cop = jnp.sum(weight[..., None] * out.point_G, 1) / jnp.where(pushing, total, 1.0)[:, None]
    point = jnp.where(pushing[:, None], cop, pick(out.point_G))
    force = jnp.sum(out.force_G, 1)
    moment = jnp.sum(jnp.cross(out.point_G - point[:, None], out.force_G), 1)
    return ContactForces(depth > 0, depth, point, pick(contact.normal_G), force, moment,
                         jnp.sum(out.potential_energy, -1), jnp.sum(out.power_loss, -1))


class CompliantContactForce(ForceElement):
    """All compliant contact pairs of a system (see the module docstring). Needs Velocity."""

    surface_body: tuple = eqx.field(static=True)
    groups: tuple = eqx.field(static=True)
    force_model: str | None = eqx.field(static=True)
    shapes: tuple
    R_BS: jnp.ndarray
    p_BS: jnp.ndarray
    material: jnp.ndarray
    thickness: jnp.ndarray
    transition_velocity: jnp.ndarray
    model_parameters: jnp.ndarray
    broad_phase_capacity: int = eqx.field(static=True, default=0)

    def pairs(self) -> list[tuple[int, int]]:
        """(surface1, surface2) of every tracked pair, in report order (static)."""
        return [p for g in self.groups for p in zip(*g.surfaces)]

    def _z_counts(self) -> list[int]:
        """State variables of each group (static): 3 per exponential-spring point, else 0."""
        if self.force_model != "exponential_spring":
            return [0] * len(self.groups)
        return [3 * len(g.surfaces[0]) * smooth.EXPONENTIAL_POINTS[g.kinds] for g in self.groups]

    def num_z(self) -> int:
        return sum(self._z_counts())

    def default_z(self, dtype):
        """Simbody's default anchor p0 = 0 and sliding state K = 1 at every exponential-spring point."""
        return jnp.tile(jnp.asarray([0.0, 0.0, 1.0], dtype), self.num_z() // 3)

    def _group_forces(self, state, group, z):
        """(Contact, PointForces, body1 (n,), body2 (n,), z_dot (n, m, 3) or None) of one group; ``z`` its slice."""
        pos, vel = state.position, state.velocity
        i1, i2 = (np.asarray(s, dtype=int) for s in group.surfaces)
        b1, b2 = (np.asarray(self.surface_body)[i] for i in (i1, i2))
        R1, p1 = geometry.frame_in_ground(pos, b1, self.R_BS[i1], self.p_BS[i1])
        R2, p2 = geometry.frame_in_ground(pos, b2, self.R_BS[i2], self.p_BS[i2])
        shape1 = self.shapes[group.records[0]].take(np.asarray(group.slots[0], dtype=int))
        shape2 = self.shapes[group.records[1]].take(np.asarray(group.slots[1], dtype=int))
        rule = PAIR_TABLE[group.kinds]
        capacity = self.broad_phase_capacity
        if 0 < capacity < len(i1):
            contact = track_candidates(rule.track, group.kinds, capacity, R1, p1, shape1, R2, p2, shape2)
        else:
            contact = rule.track(R1, p1, shape1, R2, p2, shape2)
        n, m = contact.depth.shape

        def relative_velocity(point):
            flat = point.reshape(-1, 3)
            v2 = geometry.point_velocity(pos, vel, np.repeat(b2, m), flat)
            v1 = geometry.point_velocity(pos, vel, np.repeat(b1, m), flat)
            return (v2 - v1).reshape(point.shape)

        mat1, mat2 = self.material[i1], self.material[i2]
        if self.force_model == "smooth_hertz":
            out = smooth.smooth_hertz(contact, mat1, mat2, relative_velocity, self.transition_velocity, self.model_parameters)
            return contact, out, b1, b2, None
        if self.force_model == "exponential_spring":
            out, z_dot = smooth.exponential_spring(contact, R1, p1, relative_velocity, self.model_parameters, z.reshape(n, m, 3))
            return contact, out, b1, b2, z_dot
        out = FORCE_MODELS[rule.force_model](contact, mat1, mat2, self.thickness[i1], self.thickness[i2],
                                             relative_velocity, self.transition_velocity)
        return contact, out, b1, b2, None

    def _all_groups(self, state, z):
        """[_group_forces of each group] with each group's slice of ``z`` (num_z,)."""
        out, start = [], 0
        for group, count in zip(self.groups, self._z_counts()):
            out.append(self._group_forces(state, group, z[start:start + count]))
            start += count
        return out

    def calc_with_z_and_z_dot(self, model, state, z):
        nb = model.topology.nbodies
        F = jnp.zeros((nb, 2, 3), state.q.dtype)
        pe = jnp.zeros((), state.q.dtype)
        z_dot = []
        for contact, out, b1, b2, zd in self._all_groups(state, z):
            m = contact.depth.shape[1]
            point, force = out.point_G.reshape(-1, 3), out.force_G.reshape(-1, 3)
            F = F + geometry.point_forces_on_bodies(nb, state.position, np.repeat(b2, m), point, force)
            F = F + geometry.point_forces_on_bodies(nb, state.position, np.repeat(b1, m), point, -force)
            pe = pe + jnp.sum(out.potential_energy)
            if zd is not None:
                z_dot.append(zd.reshape(-1))
        z_dot = jnp.concatenate(z_dot) if z_dot else jnp.zeros((0,), F.dtype)
        return F, jnp.zeros(model.topology.nu, F.dtype), pe, z_dot

    def calc_with_z(self, model, state, z):
        return self.calc_with_z_and_z_dot(model, state, z)[:3]

    def calc_z_dot(self, model, state, z):
        return self.calc_with_z_and_z_dot(model, state, z)[3]

    def calc(self, model, state):
        """Forces at the default state variables (``default_z``; none unless exponential springs)."""
        return self.calc_with_z(model, state, self.default_z(state.q.dtype))

    def calc_contact_forces(self, state, z=None) -> ContactForces:
        """The per-pair report (``ContactForces``) at this State (realized to Velocity); ``z``: this element's
        state variables (default ``default_z``)."""
        z = self.default_z(state.q.dtype) if z is None else z
        parts = [_summarize(*g[:2]) for g in self._all_groups(state, z)]
        if not parts:  # no tracked pair: empty arrays of the documented shapes
            dtype = state.q.dtype
            v, s = jnp.zeros((0, 3), dtype), jnp.zeros((0,), dtype)
            return ContactForces(jnp.zeros((0,), bool), s, v, v, v, v, s, s)
        return ContactForces(*(jnp.concatenate(field) for field in zip(*parts)))
