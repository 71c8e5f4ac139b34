"""The CompliantContactSubsystem's "smooth_hertz" and "exponential_spring" force models (set_force_model).

* smooth_hertz on sphere/half-space equals ``jb.SmoothSphereHalfSpaceForce`` (both surfaces of the element's
  material, so Simbody's combination gives OpenSim's k = E^(2/3) / 2) to 1e-14 at the golden states, and
  OpenSim 4.6's SmoothSphereHalfSpaceForce (contact_golden.json) to 1e-10;
* smooth_hertz on capsule/half-space equals two SmoothSphereHalfSpaceForce spheres at the end centers (1e-14);
* smooth_hertz on sphere/sphere (different materials) equals the law written out by hand here (numpy: depth,
  effective radius, Simbody's material combination, OpenSim's smoothing and friction);
* exponential_spring on sphere/half-space equals ``jb.ExponentialSpringForce`` with its station at the sphere's
  deepest point (forces, PE and dz/dt at the golden anchors and sliding states) to 1e-13 (the law's d2 = 1150/m
  amplifies the station's rounding);
* gradients (jax.grad) equal central differences; jit and vmap over states; a pair neither model accepts raises.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ball_models import GOLDEN, SMOOTH, _ball_system, golden_q_u, half_space_frame, smooth_ball

import jaxbody as jb
from jaxbody.errors import InvalidArgument

R = GOLDEN["radius"]
CENTER = GOLDEN["sphere_location"]
SMOOTH_PARAMETERS = {k: SMOOTH[k] for k in ("constant_contact_force", "hertz_smoothing", "hunt_crossley_smoothing")}
ROTATE_X_TO_DOWN = np.array([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]])  # half-space frame S: x_S = -z_G, y_S = y_G, z_S = x_G
MATERIAL = [SMOOTH[k] for k in ("stiffness", "dissipation", "static_friction", "dynamic_friction", "viscous_friction")]


def compliant_ball(other, force_model, parameters=None, ball_material=MATERIAL, other_material=MATERIAL,
                   transition_velocity=SMOOTH["transition_velocity"], ball_geometry=None):
    """The golden ball with a sphere surface (radius R at CENTER) and a Ground surface ``other`` = (geometry,
    X_GS), in one CompliantContactSubsystem with ``force_model``: (model, subsystem)."""
    system, matter, _, ball = _ball_system()
    tracker = jb.ContactTrackerSubsystem(system)
    contact = jb.CompliantContactSubsystem(system, tracker)
    contact.set_transition_velocity(transition_velocity)
    contact.set_force_model(force_model, parameters)
    geometry = jb.ContactGeometry.Sphere(R) if ball_geometry is None else ball_geometry
    ball.update_body().add_contact_surface(jb.Transform(jb.Rotation(), CENTER),
                                           jb.ContactSurface(geometry, jb.ContactMaterial(*ball_material)))
    matter.Ground().update_body().add_contact_surface(other[1], jb.ContactSurface(other[0], jb.ContactMaterial(*other_material)))
    return system.realize_topology(), contact


def rotation_matrix(q):
    """R_GB (3, 3) of a Free mobilizer's q (unit quaternion w, x, y, z first)."""
    w, x, y, z = np.asarray(q[:4]) / np.linalg.norm(np.asarray(q[:4]))
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


@jax.jit
def dynamics(model, q, u, z):
    s = model.default_state().set_q(q).set_u(u).set_z(z)
    dyn = model.realize(s, jb.Stage.Dynamics).dynamics
    return dyn.body_forces, dyn.potential_energy, dyn.zdot


@pytest.fixture(scope="module")
def smooth_pair():
    new, _ = compliant_ball((jb.ContactGeometry.HalfSpace(), half_space_frame()), "smooth_hertz", SMOOTH_PARAMETERS)
    return smooth_ball()[0], new


def test_smooth_hertz_equals_smooth_sphere_half_space_force_and_opensim(smooth_pair):
    old, new = smooth_pair
    for case in GOLDEN["smooth"]:
        q, u = golden_q_u(case)
        F_old, pe_old, _ = dynamics(old, q, u, jnp.zeros(0))
        F_new, pe_new, _ = dynamics(new, q, u, jnp.zeros(0))
        scale = max(float(jnp.max(jnp.abs(F_old))), 1e-300)
        assert float(jnp.max(jnp.abs(F_new - F_old))) <= 1e-14 * scale, case["name"]
        assert abs(float(pe_new - pe_old)) <= 1e-14 * max(abs(float(pe_old)), 1e-300), case["name"]
        expected = np.asarray(case["body_forces"])
        assert np.max(np.abs(np.asarray(F_new) - expected)) <= 1e-10 * np.max(np.abs(expected)) + 1e-13, case["name"]


def test_smooth_hertz_gradient_under_vmap_equals_central_differences(smooth_pair):
    """jax.grad of the potential energy w.r.t. q, vmapped over the golden states (one compilation)."""
    _, new = smooth_pair
    qs = jnp.stack([golden_q_u(c)[0] for c in GOLDEN["smooth"]])
    us = jnp.stack([golden_q_u(c)[1] for c in GOLDEN["smooth"]])
    grads = jax.jit(jax.vmap(jax.grad(lambda q, u: dynamics(new, q, u, jnp.zeros(0))[1])))(qs, us)
    h = 1e-6
    for i in (0, 2):  # penetrating, touching
        energy = lambda q: dynamics(new, q, us[i], jnp.zeros(0))[1]  # noqa: E731
        fd = np.array([(energy(qs[i].at[j].add(h)) - energy(qs[i].at[j].add(-h))) / (2 * h) for j in range(7)])
        np.testing.assert_allclose(grads[i], fd, rtol=1e-6, atol=1e-8 * np.max(np.abs(fd)), err_msg=GOLDEN["smooth"][i]["name"])


def _smooth_law_by_hand(c1, r1, m1, c2, r2, v2_at, parameters, vt):
    """Force on sphere 2 at the contact point (3,), the point, and the PE: the smooth law written out."""
    cf, bd, bv = parameters
    d_vec = c2 - c1
    n = d_vec / np.linalg.norm(d_vec)
    d = r1 + r2 - np.linalg.norm(d_vec)
    point = c1 + (r1 - d / 2) * n
    R_eff = r1 * r2 / (r1 + r2)
    E1, E2 = m1[0] ** (2 / 3), v2_at[1][0] ** (2 / 3)
    k = E1 * E2 / (E1 + E2)
    c = (m1[1] * E2 + v2_at[1][1] * E1) / (E1 + E2)
    us, ud, uv = (2 * a * b / (a + b) for a, b in zip(m1[2:], v2_at[1][2:]))
    fh = 4 / 3 * k * np.sqrt(R_eff * k) * (d * d + cf) ** 0.75 * (0.5 + 0.5 * np.tanh(bd * d))
    v = v2_at[0](point)
    vn = -v @ n
    fhc = fh * (1 + 1.5 * c * vn) * (0.5 + 0.5 * np.tanh(bv * (vn + 2 / (3 * c))))
    v_t = v + vn * n
    vslip = np.sqrt(v_t @ v_t + cf)
    vrel = vslip / vt
    mu = min(vrel, 1) * (ud + 2 * (us - ud) / (1 + vrel * vrel)) + uv * vslip
    return fhc * n - fhc * mu * v_t / vslip, point, 0.4 * fh * d


def test_smooth_hertz_sphere_sphere_equals_the_law_by_hand():
    r2, c_ground = 0.15, np.array([0.05, -0.2, 0.02])
    ball_material = [3.0e6, 0.9, 0.7, 0.5, 0.1]
    ground_material = [1.0e6, 1.5, 0.9, 0.6, 0.2]
    parameters = (1e-5, 300.0, 50.0)
    model, _ = compliant_ball((jb.ContactGeometry.Sphere(r2), jb.Transform(jb.Rotation(), c_ground)), "smooth_hertz",
                              dict(zip(SMOOTH_PARAMETERS, parameters)), ball_material, ground_material, 0.05)
    axis, angle = np.array([0.3, -0.2, 0.5]) / np.linalg.norm([0.3, -0.2, 0.5]), 0.7
    K = np.cross(np.eye(3), axis)
    R_GB = np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K  # Rodrigues
    direction = np.array([0.3, 0.8, -0.2]) / np.linalg.norm([0.3, 0.8, -0.2])
    for gap in (-0.004, -0.0005, 0.002):  # penetrating, barely, separated (the smooth tail)
        center = c_ground + (r2 + R - gap) * direction
        p_GB = center - R_GB @ np.asarray(CENTER)
        w, v = np.array([0.4, -1.1, 0.7]), np.array([0.3, -0.5, 0.25])
        q = jnp.concatenate([jnp.asarray(jb.Rotation(R_GB).to_quaternion()), jnp.asarray(p_GB)])
        F, pe, _ = dynamics(model, q, jnp.asarray(np.concatenate([w, v])), jnp.zeros(0))
        velocity_at = lambda p: v + np.cross(w, p - p_GB)  # noqa: E731  (the ground sphere is still)
        f, point, pe_hand = _smooth_law_by_hand(c_ground, r2, ground_material, center, R, (velocity_at, ball_material),
                                                parameters, 0.05)
        expected = np.array([np.cross(point - p_GB, f), f])
        np.testing.assert_allclose(np.asarray(F[1]), expected, rtol=0, atol=1e-13 * np.max(np.abs(expected)))
        np.testing.assert_allclose(float(pe), pe_hand, rtol=1e-13)


def _exponential_states():
    """Golden ExponentialContactForce states with the ball raised by R along the plane normal, so the sphere's
    deepest point sits where OpenSim's station was: [(q, u, z)]."""
    z_P = np.asarray(GOLDEN["exponential_plane"]["R_GP"])[:, 2]
    out = []
    for case in GOLDEN["exponential"]:
        q, u = golden_q_u(case)
        z = jnp.asarray([case["anchor"][0], case["anchor"][1], case["sliding"]])
        out.append((q.at[4:].add(jnp.asarray(R * z_P)), u, z))
    return out


def test_exponential_spring_equals_exponential_spring_force_at_the_deepest_point():
    plane = GOLDEN["exponential_plane"]
    R_GP, p_GP = np.asarray(plane["R_GP"]), np.asarray(plane["p_GP"])
    R_GS = np.stack([-R_GP[:, 2], R_GP[:, 1], R_GP[:, 0]], 1)  # the half-space frame whose plane frame is X_GP
    new, contact = compliant_ball((jb.ContactGeometry.HalfSpace(), jb.Transform(jb.Rotation(R_GS), p_GP)), "exponential_spring")
    assert contact.force.num_z == 3 and contact.force.z_slice == slice(0, 3)
    system, _, forces, ball = _ball_system()
    jb.ExponentialSpringForce(forces, jb.Transform(jb.Rotation(R_GP), p_GP), ball, CENTER)
    old = system.realize_topology()
    checked = 0
    for q, u, z in _exponential_states():
        R_GB = rotation_matrix(q)
        station = np.asarray(CENTER) - R * R_GB.T @ R_GP[:, 2]  # the deepest point, in B
        at_station = eqx.tree_at(lambda m: m.forces[0].station, old, jnp.asarray(station)[None])
        F_old, pe_old, zd_old = dynamics(at_station, q, u, z)
        F_new, pe_new, zd_new = dynamics(new, q, u, z)
        scale = float(jnp.max(jnp.abs(F_old)))
        # 1e-13: the station is reached by two roundings (the tracker's origin - depth/2 n; R_GB station_B), and
        # the normal force exp(-d2 pz) turns 1e-16 m into d2 * 1e-16 = 1e-13 relative (d2 = 1150 / m)
        assert float(jnp.max(jnp.abs(F_new - F_old))) <= 1e-13 * scale
        assert abs(float(pe_new - pe_old)) <= 1e-13 * abs(float(pe_old))
        # dz/dt = (p0' - p0) / tau: position rounding (1e-16 m) over tau = 5 ms, 2e-14 m/s, where p0' = p0
        np.testing.assert_allclose(zd_new, zd_old, rtol=1e-13, atol=1e-13)
        checked += scale > 1
    assert checked >= 5
    q, u, z = _exponential_states()[0]
    states = _exponential_states()[:3]
    qs, us, zs = (jnp.stack([s[i] for s in states]) for i in range(3))
    grads = jax.jit(jax.vmap(jax.grad(lambda q, u, z: dynamics(new, q, u, z)[1])))(qs, us, zs)  # vmap of grad
    h = 1e-7
    for i in range(3):
        energy = lambda q: dynamics(new, q, us[i], zs[i])[1]  # noqa: E731
        fd = np.array([(energy(qs[i].at[j].add(h)) - energy(qs[i].at[j].add(-h))) / (2 * h) for j in range(7)])
        np.testing.assert_allclose(grads[i], fd, rtol=1e-5, atol=1e-6 * np.max(np.abs(fd)))
    report = jax.jit(lambda q: contact.get_contact_forces(
        new.realize(new.default_state().set_q(q).set_u(u).set_z(z), jb.Stage.Velocity), new))(q)
    np.testing.assert_allclose(report.force_G[0], dynamics(new, q, u, z)[0][1, 1], rtol=1e-13)


def test_exponential_spring_on_a_brick_is_one_spring_per_corner():
    """A brick's 8 corners are body points: the exponential model equals ExponentialSpringForce with 8 stations at
    the corners (forces, PE, dz/dt at distinct anchors and sliding states), corner order = the tracker's."""
    half = np.array([0.1, 0.05, 0.08])
    new, contact = compliant_ball((jb.ContactGeometry.HalfSpace(), jb.Transform(jb.Rotation(ROTATE_X_TO_DOWN), [0, 0, 0])),
                                  "exponential_spring", ball_geometry=jb.ContactGeometry.Brick(list(half)))
    assert contact.force.num_z == 24
    corners = [np.asarray(CENTER) + half * np.array([sx, sy, sz]) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    system, _, forces, ball = _ball_system()
    spring = jb.ExponentialSpringForce(forces, jb.Transform(), ball, corners[0])
    for c in corners[1:]:
        spring.add_station(ball, c)
    old = system.realize_topology()
    # tilted, one corner 2 mm into the plane z = 0 (z up), sliding and turning
    q = jnp.asarray([0.98, 0.1, -0.12, 0.05, 0.02, -0.01, 0.0])
    lowest = min(float(q[6] + (rotation_matrix(q) @ c)[2]) for c in corners)
    q = q.at[6].add(-lowest - 0.002)
    u = jnp.asarray([0.3, -0.2, 0.5, 0.4, 0.1, -0.05])
    z = jnp.asarray(np.random.default_rng(0).uniform([-0.05, -0.05, 0.0], [0.05, 0.05, 1.0], (8, 3)).reshape(-1))
    (F_old, pe_old, zd_old), (F_new, pe_new, zd_new) = dynamics(old, q, u, z), dynamics(new, q, u, z)
    scale = float(jnp.max(jnp.abs(F_old)))
    assert scale > 10
    np.testing.assert_allclose(F_new, F_old, rtol=0, atol=1e-13 * scale)
    np.testing.assert_allclose(pe_new, pe_old, rtol=1e-13)
    np.testing.assert_allclose(zd_new, zd_old, rtol=1e-13, atol=1e-11)


def test_pairs_a_model_cannot_act_on_raise_naming_them():
    brick = jb.ContactGeometry.Brick([0.1, 0.05, 0.1])
    with pytest.raises(InvalidArgument, match="smooth_hertz.*Brick"):
        compliant_ball((jb.ContactGeometry.HalfSpace(), half_space_frame()), "smooth_hertz", ball_geometry=brick)
    with pytest.raises(InvalidArgument, match="exponential_spring.*Sphere"):
        compliant_ball((jb.ContactGeometry.Sphere(0.2), jb.Transform()), "exponential_spring")
    with pytest.raises(InvalidArgument, match="unknown parameters"):
        compliant_ball((jb.ContactGeometry.HalfSpace(), half_space_frame()), "smooth_hertz", {"stiffness": 1.0})


def test_smooth_hertz_on_a_capsule_is_two_smooth_spheres():
    """Capsule/half-space (two Contact points, the end spheres) under smooth_hertz equals SmoothSphereHalfSpaceForce
    with two spheres at the capsule's end centers, at the golden states."""
    half_length = 0.08
    new, _ = compliant_ball((jb.ContactGeometry.HalfSpace(), half_space_frame()), "smooth_hertz", SMOOTH_PARAMETERS,
                            ball_geometry=jb.ContactGeometry.Capsule(R, half_length))
    system, matter, forces, ball = _ball_system()
    force = jb.SmoothSphereHalfSpaceForce(forces, **SMOOTH)
    for sign in (-1.0, 1.0):
        force.add_contact(ball, np.asarray(CENTER) + sign * half_length * np.array([0.0, 0, 1]), R, matter.Ground(),
                          half_space_frame())
    old = system.realize_topology()
    for case in GOLDEN["smooth"]:
        q, u = golden_q_u(case)
        (F_old, pe_old, _), (F_new, pe_new, _) = dynamics(old, q, u, jnp.zeros(0)), dynamics(new, q, u, jnp.zeros(0))
        scale = float(jnp.max(jnp.abs(F_old)))
        np.testing.assert_allclose(F_new, F_old, rtol=0, atol=1e-14 * scale, err_msg=case["name"])
        np.testing.assert_allclose(pe_new, pe_old, rtol=1e-14, err_msg=case["name"])
