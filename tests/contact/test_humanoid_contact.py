"""A humanoid-like doll (11 bodies, humanoid.py) dropped 3 cm onto a floor with ExponentialSpringForce contact at
8 sole points, sliding sideways at 0.3 m/s, simulated with jb.simulate (RK4, dt = 1 ms); energy and contact
forces are plotted into a PNG (tmp_path).

Checks (independent of the implementation): at every saved state Newton's law for the whole doll,
``M a_com = sum of contact forces + M g`` (1e-9 relative; the contact forces from the element's own
calc_details, the acceleration from the articulated-body solution); energy KE + PE (gravity, joint springs,
contact) never rises by more than RK4 noise (contact and joint dampers only dissipate). Short default run
(0.2 s): the landing, normal forces positive and at the peak above the weight. Long run (2 s): after 1 s the
mean normal force is the weight (1%), the anchors stick (K -> 0) and the pelvis no longer slides.
"""

import jax
import jax.numpy as jnp
import matplotlib
import numpy as np
import pytest
from humanoid import humanoid

import jaxbody as jb

matplotlib.use("Agg")
import matplotlib.pyplot as plt

DT = 1e-3
MASS = 12 + 22 + 5 + 2 * (3 + 8 + 4 + 1.5)  # humanoid.py's bodies, kg
WEIGHT = MASS * 9.81


@pytest.fixture(scope="module")
def doll():
    model, _bodies, spring = humanoid("exponential")
    s = model.default_state()
    q = s.q.at[4:7].set(jnp.asarray([0.0, 0.03, 0.0]))  # pelvis (Free) p: 3 cm drop
    u = s.u.at[3:6].set(jnp.asarray([0.3, 0.0, 0.0]))  # sideways slide
    s = spring.reset_anchor_points(model, s.set_q(q).set_u(u))
    element = model.forces[-1]  # the only element with state variables: z is all its own

    def observe(state):
        r = model.realize(state, jb.Stage.Acceleration)
        energy = model.calc_energy(r)
        f_P, _, _, _ = element.calc_details(r, r.z)
        # Newton for the whole doll: M a_com - M g must equal the sum of the contact forces (in G)
        newton = MASS * model.calc_system_mass_center_acceleration_in_ground(r) - MASS * jnp.asarray([0.0, -9.81, 0.0])
        return energy, f_P, newton - jnp.sum(f_P, 0) @ element.R_GP.T

    run = jax.jit(lambda s0, n: jb.simulate(model, s0, DT, n, method="rk4", save_every=10), static_argnums=1)
    return model, s, run, jax.jit(jax.vmap(observe)), jax.jit(observe)


def _simulate(doll, seconds):
    _model, s0, run, observe_all, observe = doll
    final, traj = run(s0, round(seconds / DT))
    energy, f_P, newton = observe_all(traj)
    e0 = observe(s0)[0]
    assert np.max(np.abs(np.asarray(newton))) < 1e-9 * WEIGHT, "M a_com != contact forces + weight"
    t = np.asarray(traj.t)
    return final, traj, np.concatenate([[float(e0)], np.asarray(energy)]), np.concatenate([[0.0], t]), np.asarray(f_P)


def _plot(path, t, energy, f_P):
    fig, (a, b) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    a.plot(t, energy)
    a.set_ylabel("energy KE + PE (J)")
    fz = f_P[..., 2]
    b.plot(t[1:], fz[:, :4].sum(1), label="left foot normal")
    b.plot(t[1:], fz[:, 4:].sum(1), label="right foot normal")
    b.plot(t[1:], np.linalg.norm(f_P[..., :2].sum(1), axis=-1), label="|friction| total")
    b.axhline(WEIGHT, color="k", lw=0.5, ls="--", label="weight")
    b.set_xlabel("t (s)")
    b.set_ylabel("force (N)")
    b.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def _check_energy(energy):
    rise = np.max(np.diff(energy))
    assert rise < 1e-6 * abs(energy[0]) + 1e-6, f"energy rose by {rise:.3e} J in one saved interval"


def test_landing_short(doll, tmp_path):
    final, _traj, energy, t, f_P = _simulate(doll, 0.2)
    assert np.all(np.isfinite(np.asarray(final.q))) and np.all(np.isfinite(energy))
    _check_energy(energy)
    fz_total = f_P[..., 2].sum(1)
    assert np.all(f_P[..., 2] >= 0) and fz_total.max() > WEIGHT
    _plot(tmp_path / "humanoid_landing.png", t, energy, f_P)
    assert (tmp_path / "humanoid_landing.png").stat().st_size > 10_000


@pytest.mark.long
def test_standing_two_seconds(doll, tmp_path):
    final, traj, energy, t, f_P = _simulate(doll, 2.0)
    _check_energy(energy)
    late = t[1:] > 1.0
    fz_mean = f_P[late, :, 2].sum(1).mean()
    assert abs(fz_mean - WEIGHT) < 1e-2 * WEIGHT, f"mean normal force {fz_mean:.3f} N vs weight {WEIGHT:.3f} N"
    assert np.all(np.asarray(final.z).reshape(-1, 3)[:, 2] < 0.05), "anchors stuck (K -> 0): sliding stopped"
    pelvis_x = np.asarray(traj.q)[:, 4]
    assert np.ptp(pelvis_x[late]) < 0.05, "no further sliding after 1 s"
    _plot(tmp_path / "humanoid_standing.png", t, energy, f_P)
