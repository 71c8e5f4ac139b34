"""OpenSim contact: the ContactGeometrySet and the four contact forces, as OpenSim 4.6 builds them in Simbody.

Geometry: the ContactGeometrySet as jaxbody.io.osim_contact_geometry reads it (``ForceContext.contact_geometry``,
read once per import). A half-space is Simbody's: material at x > 0 of its frame, outward normal -x.

Forces (``BUILDERS``, entries of jaxbody.io.osim_forces' ForceSet table; checked against OpenSim 4.6's body
forces and potential energy in tests/io/test_io_contact_osim.py):

* ``HuntCrossleyForce`` -> ``jb.HuntCrossleyForce``: every geometry of every ContactParameters joins one
  contact set with that entry's stiffness, dissipation and friction (Simbody's setBodyParameters), and every
  sphere/half-space pair on two different bodies is evaluated, with the element's ``transition_velocity``.
  Not evaluated, each warned naming the geometries: sphere/sphere and ellipsoid pairs (Simbody gives them
  Hunt-Crossley forces when they overlap; jaxbody's HuntCrossleyForce has sphere/half-space pairs only).
  Mesh pairs give no Hunt-Crossley force in Simbody either (they are not point contacts); they are warned.
  Deviation (jaxbody.\\_dynamics.contact.hunt_crossley): Simbody stops summing at the first pair whose
  dissipative force is negative (a fast separation); jaxbody drops that pair alone.
* ``SmoothSphereHalfSpaceForce`` -> ``jb.SmoothSphereHalfSpaceForce`` with its nine parameters and sockets
  ``sphere`` (a ContactSphere: its center in the base body) and ``half_space`` (a ContactHalfSpace).
* ``ExponentialContactForce`` -> ``jb.ExponentialSpringForce`` on the ``contact_plane_transform`` (X_GP, in
  Ground: 3 body-fixed X-Y-Z angles then the position) and the element's Station (``parent_frame`` socket,
  ``location``), with ``exponential_shape_parameters`` (d0, d1, d2) and the other parameters by name. The
  anchor point and sliding state are jaxbody's continuous ones (see jaxbody.\\_dynamics.contact.exponential_spring).
* ``ElasticFoundationForce`` -> ``jb.ElasticFoundationForce``: ContactMeshes (files read by trimesh: as written,
  beside the .osim file, or in its Geometry folder) with their ContactParameters, spheres and half-spaces of
  the same set; a mesh file not found, or no mesh, leaves the element out (listed in load_osim's ``skipped``
  with the reason), as is a HuntCrossleyForce without a sphere/half-space pair. Not checked against OpenSim
  here (jaxbody._dynamics.contact.elastic_foundation is, in tests/contact).
  ``appliesForce`` false: built, and disabled in ``ImportedOsim.default_state`` (the table's rule).

Each bad reference (a geometry or frame that is not in the file, a sphere socket that names a half-space)
raises InvalidArgument naming the element and its line.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from jaxbody._api.contact_force import HuntCrossleyForce, SmoothSphereHalfSpaceForce
from jaxbody._api.elastic_foundation_force import ElasticFoundationForce
from jaxbody._api.exponential_spring_force import ExponentialSpringForce, ExponentialSpringParameters
from jaxbody._math.spatial import Transform
from jaxbody.io.osim_force_context import Unsupported
from jaxbody.io.osim_frames import rotation_xyz
from jaxbody.io.osim_contact_geometry import ContactGeometryRecord, geometry_record
from jaxbody.io.osim_xml import element_error, numbers, text


#: a ContactParameters' material properties, in Simbody's order (0 when absent)
MATERIAL = ("stiffness", "dissipation", "static_friction", "dynamic_friction", "viscous_friction")


def _members(doc, element, owner, geometry) -> list:
    """[(geometry record, its material values in MATERIAL order)] over the force's ContactParameters entries
    (``<HuntCrossleyForce::ContactParameters>`` or ``<ElasticFoundationForce::ContactParameters>``)."""
    members = []
    for params in element.iter(f"{element.tag}::ContactParameters"):
        values = [numbers(doc, params, f, owner, 1, default=[0.0])[0] for f in MATERIAL]
        members += [(geometry_record(doc, params, owner, geometry, reference), values)
                    for reference in text(doc, params, "geometry", owner, default="").split()]
    return members


def _hunt_crossley(doc, element, owner, geometry, forces, mobods):
    members = _members(doc, element, owner, geometry)
    kinds = lambda a, b: {a.kind, b.kind}  # noqa: E731
    pairs = [(a, b) for i, (a, _) in enumerate(members) for b, _ in members[i + 1:] if a.base != b.base]
    unevaluated = sorted(f"{a.name}/{b.name}" for a, b in pairs
                         if kinds(a, b) not in ({"ContactSphere", "ContactHalfSpace"}, {"ContactHalfSpace"}))
    if unevaluated:
        warnings.warn(f"load_osim({doc.source}): {owner}: the pairs {unevaluated} are not evaluated (jaxbody's "
                      "HuntCrossleyForce has sphere/half-space pairs only; Simbody applies no Hunt-Crossley force to "
                      "mesh pairs and does to overlapping sphere/sphere and ellipsoid pairs)", stacklevel=5)
    if not any(kinds(a, b) == {"ContactSphere", "ContactHalfSpace"} for a, b in pairs):
        raise Unsupported("no sphere/half-space pair on two bodies")
    handle = HuntCrossleyForce(forces, numbers(doc, element, "transition_velocity", owner, 1, default=[0.001])[0])
    for g, values in members:
        if g.kind == "ContactSphere":
            handle.add_sphere(mobods[g.base], float(g.size[0]), g.p, *values)
        elif g.kind == "ContactHalfSpace":
            handle.add_half_space(mobods[g.base], Transform(g.R, g.p), *values)
    return handle


def _sphere_and_half_space(doc, element, owner, geometry):
    sphere = geometry_record(doc, element, owner, geometry, text(doc, element, "socket_sphere", owner))
    half_space = geometry_record(doc, element, owner, geometry, text(doc, element, "socket_half_space", owner))
    if sphere.kind != "ContactSphere" or half_space.kind != "ContactHalfSpace":
        raise element_error(doc, element, owner, f"socket_sphere must name a ContactSphere and socket_half_space a "
                            f"ContactHalfSpace, got {sphere.kind} {sphere.name!r} and {half_space.kind} "
                            f"{half_space.name!r}")
    return sphere, half_space


def _smooth_sphere_half_space(doc, element, owner, geometry, forces, mobods):
    sphere, half_space = _sphere_and_half_space(doc, element, owner, geometry)
    defaults = {"stiffness": 1.0, "dissipation": 0.0, "static_friction": 0.0, "dynamic_friction": 0.0,
                "viscous_friction": 0.0, "transition_velocity": 0.01, "constant_contact_force": 1e-5,
                "hertz_smoothing": 300.0, "hunt_crossley_smoothing": 50.0}
    values = {k: numbers(doc, element, k, owner, 1, default=[d])[0] for k, d in defaults.items()}
    handle = SmoothSphereHalfSpaceForce(forces, **values)
    handle.add_contact(mobods[sphere.base], sphere.p, float(sphere.size[0]), mobods[half_space.base],
                       Transform(half_space.R, half_space.p))
    return handle


def _exponential(doc, element, owner, geometry, forces, mobods, frames):
    X = numbers(doc, element, "contact_plane_transform", owner, 6, default=[0.0] * 6)
    station = element.find("Station")
    if station is None:
        raise element_error(doc, element, owner, "no <Station> (the point that touches the plane)")
    socket = text(doc, station, "socket_parent_frame", owner)
    frame = frames.in_base(frames.resolve(f"/forceset/{element.get('name')}/{station.get('name')}", socket,
                                          station, owner), owner)
    location = frame.p + frame.R @ np.asarray(numbers(doc, station, "location", owner, 3, default=[0, 0, 0]))
    defaults = ExponentialSpringParameters()
    field = lambda tag, default: numbers(doc, element, tag, owner, 1, default=[default])[0]  # noqa: E731
    params = ExponentialSpringParameters(
        shape=tuple(numbers(doc, element, "exponential_shape_parameters", owner, 3, default=list(defaults.shape))),
        normal_viscosity=field("normal_viscosity", defaults.normal_viscosity),
        max_normal_force=field("max_normal_force", defaults.max_normal_force),
        friction_elasticity=field("friction_elasticity", defaults.friction_elasticity),
        friction_viscosity=field("friction_viscosity", defaults.friction_viscosity),
        settle_velocity=field("settle_velocity", defaults.settle_velocity),
        initial_mu_static=field("initial_mu_static", defaults.initial_mu_static),
        initial_mu_kinetic=field("initial_mu_kinetic", defaults.initial_mu_kinetic))
    return ExponentialSpringForce(forces, Transform(rotation_xyz(X[:3]), np.asarray(X[3:])), mobods[frame.base],
                                  location, params)


def _builder(build):
    """A ForceSet-table builder (jaxbody.io.osim_forces: ``builder(context, element) -> handle``) of ``build``."""
    def builder(context, element):
        owner, geometry = context.owner(element), context.contact_geometry
        extra = (context.frames,) if element.tag == "ExponentialContactForce" else ()
        return build(context.doc, element, owner, geometry, context.forces, context.mobods, *extra)
    return builder


def _mesh_file(doc, g: ContactGeometryRecord) -> str:
    """The ContactMesh's file: as written, else beside the .osim file or in its Geometry folder (OpenSim's search)."""
    folder = os.path.dirname(os.path.abspath(doc.source)) if os.path.isfile(doc.source) else os.getcwd()
    for path in (g.mesh_file, os.path.join(folder, g.mesh_file), os.path.join(folder, "Geometry", g.mesh_file)):
        if os.path.isfile(path):
            return path
    raise Unsupported(f"ContactMesh {g.name!r}: mesh file {g.mesh_file!r} not found")


def _elastic_foundation(doc, element, owner, geometry, forces, mobods):
    members = _members(doc, element, owner, geometry)
    if not any(g.kind == "ContactMesh" for g, _ in members):
        raise Unsupported("no ContactMesh")
    ellipsoids = sorted(g.name for g, _ in members if g.kind == "ContactEllipsoid")
    if ellipsoids:
        warnings.warn(f"load_osim({doc.source}): {owner}: ellipsoids {ellipsoids} are not evaluated (jaxbody's "
                      "ElasticFoundationForce has meshes, spheres and half-spaces)", stacklevel=5)
    handle = ElasticFoundationForce(forces, numbers(doc, element, "transition_velocity", owner, 1, default=[0.01])[0])
    for g, values in members:
        if g.kind == "ContactMesh":
            handle.add_mesh_file(mobods[g.base], _mesh_file(doc, g), Transform(g.R, g.p), **dict(zip(MATERIAL, values)))
        elif g.kind == "ContactSphere":
            handle.add_sphere(mobods[g.base], float(g.size[0]), g.p)
        elif g.kind == "ContactHalfSpace":
            handle.add_half_space(mobods[g.base], Transform(g.R, g.p))
    return handle


#: OpenSim contact force tag -> ForceSet-table builder (merged into jaxbody.io.osim_forces.FORCE_BUILDERS)
BUILDERS = {"HuntCrossleyForce": _builder(_hunt_crossley), "SmoothSphereHalfSpaceForce": _builder(_smooth_sphere_half_space),
            "ExponentialContactForce": _builder(_exponential), "ElasticFoundationForce": _builder(_elastic_foundation)}
