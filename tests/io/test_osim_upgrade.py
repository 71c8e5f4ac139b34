"""load_osim on OpenSim 3.x documents: what the upgrade (jaxbody.io.osim_upgrade) refuses, and that its errors
name lines of the 3.x file. The numbers (vs OpenSim 4.6 and vs OpenSim's 4.x copies) are checked in
tests/io/test_osim_models.py::test_opensim3_document."""

import warnings

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
