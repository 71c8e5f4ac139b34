"""Broad phase (CompliantContactSubsystem.set_broad_phase, _dynamics/contact/broad_phase.py): the same body forces
as the full narrow phase, bit for bit, with few pairs touching (the candidates) and with more touching than the
capacity (the fallback), under jit and vmap; far pairs carry no force; bad capacities raise."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from helpers import jaxpr_primitives

BODIES = 6


def _model(capacity):
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    tracker = jb.ContactTrackerSubsystem(system)
    contact = jb.CompliantContactSubsystem(system, tracker)
    contact.set_broad_phase(capacity)
    material = jb.ContactMaterial(1e6, 0.5, 0.5, 0.5)
    floor = jb.Transform(jb.Rotation(np.asarray([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]])), [0.0, 0.0, 0.0])
    matter.Ground().update_body().add_contact_surface(floor, jb.ContactSurface(jb.ContactGeometry.HalfSpace(), material))
    for i in range(BODIES):
        body = jb.Body.Rigid(jb.MassProperties(1.0, np.zeros(3), jb.Inertia(0.01, 0.01, 0.01)))
        body.add_contact_surface(jb.Transform(), jb.ContactSurface(jb.ContactGeometry.Sphere(0.1 + 0.01 * i), material))
        jb.MobilizedBody.Free(matter.Ground(), jb.Transform(), body, jb.Transform())
    return system.realize_topology(), contact


@pytest.fixture(scope="module")
def models():
    return _model(0), _model(2)


def _states(model):
    """(3 lanes) apart; two sphere pairs and one floor pair touching (within capacity 2 per group); all
    spheres stacked in one spot (15 touching pairs: the fallback)."""
    q = np.zeros((3, BODIES, 7))
    q[..., 0] = 1.0
    q[:, :, 4] = np.arange(BODIES) * 0.5
    q[:, :, 6] = 0.5
    q[1, 1, 4:] = q[1, 0, 4:] + [0.2, 0.0, 0.0]
    q[1, 3, 4:] = q[1, 2, 4:] + [0.0, 0.2, 0.0]
    q[1, 5, 6] = 0.1
    q[2, :, 4:] = np.arange(BODIES)[:, None] * [0.02, 0.01, 0.0] + [0, 0, 0.5]
    return jnp.asarray(q.reshape(3, -1))


def test_forces_equal_the_full_narrow_phase(models):
    (full, _), (broad, contact) = models
    forces = jax.jit(jax.vmap(lambda m, q: m.realize(m.default_state().set_q(q), jb.Stage.Dynamics).dynamics.body_forces,
                              in_axes=(None, 0)))
    q = _states(full)
    a, b = forces(full, q), forces(broad, q)
    np.testing.assert_array_equal(a, b)
    assert np.any(a[1] != 0) and np.any(a[2] != 0)  # touching lanes push


def test_bad_capacity_raises():
    system = jb.MultibodySystem()
    jb.SimbodyMatterSubsystem(system)
    contact = jb.CompliantContactSubsystem(system, jb.ContactTrackerSubsystem(system))
    for bad in (-1, 2.5, True):
        with pytest.raises(jb.errors.InvalidArgument, match="broad phase capacity"):
            contact.set_broad_phase(bad)


def test_vmap_keeps_the_fallback_a_branch_and_gradients_equal(models):
    """Under vmap the fallback's condition is one bool for the batch (broad_phase.any_lane): the program keeps a
    real cond (a lane-wise one becomes a select running the full narrow phase on every lane); lanes that need
    no fallback get the full narrow phase's forces and gradients."""
    (full, _), (broad, _) = models

    def energy(m, q):
        f = m.realize(m.default_state().set_q(q), jb.Stage.Dynamics).dynamics.body_forces
        return jnp.sum(f * jnp.arange(f.size, dtype=f.dtype).reshape(f.shape) / f.size)

    q = _states(full)[:2]  # apart, and a few pairs touching: no lane overflows
    batched = jax.vmap(jax.value_and_grad(energy, argnums=1), in_axes=(None, 0))
    assert "cond" in jaxpr_primitives(jax.make_jaxpr(batched)(broad, q))
    (a, da), (b, db) = jax.jit(batched)(full, q), jax.jit(batched)(broad, q)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(db, da, rtol=1e-12, atol=1e-9)
    assert np.any(da[1] != 0)
