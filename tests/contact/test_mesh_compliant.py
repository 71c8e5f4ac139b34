"""Triangle meshes in the CompliantContactSubsystem (Simbody's newer ElasticFoundation, "elastic_foundation"
model) against the OpenSim-checked ``jb.ElasticFoundationForce``: with a rigid partner (stiffness 1e30, so the
mesh takes all the deformation: s1 = 1, kh = stiffness / thickness, c = the mesh's) and no friction, both
laws give the same springs at the same points. Checked at the golden file's sliding states (velocities on, so
the dissipation enters) for a half-space and a sphere; for two meshes, the shared-patch area rule and finite
gradients. Also jit and grad through realize.
"""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ball_models import _ball_system, golden_q_u
from mesh_models import MODELS, read_obj
from test_mesh_golden import GOLDEN

import jaxbody as jb
from jaxbody._dynamics.contact import shapes
from jaxbody._dynamics.contact.trackers import mesh

K, C = 2.0e8, 0.7
V, F = read_obj(os.path.join(MODELS, "icosphere_r0.1.obj"))


def _models(kind):
    X_BM = jb.Transform(jb.Rotation(np.asarray(GOLDEN["mesh_R_BM"])), GOLDEN["mesh_location"])
    other = GOLDEN[kind]
    X_GO = jb.Transform(jb.Rotation(np.asarray(other["R_GO"])), other["location"])
    # the old element (checked against OpenSim), frictionless
    system, matter, forces, ball = _ball_system()
    ef = jb.ElasticFoundationForce(forces)
    ef.add_mesh(ball, V, F, X_BM, stiffness=K, dissipation=C)
    ef.add_half_space(matter.Ground(), X_GO) if kind == "half_space" else ef.add_sphere(matter.Ground(), other["size"], other["location"])
    old = system.realize_topology()
    # the compliant subsystem
    system, matter, _, ball = _ball_system()
    tracker = jb.ContactTrackerSubsystem(system)
    jb.CompliantContactSubsystem(system, tracker)
    ball.update_body().add_contact_surface(X_BM, jb.ContactSurface(jb.ContactGeometry.TriangleMesh(V, F), jb.ContactMaterial(K, C, 0, 0)))
    rigid = jb.ContactMaterial(1e30, 0.0, 0.0, 0.0)
    if kind == "half_space":
        surface, X = jb.ContactSurface(jb.ContactGeometry.HalfSpace(), rigid), X_GO
    else:
        surface, X = jb.ContactSurface(jb.ContactGeometry.Sphere(other["size"]), rigid), jb.Transform(jb.Rotation(), other["location"])
    matter.Ground().update_body().add_contact_surface(X, surface)
    return old, system.realize_topology()


@jax.jit
def _forces(model, q, u):
    s = model.default_state().set_q(q).set_u(u)
    dyn = model.realize(s, jb.Stage.Dynamics).dynamics
    return dyn.body_forces, dyn.potential_energy


@pytest.mark.parametrize("kind", ["half_space", "sphere"])
def test_compliant_mesh_matches_elastic_foundation_force(kind):
    old, new = _models(kind)
    for case in GOLDEN[kind]["cases"][:3]:
        q, u = golden_q_u(case)
        (F_old, pe_old), (F_new, pe_new) = _forces(old, q, u), _forces(new, q, u)
        scale = float(jnp.max(jnp.abs(F_old)))
        assert scale > 100
        np.testing.assert_allclose(F_new, F_old, atol=1e-10 * scale, err_msg=f"{kind} {case['name']}")
        np.testing.assert_allclose(pe_new, pe_old, rtol=1e-10)
    g = jax.grad(lambda q: _forces(new, q, u)[1])(q)
    assert np.all(np.isfinite(g)) and np.any(g != 0)


def test_mesh_mesh_patch_area_rule_and_gradients():
    """Simbody's shared patch: each side's active areas scaled so that both sum to (A1 + A2) / 4."""
    other = GOLDEN["mesh"]
    v2, f2 = read_obj(os.path.join(MODELS, "icosphere_r0.12.obj"))
    m1 = shapes.TriangleMesh(jnp.asarray(V)[None], tuple(map(tuple, F.tolist())))
    m2 = shapes.TriangleMesh(jnp.asarray(v2)[None], tuple(map(tuple, f2.tolist())))
    R2, p2 = jnp.asarray(other["R_GO"])[None], jnp.asarray(other["location"])[None]
    case = GOLDEN["mesh"]["cases"][0]
    R_BM, p_BM = np.asarray(GOLDEN["mesh_R_BM"]), np.asarray(GOLDEN["mesh_location"])
    R1 = jnp.asarray(np.asarray(case["R_GB"]) @ R_BM)[None]
    p1 = jnp.asarray(np.asarray(case["p_GB"]) + np.asarray(case["R_GB"]) @ p_BM)[None]
    track = jax.jit(mesh.triangle_mesh_triangle_mesh)
    c = track(R1, p1, m1, R2, p2, m2)
    nf = len(F)
    side1, side2 = (np.asarray(c.area[0, s])[np.asarray(c.depth[0, s]) > 0] for s in (slice(0, nf), slice(nf, None)))
    raw1 = mesh.mesh_mesh_patch(R1[0], p1[0], jnp.asarray(V), F, R2[0], p2[0], jnp.asarray(v2), f2)
    raw2 = mesh.mesh_mesh_patch(R2[0], p2[0], jnp.asarray(v2), f2, R1[0], p1[0], jnp.asarray(V), F)
    a1, a2 = (float(jnp.sum(jnp.where(r.active, r.area, 0.0))) for r in (raw1, raw2))
    assert a1 > 0 and a2 > 0
    np.testing.assert_allclose([side1.sum(), side2.sum()], [(a1 + a2) / 4] * 2, rtol=1e-12)
    g = jax.grad(lambda p: jnp.sum(track(R1, p, m1, R2, p2, m2).depth))(p1)
    assert np.all(np.isfinite(g)) and np.any(g != 0)
