"""MJCF tendon limits as stops on the tendon length (jaxbody.io.mjcf_tendons) against MuJoCo 4.0.

Golden numbers: tests/io/golden/mujoco_tendon_limits_*.npz from tests/io/generate_tendon_limits_golden.py, on
dm_control's ball_in_cup (a limited spatial tendon through two sites) and tests/models/tendon_limits.xml (a
limited fixed tendon over two hinges, a limited spatial tendon through three sites). MuJoCo's limit is a
constraint, jaxbody's a compliant stop, so what is compared is what both share: the stop engages exactly when
MuJoCo makes a tendon-limit row, and the stop's generalized force equals the documented law evaluated on
MuJoCo's tendon length, rate and moment arms, ``T(ten_length, ten_velocity) * ten_J`` with
k = m_eff / tau^2 (m_eff = J M0 J^T from MuJoCo), to 1e-10: length, rate and moments are all in it.
"""

import functools
import os
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import assert_close

import jaxbody as jb
from jaxbody.io._passive import LIMIT_DISSIPATION, LIMIT_TIME_CONSTANT

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")
FILES = {"ball_in_cup": "dm_control/ball_in_cup.xml", "tendon_limits": "tendon_limits.xml"}


def expected_tension(g, t):
    """The stop law of jaxbody.io.mjcf_tendons on MuJoCo's tendon length and rate (N or N m per unit length)."""
    L, Ldot = g["ten_length"][:, t], g["ten_velocity"][:, t]
    lower, upper = g["tendon_range"][t]
    k, d = g["m_eff"][t] / LIMIT_TIME_CONSTANT**2, LIMIT_DISSIPATION
    return np.where(L > upper, np.minimum(0.0, -k * (L - upper) * (1 + d * Ldot)),
                    np.where(L < lower, np.maximum(0.0, -k * (L - lower) * (1 - d * Ldot)), 0.0))


@functools.cache
def setup(stem, xml=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imported = jb.io.load_mjcf(xml or os.path.join(MODELS, FILES[stem]))
    model = imported.system.realize_topology()
    g = dict(np.load(os.path.join(HERE, "golden", f"mujoco_tendon_limits_{stem}.npz")))
    stops = [imported.limit_stops[f"tendon {n}"] for n in g["tendon_names"]]

    @jax.jit
    @jax.vmap
    def evaluate(q, u):
        s = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Velocity)
        out = []
        for h in stops:
            F, f = model.calc_force_contributions_sum(s, (h,))
            out.append((f + model.multiply_by_system_jacobian_transpose(s, F),
                        model.calc_force_potential_energy_sum(s, (h,))))
        return out

    q, u = imported.from_mujoco(g["qpos"], g["qvel"])
    return imported, model, g, evaluate(q, u), stops


@pytest.mark.parametrize("stem", list(FILES))
def test_tendon_limit_stops_engage_and_push_as_mujoco(stem):
    imported, model, g, results, _ = setup(stem)
    assert g["qpos"].shape[1] == model.topology.nu  # hinges and slides only: q = qpos, u = qvel
    for t, (f, pe) in enumerate(results):
        engaged = np.asarray(pe) > 0
        np.testing.assert_array_equal(engaged, g["limit_active"][:, t], err_msg=f"tendon {t} engagement")
        assert 5 <= engaged.sum() <= len(engaged) - 5   # both sides of the bound are exercised
        expected = expected_tension(g, t)[:, None] * g["ten_J"][:, t]
        assert np.max(np.abs(expected)) > 1.0
        assert_close(np.asarray(f), expected, 1e-10, f"{stem} tendon {t}: stop force vs T(MuJoCo L, Ldot) J")


def test_tendon_limit_gradient_matches_central_differences():
    """jax.jacfwd of the spatial stop's generalized force w.r.t. q against central differences, at a state
    where it is engaged above its upper bound."""
    imported, model, g, results, stops = setup("tendon_limits")
    i = int(np.flatnonzero(g["limit_active"][:, 1] & (g["ten_length"][:, 1] > g["tendon_range"][1][1]))[0])
    q0, u0 = (np.asarray(x)[i] for x in imported.from_mujoco(g["qpos"], g["qvel"]))

    @jax.jit
    def force(q):
        s = model.realize(model.default_state().set_q(q).set_u(u0), jb.Stage.Velocity)
        F, f = model.calc_force_contributions_sum(s, (stops[1],))
        return f + model.multiply_by_system_jacobian_transpose(s, F)

    J = np.asarray(jax.jacfwd(force)(jnp.asarray(q0)))
    h = 1e-6
    fd = np.stack([(np.asarray(force(q0 + h * e)) - np.asarray(force(q0 - h * e))) / (2 * h)
                   for e in np.eye(len(q0))], axis=1)
    assert np.max(np.abs(J)) > 1.0
    assert_close(J, fd, 1e-6 * np.max(np.abs(J)), "d(stop force)/dq vs central differences")


@pytest.mark.long
def test_broken_length_fails_the_comparison():
    """The comparison can fail: the fixed tendon with a different coefficient in the file."""
    with open(os.path.join(MODELS, FILES["tendon_limits"])) as f:
        broken = f.read().replace('coef="-0.6"', 'coef="-0.5"')
    _, _, g, results, _ = setup("tendon_limits", broken)
    f, pe = results[0]
    expected = expected_tension(g, 0)[:, None] * g["ten_J"][:, 0]
    assert (not np.array_equal(np.asarray(pe) > 0, g["limit_active"][:, 0])
            or np.max(np.abs(np.asarray(f) - expected)) > 1e-3)


def test_unsupported_tendon_limit_is_warned():
    """Left out with a warning naming it: a tendon between two sites of one body (its length never moves, so the
    stiffness rule gives no stiffness); a tendon wrapping a geom gets its stop."""
    xml = """<mujoco><worldbody><site name="a" pos="0 0 1"/><body><joint name="j" type="hinge" axis="0 1 0"/>
      <geom name="g" type="sphere" size="0.05" pos="0.2 0 0"/><site name="b" pos="0.4 0 0"/>
      <site name="c" pos="0.3 0 0"/></body>
      <body pos="0 0 0.5"><geom name="w" type="cylinder" size="0.05 0.05"/></body></worldbody>
      <tendon><spatial name="wrapped" limited="true" range="0 1"><site site="a"/><geom geom="w"/><site site="b"/>
      </spatial><spatial name="rigid" limited="true" range="0 0.05"><site site="b"/><site site="c"/></spatial>
      </tendon></mujoco>"""
    message = r"limit \(range\) of tendons that do not move at qpos0.*\['rigid'\]"
    with pytest.warns(UserWarning, match=message) as record:
        imported = jb.io.load_mjcf(xml)
    assert all(w.filename == __file__ for w in record)   # the warning points at the caller
    assert "tendon wrapped" in imported.limit_stops and "tendon rigid" not in imported.limit_stops
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert "tendon wrapped" not in jb.io.load_mjcf(xml, joint_limits=False).limit_stops
