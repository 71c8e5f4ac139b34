"""``load_osim(path)``: an OpenSim 4.x ``.osim`` model as jaxbody builder objects, read without OpenSim.

OpenSim 2.x/3.x documents (Version 20101 to 30499) are first upgraded in memory to the 4.x layout by OpenSim
4.6's own rules (jaxbody.io.osim_upgrade), with one warning naming the document version.

What is read: Ground; the BodySet (``mass``, ``mass_center`` in the body frame, ``inertia`` = [Ixx Iyy Izz Ixy
Ixz Iyz] about the mass center in the body frame, converted to Simbody's inertia about the body origin);
PhysicalOffsetFrames; the JointSet (jaxbody.io.osim_joints: Weld, Pin, Slider, Universal, Planar, Gimbal, Ball,
Free and CustomJoint as MobilizedBody.FunctionBased with OpenSim's functions in JAX); the ConstraintSet
(jaxbody.io.osim_constraints); each coordinate's default value and speed, range, clamped, locked and
prescribed flags; ``<gravity>``; attached geometry of Ground and the bodies (as Visual records). Muscles,
actuators and every other force or controller are listed in ``skipped`` and reported by one ``warnings.warn``.

OpenSim runs Simbody in Euler-angle mode, so the matter subsystem is set to Euler angles (Ball and Free q are
body-fixed X-Y-Z angles, as OpenSim's coordinates). A locked coordinate is held at its default value by a
``jb.Constraint.ConstantCoordinate`` named ``"<coordinate>/locked"`` (OpenSim: a Simbody PrescribedMotion to a
constant, same equation ``q - value``); these come first in ``constraints``, in joint order, then the
ConstraintSet's, which is OpenSim's constraint (QErr) order. Clamped is metadata only; prescribed coordinates
are imported free, with a warning. The default State (``ImportedOsim.default_state``) has the default values
and speeds but, unlike OpenSim's initSystem, is not assembled: call ``system.project`` for that.
"""

from __future__ import annotations

import dataclasses
import warnings

import jax.numpy as jnp
import numpy as np

from jaxbody._api.body import Body
from jaxbody._api.constraint import Constraint
from jaxbody._api.force import Force
from jaxbody._api.system import (
    GeneralForceSubsystem,
    MultibodySystem,
    SimbodyMatterSubsystem,
)
from jaxbody._math.inertia import Inertia, MassProperties
from jaxbody.errors import InvalidArgument, InvalidInertia
from jaxbody.io._frames import up_direction_against
from jaxbody.io.osim_constraints import add_constraint
from jaxbody.io.osim_frames import GROUND, FrameRegistry
from jaxbody.io.imported import Coordinate, CoordinateIndex
from jaxbody.io.osim_joints import CoordinateInfo, add_joint
from jaxbody.io.osim_names import check_unique_coordinates, rename_duplicates
from jaxbody.io.osim_upgrade import upgrade
from jaxbody.io.osim_xml import (
    OsimDocument,
    element_error,
    numbers,
    objects,
    read_document,
    text,
)

#: OpenSim's default gravity (m/s^2).
DEFAULT_GRAVITY = (0.0, -9.80665, 0.0)

GEOMETRY = {"Mesh": "mesh_file", "Sphere": "radius", "Cylinder": "radius", "Brick": "half_lengths",
            "Ellipsoid": "radii", "Cone": "base_radius"}


@dataclasses.dataclass(frozen=True)
class Visual:
    """One attached geometry: ``body`` name ("ground" or a body), its frame in the body (R (3, 3), p (3,) m),
    ``kind`` (Mesh, Sphere, Cylinder, Brick, Ellipsoid, Cone), ``size`` (radius, half-lengths, radii, or the
    mesh's scale factors), ``mesh_file`` (Mesh only, as written in the file) and ``color`` (rgb)."""

    body: str
    R: np.ndarray
    p: np.ndarray
    kind: str
    size: tuple
    mesh_file: str | None
    color: tuple


@dataclasses.dataclass
class ImportedOsim(CoordinateIndex):
    """What load_osim returns; add forces or constraints to ``system`` before ``system.realize_topology()``.

    bodies: OpenSim body name -> MobilizedBody ("ground" -> matter.Ground());
    coordinates: coordinate name -> jaxbody.io.imported.Coordinate (MobilizedBody, q index within it, 1, 1), as
    the URDF and MJCF importers give them (``q_index(name)``, ``u_index(name)``: slots in the State); coordinate_info: name -> CoordinateInfo
    (defaults, range, clamped, locked, prescribed); constraints: name -> jb.Constraint; gravity: the
    UniformGravity force; visuals: [Visual]; skipped: "Type name" of every force/actuator/controller not imported.
    """

    name: str
    system: MultibodySystem
    matter: SimbodyMatterSubsystem
    forces: GeneralForceSubsystem
    gravity: Force
    bodies: dict
    coordinates: dict
    coordinate_info: dict
    constraints: dict
    visuals: list
    skipped: list

    def default_state(self, model):
        """``model.default_state()`` with every coordinate at its default value and speed (not assembled)."""
        state = model.default_state()
        names = list(self.coordinate_info)
        qi = np.array([self.q_index(n) for n in names], dtype=int)
        ui = np.array([self.u_index(n) for n in names], dtype=int)
        q = state.q.at[qi].set(jnp.asarray([self.coordinate_info[n].default_value for n in names], state.q.dtype))
        u = state.u.at[ui].set(jnp.asarray([self.coordinate_info[n].default_speed for n in names], state.u.dtype))
        return state.set_q(q).set_u(u)


def _rigid_body(doc: OsimDocument, element) -> Body:
    owner = f"Body {element.get('name')!r}"
    mass = numbers(doc, element, "mass", owner, 1)[0]
    com = numbers(doc, element, "mass_center", owner, 3, default=[0, 0, 0])
    inertia = numbers(doc, element, "inertia", owner, 6, default=[0] * 6)
    if mass < 0:
        raise element_error(doc, element, owner, f"negative mass {mass}")
    try:
        return Body.Rigid(MassProperties.from_central_inertia(mass, com, Inertia(*inertia)))
    except (InvalidArgument, InvalidInertia) as e:
        raise element_error(doc, element, owner, str(e)) from None


def _lock(c: CoordinateInfo) -> Constraint:
    return Constraint.ConstantCoordinate(c.body, c.q_index, c.default_value, name=f"{c.name}/locked")


def _visuals(doc: OsimDocument, frames: FrameRegistry, element, path: str) -> list[Visual]:
    holder = element.find("attached_geometry")
    out = []
    for geometry in [] if holder is None else list(holder):
        owner = f"{geometry.tag} {geometry.get('name')!r}"
        if geometry.tag not in GEOMETRY:
            continue
        socket = text(doc, geometry, "socket_frame", owner, default="..")
        frame = frames.in_base(frames.resolve(f"{path}/{geometry.get('name')}", socket, geometry, owner), owner)
        mesh = geometry.tag == "Mesh"
        size = numbers(doc, geometry, "scale_factors" if mesh else GEOMETRY[geometry.tag], owner,
                       default=[1, 1, 1] if mesh else None)
        color = geometry.find("Appearance")
        rgb = (1.0, 1.0, 1.0) if color is None else tuple(numbers(doc, color, "color", owner, 3, default=[1, 1, 1]))
        out.append(Visual(frame.base.split("/")[-1], frame.R, frame.p, geometry.tag, tuple(size),
                          text(doc, geometry, "mesh_file", owner) if mesh else None, rgb))
    return out


def load_osim(path) -> ImportedOsim:
    """Import an OpenSim model (a file path, or the XML text itself; 4.x, or 2.x/3.x upgraded); see the module docstring."""
    doc = read_document(path)
    if doc.version < 40000:
        upgrade(doc)
        warnings.warn(f"load_osim({doc.source}): OpenSim document version {doc.version} upgraded in memory to the "
                      "OpenSim 4.x layout by OpenSim 4.6's rules (jaxbody.io.osim_upgrade); saving the model once with "
                      "OpenSim 4 gives the same model and no warning", stacklevel=2)
    rename_duplicates(doc)
    check_unique_coordinates(doc)
    frames = FrameRegistry(doc)
    system = MultibodySystem()
    matter = SimbodyMatterSubsystem(system)
    matter.set_use_euler_angles(True)
    forces = GeneralForceSubsystem(system)
    g = numbers(doc, doc.root, "gravity", "Model", 3, default=DEFAULT_GRAVITY)
    gravity = Force.UniformGravity(forces, matter, g)
    if up_direction_against(g) is not None:  # pictures show the model upright
        system.set_up_direction(up_direction_against(g))
    body_elements = {f"/bodyset/{b.get('name')}": b for b in objects(doc, "BodySet") if b.tag == "Body"}
    rigid = {p: _rigid_body(doc, b) for p, b in body_elements.items()}
    mobods = {GROUND: matter.Ground()}
    coordinates: dict[str, CoordinateInfo] = {}
    constraints = {}
    pending = objects(doc, "JointSet")
    while pending:  # joints in file order, each once its parent body is in the tree
        left = []
        for joint in pending:
            result = add_joint(doc, frames, joint, mobods, rigid)
            if result is None:
                left.append(joint)
                continue
            body_path, mobod, coords = result
            mobods[body_path] = mobod
            coordinates.update((c.name, c) for c in coords)
            constraints.update((f"{c.name}/locked", _lock(c)) for c in coords if c.locked)
        if len(left) == len(pending):
            raise element_error(doc, left[0], f"{left[0].tag} {left[0].get('name')!r}",
                                "its parent frame's body is not connected to ground through joints")
        pending = left
    orphans = [p for p in body_elements if p not in mobods]
    if orphans:
        raise element_error(doc, body_elements[orphans[0]], f"Body {orphans[0]!r}", "no joint connects this body")
    constraints.update((c.get("name"), add_constraint(doc, frames, c, matter, mobods, coordinates))
                       for c in objects(doc, "ConstraintSet"))
    ground = doc.root.find("Ground")
    visuals = [] if ground is None else _visuals(doc, frames, ground, GROUND)
    for p, b in body_elements.items():
        visuals += _visuals(doc, frames, b, p)
    prescribed = [n for n, c in coordinates.items() if c.prescribed]
    if prescribed:
        warnings.warn(f"load_osim({doc.source}): coordinates {prescribed} are prescribed in OpenSim; jaxbody imports "
                      "them free (prescribe them with a jb.Motion)", stacklevel=2)
    skipped = [f"{e.tag} {e.get('name')}" for s in ("ForceSet", "ControllerSet") for e in objects(doc, s)]
    if skipped:
        warnings.warn(f"load_osim({doc.source}): skipped {len(skipped)} force(s)/actuator(s)/controller(s) "
                      f"jaxbody does not import: {', '.join(skipped)}", stacklevel=2)
    return ImportedOsim(
        name=doc.root.get("name", ""), system=system, matter=matter, forces=forces, gravity=gravity,
        bodies={p.split("/")[-1]: m for p, m in mobods.items()},
        coordinates={n: Coordinate(c.body, c.q_index, 1, 1) for n, c in coordinates.items()},
        coordinate_info=coordinates,
        constraints=constraints, visuals=visuals, skipped=skipped,
    )
