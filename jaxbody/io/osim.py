"""``load_osim(path)``: an OpenSim 4.x ``.osim`` model as jaxbody builder objects, read without OpenSim.

OpenSim 2.x/3.x documents (Version 20101 to 30499) are first upgraded in memory to the 4.x layout by OpenSim
4.6's own rules (jaxbody.io.osim_upgrade), with one warning naming the document version.

What is read: Ground; the BodySet (``mass``, ``mass_center`` in the body frame, ``inertia`` = [Ixx Iyy Izz Ixy
Ixz Iyz] about the mass center in the body frame, converted to Simbody's inertia about the body origin);
PhysicalOffsetFrames; the JointSet (jaxbody.io.osim_joints: Weld, Pin, Slider, Universal, Planar, Gimbal, Ball,
Free and CustomJoint as MobilizedBody.FunctionBased with OpenSim's functions in JAX); the ConstraintSet
(jaxbody.io.osim_constraints); each coordinate's default value and speed, range, clamped, locked and
prescribed flags; ``<gravity>``; attached geometry of Ground and the bodies (as Visual records); the ForceSet
elements jaxbody.io.osim_forces has builders for (``forces_by_name``). Every other force, controller and probe
is listed in ``skipped`` and reported by one ``warnings.warn``.

OpenSim runs Simbody in Euler-angle mode, so the matter subsystem is set to Euler angles (Ball and Free q are
body-fixed X-Y-Z angles, as OpenSim's coordinates). A locked coordinate is held at its default value by a
``jb.Constraint.ConstantCoordinate`` named ``"<coordinate>/locked"`` (OpenSim: a Simbody PrescribedMotion to a
constant, same equation ``q - value``); these come first in ``constraints``, in joint order, then the
ConstraintSet's, which is OpenSim's constraint (QErr) order. Clamped is metadata only; prescribed coordinates
are imported free, with a warning. A clamped coordinate whose default value is outside its range is refused, as
OpenSim refuses it. ``ImportedOsim.default_state`` is initSystem's State: default values and speeds, assembled
(projected onto the constraints); ``from_opensim``/``to_opensim`` convert coordinate values and speeds by name.
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
from jaxbody._math.inertia import Inertia, MassProperties, only_triangle_fails
from jaxbody._mobilizers.function_based import HDOT_FORMULAS
from jaxbody.errors import InvalidArgument, InvalidInertia
from jaxbody.io._frames import up_direction_against
from jaxbody.io.osim_constraints import add_constraint
from jaxbody.io.osim_forces import ForceContext, add_forces
from jaxbody.io.osim_frames import GROUND, FrameRegistry
from jaxbody.io.imported import Coordinate, CoordinateIndex
from jaxbody.io.osim_joints import CoordinateInfo, add_joint, coordinate_elements
from jaxbody.io.osim_names import check_unique_coordinates, rename_duplicates
from jaxbody.io.osim_paths import force_paths
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
_SQRT_EPS = float(np.sqrt(np.finfo(float).eps))

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
    UniformGravity force; visuals: [Visual]; skipped: "Type name" of every force/actuator/controller/probe not
    imported; forces_by_name: OpenSim force name -> its force handle (actuators' controls are named after them);
    paths: force name -> path (a GeometryPath, jaxbody.io.osim_paths, or a FunctionBasedPath,
    jaxbody.io.osim_function_paths) of every force with one.
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
    forces_by_name: dict = dataclasses.field(default_factory=dict)
    disabled_forces: list = dataclasses.field(default_factory=list)
    paths: dict = dataclasses.field(default_factory=dict)

    def _model(self, model):
        return self.system.realize_topology() if model is None else model

    def default_state(self, model=None, assemble: bool = True):
        """The State OpenSim's ``initSystem`` returns: every coordinate at its default value and speed, then
        (``assemble``) the constraints (locks and the ConstraintSet) satisfied by ``model.project`` to 1e-10, the
        assembly OpenSim does (its AssemblySolver keeps the coordinates nearest their defaults; the projection
        takes the weighted least-squares step from them, the same point to first order). model: this system's
        Model (None: ``system.realize_topology()``). Host-side: one projection when the ConstraintSet is not
        empty (locked coordinates already hold at their default values, as in OpenSim, which then projects
        only)."""
        model = self._model(model)
        q, u = self.from_opensim({}, model=model)
        state = model.default_state().set_q(q).set_u(u)
        for name in self.disabled_forces:  # appliesForce false: built, disabled in the State as OpenSim does
            state = self.forces_by_name[name].set_disabled(state)
        if assemble and any(not n.endswith("/locked") for n in self.constraints):  # locks hold at the defaults
            state, _ = model.project(state, accuracy=1e-10)
        return state

    def from_opensim(self, values, speeds=None, model=None):
        """(q, u) of jaxbody from OpenSim coordinate values (rad or m) and speeds by coordinate name: each a
        mapping name -> value (scalars or arrays with the same leading batch shape; a coordinate not named keeps
        its default value or speed) or an array (..., n) in ``coordinate_info`` order. OpenSim's coordinates are
        jaxbody's q and u entries (Euler-angle mode), so this is a scatter: batched, jit/vmap/grad-able.
        model: as in ``default_state``; raises InvalidArgument for an unknown name or a wrong last dimension."""
        names = list(self.coordinate_info)
        base = self._model(model).default_state()
        qi = np.array([self.q_index(n) for n in names], dtype=int)
        ui = np.array([self.u_index(n) for n in names], dtype=int)
        v = self._by_name(values, "values", [self.coordinate_info[n].default_value for n in names])
        w = self._by_name({} if speeds is None else speeds, "speeds",
                          [self.coordinate_info[n].default_speed for n in names])
        batch = jnp.broadcast_shapes(v.shape[:-1], w.shape[:-1])
        q = jnp.broadcast_to(base.q, batch + base.q.shape).at[..., qi].set(v.astype(base.q.dtype))
        u = jnp.broadcast_to(base.u, batch + base.u.shape).at[..., ui].set(w.astype(base.u.dtype))
        return q, u

    def _by_name(self, given, what, defaults):
        names = list(self.coordinate_info)
        if not isinstance(given, dict):
            given = jnp.asarray(given)
            if given.ndim < 1 or given.shape[-1] != len(names):
                raise InvalidArgument(f"from_opensim: {what} must be a mapping by coordinate name or an array "
                                      f"(..., {len(names)}) in coordinate_info order; got shape {given.shape}")
            return given
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise InvalidArgument(f"from_opensim: {what} name unknown coordinates {unknown}; the model has {names}")
        columns = [jnp.asarray(given.get(n, d)) for n, d in zip(names, defaults)]
        batch = jnp.broadcast_shapes(*(c.shape for c in columns))
        return jnp.stack([jnp.broadcast_to(c, batch) for c in columns], -1)

    def to_opensim(self, state):
        """(values, speeds): dicts coordinate name -> OpenSim's value and speed in ``state`` (a State or a batch
        of States: leading dims of q and u kept)."""
        return ({n: state.q[..., self.q_index(n)] for n in self.coordinate_info},
                {n: state.u[..., self.u_index(n)] for n in self.coordinate_info})


def _rigid_body(doc: OsimDocument, element, strict_inertia: bool) -> Body:
    owner = f"Body {element.get('name')!r}"
    mass = numbers(doc, element, "mass", owner, 1)[0]
    com = numbers(doc, element, "mass_center", owner, 3, default=[0, 0, 0])
    inertia = numbers(doc, element, "inertia", owner, 6, default=[0] * 6)
    if mass < 0:
        raise element_error(doc, element, owner, f"negative mass {mass}")
    xx, yy, zz, xy, xz, yz = inertia
    central = [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]
    try:
        return Body.Rigid(MassProperties.from_central_inertia(mass, com, Inertia(*inertia)))
    except (InvalidArgument, InvalidInertia) as e:
        if strict_inertia or not only_triangle_fails(central):
            raise element_error(doc, element, owner, str(e)) from None
    moments = {"xx": xx, "yy": yy, "zz": zz}
    violated = [f"I{a} + I{b} >= I{c} ({moments[a]:g} + {moments[b]:g} < {moments[c]:g})"
                for a, b, c in (("xx", "yy", "zz"), ("xx", "zz", "yy"), ("yy", "zz", "xx"))
                if moments[a] + moments[b] < moments[c]]
    violated = violated[0] if violated else "the triangle inequality of its principal moments"
    warnings.warn(f"load_osim({doc.source}) line {doc.line(element)}: {owner}: its inertia about the mass center "
                  f"violates {violated}, physically impossible but accepted by OpenSim; loaded as written "
                  f"(strict_inertia=True refuses it; jb.check_parameters reports it)", stacklevel=3)
    return Body.Rigid(MassProperties.unchecked_from_central_inertia(mass, com, central))


def _check_clamped(doc: OsimDocument, joint, coords):
    """OpenSim's Coordinate::extendFinalizeFromProperties: a clamped coordinate's default value lies in its range
    (within sqrt(machine epsilon))."""
    for c in coords:
        lo, hi = c.range
        if c.clamped and not lo - _SQRT_EPS < c.default_value < hi + _SQRT_EPS:
            raise element_error(doc, coordinate_elements(joint).get(c.name, joint), f"Coordinate {c.name!r}",
                                f"clamped, but its default_value {c.default_value} is outside its range [{lo}, {hi}] "
                                f"(OpenSim refuses this model too)")


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


def load_osim(path, strict_inertia: bool = False, custom_joint_hdot: str = "exact") -> ImportedOsim:
    """Import an OpenSim model (a file path, or the XML text itself; 4.x, or 2.x/3.x upgraded); see the module
    docstring. A body inertia that violates the triangle inequality (OpenSim accepts it: the Rajagopal models'
    toes) loads as written with a warning naming the body and the inequality; ``strict_inertia=True`` refuses it
    (InvalidArgument naming the body and line). ``custom_joint_hdot``: "exact" (default) gives CustomJoints the
    exact velocity terms, and warns, naming the joint, where OpenSim's differ (rotations coupled to the
    coordinates, e.g. Rajagopal's walker knee); "simbody" uses Simbody 3.9's FunctionBased HDot formula, so that
    udot equals OpenSim's there too (jaxbody._mobilizers.function_based)."""
    if custom_joint_hdot not in HDOT_FORMULAS:
        raise InvalidArgument(f"load_osim: custom_joint_hdot must be one of {HDOT_FORMULAS}, got {custom_joint_hdot!r}")
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
    rigid = {p: _rigid_body(doc, b, strict_inertia) for p, b in body_elements.items()}
    mobods = {GROUND: matter.Ground()}
    coordinates: dict[str, CoordinateInfo] = {}
    constraints = {}
    pending = objects(doc, "JointSet")
    while pending:  # joints in file order, each once its parent body is in the tree
        left = []
        for joint in pending:
            result = add_joint(doc, frames, joint, mobods, rigid, custom_joint_hdot)
            if result is None:
                left.append(joint)
                continue
            body_path, mobod, coords = result
            mobods[body_path] = mobod
            coordinates.update((c.name, c) for c in coords)
            constraints.update((f"{c.name}/locked", _lock(c)) for c in coords if c.locked)
            _check_clamped(doc, joint, coords)
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
    context = ForceContext(doc, frames, matter, forces, mobods, coordinates)
    forces_by_name, disabled, skipped = add_forces(context)
    return ImportedOsim(
        name=doc.root.get("name", ""), system=system, matter=matter, forces=forces, gravity=gravity,
        bodies={p.split("/")[-1]: m for p, m in mobods.items()},
        coordinates={n: Coordinate(c.body, c.q_index, 1, 1) for n, c in coordinates.items()},
        coordinate_info=coordinates,
        constraints=constraints, visuals=visuals, skipped=skipped, forces_by_name=forces_by_name,
        disabled_forces=disabled, paths=force_paths(doc, frames, mobods, coordinates, context.paths),
    )
