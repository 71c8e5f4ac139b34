"""Public contact API: Simbody's pair rules (different mobilized bodies, cliques), exclude_pair/include_pair, the
error for a pair no tracker covers (naming both surfaces and bodies), bad inputs (InvalidArgument naming the
shape/material), update_body's copy, the stage check of the report, and materials/sizes as Model leaves."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from jaxbody.errors import InvalidArgument, StageViolation, TopologyFrozen

MAT = jb.ContactMaterial(1e6, 0.5, 0.6, 0.4, 0.1)


def _setup():
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    tracker = jb.ContactTrackerSubsystem(system)
    contact = jb.CompliantContactSubsystem(system, tracker)
    return system, matter, tracker, contact


def _free(matter, name, *geometries):
    body = jb.Body.Rigid(jb.MassProperties(1.0, np.zeros(3), jb.Inertia(0.01)))
    surfaces = [jb.ContactSurface(g, MAT) for g in geometries]
    for s in surfaces:
        body.add_contact_surface(None, s)
    return jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), body, jb.Transform(), name=name), surfaces


def _pairs(contact, model):
    return [(b1.name, i1, b2.name, i2) for (b1, i1), (b2, i2) in contact.get_contact_pairs(model)]


def test_pair_rules_cliques_exclusions_inclusions():
    system, matter, tracker, contact = _setup()
    floor = jb.ContactSurface(jb.ContactGeometry.HalfSpace(), MAT)
    matter.Ground().update_body().add_contact_surface(None, floor)
    _, (a1, a2) = _free(matter, "a", jb.ContactGeometry.Sphere(0.1), jb.ContactGeometry.Capsule(0.05, 0.1))
    _, (b1,) = _free(matter, "b", jb.ContactGeometry.Sphere(0.2))
    _, (c1,) = _free(matter, "c", jb.ContactGeometry.Brick([0.1, 0.1, 0.1]))
    clique = jb.ContactSurface.create_new_contact_clique()
    a1.join_clique(clique)
    b1.join_clique(clique)
    tracker.exclude_pair(floor, c1)
    tracker.exclude_pair(a2, c1)
    tracker.include_pair(c1, a2)  # include wins over the exclusion made before it
    model = system.realize_topology()
    pairs = _pairs(contact, model)
    # same body (a1, a2) never; the a1/b1 clique excludes them; floor/c1 excluded; c1/a2 included again;
    # each pair in its table order (sphere before capsule, brick before sphere and capsule)
    assert sorted(pairs) == sorted([("Ground", 0, "a", 0), ("Ground", 0, "a", 1), ("Ground", 0, "b", 0),
                                    ("b", 0, "a", 1), ("c", 0, "a", 0), ("c", 0, "a", 1), ("c", 0, "b", 0)])


def test_include_pair_overrides_a_clique():
    system, matter, tracker, contact = _setup()
    _, (a,) = _free(matter, "a", jb.ContactGeometry.Sphere(0.1))
    _, (b,) = _free(matter, "b", jb.ContactGeometry.Sphere(0.1))
    clique = jb.ContactSurface.create_new_contact_clique()
    a.join_clique(clique), b.join_clique(clique)
    tracker.include_pair(a, b)
    assert _pairs(contact, system.realize_topology()) == [("a", 0, "b", 0)]


def test_untracked_pair_names_both_surfaces_and_bodies():
    system, matter, tracker, contact = _setup()
    tetrahedron = 0.1 * np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    _free(matter, "wheel", jb.ContactGeometry.TriangleMesh(tetrahedron, [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]))
    _free(matter, "hub", jb.ContactGeometry.Cylinder(0.2, 0.05))  # convex pairs are all tracked; mesh/cylinder not
    with pytest.raises(InvalidArgument, match=r"TriangleMesh \(surface 0 on body 'wheel'\) and Cylinder \(surface 0 on body 'hub'\)"):
        system.realize_topology()


def test_include_pair_on_one_body_raises():
    system, matter, tracker, contact = _setup()
    _, (a, b) = _free(matter, "a", jb.ContactGeometry.Sphere(0.1), jb.ContactGeometry.Sphere(0.2))
    tracker.include_pair(a, b)
    with pytest.raises(InvalidArgument, match="same mobilized body"):
        system.realize_topology()


@pytest.mark.parametrize("make, message", [
    (lambda: jb.ContactGeometry.Sphere(-0.1), "Sphere radius"),
    (lambda: jb.ContactGeometry.Ellipsoid([0.1, 0.0, 0.2]), "Ellipsoid radii"),
    (lambda: jb.ContactGeometry.Brick([0.1, 0.2]), "Brick half_lengths"),
    (lambda: jb.ContactGeometry.Capsule(0.1, np.nan), "Capsule half_length"),
    (lambda: jb.ContactGeometry.TriangleMesh(np.zeros((3, 3)), [[0, 1, 3]]), "faces"),
    (lambda: jb.ContactGeometry.ConvexMesh(np.zeros((3, 3))), "ConvexMesh vertices"),
    (lambda: jb.ContactMaterial(1e6, 0.1, 0.3, 0.5), "dynamic_friction"),
    (lambda: jb.ContactMaterial(0.0, 0.1, 0.5, 0.3), "stiffness"),
    (lambda: jb.ContactSurface(jb.ContactGeometry.Sphere(0.1), MAT, thickness=-1), "thickness"),
    (lambda: jb.ContactSurface("sphere", MAT), "ContactGeometry"),
    (lambda: jb.Body.Rigid().add_contact_surface(None, "surface"), "ContactSurface"),
    (lambda: jb.ContactSurface(jb.ContactGeometry.Sphere(0.1), MAT).join_clique(0), "clique"),
    (lambda: jb.ContactMaterial.calc_plane_strain_stiffness(1e6, 0.5), "poissons_ratio"),
])
def test_bad_inputs_raise_naming_the_argument(make, message):
    with pytest.raises(InvalidArgument, match=message):
        make()


def test_material_formulas():
    np.testing.assert_allclose(jb.ContactMaterial.calc_plane_strain_stiffness(2e9, 0.3), 2e9 / (1 - 0.09))
    np.testing.assert_allclose(jb.ContactMaterial.calc_confined_compression_stiffness(2e9, 0.3), 2e9 * 0.7 / (1.3 * 0.4))
    assert jb.ContactMaterial.calc_dissipation_from_observed_restitution(0.8, 0.5) == pytest.approx(0.4)
    np.testing.assert_allclose(MAT.get_stiffness23(), 1e4)


def test_update_body_copies_a_shared_body():
    system, matter, tracker, contact = _setup()
    shared = jb.Body.Rigid(jb.MassProperties(1.0, np.zeros(3), jb.Inertia(0.01)))
    a = jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), shared, jb.Transform(), name="a")
    b = jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), shared, jb.Transform(), name="b")
    a.update_body().add_contact_surface(None, jb.ContactSurface(jb.ContactGeometry.Sphere(0.1), MAT))
    assert a.get_body().get_num_contact_surfaces() == 1 and b.get_body().get_num_contact_surfaces() == 0
    assert shared.get_num_contact_surfaces() == 0


def test_set_default_mass_properties_keeps_the_contact_surfaces():
    system, matter, tracker, contact = _setup()
    matter.Ground().update_body().add_contact_surface(None, jb.ContactSurface(jb.ContactGeometry.HalfSpace(), MAT))
    ball, _ = _free(matter, "ball", jb.ContactGeometry.Sphere(0.1))
    ball.set_default_mass_properties(jb.MassProperties(2.0, np.zeros(3), jb.Inertia(0.02)))
    model = system.realize_topology()
    assert _pairs(contact, model) == [("Ground", 0, "ball", 0)]
    np.testing.assert_allclose(ball.get_body_mass(None, model), 2.0)


def test_a_surface_added_after_realize_topology_raises_naming_the_body():
    # The Model's pairs index the bodies' surface lists: a surface added later (here on the first body, which
    # would shift every later index) must not silently change what get_contact_pairs reports.
    system, matter, tracker, contact = _setup()
    a, _ = _free(matter, "a", jb.ContactGeometry.Sphere(0.1))
    _free(matter, "b", jb.ContactGeometry.Sphere(0.1))
    model = system.realize_topology()
    with pytest.raises(TopologyFrozen, match="Body of 'a'"):
        a.get_body().add_contact_surface(None, jb.ContactSurface(jb.ContactGeometry.Brick([0.1, 0.1, 0.1]), MAT))
    assert _pairs(contact, model) == [("a", 0, "b", 0)]


def test_report_needs_velocity_and_leaves_change_without_retracing():
    system, matter, tracker, contact = _setup()
    matter.Ground().update_body().add_contact_surface(
        jb.Transform(jb.Rotation(np.asarray([[0.0, 1, 0], [-1, 0, 0], [0, 0, 1]]))),
        jb.ContactSurface(jb.ContactGeometry.HalfSpace(), MAT))
    _free(matter, "ball", jb.ContactGeometry.Sphere(0.1))
    model = system.realize_topology()
    state = model.default_state().set_q(jnp.asarray([1.0, 0, 0, 0, 0, 0.095, 0]))
    with pytest.raises(StageViolation):
        contact.get_contact_forces(state, model)
    traces = []

    @jax.jit
    def depth_and_force(model, q):
        traces.append(1)
        s = model.realize(model.default_state().set_q(q), jb.Stage.Velocity)
        r = contact.get_contact_forces(s, model)
        return r.depth, r.force_G

    q = state.q
    d1, f1 = depth_and_force(model, q)
    bigger = eqx.tree_at(lambda m: m.forces[contact.force.index].shapes[1].radius, model, jnp.asarray([0.11]))
    d2, f2 = depth_and_force(bigger, q)
    assert len(traces) == 1
    np.testing.assert_allclose(d1, [0.005], atol=1e-15)
    np.testing.assert_allclose(d2, [0.015], atol=1e-15)
    assert f2[0, 1] > f1[0, 1] > 0
    np.testing.assert_allclose(contact.get_transition_velocity(model), 0.01)  # Simbody's default
    slower = contact.set_transition_velocity_in(model, 0.05)
    np.testing.assert_allclose(contact.get_transition_velocity(slower), 0.05)


def test_a_subsystem_without_surfaces_adds_nothing():
    system, matter, tracker, contact = _setup()
    _free(matter, "a")
    model = system.realize_topology()
    s = model.realize(model.default_state(), jb.Stage.Dynamics)
    assert contact.get_num_contact_pairs(model) == 0
    np.testing.assert_array_equal(s.dynamics.body_forces, 0.0)
    assert contact.get_contact_forces(s, model).force_G.shape == (0, 3)
