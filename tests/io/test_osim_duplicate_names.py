"""Duplicate names in OpenSim documents (jaxbody.io.osim_names): never an overwritten name map.

OpenSim 4.6 (checked by hand with ``opensim.Model(path).initSystem()`` on these documents) keeps a model whose
JointSet has two joints named ``j`` and renames the second ``j_0`` with a warning; it keeps two coordinates
named ``q1`` under different joint paths, which jaxbody's name-keyed records cannot hold, so that is an error
naming both.
"""

import warnings

import pytest

import jaxbody as jb

DOC = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000">
<Model name="dup">
<BodySet><objects>
<Body name="a"><mass>1</mass><inertia>1 1 1 0 0 0</inertia></Body>
<Body name="b"><mass>2</mass><inertia>1 1 1 0 0 0</inertia></Body>
</objects></BodySet>
<JointSet><objects>
<PinJoint name="j"><socket_parent_frame>/ground</socket_parent_frame><socket_child_frame>/bodyset/a</socket_child_frame>
<coordinates><Coordinate name="q1"/></coordinates></PinJoint>
<PinJoint name="{second}"><socket_parent_frame>/bodyset/a</socket_parent_frame><socket_child_frame>/bodyset/b</socket_child_frame>
<coordinates><Coordinate name="{coordinate}"/></coordinates></PinJoint>
</objects></JointSet>
</Model></OpenSimDocument>
"""


def test_duplicate_joint_renamed_as_opensim():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = jb.io.load_osim(DOC.format(second="j", coordinate="q2"))
    messages = [str(w.message) for w in caught]
    assert any("JointSet PinJoint 'j' at line 11 (the first at line 9) renamed j_0" in m for m in messages), messages
    assert list(model.coordinates) == ["q1", "q2"] and list(model.bodies) == ["ground", "a", "b"]
    assert model.coordinates["q2"].mobilized_body is model.bodies["b"]


def test_duplicate_coordinate_names_name_both():
    with pytest.raises(jb.InvalidArgument, match=r"line 12: <Coordinate> of Coordinate 'q1' of PinJoint 'k': a second "
                                                 r"coordinate named 'q1' \(the first: line 10, PinJoint 'j'\)"):
        jb.io.load_osim(DOC.format(second="k", coordinate="q1"))
