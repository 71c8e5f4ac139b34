"""``system.realize_topology()``: freeze a host-side MultibodySystem into an immutable Model.

Host Python only (never traced): reads the builder objects, checks nothing that
the builders have not checked already, and lays the numbers out as Parameters
leaves and the structure as the static Topology and ConstraintSet.
"""

from __future__ import annotations

import dataclasses
import hashlib

import jax.numpy as jnp
import numpy as np

from jaxbody._api.model import Model
from jaxbody._constraints.layout import build_constraint_set
from jaxbody._dynamics.forces import force_control_slices
from jaxbody._dynamics.motion import BoundMotion, Motion
from jaxbody._dynamics.parameters import Parameters
from jaxbody._dynamics.state import SystemSignature
from jaxbody._topology.topology import Topology


def build_model(system):
    """Freeze a MultibodySystem (host Python) into a Model."""
    matter = system.get_matter_subsystem()
    bodies = matter._bodies
    euler = matter.get_use_euler_angles()
    topo = Topology(
        parent=tuple(-1 if b.parent is None else b.parent.index for b in bodies),
        mobilizers=tuple(b.mobilizer for b in bodies),
        q_start=tuple(b.q_start for b in bodies),
        u_start=tuple(b.u_start for b in bodies),
        use_euler_angles=euler,
        body_names=tuple(b.name for b in bodies),
    )
    mp = [b.body.mass_properties for b in bodies]
    f = lambda x: jnp.asarray(np.asarray(x, dtype=float))  # noqa: E731
    params = Parameters(
        mass=f([m.mass for m in mp]),
        com_B=f([m.com for m in mp]),
        inertia_Bo_B=f([m.inertia.matrix for m in mp]),
        R_PF=f([b.X_PF[0] for b in bodies]),
        p_PF=f([b.X_PF[1] for b in bodies]),
        R_BM=f([b.X_BM[0] for b in bodies]),
        p_BM=f([b.X_BM[1] for b in bodies]),
        armature=f(_armature(bodies, topo.nu)),
        mobilizer_params=tuple(
            f(np.stack([bodies[i].params for i in g.bodies]).reshape(len(g.bodies), g.mobilizer.n_params))
            for g in topo.groups
        ),
    )
    constraints, constraint_params = _build_constraints(matter, topo)
    params = dataclasses.replace(params, constraint_params=constraint_params)
    elements, control_names = _build_forces([h for fs in system._force_subsystems for h in fs._elements])
    default_q = np.zeros(topo.nq)
    for b, m in zip(bodies, topo.mobilizers):
        default_q[b.q_start : b.q_start + m.nq_alloc] = m.default_q()
    motions = tuple(BoundMotion(body=b.index, motion=b._motion) for b in bodies if b.has_motion())
    locks = tuple(b.get_locked_by_default_level() for b in bodies)
    default_lock_level = locks if any(level != Motion.NoLevel for level in locks) else ()
    motion_on = tuple(not b.is_motion_disabled_by_default() for b in bodies)
    return Model(
        topology=topo, parameters=params, forces=elements, default_q=f(default_q),
        motions=motions, default_lock_level=default_lock_level, constraints=constraints,
        default_motion_enabled=() if all(motion_on) else motion_on,
        signature=system_signature(matter), control_names=control_names,
        tendon_armatures=_build_tendon_armatures(matter),
    )


def _build_forces(handles):
    """The traced force elements of ``handles`` and the controls' names: each element that reads controls gets
    its ``first_control`` (its controls follow the previous elements', in element order: force_control_slices)."""
    elements = [handle._build() for handle in handles]
    for handle, element in zip(handles, elements):
        if element.num_controls() != handle.num_controls:
            raise AssertionError(f"{handle.name}: the element reads {element.num_controls()} controls, its handle "
                                 f"names {handle.num_controls}")
    elements = [dataclasses.replace(e, first_control=s.start) if e.num_controls() else e
                for e, s in zip(elements, force_control_slices(elements))]
    return tuple(elements), tuple(name for handle in handles for name in handle.control_names)


def _build_tendon_armatures(matter) -> tuple:
    """The matter's tendon armatures (jaxbody._api.tendon_armature), built."""
    return tuple(b.build() for b in matter._tendon_armatures)


def _armature(bodies, nu):
    """(nu,) the bodies' default armature in their u slots."""
    armature = np.zeros(nu)
    for b in bodies:
        armature[b.u_start:b.u_start + b.armature.shape[0]] = b.armature
    return armature


def system_signature(matter) -> SystemSignature:
    """The SystemSignature of a matter subsystem's current structure (bodies, mobilizer types, constraints)."""
    bodies = tuple(
        (b.name, -1 if b.parent is None else b.parent.index, repr(b.mobilizer_prototype), b.q_start, b.u_start)
        for b in matter._bodies
    )
    constraints = tuple(
        (repr(c.ctype), tuple(b.index for b in c.bodies), tuple((m.index, i) for m, i in c.q_select),
         tuple((m.index, i) for m, i in c.u_select))
        for c in matter._constraints
    )
    digest = hashlib.sha1(repr((bodies, constraints)).encode()).hexdigest()
    return SystemSignature(digest, describe_matter(matter))


def describe_matter(matter) -> str:
    """'the system of bodies [Ground, arm (Pin), ...] and 1 constraint', for error messages."""
    names = [b.name if b.parent is None else f"{b.name} ({b.mobilizer_prototype.simbody_name})" for b in matter._bodies]
    if len(names) > 8:
        names = names[:6] + ["...", names[-1]]
    n = len(matter._constraints)
    constraints = f" and {n} constraint{'s' if n != 1 else ''}" if n else ""
    return f"the system of bodies [{', '.join(names)}]{constraints}"


def _build_constraints(matter, topo):
    """The static ConstraintSet and the per-group parameter arrays of the matter's constraints."""
    specs = []
    for c in matter._constraints:
        q_slots = [m.q_start + i for m, i in c.q_select]
        u_slots = [m.u_start + i for m, i in c.u_select]
        specs.append((c.ctype, [b.index for b in c.bodies], q_slots, u_slots, c._ancestor_basis(), not c.disabled_by_default))
    cset = build_constraint_set(specs, topo.parent)
    cons = matter._constraints
    params = tuple(
        jnp.asarray(np.stack([cons[i].params for i in g.constraints]).reshape(len(g.constraints), g.ctype.n_params))
        for g in cset.groups
    )
    return cset, params
