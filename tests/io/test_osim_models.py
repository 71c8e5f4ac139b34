"""load_osim on real OpenSim models against OpenSim 4.6 (Simbody 3.9): M, udot under gravity (constraints
enforced, muscles off), every body's X_GB, QErr and UErr at 5 random assembled states, and QErr off the
constraint manifold, to 1e-10.

Models: tests/models/osim (osim-rl 3.0.11's files converted to OpenSim 4.x, see its README); numbers:
tests/io/golden/<model>.npz, written by tests/io/generate_osim_golden.py. OpenSim's q and u order differs
from jaxbody's (OpenSim orders mobilized bodies by its multibody graph); the golden files store each
coordinate's OpenSim q and u index, and ImportedOsim.q_index/u_index give jaxbody's.
"""

import pathlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from helpers import assert_close
from jaxbody.io import load_osim

HERE = pathlib.Path(__file__).parent
MODELS = HERE.parent / "models" / "osim"
TOL = 1e-10


class Case:
    """One model imported and realized, its golden data and one compiled evaluation of all checked quantities."""

    def __init__(self, name):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.imported = load_osim(MODELS / f"{name}.osim")
        self.warnings = [str(w.message) for w in caught]
        self.model = self.imported.system.realize_topology()
        self.golden = dict(np.load(HERE / "golden" / f"{name}.npz"))
        names = list(self.golden["coordinate_names"])
        assert sorted(names) == sorted(self.imported.coordinates), "the same coordinates as OpenSim"
        jb_q = np.array([self.imported.q_index(n) for n in names])
        jb_u = np.array([self.imported.u_index(n) for n in names])
        self.q_map = (jb_q, self.golden["q_index"])   # jaxbody q[jb_q] = OpenSim q[q_index]
        self.u_perm = np.empty(len(names), int)       # OpenSim u index -> jaxbody u index
        self.u_perm[self.golden["u_index"]] = jb_u
        self.body_index = np.array([self.imported.bodies[b].index for b in self.golden["body_names"]])
        model, state0 = self.model, self.model.default_state()

        # Simbody's QErr and UErr hold the enabled constraints' rows only (jaxbody keeps disabled rows as zeros).
        enabled = [c for c in self.imported.constraints.values() if not c.is_disabled_by_default()]

        def errors(s, which):
            rows = [getattr(c, f"get_{which}_errors_as_vector")(s) for c in enabled]
            return jnp.concatenate(rows) if rows else jnp.zeros(0)

        def evaluate(q, u):
            s = model.realize(state0.set_q(q).set_u(u), jb.Stage.Acceleration)
            return {"M": model.calc_m(s), "udot": s.acceleration.udot, "R_GB": s.position.R_GB, "p_GB": s.position.p_GB,
                    "qerr": errors(s, "position"), "uerr": errors(s, "velocity")}

        self.evaluate = jax.jit(jax.vmap(evaluate))
        self.qerr = jax.jit(jax.vmap(lambda q: errors(model.realize(state0.set_q(q), jb.Stage.Position), "position")))

    def to_jaxbody(self, q_os, u_os):
        n = q_os.shape[0]
        q = np.zeros((n, self.model.default_state().q.size))
        q[:, self.q_map[0]] = q_os[:, self.q_map[1]]
        u = np.zeros((n, self.model.default_state().u.size))
        u[:, self.u_perm] = u_os
        return jnp.asarray(q), jnp.asarray(u)


@pytest.fixture(scope="module", params=["arm26", "gait9dof18musc", pytest.param("gait14dof22musc", marks=pytest.mark.long), "joints_constraints",
                                        pytest.param("MoBL_ARMS", marks=pytest.mark.long)])
def case(request):
    return Case(request.param)


def test_matches_opensim(case):
    g = case.golden
    out = case.evaluate(*case.to_jaxbody(g["q"], g["u"]))
    p = case.u_perm
    for k in range(g["q"].shape[0]):
        assert_close(out["M"][k][np.ix_(p, p)], g["M"][k], TOL, f"state {k}: M")
        assert_close(out["udot"][k][p], g["udot"][k], TOL, f"state {k}: udot")
        assert_close(out["R_GB"][k][case.body_index], g["R_GB"][k], TOL, f"state {k}: R_GB")
        assert_close(out["p_GB"][k][case.body_index], g["p_GB"][k], TOL, f"state {k}: p_GB")
        assert_close(out["qerr"][k], g["qerr"][k], TOL, f"state {k}: QErr")
        assert_close(out["uerr"][k], g["uerr"][k], TOL, f"state {k}: UErr")
    q_perturbed, _ = case.to_jaxbody(g["q_perturbed"], g["u"])
    assert_close(case.qerr(q_perturbed), g["qerr_perturbed"], TOL, "QErr off the manifold")


def test_imported_structure(case):
    """Coordinates, default values, locks and skipped forces as the file says."""
    imp = case.imported
    assert len(imp.bodies) == len(case.golden["body_names"]) + 1  # + ground
    locked = [n for n, c in imp.coordinate_info.items() if c.locked]
    assert [n for n in imp.constraints if n.endswith("/locked")] == [f"{n}/locked" for n in locked]
    enabled = [c for c in imp.constraints.values() if not c.is_disabled_by_default()]
    assert case.golden["qerr"].shape[1] == sum(c.get_num_constraint_equations()[0] for c in enabled)
    assert ("not_enforced" in imp.constraints) == (len(enabled) < len(imp.constraints))
    if imp.skipped:  # one warning naming every skipped force
        assert len(case.warnings) == 1 and f"skipped {len(imp.skipped)} " in case.warnings[0]
        assert all(s in case.warnings[0] for s in imp.skipped)
    else:
        assert case.warnings == []
    state = imp.default_state(case.model)
    for name, info in imp.coordinate_info.items():
        assert float(state.q[imp.q_index(name)]) == info.default_value
