"""Constraints: operator identities on a system with every constraint type, exact derivatives, per-state
enabling under vmap, a four-bar simulation (drift, energy), gradients, equivalences and build errors.

Simbody agreement number for number is in test_golden_constraints.py; here every type is checked against
independent formulations (catalogue section 7): G by forward vs reverse differentiation, G^T lambda vs the
constraint forces, P and Pq N, G M^-1 G^T vs explicit matrices, G udot + bias = 0 after forward dynamics.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from constraint_systems import fourbar_state, parallelogram_fourbar, zoo
from helpers import assert_close, assert_grad_matches_fd
from systems import random_state


def zoo_summary(model, state, x):
    """Every constraint operator at one state (x: a random u-like vector)."""
    r = model.realize(state)
    G = model.calc_g(r)
    lam = model.get_constraint_multipliers(r)
    F_c, f_c = model.find_constraint_forces(r)
    Minv = model.calc_m_inv(r)
    F = model.get_gravity_body_forces(r)
    udot, _ = model.calc_acceleration(r, r.mobility_forces, F)
    P = model.calc_p(r)
    N = jax.vmap(lambda e: model.calc_q_dot(r, e), out_axes=1)(jnp.eye(model.get_num_u()))
    return r, {
        "G": G, "Gx": model.multiply_by_g(r, x), "GT": model.calc_g_transpose(r),
        "GTlam": model.multiply_by_g_transpose(r, lam), "JTF+f": model.multiply_by_system_jacobian_transpose(r, F_c) + f_c,
        "PV": model.calc_pv(r), "P": P, "PqN": model.calc_pq(r) @ N,
        "GMinvGT": model.calc_projected_m_inv(r), "GMinvGT_explicit": G @ Minv @ G.T,
        "udot_err": model.get_udot_err(r), "udot": r.acceleration.udot, "udot_calc": udot,
        "aerr_x": model.calc_constraint_acceleration_errors(r, x),
        "bias": model.calc_bias_for_acceleration_constraints(r), "bias_g": model.calc_bias_for_multiply_by_g(r),
        "pverr_u0": model.calc_constraint_velocity_errors(r, jnp.zeros_like(x)),
        "residual": model.calc_residual_force(r, r.mobility_forces, F, r.acceleration.udot, lam),
        "power": model.calc_constraint_power(r), "lam": lam, "Gu": model.multiply_by_g(r, r.u),
        "perr": model.get_q_err(r)[: model.constraints.mp], "verr": model.get_u_err(r),
        "perr_direct": model.calc_constraint_position_errors(r), "verr_direct": model.calc_constraint_velocity_errors(r, r.u),
    }


_zoo_summary = jax.jit(zoo_summary)


@functools.lru_cache(maxsize=None)
def zoo_results(seed=3):
    model, cons, _ = zoo()
    state = random_state(model, seed).set_time(0.4)
    x = jax.random.normal(jax.random.PRNGKey(seed), (model.get_num_u(),))
    realized, summary = _zoo_summary(model, state, x)
    return model, cons, state, jax.tree_util.tree_map(np.asarray, summary), x, realized


@pytest.mark.long  # CI budget (2026-11-29, second CI run: 26 min on a slower-running machine): 61 s; every constraint type is realized, projected and checked in CI by tests/constraints/test_constraint_geometry.py
def test_zoo_has_every_constraint_type():
    model, cons, _ = zoo()
    names = {g.ctype.simbody_name for g in model.constraints.groups}
    expected = {"Rod", "Ball", "Weld", "PointInPlane", "PointOnLine", "ConstantAngle", "ConstantOrientation",
                "NoSlip1D", "ConstantCoordinate", "ConstantSpeed", "ConstantAcceleration", "CoordinateCoupler",
                "SpeedCoupler", "PrescribedMotion", "SphereOnPlaneContact", "SphereOnSphereContact",
                "LineOnLineContact", "PointOnPlaneContact", "Custom"}
    assert names == expected
    assert model.get_num_constraint_equations() == (model.constraints.mp, model.constraints.mv, model.constraints.ma)
    assert model.constraints.m == 39 and np.linalg.matrix_rank(zoo_results()[3]["G"]) == 39


def test_g_forward_and_reverse_agree():
    model, _, _, r, x, _ = zoo_results()
    assert_close(r["Gx"], r["G"] @ np.asarray(x), 1e-12, "G x (forward mode) vs calc_g (reverse mode) x")
    assert_close(r["GT"], r["G"].T, 0, "calc_g_transpose")
    assert_close(r["aerr_x"], r["G"] @ np.asarray(x) + r["bias"], 1e-12, "aerr(udot) = G udot + bias")


def test_constraint_forces_are_g_transpose_lambda():
    _, _, _, r, _, _ = zoo_results()
    assert_close(r["JTF+f"], r["GTlam"], 1e-11, "J^T F_c + f_c = G^T lambda")


def test_p_rows_of_g_and_pq():
    model, _, _, r, _, _ = zoo_results()
    mp, mv = model.constraints.mp, model.constraints.mv
    assert_close(r["PV"], r["G"][: mp + mv], 1e-12, "velocity-level [P; V] = first rows of G")
    assert_close(r["P"], r["G"][:mp], 1e-12, "calc_p")
    assert_close(r["PqN"], r["P"], 1e-12, "Pq N = P")
    assert_close(r["bias_g"][:mp], r["pverr_u0"][:mp], 0, "multiply-by-G bias, holonomic rows: pverr(u=0)")
    assert_close(r["bias_g"][mp:], r["bias"][mp:], 0, "multiply-by-G bias, other rows")


def test_projected_inverse_mass_matrix():
    _, _, _, r, _, _ = zoo_results()
    assert_close(r["GMinvGT"], r["GMinvGT_explicit"], 1e-11, "G M^-1 G^T (O(n) operator vs explicit)")


def test_forward_dynamics_satisfies_constraints():
    _, _, _, r, _, _ = zoo_results()
    assert_close(r["udot_err"], np.zeros_like(r["udot_err"]), 1e-10, "G udot + bias after forward dynamics")
    assert_close(r["residual"], np.zeros_like(r["residual"]), 1e-10, "residual with multipliers")
    assert_close(r["udot_calc"], r["udot"], 1e-10, "calc_acceleration vs realize")
    assert_close(r["power"], -r["lam"] @ r["Gu"], 1e-12, "constraint power")
    assert_close(r["perr"], r["perr_direct"], 1e-13, "realized position errors")
    assert_close(r["verr"], r["verr_direct"], 1e-13, "realized velocity errors")


def test_per_constraint_api():
    model, cons, state, r, _, realized = zoo_results()
    total = 0.0
    for name, c in cons.items():
        p, v, a = model.constraints.rows_of(c.index)
        rows = np.concatenate([p, v, a])
        assert_close(c.get_multipliers_as_vector(realized), r["lam"][rows], 0, f"{name} multipliers")
        assert_close(c.get_position_errors_as_vector(realized), r["perr"][p], 0, f"{name} perr")
        assert c.get_num_constraint_equations() == (len(p), len(v), len(a))
        assert c.get_ancestor_mobilized_body().index in [b.index for b in c.get_subtree()]
        total += float(c.calc_power(realized))
    assert_close(total, r["power"], 1e-10, "sum of per-constraint power")
    rod = cons["rod"]
    assert_close(rod.calc_position_constraint_matrix_p(realized, model), r["P"][model.constraints.rows_of(rod.index)[0]], 1e-12, "rod P")


# Rows whose Simbody velocity (acceleration) equations are the exact time derivative of the position
# (velocity) equations at every state. Ball rows, Weld's translation rows, NoSlip1D and the rolling rows of
# SphereOnPlane/SphereOnSphere are exact only on the constraint manifold (Simbody's formulas).
EXACT_POSITION_DERIVATIVE = ["rod", "point_in_plane", "point_on_line", "constant_angle", "constant_orientation",
                             "constant_coordinate", "coordinate_coupler", "prescribed_motion", "sphere_on_plane",
                             "sphere_on_sphere", "line_on_line", "point_on_plane", "custom"]
EXACT_VELOCITY_DERIVATIVE = EXACT_POSITION_DERIVATIVE + ["constant_speed", "speed_coupler"]
HOLONOMIC_ROWS_ONLY = {"sphere_on_plane", "sphere_on_sphere"}  # their rolling rows use Simbody's frame rates


def test_error_levels_are_time_derivatives():
    model, cons, state, r, _, realized = zoo_results()
    qdot, udot = realized.velocity.qdot, realized.acceleration.udot

    def perr(q, t):
        return model.calc_constraint_position_errors(state.set_q(q).set_time(t))

    def verr(q, u, t):
        s = model.realize(state.set_q(q).set_u(u).set_time(t), jb.Stage.Position)
        return model.calc_constraint_velocity_errors(s, u)

    dperr = jax.jit(lambda: jax.jvp(perr, (state.q, state.t), (qdot, jnp.ones(())))[1])()
    dverr = jax.jit(lambda: jax.jvp(verr, (state.q, state.u, state.t), (qdot, udot, jnp.ones(())))[1])()
    aerr = np.asarray(realized.acceleration.acceleration_errors)
    for name in EXACT_POSITION_DERIVATIVE:
        p, _, _ = model.constraints.rows_of(cons[name].index)
        assert_close(np.asarray(r["verr"])[p], np.asarray(dperr)[p], 1e-10, f"{name}: pverr = d/dt perr")
    for name in EXACT_VELOCITY_DERIVATIVE:
        p, v, _ = model.constraints.rows_of(cons[name].index)
        rows = p if name in HOLONOMIC_ROWS_ONLY else np.concatenate([p, v])
        assert_close(aerr[rows], np.asarray(dverr)[rows], 1e-9, f"{name}: aerr = d/dt verr")
    # Ball: Simbody's pverr is d/dt perr - w_AB1 x perr (C is body 1's point at S, not its station P); here
    # body 1 is the Ancestor itself (w_AB1 = 0), so the derivative is exact.
    ball = cons["ball"]
    assert ball.get_ancestor_mobilized_body() is ball.bodies[0]
    p, _, _ = model.constraints.rows_of(ball.index)
    assert_close(np.asarray(r["verr"])[p], np.asarray(dperr)[p], 1e-10, "ball: pverr = d/dt perr when body 1 is A")


@pytest.mark.long  # CI budget (2026-11-29, second CI run: 26 min on a slower-running machine): 22 s
def test_disabled_constraints_per_state_under_vmap():
    model, cons, state, _, _, _ = zoo_results()
    n = model.get_num_constraints()
    masks = jax.random.bernoulli(jax.random.PRNGKey(0), 0.5, (6, n)).at[0].set(False).at[1].set(True)
    traces = []

    def run(s, mask):
        traces.append(1)
        r = model.realize(s.set_constraint_enabled(mask))
        return r.acceleration.udot, model.get_constraint_multipliers(r), model.get_udot_err(r)

    batched = jax.jit(jax.vmap(run, in_axes=(None, 0)))
    udot, lam, err = batched(state, masks)
    single = jax.jit(run)
    tree_udot, _ = jax.jit(lambda s: model.calc_acceleration_ignoring_constraints(
        model.realize(s, jb.Stage.Velocity), s.mobility_forces, model.get_gravity_body_forces(model.realize(s, jb.Stage.Position))))(state)
    assert_close(udot[0], tree_udot, 1e-12, "all constraints disabled = tree dynamics")
    rc = model.constraints.row_constraint_array
    for i in range(masks.shape[0]):
        u_i, lam_i, err_i = single(state, masks[i])
        assert_close(udot[i], u_i, 1e-10, f"lane {i} udot")
        off = ~np.asarray(masks[i])[rc]
        assert np.all(np.asarray(lam[i])[off] == 0) and np.all(np.asarray(err[i])[off] == 0)
        assert_close(err[i], np.zeros(model.constraints.m), 1e-9, f"lane {i} acceleration errors")
    assert len(traces) == 2  # one trace for the batch, one for the single-state function
    c = cons["rod"]
    s2 = c.disable(state)
    assert bool(c.is_disabled(s2)) and not bool(c.is_disabled(c.enable(s2)))


# -- four-bar: simulation, batches, gradients --------------------------------------------------------------


def fourbar_energy(model, state):
    return model.calc_energy(model.realize(state, jb.Stage.Dynamics))


def test_fourbar_rk4_drift_and_energy():
    model, ball, a, L = parallelogram_fourbar()
    s0 = fourbar_state(model, -np.pi / 2 + 1.0, 0.3)
    r0 = model.realize(s0)
    assert_close(model.get_q_err(r0), np.zeros(3), 1e-14, "assembled four-bar perr")
    assert_close(model.get_u_err(r0), np.zeros(3), 1e-14, "assembled four-bar verr")
    dt, steps = 1e-3, 2000

    @jax.jit
    def simulate(s):
        def step(s, _):
            s = jb.step_rk4(model, s, dt)
            r = model.realize(s)
            return s, (jnp.max(jnp.abs(model.get_q_err(r))), jnp.max(jnp.abs(model.get_u_err(r))),
                       fourbar_energy(model, s), model.calc_constraint_power(r))
        return jax.lax.scan(step, s, None, length=steps)

    final, (perr, verr, energy, power) = simulate(s0)
    assert float(perr.max()) < 1e-6 and float(verr.max()) < 1e-6, (float(perr.max()), float(verr.max()))
    e0 = float(fourbar_energy(model, s0))
    work = np.concatenate([[0.0], np.cumsum(0.5 * dt * (np.asarray(power)[1:] + np.asarray(power)[:-1]))])
    drift = np.abs(np.asarray(energy) - e0 - work)
    assert drift.max() < 1e-6 * max(1.0, abs(e0)), drift.max()
    assert float(np.abs(np.asarray(power)).max()) < 1e-6  # workless constraint on the manifold
    assert abs(float(final.q[0]) - float(s0.q[0])) > 0.1  # it actually moved


def test_fourbar_vmap_4096_with_mixed_enabling():
    model, ball, _, _ = parallelogram_fourbar()
    key = jax.random.PRNGKey(1)
    theta = jax.random.uniform(key, (4096,), minval=-2.5, maxval=-0.6)
    omega = jax.random.normal(jax.random.PRNGKey(2), (4096,))
    enabled = (jnp.arange(4096) % 2 == 0)[:, None]

    def run(th, om, en):
        s = fourbar_state(model, th, om).set_constraint_enabled(en)
        r = model.realize(s)
        return r.acceleration.udot, model.get_udot_err(r)

    udot, err = jax.jit(jax.vmap(run))(theta, omega, enabled)
    assert np.all(np.isfinite(np.asarray(udot)))
    assert_close(err[::2], np.zeros((2048, 3)), 1e-9, "enabled lanes satisfy G udot + b = 0")
    single = jax.jit(run)
    for i in (0, 1, 2, 4095):
        assert_close(udot[i], single(theta[i], omega[i], enabled[i])[0], 1e-10, f"lane {i}")


def test_fourbar_gradients_match_finite_differences():
    model, ball, a, L = parallelogram_fourbar()
    s0 = fourbar_state(model, -1.0, 0.4)
    cp = model.parameters.constraint_params

    def loss(q, u, station, mass):
        params = jb.replace_parameters(model, constraint_params=(cp[0].at[0, :3].set(station),),
                                       mass=model.parameters.mass.at[2].set(mass))
        r = params.realize(s0.set_q(q).set_u(u))
        return jnp.sum(jnp.sin(r.acceleration.udot)) + jnp.sum(params.get_constraint_multipliers(r) ** 2) * 0.01

    args = (s0.q, s0.u, cp[0][0, :3], model.parameters.mass[2])
    grads = jax.jit(jax.grad(loss, argnums=(0, 1, 2, 3)))(*args)
    f = jax.jit(loss)
    h = 1e-6
    for i, (x, g) in enumerate(zip(args, grads)):
        f_i = lambda xi, i=i: f(*args[:i], xi, *args[i + 1:])  # noqa: E731
        assert_grad_matches_fd(f_i, np.asarray(x, float), h, 1e-6, f"gradient w.r.t. argument {i}", grad=g)


# -- equivalences --------------------------------------------------------------------------------------------


def _double_pendulum(extra):
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
    mp = jb.MassProperties.from_central_inertia(1.0, [0.5, 0, 0], jb.Inertia(0.01, 0.1, 0.1))
    b1 = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform())
    b2 = jb.MobilizedBody.Pin(b1, jb.Transform([1.0, 0, 0]), jb.Body.Rigid(mp), jb.Transform())
    extra(matter, b1, b2)
    return system.realize_topology()


def _motion(model, q, u):
    r = model.realize(model.default_state().set_q(jnp.asarray(q)).set_u(jnp.asarray(u)))
    return np.asarray(r.acceleration.udot), np.asarray(model.multiply_by_g_transpose(r, model.get_constraint_multipliers(r)))


@pytest.mark.parametrize("pair", ["coupler_vs_constant_coordinate", "speed_coupler_vs_constant_speed",
                                  "prescribed_vs_constant_coordinate"])
def test_coupler_equivalences(pair):
    C = jb.Constraint
    if pair == "coupler_vs_constant_coordinate":
        a = _double_pendulum(lambda m, b1, b2: C.ConstantCoordinate(b2, 0, 0.4))
        b = _double_pendulum(lambda m, b1, b2: C.CoordinateCoupler(m, lambda x, p: x[0] - p[0], [b2], [0], params=[0.4]))
        q = [0.3, 0.4]
        u = [0.5, 0.0]
    elif pair == "speed_coupler_vs_constant_speed":
        a = _double_pendulum(lambda m, b1, b2: C.ConstantSpeed(b2, 0, 0.7))
        b = _double_pendulum(lambda m, b1, b2: C.SpeedCoupler(m, lambda u, q, p: u[0] - p[0], [b2], [0], params=[0.7]))
        q, u = [0.3, -0.2], [0.5, 0.7]
    else:
        a = _double_pendulum(lambda m, b1, b2: C.ConstantCoordinate(b2, 0, 0.4))
        b = _double_pendulum(lambda m, b1, b2: C.PrescribedMotion(m, lambda t, p: p[0] + 0 * t, b2, 0, params=[0.4]))
        q, u = [0.3, 0.4], [0.5, 0.0]
    ua, fa = _motion(a, q, u)
    ub, fb = _motion(b, q, u)
    assert_close(ua, ub, 1e-12, f"{pair}: udot")
    assert_close(fa, fb, 1e-12, f"{pair}: constraint generalized forces G^T lambda")


def test_constant_orientation_equals_linear_coordinate_couplers_on_a_gimbal():
    """A Gimbal body held at constant orientation relative to Ground = its three angles held constant."""
    def build(extra):
        system = jb.MultibodySystem()
        matter = jb.SimbodyMatterSubsystem(system)
        forces = jb.GeneralForceSubsystem(system)
        jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
        mp = jb.MassProperties.from_central_inertia(1.3, [0.2, 0.1, 0], jb.Inertia(0.1, 0.2, 0.15))
        g = jb.MobilizedBody.Gimbal(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform())
        jb.MobilizedBody.Pin(g, jb.Transform([0.3, 0, 0]), jb.Body.Rigid(mp), jb.Transform())
        extra(matter, g)
        return system.realize_topology()

    q0 = np.array([0.2, -0.3, 0.4])
    R = np.asarray(jb._math.spatial.rotation_from_body_fixed_xyz(jnp.asarray(q0)))
    a = build(lambda m, g: jb.Constraint.ConstantOrientation(m.Ground(), jb.Rotation(R), g, None))
    b = build(lambda m, g: [jb.Constraint.CoordinateCoupler(m, lambda x, p: x[0] - p[0], [g], [i], params=[q0[i]])
                            for i in range(3)])
    q = np.concatenate([q0, [0.7]])
    ua, _ = _motion(a, q, [0, 0, 0, 1.5])
    ub, _ = _motion(b, q, [0, 0, 0, 1.5])
    assert_close(ua, ub, 1e-10, "udot")
    assert np.allclose(ua[:3], 0, atol=1e-10)


def test_weld_mobilizer_equals_free_plus_weld_constraint():
    X_PF = jb.Transform(jb.Rotation(np.asarray(jb._math.spatial.rotation_from_body_fixed_xyz(jnp.array([0.3, -0.2, 0.5])))),
                        [0.2, -0.4, 0.1])
    X_BM = jb.Transform([0.1, 0.2, -0.3])
    mp = jb.MassProperties.from_central_inertia(1.1, [0.2, 0.1, -0.1], jb.Inertia(0.1, 0.2, 0.15))

    def build(welded):
        system = jb.MultibodySystem()
        matter = jb.SimbodyMatterSubsystem(system)
        forces = jb.GeneralForceSubsystem(system)
        jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
        p = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform())
        if welded:
            b = jb.MobilizedBody.Weld(p, X_PF, jb.Body.Rigid(mp), X_BM)
        else:
            b = jb.MobilizedBody.Free(p, X_PF, jb.Body.Rigid(mp), X_BM)
            jb.Constraint.Weld(p, X_PF, b, X_BM)
        jb.MobilizedBody.Pin(b, jb.Transform([0.5, 0, 0]), jb.Body.Rigid(mp), jb.Transform())
        return system.realize_topology()

    weld, free = build(True), build(False)
    q_w, u_w = jnp.array([0.4, -0.2]), jnp.array([0.8, 1.1])
    q_f = jnp.array([0.4, 1.0, 0, 0, 0, 0, 0, 0, -0.2])  # Free at identity (quaternion) = assembled
    u_f = jnp.array([0.8, 0, 0, 0, 0, 0, 0, 1.1])
    rw = weld.realize(weld.default_state().set_q(q_w).set_u(u_w))
    rf = free.realize(free.default_state().set_q(q_f).set_u(u_f))
    assert_close(rf.position.p_GB[np.array([1, 3])], rw.position.p_GB[np.array([1, 3])], 1e-13, "X_GB")
    assert_close(rf.acceleration.A_GB[np.array([1, 2, 3])], rw.acceleration.A_GB[np.array([1, 2, 3])], 1e-10, "A_GB")
    assert_close(rf.acceleration.udot[np.array([0, 7])], rw.acceleration.udot, 1e-10, "udot of the remaining pins")


# -- build errors ----------------------------------------------------------------------------------------


def test_build_errors():
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    b1 = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(), jb.Transform())
    b2 = jb.MobilizedBody.Pin(b1, jb.Transform([1, 0, 0]), jb.Body.Rigid(), jb.Transform())
    C = jb.Constraint
    with pytest.raises(jb.InvalidArgument, match="length must be positive"):
        C.Rod(b1, [0, 0, 0], b2, [0, 0, 0], -1.0)
    with pytest.raises(jb.InvalidArgument, match="nonzero"):
        C.PointInPlane(b1, [0, 0, 0], 0.0, b2, [0, 0, 0])
    with pytest.raises(jb.InvalidArgument, match="3-vector"):
        C.Ball(b1, [0, 0], b2, [0, 0, 0])
    with pytest.raises(jb.InvalidArgument, match="must differ"):
        C.NoSlip1D(matter.Ground(), [0, 0, 0], [1, 0, 0], b1, b1)
    with pytest.raises(jb.InvalidArgument, match="q index"):
        C.ConstantCoordinate(b1, 3, 0.0)
    with pytest.raises(jb.InvalidArgument, match="scalar"):
        C.CoordinateCoupler(matter, lambda x, p: x, [b1, b2], [0, 0])
    with pytest.raises(jb.InvalidArgument, match="at least one"):
        C.Custom(matter, bodies=[b1])
    with pytest.raises(jb.InvalidArgument, match="MobilizedBody"):
        C.Rod("b1", [0, 0, 0], b2, [0, 0, 0], 1.0)
    C.Rod(b1, b2, 1.0)
    system.realize_topology()
    with pytest.raises(jb.TopologyFrozen):
        C.Rod(b1, b2, 1.0)


def test_cantilever_free_beam_equals_translation_gimbal_and_couplers():
    """Simbody's TestMobilizedBody: CantileverFreeBeam = Translation + Gimbal with three CoordinateCouplers
    (t = ((2/3) L g1, -(2/3) L g0, L - (4/15) L (g0^2 + g1^2)))."""
    L = 0.7
    mp = jb.MassProperties.from_central_inertia(1.2, [0.1, 0.2, 0.3], jb.Inertia(0.1, 0.2, 0.15, 0.01, 0.0, 0.02))
    X_PF = jb.Transform(jb.Rotation(np.asarray(jb._math.spatial.rotation_from_body_fixed_xyz(jnp.array([0.2, 0.1, -0.3])))),
                        [0.1, 0.0, 0.2])
    tip = [
        lambda x, p: x[0] - p[0] * 2 / 3 * x[4],
        lambda x, p: x[1] + p[0] * 2 / 3 * x[3],
        lambda x, p: x[2] - p[0] + p[0] * 4 / 15 * (x[3] ** 2 + x[4] ** 2),
    ]

    def build(beam):
        system = jb.MultibodySystem()
        matter = jb.SimbodyMatterSubsystem(system)
        forces = jb.GeneralForceSubsystem(system)
        jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
        if beam:
            jb.MobilizedBody.CantileverFreeBeam(matter.Ground(), X_PF, jb.Body.Rigid(mp), jb.Transform(), length=L)
        else:
            t = jb.MobilizedBody.Translation(matter.Ground(), X_PF, jb.Body.Massless(), jb.Transform())
            g = jb.MobilizedBody.Gimbal(t, jb.Transform(), jb.Body.Rigid(mp), jb.Transform())
            for f in tip:
                jb.Constraint.CoordinateCoupler(matter, f, [t, t, t, g, g], [0, 1, 2, 0, 1], params=[L])
        return system.realize_topology()

    beam, chain = build(True), build(False)
    g, gd = jnp.array([0.3, -0.4, 0.5]), jnp.array([0.7, 0.2, -0.9])
    t = jnp.array([2 / 3 * L * g[1], -2 / 3 * L * g[0], L - 4 / 15 * L * (g[0] ** 2 + g[1] ** 2)])
    td = jnp.array([2 / 3 * L * gd[1], -2 / 3 * L * gd[0], -8 / 15 * L * (g[0] * gd[0] + g[1] * gd[1])])
    rb = beam.realize(beam.default_state().set_q(g).set_u(gd))
    rc = chain.realize(chain.default_state().set_q(jnp.concatenate([t, g])).set_u(jnp.concatenate([td, gd])))
    assert_close(chain.get_q_err(rc), np.zeros(3), 1e-14, "assembled couplers")
    assert_close(chain.get_u_err(rc), np.zeros(3), 1e-14, "coupler velocities")
    assert_close(rc.position.R_GB[2], rb.position.R_GB[1], 1e-14, "R_GB")
    assert_close(rc.position.p_GB[2], rb.position.p_GB[1], 1e-14, "p_GB")
    assert_close(rc.velocity.V_GB[2], rb.velocity.V_GB[1], 1e-13, "V_GB")
    assert_close(rc.acceleration.udot[3:], rb.acceleration.udot, 1e-10, "udot")
    assert_close(rc.acceleration.A_GB[2], rb.acceleration.A_GB[1], 1e-10, "A_GB")


def test_constraints_with_a_prescribed_crank():
    """Known udots and multipliers together: a four-bar whose crank follows Motion.Sinusoid.

    The constraint holds (G udot + b = 0) with the crank's udot as prescribed, and
    ``M udot + tau + G^T lambda = f - c`` holds on every mobility (tau nonzero only on the crank).
    """
    a, L = 0.6, 1.0
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
    G = matter.Ground()
    mp = jb.MassProperties.from_central_inertia(1.0, [0.3, 0, 0], jb.Inertia(0.01, 0.05, 0.05))
    crank = jb.MobilizedBody.Pin(G, jb.Transform(), jb.Body.Rigid(mp), jb.Transform())
    coupler = jb.MobilizedBody.Pin(crank, jb.Transform([a, 0, 0]), jb.Body.Rigid(mp), jb.Transform())
    rocker = jb.MobilizedBody.Pin(G, jb.Transform([L, 0, 0]), jb.Body.Rigid(mp), jb.Transform())
    jb.Constraint.Ball(coupler, [L, 0, 0], rocker, [a, 0, 0])
    crank.adopt_motion(jb.Motion.Sinusoid(jb.Motion.Position, 0.3, 2.0, -1.0))
    model = system.realize_topology()
    t = 0.4
    theta = 0.3 * np.sin(2.0 * t - 1.0)
    s = model.prescribe(model.default_state().set_time(t).set_q(jnp.array([theta, -theta, theta])))
    s = s.set_u(jnp.array([s.u[0], -s.u[0], s.u[0]]))
    r = jax.jit(lambda st: model.realize(st))(s)
    udot = r.acceleration.udot
    assert_close(udot[0], -0.3 * 4.0 * np.sin(2.0 * t - 1.0), 1e-12, "prescribed crank udot")
    assert_close(model.get_udot_err(r), np.zeros(3), 1e-10, "G udot + b")
    lam = model.get_constraint_multipliers(r)
    F = model.get_gravity_body_forces(r)
    residual = model.calc_residual_force(r, r.mobility_forces, F, udot, lam)
    full_tau = r.acceleration.motion_forces
    assert_close(residual + full_tau, np.zeros(3), 1e-10, "M udot + c + G^T lambda + tau = f")
    assert abs(float(full_tau[0])) > 1e-3 and np.all(np.asarray(full_tau[1:]) == 0)
