"""load_osim on OpenSim 3.x documents: what the upgrade (jaxbody.io.osim_upgrade) refuses, that its errors
name lines of the 3.x file, and that its GeometryPath rules give every muscle path the length and moment arms
of the 4.x layout (osim-rl's 3.x originals vs OpenSim's 4.x copies; a 2.3 muscle vs its hand-written 4.x
layout). The body and joint numbers (vs OpenSim 4.6 and vs OpenSim's 4.x copies) are checked in
tests/io/test_osim_models.py::test_opensim3_document."""

import pathlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from jaxbody.io import load_osim

PIN = """<PinJoint name="hinge"><parent_body>ground</parent_body><location_in_parent>{loc}</location_in_parent>
<orientation_in_parent>0 0 0</orientation_in_parent><location>0 0.2 0</location><orientation>0 0 0</orientation>
<CoordinateSet><objects><Coordinate name="angle"><motion_type>rotational</motion_type></Coordinate></objects></CoordinateSet>
<reverse>{reverse}</reverse></PinJoint>"""

DOC = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="30000">
<Model name="pendulum">
<BodySet><objects>
<Body name="ground"><mass>0</mass><Joint /></Body>
<Body name="link"><mass>1.5</mass><mass_center>0 -0.1 0</mass_center><inertia_xx>0.02</inertia_xx>
<inertia_yy>0.01</inertia_yy><inertia_zz>0.02</inertia_zz>
<Joint>{joint}</Joint></Body>
</objects></BodySet>
<ConstraintSet><objects>{constraint}</objects></ConstraintSet>
</Model>
</OpenSimDocument>
"""


def document(loc="0 1 0", reverse="false", constraint=""):
    return DOC.format(joint=PIN.format(loc=loc, reverse=reverse), constraint=constraint)


def test_pendulum_loads_with_one_version_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        imported = load_osim(document())
    assert [str(w.message).split(": ", 1)[1][:43] for w in caught] == ["OpenSim document version 30000 upgraded in "]
    model = imported.system.realize_topology()
    state = model.realize(imported.default_state(model), jb.Stage.Position)
    # the link's origin: the joint 1 m above ground, the link's child offset 0.2 m above its origin
    assert state.position.p_GB[imported.bodies["link"].index].tolist() == [0.0, 0.8, 0.0]


def test_errors_name_lines_of_the_3x_file():
    with pytest.raises(jb.InvalidArgument, match=r"line 8: <PinJoint> of PinJoint 'hinge' "
                                                                              r"of body 'link': <reverse>true"):
        load_osim(document(reverse="true"))
    with pytest.raises(jb.InvalidArgument, match=r"line 8: <location_in_parent> of PinJoint "
                                                                              r"'hinge' of body 'link': expected 3"):
        load_osim(document(loc="0 1"))
    weld = ("<WeldConstraint name=\"w\"><isDisabled>false</isDisabled><body_1>link</body_1>"
            "<location_body_1>0 x 0</location_body_1><body_2>ground</body_2></WeldConstraint>")
    with pytest.raises(jb.InvalidArgument, match=r"line 13: <location_body_1> of "
                                                                              r"WeldConstraint 'w'"):
        load_osim(document(constraint=weld))
    point = "<PointConstraint name=\"p\"><body_1>link</body_1><body_2>nowhere</body_2></PointConstraint>"
    with pytest.raises(jb.InvalidArgument, match=r"PointConstraint 'p'.*'/bodyset/nowhere' not found"):
        load_osim(document(constraint=point))


MODELS = pathlib.Path(__file__).parent.parent / "models" / "osim"


def path_lengths_and_arms(document, q_of):
    """{path: (L (k,), -dL/du (k, nu))} of every path load_osim builds from ``document``, at the states
    ``q_of(imported) -> (k, nq)``, one jit over the vmapped states."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imported = load_osim(document)
    model = imported.system.realize_topology()
    names = sorted(imported.paths)

    def one(q):
        s = model.realize(model.default_state().set_q(q), jb.Stage.Position)
        return {n: (imported.paths[n].calc_length(model, s), imported.paths[n].calc_moment_arms(model, s)) for n in names}

    return jax.jit(jax.vmap(one))(q_of(imported))


def random_states(imported, k=3, seed=0):
    """(k, nq) q with every coordinate uniform in its range (the same numbers for the same coordinate names)."""
    rng = np.random.default_rng(seed)
    q = np.zeros((k, max(imported.q_index(n) for n in imported.coordinate_info) + 1))
    for n, c in sorted(imported.coordinate_info.items()):
        q[:, imported.q_index(n)] = rng.uniform(*c.range, size=k)
    return jnp.asarray(q)


@pytest.mark.long  # 49 s in CI; the 3.x imports themselves are checked by test_osim_models::test_opensim3_document
@pytest.mark.parametrize("name", ["arm26", "gait9dof18musc"])
def test_3x_paths_equal_their_4x_copies(name):
    """Every muscle path of the osim-rl 3.x original (PathPoint bodies, ConditionalPathPoint and MovingPathPoint
    coordinates, PathWraps upgraded in memory) has the length and moment arms of OpenSim's own 4.x copy (itself
    checked against OpenSim in tests/paths/test_osim_paths.py) at random states."""
    v3 = path_lengths_and_arms(MODELS / "opensim3" / f"{name}.osim", random_states)
    v4 = path_lengths_and_arms(MODELS / f"{name}.osim", random_states)
    assert sorted(v3) == sorted(v4) and len(v3) >= 4
    for n in v4:
        np.testing.assert_allclose(v3[n][0], v4[n][0], rtol=0, atol=1e-15, err_msg=f"{n}: length")
        np.testing.assert_allclose(v3[n][1], v4[n][1], rtol=0, atol=1e-14, err_msg=f"{n}: moment arms")
        assert float(jnp.abs(v4[n][1]).max()) > 1e-3, n  # each path crosses a joint at these states


#: One muscle over the pendulum in OpenSim 2.3's layout: 2.x type names, its point set outside a GeometryPath,
#: a via point on the coordinate, a moving point with XAttachment/YAttachment (no z function: z = 0 in OpenSim 4,
#: whatever the 3.x location says), and its OpenSim 4 equivalent, written by hand.
MUSCLE_2X = """<Thelen2003Muscle name="m"><MusclePointSet><objects>
<MusclePoint name="p1"><location>0.05 0.9 0.1</location><body>ground</body></MusclePoint>
<MuscleViaPoint name="p2"><location>0.1 0 0</location><body>link</body><range>-0.5 1</range>
<coordinate>angle</coordinate></MuscleViaPoint>
<MovingMusclePoint name="p3"><location>9 9 9</location><body>link</body>
<XAttachment><LinearFunction><coefficients>0.1 0.05</coefficients></LinearFunction></XAttachment>
<x_coordinate>angle</x_coordinate><YAttachment><Constant><value>-0.2</value></Constant></YAttachment>
<y_coordinate>angle</y_coordinate></MovingMusclePoint>
</objects></MusclePointSet></Thelen2003Muscle>"""

MUSCLE_4X = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000"><Model name="pendulum"><Ground name="ground"/>
<BodySet><objects><Body name="link"><mass>1.5</mass><mass_center>0 -0.1 0</mass_center>
<inertia>0.02 0.01 0.02 0 0 0</inertia></Body></objects></BodySet>
<JointSet><objects><PinJoint name="hinge"><socket_parent_frame>g</socket_parent_frame>
<socket_child_frame>l</socket_child_frame><coordinates><Coordinate name="angle"/></coordinates><frames>
<PhysicalOffsetFrame name="g"><socket_parent>/ground</socket_parent><translation>0 1 0</translation></PhysicalOffsetFrame>
<PhysicalOffsetFrame name="l"><socket_parent>/bodyset/link</socket_parent><translation>0 0.2 0</translation>
</PhysicalOffsetFrame></frames></PinJoint></objects></JointSet>
<ForceSet><objects><Thelen2003Muscle name="m"><GeometryPath name="path"><PathPointSet><objects>
<PathPoint name="p1"><socket_parent_frame>/ground</socket_parent_frame><location>0.05 0.9 0.1</location></PathPoint>
<ConditionalPathPoint name="p2"><socket_parent_frame>/bodyset/link</socket_parent_frame>
<socket_coordinate>/jointset/hinge/angle</socket_coordinate><location>0.1 0 0</location><range>-0.5 1</range>
</ConditionalPathPoint>
<MovingPathPoint name="p3"><socket_parent_frame>/bodyset/link</socket_parent_frame>
<socket_x_coordinate>/jointset/hinge/angle</socket_x_coordinate><socket_y_coordinate>/jointset/hinge/angle
</socket_y_coordinate><x_location><LinearFunction><coefficients>0.1 0.05</coefficients></LinearFunction></x_location>
<y_location><Constant><value>-0.2</value></Constant></y_location></MovingPathPoint>
</objects></PathPointSet></GeometryPath></Thelen2003Muscle></objects></ForceSet>
</Model></OpenSimDocument>"""


def test_2x_muscle_path_equals_its_4x_layout():
    """2.x path type names, a bare MusclePointSet (20301), XAttachment and the 3.x point fields give the path of
    the hand-written 4.x layout: lengths and moment arms at angles inside and outside the via point's range."""
    old = document().replace('Version="30000"', 'Version="20301"').replace(
        "</ConstraintSet>", f"</ConstraintSet><ForceSet><objects>{MUSCLE_2X}</objects></ForceSet>")
    states = lambda imported: jnp.array([[-1.0], [-0.3], [0.4], [1.3]])  # noqa: E731 (only "angle")
    v2, v4 = path_lengths_and_arms(old, states), path_lengths_and_arms(MUSCLE_4X, states)
    assert list(v2) == list(v4) == ["m"]
    np.testing.assert_allclose(v2["m"][0], v4["m"][0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(v2["m"][1], v4["m"][1], rtol=0, atol=1e-15)
    assert np.ptp(np.asarray(v4["m"][0])) > 0.05 and float(jnp.abs(v4["m"][1]).min()) > 1e-3
