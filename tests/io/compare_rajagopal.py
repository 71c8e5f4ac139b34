"""A check to run by hand (needs OpenSim 4.6 and a Rajagopal-family model file, which the repository does not ship:
opensim-org/opensim-models states no licence): the model's multibody dynamics in jaxbody against OpenSim, and
the velocity-dependent forces of both against the Lagrangian route built from the mass matrix.

    python3 tests/io/compare_rajagopal.py path/to/Rajagopal2016.osim

The ForceSet is emptied (muscles, actuators and contact are not the question here), then at one random state
within the coordinate ranges, with gravity off and every coordinate unlocked:

* M from ``load_osim`` vs OpenSim's ``calcM``;
* C(q, u), the residual of ``calcResidualForceIgnoringConstraints`` at udot = 0 with no applied forces, from
  jaxbody and from OpenSim, each against the Lagrangian route C = Mdot u - d(u^T M u / 2)/dq (every coordinate
  of these models has qdot = u), with M(q) jaxbody's (equal to OpenSim's to round-off) differentiated by JAX.

Measured 2026-11-28 on Rajagopal2016.osim (opensim-models, 4.5 format): M equal to 1.1e-14; jaxbody's C equal to
the Lagrangian route to 1e-14; OpenSim's C differs from it by up to 3.8e-3 (C up to 15.7), largest on the pelvis,
hips and knees. The cause (isolated by the third line this script prints): Simbody 3.9's FunctionBased HDot
(MobilizedBodyImpl.h, buildHdot) takes the angular velocities of the first one and two rotation frames from the
first one and two mobilities' u (for the one-coordinate walker knee: the whole joint's angular velocity), not
from the rotation angles' rates, so OpenSim's HDot is not the time derivative of its H wherever rotations are
coupled to the coordinates; the knee's tibia gets an angular bias off by thetadot2 thetadot3 (W2 x W1).
OpenSim's function derivatives are not the cause: SimmSpline's calcDerivative orders 1 and 2 agree with central
differences of calcValue and of order 1 to 5e-12 on the knee's splines. With Simbody's formula
(``load_osim(..., custom_joint_hdot="simbody")``) jaxbody's C equals OpenSim's to 5e-15, and udot (5 random assembled states,
tests/io/generate_osim_golden.py's step 2, all forces off) to 1.4e-11 against 3.7e-3 with jaxbody's exact HDot.
This is not documented OpenSim behaviour, so jaxbody keeps the exact HDot by default and load_osim warns, naming
each such CustomJoint (jaxbody.io.osim_joints); tests/io/test_osim_rajagopal_family.py checks all of this on a hand-written
Rajagopal-family file.
"""

from __future__ import annotations

import pathlib
import re
import sys
import tempfile
import warnings

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

import jaxbody as jb  # noqa: E402


def without_forces(path: str) -> str:
    """The model file's text with an empty ForceSet (written to a temporary file; its path)."""
    text = pathlib.Path(path).read_text()
    text = re.sub(r"<ForceSet[^>]*>.*?</ForceSet>", '<ForceSet name="forceset"><objects /><groups /></ForceSet>',
                  text, count=1, flags=re.S)
    out = pathlib.Path(tempfile.mkdtemp()) / pathlib.Path(path).name
    out.write_text(text)
    return str(out)


def jaxbody_terms(path, seed=3, hdot="exact"):
    """(imported, q, u, M, C from jaxbody, C by the Lagrangian route), gravity off; ``hdot``: load_osim's
    ``custom_joint_hdot``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imported = jb.io.load_osim(path, custom_joint_hdot=hdot)
    model = imported.system.realize_topology()
    state0 = model.default_state()
    rng = np.random.default_rng(seed)
    q = np.asarray(state0.q).copy()
    for name, info in imported.coordinate_info.items():
        low, high = info.range
        q[imported.q_index(name)] = rng.uniform(max(low, -1.0), min(high, 1.0))
    q, u = jnp.asarray(q), jnp.asarray(rng.normal(0.0, 0.5, state0.u.shape))
    nb = model.topology.nbodies

    def mass_matrix(qq):
        return model.calc_m(model.realize(state0.set_q(qq), jb.Stage.Position))

    def residual(uu):  # gravity cancels in the difference with u = 0
        s = model.realize(state0.set_q(q).set_u(uu), jb.Stage.Velocity)
        return model.calc_residual_force_ignoring_constraints(s, jnp.zeros_like(uu), jnp.zeros((nb, 2, 3)),
                                                              jnp.zeros_like(uu))

    c_jaxbody = residual(u) - residual(jnp.zeros_like(u))
    c_lagrange = jax.jvp(mass_matrix, (q,), (u,))[1] @ u - jax.grad(lambda qq: 0.5 * u @ mass_matrix(qq) @ u)(q)
    return imported, q, u, mass_matrix(q), c_jaxbody, c_lagrange


def opensim_terms(path, imported, q, u):
    """OpenSim's M and C at jaxbody's (q, u), in jaxbody's u order, gravity off, coordinates unlocked."""
    import opensim as osim
    model = osim.Model(path)
    model.setGravity(osim.Vec3(0, 0, 0))
    state = model.initSystem()
    coordinates = list(model.getCoordinateSet())
    for c in coordinates:
        c.setLocked(state, False)
        c.setValue(state, float(q[imported.q_index(c.getName())]), False)
        c.setSpeedValue(state, float(u[imported.u_index(c.getName())]))
    model.realizeVelocity(state)
    matter = model.getMatterSubsystem()
    order = []  # OpenSim's u index of each jaxbody u
    for c in coordinates:
        probe = osim.State(state)
        probe.setU(osim.Vector(probe.getNU(), 0.0))
        c.setSpeedValue(probe, 1.0)
        order.append((imported.u_index(c.getName()), int(np.flatnonzero([probe.getU().get(i) for i in range(probe.getNU())])[0])))
    perm = np.array([os_index for _, os_index in sorted(order)])
    M = osim.Matrix()
    matter.calcM(state, M)
    M = np.array([[M.get(i, j) for j in range(M.ncol())] for i in range(M.nrow())])[np.ix_(perm, perm)]
    residual = osim.Vector()
    nu = state.getNU()
    no_body_forces = osim.VectorOfSpatialVec(model.getBodySet().getSize() + 1,
                                             osim.SpatialVec(osim.Vec3(0, 0, 0), osim.Vec3(0, 0, 0)))
    matter.calcResidualForceIgnoringConstraints(state, osim.Vector(nu, 0.0), no_body_forces, osim.Vector(nu, 0.0),
                                                residual)
    return M, np.array([residual.get(i) for i in range(nu)])[perm]


def main(path):
    stripped = without_forces(path)
    imported, q, u, M, c_jaxbody, c_lagrange = jaxbody_terms(stripped)
    M_os, c_os = opensim_terms(stripped, imported, q, u)
    names = {imported.u_index(n): n for n in imported.coordinate_info}
    print(f"M: max |jaxbody - OpenSim| {np.max(np.abs(np.asarray(M) - M_os)):.2e} (max |M| {np.max(np.abs(M_os)):.3g})")
    print(f"C: max |jaxbody - Lagrangian| {np.max(np.abs(np.asarray(c_jaxbody - c_lagrange))):.2e}, "
          f"max |OpenSim - Lagrangian| {np.max(np.abs(c_os - np.asarray(c_lagrange))):.2e} "
          f"(max |C| {np.max(np.abs(np.asarray(c_lagrange))):.3g})")
    worst = np.argsort(-np.abs(c_os - np.asarray(c_lagrange)))[:6]
    print("largest OpenSim differences:", [(names[int(i)], float(c_os[i] - c_lagrange[i])) for i in worst])
    _, _, _, _, c_simbody, _ = jaxbody_terms(stripped, hdot="simbody")
    print(f"C with Simbody's FunctionBased HDot: max |jaxbody - OpenSim| {np.max(np.abs(np.asarray(c_simbody) - c_os)):.2e}")


if __name__ == "__main__":
    main(sys.argv[1])
