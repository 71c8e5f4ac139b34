"""Fuzzed construction (issue 12, item 6): hypothesis over random topologies and random bad inputs.

* Valid systems: random trees (``systems.random_trees``: 1-10 bodies in the ``ci`` profile, up to 60 in
  ``long``) of every catalogue mobilizer type (Weld included), forward or reversed, both orientation modes,
  random frames and mass properties, optionally a Rod constraint. They build, realize with finite results, and satisfy ABA = CRBA + solve and M⁻¹M = I (backward
  errors relative to norms / condition number, so geometric ill-conditioning cannot give false failures).
  One jitted function per example keeps the compile count at one per topology.
* Invalid inputs: one argument of a valid construction mutated into an invalid one. The call must raise a
  jb.JaxbodyError subclass: another exception type, or no exception, fails.

Profiles (``tests/conftest.py``): ``ci`` (default, derandomized, small) and ``long``
(``pytest --hypothesis-profile=long``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from systems import CATALOGUE_TYPES, add_catalogue_body, build_random_tree, random_trees

import jaxbody as jb

LONG = settings().max_examples >= 200  # the ``long`` profile is loaded (see conftest.py)
MAX_BODIES = 60 if LONG else 10
VALID_EXAMPLES = 60 if LONG else 4  # each distinct topology compiles once (~2-4 s here; CI budget)


# -- valid systems -------------------------------------------------------------------------------------------


@jax.jit
def evaluate(model, q, u, f, F):
    """Everything one example checks, in one compiled function per topology."""
    state = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Acceleration)
    udot_aba, _ = model.calc_acceleration_ignoring_constraints(state, f, F)
    return {
        "udot": state.get_u_dot(),                     # realize: force elements + constraints
        "udot_aba": udot_aba,                          # articulated body, applied f and F only
        "rhs": f + model.calc_tree_equivalent_mobility_forces(state, F),  # f + JᵀF - c
        "M": model.calc_m(state),
        "Minv": model.calc_m_inv(state),
        "p_GB": state.position.p_GB,
        "V_GB": state.velocity.V_GB,
    }


@settings(max_examples=VALID_EXAMPLES, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(random_trees(MAX_BODIES))
def test_valid_random_trees_realize_and_the_dynamics_routes_agree(tree):
    model, q, u, f, F = build_random_tree(*tree)
    r = jax.tree.map(np.asarray, evaluate(model, jnp.asarray(q), jnp.asarray(u), jnp.asarray(f), jnp.asarray(F)))
    for name, value in r.items():
        assert np.all(np.isfinite(value)), (name, tree)
    M, Minv, udot, rhs = r["M"], r["Minv"], r["udot_aba"], r["rhs"]
    nu = M.shape[0]
    np.testing.assert_allclose(M, M.T, atol=1e-12 * max(1.0, np.abs(M).max(initial=0.0)), err_msg=str(tree))
    if nu == 0:
        return
    # ABA = CRBA + solve, as a backward error: M udot_aba = f + JᵀF - c.
    scale = np.linalg.norm(M, 2) * np.linalg.norm(udot) + np.linalg.norm(rhs)
    assert np.linalg.norm(M @ udot - rhs) <= 1e-10 * scale, tree
    cond = np.linalg.cond(M)
    assert cond < 1e12, (cond, tree)
    np.testing.assert_allclose(udot, np.linalg.solve(M, rhs), rtol=0, atol=1e-12 * cond * (1 + np.abs(udot).max()),
                               err_msg=str(tree))
    # M⁻¹M = I.
    np.testing.assert_allclose(Minv @ M, np.eye(nu), rtol=0, atol=max(1e-8, 1e-13 * cond), err_msg=str(tree))


# -- invalid inputs ------------------------------------------------------------------------------------------

BAD = st.sampled_from([float("nan"), float("inf"), -float("inf")])
finite = st.floats(-10.0, 10.0, allow_nan=False)


def _system(euler=False):
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    matter.set_use_euler_angles(euler)
    return system, matter, forces


def _pin(parent, name="b", X_PF=None, body=None, X_BM=None):
    return jb.MobilizedBody.Pin(parent, X_PF or jb.Transform(), body or jb.Body.Rigid(), X_BM or jb.Transform(), name=name)


def _two_bodies():
    system, matter, forces = _system()
    b1 = _pin(matter.Ground(), "b1", jb.Transform([0, -1.0, 0]))
    b2 = jb.MobilizedBody.Ball(b1, jb.Transform([0, -1.0, 0]), jb.Body.Rigid(), jb.Transform(), name="b2")
    return system, matter, forces, b1, b2


@st.composite
def bad_vector(draw, n=3):
    """A length-n vector with a NaN/inf, or a vector of the wrong length."""
    if draw(st.booleans()):
        v = draw(st.lists(finite, min_size=n, max_size=n))
        v[draw(st.integers(0, n - 1))] = draw(BAD)
        return v
    return draw(st.lists(finite, min_size=0, max_size=6).filter(lambda v: len(v) != n))


@st.composite
def bad_rotation(draw):
    """A 3x3 matrix that is not a rotation (scaled, sheared, reflected, non-finite) or a wrong shape."""
    R = np.asarray(jb.Rotation.from_quaternion(draw(st.lists(st.floats(0.1, 1.0), min_size=4, max_size=4))).R)
    how = draw(st.sampled_from(["scale", "shear", "reflect", "nan", "shape"]))
    if how == "scale":
        return R * draw(st.sampled_from([0.0, 0.5, 1.01, 2.0, -3.0]))
    if how == "shear":
        R = R.copy()
        R[draw(st.integers(0, 2)), draw(st.integers(0, 2))] += draw(st.sampled_from([1e-3, 0.1, -1.0]))
        return R
    if how == "reflect":
        return -R
    if how == "nan":
        R = R.copy()
        R[draw(st.integers(0, 2)), draw(st.integers(0, 2))] = draw(BAD)
        return R
    return np.eye(draw(st.sampled_from([2, 4])))


@st.composite
def invalid_inertias(draw):
    """Principal moments violating the triangle inequality or negative, products making it indefinite, NaN."""
    how = draw(st.sampled_from(["triangle", "negative", "products", "nan", "asymmetric"]))
    a, b = draw(st.floats(0.01, 10.0)), draw(st.floats(0.01, 10.0))
    if how == "triangle":
        m = [a, b, (a + b) * draw(st.floats(1.01, 10.0))]
        order = draw(st.permutations([0, 1, 2]))
        return lambda: jb.Inertia(*[m[i] for i in order])
    if how == "negative":
        m = [a, b, -draw(st.floats(0.01, 10.0))]
        order = draw(st.permutations([0, 1, 2]))
        return lambda: jb.Inertia(*[m[i] for i in order])
    if how == "products":
        p = draw(st.floats(1.01, 5.0)) * a
        return lambda: jb.Inertia(a, a, a, p, p, p)
    if how == "nan":
        m = [a, b, a]
        m[draw(st.integers(0, 2))] = draw(BAD)
        return lambda: jb.Inertia(*m)
    I = np.diag([a, a, a])
    I[0, 1] = draw(st.floats(0.01, 1.0)) * a
    return lambda: jb.Inertia.from_matrix(I)


@st.composite
def invalid_constructions(draw):
    """(description, thunk): one argument of a valid construction made invalid."""
    case = draw(st.sampled_from([
        "mass", "com", "inertia", "inertia_about_origin", "X_PF_p", "X_BM_p", "X_PF_R", "X_BM_R", "quaternion",
        "radii", "pitch", "unknown_parent", "not_a_body", "frozen", "frozen_euler", "self_constraint",
        "foreign_constraint", "rod_length", "spring_index", "constraint_index", "gravity", "station",
        "force_vector", "stiffness",
    ]))
    if case == "mass":
        m = draw(BAD | st.floats(-100.0, -1e-9))
        return case, m, lambda: jb.MassProperties(m, [0, 0, 0], jb.Inertia(1.0))
    if case == "com":
        c = draw(bad_vector())
        return case, c, lambda: jb.MassProperties(1.0, c, jb.Inertia(1.0))
    if case == "inertia":
        make = draw(invalid_inertias())
        return case, make, lambda: jb.MassProperties(1.0, [0, 0, 0], make())
    if case == "inertia_about_origin":
        d = draw(st.floats(1.0, 5.0))
        return case, d, lambda: jb.MassProperties(1.0, [d, 0, 0], jb.Inertia(0.1 * d))
    if case in ("X_PF_p", "X_BM_p"):
        p = draw(bad_vector())
        kind = draw(st.sampled_from(CATALOGUE_TYPES))
        frames = {case[:4]: jb.Transform(p=p)}

        def thunk():
            _, matter, _ = _system()
            add_catalogue_body(kind, matter.Ground(), frames.get("X_PF", jb.Transform()), jb.Body.Rigid(),
                               frames.get("X_BM", jb.Transform()), name="victim")
        return case, (kind, p), thunk
    if case in ("X_PF_R", "X_BM_R"):
        R = draw(bad_rotation())
        kind = draw(st.sampled_from(CATALOGUE_TYPES))

        def thunk():
            X = jb.Transform(jb.Rotation(R), [0, 0, 0])
            _, matter, _ = _system()
            add_catalogue_body(kind, matter.Ground(), X if case == "X_PF_R" else jb.Transform(), jb.Body.Rigid(),
                               X if case == "X_BM_R" else jb.Transform(), name="victim")
        return case, (kind, R.tolist()), thunk
    if case == "quaternion":
        # Wrong lengths and the zero quaternion; NaN/inf elements: see test_non_finite_quaternion_is_rejected.
        q = draw(st.just([0.0, 0.0, 0.0, 0.0]) | st.lists(finite, max_size=6).filter(lambda v: len(v) != 4))
        return case, q, lambda: jb.Rotation.from_quaternion(q)
    if case == "radii":
        r = draw(bad_vector())
        return case, r, lambda: jb.MobilizedBody.Ellipsoid(_system()[1].Ground(), jb.Transform(), jb.Body.Rigid(),
                                                           jb.Transform(), radii=r)
    if case == "pitch":
        p = draw(BAD)
        return case, p, lambda: jb.MobilizedBody.Screw(_system()[1].Ground(), jb.Transform(), jb.Body.Rigid(),
                                                       jb.Transform(), pitch=p)
    if case == "unknown_parent":
        parent = draw(st.sampled_from(["ground", 0, 1, None, 1.5, jb.Transform(), jb.Body.Rigid()]))
        return case, parent, lambda: _pin(parent, "orphan")
    if case == "not_a_body":
        body = draw(st.sampled_from([jb.MassProperties(1.0), None, 1.0, "body", jb.Transform()]))
        return case, body, lambda: jb.MobilizedBody.Pin(_system()[1].Ground(), jb.Transform(), body, jb.Transform())
    if case in ("frozen", "frozen_euler"):
        kind = draw(st.sampled_from(CATALOGUE_TYPES))

        def thunk():
            system, matter, _, _, b2 = _two_bodies()
            system.realize_topology()
            if case == "frozen_euler":
                matter.set_use_euler_angles(True)
            add_catalogue_body(kind, b2, jb.Transform(), jb.Body.Rigid(), jb.Transform(), name="late")
        return case, kind, thunk
    if case in ("self_constraint", "foreign_constraint"):
        kind = draw(st.sampled_from(["Rod", "Ball", "Weld", "PointInPlane", "PointOnLine", "ConstantAngle",
                                     "ConstantOrientation", "SphereOnSphereContact", "PointOnPlaneContact"]))
        C = jb.Constraint
        make = {
            "Rod": lambda a, b: C.Rod(a, [0, 0, 0], b, [1, 0, 0], 1.0),
            "Ball": lambda a, b: C.Ball(a, [0, 0, 0], b, [1, 0, 0]),
            "Weld": lambda a, b: C.Weld(a, b),
            "PointInPlane": lambda a, b: C.PointInPlane(a, [0, 0, 1], 0.0, b, [0, 0, 0]),
            "PointOnLine": lambda a, b: C.PointOnLine(a, [1, 0, 0], [0, 0, 0], b, [0, 0, 0]),
            "ConstantAngle": lambda a, b: C.ConstantAngle(a, [1, 0, 0], b, [0, 1, 0]),
            "ConstantOrientation": lambda a, b: C.ConstantOrientation(a, None, b, None),
            "SphereOnSphereContact": lambda a, b: C.SphereOnSphereContact(a, [0, 0, 0], 0.1, b, [1, 0, 0], 0.1),
            "PointOnPlaneContact": lambda a, b: C.PointOnPlaneContact(a, jb.Transform(), b, [0, 0, 0]),
        }[kind]
        which = draw(st.integers(0, 2))

        def thunk():
            _, matter, _, b1, b2 = _two_bodies()
            bodies = [matter.Ground(), b1, b2]
            if case == "self_constraint":
                make(bodies[which], bodies[which])
            else:
                c2 = _two_bodies()[4]
                make(bodies[which], c2)
        return case, (kind, which), thunk
    if case == "rod_length":
        length = draw(BAD | st.floats(-10.0, 0.0))
        return case, length, lambda: jb.Constraint.Rod(_two_bodies()[3], [0, 0, 0], _two_bodies()[4], [0, 0, 0], length)
    if case == "spring_index":
        index = draw(st.sampled_from([-1, 1, 2, 0.5, "0", None, 1.0]))

        def thunk():
            _, _, forces, b1, _ = _two_bodies()
            jb.Force.MobilityLinearSpring(forces, b1, index, 10.0, 0.0)
        return case, index, thunk
    if case == "constraint_index":
        index = draw(st.sampled_from([-1, 1, 5, 0.5, "0", None]))

        def thunk():
            _, _, _, b1, _ = _two_bodies()
            jb.Constraint.ConstantCoordinate(b1, index, 0.0)
        return case, index, thunk
    if case == "station":
        v = draw(bad_vector())
        which = draw(st.booleans())
        return case, (which, v), lambda: jb.Constraint.Ball(_two_bodies()[3], v if which else [0, 0, 0],
                                                            _two_bodies()[4], [0, 0, 0] if which else v)
    if case == "force_vector":
        v = draw(bad_vector())
        which = draw(st.sampled_from(["station", "force", "torque"]))

        def thunk():
            _, _, forces, b1, _ = _two_bodies()
            if which == "torque":
                jb.Force.ConstantTorque(forces, b1, v)
            else:
                jb.Force.ConstantForce(forces, b1, v if which == "station" else [0, 0, 0],
                                       v if which == "force" else [1, 0, 0])
        return case, (which, v), thunk
    if case == "stiffness":
        k = draw(BAD | st.floats(-100.0, -1e-6))

        def thunk():
            _, _, forces, b1, _ = _two_bodies()
            jb.Force.MobilityLinearSpring(forces, b1, 0, k, 0.0)
        return case, k, thunk
    g = draw(bad_vector())

    def thunk():
        _, matter, forces = _system()
        jb.Force.UniformGravity(forces, matter, g)
    return case, g, thunk


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(invalid_constructions())
def test_invalid_constructions_raise_jaxbody_errors(construction):
    case, value, thunk = construction
    try:
        result = thunk()
    except jb.JaxbodyError:
        return
    except Exception as e:  # noqa: BLE001
        pytest.fail(f"{case} {value!r}: raised {type(e).__module__}.{type(e).__name__}: {e}")
    pytest.fail(f"{case} {value!r}: no error, returned {result!r}")


# Found by the fuzzer: Rotation.from_quaternion used to check a concrete quaternion's length and zero norm but
# not NaN/inf elements, and silently returned a NaN rotation.
@pytest.mark.parametrize("quat", [[float("nan"), 0.0, 0.0, 0.0], [1.0, float("inf"), 0.0, 0.0]])
def test_non_finite_quaternion_is_rejected(quat):
    with pytest.raises(jb.JaxbodyError):
        jb.Rotation.from_quaternion(quat)
