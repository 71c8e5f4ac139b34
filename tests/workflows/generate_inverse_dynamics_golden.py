"""Regenerate OpenSim 4.6's inverse dynamics of the gait cycle in examples/opensim_inverse_dynamics.py.

    pip install -e ".[golden]"        # opensim 4.6 (Simbody 3.9)
    PYTHONPATH=. python3 tests/workflows/generate_inverse_dynamics_golden.py

Model: tests/models/osim/gait14dof22musc.osim, read by OpenSim itself. Every force in its ForceSet (the
muscles) stops applying force, leaving gravity, as jaxbody's importer does. The coordinate trajectory is the
example's ``coordinate_trajectory`` fed with OpenSim's own coordinate metadata (default value, range, default
locked), at N_FRAMES times over one cycle; u = qdot and udot = qddot (every joint is a Pin or CustomJoint).
The State's Q and U are set directly (locked coordinates at their default value; nothing assembled) and
``InverseDynamicsSolver.solve(state, udot)`` gives the generalized forces (Simbody's
calcResidualForceIgnoringConstraints with the system's applied forces at Dynamics stage).

Writes tests/workflows/golden/gait14dof22musc_inverse_dynamics.npz: times, q, u, udot, tau in OpenSim's q and u
order, the coordinate names and each coordinate's OpenSim q and u index.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import opensim as osim

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent / "io")]  # tests/ and tests/io/
from generate_osim_golden import coordinate_slots, vector  # noqa: E402
from script_runner import load_example  # noqa: E402

example = load_example("opensim_inverse_dynamics")


def main():
    model = osim.Model(str(example.MODEL_FILE))
    state = model.initSystem()
    for force in model.getForceSet():
        force.setAppliesForce(state, False)
    coords = list(model.getCoordinateSet())
    names = [c.getName() for c in coords]
    q_index, u_index = coordinate_slots(model, state)
    times = np.linspace(0.0, example.CYCLE, example.N_FRAMES, endpoint=False)
    n = len(times)
    q, u, udot = (np.zeros((n, state.getNQ())), np.zeros((n, state.getNU())), np.zeros((n, state.getNU())))
    for name, c, qi, ui in zip(names, coords, q_index, u_index):
        rank = sorted(names).index(name)
        q[:, qi], u[:, ui], udot[:, ui] = example.coordinate_trajectory(
            rank, c.getDefaultValue(), c.getRangeMin(), c.getRangeMax(), c.getDefaultLocked(), times)
    solver = osim.InverseDynamicsSolver(model)
    tau = []
    for k, t in enumerate(times):
        state.setTime(float(t))
        state.setQ(osim.Vector(q[k].tolist()))
        state.setU(osim.Vector(u[k].tolist()))
        tau.append(vector(solver.solve(state, osim.Vector(udot[k].tolist()))))
    out = HERE / "golden" / "gait14dof22musc_inverse_dynamics.npz"
    out.parent.mkdir(exist_ok=True)
    np.savez(out, times=times, q=q, u=u, udot=udot, tau=np.array(tau), coordinate_names=np.array(names),
             q_index=np.array(q_index), u_index=np.array(u_index), gravity=vector(model.getGravity()),
             opensim_version=np.array(osim.__version__))
    print(f"{out.name}: {n} frames, nq={state.getNQ()} nu={state.getNU()}, max |tau| = {np.abs(tau).max():.3g}")


if __name__ == "__main__":
    main()
