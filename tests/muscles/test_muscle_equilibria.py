"""Millard2012EquilibriumMuscle's and DeGrooteFregly2016Muscle's equilibria (OpenSim's
computeInitialFiberEquilibrium) against OpenSim 4.6 on arm26 with three muscles of each class
(generate_equilibrium_golden.py), read by load_osim: per muscle model under vmap, end to end through
``jb.equilibrate_muscles`` and ``MuscleHandle.compute_equilibrium``; DeGroote's ``calcEquilibriumResidual`` and
its "implicit" tendon compliance mode (TRIlat: the normalized tendon force's derivative an input, the residual
an output); derivatives through the implicit function theorem against central differences."""

import json
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close, central_difference
from muscle_golden import GOLDEN

import jaxbody as jb
from jaxbody._dynamics.muscles.degroote2016_equilibrium import (
    degroote2016_equilibrium_normalized_tendon_force,
    degroote2016_equilibrium_residual,
)
from jaxbody._dynamics.muscles.millard2012_equilibrium import millard2012_equilibrium_fiber_length
from jaxbody.errors import InvalidArgument

DATA = json.loads((GOLDEN / "equilibrium_muscles.json").read_text())
CLASSES = {"Millard2012EquilibriumMuscle": ("equilibrium_fiber_length", millard2012_equilibrium_fiber_length),
           "DeGrooteFregly2016Muscle": ("equilibrium_normalized_tendon_force",
                                        degroote2016_equilibrium_normalized_tendon_force)}


@pytest.fixture(scope="module")
def arm():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # arm26's mesh files are not shipped
        imp = jb.io.load_osim(str(GOLDEN / "equilibrium_arm26.osim"))
    return imp, imp.system.realize_topology()


def _parameters(imp, model, name):
    return model.forces[imp.forces_by_name[name].index].parameters


def _rows(imp, model, cls):
    """(stacked parameters, {input: (n,)}, expected (n,), muscle names (n,)) for every (state, muscle of cls)."""
    entries = [(name, r) for s in DATA["states"] for name, r in s["muscles"].items() if r["class"] == cls]
    params = [_parameters(imp, model, name) for name, _ in entries]
    stacked = jax.tree_util.tree_map(lambda *x: jnp.stack(x), *params)
    no_dynamics = np.array([model.forces[imp.forces_by_name[n].index].ignore_activation_dynamics for n, _ in entries])
    activation = np.where(no_dynamics, [r["excitation"] for _, r in entries], [r["activation_state"] for _, r in entries])
    inputs = {k: np.array([r[k] for _, r in entries]) for k in ("length", "lengthening_speed")}
    inputs["activation"] = activation
    field = CLASSES[cls][0]
    expected = np.array([r.get(field, np.nan) for _, r in entries])
    return stacked, inputs, expected, [n for n, _ in entries]


def test_millard_equilibrium_matches_opensim(arm):
    stacked, x, expected, _ = _rows(*arm, "Millard2012EquilibriumMuscle")
    lce = jax.jit(jax.vmap(millard2012_equilibrium_fiber_length))(stacked, x["length"], x["activation"])
    assert np.all(np.isfinite(expected))
    assert_close(lce, expected, 1e-9, "Millard equilibrium fiber length", per_entry=True)


def test_degroote_equilibrium_matches_opensim(arm):
    stacked, x, expected, _ = _rows(*arm, "DeGrooteFregly2016Muscle")
    ntf = jax.jit(jax.vmap(degroote2016_equilibrium_normalized_tendon_force))(
        stacked, x["length"], x["lengthening_speed"], x["activation"])
    assert np.all(np.isfinite(expected))
    assert_close(ntf, expected, 1e-9, "DeGroote equilibrium normalized tendon force", per_entry=True)


def test_degroote_residual_matches_opensim(arm):
    imp, model = arm
    rows = DATA["residuals"]
    stacked = jax.tree_util.tree_map(lambda *x: jnp.stack(x), *[_parameters(imp, model, r["muscle"]) for r in rows])
    args = np.array([r["arguments"] for r in rows]).T
    residual = jax.jit(jax.vmap(degroote2016_equilibrium_residual))(stacked, *args)
    assert_close(residual, [r["residual"] for r in rows], 1e-12, "calcEquilibriumResidual", per_entry=True)


@pytest.mark.parametrize("cls", list(CLASSES))
def test_equilibrium_derivatives_match_central_differences(arm, cls):
    """The equilibrium's directional derivative (implicit function theorem) along a direction that moves the path
    length, the speed, the activation and the tendon slack length at once, against central differences of the
    values OpenSim's iteration returns (1e-5 relative). One jvp compile (the Millard iteration compiles
    slowly)."""
    imp, model = arm
    stacked, x, _, names = _rows(imp, model, cls)
    k = 1
    p = jax.tree_util.tree_map(lambda a: a[k], stacked)
    solve = CLASSES[cls][1]
    millard = cls == "Millard2012EquilibriumMuscle"

    def f(arg):
        y, p = arg
        return solve(p, y[0], y[2]) if millard else solve(p, y[0], y[1], y[2])

    y = jnp.asarray([x["length"][k], x["lengthening_speed"][k], x["activation"][k]])
    dp = jax.tree_util.tree_map(jnp.zeros_like, p)
    dp = type(p)(**{**{n: getattr(dp, n) for n in p.__dataclass_fields__}, "tendon_slack_length": jnp.asarray(0.5)})
    direction = (jnp.asarray([1.0, 0.7, -0.4]), dp)
    ad = jax.jit(lambda a, d: jax.jvp(f, (a,), (d,))[1])((y, p), direction)
    # DeGroote's bisection stops at a 7e-11 wide interval: a wider step keeps that out of the differences
    fd = central_difference(jax.jit(f), (y, p), 1e-7 if millard else 1e-4, direction)
    assert abs(ad) > 1e-3
    assert_close(ad, fd, 1e-5, f"{names[k]}: directional derivative of the equilibrium")


def _batch(imp, model, handles):
    """(q, u, z, c) at every golden state (activations and excitations set) and the default State."""
    base = imp.default_state(model)
    q, u, z, c = [], [], [], []
    for record in DATA["states"]:
        qs, us, zs, cs = (np.array(a) for a in (base.q, base.u, base.z, base.controls))
        for name, (qv, uv) in record["coordinates"].items():
            qs[imp.q_index(name)], us[imp.u_index(name)] = qv, uv
        for name, h in handles.items():
            r = record["muscles"][name]
            if "activation" in h.state_names:
                zs[h.z_slice.start] = r["activation_state"]
            cs[h.control_slice.start] = r["excitation"]
        q.append(qs), u.append(us), z.append(zs), c.append(cs)
    return tuple(jnp.asarray(np.stack(a)) for a in (q, u, z, c)), base


def test_compute_equilibrium_through_the_handle(arm):
    """BRA's (DeGroote, no activation dynamics: its excitation is its activation) handle.compute_equilibrium at
    every golden state (one jit(vmap)) against OpenSim's normalized tendon force after computeEquilibrium."""
    imp, model = arm
    handles = {name: imp.forces_by_name[name] for name in DATA["states"][0]["muscles"]}
    batch, base = _batch(imp, model, handles)
    h = handles["BRA"]

    @jax.jit
    @jax.vmap
    def equilibrate(q, u, z, c):
        s = model.realize(base.set_q(q).set_u(u).set_z(z).set_controls(c), jb.Stage.Velocity)
        return h.compute_equilibrium(s, model).z[h.z_slice]

    expected = [record["muscles"]["BRA"]["equilibrium_normalized_tendon_force"] for record in DATA["states"]]
    assert_close(equilibrate(*batch)[:, -1], expected, 1e-9, "BRA: normalized tendon force", per_entry=True)


@pytest.mark.long
def test_equilibrate_muscles_end_to_end(arm):
    """jb.equilibrate_muscles on the imported model at every golden state (one vmap), and one muscle's
    handle.compute_equilibrium, against OpenSim's fiber states after computeEquilibrium (--long: about 20 s of
    compile here for the two Millard iterations inside a whole-model realize)."""
    imp, model = arm
    handles = {name: imp.forces_by_name[name] for name in DATA["states"][0]["muscles"]}
    batch, base = _batch(imp, model, handles)
    bra = handles["BICshort"]

    @jax.jit
    @jax.vmap
    def equilibrate(q, u, z, c):
        s = base.set_q(q).set_u(u).set_z(z).set_controls(c)
        one = bra.compute_equilibrium(model.realize(s, jb.Stage.Velocity), model)
        return jb.equilibrate_muscles(model, s).z, one.z[bra.z_slice]

    z, bra_z = equilibrate(*batch)
    for name, h in handles.items():
        field = "equilibrium_fiber_length" if "fiber_length" in h.state_names else "equilibrium_normalized_tendon_force"
        expected = [record["muscles"][name][field] for record in DATA["states"]]
        assert_close(z[:, h.z_slice.stop - 1], expected, 1e-9, f"{name}: {field}", per_entry=True)
    assert_close(bra_z[:, -1], z[:, bra.z_slice.stop - 1], 1e-14, "BICshort: handle.compute_equilibrium")


def test_implicit_degroote_matches_opensim(arm):
    """TRIlat in "implicit" mode: with (activation, normalized tendon force) states and controls (excitation,
    implicitderiv_normalized_tendon_force), its mechanics, zdot and residual against OpenSim's; the residual's
    derivatives against central differences."""
    imp, model = arm
    h = imp.forces_by_name["TRIlat"]
    element = model.forces[h.index]
    assert element.implicit and h.control_names == ("TRIlat", "TRIlat/implicitderiv_normalized_tendon_force")
    base = imp.default_state(model)
    rows = DATA["implicit"]
    q, u, z, c = [], [], [], []
    for r in rows:
        qs, us, zs, cs = (np.array(a) for a in (base.q, base.u, base.z, base.controls))
        for name, (qv, uv) in r["coordinates"].items():
            qs[imp.q_index(name)], us[imp.u_index(name)] = qv, uv
        zs[h.z_slice] = [r["activation_state"], r["normalized_tendon_force"]]
        cs[h.control_slice] = [r["excitation"], r["normalized_tendon_force_dot"]]
        q.append(qs), u.append(us), z.append(zs), c.append(cs)
    batch = tuple(jnp.asarray(np.stack(a)) for a in (q, u, z, c))

    @jax.jit
    @jax.vmap
    def evaluate(q, u, z, c):
        s = model.realize(base.set_q(q).set_u(u).set_z(z).set_controls(c), jb.Stage.Velocity)
        info = h.get_muscle_info(s, model)
        return info, element.calc_z_dot(model, s, s.z[h.z_slice]), h.get_equilibrium_residual(s, model)

    info, zdot, residual = evaluate(*batch)
    for field in ("fiber_length", "fiber_velocity", "tendon_force", "active_fiber_force", "passive_fiber_force"):
        assert_close(getattr(info, field), [r[field] for r in rows], 1e-10, f"implicit TRIlat: {field}",
                     per_entry=True)
    expected = np.array([[r["activation_dot"], r["state_normalized_tendon_force_dot"]] for r in rows])
    assert_close(zdot, expected, 1e-10, "implicit TRIlat: zdot", per_entry=True)
    assert_close(residual, [r["residual"] for r in rows], 1e-10, "implicit TRIlat: residual", per_entry=True)

    p, r = element.parameters, rows[0]
    y = jnp.asarray([r["length"], r["lengthening_speed"], r["activation_state"], r["normalized_tendon_force"],
                     r["normalized_tendon_force_dot"]])
    f = jax.jit(lambda y: degroote2016_equilibrium_residual(p, *y))
    assert_close(jax.jacfwd(f)(y), central_difference(f, y, 1e-6), 1e-7, "d residual / d inputs")


def test_bad_tendon_modes_raise_naming_the_muscle(arm, tmp_path):
    imp, model = arm
    with pytest.raises(InvalidArgument, match="muscle 'BRA' has no implicitderiv_normalized_tendon_force"):
        imp.forces_by_name["BRA"].set_normalized_tendon_force_derivative(imp.default_state(model), 1.0)
    text = (GOLDEN / "equilibrium_arm26.osim").read_text()
    edited = tmp_path / "bad_mode.osim"
    edited.write_text(text.replace("<tendon_compliance_dynamics_mode>implicit<", "<tendon_compliance_dynamics_mode>semi<"))
    with pytest.raises(InvalidArgument, match=r"line \d+.*DeGrooteFregly2016Muscle 'TRIlat'.*'explicit' or 'implicit'"):
        jb.io.load_osim(str(edited))
    forces = jb.GeneralForceSubsystem(jb.MultibodySystem())
    with pytest.raises(InvalidArgument, match="muscle 'x': tendon_compliance_dynamics_mode"):
        jb.Force.DeGrooteFregly2016Muscle(forces, "x", imp.paths["BRA"], 100.0, 0.1, 0.2,
                                          tendon_compliance_dynamics_mode="Implicit")


def test_degroote_without_a_root_is_nan(arm):
    """Where the residual has one sign over [0, 5] (OpenSim's solveBisection throws), the equilibrium is NaN."""
    imp, model = arm
    p = _parameters(imp, model, "BRA")
    short = degroote2016_equilibrium_normalized_tendon_force(p, 0.5 * p.tendon_slack_length, 0.0, 0.5)
    fine = degroote2016_equilibrium_normalized_tendon_force(p, p.tendon_slack_length + p.optimal_fiber_length, 0.0, 0.5)
    assert np.isnan(short) and np.isfinite(fine)
