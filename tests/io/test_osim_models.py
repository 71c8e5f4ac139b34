"""load_osim on real OpenSim models against OpenSim 4.6 (Simbody 3.9): M, udot under gravity (constraints
enforced, muscles off), every body's X_GB, QErr and UErr at 5 random assembled states, and QErr off the
constraint manifold, to 1e-10.

Models: tests/models/osim (osim-rl 3.0.11's files converted to OpenSim 4.x, see its README); numbers:
tests/io/golden/<model>.npz, written by tests/io/generate_osim_golden.py.

OpenSim 3.x documents (test_opensim3_document): the osim-rl originals and a hand-written 3.x file
(tests/models/osim/opensim3/), read by load_osim through its in-memory upgrade, against OpenSim 4.6's numbers
from the same 3.x files (tests/io/golden/<model>_opensim3.npz) to 1e-10, and against load_osim of OpenSim's
own 4.x copies: the same coordinates, bodies, constraints, defaults and visuals, and M, udot, X_GB, QErr and
UErr equal to 1e-14. OpenSim's q and u order differs
from jaxbody's (OpenSim orders mobilized bodies by its multibody graph); the golden files store each
coordinate's OpenSim q and u index, and ImportedOsim.q_index/u_index give jaxbody's.
"""

import dataclasses
import functools
import pathlib
import re
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
SAME_MODEL_TOL = 1e-14


class Case:
    """One model imported and realized, its golden data and one compiled evaluation of all checked quantities."""

    def __init__(self, path, golden_name, **load_options):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.imported = load_osim(path, **load_options)
        self.warnings = [str(w.message) for w in caught]
        self.model = self.imported.system.realize_topology()
        self.golden = dict(np.load(HERE / "golden" / f"{golden_name}.npz"))
        names = list(self.golden["coordinate_names"])
        assert sorted(names) == sorted(self.imported.coordinates), "the same coordinates as OpenSim"
        jb_u = np.array([self.imported.u_index(n) for n in names])
        self.u_perm = np.empty(len(names), int)       # OpenSim u index -> jaxbody u index
        self.u_perm[self.golden["u_index"]] = jb_u
        self.body_index = np.array([self.imported.bodies[b].index for b in self.golden["body_names"]])
        model, state0 = self.model, self.model.default_state()
        for handle in self.imported.forces_by_name.values():  # the golden numbers are OpenSim's with every force off
            state0 = handle.set_disabled(state0)

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
        """jaxbody (q, u) of OpenSim's state vectors, by coordinate name through ``ImportedOsim.from_opensim``."""
        names = [str(n) for n in self.golden["coordinate_names"]]
        values = {n: q_os[:, i] for n, i in zip(names, self.golden["q_index"])}
        speeds = {n: u_os[:, i] for n, i in zip(names, self.golden["u_index"])}
        return self.imported.from_opensim(values, speeds, model=self.model)


    def in_opensim_order(self, golden):
        """M, udot, R_GB, p_GB, QErr, UErr at ``golden``'s states, in OpenSim's u and body order."""
        out = self.evaluate(*self.to_jaxbody(golden["q"], golden["u"]))
        p = self.u_perm
        return {"M": out["M"][:, p][:, :, p], "udot": out["udot"][:, p], "R_GB": out["R_GB"][:, self.body_index],
                "p_GB": out["p_GB"][:, self.body_index], "qerr": out["qerr"], "uerr": out["uerr"]}


@functools.cache
def cached_case(name: str, layout: str = "4.x") -> Case:
    """The Case of tests/models/osim/<name>.osim ("4.x", numbers golden/<name>.npz) or of the OpenSim 3.x
    document tests/models/osim/opensim3/<name>.osim ("3.x", numbers golden/<name>_opensim3.npz); one per
    process, so each model compiles once."""
    if layout == "3.x":
        return Case(MODELS / "opensim3" / f"{name}.osim", f"{name}_opensim3")
    return Case(MODELS / f"{name}.osim", name if (HERE / "golden" / f"{name}.npz").exists() else f"{name}_opensim3")


@pytest.fixture(scope="module", params=["arm26", "gait9dof18musc", pytest.param("gait14dof22musc", marks=pytest.mark.long), "joints_constraints",
                                        pytest.param("MoBL_ARMS", marks=pytest.mark.long)])
def case(request):
    return cached_case(request.param)


def assert_matches_golden(case, tol):
    g = case.golden
    out = case.in_opensim_order(g)
    for k in range(g["q"].shape[0]):
        for key in ("M", "udot", "R_GB", "p_GB", "qerr", "uerr"):
            assert_close(out[key][k], g[key][k], tol, f"state {k}: {key}")
    q_perturbed, _ = case.to_jaxbody(g["q_perturbed"], g["u"])
    assert_close(case.qerr(q_perturbed), g["qerr_perturbed"], tol, "QErr off the manifold")


def test_matches_opensim(case):
    assert_matches_golden(case, TOL)


def structure(imported):
    """What an import is besides the Model's numbers, comparable between two imports: coordinates (metadata and
    q, u indices), bodies, constraints, visuals, imported and skipped forces (gravity is in udot)."""
    coordinates = [(n, imported.q_index(n), imported.u_index(n), dataclasses.replace(c, body=None))
                   for n, c in imported.coordinate_info.items()]
    constraints = [(n, c.get_num_constraint_equations(), c.is_disabled_by_default()) for n, c in imported.constraints.items()]
    visuals = [(v.body, v.R.tolist(), v.p.tolist(), v.kind, v.size, v.mesh_file, v.color) for v in imported.visuals]
    bodies = [(n, b.index) for n, b in imported.bodies.items()]
    return {"coordinates": coordinates, "bodies": bodies, "constraints": constraints, "visuals": visuals,
            "skipped": imported.skipped, "forces": list(imported.forces_by_name)}


@pytest.mark.parametrize("name", [pytest.param("arm26", marks=pytest.mark.long),  # ~43 s: its ellipsoid paths compile
                                  "gait9dof18musc", pytest.param("upgrade_rules", marks=pytest.mark.long),
                                  pytest.param("gait14dof22musc", marks=pytest.mark.long),
                                  pytest.param("MoBL_ARMS", marks=pytest.mark.long)])
def test_opensim3_document(name):
    """A 3.x document loads with one warning naming its version, matches OpenSim 4.6 reading the same file, and
    is the same Model as OpenSim's own 4.x copy of it."""
    v3, v4 = cached_case(name, "3.x"), cached_case(name)
    version = re.search(r'Version="(\d+)"', (MODELS / "opensim3" / f"{name}.osim").read_text()).group(1)
    assert [w for w in v3.warnings if "upgraded" in w] == [w for w in v3.warnings if f"OpenSim document version {version} upgraded" in w]
    assert len([w for w in v3.warnings if "upgraded" in w]) == 1 and int(version) < 40000
    assert_matches_golden(v3, TOL)
    s3, s4 = structure(v3.imported), structure(v4.imported)
    visuals3, visuals4 = s3.pop("visuals"), s4.pop("visuals")
    assert s3 == s4
    # Geometry with a 3.x transform: OpenSim 4 attaches it to an offset frame's own attached_geometry, which
    # load_osim does not draw; the upgrade puts it in the body's, on that frame (upgrade_rules: a.vtp, b.vtp).
    assert [v for v in visuals3 if v not in visuals4] == [v for v in visuals3 if v[5] in ("a.vtp", "b.vtp")]
    assert all(v in visuals3 for v in visuals4)
    a, b = v3.in_opensim_order(v3.golden), v4.in_opensim_order(v3.golden)
    for key in a:
        assert_close(a[key], b[key], SAME_MODEL_TOL, f"{key}: 3.x document vs OpenSim's 4.x copy")


def test_imported_structure(case):
    """Coordinates, default values, locks and skipped forces as the file says."""
    imp = case.imported
    assert len(imp.bodies) == len(case.golden["body_names"]) + 1  # + ground
    locked = [n for n, c in imp.coordinate_info.items() if c.locked]
    assert [n for n in imp.constraints if n.endswith("/locked")] == [f"{n}/locked" for n in locked]
    enabled = [c for c in imp.constraints.values() if not c.is_disabled_by_default()]
    assert case.golden["qerr"].shape[1] == sum(c.get_num_constraint_equations()[0] for c in enabled)
    assert ("not_enforced" in imp.constraints) == (len(enabled) < len(imp.constraints))
    # one warning naming every skipped force; apart: osim_paths' paths-not-built and osim_contact's pairs left out
    warned = [w for w in case.warnings if " path(s) not built" not in w and "are not evaluated" not in w]
    if imp.skipped:
        assert len(warned) == 1 and f"skipped {len(imp.skipped)} " in warned[0]
        assert all(s in warned[0] for s in imp.skipped)
    else:
        assert warned == []
    state = imp.default_state(case.model, assemble=False)
    for name, info in imp.coordinate_info.items():
        assert float(state.q[imp.q_index(name)]) == info.default_value


DUPLICATE_NAMES = ("gait9dof18musc_20170320", "gait14dof22musc_pros_20180507", "gait14dof22musc_planar_pros_20180507",
                   "gait9dof18musc_pros_20180507")


def test_duplicate_joint_names_give_opensims_body_poses():
    """The fast check of the test below (Position stage only): X_GB at OpenSim's first golden state."""
    name = "gait9dof18musc_20170320"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        imported = load_osim(MODELS / "opensim3" / f"{name}.osim")
    assert any("'back' at line" in str(w.message) and "renamed back_0" in str(w.message) for w in caught)
    g = dict(np.load(HERE / "golden" / f"{name}_opensim3.npz"))
    model = imported.system.realize_topology()
    q, u = imported.from_opensim({str(n): g["q"][0, i] for n, i in zip(g["coordinate_names"], g["q_index"])},
                                 model=model)
    s = model.realize(model.default_state().set_q(q), jb.Stage.Position)
    X = [imported.bodies[str(b)].get_body_transform(s) for b in g["body_names"]]
    assert_close(np.stack([x.R for x in X]), g["R_GB"][0], TOL, "R_GB")
    assert_close(np.stack([x.p for x in X]), g["p_GB"][0], TOL, "p_GB")


@pytest.mark.long    # about 30-45 s each (M and udot of a CustomJoint gait model compile slowly)
@pytest.mark.parametrize("name", DUPLICATE_NAMES)
def test_duplicate_joint_names_are_renamed_as_opensim_does(name):
    """osim-rl 3.x files naming two joints "back": OpenSim 4.6 renames the second "back_0" (and so gives each its
    own offset frames); load_osim does the same, with a warning, and matches OpenSim's M, udot and X_GB."""
    v3 = cached_case(name, "3.x")
    assert any("duplicate names renamed" in w and "renamed back_0" in w for w in v3.warnings)
    assert_matches_golden(v3, TOL)
