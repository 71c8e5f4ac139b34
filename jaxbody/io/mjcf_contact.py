"""MJCF contact as jaxbody compliant contact: geoms -> ContactSurfaces, MuJoCo's pairs -> tracked pairs.

``add_mjcf_contact`` (called by ``load_mjcf``) reads the geoms and MuJoCo's pair list (jaxbody.io.mjcf_contact_pairs:
contype/conaffinity, ``<exclude>``, explicit ``<pair>``, weld and parent filters, priority and solmix) and builds:

* one ``jb.ContactSurface`` per geom in a pair, on its body at the geom frame: plane -> HalfSpace (MuJoCo's
  plane normal +z becomes Simbody's -x: ``R_BS = R_BG R_GH`` with x_H = -z), sphere -> Sphere, capsule ->
  Capsule, ellipsoid -> Ellipsoid, cylinder -> Cylinder, box -> Brick, mesh -> ConvexMesh (MuJoCo collides
  meshes by their convex hull); all surfaces share one clique and exactly MuJoCo's pairs are included
  (``ContactTrackerSubsystem.include_pair``), so nothing else touches;
* one ``jb.CompliantContactSubsystem`` with transition velocity ``transition_velocity`` (m/s; MuJoCo's
  friction is a constraint, a smooth law needs a slip speed: the default 0.1 m/s keeps the sticking regime's
  damping ``mu fN / v_t`` integrable at MuJoCo's time steps);
* materials (jaxbody.io.mjcf_contact_material): per pair, MuJoCo's solref/solimp -> Hunt-Crossley stiffness
  and dissipation (matching MuJoCo's time constant and damping at the pair's reference load, per contact
  point), ``friction[0]`` -> static = dynamic friction (condim 1: 0), viscous friction 0; each geom's material
  is the mean of what its pairs need, so Simbody's combination rule gives each pair its own values (exact when
  a geom's pairs agree; a warning names the pairs where they do not).

Warned once each, naming the geoms (or pairs), and not modelled: torsional and rolling friction (condim 4
and 6), margin and gap (contact at a distance), an explicit pair's solreffriction, geom adhesion. Pairs no
tracker covers and geoms with no jaxbody shape (height fields, SDFs) are warned, naming them, and left out.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from jaxbody._api.compliant_contact import CompliantContactSubsystem, ContactTrackerSubsystem
from jaxbody._api.contact_surface import ContactGeometry, ContactMaterial, ContactSurface
from jaxbody._dynamics.contact.trackers.table import find_rule
from jaxbody._math.spatial import Transform
from jaxbody.io._passive import warn_unmodelled
from jaxbody.io.mjcf_contact_material import (
    combined,
    compliant_parameters,
    pair_target,
    rounded_radius,
    surface_stiffness,
    surface_values,
)
from jaxbody.io.mjcf_contact_pairs import MjcfGeom, read_mjcf_contact

#: rotation taking a MuJoCo plane's frame (normal +z) to Simbody's half-space frame (outward normal -x)
R_PLANE_HALF_SPACE = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])
#: m/s: ``load_mjcf``'s default friction transition velocity
TRANSITION_VELOCITY = 0.1
_SHAPES = {"plane": "HalfSpace", "sphere": "Sphere", "capsule": "Capsule", "ellipsoid": "Ellipsoid",
           "cylinder": "Cylinder", "box": "Brick", "mesh": "ConvexMesh"}


@dataclasses.dataclass
class MjcfContact:
    """What ``load_mjcf`` made of a file's contact: ``tracker`` and ``subsystem`` (the CompliantContactSubsystem;
    ``subsystem.get_contact_forces(state, model)`` reports each pair), ``surfaces`` geom name -> ContactSurface,
    ``pairs`` the MuJoCo pairs modelled (jaxbody.io.mjcf_contact_pairs.MjcfContactPair, in MuJoCo's order),
    ``materials`` geom name -> ContactMaterial, ``left_out`` the pairs not modelled ("geom1/geom2")."""

    tracker: ContactTrackerSubsystem
    subsystem: CompliantContactSubsystem
    surfaces: dict
    pairs: list
    materials: dict
    left_out: list


def _geometry(g: MjcfGeom):
    size = g.size
    if g.kind == "plane":
        return ContactGeometry.HalfSpace(), g.R_BG @ R_PLANE_HALF_SPACE
    if g.kind == "sphere":
        return ContactGeometry.Sphere(size[0]), g.R_BG
    if g.kind in ("capsule", "cylinder"):
        cls = ContactGeometry.Capsule if g.kind == "capsule" else ContactGeometry.Cylinder
        return cls(size[0], size[1]), g.R_BG
    if g.kind == "ellipsoid":
        return ContactGeometry.Ellipsoid(size), g.R_BG
    if g.kind == "box":
        return ContactGeometry.Brick(size), g.R_BG
    return ContactGeometry.ConvexMesh(g.vertices), g.R_BG


def _warn_attributes(m, geoms, pairs):
    source = "MJCF contact"
    name = {g.name: g for g in geoms}
    warn_unmodelled(source, "torsional friction (condim 4 or 6)",
                    {f"{p.geom1}/{p.geom2}" for p in pairs if p.condim >= 4}, stacklevel=5)
    warn_unmodelled(source, "rolling friction (condim 6)", {f"{p.geom1}/{p.geom2}" for p in pairs if p.condim >= 6},
                    stacklevel=5)
    warn_unmodelled(source, "contact margin and gap (contact at a distance)",
                    {f"{p.geom1}/{p.geom2}" for p in pairs if p.margin > 0 or p.gap > 0}, stacklevel=5)
    warn_unmodelled(source, "pair solreffriction", {f"{p.geom1}/{p.geom2}" for p in pairs if np.any(p.solreffriction != 0)},
                    stacklevel=5)
    if hasattr(m, "geom_adhesion"):
        warn_unmodelled(source, "geom adhesion", {n for n, g in name.items() if m.geom_adhesion[g.index] != 0}, stacklevel=5)


def add_mjcf_contact(mujoco, m, system, bodies, geom_names, body_names, gravity,
                     transition_velocity: float = TRANSITION_VELOCITY) -> MjcfContact | None:
    """Contact surfaces and the compliant contact subsystem of the compiled model ``m`` (module docstring);
    ``bodies``: MuJoCo body name -> MobilizedBody carrying that body; ``gravity`` (3,) m/s^2. None when the
    model has no contact pairs."""
    geoms, pairs = read_mjcf_contact(mujoco, m, geom_names, body_names)
    if not pairs:
        return None
    by_name = {g.name: g for g in geoms}
    unshaped = sorted(g.name for g in geoms if g.kind not in _SHAPES)
    left_out, kept = [], []
    for p in pairs:
        g1, g2 = by_name[p.geom1], by_name[p.geom2]
        if g1.kind not in _SHAPES or g2.kind not in _SHAPES:
            continue
        rule = find_rule(_SHAPES[g1.kind], _SHAPES[g2.kind])
        if rule is None or bodies[g1.body] is bodies[g2.body]:
            left_out.append(f"{p.geom1}/{p.geom2}")
            continue
        kept.append((p, rule[0].force_model))
    if unshaped:
        warnings.warn(f"MJCF contact: geoms {unshaped} (height field or SDF) have no jaxbody contact shape; their "
                      "pairs are left out", stacklevel=4)
    if left_out:
        warnings.warn(f"MJCF contact: pairs {sorted(left_out)} are left out (no jaxbody tracker for these geom "
                      "kinds, or both geoms on one body)", stacklevel=4)
    _warn_attributes(m, geoms, [p for p, _ in kept])
    g = float(np.linalg.norm(gravity))
    targets = []
    for p, model in kept:
        g1, g2 = by_name[p.geom1], by_name[p.geom2]
        params = compliant_parameters(p.solref, p.solimp, g, p.reference_mass, float(m.opt.timestep),
                                      not (m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_REFSAFE))
        k, c = pair_target(model, params, rounded_radius(g1.kind, g1.size), rounded_radius(g2.kind, g2.size))
        mu = 0.0 if p.condim == 1 else float(p.friction[0])
        targets.append((p.geom1, p.geom2, surface_stiffness(model, k), c, mu, model, k))
    values = surface_values([t[:5] for t in targets])
    inexact = sorted(f"{a}/{b}" for a, b, _, c, mu, model, k in targets
                     if not np.allclose(combined(model, values[a], values[b]), (k, c, mu), rtol=1e-9, atol=0))
    if inexact:
        warnings.warn(f"MJCF contact: pairs {inexact} get Simbody's combination of their geoms' mean materials, "
                      "not their own MuJoCo parameters (a geom's pairs ask for different ones)", stacklevel=4)
    tracker = ContactTrackerSubsystem(system)
    subsystem = CompliantContactSubsystem(system, tracker)
    subsystem.set_transition_velocity(transition_velocity)
    clique = ContactSurface.create_new_contact_clique()
    surfaces, materials = {}, {}
    for name, (stiffness, c, mu) in values.items():
        geom = by_name[name]
        shape, R_BS = _geometry(geom)
        materials[name] = ContactMaterial(stiffness, c, mu, mu)
        surfaces[name] = ContactSurface(shape, materials[name]).join_clique(clique)
        bodies[geom.body].update_body().add_contact_surface(Transform(R_BS, geom.p_BG), surfaces[name])
    for p, _ in kept:
        tracker.include_pair(surfaces[p.geom1], surfaces[p.geom2])
    return MjcfContact(tracker, subsystem, surfaces, [p for p, _ in kept], materials, sorted(left_out))

