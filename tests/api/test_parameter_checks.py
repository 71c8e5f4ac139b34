"""``jb.replace_parameters`` rejects concrete non-physical values with the builders' messages, naming the body;
``jb.check_parameters`` runs the same checks on traced and vmapped models and returns them per body."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from systems import pendulum

import jaxbody as jb

MODEL, _ = pendulum()
P = MODEL.parameters
BAD = {  # field -> (bad value of body 1, error, the builders' message)
    "mass": (-1.0, jb.InvalidInertia, "mass must be finite and >= 0, got -1.0"),
    "inertia_Bo_B": (-np.eye(3), jb.InvalidInertia, "inertia has a negative moment of inertia"),
    "triangle": (np.diag([1.0, 0.1, 0.1]), jb.InvalidInertia, "inertia violates the triangle inequality"),
    "asymmetric": (np.array([[1.0, 0.1, 0], [0, 1, 0], [0, 0, 1]]), jb.InvalidInertia, "inertia is not symmetric"),
    "R_PF": (2 * np.eye(3), jb.InvalidArgument, r"X_PF rotation is not a proper orthonormal matrix"),
    "R_BM": (np.diag([1.0, 1.0, -1.0]), jb.InvalidArgument, r"X_BM rotation is not a proper orthonormal matrix"),
}


def _bad(case):
    value, _, _ = BAD[case]
    field = {"triangle": "inertia_Bo_B", "asymmetric": "inertia_Bo_B"}.get(case, case)
    return field, getattr(P, field).at[1].set(value)


@pytest.mark.parametrize("case", list(BAD))
def test_replace_parameters_rejects_what_the_builders_reject(case):
    field, value = _bad(case)
    _, error, text = BAD[case]
    with pytest.raises(error, match=f"replace_parameters: body 'link': {text}"):
        jb.replace_parameters(MODEL, **{field: value})


def test_builders_give_the_same_messages():
    with pytest.raises(jb.InvalidInertia, match=BAD["mass"][2]):
        jb.MassProperties(-1.0)
    with pytest.raises(jb.InvalidInertia, match=BAD["triangle"][2]):
        jb.Inertia(1.0, 0.1, 0.1)
    matter = jb.SimbodyMatterSubsystem(jb.MultibodySystem())
    with pytest.raises(jb.InvalidArgument, match="arm: " + BAD["R_PF"][2]):
        jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(jb.Rotation(2 * np.eye(3))), jb.Body.Rigid(), jb.Transform(),
                             name="arm")


def test_check_parameters_on_traced_and_vmapped_models():
    valid = jb.check_parameters(MODEL)
    assert "inertia about the mass center: triangle" in valid and not any(np.any(v) for v in valid.values())

    @jax.jit
    @jax.vmap
    def checks(scale):  # a batch of models: body 1's mass and R_PF scaled, traced (no error raised)
        model = jb.replace_parameters(MODEL, mass=P.mass * scale, R_PF=P.R_PF.at[1].multiply(scale))
        return jb.check_parameters(model)

    got = checks(jnp.array([1.0, -1.0]))
    np.testing.assert_array_equal(got["mass: mass"], [[False, False], [False, True]])  # (batch, nbodies)
    np.testing.assert_array_equal(got["X_PF: rotation"], [[False, False], [False, True]])
    assert not np.any(got["inertia: triangle"])
    # unchecked models (as a traced replace_parameters makes them): exactly the failing checks are flagged
    flagged = {k for k, v in jb.check_parameters(_unchecked(*_bad("R_BM"))).items() if np.any(v)}
    assert flagged == {"X_BM: rotation"}
    flagged = {k for k, v in jb.check_parameters(_unchecked(*_bad("triangle"))).items() if np.any(v)}
    assert flagged == {"inertia: triangle", "inertia about the mass center: negative moment"}  # com at -0.5 y


def _unchecked(field, value):
    return dataclasses.replace(MODEL, parameters=dataclasses.replace(P, **{field: value}))
