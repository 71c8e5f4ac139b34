"""load_mjcf / load_urdf turn the compliant contact's broad phase on by themselves above
``AUTO_BROAD_PHASE_PAIRS`` tracked pairs (``contact_broad_phase`` / ``broad_phase`` = "auto", the default):
a 25-ball MJCF model (325 pairs) gets capacity 64 and the same body forces (to round-off) under jit and vmap as
with the broad phase off; MJX's humanoid (4 pairs) keeps it off; an int chooses the capacity; a bad value raises."""

from __future__ import annotations

import pathlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from jaxbody._api.compliant_contact import AUTO_BROAD_PHASE_CAPACITY, AUTO_BROAD_PHASE_PAIRS
from jaxbody.io import load_mjcf, load_urdf

pytest.importorskip("mujoco", reason="load_mjcf parses with MuJoCo's compiler (extra jaxbody[io])")

MODELS = pathlib.Path(__file__).parent.parent / "models"
BALLS = 25  # 25 * 24 / 2 ball pairs + 25 floor pairs = 325 > AUTO_BROAD_PHASE_PAIRS
XML = ("<mujoco><worldbody><geom name='floor' type='plane' size='5 5 .1'/>"
       + "".join(f"<body name='b{i}' pos='{0.3 * (i % 5)} {0.3 * (i // 5)} 0.5'><freejoint/>"
                 f"<geom name='g{i}' type='sphere' size='0.1'/></body>" for i in range(BALLS))
       + "</worldbody></mujoco>")


def _capacity(imp, model):
    return imp.contact.subsystem.force._element(model).broad_phase_capacity


def _balls(**options):
    imp = load_mjcf(XML, **options)
    return imp, imp.system.realize_topology()


def test_auto_broad_phase_gives_the_same_forces():
    (auto, auto_model), (off, off_model) = _balls(), _balls(contact_broad_phase=0)
    assert 325 > AUTO_BROAD_PHASE_PAIRS and _capacity(auto, auto_model) == AUTO_BROAD_PHASE_CAPACITY
    assert _capacity(off, off_model) == 0
    rng = np.random.default_rng(0)
    q = np.zeros((4, BALLS, 7))  # (quaternion, position) of each ball's free joint: the file's grid, 0.5 m up
    q[..., 0] = 1.0
    q[..., 4:] = [[0.3 * (i % 5), 0.3 * (i // 5), 0.5] for i in range(BALLS)]
    q[1, :5, 6] = 0.08  # first row sunk into the floor
    q[2, 1, 4:] = q[2, 0, 4:] + [0.15, 0.0, 0.0]  # two balls touching
    q[3, :, 4:] = rng.uniform(0.0, 0.4, size=(BALLS, 3))  # a heap: 81 touching pairs > 64, the fallback
    q = jnp.asarray(q.reshape(4, -1))
    forces = jax.jit(jax.vmap(lambda m, q: m.realize(m.default_state().set_q(q), jb.Stage.Dynamics).dynamics.body_forces,
                              in_axes=(None, 0)))
    a, b = forces(auto_model, q), forces(off_model, q)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * float(jnp.max(jnp.abs(b))))  # the heap: roundoff
    free = load_mjcf(XML, contact=False).system.realize_topology()  # gravity only
    touching = np.any(np.asarray(a != forces(free, q)).reshape(4, -1), 1)
    assert touching.tolist() == [False, True, True, True]
    a2 = forces(auto_model, q[:3])  # no lane over capacity: the candidates' branch
    np.testing.assert_allclose(a2, b[:3], rtol=0, atol=1e-12 * float(jnp.max(jnp.abs(b))))


def test_small_models_keep_it_off_and_an_int_chooses_it():
    imp = load_mjcf(MODELS / "mjx_humanoid.xml")
    assert _capacity(imp, imp.system.realize_topology()) == 0
    imp, model = _balls(contact_broad_phase=8)
    assert _capacity(imp, model) == 8


def test_bad_broad_phase_option_raises():
    with pytest.raises(jb.errors.InvalidArgument, match="broad phase capacity"):
        load_mjcf(XML, contact_broad_phase="always")
    with pytest.raises(jb.errors.InvalidArgument, match="broad phase capacity"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its collision meshes are not in tests/models
        load_urdf(MODELS / "ur5_robot.urdf", collision=True, contact_broad_phase=-1)
