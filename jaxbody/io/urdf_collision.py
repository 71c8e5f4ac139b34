"""URDF ``<collision>`` elements -> jaxbody compliant contact surfaces on the body each link was mounted on.

Each ``<collision>`` becomes one ``jb.ContactSurface`` at its ``<origin>`` in the link frame (as Pinocchio's
collision model places it: ``X_BS = X_B,link X_link,origin``, the link frame in the body it was fused into):
box -> Brick (half of ``size``), sphere -> Sphere, cylinder -> Cylinder (``radius``, half of ``length``, along
z), capsule (the common URDF extension) -> Capsule, mesh -> ConvexMesh of the file's vertices' convex hull
(``collision_mesh="convex_hull"``, the default, as MuJoCo and most simulators collide URDF meshes) or
TriangleMesh (``collision_mesh="mesh"``), scaled by ``scale``, read with ``trimesh``. Mesh files are found as
Pinocchio does: ``package://<package>/<path>`` under each of ``package_dirs`` (``<dir>/<package>/<path>``),
other names relative to the URDF file's folder (or as given). A mesh that is not found or cannot be read is
warned about, naming the link and the file, and left out.

All surfaces take one material (``contact_material``, a ``jb.ContactMaterial``; default ``DEFAULT_MATERIAL``)
and, unless ``self_collision=True``, join one contact clique, so the robot touches only surfaces the user adds
(a floor on Ground: ``matter.Ground().update_body().add_contact_surface(X, surface)``), never itself. With
``self_collision=True`` every pair of surfaces on different bodies is tracked except a joint's parent and child
(URDF's adjacent links, which overlap at the joint; Pinocchio's SRDF usually disables them too).
"""

from __future__ import annotations

import dataclasses
import os
import warnings

import numpy as np

from jaxbody._api.compliant_contact import CompliantContactSubsystem, ContactTrackerSubsystem
from jaxbody._api.contact_surface import ContactGeometry, ContactMaterial, ContactSurface
from jaxbody._math.spatial import Transform
from jaxbody.errors import InvalidArgument
from jaxbody.io._xml import Node
from jaxbody.io.urdf_parse import _floats, _origin

#: A rubber-like default: Simbody's stiffness (Pa) of 1e6 with dissipation 1 s/m and friction 0.8 / 0.6.
DEFAULT_MATERIAL = (1e6, 1.0, 0.8, 0.6, 0.0)
#: m/s: the friction transition velocity of the contact subsystem ``load_urdf`` makes.
TRANSITION_VELOCITY = 0.1
COLLISION_MESH_MODES = ("convex_hull", "mesh")


@dataclasses.dataclass
class UrdfContact:
    """What ``load_urdf`` made of ``<collision>``: ``tracker``, ``subsystem`` (CompliantContactSubsystem),
    ``surfaces`` link name -> [ContactSurface] in file order, ``clique`` (the robot's clique; None with
    ``self_collision``), ``material`` (the ContactMaterial all surfaces share), ``left_out`` ["link: file"]."""

    tracker: ContactTrackerSubsystem
    subsystem: CompliantContactSubsystem
    surfaces: dict
    clique: int | None
    material: ContactMaterial
    left_out: list


def _mesh_path(filename: str, base_dir: str | None, package_dirs) -> str | None:
    if filename.startswith("package://"):
        rest = filename[len("package://"):]
        for d in package_dirs:
            if os.path.isfile(os.path.join(d, rest)):
                return os.path.join(d, rest)
        return None
    path = filename[len("file://"):] if filename.startswith("file://") else filename
    if not os.path.isabs(path) and base_dir is not None:
        path = os.path.join(base_dir, path)
    return path if os.path.isfile(path) else None


def _mesh_geometry(shape: Node, link: Node, base_dir, package_dirs, mode, left_out):
    filename = shape.attrib.get("filename", "")
    path = _mesh_path(filename, base_dir, package_dirs)
    if path is None:
        left_out.append(f"{link.attrib['name']}: {filename} (not found)")
        return None
    try:
        import trimesh
        mesh = trimesh.load(path, force="mesh")
    except Exception as e:  # noqa: BLE001 - any reader failure is reported, naming the file
        left_out.append(f"{link.attrib['name']}: {filename} ({type(e).__name__}: {e})")
        return None
    scale = _floats(shape, "scale", 3, np.ones(3), link)
    if mode == "convex_hull":
        return ContactGeometry.ConvexMesh(np.asarray(mesh.convex_hull.vertices, dtype=float) * scale)
    return ContactGeometry.TriangleMesh(np.asarray(mesh.vertices, dtype=float) * scale, np.asarray(mesh.faces))


def _geometry(geometry: Node, link: Node, base_dir, package_dirs, mode, left_out):
    for shape in geometry.children:
        if shape.tag == "box":
            return ContactGeometry.Brick(0.5 * _floats(shape, "size", 3, np.zeros(3), link))
        if shape.tag == "sphere":
            return ContactGeometry.Sphere(_floats(shape, "radius", 1, [0.0], link)[0])
        if shape.tag in ("cylinder", "capsule"):
            r = _floats(shape, "radius", 1, [0.0], link)[0]
            half = 0.5 * _floats(shape, "length", 1, [0.0], link)[0]
            return (ContactGeometry.Cylinder if shape.tag == "cylinder" else ContactGeometry.Capsule)(r, half)
        if shape.tag == "mesh":
            return _mesh_geometry(shape, link, base_dir, package_dirs, mode, left_out)
    raise InvalidArgument(f"URDF {link.where()}: <geometry> (line {geometry.line}) has no box, sphere, cylinder, "
                          f"capsule or mesh")


def add_urdf_collision(system, robot: Node, bodies: dict, host: dict, X_host: dict, joints, material=None,
                       self_collision: bool = False, collision_mesh: str = "convex_hull", base_dir=None,
                       package_dirs=()) -> UrdfContact | None:
    """Contact surfaces of every link's ``<collision>`` (module docstring); None when the file has none.
    ``bodies``: body name -> MobilizedBody; ``host``/``X_host``: each link's body and its frame there."""
    if collision_mesh not in COLLISION_MESH_MODES:
        raise InvalidArgument(f"load_urdf: collision_mesh must be one of {COLLISION_MESH_MODES}, got {collision_mesh!r}")
    if material is None:
        material = ContactMaterial(*DEFAULT_MATERIAL)
    elif not isinstance(material, ContactMaterial):
        raise InvalidArgument(f"load_urdf: contact_material must be a jb.ContactMaterial, got {type(material).__name__}")
    links = [(link, c) for link in robot.findall("link") for c in link.findall("collision")]
    if not links:
        return None
    tracker = ContactTrackerSubsystem(system)
    subsystem = CompliantContactSubsystem(system, tracker)
    subsystem.set_transition_velocity(TRANSITION_VELOCITY)
    clique = None if self_collision else ContactSurface.create_new_contact_clique()
    surfaces: dict = {}
    left_out: list = []
    for link, collision in links:
        name = link.attrib["name"]
        geometry = collision.find("geometry")
        if geometry is None:
            raise InvalidArgument(f"URDF {link.where()}: <collision> (line {collision.line}) has no <geometry>")
        shape = _geometry(geometry, link, base_dir, package_dirs, collision_mesh, left_out)
        if shape is None:
            continue
        R_h, p_h = X_host[name]
        R, p = _origin(collision, link)
        surface = ContactSurface(shape, material)
        if clique is not None:
            surface.join_clique(clique)
        bodies[host[name]].update_body().add_contact_surface(Transform(R_h @ R, R_h @ p + p_h), surface)
        surfaces.setdefault(name, []).append(surface)
    if self_collision:  # a joint's parent and child links overlap at the joint: never paired
        for j in joints:
            for a in surfaces.get(j.parent, []):
                for b in surfaces.get(j.child, []):
                    if host[j.parent] != host[j.child]:
                        tracker.exclude_pair(a, b)
    if left_out:
        warnings.warn(f"URDF: collision meshes left out (no contact surface): {left_out}", stacklevel=3)
    return UrdfContact(tracker, subsystem, surfaces, clique, material, left_out)
